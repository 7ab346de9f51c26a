/* json.c - JSON on yajl: small documents as a tree, and the one writer */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "json.h"
#include "utf8.h"
#include "util.h"

/* ---- documents ---- */

#define DOC_MAXDEPTH 64

struct dctx {
	const char *s;
	size_t len;
	yajl_handle h;
	struct json_val *root;
	struct json_val *open[DOC_MAXDEPTH];	/* open objects and arrays */
	size_t cap[DOC_MAXDEPTH];		/* their kids' capacity */
	int depth;
	char *key;		/* the member name whose value comes next */
	int finishing;		/* in yajl_complete_parse: no offsets */
	size_t end;		/* where the last token seen ended */
	size_t topend;		/* where the top value ended, or SIZE_MAX */
	const char *why;	/* why a callback stopped the parse */
	size_t whyat;
};

static void
mark(struct dctx *c)
{
	c->end = c->finishing ? c->len : yajl_get_bytes_consumed(c->h);
	if (c->depth == 0)
		c->topend = c->end;
}

/* A new value in the open container (or the top), of type t. */
static struct json_val *
add(struct dctx *c, int t)
{
	struct json_val *p, *v;

	if (c->depth == 0) {
		v = c->root = xcalloc(1, sizeof *v);
	} else {
		p = c->open[c->depth - 1];
		p->kids = xgrow(p->kids, &c->cap[c->depth - 1], p->nkids + 1,
		    sizeof *p->kids);
		v = &p->kids[p->nkids++];
		memset(v, 0, sizeof *v);
		v->key = c->key;
		c->key = NULL;
	}
	v->type = t;
	return v;
}

static int
scalar(struct dctx *c, int t, double num)
{
	add(c, t)->num = num;
	mark(c);
	return 1;
}

static int
cb_null(void *ctx)
{
	return scalar(ctx, JV_NULL, 0);
}

static int
cb_bool(void *ctx, int b)
{
	return scalar(ctx, JV_BOOL, b != 0);
}

static int
cb_number(void *ctx, const char *s, size_t n)
{
	char tmp[64], *p = n < sizeof tmp ? tmp : xmalloc(n + 1);
	double v;

	memcpy(p, s, n);
	p[n] = '\0';
	v = strtod(p, NULL);
	if (p != tmp)
		free(p);
	return scalar(ctx, JV_NUMBER, v);
}

static int
cb_string(void *ctx, const unsigned char *s, size_t n)
{
	struct dctx *c = ctx;

	add(c, JV_STRING)->str = xstrndup((const char *)s, n);
	mark(c);
	return 1;
}

static int
cb_key(void *ctx, const unsigned char *s, size_t n)
{
	struct dctx *c = ctx;

	c->key = xstrndup((const char *)s, n);
	mark(c);
	return 1;
}

static int
cb_start(struct dctx *c, int t)
{
	if (c->depth == DOC_MAXDEPTH) {
		c->why = "nested too deeply";
		c->whyat = yajl_get_bytes_consumed(c->h) - 1;
		return 0;
	}
	c->open[c->depth] = add(c, t);
	c->cap[c->depth++] = 0;
	mark(c);
	return 1;
}

static int
cb_start_map(void *ctx)
{
	return cb_start(ctx, JV_MAP);
}

static int
cb_start_array(void *ctx)
{
	return cb_start(ctx, JV_ARRAY);
}

static int
cb_end(void *ctx)
{
	struct dctx *c = ctx;

	c->depth--;
	mark(c);
	return 1;
}

static const yajl_callbacks doc_callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_key, cb_end, cb_start_array, cb_end
};

static int
hex4(const char *s)
{
	int i, v = 0, d;

	for (i = 0; i < 4; i++) {
		d = (unsigned char)s[i];
		if (d >= '0' && d <= '9')
			d -= '0';
		else if (d >= 'a' && d <= 'f')
			d -= 'a' - 10;
		else if (d >= 'A' && d <= 'F')
			d -= 'A' - 10;
		else
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/*
 * The offset of a \u escape of a UTF-16 surrogate without its pair, or
 * SIZE_MAX. yajl turns a lone high surrogate into '?' and a lone low one
 * into invalid UTF-8; records refuse both (jsonl.c), and so do documents.
 * A backslash outside a string is yajl's error, found after this.
 */
static size_t
lone_surrogate(const char *s, size_t n)
{
	const char *p = s, *end = s + n;
	int u, v;

	while (p < end && (p = memchr(p, '\\', (size_t)(end - p))) != NULL) {
		if (end - p < 6 || p[1] != 'u') {
			p += 2;
			continue;
		}
		u = hex4(p + 2);
		if (u >= 0xdc00 && u <= 0xdfff)
			return (size_t)(p - s);
		if (u >= 0xd800 && u <= 0xdbff) {
			v = end - p >= 12 && p[6] == '\\' && p[7] == 'u' ?
			    hex4(p + 8) : -1;
			if (v < 0xdc00 || v > 0xdfff)
				return (size_t)(p - s);
			p += 6;
		}
		p += 6;
	}
	return SIZE_MAX;
}

static int
is_ws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* The start of the token after the last one seen, past one ',' or ':'. */
static size_t
next_token(const struct dctx *c)
{
	size_t i = c->end;

	while (i < c->len && is_ws(c->s[i]))
		i++;
	if (i < c->len && (c->s[i] == ',' || c->s[i] == ':'))
		for (i++; i < c->len && is_ws(c->s[i]); i++)
			;
	return i;
}

/* What a document cut short lacks, from where the parse stood. */
static const char *
expected(const struct dctx *c)
{
	const struct json_val *p;
	size_t i = c->len;

	if (next_token(c) < c->len && c->s[next_token(c)] == '"')
		return "unterminated string";
	while (i > 0 && is_ws(c->s[i - 1]))
		i--;
	if (c->depth == 0)
		return "expected a value";
	p = c->open[c->depth - 1];
	if (p->type == JV_ARRAY)
		return c->s[i - 1] == '[' || c->s[i - 1] == ',' ?
		    "expected a value" : "expected ',' or ']'";
	if (c->key != NULL)
		return c->s[i - 1] == ':' ? "expected a value" : "expected ':'";
	return c->s[i - 1] == '{' || c->s[i - 1] == ',' ?
	    "expected a member name" : "expected ',' or '}'";
}

struct json_val *
json_doc_parse(const char *s, size_t len, char *err, size_t errsize,
    int *code)
{
	struct dctx c;
	yajl_status st;
	unsigned char *msg = NULL;
	const char *what;
	size_t at, n;

	memset(&c, 0, sizeof c);
	c.s = s;
	c.len = len;
	c.topend = SIZE_MAX;
	if ((at = lone_surrogate(s, len)) != SIZE_MAX) {
		what = "unpaired UTF-16 surrogate escape";
		n = strlen(what);
		goto bad;
	}
	if ((c.h = yajl_alloc(&doc_callbacks, NULL, &c)) == NULL)
		owt_die(XSYS, "out of memory");
	st = yajl_parse(c.h, (const unsigned char *)s, len);
	if (st == yajl_status_ok) {
		c.finishing = 1;
		st = yajl_complete_parse(c.h);
	}
	if (st == yajl_status_ok) {
		at = c.topend;
		while (at < len && is_ws(s[at]))
			at++;
		if (at == len) {
			yajl_free(c.h);
			return c.root;
		}
		what = "trailing garbage";
		n = strlen(what);
		goto bad;
	}
	if (c.why != NULL) {
		at = c.whyat;
		what = c.why;
		n = strlen(what);
		goto bad;
	}
	msg = yajl_get_error(c.h, 0, (const unsigned char *)s, len);
	what = (const char *)msg;
	if (strncmp(what, "parse error: ", 13) == 0)
		what += 13;
	else if (strncmp(what, "lexical error: ", 15) == 0)
		what += 15;
	n = strcspn(what, ".\n");
	at = next_token(&c);
	if (c.finishing && strncmp(what, "premature EOF", n) == 0) {
		at = len;
		what = expected(&c);
		n = strlen(what);
	}
bad:
	snprintf(err, errsize, "byte %zu: %.*s", at + 1, (int)n, what);
	if (code != NULL)
		*code = XDATA;
	if (msg != NULL)
		yajl_free_error(c.h, msg);
	if (c.h != NULL)
		yajl_free(c.h);
	free(c.key);
	json_doc_free(c.root);
	return NULL;
}

const struct json_val *
json_doc_get(const struct json_val *v, const char *key)
{
	size_t i;

	if (v == NULL || v->type != JV_MAP)
		return NULL;
	for (i = 0; i < v->nkids; i++)
		if (strcmp(v->kids[i].key, key) == 0)
			return &v->kids[i];
	return NULL;
}

static void
free_kids(struct json_val *v)
{
	size_t i;

	for (i = 0; i < v->nkids; i++) {
		free_kids(&v->kids[i]);
		free(v->kids[i].key);
		free(v->kids[i].str);
	}
	free(v->kids);
}

void
json_doc_free(struct json_val *v)
{
	if (v == NULL)
		return;
	free_kids(v);
	free(v->str);
	free(v);
}

/* ---- strings ---- */

void
json_string(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0;
	unsigned char c;

	buf_reserve(b, n + 2);
	buf_addc(b, '"');
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		buf_add(b, s + run, i - run);
		run = i + 1;
		buf_addc(b, '\\');
		switch (c) {
		case '"': buf_addc(b, '"'); break;
		case '\\': buf_addc(b, '\\'); break;
		case '\n': buf_addc(b, 'n'); break;
		case '\t': buf_addc(b, 't'); break;
		case '\r': buf_addc(b, 'r'); break;
		case '\b': buf_addc(b, 'b'); break;
		case '\f': buf_addc(b, 'f'); break;
		default:
			buf_add(b, "u00", 3);
			buf_addc(b, hex[c >> 4]);
			buf_addc(b, hex[c & 15]);
		}
	}
	buf_add(b, s + run, n - run);
	buf_addc(b, '"');
}

void
json_string_lossy(struct buf *b, const char *s, size_t n)
{
	struct buf t = { 0 };
	size_t i = 0, k;

	if (utf8_valid(s, n) == n) {
		json_string(b, s, n);
		return;
	}
	while (i < n) {
		k = utf8_valid(s + i, n - i);
		buf_add(&t, s + i, k);
		if ((i += k) < n) {
			buf_adds(&t, "\357\277\275");
			while (++i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
				;
		}
	}
	json_string(b, t.p, t.len);
	buf_free(&t);
}

void
json_ids(struct buf *b, const uint32_t *ids, size_t n)
{
	size_t i;

	buf_addc(b, '[');
	for (i = 0; i < n; i++)
		buf_printf(b, "%s%" PRIu32, i ? ", " : "", ids[i]);
	buf_addc(b, ']');
}

/* ---- the writer ---- */

#define BIT(d) ((uint64_t)1 << ((d) & 63))

void
json_w_init(struct json_w *w, struct buf *b, int style)
{
	memset(w, 0, sizeof *w);
	w->b = b;
	w->style = style;
}

void
json_w_within(struct json_w *w, struct buf *b, int style)
{
	json_w_init(w, b, style);
	w->depth = 1;
	w->more = BIT(1);
}

/* Whether level d is written inline (SPACED's separators in PRETTY). */
static int
inline_at(const struct json_w *w, int d)
{
	return w->style != JSON_PRETTY || (w->inl > 0 && d >= w->inl);
}

static void
indent(struct json_w *w, int d)
{
	buf_addc(w->b, '\n');
	while (d-- > 0)
		buf_add(w->b, "  ", 2);
}

/* Before a key, or a value that has no key: the separator and indentation. */
static void
sep(struct json_w *w)
{
	int d = w->depth;

	if (w->afterkey) {
		w->afterkey = 0;
		return;
	}
	if (d == 0)
		return;
	if (w->more & BIT(d)) {
		buf_addc(w->b, ',');
		if (w->style == JSON_SPACED || (w->style == JSON_PRETTY &&
		    inline_at(w, d)))
			buf_addc(w->b, ' ');
	}
	w->more |= BIT(d);
	if (!inline_at(w, d))
		indent(w, d);
}

static void
w_open(struct json_w *w, char ch, int arr)
{
	sep(w);
	buf_addc(w->b, ch);
	w->depth++;
	w->more &= ~BIT(w->depth);
	if (arr) {
		w->arr |= BIT(w->depth);
		if (w->style == JSON_PRETTY && w->inl == 0)
			w->inl = w->depth;
	} else {
		w->arr &= ~BIT(w->depth);
	}
}

void
json_w_obj(struct json_w *w)
{
	w_open(w, '{', 0);
}

void
json_w_arr(struct json_w *w)
{
	w_open(w, '[', 1);
}

void
json_w_end(struct json_w *w)
{
	int d = w->depth;

	if (!inline_at(w, d) && (w->more & BIT(d)))
		indent(w, d - 1);
	buf_addc(w->b, w->arr & BIT(d) ? ']' : '}');
	if (w->inl == d)
		w->inl = 0;
	w->more &= ~BIT(d);
	w->depth--;
}

void
json_w_key(struct json_w *w, const char *key)
{
	sep(w);
	json_string(w->b, key, strlen(key));
	if (w->style == JSON_COMPACT)
		buf_addc(w->b, ':');
	else
		buf_add(w->b, ": ", 2);
	w->afterkey = 1;
}

void
json_w_str(struct json_w *w, const char *s, size_t n)
{
	sep(w);
	json_string(w->b, s, n);
}

void
json_w_strz(struct json_w *w, const char *s)
{
	json_w_str(w, s, strlen(s));
}

void
json_w_num(struct json_w *w, const char *fmt, double v)
{
	sep(w);
	if (!isfinite(v)) {
		buf_adds(w->b, "null");
		return;
	}
	buf_printf(w->b, fmt, v);
}

void
json_w_u64(struct json_w *w, uint64_t v)
{
	sep(w);
	buf_printf(w->b, "%" PRIu64, v);
}

void
json_w_int(struct json_w *w, long long v)
{
	sep(w);
	buf_printf(w->b, "%lld", v);
}

void
json_w_bool(struct json_w *w, int v)
{
	sep(w);
	buf_adds(w->b, v ? "true" : "false");
}

void
json_w_null(struct json_w *w)
{
	sep(w);
	buf_adds(w->b, "null");
}

void
json_w_raw(struct json_w *w, const char *json, size_t n)
{
	sep(w);
	buf_add(w->b, json, n);
}

void
json_w_raw_members(struct json_w *w, const char *json, size_t n)
{
	if (n == 0)
		return;
	sep(w);
	buf_add(w->b, json, n);
}
