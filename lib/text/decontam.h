/* decontam.h - remove downstream-task n-grams from training text, as filter_ngrams.py */
#ifndef OWT_DECONTAM_H
#define OWT_DECONTAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/jsonl.h"
#include "core/spill.h"
#include "text/textfix.h"
#include "core/util.h"
#include "text/words.h"

/*
 * Megatron-LM's tools/openwebtext/filter_ngrams.py with its defaults
 * (notes/megatron-compat.md section 4.9). Words are lower-cased \w+ runs
 * (words.h); a task text of 13 words or more gives its 13-grams, one of
 * 8 to 12 words gives itself. Pass 1 counts in how many training
 * documents each task n-gram occurs; only those in fewer than
 * DECONTAM_FREQ documents are cut out (frequent ones are boilerplate).
 * Pass 2 cuts every match out with DECONTAM_MARGIN characters on each side,
 * to the nearest '.', '!' or '?', and keeps the pieces longer than
 * DECONTAM_MIN_PIECE characters. N-grams are compared by 64-bit hash.
 */
#define DECONTAM_MAX_N 13
#define DECONTAM_MIN_N 8
#define DECONTAM_FREQ 10
#define DECONTAM_MARGIN 200
#define DECONTAM_MIN_PIECE 200
#define DECONTAM_MAX_PIECES 10

struct decontam;

/* Scratch space of one thread; zero it before the first call. */
struct decontam_work {
	struct u32v text, off;	/* the document as code points, their byte offsets */
	struct words words;
	uint32_t *found;	/* pass 1: n-gram numbers, each once */
	size_t nfound, foundcap;
	struct piece {
		size_t start, end;	/* byte offsets in the document */
	} *piece;
	size_t npiece, piececap;
	unsigned long matches;	/* pass 2: n-grams cut out */
	struct u32v queue;	/* pass 1 and 2: texts still to scan (start offsets) */
	struct buf ptext, sid, tmp;	/* decontam_rewrite's */
};

struct decontam *decontam_new(void);
void decontam_free(struct decontam *dc);
/* Add the n-grams of one task text (valid UTF-8). */
void decontam_add_task(struct decontam *dc, const char *s, size_t n,
    struct decontam_work *w);
/* The number of distinct task n-grams. */
size_t decontam_size(const struct decontam *dc);

/* Pass 1: the task n-grams the text holds, in w->found; how many. Thread-safe. */
size_t decontam_scan(const struct decontam *dc, const char *s, size_t n,
    struct decontam_work *w);
/* Count the n-grams found in one training document. */
void decontam_count(struct decontam *dc, const uint32_t *found, size_t n);
/* End pass 1: from now on only rare n-grams are cut. Returns how many. */
size_t decontam_freeze(struct decontam *dc);

/*
 * Pass 2: the pieces of the text left after cutting, in w->piece (byte
 * ranges of s, in filter_ngrams.py's order), and the matches cut in
 * w->matches. Thread-safe after decontam_freeze.
 */
void decontam_cut(const struct decontam *dc, const char *s, size_t n,
    struct decontam_work *w);

void decontam_work_free(struct decontam_work *w);

/*
 * Add the text field key of every record of the task files (JSONL). 0,
 * or -1 with err ("FILE:LINE: what") and *code.
 */
int decontam_load_tasks(struct decontam *dc, char *const *files, size_t n,
    const char *key, char *err, size_t errsize, int *code);
/* The split_id prefix: the task files' names without directory and extensions, joined by '-'. */
void decontam_prefix(char *const *files, size_t n, struct buf *b);

/* Pass 2's verdict on a document after decontam_cut. */
enum { DECONTAM_KEEP, DECONTAM_EMPTY, DECONTAM_TOOMANY, DECONTAM_NVERDICTS };
/* DECONTAM_EMPTY: no piece left; DECONTAM_TOOMANY: over DECONTAM_MAX_PIECES. */
int decontam_verdict(const struct decontam_work *w);
/*
 * Append to out the records the pieces in w make of record jr (its text
 * field key holding text, as decontam_cut cut it): each jr with that
 * field replaced by the piece and a split_id "OLD-PREFIX-NNNNNNNNNN-PPPP"
 * (OLD- only where jr has a split_id; N: k + 1, P: the piece's number),
 * as filter_ngrams.py writes them.
 */
void decontam_rewrite(const struct json_rec *jr, const char *key,
    const char *text, const char *prefix, size_t k, struct decontam_work *w,
    struct buf *out);

/* Pass 2 over the records that pass 1 kept. */
struct decontam_pass {
	const char *key;	/* the text field */
	const char *prefix;	/* of split_id (decontam_prefix) */
	FILE *out;		/* the pieces go here */
	const char *outname;	/* in messages; NULL: standard output */
	/*
	 * Each document k (0, 1, ... in spool order) with its verdict, before
	 * its pieces are written (or NULL). 0, or -1 with err and *code to
	 * stop.
	 */
	int (*each)(void *arg, size_t k, const struct json_rec *jr,
	    int verdict, const struct decontam_work *w, char *err,
	    size_t errsize, int *code);
	void *arg;
	/* decontam_pass2's counts */
	unsigned long long nmatches;	/* n-grams cut out */
	unsigned long long ncut;	/* documents kept with a cut */
	unsigned long long npieces;	/* records written */
	unsigned long long ndrop[DECONTAM_NVERDICTS];
};
/*
 * Freeze dc and cut every record of spool (pass 1's kept records, one
 * JSONL line each, written by spill_put) as decontam_cut does: pieces to
 * p->out by decontam_rewrite, with the counts in p. 0, or -1 with err
 * and *code (XSYS: the spool cannot be read, or a write error).
 */
int decontam_pass2(struct decontam *dc, struct spill *spool,
    struct decontam_pass *p, char *err, size_t errsize, int *code);

#endif
