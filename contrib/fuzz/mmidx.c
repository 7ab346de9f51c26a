/* mmidx.c - libFuzzer target: the indexed dataset reader on arbitrary bytes */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tok/mmidx.h"

/*
 * Input: a little-endian u16 n, then n bytes of .idx (fewer if the input
 * ends), then the .bin. Whatever mmidx_open_mem accepts must be readable
 * through every accessor without leaving the two buffers (ASan checks).
 * The buffers are copied to exact-size allocations so that ASan sees their
 * ends.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mmidx_stats st;
	struct mmidx d;
	uint32_t out[64];
	unsigned char *idx, *bin;
	size_t nidx, nbin, n;
	uint64_t s, k, len;
	char err[OWT_ERRSIZE];
	int code;

	if (size < 2)
		return 0;
	nidx = data[0] | (size_t)data[1] << 8;
	if (nidx > size - 2)
		nidx = size - 2;
	nbin = size - 2 - nidx;
	idx = malloc(nidx ? nidx : 1);
	bin = malloc(nbin ? nbin : 1);
	memcpy(idx, data + 2, nidx);
	memcpy(bin, data + 2 + nidx, nbin);
	if (mmidx_open_mem(&d, "f", idx, nidx, bin, nbin, err, sizeof err,
	    &code) == 0) {
		for (s = 0; s < d.nseq; s++) {
			len = mmidx_len(&d, s);
			for (k = 0; k < len; k += n) {
				n = len - k < 64 ? (size_t)(len - k) : 64;
				mmidx_read(&d, s, k, n, out);
			}
		}
		for (k = 0; k <= d.ndocs; k++)
			if (mmidx_doc(&d, k) > d.nseq)
				abort();
		mmidx_stats(&d, &st);
		mmidx_check_tokens(&d, "f", err, sizeof err, &code);
		mmidx_close(&d);
	}
	free(idx);
	free(bin);
	return 0;
}
