/* merge.h - jsonl-merge's records: text and JSONL files and directories into one stream */
#ifndef OWT_MERGE_H
#define OWT_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/buf.h"
#include "core/input.h"
#include "core/json.h"
#include "core/progress.h"
#include "core/tally.h"
#include "core/util.h"
#include "merge/shuffle.h"

/* Counters of the summary; the first BAD_NREASONS are input_bad_name[]. */
enum {
	MERGE_EMPTYFILE = BAD_NREASONS,
	MERGE_NCOUNT
};

struct merge_opts {
	const char *text_key;	/* the text field (records of .txt files, checks) */
	const char *id_prefix;	/* add adlr_id "prefix-0000000001", ...; NULL: no */
	int keep_going;		/* go on after a bad record or file */
	int shuffle;		/* in a seeded random order (shuffle.h) */
	uint64_t seed;
	size_t memory;		/* the shuffle's, before it spills to tmpdir */
	const char *tmpdir;
};

/*
 * A run: records in, in the order of the operands (or shuffled), out to f
 * through out. A bad record or file is written on stderr (as owt_warn),
 * counted by reason in count[] and makes status XDATA.
 */
struct merge {
	struct merge_opts o;
	struct progress *prog;	/* ticked a record (records in, bytes in) */
	FILE *f;
	struct buf out;		/* records not yet written to f */
	struct tally count[MERGE_NCOUNT];	/* count[0] unused */
	unsigned long long nin, nout, nfiles, nignored;
	uint64_t nbytes;	/* input bytes of the records */
	int status;		/* XOK, or XDATA after a bad record or file */
	/* private */
	struct shuffle shuf;
	struct buf id;		/* "prefix: the id's JSON before its number */
	size_t idlen;
	struct json_rec outrec;
	int errcode;
	char err[OWT_ERRSIZE];
};

void merge_init(struct merge *m, const struct merge_opts *o,
    struct progress *prog, FILE *f);
/*
 * The records of path: a directory's .txt, .json and .jsonl files (also
 * .gz, .zst) in byte order of names (other files are counted in
 * nignored), a .txt file as one record {"text": its content, "src":
 * path}, or any other file or "-" as JSONL. 0; 1 when the run stops
 * before a bad record or file (not keep_going: the warning is written,
 * out holds the records before it); -1 with err and errcode (XSYS: a
 * read error, a temporary file of the shuffle; a failed write to f has
 * ferror(f) set).
 */
int merge_operand(struct merge *m, const char *path);
/* Write the shuffled records, if shuffling, and the rest of out. 0 or -1 as above. */
int merge_finish(struct merge *m);
void merge_free(struct merge *m);

#endif
