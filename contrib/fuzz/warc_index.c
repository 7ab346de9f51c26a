/* warc_index.c - libFuzzer target: index rows (CDX, CDXJ, JSON) and the end of one record (--warc-prefix) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "web/warc.h"
#include "web/warc_index.h"

/*
 * Input: lines of an index, each line copied to an exact-size allocation
 * (ASan sees its end), tried as a CDX header line, then as a row; a row
 * taken must have a file name and an offset >= 0. The whole input is
 * also a stream whose first record's end is looked for, as it arrives,
 * in pieces of growing size; the end found must be inside what was fed.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct warc_index x;
	struct warc_index_row r;
	struct warc_end e;
	const uint8_t *p = data, *nl, *end = data + size;
	unsigned char *mem;
	char err[256], *line;
	size_t n, k;
	int rc = 0;

	warc_index_init(&x);
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		line = malloc(n + 1);
		memcpy(line, p, n);
		line[n] = '\0';
		if (n > 0 && warc_index_header(&x, line, n, err, sizeof err) == 0 &&
		    warc_index_row(&x, line, n, &r, err, sizeof err) == 0 &&
		    (r.file == NULL || r.offset < 0 || r.length == 0 ||
		    r.url == NULL))
			abort();
		free(line);
		p += n + (nl != NULL);
	}
	warc_index_free(&x);
	mem = malloc(size ? size : 1);
	memcpy(mem, data, size);
	warc_end_init(&e);
	for (n = 0, k = 1; n < size && rc == 0; k *= 2) {
		n = n + k < size ? n + k : size;
		rc = warc_end_feed(&e, mem, n, err, sizeof err);
	}
	if (rc > 1 || rc < -1)
		abort();
	warc_end_free(&e);
	free(mem);
	return 0;
}
