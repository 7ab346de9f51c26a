/* tjson.h - a tiny JSON reader for small documents: config.json, safetensors headers, trainer state */
#ifndef OWT_TJSON_H
#define OWT_TJSON_H

#include <stddef.h>

/*
 * The model library reads JSON with this instead of yajl, so that it
 * builds with libc alone (a GPU machine needs nothing else). Documents
 * are parsed whole into a tree; nesting is limited to 64 levels.
 */
enum { TJ_NULL, TJ_BOOL, TJ_NUMBER, TJ_STRING, TJ_ARRAY, TJ_OBJECT };

struct tjson {
	int type;
	double num;		/* TJ_NUMBER; TJ_BOOL: 0 or 1 */
	char *str;		/* TJ_STRING: decoded UTF-8, NUL-terminated */
	char *key;		/* the member name, inside an object */
	struct tjson *kids;	/* TJ_ARRAY, TJ_OBJECT: members in order */
	size_t nkids;
};

/* The tree, or NULL with err ("byte N: what is wrong"). */
struct tjson *tjson_parse(const char *s, size_t len, char *err, size_t errsize);
/* The member key of an object, or NULL (also when v is not an object). */
const struct tjson *tjson_get(const struct tjson *v, const char *key);
void tjson_free(struct tjson *v);

#endif
