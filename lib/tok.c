/* tok.c - the owt token stream (owt-tok(5)): documents of token ids */
#include <stdlib.h>
#include <string.h>

#include "tok.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "owt assumes a little-endian host (the file formats are little-endian)"
#endif

/* The first four header bytes read as a document count. */
#define TOK_MAGIC32 0x5454574fu

void
tok_hdr_init(struct tok_hdr *h, uint32_t vocab, uint32_t eod)
{
	h->width = vocab <= 65536 ? 2 : 4;
	h->vocab = vocab;
	h->eod = eod;
}

void
tok_put_hdr(struct buf *b, const struct tok_hdr *h)
{
	unsigned char hdr[TOK_HDRSIZE];

	memcpy(hdr, TOK_MAGIC, 6);
	hdr[6] = TOK_VERSION;
	hdr[7] = (unsigned char)h->width;
	memcpy(hdr + 8, &h->vocab, 4);
	memcpy(hdr + 12, &h->eod, 4);
	buf_add(b, hdr, sizeof hdr);
}

void
tok_put_doc(struct buf *b, const struct tok_hdr *h, const uint32_t *ids,
    size_t n)
{
	uint32_t n32 = (uint32_t)n;
	uint16_t *p;
	size_t i;

	buf_reserve(b, 4 + n * h->width);
	buf_add(b, &n32, 4);
	if (h->width == 4) {
		buf_add(b, ids, n * 4);
		return;
	}
	p = (uint16_t *)(void *)(b->p + b->len);
	for (i = 0; i < n; i++) {
		uint16_t v = (uint16_t)ids[i];
		memcpy(p + i, &v, 2);
	}
	b->len += n * 2;
	b->p[b->len] = '\0';
}

static int
fail(struct tok_reader *r, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	r->errcode = code;
	n = snprintf(r->err, sizeof r->err, "%s: byte %llu: ", r->in.name,
	    (unsigned long long)r->pos);
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Read exactly n bytes: n, fewer at the end of the stream, or -1. */
static ssize_t
read_full(struct tok_reader *r, void *dst, size_t n)
{
	size_t got = 0;
	ssize_t k;

	while (got < n) {
		k = input_read(&r->in, (char *)dst + got, n - got);
		if (k < 0) {
			r->errcode = r->in.errcode;
			snprintf(r->err, sizeof r->err, "%s", r->in.err);
			return -1;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* Parse the header whose first four bytes were already read. */
static int
read_hdr(struct tok_reader *r, const unsigned char *first4)
{
	unsigned char hdr[TOK_HDRSIZE];
	struct tok_hdr h;
	ssize_t k;

	memcpy(hdr, first4, 4);
	k = read_full(r, hdr + 4, TOK_HDRSIZE - 4);
	if (k < 0)
		return -1;
	if ((size_t)k < TOK_HDRSIZE - 4 || memcmp(hdr, TOK_MAGIC, 6) != 0)
		return fail(r, XDATA, "not an owt token stream (bad magic)");
	if (hdr[6] != TOK_VERSION)
		return fail(r, XDATA, "unsupported token stream version %u",
		    hdr[6]);
	h.width = hdr[7];
	memcpy(&h.vocab, hdr + 8, 4);
	memcpy(&h.eod, hdr + 12, 4);
	if ((h.width != 2 && h.width != 4) || h.vocab == 0 ||
	    (h.width == 2 && h.vocab > 65536) ||
	    (h.eod != TOK_NOEOD && h.eod >= h.vocab))
		return fail(r, XDATA, "corrupt token stream header "
		    "(width %u, vocabulary %u, EOD %u)", h.width, h.vocab, h.eod);
	if (r->have_hdr && (h.width != r->h.width || h.vocab != r->h.vocab ||
	    h.eod != r->h.eod))
		return fail(r, XDATA, "stream header differs from the first "
		    "(vocabulary %u, EOD %d; first: %u, EOD %d)", h.vocab,
		    (int)h.eod, r->h.vocab, (int)r->h.eod);
	r->h = h;
	r->have_hdr = 1;
	r->pos += TOK_HDRSIZE;
	return 0;
}

int
tok_open(struct tok_reader *r, const char *path)
{
	unsigned char first[4];
	ssize_t k;

	memset(r, 0, sizeof *r);
	if (input_open(&r->in, path) < 0) {
		r->errcode = r->in.errcode;
		snprintf(r->err, sizeof r->err, "%s", r->in.err);
		return -1;
	}
	k = read_full(r, first, 4);
	if (k < 0)
		return -1;
	if (k == 0)
		return fail(r, XDATA, "empty input: not an owt token stream");
	if (k < 4 || memcmp(first, TOK_MAGIC, 4) != 0)
		return fail(r, XDATA, "not an owt token stream (bad magic)");
	return read_hdr(r, first);
}

int
tok_next(struct tok_reader *r, const uint32_t **ids, size_t *np)
{
	unsigned char first[4];
	uint32_t n, v, max;
	size_t i, bytes;
	ssize_t k;

	for (;;) {
		k = read_full(r, first, 4);
		if (k < 0)
			return -1;
		if (k == 0)
			return 0;
		if (k < 4)
			return fail(r, XDATA, "truncated token stream "
			    "(%zd bytes after document %llu)", k,
			    (unsigned long long)r->ndocs);
		memcpy(&n, first, 4);
		if (n != TOK_MAGIC32)
			break;
		if (read_hdr(r, first) < 0)
			return -1;
	}
	if (n > TOK_MAXDOC)
		return fail(r, XDATA, "corrupt token stream: document %llu "
		    "claims %u tokens", (unsigned long long)r->ndocs + 1, n);
	bytes = (size_t)n * r->h.width;
	if (bytes > r->rawcap) {
		r->rawcap = bytes;
		r->raw = xrealloc(r->raw, bytes);
	}
	r->ids = xgrow(r->ids, &r->cap, n ? n : 1, sizeof *r->ids);
	k = read_full(r, r->raw, bytes);
	if (k < 0)
		return -1;
	if ((size_t)k < bytes)
		return fail(r, XDATA, "truncated token stream: document %llu "
		    "has %zu of %u tokens", (unsigned long long)r->ndocs + 1,
		    (size_t)k / r->h.width, n);
	r->pos += 4;
	/* Convert, then check the largest id: loops without exits vectorize. */
	max = 0;
	if (r->h.width == 2) {
		for (i = 0; i < n; i++) {
			uint16_t s;
			memcpy(&s, r->raw + 2 * i, 2);
			r->ids[i] = s;
			max = s > max ? s : max;
		}
	} else {
		memcpy(r->ids, r->raw, bytes);
		for (i = 0; i < n; i++)
			max = r->ids[i] > max ? r->ids[i] : max;
	}
	if (max >= r->h.vocab) {
		for (i = 0; r->ids[i] < r->h.vocab; i++)
			;
		v = r->ids[i];
		r->pos += i * r->h.width;
		return fail(r, XDATA, "token %u in document %llu is outside "
		    "the vocabulary (%u)", v, (unsigned long long)r->ndocs + 1,
		    r->h.vocab);
	}
	r->pos += bytes;
	r->ndocs++;
	*ids = r->ids;
	*np = n;
	return 1;
}

void
tok_close(struct tok_reader *r)
{
	input_close(&r->in);
	free(r->ids);
	free(r->raw);
	r->ids = NULL;
	r->raw = NULL;
}
