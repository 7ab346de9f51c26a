/* batch.h - the ordered parallel record loop: read, work on N threads, write in input order */
#ifndef OWT_BATCH_H
#define OWT_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/util.h"

/*
 * A bad record, found by a worker or the reader: the warning channel.
 * Its message is written, and counted by reason, when its batch's turn
 * comes, after the output made before it.
 */
struct batch_note {
	size_t outpos;		/* b->out made before the record */
	size_t reppos;		/* b->rep made before it */
	int reason;		/* its counter (batch_opts.bad[reason]) */
	char *msg;		/* "FILE:LINE: what" */
};

struct batch_opts;

/* Records of one input, and what a worker made of them. */
struct batch {
	const char *name;	/* the input, for messages */
	struct buf in;		/* the records, each NUL-terminated */
	size_t *off;		/* record i: in.p + off[i], off[i + 1] - off[i] - 1 bytes */
	unsigned long *lineno;
	void **user;		/* what batch_add was given with record i */
	size_t nline;
	struct buf out;		/* the output channel: written in input order */
	struct buf rep;		/* the report channel: written after out */
	struct batch_note *note;
	size_t nnote;
	uint64_t count[8];	/* the program's own counters */
	size_t linecap, notecap;
	const struct batch_opts *opts;
	struct batch *next;
};

/* Add a note to b, made in the order of its records. */
void batch_note(struct batch *b, int reason, const char *fmt, ...)
    OWT_PRINTF(3, 4);

struct batch_opts {
	int nworkers;		/* threads; 0: the work is done inline */
	size_t stack;		/* a worker's stack (0: the default) */
	size_t depth;		/* batches in flight (0: 2 * nworkers + 2) */
	size_t bytes;		/* input a batch, about */
	size_t held;		/* input in all batches in flight (0: any) */
	size_t maxrecs;		/* records a batch, at most (0: any) */
	/*
	 * The policy of DESIGN.md: each note is written on stderr, counted
	 * in bad[reason] (when bad is not NULL) and makes the status XDATA;
	 * without keep_going the output stops before the bad record.
	 */
	int keep_going;
	struct tally *bad;
	FILE *out, *rep;	/* where b->out and b->rep go (NULL: nowhere) */
	const char *outname;	/* for messages; NULL: standard output */
	const char *repname;
	/* Flush out and rep this often (0: when the input stalls, at the end). */
	double flush_secs;
	/* On a worker: its state once, then each batch; fini at the end. */
	void *(*init)(void *arg);
	void (*work)(struct batch *b, void *state);
	void (*fini)(void *state);
	/* On the calling thread, each batch in order, before it is written. */
	void (*done)(struct batch *b, void *arg);
	void *arg;
};

struct batch_loop;

/*
 * Start a loop. Records go into batches of about o->bytes (smaller where
 * o->held would be exceeded by depth of them, not under 64 KB), at most
 * depth batches are in flight, and with o->held at most o->held bytes of
 * input in them: a batch waits for older ones to be done where it would
 * take the bytes in flight over o->held (a record longer than o->held
 * waits for all, and then goes alone). Spare batches larger than four
 * times the batch size are freed, not kept. Out of memory or threads is
 * fatal (owt_fatal).
 */
struct batch_loop *batch_start(const struct batch_opts *o);
/*
 * Add the record p[0..n) of input name at lineno, with the caller's user
 * pointer (b->user[i]); name stays valid until the loop ends. May wait
 * for the oldest batches, and write them. 0, or 1 when the loop has
 * stopped (a note without keep_going, or an error): add no more, end it.
 */
int batch_add(struct batch_loop *l, const char *name, unsigned long lineno,
    const void *p, size_t n, void *user);
/* A bad file or line the caller met, as a note in order. 0 or 1 as batch_add. */
int batch_bad(struct batch_loop *l, const char *name, int reason,
    const char *msg);
/* Write the batches done already, in order; never waits. As batch_add. */
int batch_poll(struct batch_loop *l);
/*
 * Hand the batch being filled to the workers, wait for every batch in
 * flight, write them and flush: the output owes nothing to records not
 * yet read. 0 or 1 as batch_add.
 */
int batch_sync(struct batch_loop *l);
/* The batches in flight (not the one being filled) and their input bytes. */
size_t batch_inflight(const struct batch_loop *l, size_t *bytes);
/*
 * Finish the batches in flight, write them, and free the loop; the
 * caller flushes and closes the outputs (a write error the buffer still
 * holds shows there). Returns XOK, XDATA (a note, with or without
 * keep_going), or -1 with err and *code: a read error the reader met
 * (batch_run), or a write error ("write error on standard output: ...",
 * errno kept).
 */
int batch_end(struct batch_loop *l, char *err, size_t errsize, int *code);
/*
 * Every program's -k (--keep-going) rule, after a run that returned
 * status: 1 when the run met bad input (XDATA) and keep_going is off, and
 * the program is to end at once with XDATA, without its summary (its
 * output stops before the first bad record); 0 to go on and finish (still
 * exit 1 after bad input under -k).
 */
int batch_halts(int status, int keep_going);

/*
 * The loop over the lines of each path ("-": standard input; plain, gzip
 * or zstd). A file that cannot be opened, a line over the limit and
 * corrupt compressed data become notes with their BAD_* reason (the rest
 * of a corrupt file is skipped); a read error ends the loop (-1). When
 * the input is quiet (a pipe with nothing to read yet), the records read
 * so far are worked on, written and flushed before the read waits (unless
 * more input comes meanwhile). Returns as batch_end.
 */
int batch_run(const struct batch_opts *o, char *const *paths, int npaths,
    char *err, size_t errsize, int *code);

#endif
