/* clean.h - owt-dedup's stages: fix, lang, length and sign per document, then exact, near and decontam in order */
#ifndef OWT_CLEAN_H
#define OWT_CLEAN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/batch.h"
#include "tok/bpe.h"
#include "text/clean_reason.h"
#include "text/decontam.h"
#include "text/dedup.h"
#include "text/dedup_report.h"
#include "core/input.h"
#include "core/json.h"
#include "text/langid.h"
#include "text/minhash.h"
#include "core/progress.h"
#include "text/signature.h"
#include "core/spill.h"
#include "text/textfix.h"
#include "core/util.h"
#include "text/words.h"

/*
 * --stages LIST: "none", or stage names separated by commas, into
 * stage[]. 0, or -1 with the message in err.
 */
int clean_parse_stages(const char *list, int stage[CLEAN_NSTAGES], char *err,
    size_t errsize);

/*
 * What a run does, and its state. The caller sets the first part (zero
 * what it leaves out), then clean_start; the workers read only that
 * part, the calling thread keeps the rest.
 */
struct clean {
	int stage[CLEAN_NSTAGES];
	int signed_in;		/* the inputs are signature records */
	unsigned fixes;		/* fix: the TF_* bits to apply */
	const char *text_key;	/* the text field */
	const char *lang;	/* lang: the language kept */
	size_t min_chars, min_tokens;	/* length */
	const struct bpe *vocab;	/* length: counts tokens (or NULL) */
	uint64_t seed;		/* of the MinHash functions */
	double near;		/* near: the similarity that drops */
	const struct dedup *droplist;	/* --drop's names (or NULL) */
	char *const *tasks;	/* decontam: the task files (JSONL) */
	size_t ntasks;
	const char *tmpdir;	/* for decontam's spool */
	FILE *rep, *sign;	/* the report and the signatures (or NULL) */
	const char *repname, *signname;
	struct progress *prog;	/* ticked once a batch (or NULL) */
	char *const *files;	/* the inputs, as clean_read gets them */
	size_t nfiles;

	/* clean_start's */
	struct minhash mh;
	struct decontam *dc;	/* decontam: the task n-grams */
	char **file_json;	/* files[] as JSON strings */
	const char *want[SIGNATURE_NWANT];	/* the keys parsed */
	size_t nwant;

	/* in order, on the calling thread */
	struct dedup *index;	/* exact, near: the kept documents */
	struct dedup_report report;	/* with rep: the kept documents' names (the caller opens it) */
	struct spill spool;	/* decontam: the kept documents, for pass 2 */
	uint64_t *kept_line;	/* decontam: kept document -> file << 40 | line */
	size_t nkept, keptcap;
	unsigned long *badline;	/* clean_read's bad lines not yet reported */
	size_t nbad, badhead, badcap;
	struct buf line;	/* a signature, or pass 2's report lines */
	struct buf name;	/* pass 2: a document's name fields */
	struct tally count[CLEAN_NREASONS], fixcount[TF_NFIXES];
	unsigned long long nin, nout, nfixed;
	uint64_t nbytes;
	struct decontam_pass pass2;	/* decontam's second pass: its counts */
	int errcode;		/* 0, or why the run stopped (err) */
	char err[OWT_ERRSIZE];

	/* the workers' results on their way to the calling thread */
	pthread_mutex_t lock;
	struct clean_batch *free, *all;
};

/*
 * Get ready after the options: the tables of textfix and words, the
 * MinHash functions, the index, the task files and decontam's spool in
 * tmpdir. The caller then opens report (dedup_report_open) where it
 * sets rep. 0, or -1 with err and *code.
 */
int clean_start(struct clean *c, char *err, size_t errsize, int *code);
/* Free what clean_start and the run made (not the caller's part). */
void clean_end(struct clean *c);

/* What the per-document stages found about one document. */
struct clean_doc {
	int drop;		/* CLEAN_* reason, 0 while kept */
	unsigned fixes;		/* TF_* bits of the fixes that changed it */
	size_t len;		/* its input line */
	struct langid lang;
	size_t chars, tokens;	/* length: tokens 0 when not counted */
	struct dedup_sig sig;
	size_t out, outlen;	/* the output line, in the worker's out */
	size_t who, wholen;	/* the name fields (a bad record: its message), in info */
	size_t ref, reflen;	/* its "kept" value, in info */
	size_t nfound;		/* decontam pass 1: n-grams, in w's dw.found */
};

/* A worker thread's state. */
struct clean_worker {
	struct clean *c;
	struct json_rec jr;
	struct textfix tf;
	struct buf fixed, tmp;
	struct words words;
	struct decontam_work dw;
	struct bpe_state *bpe;
};
struct clean_worker *clean_worker_new(struct clean *c);
void clean_worker_free(struct clean_worker *w);

/*
 * The stages of one document alone, the record line[0..len) of input
 * file (its JSON string file_json) at lineno: the record is parsed, its
 * name (a report or signatures) or its message (a bad record: "FILE:LINE:
 * what") appended to info, and unless the stages drop it its output line
 * (the text field replaced where fix changed it) to out. d says what was
 * found. Thread-safe after clean_start, with one w a thread.
 */
void clean_doc_run(const struct clean *c, struct clean_worker *w,
    const char *file, const char *file_json, unsigned long lineno,
    const char *line, size_t len, struct clean_doc *d, struct buf *out,
    struct buf *info);

/*
 * One document's turn, in input order (on one thread): counted; the
 * exact and near stages decide; dropped and changed documents reported
 * into rep; a kept document's signature written, its name remembered,
 * it joins the index and, with decontam, the spool (its output line line,
 * d->outlen bytes). info holds d's fields, found its decontam n-grams.
 * Returns 1 when the document is kept and its line is output now, 0 when
 * not (dropped, or spooled for pass 2), -1 on an error (c->err,
 * c->errcode). A bad record (d->drop up to CLEAN_BADSIG) is counted and
 * reported here, not warned.
 */
int clean_order(struct clean *c, struct clean_doc *d, const char *info,
    const uint32_t *found, const char *line, int file, unsigned long lineno,
    struct buf *rep);

/*
 * The record loop's parts (batch.h: .init, .work, .fini, .done with .arg
 * c): the workers run clean_doc_run over a batch, the calling thread
 * clean_order, keeping in b->out only the lines output now and putting
 * the report lines in b->rep. Bad records become notes (batch_note).
 */
void *clean_batch_init(void *c);
void clean_batch_work(struct batch *b, void *w);
void clean_batch_fini(void *w);
void clean_batch_done(struct batch *b, void *c);

/*
 * Read input files[file] into the loop: each line a record; a file or
 * line that cannot be read a bad record (batch_bad). Returns 0; 1 when the
 * loop has stopped or c has failed (end it); -1 on a read error, with err
 * and *code.
 */
int clean_read(struct clean *c, struct batch_loop *l, int file, char *err,
    size_t errsize, int *code);

/*
 * After the loop: decontam's second pass over the spool, its pieces to
 * out (standard output, as messages name it), its report lines to
 * c->rep, its counts in c->pass2, c->count and c->nout. 0, or -1 with
 * err and *code.
 */
int clean_finish(struct clean *c, FILE *out, char *err, size_t errsize,
    int *code);

#endif
