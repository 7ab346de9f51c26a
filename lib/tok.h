/* tok.h - the owt token stream (owt-tok(5)): documents of token ids */
#ifndef OWT_TOK_H
#define OWT_TOK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "input.h"
#include "util.h"

/*
 * A stream is a 16-byte header, then documents: a little-endian u32 count
 * n < 2^30, then n ids of `width` bytes each, little-endian. Another header
 * may follow any document (so `cat a.tok b.tok` is a stream); it must equal
 * the first. Header: "OWTTOK", u8 version 1, u8 width (2 or 4), u32 vocab
 * size, u32 EOD id (TOK_NOEOD: none).
 */
#define TOK_MAGIC "OWTTOK"
#define TOK_VERSION 1
#define TOK_HDRSIZE 16
#define TOK_MAXDOC ((1u << 30) - 1)
#define TOK_NOEOD 0xffffffffu

struct tok_hdr {
	unsigned width;
	uint32_t vocab;
	uint32_t eod;
};

/* The header for a vocabulary: width 2 when every id fits 16 bits. */
void tok_hdr_init(struct tok_hdr *h, uint32_t vocab, uint32_t eod);
void tok_put_hdr(struct buf *b, const struct tok_hdr *h);
/* Append one document; n must be at most TOK_MAXDOC. */
void tok_put_doc(struct buf *b, const struct tok_hdr *h, const uint32_t *ids,
    size_t n);

struct tok_reader {
	struct input in;
	struct tok_hdr h;
	int have_hdr;
	uint64_t ndocs;		/* documents returned so far */
	uint64_t pos;		/* byte offset in the (decompressed) stream */
	uint32_t *ids;
	size_t cap;
	int errcode;		/* XDATA or XSYS after an error */
	char err[512];		/* "FILE: byte N: what" */
};

/* 0, or -1 with r->err (cannot open, or not a token stream). */
int tok_open(struct tok_reader *r, const char *path);
/*
 * The next document: 1 with *ids and *n set (valid until the next call),
 * 0 at the end, -1 on an error. Every id is checked to be < h.vocab.
 */
int tok_next(struct tok_reader *r, const uint32_t **ids, size_t *n);
/*
 * As tok_next, but *raw points at the document's ids as they are in the
 * stream (h.width bytes each, little-endian), checked all the same, in the
 * reader's buffer until the next call: no conversion, no copy.
 */
int tok_next_raw(struct tok_reader *r, const unsigned char **raw, size_t *n);
void tok_close(struct tok_reader *r);

#endif
