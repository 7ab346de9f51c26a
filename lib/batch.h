/* batch.h - input lines in batches for worker threads, results in input order */
#ifndef OWT_BATCH_H
#define OWT_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* A bad line found by a worker, to report when its batch is written. */
struct batch_note {
	size_t outpos;		/* the batch's output made before the line */
	int reason;		/* the program's counter of it */
	char *msg;		/* "FILE:LINE: what" */
};

struct batch_run;

/* Lines of one input, and what a worker made of them. */
struct batch {
	const char *name;	/* the input, for messages */
	struct buf in;		/* the lines, each NUL-terminated */
	size_t *off;		/* line i is in.p + off[i], off[i + 1] - off[i] - 1 bytes */
	unsigned long *lineno;
	size_t nline;
	struct buf out;
	struct batch_note *note;
	size_t nnote;
	uint64_t count[8];	/* the program's own counters */
	size_t linecap, notecap;
	const struct batch_run *run;
	struct batch *next;
};

/* Add a note to b, made in the order of its lines. */
void batch_note(struct batch *b, int reason, const char *fmt, ...) OWT_PRINTF(3, 4);

struct batch_run {
	int nworkers;
	size_t bytes;		/* input a batch, about; a line longer is one batch */
	size_t held;		/* input in all batches in flight, at most (0: any) */
	/* On a worker: its state once, then each batch; fini at the end. */
	void *(*init)(void *arg);
	void (*work)(struct batch *b, void *state);
	void (*fini)(void *state);
	/* On the calling thread, for every batch in input order. */
	void (*done)(struct batch *b, void *arg);
	void *arg;
};

/*
 * Read the lines of each path ("-": standard input; plain, gzip or zstd)
 * into batches, have them worked on by r->nworkers threads, and hand them
 * to r->done in input order. At most 2 * nworkers + 2 are in flight, and
 * with r->held, at most r->held bytes of input in them: batches are made
 * smaller than r->bytes where that many would hold more (not under 64 KB),
 * and a batch that would take the bytes in flight over r->held waits for
 * the older ones to be done (one larger than r->held waits for all, and
 * is then the only one). Spare batches larger than four times the batch
 * size are freed, not kept.
 * A file that cannot be opened, a line over the limit and corrupt
 * compressed data become a batch of one note with its BAD_* reason (the
 * rest of a corrupt file is skipped). A read error exits XSYS.
 */
void batch_run(const struct batch_run *r, char *const *paths, int npaths);

#endif
