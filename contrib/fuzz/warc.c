/* warc.c - libFuzzer target: the WARC reader and the HTTP payload functions on arbitrary bytes */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "web/warc.h"

/*
 * Input: an archive, plain, gzip or zstd (the reader sniffs it). Every
 * record the reader returns has its block read (at most 64 KB kept);
 * a response block is parsed as HTTP, dechunked and decoded (at most
 * 64 KB out). The archive is copied to an exact-size allocation so that
 * ASan sees its end; so is each block before it is dechunked in place.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct warc_reader r;
	struct warc_rec rec;
	struct warc_http h;
	struct buf out = { 0 };
	unsigned char *mem = malloc(size ? size : 1);
	char err[256], *b;
	size_t n;

	memcpy(mem, data, size);
	memset(&rec, 0, sizeof rec);
	warc_sniff(mem, size);
	if (warc_open(&r, NULL, mem, size, "f") == 0) {
		while (warc_next(&r, &rec) > 0 &&
		    warc_block(&r, &rec, 64 << 10) == 0) {
			if (rec.h.type != WARC_RESPONSE || rec.toolarge ||
			    warc_http_parse(rec.block.p, rec.block.len, &h, err,
			    sizeof err) < 0)
				continue;
			if (h.body > rec.block.len)
				abort();
			n = rec.block.len - h.body;
			b = malloc(n ? n : 1);
			memcpy(b, rec.block.p + h.body, n);
			if (!h.chunked || warc_dechunk(b, &n, err, sizeof err) == 0)
				warc_decode(h.coding, b, n, 64 << 10, &out, err,
				    sizeof err);
			if (out.len > 64 << 10)
				abort();
			free(b);
		}
		warc_close(&r);
	}
	warc_rec_free(&rec);
	buf_free(&out);
	free(mem);
	return 0;
}
