/* dedup_report.h - owt-dedup's report: one JSONL line per dropped or changed document, and --drop */
#ifndef OWT_DEDUP_REPORT_H
#define OWT_DEDUP_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "text/dedup.h"
#include "core/spill.h"
#include "core/util.h"

/*
 * The lines (owt-dedup(1), --report) start with the fields that name the
 * document (signature.h), then "stage", "reason" and what the stage
 * found. A duplicate names the kept document by its "kept" value: the
 * values of every kept document are kept in a spill file, not in memory.
 */
struct clean_doc;

struct dedup_report {
	struct spill refs;	/* the kept documents' "kept" values */
	uint64_t *at;		/* kept document k's offset in refs */
	size_t n, cap;
	struct buf val;		/* a "kept" value read back */
};

/* 0, or -1 with err and *code (the spill file in tmpdir). */
int dedup_report_open(struct dedup_report *r, const char *tmpdir, char *err,
    size_t errsize, int *code);
void dedup_report_close(struct dedup_report *r);
/* Kept document r->n: its "kept" value ref[0..n). 0, or -1 with err and *code. */
int dedup_report_keep(struct dedup_report *r, const char *ref, size_t n,
    char *err, size_t errsize, int *code);

/* {who,"stage":"fix","reason":"fixed","fixes":["fix_encoding",...]}, the TF_* bits of fixes. */
void dedup_report_fixed(struct buf *b, const char *who, size_t wholen,
    unsigned fixes);
/*
 * A dropped document d (named by who[0..wholen), d->who in the worker's
 * info): its stage, reason and what the stage found (lang: "lang",
 * "percent"; length: "chars", "tokens"; a duplicate: "kept", and
 * "similarity" unless sim < 0). A bad record (d->drop up to CLEAN_BADSIG)
 * is named by file_json and lineno, who being its message:
 * {"file":...,"line":...,"stage":"input","reason":...,"error":"msg"}.
 * 0, or -1 with err and *code (the kept value could not be read back).
 */
int dedup_report_drop(struct dedup_report *r, struct buf *b,
    const struct clean_doc *d, const char *who, const char *file_json,
    unsigned long lineno, long kept, double sim, char *err, size_t errsize,
    int *code);
/* decontam's line: {who,"stage":"decontam","reason":why,"ngrams":N,"pieces":N}. */
void dedup_report_decontam(struct buf *b, const char *who, size_t wholen,
    const char *why, unsigned long ngrams, size_t pieces);

/*
 * --drop: the names (signature_name_hash) of the documents a report
 * drops: every line but the fixes and the decontam cuts. Returns the
 * set (dedup_find_text), or NULL with err and *code.
 */
struct dedup *dedup_report_load_drop(const char *path, char *err,
    size_t errsize, int *code);

#endif
