/* tok.c - the owt token stream (owt-tok(5)): documents of token ids */
#include <stdlib.h>
#include <string.h>

#include "tok/tok.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "owt assumes a little-endian host (the file formats are little-endian)"
#endif

/* The first four bytes of a header, and of a trailer, read as a count. */
#define TOK_MAGIC32 0x5454574fu
#define TOK_END32 0x4554574fu

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
tok_put_doc(struct buf *b, const struct tok_hdr *h, struct tok_count *c,
    const uint32_t *ids, size_t n)
{
	uint32_t n32 = (uint32_t)n;
	uint64_t sum = 0;
	uint16_t *p;
	size_t i;

	buf_reserve(b, 4 + n * h->width);
	buf_add(b, &n32, 4);
	for (i = 0; i < n; i++)
		sum += ids[i];
	c->docs++;
	c->tokens += n;
	c->sum += sum;
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

void
tok_put_end(struct buf *b, const struct tok_count *c)
{
	unsigned char end[TOK_ENDSIZE] = { 0 };

	memcpy(end, TOK_END_MAGIC, 6);
	memcpy(end + 8, &c->docs, 8);
	memcpy(end + 16, &c->tokens, 8);
	memcpy(end + 24, &c->sum, 8);
	buf_add(b, end, sizeof end);
}

void
tok_count_add(struct tok_count *to, const struct tok_count *from)
{
	to->docs += from->docs;
	to->tokens += from->tokens;
	to->sum += from->sum;
}

/* "FILE: byte N: what" (a long FILE cuts the message, never overruns err). */
static int
fail(struct tok_reader *r, int code, const char *fmt, ...)
{
	char what[OWT_ERRSIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return owt_fail(r->err, sizeof r->err, &r->errcode, code,
	    "%s: byte %llu: %s", r->in.name, (unsigned long long)r->pos, what);
}

/* The next n bytes of the stream, in the input's buffer: n, fewer at its end, or -1. */
static ssize_t
take(struct tok_reader *r, size_t n, const unsigned char **p)
{
	ssize_t k = input_bytes(&r->in, n, (const char **)p);

	if (k < 0) {
		owt_fail(r->err, sizeof r->err, &r->errcode, r->in.errcode, "%s",
		    r->in.err);
	}
	return k;
}

/* Parse the header whose first four bytes were already read. */
static int
read_hdr(struct tok_reader *r, const unsigned char *first4)
{
	unsigned char hdr[TOK_HDRSIZE];
	const unsigned char *p;
	struct tok_hdr h;
	ssize_t k;

	memcpy(hdr, first4, 4);
	k = take(r, TOK_HDRSIZE - 4, &p);
	if (k < 0)
		return -1;
	memcpy(hdr + 4, p, (size_t)k);
	if ((size_t)k < TOK_HDRSIZE - 4 || memcmp(hdr, TOK_MAGIC, 6) != 0)
		return fail(r, XDATA, "not an owt token stream (bad magic)");
	if (hdr[6] != 1 && hdr[6] != TOK_VERSION)
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
	r->version = hdr[6];
	r->nv1 += hdr[6] == 1;
	memset(&r->member, 0, sizeof r->member);
	r->pos += TOK_HDRSIZE;
	return 0;
}

/* A version 2 member cut: at the end of the input, or where next starts. */
static int
no_trailer(struct tok_reader *r, const char *next)
{
	return fail(r, XDATA, "truncated token stream: no trailer after "
	    "document %llu%s (the writer did not finish)",
	    (unsigned long long)r->ndocs, next);
}

/* Check the trailer whose first four bytes were already read. */
static int
read_end(struct tok_reader *r)
{
	const unsigned char *p;
	struct tok_count c;
	ssize_t k;

	k = take(r, TOK_ENDSIZE - 4, &p);
	if (k < 0)
		return -1;
	if ((size_t)k < TOK_ENDSIZE - 4)
		return fail(r, XDATA, "truncated token stream: a trailer of %zd "
		    "of %d bytes", k + 4, TOK_ENDSIZE);
	if (memcmp(p, TOK_END_MAGIC + 4, 2) != 0 || p[2] != 0 || p[3] != 0)
		return fail(r, XDATA, "corrupt token stream trailer (bad magic)");
	memcpy(&c.docs, p + 4, 8);
	memcpy(&c.tokens, p + 12, 8);
	memcpy(&c.sum, p + 20, 8);
	if (c.docs != r->member.docs || c.tokens != r->member.tokens ||
	    c.sum != r->member.sum)
		return fail(r, XDATA, "token stream trailer does not match its "
		    "member: %llu documents, %llu tokens, id sum %llu; the member "
		    "has %llu, %llu, %llu", (unsigned long long)c.docs,
		    (unsigned long long)c.tokens, (unsigned long long)c.sum,
		    (unsigned long long)r->member.docs,
		    (unsigned long long)r->member.tokens,
		    (unsigned long long)r->member.sum);
	r->version = 0;
	r->pos += TOK_ENDSIZE;
	return 0;
}

int
tok_open(struct tok_reader *r, const char *path)
{
	unsigned char first[4];
	const unsigned char *p;
	ssize_t k;

	memset(r, 0, sizeof *r);
	if (input_open(&r->in, path) < 0) {
		owt_fail(r->err, sizeof r->err, &r->errcode, r->in.errcode, "%s",
		    r->in.err);
		return -1;
	}
	k = take(r, 4, &p);
	if (k < 0)
		return -1;
	memcpy(first, p, (size_t)k);
	if (k == 0)
		return fail(r, XDATA, "empty input: not an owt token stream");
	if (k < 4 || memcmp(first, TOK_MAGIC, 4) != 0)
		return fail(r, XDATA, "not an owt token stream (bad magic)");
	return read_hdr(r, first);
}

int
tok_next_raw(struct tok_reader *r, const unsigned char **raw, size_t *np)
{
	const unsigned char *p;
	unsigned char first[4];
	uint32_t n, v, max = 0;
	uint64_t sum = 0;
	size_t i, bytes;
	ssize_t k;

	for (;;) {
		k = take(r, 4, &p);
		if (k < 0)
			return -1;
		if (k == 0)
			return r->version == 2 ? no_trailer(r, "") : 0;
		if (k < 4)
			return fail(r, XDATA, "truncated token stream "
			    "(%zd bytes after document %llu)", k,
			    (unsigned long long)r->ndocs);
		memcpy(first, p, 4);
		memcpy(&n, first, 4);
		if (n == TOK_MAGIC32) {
			if (r->version == 2)
				return no_trailer(r, ", before the next "
				    "header");
			if (read_hdr(r, first) < 0)
				return -1;
		} else if (n == TOK_END32 && r->version == 2) {
			if (read_end(r) < 0)
				return -1;
		} else if (r->version == 0) {
			return fail(r, XDATA, "corrupt token stream: a trailer "
			    "followed by something other than a header");
		} else {
			break;
		}
	}
	if (n > TOK_MAXDOC)
		return fail(r, XDATA, "corrupt token stream: document %llu "
		    "claims %u tokens", (unsigned long long)r->ndocs + 1, n);
	bytes = (size_t)n * r->h.width;
	k = take(r, bytes, &p);
	if (k < 0)
		return -1;
	if ((size_t)k < bytes)
		return fail(r, XDATA, "truncated token stream: document %llu "
		    "has %zu of %u tokens", (unsigned long long)r->ndocs + 1,
		    (size_t)k / r->h.width, n);
	r->pos += 4;
	/*
	 * The largest id and the sum first: a loop without exits vectorizes,
	 * and 16-bit ids summed in 32 bits (65536 of them at most) take
	 * half the vector work of a 64-bit sum.
	 */
	if (r->h.width == 2) {
		for (i = 0; i < n;) {
			size_t end = n - i > 65536 ? i + 65536 : n;
			uint32_t s32 = 0;

			for (; i < end; i++) {
				uint16_t s;
				memcpy(&s, p + 2 * i, 2);
				max = s > max ? s : max;
				s32 += s;
			}
			sum += s32;
		}
	} else {
		for (i = 0; i < n; i++) {
			memcpy(&v, p + 4 * i, 4);
			max = v > max ? v : max;
			sum += v;
		}
	}
	if (max >= r->h.vocab) {
		for (i = 0;; i++) {
			v = 0;
			memcpy(&v, p + i * r->h.width, r->h.width);
			if (v >= r->h.vocab)
				break;
		}
		r->pos += i * r->h.width;
		return fail(r, XDATA, "token %u in document %llu is outside "
		    "the vocabulary (%u)", v, (unsigned long long)r->ndocs + 1,
		    r->h.vocab);
	}
	r->pos += bytes;
	r->ndocs++;
	r->member.docs++;
	r->member.tokens += n;
	r->member.sum += sum;
	*raw = p;
	*np = n;
	return 1;
}

int
tok_next(struct tok_reader *r, const uint32_t **ids, size_t *np)
{
	const unsigned char *p;
	size_t i, n;
	int k;

	if ((k = tok_next_raw(r, &p, &n)) <= 0)
		return k;
	r->ids = xgrow(r->ids, &r->cap, n ? n : 1, sizeof *r->ids);
	if (r->h.width == 2) {
		for (i = 0; i < n; i++) {
			uint16_t s;
			memcpy(&s, p + 2 * i, 2);
			r->ids[i] = s;
		}
	} else {
		memcpy(r->ids, p, n * 4);
	}
	*ids = r->ids;
	*np = n;
	return 1;
}

void
tok_close(struct tok_reader *r)
{
	input_close(&r->in);
	free(r->ids);
	r->ids = NULL;
}
