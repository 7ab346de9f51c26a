/* jsonl.h - JSON Lines records: read (yajl), validate, pass through, edit, write */
#ifndef OWT_JSONL_H
#define OWT_JSONL_H

#include <stddef.h>

#include "input.h"
#include "json.h"
#include "util.h"

/* One member of the top-level object. */
struct jsonl_field {
	const char *key;	/* decoded, NUL-terminated */
	size_t klen;
	size_t vstart, vend;	/* the raw value is line[vstart, vend) */
	int type;		/* JV_* */
	const char *str;	/* decoded string value, NUL-terminated, for */
	size_t slen;		/* the keys asked for (else NULL) */
	size_t koff, soff;	/* arena offsets while parsing */
};

/*
 * A parsed line. line points at the caller's bytes (not owned), with
 * surrounding whitespace trimmed. The keys listed in want have their
 * string values decoded into str/slen; every other value is only a span
 * of the raw line, which the writer copies byte for byte.
 */
struct jsonl_rec {
	const char *line;
	size_t len;
	struct jsonl_field *f;
	size_t nf, fcap;
	struct buf arena;
	const char *const *want;
	size_t nwant;
};

void jsonl_rec_init(struct jsonl_rec *r, const char *const *want, size_t nwant);
void jsonl_rec_free(struct jsonl_rec *r);

/*
 * Parse one line (no '\n') as a JSON object. Returns 0, or a BAD_* reason
 * (BAD_EMPTYLINE, BAD_UTF8, BAD_JSON, BAD_NOTOBJECT) with a description
 * ("invalid JSON: ... at byte N") in err.
 */
int jsonl_parse(struct jsonl_rec *r, const char *line, size_t len,
    char *err, size_t errsize);

/* The member named key (the last one if it repeats), or NULL. */
const struct jsonl_field *jsonl_get(const struct jsonl_rec *r, const char *key);

/*
 * The decoded string value of key, which must be one of the wanted keys.
 * NULL when it is missing (*why = "missing") or not a string
 * (*why = "not a string").
 */
const char *jsonl_str(const struct jsonl_rec *r, const char *key, size_t *len,
    const char **why);

/* Replace the value of key, or add key at the end when the record lacks it. */
struct jsonl_edit {
	const char *key;
	const char *json;	/* the new value as JSON text */
	size_t len;
};

/* Append r with the edits applied, and a '\n', to out. */
void jsonl_write(struct buf *out, const struct jsonl_rec *r,
    const struct jsonl_edit *ed, size_t ned);

/* A reader over one input: lines, parsed, with FILE:LINE errors. */
struct jsonl {
	struct input in;
	struct jsonl_rec rec;
	int errcode;		/* XDATA or XSYS after an error */
	int reason;		/* BAD_* after an error */
	char err[OWT_ERRSIZE];	/* "FILE:LINE: what" */
};

/* 0, or -1 with j->err (the file could not be opened). */
int jsonl_open(struct jsonl *j, const char *path, const char *const *want,
    size_t nwant);
/*
 * The next record: 1 with *rec set (valid until the next call), 0 at the
 * end, -1 on an error (j->err, j->errcode). After an XDATA error the
 * next call continues with the following line.
 */
int jsonl_next(struct jsonl *j, struct jsonl_rec **rec);
void jsonl_close(struct jsonl *j);

#endif
