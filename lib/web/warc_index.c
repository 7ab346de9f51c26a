/*
 * warc_index.c - index rows of WARC records: CDX (wget's, Common Crawl's), CDXJ, JSON
 *
 * A row names a record by its archive, the offset of its gzip member
 * and its compressed length; wget's CDX has no length (the reader then
 * finds the member's end, warc_end).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "web/warc_index.h"
#include "core/util.h"

static const char *const want[] = { "filename", "offset", "length", "url" };

/* The letters of the columns we read, in WI_* order. */
static const char letters[4] = { 'a', 'g', 'V', 'S' };

void
warc_index_init(struct warc_index *x)
{
	memset(x, 0, sizeof *x);
	json_rec_init(&x->rec, want, sizeof want / sizeof *want);
}

void
warc_index_free(struct warc_index *x)
{
	json_rec_free(&x->rec);
}

void
warc_index_reset(struct warc_index *x)
{
	memset(x->col, 0, sizeof x->col);
	x->header = 0;
}

int
warc_index_header(struct warc_index *x, const char *line, size_t len,
    char *err, size_t errsize)
{
	size_t i = 0;
	int n = 0, k;

	while (i < len && line[i] == ' ')
		i++;
	if (len - i < 4 || memcmp(line + i, "CDX", 3) != 0 ||
	    (len - i > 3 && line[i + 3] != ' '))
		return 0;
	warc_index_reset(x);
	for (i += 3; i < len; i++) {
		if (line[i] == ' ')
			continue;
		n++;
		for (k = 0; k < 4; k++)
			if (line[i] == letters[k] && x->col[k] == 0)
				x->col[k] = n;
		while (i + 1 < len && line[i + 1] != ' ')
			i++;
	}
	if (x->col[WI_FILE] == 0 || x->col[WI_OFFSET] == 0)
		return owt_fail(err, errsize, NULL, XDATA,
		    "CDX header without the file name (g) or offset (V)");
	x->header = 1;
	return 1;
}

/* A decimal number s[0..n) (at most 2^62), or -1. */
static long long
number(const char *s, size_t n)
{
	unsigned long long v = 0;
	size_t i;

	if (n == 0 || n > 19)
		return -1;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (unsigned long long)(s[i] - '0');
	}
	return v > (1ULL << 62) ? -1 : (long long)v;
}

/* A JSON member, string or number, as a number: >= 0, -1 missing, -2 bad. */
static long long
json_number(const struct json_rec *rec, const char *key)
{
	const struct json_field *f = json_rec_get(rec, key);
	long long v;

	if (f == NULL || f->type == JV_NULL)
		return -1;
	if (f->type == JV_STRING)
		v = number(f->str, f->slen);
	else if (f->type == JV_NUMBER)
		v = number(rec->line + f->vstart, f->vend - f->vstart);
	else
		v = -1;
	return v < 0 ? -2 : v;
}

static int
json_row(struct warc_index *x, const char *p, size_t n,
    struct warc_index_row *r, char *err, size_t errsize)
{
	const char *why;
	size_t len;

	if (json_rec_parse(&x->rec, p, n, err, errsize) != 0)
		return -1;
	if ((r->file = json_rec_str(&x->rec, "filename", &len, &why)) == NULL ||
	    len == 0)
		return owt_fail(err, errsize, NULL, XDATA, "%s 'filename' field",
		    r->file ? "empty" : why);
	if ((r->url = json_rec_str(&x->rec, "url", &len, &why)) == NULL)
		r->url = "";
	if ((r->offset = json_number(&x->rec, "offset")) < 0)
		return owt_fail(err, errsize, NULL, XDATA, "%s 'offset' field",
		    r->offset == -1 ? "missing" : "bad");
	if ((r->length = json_number(&x->rec, "length")) == -2 ||
	    r->length == 0)
		return owt_fail(err, errsize, NULL, XDATA, "bad 'length' field");
	return 0;
}

int
warc_index_row(struct warc_index *x, char *line, size_t len,
    struct warc_index_row *r, char *err, size_t errsize)
{
	char *f[64], *p, *e = line + len;
	int n = 0, k, col[4];

	memset(r, 0, sizeof *r);
	r->length = -1;
	if (*line == '{')
		return json_row(x, line, len, r, err, errsize);
	/* CDXJ: the JSON object after the key and the timestamp. */
	if ((p = memchr(line, '{', len)) != NULL && e[-1] == '}') {
		for (k = 0; line + k < p; k++)
			n += line[k] == ' ' && line[k + 1] != ' ';
		if (n == 2 && p[-1] == ' ')
			return json_row(x, p, (size_t)(e - p), r, err, errsize);
		n = 0;
	}
	for (p = line; p < e && n < 64; ) {
		while (p < e && *p == ' ')
			p++;
		if (p == e)
			break;
		f[n++] = p;
		while (p < e && *p != ' ')
			p++;
		if (p < e)
			*p++ = '\0';
	}
	if (x->header) {
		memcpy(col, x->col, sizeof col);
	} else if (n == 11 || n == 9) {
		col[WI_URL] = 3;
		col[WI_FILE] = n;
		col[WI_OFFSET] = n - 1;
		col[WI_LENGTH] = n == 11 ? 9 : 0;
	} else {
		return owt_fail(err, errsize, NULL, XDATA, "%d fields: not CDX "
		    "(11 or 9 fields, or a ' CDX' header line first), CDXJ or "
		    "JSON", n);
	}
	for (k = 0; k < 4; k++)
		if (col[k] > n)
			return owt_fail(err, errsize, NULL, XDATA,
			    "%d fields, the CDX header has more", n);
	r->url = col[WI_URL] && strcmp(f[col[WI_URL] - 1], "-") != 0 ?
	    f[col[WI_URL] - 1] : "";
	r->file = f[col[WI_FILE] - 1];
	if (strcmp(r->file, "-") == 0)
		return owt_fail(err, errsize, NULL, XDATA, "no file name");
	p = f[col[WI_OFFSET] - 1];
	if ((r->offset = number(p, strlen(p))) < 0)
		return owt_fail(err, errsize, NULL, XDATA, "bad offset '%.40s'", p);
	if (col[WI_LENGTH] && strcmp(p = f[col[WI_LENGTH] - 1], "-") != 0 &&
	    (r->length = number(p, strlen(p))) <= 0)
		return owt_fail(err, errsize, NULL, XDATA, "bad length '%.40s'", p);
	return 0;
}
