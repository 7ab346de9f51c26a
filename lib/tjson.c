/* tjson.c - a tiny JSON reader for small documents: config.json, safetensors headers, trainer state */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tjson.h"
#include "util.h"

struct parser {
	const char *s, *p, *end;
	char *err;
	size_t errsize;
	int failed;
};

static int
fail(struct parser *ps, const char *what)
{
	if (!ps->failed)
		snprintf(ps->err, ps->errsize, "byte %zu: %s",
		    (size_t)(ps->p - ps->s) + 1, what);
	ps->failed = 1;
	return -1;
}

static void
skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
	    *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int
hex4(struct parser *ps, unsigned *u)
{
	int i;

	*u = 0;
	if (ps->end - ps->p < 4)
		return fail(ps, "truncated \\u escape");
	for (i = 0; i < 4; i++) {
		char c = *ps->p++;

		*u <<= 4;
		if (c >= '0' && c <= '9')
			*u |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*u |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*u |= (unsigned)(c - 'A' + 10);
		else
			return fail(ps, "bad \\u escape");
	}
	return 0;
}

static void
put_utf8(struct buf *b, unsigned u)
{
	if (u < 0x80) {
		buf_addc(b, (char)u);
	} else if (u < 0x800) {
		buf_addc(b, (char)(0xc0 | u >> 6));
		buf_addc(b, (char)(0x80 | (u & 0x3f)));
	} else if (u < 0x10000) {
		buf_addc(b, (char)(0xe0 | u >> 12));
		buf_addc(b, (char)(0x80 | (u >> 6 & 0x3f)));
		buf_addc(b, (char)(0x80 | (u & 0x3f)));
	} else {
		buf_addc(b, (char)(0xf0 | u >> 18));
		buf_addc(b, (char)(0x80 | (u >> 12 & 0x3f)));
		buf_addc(b, (char)(0x80 | (u >> 6 & 0x3f)));
		buf_addc(b, (char)(0x80 | (u & 0x3f)));
	}
}

/* A string literal at ps->p (the opening quote), decoded into a new string. */
static char *
string(struct parser *ps)
{
	struct buf b = { 0 };
	unsigned u, lo;

	ps->p++;
	buf_reserve(&b, 16);
	b.p[0] = '\0';
	for (;;) {
		if (ps->p >= ps->end) {
			fail(ps, "unterminated string");
			break;
		}
		if (*ps->p == '"') {
			ps->p++;
			return b.p;
		}
		if ((unsigned char)*ps->p < 0x20) {
			fail(ps, "control character in string");
			break;
		}
		if (*ps->p != '\\') {
			buf_addc(&b, *ps->p++);
			continue;
		}
		if (++ps->p >= ps->end) {
			fail(ps, "unterminated string");
			break;
		}
		switch (*ps->p++) {
		case '"': buf_addc(&b, '"'); break;
		case '\\': buf_addc(&b, '\\'); break;
		case '/': buf_addc(&b, '/'); break;
		case 'b': buf_addc(&b, '\b'); break;
		case 'f': buf_addc(&b, '\f'); break;
		case 'n': buf_addc(&b, '\n'); break;
		case 'r': buf_addc(&b, '\r'); break;
		case 't': buf_addc(&b, '\t'); break;
		case 'u':
			if (hex4(ps, &u) < 0)
				goto bad;
			if (u >= 0xd800 && u < 0xdc00) {
				if (ps->end - ps->p < 2 || ps->p[0] != '\\' ||
				    ps->p[1] != 'u') {
					fail(ps, "lone surrogate");
					goto bad;
				}
				ps->p += 2;
				if (hex4(ps, &lo) < 0)
					goto bad;
				if (lo < 0xdc00 || lo >= 0xe000) {
					fail(ps, "lone surrogate");
					goto bad;
				}
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
			} else if (u >= 0xdc00 && u < 0xe000) {
				fail(ps, "lone surrogate");
				goto bad;
			}
			put_utf8(&b, u);
			break;
		default:
			fail(ps, "bad escape");
			goto bad;
		}
	}
bad:
	buf_free(&b);
	return NULL;
}

static int value(struct parser *ps, struct tjson *v, int depth);

static int
number(struct parser *ps, struct tjson *v)
{
	const char *q = ps->p;
	char tmp[64], *end;

	if (q < ps->end && *q == '-')
		q++;
	if (q >= ps->end || *q < '0' || *q > '9')
		return fail(ps, "invalid value");
	if (*q == '0')
		q++;
	else
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	if (q < ps->end && *q == '.') {
		if (++q >= ps->end || *q < '0' || *q > '9')
			return fail(ps, "bad number");
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < ps->end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < ps->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= ps->end || *q < '0' || *q > '9')
			return fail(ps, "bad number");
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	if ((size_t)(q - ps->p) >= sizeof tmp)
		return fail(ps, "number too long");
	memcpy(tmp, ps->p, (size_t)(q - ps->p));
	tmp[q - ps->p] = '\0';
	v->type = TJ_NUMBER;
	v->num = strtod(tmp, &end);
	ps->p = q;
	return 0;
}

static int
word(struct parser *ps, const char *w, size_t n)
{
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
		return fail(ps, "invalid value");
	ps->p += n;
	return 0;
}

/* The members of an array or object, after its opening bracket. */
static int
members(struct parser *ps, struct tjson *v, int obj, int depth)
{
	size_t cap = 0;
	struct tjson *k;

	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
		ps->p++;
		return 0;
	}
	for (;;) {
		v->kids = xgrow(v->kids, &cap, v->nkids + 1, sizeof *v->kids);
		k = &v->kids[v->nkids++];
		memset(k, 0, sizeof *k);
		skip_ws(ps);
		if (obj) {
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, "expected a member name");
			if ((k->key = string(ps)) == NULL)
				return -1;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':')
				return fail(ps, "expected ':'");
			ps->p++;
		}
		if (value(ps, k, depth + 1) < 0)
			return -1;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
			ps->p++;
			return 0;
		}
		return fail(ps, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int
value(struct parser *ps, struct tjson *v, int depth)
{
	if (depth > 64)
		return fail(ps, "nested too deeply");
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, "unexpected end");
	switch (*ps->p) {
	case '{':
		ps->p++;
		v->type = TJ_OBJECT;
		return members(ps, v, 1, depth);
	case '[':
		ps->p++;
		v->type = TJ_ARRAY;
		return members(ps, v, 0, depth);
	case '"':
		v->type = TJ_STRING;
		return (v->str = string(ps)) == NULL ? -1 : 0;
	case 't':
		v->type = TJ_BOOL;
		v->num = 1;
		return word(ps, "true", 4);
	case 'f':
		v->type = TJ_BOOL;
		return word(ps, "false", 5);
	case 'n':
		v->type = TJ_NULL;
		return word(ps, "null", 4);
	default:
		return number(ps, v);
	}
}

static void
free_kids(struct tjson *v)
{
	size_t i;

	for (i = 0; i < v->nkids; i++) {
		free_kids(&v->kids[i]);
		free(v->kids[i].key);
		free(v->kids[i].str);
	}
	free(v->kids);
}

struct tjson *
tjson_parse(const char *s, size_t len, char *err, size_t errsize)
{
	struct parser ps = { s, s, s + len, err, errsize, 0 };
	struct tjson *v = xcalloc(1, sizeof *v);

	if (value(&ps, v, 0) == 0) {
		skip_ws(&ps);
		if (ps.p == ps.end)
			return v;
		fail(&ps, "trailing characters");
	}
	tjson_free(v);
	return NULL;
}

const struct tjson *
tjson_get(const struct tjson *v, const char *key)
{
	size_t i;

	if (v == NULL || v->type != TJ_OBJECT)
		return NULL;
	for (i = 0; i < v->nkids; i++)
		if (strcmp(v->kids[i].key, key) == 0)
			return &v->kids[i];
	return NULL;
}

void
tjson_free(struct tjson *v)
{
	if (v == NULL)
		return;
	free_kids(v);
	free(v->str);
	free(v);
}
