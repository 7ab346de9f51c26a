/* encode.h - bpe-encode's jobs: JSONL records to token ids (a stream or datasets), streams back to JSONL */
#ifndef OWT_ENCODE_H
#define OWT_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/batch.h"
#include "core/input.h"
#include "core/progress.h"
#include "core/tally.h"
#include "tok/mmidx.h"
#include "tok/tok.h"
#include "tok/tokenizer.h"

/*
 * Memory that does not grow with the number of workers (man bpe-encode,
 * MEMORY): input read per batch of work (a batch holds at least one line;
 * with many workers batches are smaller), the input in all batches in
 * flight, and the piece caches of all workers together (16 MB each for one
 * or two, smaller for more: each worker sees a share of the input, and a
 * cache serves the pieces that repeat most, which a small one holds too).
 * Per-record scratch a worker keeps for the next record is at most
 * ENCODE_KEEP; a longer record's is freed after it. Batches are small so
 * that the few in flight are reused while hot: fresh pages cost the kernel
 * more than the handing over of batches costs.
 */
#define ENCODE_BATCH_BYTES ((size_t)256 << 10)
#define ENCODE_HELD_BYTES ((size_t)8 << 20)
#define ENCODE_CACHE_BYTES ((size_t)32 << 20)
#define ENCODE_KEEP ((size_t)64 << 10)
#define ENCODE_MAXKEYS 64

/* Counters for the summary; the first BAD_NREASONS are input_bad_name[]. */
enum {
	ENCODE_EMPTY = BAD_NREASONS,	/* an empty document, without --append-eod */
	ENCODE_TRUNC,		/* -d: a corrupt or truncated token stream */
	ENCODE_DECODE,		/* -d: tokens that are not UTF-8 text */
	ENCODE_NCOUNT
};

struct encode_opts {
	const char *const *keys;	/* the fields (-d: keys[0] is written) */
	size_t nkeys;
	int append_eod, keep_going, quiet, workers;
	int log_interval;	/* 0: none */
	const char *prefix;	/* --output-prefix, or NULL: a stream */
};

/* A run, and its counters for the summary. */
struct encode {
	struct encode_opts o;
	struct tokenizer *vocab;
	struct tok_hdr hdr;
	struct tally count[ENCODE_NCOUNT];
	struct tok_count written;	/* the documents of the stream written */
	unsigned long long nrec, ndoc, ntok, nin;
	uint64_t nbytes;
	int status;		/* XOK or XDATA */
	/* encode_decode: the caller exits now, as owt_finish(status) */
	int stopped;
	struct progress prog;
	struct mmidx_writer *dset;	/* --output-prefix: a dataset a key */
	char **dname;		/* their prefixes */
};

/*
 * Start a run of o (copied; its keys are kept) with vocab (borrowed), the
 * progress not yet started: the header of the stream in e->hdr (whose eod
 * is TOK_NOEOD where the vocabulary has none: no o->append_eod then).
 */
void encode_init(struct encode *e, const struct encode_opts *o,
    struct tokenizer *vocab);
/*
 * The batch loop's workers and its order of work for e (each worker
 * encodes the records of a batch into b->out: the stream's documents, or
 * with a prefix what encode_done adds to the datasets); the caller sets
 * done, calling encode_done, and runs it.
 */
void encode_batch_opts(struct encode *e, struct batch_opts *run);
/*
 * A batch is done, about to be written (its bad records reported by the
 * loop): counted, its documents added to the datasets, Megatron's
 * --log-interval line. -1 with err: a dataset's write error.
 */
int encode_done(struct encode *e, struct batch *b, char *err, size_t errsize,
    int *code);
/*
 * --output-prefix P: for each key a dataset P_KEY_document, each document
 * a sequence, as idx-pack packs a stream of that key's documents; written
 * over any there (as preprocess_data.py does), published by
 * encode_datasets_commit (with a line each on stderr unless quiet).
 */
int encode_datasets_create(struct encode *e, char *err, size_t errsize,
    int *code);
int encode_datasets_commit(struct encode *e, char *err, size_t errsize,
    int *code);
/*
 * -d: the token streams paths (none: standard input) back to JSONL on
 * out, one record a document; bad streams and documents are warned of and
 * counted. Returns e->status; with e->stopped set (a bad one without
 * keep_going, written up to it; or XSYS, a write error) the caller exits
 * as owt_finish(returned). -1 with err: a read error.
 */
int encode_decode(struct encode *e, char *const *paths, int npaths, FILE *out,
    char *err, size_t errsize, int *code);
void encode_free(struct encode *e);

#endif
