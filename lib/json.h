/* json.h - JSON on yajl: small documents as a tree, and string literals */
#ifndef OWT_JSON_H
#define OWT_JSON_H

#include <stddef.h>

#include "buf.h"

/* The kinds of value, in documents and in records (jsonl.h). */
enum { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_MAP, JV_ARRAY };

/*
 * A small whole document (config.json, trainer_state.json, a safetensors
 * header) as a tree. Records, which stream, are jsonl.h's.
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
/* The first member key of an object, or NULL (also when v is not an object). */
const struct json_val *json_doc_get(const struct json_val *v, const char *key);
void json_doc_free(struct json_val *v);

/* Append s[0..n) as a JSON string literal (UTF-8 kept, controls escaped). */
void json_string(struct buf *b, const char *s, size_t n);

#endif
