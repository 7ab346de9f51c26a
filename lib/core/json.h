/* json.h - JSON on yajl: records, small documents as a tree, and the one writer */
#ifndef OWT_JSON_H
#define OWT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* The kinds of value, in records and in documents. */
enum { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_MAP, JV_ARRAY };

/* One member of a record's top-level object. */
struct json_field {
	const char *key;	/* decoded, NUL-terminated */
	size_t klen;
	size_t vstart, vend;	/* the raw value is line[vstart, vend) */
	int type;		/* JV_* */
	const char *str;	/* decoded string value, NUL-terminated, for */
	size_t slen;		/* the keys asked for (else NULL) */
	size_t koff, soff;	/* arena offsets while parsing */
};

/*
 * A record: one JSON object, as a JSONL line holds (jsonl.h reads them
 * from files). line points at the caller's bytes (not owned), with
 * surrounding whitespace trimmed. The keys listed in want have their
 * string values decoded into str/slen; every other value is only a span
 * of the raw line, which the writer copies byte for byte.
 */
struct json_rec {
	const char *line;
	size_t len;
	struct json_field *f;
	size_t nf, fcap;
	struct buf arena;
	const char *const *want;
	size_t nwant;
};

void json_rec_init(struct json_rec *r, const char *const *want, size_t nwant);
void json_rec_free(struct json_rec *r);

/*
 * Parse one line (no '\n') as a JSON object. Returns 0, or a BAD_* reason
 * of input.h (BAD_EMPTYLINE, BAD_UTF8, BAD_JSON, BAD_NOTOBJECT) with a
 * description ("invalid JSON: ... at byte N") in err.
 */
int json_rec_parse(struct json_rec *r, const char *line, size_t len,
    char *err, size_t errsize);

/* The member named key (the last one if it repeats), or NULL. */
const struct json_field *json_rec_get(const struct json_rec *r, const char *key);

/*
 * The decoded string value of key, which must be one of the wanted keys.
 * NULL when it is missing (*why = "missing") or not a string
 * (*why = "not a string").
 */
const char *json_rec_str(const struct json_rec *r, const char *key, size_t *len,
    const char **why);
/*
 * json_rec_str for a field the program needs: NULL with "missing 'KEY'
 * field" or "non-string 'KEY' field" in err, the message of every
 * BAD_FIELD record (the caller puts FILE:LINE before it). json_field_bad
 * writes that message for f, json_rec_get's answer (NULL: missing).
 */
const char *json_rec_text(const struct json_rec *r, const char *key,
    size_t *len, char *err, size_t errsize);
void json_field_bad(char *err, size_t errsize, const struct json_field *f,
    const char *key);

/* Replace the value of key, or add key at the end when the record lacks it. */
struct json_edit {
	const char *key;
	const char *json;	/* the new value as JSON text */
	size_t len;
};

/* Append r with the edits applied, and a '\n', to out. */
void json_rec_write(struct buf *out, const struct json_rec *r,
    const struct json_edit *ed, size_t ned);

/*
 * A small whole document (config.json, trainer_state.json, a safetensors
 * header) as a tree. Records, which stream, are json_rec's above.
 */
struct json_val {
	int type;		/* JV_* */
	double num;		/* JV_NUMBER; JV_BOOL: 0 or 1 */
	char *str;		/* JV_STRING: decoded UTF-8, NUL-terminated */
	char *key;		/* the member name, inside an object */
	struct json_val *kids;	/* JV_ARRAY, JV_MAP: members in order */
	size_t nkids;
};

/*
 * The tree of s[0..len) (need not be NUL-terminated; any value at the
 * top; at most 64 levels of nesting), or NULL with err "byte N: what is
 * wrong" and *code XDATA. At a premature end the words say what was
 * expected ("byte 14: expected ',' or '}'"); UTF-16 surrogate escapes
 * must come in pairs, as in records.
 */
struct json_val *json_doc_parse(const char *s, size_t len, char *err,
    size_t errsize, int *code);
/*
 * 1 (the default): json_doc_parse reads strict JSON by its own fast
 * reader, yajl only what that one does not take (and the errors); 0:
 * yajl reads all (for the tests that compare the two).
 */
extern int json_doc_fast;
/* The first member key of an object, or NULL (also when v is not an object). */
const struct json_val *json_doc_get(const struct json_val *v, const char *key);
/* The tree json_doc_parse or json_doc_load gave (its top value), freed. */
void json_doc_free(struct json_val *v);
/*
 * The JSON object in the file at path (config.json and its kind), or
 * NULL with "PATH: no such file", "PATH: byte N: ...", "PATH: not a JSON
 * object" (XDATA) or input_read_file's message (XSYS).
 */
struct json_val *json_doc_load(const char *path, char *err, size_t errsize,
    int *code);

/*
 * Flags of json_string_as, and of a writer's style (JSON_SPACED | JSON_ASCII).
 *	JSON_ASCII	every character outside printable ASCII as \uXXXX,
 *			lower-case, a surrogate pair above U+FFFF: Python's
 *			json.dumps (ensure_ascii); an invalid UTF-8 sequence
 *			is U+FFFD, as under JSON_LOSSY
 *	JSON_LOSSY	each invalid UTF-8 sequence written as U+FFFD
 */
enum { JSON_ASCII = 4, JSON_LOSSY = 8 };

/*
 * Append s[0..n) as a JSON string literal: '"', '\\' and controls
 * escaped, UTF-8 kept unless flags say otherwise. The one escaper.
 */
void json_string_as(struct buf *b, const char *s, size_t n, int flags);
/* json_string_as with flags 0, and with JSON_LOSSY */
void json_string(struct buf *b, const char *s, size_t n);
void json_string_lossy(struct buf *b, const char *s, size_t n);
/* ids as an array: "[1, 2, 3]". */
void json_ids(struct buf *b, const uint32_t *ids, size_t n);

/*
 * The writer: values appended to a buf, separators and indentation by
 * style. Objects and arrays nest to at most 63 levels.
 *	JSON_COMPACT	{"a":1,"b":[1,2]}		records, headers
 *	JSON_SPACED	{"a": 1, "b": [1, 2]}		log rows
 *	JSON_PRETTY	one member a line, indented by two spaces a level;
 *			arrays, and what they hold, inline as in SPACED
 *			(config.json's "architectures": ["GPT2LMHeadModel"])
 * A style may add JSON_ASCII and JSON_LOSSY: keys and strings escaped as
 * json_string_as does with them. Inside an object each value follows its json_w_key. No
 * newline is written after the top-level value.
 */
enum { JSON_COMPACT, JSON_SPACED, JSON_PRETTY };

struct json_w {
	struct buf *b;
	int style;		/* JSON_COMPACT, SPACED or PRETTY */
	int flags;		/* JSON_ASCII, JSON_LOSSY */
	int depth;		/* open objects and arrays */
	int inl;		/* PRETTY: the outer open array's depth, or 0 */
	int afterkey;		/* a key was written; its value comes next */
	uint64_t more;		/* bit d: level d has a member already */
	uint64_t arr;		/* bit d: level d is an array */
};

void json_w_init(struct json_w *w, struct buf *b, int style);
/*
 * A writer for members added to an object that b holds open and that
 * has members already: the first key gets its ','. End nothing with it.
 */
void json_w_within(struct json_w *w, struct buf *b, int style);
/*
 * A writer for members of an object that has none yet, whose '{' the
 * caller writes (or has written) and whose '}' too. End nothing with it.
 */
void json_w_members(struct json_w *w, struct buf *b, int style);
/*
 * A writer for one value that another writer of the same style puts
 * at depth (its key written there), as text: JSON_PRETTY indents it as
 * if that writer wrote it.
 */
void json_w_nested(struct json_w *w, struct buf *b, int style, int depth);
void json_w_obj(struct json_w *w);
void json_w_arr(struct json_w *w);
void json_w_end(struct json_w *w);
void json_w_key(struct json_w *w, const char *key);
void json_w_str(struct json_w *w, const char *s, size_t n);
void json_w_strz(struct json_w *w, const char *s);	/* NUL-terminated */
/* A member: its key, then the value (json_w_strz, json_w_int, json_w_u64). */
void json_w_kstr(struct json_w *w, const char *key, const char *s);
void json_w_kint(struct json_w *w, const char *key, long long v);
void json_w_ku64(struct json_w *w, const char *key, uint64_t v);
/* A number by fmt ("%.9g", "%.17g"); one that is not finite as null. */
void json_w_num(struct json_w *w, const char *fmt, double v);
void json_w_u64(struct json_w *w, uint64_t v);
void json_w_int(struct json_w *w, long long v);
void json_w_bool(struct json_w *w, int v);
void json_w_null(struct json_w *w);
/* A value already written as JSON text, copied as it is. */
void json_w_raw(struct json_w *w, const char *json, size_t n);
/* Members as JSON text ("\"a\":1,\"b\":2"), added to the open object. */
void json_w_raw_members(struct json_w *w, const char *json, size_t n);

#endif
