/* tok.h - the owt token stream (owt-tok(5)): documents of token ids */
#ifndef OWT_TOK_H
#define OWT_TOK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/input.h"
#include "core/util.h"

/*
 * A stream is one or more members, each a 16-byte header, documents, and
 * (version 2) a 32-byte trailer. A document is a little-endian u32 count
 * n < 2^30, then n ids of `width` bytes each, little-endian. Header:
 * "OWTTOK", u8 version, u8 width (2 or 4), u32 vocab size, u32 EOD id
 * (TOK_NOEOD: none); every member's must equal the first's but for the
 * version. Trailer: "OWTEND", two zero bytes, then u64 documents, u64
 * tokens and u64 sum of the ids (modulo 2^64) of its member. A writer
 * that fails writes no trailer, so a reader tells a finished member from
 * one whose writer died. `cat a.tok b.tok` is a stream. A version 1 member
 * has no trailer and ends at the next header or the end of the input.
 */
#define TOK_MAGIC "OWTTOK"
#define TOK_END_MAGIC "OWTEND"
#define TOK_VERSION 2
#define TOK_HDRSIZE 16
#define TOK_ENDSIZE 32
#define TOK_MAXDOC ((1u << 30) - 1)
#define TOK_NOEOD 0xffffffffu

struct tok_hdr {
	unsigned width;
	uint32_t vocab;
	uint32_t eod;
};

/* What a member holds, as its trailer states it. */
struct tok_count {
	uint64_t docs;
	uint64_t tokens;
	uint64_t sum;		/* of every id, modulo 2^64 */
};

/* The header for a vocabulary: width 2 when every id fits 16 bits. */
void tok_hdr_init(struct tok_hdr *h, uint32_t vocab, uint32_t eod);
/* Start a member: its header (version 2). */
void tok_put_hdr(struct buf *b, const struct tok_hdr *h);
/* Append one document and count it in *c; n must be at most TOK_MAXDOC. */
void tok_put_doc(struct buf *b, const struct tok_hdr *h, struct tok_count *c,
    const uint32_t *ids, size_t n);
/* End a member whose documents *c counted: its trailer. Only on success. */
void tok_put_end(struct buf *b, const struct tok_count *c);
/* Add the counts of some documents to a member's. */
void tok_count_add(struct tok_count *to, const struct tok_count *from);

struct tok_reader {
	struct input in;
	struct tok_hdr h;
	int have_hdr;
	int version;		/* the member being read: 1, 2; 0 after a trailer */
	struct tok_count member;	/* its documents read so far */
	uint64_t nv1;		/* version 1 members read (their end unchecked) */
	uint64_t ndocs;		/* documents returned so far */
	uint64_t pos;		/* byte offset in the (decompressed) stream */
	uint32_t *ids;
	size_t cap;
	int errcode;		/* XDATA or XSYS after an error */
	char err[OWT_ERRSIZE];		/* "FILE: byte N: what" */
};

/* 0, or -1 with r->err (cannot open, or not a token stream). */
int tok_open(struct tok_reader *r, const char *path);
/*
 * The next document: 1 with *ids and *n set (valid until the next call),
 * 0 at the end, -1 on an error. Every id is checked to be < h.vocab, and
 * every version 2 member against its trailer: a member without one (its
 * writer died: the input ends, or another header starts, before it) is an
 * error (XDATA), as is a trailer that does not match. A version 1 member
 * ends unchecked; r->nv1 counts them, for the caller to warn.
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
