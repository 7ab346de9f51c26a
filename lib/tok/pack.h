/* pack.h - idx-pack's jobs: token streams packed into a dataset, datasets merged, read back */
#ifndef OWT_PACK_H
#define OWT_PACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/buf.h"
#include "core/progress.h"
#include "tok/mmidx.h"
#include "tok/tok.h"

/*
 * A dataset written from token streams (one sequence a document) or from
 * datasets (Megatron's merge). The writer starts with the first input
 * (its dtype is the first stream's vocabulary's, or the first dataset's);
 * the caller ends it with mmidx_commit, or mmidx_abort after a failure
 * (safe before it started).
 */
struct pack {
	struct mmidx_writer w;
	const char *output;	/* PREFIX written */
	int force;		/* replace an existing dataset */
	int keep_empty;		/* an empty document stays, of no sequence */
	struct progress *prog;	/* ticked a document (documents, .bin bytes) */
	int started;		/* w is open */
	struct tok_hdr first;	/* the first stream's header, which all share */
	char *first_name;
	uint64_t nempty;	/* empty documents left out */
	const char *v1;		/* the last stream's name if it held a version 1
				 * member (whether it is whole is unchecked) */
};

void pack_init(struct pack *p, const char *output, int force, int keep_empty,
    struct progress *prog);
void pack_free(struct pack *p);		/* not w: see above */

/*
 * Add the documents of the token stream path ("-": standard input). 0, or
 * -1 with err and *code: the stream's fault, a vocabulary or EOD id other
 * than the first stream's (XDATA), "NAME: document N: what" for a
 * document the dataset cannot take (XDATA), or the writer's error.
 */
int pack_stream(struct pack *p, const char *path, char *err, size_t errsize,
    int *code);
/*
 * Append the dataset PREFIX (a dtype other than the first's is XDATA,
 * "PREFIX.idx: ..."). 0, or -1 with err and *code.
 */
int pack_dataset(struct pack *p, const char *prefix, char *err,
    size_t errsize, int *code);

/*
 * A dataset operand: PREFIX, or PREFIX.idx / PREFIX.bin as a glob gives
 * them (unless PREFIX.idx.idx exists: then it is the prefix). Allocated.
 */
char *pack_prefix(const char *arg);

/*
 * The dataset PREFIX described as one JSON line (with its '\n') appended
 * to out: counts, dtype, sizes and length statistics. 0, or -1 with err
 * and *code as mmidx_open.
 */
int pack_info(const char *prefix, struct buf *out, char *err, size_t errsize,
    int *code);

/* Which documents pack_cat writes, and the header of its member. */
struct pack_cat {
	uint64_t first, last;	/* documents [first, last), last clipped */
	uint32_t vocab, eod;	/* every id must be below vocab */
};

/*
 * Documents of PREFIX as a token stream member appended to out, each a
 * document's sequences joined; out goes to f whenever it holds 1 MB. 0,
 * or -1 with err and *code: then out holds what should still be written
 * before the message (the documents before one with an id outside the
 * vocabulary), or nothing (the dataset cannot be opened, a document too
 * long for a stream); a failed write to f is XSYS with ferror(f) set. A
 * fault stops before the member's trailer.
 */
int pack_cat(const struct pack_cat *c, const char *prefix, struct buf *out,
    FILE *f, char *err, size_t errsize, int *code);

#endif
