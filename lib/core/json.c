/* json.c - JSON on yajl: small documents as a tree, and the one writer */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/input.h"
#include "core/json.h"
#include "core/utf8.h"
#include "core/util.h"

/* ---- records ---- */

struct pctx {
	struct json_rec *r;
	yajl_handle h;
	int depth;
	int top;		/* the top-level value was an object */
	int cur;		/* index of the member being parsed, or -1 */
	size_t end;		/* where the top-level object ended */
	const char *why;	/* reason a callback cancelled the parse */
};

void
json_rec_init(struct json_rec *r, const char *const *want, size_t nwant)
{
	memset(r, 0, sizeof *r);
	r->want = want;
	r->nwant = nwant;
}

void
json_rec_free(struct json_rec *r)
{
	free(r->f);
	buf_free(&r->arena);
	r->f = NULL;
	r->nf = r->fcap = 0;
}

static int
wanted(const struct json_rec *r, const char *key, size_t klen)
{
	size_t i;

	for (i = 0; i < r->nwant; i++)
		if (strlen(r->want[i]) == klen && memcmp(r->want[i], key, klen) == 0)
			return 1;
	return 0;
}

static size_t
consumed(struct pctx *c)
{
	return yajl_get_bytes_consumed(c->h);
}

static int
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The offset of the quote opening the string literal that closes at s[q]. */
static size_t
string_start(const char *s, size_t q)
{
	size_t i = q, b;

	while (i-- > 0) {
		if (s[i] != '"')
			continue;
		for (b = i; b > 0 && s[b - 1] == '\\'; b--)
			;
		if (((i - b) & 1) == 0)
			return i;
	}
	return 0;
}

static size_t
skip_ws_back(const char *s, size_t p)
{
	while (p > 0 && is_ws(s[p - 1]))
		p--;
	return p;
}

/*
 * Without wanted keys yajl gets no string callback, so it does not decode
 * strings; a member that saw no value callback holds a string, which ends
 * before the next key's ',' or the closing '}' at `next`.
 */
static void
close_member(struct pctx *c, size_t next)
{
	struct json_field *f;
	size_t p;

	if (c->cur < 0)
		return;
	f = &c->r->f[c->cur];
	if (f->type < 0) {
		f->type = JV_STRING;
		p = skip_ws_back(c->r->line, next);
		if (p > 0 && c->r->line[p - 1] == ',')
			p = skip_ws_back(c->r->line, p - 1);
		f->vend = p;
	}
	c->cur = -1;
}

/* A scalar or the start of a container: at depth 1 it is a member's value. */
static int
value(struct pctx *c, int type)
{
	struct json_field *f;

	if (c->depth == 0) {
		c->why = "not a JSON object";
		return 0;
	}
	if (c->depth == 1 && c->cur >= 0) {
		f = &c->r->f[c->cur];
		f->type = type;
		f->vend = consumed(c);
		if (type == JV_MAP || type == JV_ARRAY)
			f->vstart = f->vend - 1;
	}
	return 1;
}

static int
cb_null(void *ctx)
{
	return value(ctx, JV_NULL);
}

static int
cb_bool(void *ctx, int b)
{
	(void)b;
	return value(ctx, JV_BOOL);
}

static int
cb_number(void *ctx, const char *s, size_t n)
{
	(void)s;
	(void)n;
	return value(ctx, JV_NUMBER);
}

static int
cb_string(void *ctx, const unsigned char *s, size_t n)
{
	struct pctx *c = ctx;
	struct json_field *f;

	if (!value(c, JV_STRING))
		return 0;
	if (c->depth == 1 && c->cur >= 0) {
		f = &c->r->f[c->cur];
		if (wanted(c->r, c->r->arena.p + f->koff, f->klen)) {
			f->soff = c->r->arena.len;
			f->slen = n;
			buf_add(&c->r->arena, s, n);
			buf_addc(&c->r->arena, '\0');
		}
	}
	return 1;
}

static int
cb_start_map(void *ctx)
{
	struct pctx *c = ctx;

	if (c->depth == 0)
		c->top = 1;
	else if (!value(c, JV_MAP))
		return 0;
	c->depth++;
	return 1;
}

static int
cb_map_key(void *ctx, const unsigned char *key, size_t n)
{
	struct pctx *c = ctx;
	struct json_rec *r = c->r;
	struct json_field *f;
	size_t p;

	if (c->depth != 1)
		return 1;
	close_member(c, string_start(r->line, consumed(c) - 1));
	r->f = xgrow(r->f, &r->fcap, r->nf + 1, sizeof *r->f);
	f = &r->f[r->nf];
	memset(f, 0, sizeof *f);
	f->koff = r->arena.len;
	f->klen = n;
	f->soff = (size_t)-1;
	f->type = -1;
	buf_add(&r->arena, key, n);
	buf_addc(&r->arena, '\0');
	/* The value starts after the ':' and any whitespace. */
	p = consumed(c);
	while (p < r->len && r->line[p] != ':')
		p++;
	p++;
	while (p < r->len && strchr(" \t\r\n", r->line[p]))
		p++;
	f->vstart = p;
	c->cur = (int)r->nf++;
	return 1;
}

static int
cb_end(void *ctx)
{
	struct pctx *c = ctx;

	c->depth--;
	if (c->depth == 1 && c->cur >= 0)
		c->r->f[c->cur].vend = consumed(c);
	else if (c->depth == 0) {
		close_member(c, consumed(c) - 1);
		c->end = consumed(c);
	}
	return 1;
}

static int
cb_start_array(void *ctx)
{
	struct pctx *c = ctx;

	if (!value(c, JV_ARRAY))
		return 0;
	c->depth++;
	return 1;
}

static const yajl_callbacks callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_map_key, cb_end, cb_start_array, cb_end
};
static const yajl_callbacks callbacks_nostr = {
	cb_null, cb_bool, NULL, NULL, cb_number, NULL,
	cb_start_map, cb_map_key, cb_end, cb_start_array, cb_end
};

static int
hexval(const char *s)
{
	int i, v = 0, d;

	for (i = 0; i < 4; i++) {
		d = s[i];
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
 * One pass over a line: strict UTF-8, and \u escapes of UTF-16 surrogates
 * in pairs (yajl turns a lone high surrogate into '?' and a lone low one
 * into invalid UTF-8; neither is text). Returns 0, or BAD_UTF8 or BAD_JSON
 * with the offset of the fault in *at.
 */
static int
check_text(const char *str, size_t n, size_t *at)
{
	const unsigned char *s = (const unsigned char *)str;
	const uint64_t ones = 0x0101010101010101ULL, high = ones << 7;
	uint64_t w, x;
	size_t i = 0, k;
	int u, v;

	while (i < n) {
		/*
		 * Plain ASCII without a backslash goes 16 bytes at a time (8
		 * without SSE2), to the first byte that is neither (the lowest
		 * flagged byte of the zero-byte test is exact).
		 */
#ifdef __SSE2__
		while (i + 16 <= n) {
			__m128i c = _mm_loadu_si128((const __m128i *)(s + i));
			unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(c,
			    _mm_cmpeq_epi8(c, _mm_set1_epi8('\\'))));

			if (m != 0) {
				i += (size_t)__builtin_ctz(m);
				break;
			}
			i += 16;
		}
#endif
		/* the rest, or a flagged byte at once */
		while (i + 8 <= n) {
			memcpy(&w, s + i, 8);
			x = w ^ (ones * '\\');
			x = (w & high) | ((x - ones) & ~x & high);
			if (x) {
				i += (size_t)__builtin_ctzll(x) >> 3;
				break;
			}
			i += 8;
		}
		if (i >= n)
			break;
		if (s[i] == '\\') {
			if (i + 6 > n || s[i + 1] != 'u') {
				i += 2;
				continue;
			}
			u = hexval(str + i + 2);
			if (u >= 0xdc00 && u <= 0xdfff)
				goto badpair;
			if (u >= 0xd800 && u <= 0xdbff) {
				v = i + 12 <= n && s[i + 6] == '\\' &&
				    s[i + 7] == 'u' ? hexval(str + i + 8) : -1;
				if (v < 0xdc00 || v > 0xdfff)
					goto badpair;
				i += 6;
			}
			i += 6;
			continue;
		}
		/* Multi-byte characters in a row, as in most non-Latin text. */
		do {
			if ((k = utf8_seqlen(s + i, n - i)) == 0) {
				*at = i;
				return BAD_UTF8;
			}
			i += k;
		} while (i < n && s[i] >= 0x80);
	}
	return 0;
badpair:
	*at = i;
	return BAD_JSON;
}

/*
 * The fast path of json_rec_parse, for the common record: one flat object
 * whose values are strings, numbers, true, false or null, in strict JSON
 * with blanks, tabs, CRs and LFs between tokens. Its strings are checked
 * as they are read (strict UTF-8, \u escapes of surrogates in pairs), and
 * nothing outside them but ASCII is taken, so that a line it takes is one
 * check_text passes: the line is read once, not checked in a pass of its
 * own first (on 20 MB of text, 44% of its bytes not ASCII, that pass was
 * a third of the reader's time). It takes a subset of what yajl takes and
 * gives the same fields; on anything else (a nested value, other white
 * space, bad UTF-8, an error) it returns -1, and check_text and yajl read
 * the line, and say what is wrong.
 */

/*
 * The first byte of s[i..n) that is '"', '\\' or a control character, or
 * n, the bytes before it strict UTF-8 (PLAIN_BAD where they are not),
 * and copied to *o (when not NULL), which has room for them and moves past
 * them. Blocks of 16 bytes are stored whole before their end is known (*o
 * has room for 15 bytes more than it gets). The bytes found are checked
 * by utf8_valid, where any is not ASCII: checked a character at a time
 * here, they took most of the reader's time on text of other scripts.
 */
#define PLAIN_BAD ((size_t)-1)
static size_t
str_plain(const unsigned char *s, size_t i, size_t n, unsigned char **o)
{
	size_t k = i;
	unsigned hi = 0;
#ifdef __SSE2__
	const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	const __m128i ctl = _mm_set1_epi8(0x1f);
	__m128i x;
	unsigned sp;

	for (; k + 16 <= n; k += 16) {
		x = _mm_loadu_si128((const __m128i *)(s + k));
		if (*o != NULL)
			_mm_storeu_si128((__m128i *)(*o + (k - i)), x);
		sp = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(
		    _mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, bs)),
		    _mm_cmpeq_epi8(_mm_min_epu8(x, ctl), x)));
		hi |= (unsigned)_mm_movemask_epi8(x) &
		    (sp != 0 ? (1u << __builtin_ctz(sp)) - 1 : 0xffffu);
		if (sp != 0) {
			k += (size_t)__builtin_ctz(sp);
			goto out;
		}
	}
#endif
	for (; k < n && s[k] != '"' && s[k] != '\\' && s[k] >= 0x20; k++)
		hi |= s[k] & 0x80;
	if (*o != NULL)
		memcpy(*o, s + i, k - i);
#ifdef __SSE2__
out:
#endif
	if (hi != 0 && utf8_valid((const char *)s + i, k - i) != k - i)
		return PLAIN_BAD;
	if (*o != NULL)
		*o += k - i;
	return k;
}

/*
 * The string literal that opens at s[i]: *end is the offset after it, and
 * out, when not NULL, gets its value decoded and a NUL (not counted in
 * out->len). -1 when it is not one the fast path takes.
 */
static int
fast_string(const unsigned char *s, size_t n, size_t i, struct buf *out,
    size_t *end)
{
	unsigned char *o = NULL;
	size_t j;
	int u, v;
	uint32_t cp;

	if (out != NULL) {
		/* The value is never longer than the literal; str_plain's 15. */
		buf_reserve(out, n - i + 16);
		o = (unsigned char *)out->p + out->len;
	}
	for (i++;; i = j) {
		j = str_plain(s, i, n, &o);
		if (j == PLAIN_BAD || j + 1 >= n)
			return -1;
		if (s[j] == '"')
			break;
		if (s[j] != '\\')
			return -1;
		switch (s[j + 1]) {
		case '"': case '\\': case '/': cp = s[j + 1]; break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			if (j + 6 > n || (u = hexval((const char *)s + j + 2)) < 0 ||
			    (u >= 0xdc00 && u <= 0xdfff))
				return -1;
			cp = (uint32_t)u;
			if (u >= 0xd800 && u <= 0xdbff) {
				if (j + 12 > n || s[j + 6] != '\\' || s[j + 7] != 'u' ||
				    (v = hexval((const char *)s + j + 8)) < 0xdc00 ||
				    v > 0xdfff)
					return -1;
				cp = 0x10000 + ((uint32_t)(u - 0xd800) << 10) +
				    (uint32_t)(v - 0xdc00);
				j += 6;
			}
			j += 4;
			break;
		default:
			return -1;
		}
		j += 2;
		if (o == NULL)
			continue;
		if (cp < 0x80) {
			*o++ = (unsigned char)cp;
		} else if (cp < 0x800) {
			*o++ = (unsigned char)(0xc0 | cp >> 6);
			*o++ = (unsigned char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			*o++ = (unsigned char)(0xe0 | cp >> 12);
			*o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
			*o++ = (unsigned char)(0x80 | (cp & 0x3f));
		} else {
			*o++ = (unsigned char)(0xf0 | cp >> 18);
			*o++ = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
			*o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
			*o++ = (unsigned char)(0x80 | (cp & 0x3f));
		}
	}
	*end = j + 1;
	if (o != NULL) {
		*o = '\0';
		out->len = (size_t)(o - (unsigned char *)out->p);
	}
	return 0;
}

/* The offset after the JSON number at s[i], or 0 when there is none. */
static size_t
fast_number(const unsigned char *s, size_t n, size_t i)
{
#define DIGIT(k) ((k) < n && s[k] >= '0' && s[k] <= '9')
	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (DIGIT(i))
		while (DIGIT(i))
			i++;
	else
		return 0;
	if (i < n && s[i] == '.') {
		if (!DIGIT(i + 1))
			return 0;
		for (i++; DIGIT(i); i++)
			;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (!DIGIT(i))
			return 0;
		while (DIGIT(i))
			i++;
	}
	return i;
#undef DIGIT
}

static size_t
skip_ws(const unsigned char *s, size_t n, size_t i)
{
	while (i < n && is_ws((char)s[i]))
		i++;
	return i;
}

/* Parse r->line as json_rec_parse does; 0, or -1 for yajl to do it. */
static int
fast_parse(struct json_rec *r)
{
	const unsigned char *s = (const unsigned char *)r->line;
	struct json_field *f;
	size_t n = r->len, i, end, koff;

	if (s[0] != '{')
		return -1;
	i = skip_ws(s, n, 1);
	if (i < n && s[i] == '}')
		return i + 1 == n ? 0 : -1;
	for (;;) {
		koff = r->arena.len;
		if (i >= n || s[i] != '"' || fast_string(s, n, i, &r->arena, &end) < 0)
			return -1;
		r->arena.len++;		/* the key's NUL */
		i = skip_ws(s, n, end);
		if (i >= n || s[i] != ':')
			return -1;
		i = skip_ws(s, n, i + 1);
		if (i >= n)
			return -1;
		r->f = xgrow(r->f, &r->fcap, r->nf + 1, sizeof *r->f);
		f = &r->f[r->nf++];
		memset(f, 0, sizeof *f);
		f->koff = koff;
		f->klen = r->arena.len - koff - 1;
		f->soff = (size_t)-1;
		f->vstart = i;
		if (s[i] == '"') {
			f->type = JV_STRING;
			if (wanted(r, r->arena.p + koff, f->klen)) {
				f->soff = r->arena.len;
				if (fast_string(s, n, i, &r->arena, &end) < 0)
					return -1;
				f->slen = r->arena.len - f->soff;
				r->arena.len++;
			} else if (fast_string(s, n, i, NULL, &end) < 0) {
				return -1;
			}
		} else if ((end = fast_number(s, n, i)) != 0) {
			f->type = JV_NUMBER;
		} else if (n - i >= 4 && memcmp(s + i, "true", 4) == 0) {
			f->type = JV_BOOL;
			end = i + 4;
		} else if (n - i >= 5 && memcmp(s + i, "false", 5) == 0) {
			f->type = JV_BOOL;
			end = i + 5;
		} else if (n - i >= 4 && memcmp(s + i, "null", 4) == 0) {
			f->type = JV_NULL;
			end = i + 4;
		} else {
			return -1;
		}
		f->vend = end;
		i = skip_ws(s, n, end);
		if (i >= n)
			return -1;
		if (s[i] == '}')
			return i + 1 == n ? 0 : -1;
		if (s[i] != ',')
			return -1;
		i = skip_ws(s, n, i + 1);
	}
}

int
json_rec_parse(struct json_rec *r, const char *line, size_t len, char *err,
    size_t errsize)
{
	struct pctx c;
	yajl_status st;
	unsigned char *msg;
	size_t i, bad;
	int k;

	while (len > 0 && is_ws(line[len - 1]))
		len--;
	while (len > 0 && is_ws(*line)) {
		line++;
		len--;
	}
	r->line = line;
	r->len = len;
	r->nf = 0;
	r->arena.len = 0;
	if (len == 0) {
		owt_fail(err, errsize, NULL, XDATA, "empty line");
		return BAD_EMPTYLINE;
	}
	if (fast_parse(r) == 0)
		goto done;
	r->nf = 0;
	r->arena.len = 0;
	if ((k = check_text(line, len, &bad)) != 0) {
		owt_fail(err, errsize, NULL, XDATA, k == BAD_UTF8 ?
		    "invalid UTF-8 at byte %zu" :
		    "invalid JSON: unpaired UTF-16 surrogate escape at byte %zu",
		    bad + 1);
		return k;
	}
	memset(&c, 0, sizeof c);
	c.r = r;
	c.cur = -1;
	c.h = yajl_alloc(r->nwant > 0 ? &callbacks : &callbacks_nostr, NULL, &c);
	if (c.h == NULL)
		owt_fatal("out of memory");
	yajl_config(c.h, yajl_dont_validate_strings, 1);
	st = yajl_parse(c.h, (const unsigned char *)line, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(c.h);
	if (st != yajl_status_ok) {
		if (c.why != NULL) {
			owt_fail(err, errsize, NULL, XDATA, "%s", c.why);
			yajl_free(c.h);
			return BAD_NOTOBJECT;
		} else {
			msg = yajl_get_error(c.h, 0, (const unsigned char *)line, len);
			i = strcspn((char *)msg, ".\n");
			owt_fail(err, errsize, NULL, XDATA,
			    "invalid JSON: %.*s at byte %zu",
			    (int)i, msg, yajl_get_bytes_consumed(c.h) + 1);
			yajl_free_error(c.h, msg);
		}
		yajl_free(c.h);
		return BAD_JSON;
	}
	yajl_free(c.h);
	if (!c.top) {
		owt_fail(err, errsize, NULL, XDATA, "not a JSON object");
		return BAD_NOTOBJECT;
	}
	/* yajl waits for more input after a token cut short (`{}"x`). */
	if (c.end != len) {
		owt_fail(err, errsize, NULL, XDATA,
		    "invalid JSON: trailing garbage at byte %zu",
		    c.end + 1);
		return BAD_JSON;
	}
done:
	for (i = 0; i < r->nf; i++) {
		r->f[i].key = r->arena.p + r->f[i].koff;
		r->f[i].str = r->f[i].soff == (size_t)-1 ? NULL :
		    r->arena.p + r->f[i].soff;
	}
	return 0;
}

const struct json_field *
json_rec_get(const struct json_rec *r, const char *key)
{
	size_t i = r->nf, n = strlen(key);

	while (i-- > 0)
		if (r->f[i].klen == n && memcmp(r->f[i].key, key, n) == 0)
			return &r->f[i];
	return NULL;
}

const char *
json_rec_str(const struct json_rec *r, const char *key, size_t *len,
    const char **why)
{
	const struct json_field *f = json_rec_get(r, key);

	if (f == NULL) {
		*why = "missing";
		return NULL;
	}
	if (f->type != JV_STRING || f->str == NULL) {
		*why = f->type == JV_STRING ? "not decoded" : "not a string";
		return NULL;
	}
	*len = f->slen;
	return f->str;
}

const char *
json_rec_text(const struct json_rec *r, const char *key, size_t *len,
    char *err, size_t errsize)
{
	const char *why, *s;

	if ((s = json_rec_str(r, key, len, &why)) == NULL)
		json_field_bad(err, errsize, json_rec_get(r, key), key);
	return s;
}

void
json_field_bad(char *err, size_t errsize, const struct json_field *f,
    const char *key)
{
	owt_fail(err, errsize, NULL, XDATA, "%s '%s' field", f == NULL ?
	    "missing" : "non-string", key);
}

void
json_rec_write(struct buf *out, const struct json_rec *r,
    const struct json_edit *ed, size_t ned)
{
	const struct json_field *f;
	size_t i, j, pos = 0, end;
	int any = r->nf > 0;
	char *done = NULL, stackdone[16];

	if (ned == 0) {
		buf_reserve(out, r->len + 1);
		buf_add(out, r->line, r->len);
		buf_addc(out, '\n');
		return;
	}
	done = ned <= sizeof stackdone ? stackdone : xmalloc(ned);
	memset(done, 0, ned);
	/* Members in line order; replace the values of edited keys in place. */
	for (i = 0; i < r->nf; i++) {
		f = &r->f[i];
		for (j = 0; j < ned; j++)
			if (strlen(ed[j].key) == f->klen &&
			    memcmp(ed[j].key, f->key, f->klen) == 0)
				break;
		if (j == ned || json_rec_get(r, ed[j].key) != f)
			continue;
		buf_add(out, r->line + pos, f->vstart - pos);
		buf_add(out, ed[j].json, ed[j].len);
		pos = f->vend;
		done[j] = 1;
	}
	/* The rest of the line up to the closing brace, then new members. */
	end = r->len - 1;
	buf_add(out, r->line + pos, end - pos);
	for (j = 0; j < ned; j++) {
		if (done[j])
			continue;
		if (any)
			buf_addc(out, ',');
		json_string(out, ed[j].key, strlen(ed[j].key));
		buf_addc(out, ':');
		buf_add(out, ed[j].json, ed[j].len);
		any = 1;
	}
	buf_add(out, "}\n", 2);
	if (done != stackdone)
		free(done);
}

/* ---- documents ---- */

#define DOC_MAXDEPTH 64

/*
 * A tree's strings and member names, in blocks of DOC_BLOCK bytes or one
 * longer string each, freed with it: a malloc a string took 32 bytes for
 * each of a tokenizer.json's 500,000 short ones.
 */
#define DOC_BLOCK 65536
struct strblock {
	struct strblock *next;
	size_t used, size;
	_Alignas(16) char s[];
};

/*
 * The top value, with its tree's strings and its containers' members
 * (json_doc_free gets &v). A container's members are gathered in a
 * scratch array of its depth while it is open, and go to the blocks of
 * kids, exactly as many, when it closes: no allocation a container (a
 * tokenizer.json has 190,000 small ones), none freed one by one.
 */
struct doc_root {
	struct json_val v;
	struct strblock *strs;
	struct strblock *kids;
};

struct dctx {
	const char *s;
	size_t len;
	yajl_handle h;
	struct json_val *root;
	struct strblock *strs;	/* the strings so far, the newest block first */
	struct strblock *kids;	/* the closed containers' members' blocks */
	struct json_val *open[DOC_MAXDEPTH];	/* open objects and arrays */
	struct json_val *stk[DOC_MAXDEPTH];	/* their members so far */
	size_t cap[DOC_MAXDEPTH];		/* stk[]'s capacity */
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
	if (c->h == NULL)	/* fast_doc: no offsets (no error to place) */
		return;
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
		v = c->root = &((struct doc_root *)xcalloc(1,
		    sizeof(struct doc_root)))->v;
	} else {
		/* in the scratch of its depth, kept from container to container */
		p = c->open[c->depth - 1];
		c->stk[c->depth - 1] = xgrow(c->stk[c->depth - 1],
		    &c->cap[c->depth - 1], p->nkids + 1, sizeof *p->kids);
		v = &c->stk[c->depth - 1][p->nkids++];
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
doc_cb_null(void *ctx)
{
	return scalar(ctx, JV_NULL, 0);
}

static int
doc_cb_bool(void *ctx, int b)
{
	return scalar(ctx, JV_BOOL, b != 0);
}

static int
doc_cb_number(void *ctx, const char *s, size_t n)
{
	char tmp[64], *p;
	double v;
	uint64_t u = 0;
	size_t i = n > 0 && s[0] == '-';

	/*
	 * A whole number of up to 15 digits (a tokenizer.json's 128 K
	 * ids) is exact in a double: read here, not by strtod (a tenth of
	 * the parse).
	 */
	if (n > i && n - i <= 15) {
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			u = u * 10 + (uint64_t)(s[i] - '0');
		if (i == n)
			return scalar(ctx, JV_NUMBER, s[0] == '-' ? -(double)u :
			    (double)u);
	}
	p = n < sizeof tmp ? tmp : xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	v = strtod(p, NULL);
	if (p != tmp)
		free(p);
	return scalar(ctx, JV_NUMBER, v);
}

/*
 * n bytes at alignment align (a power of two, at most 16) in the blocks
 * of list, the newest first.
 */
static void *
doc_block(struct strblock **list, size_t n, size_t align)
{
	struct strblock *b = *list;
	size_t at = b == NULL ? 0 : (b->used + align - 1) & ~(align - 1);
	void *p;

	if (b == NULL || at > b->size || b->size - at < n) {
		size_t size = n + 16 > DOC_BLOCK ? n + 16 : DOC_BLOCK;

		if (size > SIZE_MAX - sizeof *b)
			owt_die(XSYS, "out of memory: a JSON document's %zu bytes",
			    n);
		b = xmalloc(sizeof *b + size);
		b->size = size;
		b->used = 0;
		at = 0;
		/* a long one's own block goes behind the one being filled */
		if (*list != NULL && size > DOC_BLOCK) {
			b->next = (*list)->next;
			(*list)->next = b;
		} else {
			b->next = *list;
			*list = b;
		}
	}
	p = b->s + at;
	b->used = at + n;
	return p;
}

/* s[0..n) and a NUL, in the tree's blocks. */
static char *
doc_str(struct dctx *c, const unsigned char *s, size_t n)
{
	char *p = doc_block(&c->strs, n + 1, 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static void
free_strs(struct strblock *b)
{
	struct strblock *next;

	for (; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
}

static int
doc_cb_string(void *ctx, const unsigned char *s, size_t n)
{
	struct dctx *c = ctx;
	char *str = doc_str(c, s, n);

	add(c, JV_STRING)->str = str;
	mark(c);
	return 1;
}

static int
doc_cb_key(void *ctx, const unsigned char *s, size_t n)
{
	struct dctx *c = ctx;

	c->key = doc_str(c, s, n);
	mark(c);
	return 1;
}

static int
doc_cb_start(struct dctx *c, int t)
{
	if (c->depth == DOC_MAXDEPTH) {
		c->why = "nested too deeply";
		c->whyat = yajl_get_bytes_consumed(c->h) - 1;
		return 0;
	}
	c->open[c->depth] = add(c, t);
	c->depth++;
	mark(c);
	return 1;
}

static int
doc_cb_start_map(void *ctx)
{
	return doc_cb_start(ctx, JV_MAP);
}

static int
doc_cb_start_array(void *ctx)
{
	return doc_cb_start(ctx, JV_ARRAY);
}

static int
doc_cb_end(void *ctx)
{
	struct dctx *c = ctx;
	struct json_val *p = c->open[--c->depth];

	/* its members, from the scratch to the kids' blocks */
	if (p->nkids > 0) {
		p->kids = doc_block(&c->kids, p->nkids * sizeof *p->kids,
		    _Alignof(struct json_val));
		memcpy(p->kids, c->stk[c->depth], p->nkids * sizeof *p->kids);
	}
	mark(c);
	return 1;
}

static const yajl_callbacks doc_callbacks = {
	doc_cb_null, doc_cb_bool, NULL, NULL, doc_cb_number, doc_cb_string,
	doc_cb_start_map, doc_cb_key, doc_cb_end, doc_cb_start_array, doc_cb_end
};

/*
 * The offset of a \u escape of a UTF-16 surrogate without its pair, or
 * SIZE_MAX. yajl turns a lone high surrogate into '?' and a lone low one
 * into invalid UTF-8; records refuse both (check_text), and so do documents.
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
		u = hexval(p + 2);
		if (u >= 0xdc00 && u <= 0xdfff)
			return (size_t)(p - s);
		if (u >= 0xd800 && u <= 0xdbff) {
			v = end - p >= 12 && p[6] == '\\' && p[7] == 'u' ?
			    hexval(p + 8) : -1;
			if (v < 0xdc00 || v > 0xdfff)
				return (size_t)(p - s);
			p += 6;
		}
		p += 6;
	}
	return SIZE_MAX;
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

/* c, empty, for a parse of s[0..len). */
static void
doc_begin(struct dctx *c, const char *s, size_t len)
{
	memset(c, 0, sizeof *c);
	c->s = s;
	c->len = len;
	c->topend = SIZE_MAX;
}

/* The parse's tree, its blocks given to it and the scratch freed. */
static struct json_val *
doc_done(struct dctx *c)
{
	struct doc_root *r = (struct doc_root *)c->root;
	int d;

	r->strs = c->strs;
	r->kids = c->kids;
	for (d = 0; d < DOC_MAXDEPTH; d++)
		free(c->stk[d]);
	return c->root;
}

/* All that a parse that failed (or gave up) built, freed. */
static void
doc_drop(struct dctx *c)
{
	int d;

	free(c->root);	/* its members are in the blocks */
	free_strs(c->strs);
	free_strs(c->kids);
	for (d = 0; d < DOC_MAXDEPTH; d++)
		free(c->stk[d]);
}

/* json.h: the reader below on (1) or off (0, yajl alone: for the tests) */
int json_doc_fast = 1;

/*
 * The tree of s[0..n) by the callbacks above, without yajl (whose lexer
 * took half of a tokenizer.json's load): strict JSON, strings by
 * fast_string (strict UTF-8, surrogate escapes in pairs), numbers by
 * fast_number; 0 with c->root filled, or -1 at anything else, a fault
 * or a string fast_string does not take (the caller frees what was
 * built and yajl reads the text, and says what is wrong). The same
 * calls in the same order as yajl's make the same tree (unit-json
 * compares them on random documents). A string's value is decoded into
 * a scratch buffer first (fast_string keeps room there for the rest of
 * the text: once, the size of the document).
 */
static int
fast_doc(struct dctx *c, const unsigned char *s, size_t n)
{
	struct buf str = { 0 };
	uint8_t map[DOC_MAXDEPTH];	/* each open container: an object? */
	size_t i = 0, end;
	int d = 0, rc = -1;

	for (;;) {
		/* a value at i */
		i = skip_ws(s, n, i);
		if (i >= n)
			goto out;
		if (s[i] == '{' || s[i] == '[') {
			if (d == DOC_MAXDEPTH)
				goto out;
			map[d++] = s[i] == '{';
			if (s[i] == '{')
				doc_cb_start_map(c);
			else
				doc_cb_start_array(c);
			i = skip_ws(s, n, i + 1);
			if (i < n && s[i] == (map[d - 1] ? '}' : ']')) {
				doc_cb_end(c);
				d--;
				i++;
				goto after;
			}
			if (map[d - 1])
				goto key;
			continue;
		}
		if (s[i] == '"') {
			str.len = 0;
			if (fast_string(s, n, i, &str, &end) < 0)
				goto out;
			doc_cb_string(c, (const unsigned char *)str.p, str.len);
			i = end;
		} else if (n - i >= 4 && memcmp(s + i, "true", 4) == 0) {
			doc_cb_bool(c, 1);
			i += 4;
		} else if (n - i >= 5 && memcmp(s + i, "false", 5) == 0) {
			doc_cb_bool(c, 0);
			i += 5;
		} else if (n - i >= 4 && memcmp(s + i, "null", 4) == 0) {
			doc_cb_null(c);
			i += 4;
		} else if ((end = fast_number(s, n, i)) != 0) {
			doc_cb_number(c, (const char *)s + i, end - i);
			i = end;
		} else
			goto out;
after:
		/* after a value: the end, a comma, or its container's end */
		i = skip_ws(s, n, i);
		if (d == 0) {
			rc = i == n ? 0 : -1;
			goto out;
		}
		if (i < n && s[i] == ',') {
			i++;
			if (map[d - 1])
				goto key;
			continue;
		}
		if (i < n && s[i] == (map[d - 1] ? '}' : ']')) {
			doc_cb_end(c);
			d--;
			i++;
			goto after;
		}
		goto out;
key:
		/* a member's name and its colon */
		i = skip_ws(s, n, i);
		str.len = 0;
		if (i >= n || s[i] != '"' || fast_string(s, n, i, &str, &end) < 0)
			goto out;
		doc_cb_key(c, (const unsigned char *)str.p, str.len);
		i = skip_ws(s, n, end);
		if (i >= n || s[i] != ':')
			goto out;
		i++;
	}
out:
	buf_free(&str);
	return rc;
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

	doc_begin(&c, s, len);
	if ((at = lone_surrogate(s, len)) != SIZE_MAX) {
		what = "unpaired UTF-16 surrogate escape";
		n = strlen(what);
		goto bad;
	}
	if (json_doc_fast) {
		if (fast_doc(&c, (const unsigned char *)s, len) == 0)
			return doc_done(&c);
		doc_drop(&c);
		doc_begin(&c, s, len);
	}
	if ((c.h = yajl_alloc(&doc_callbacks, NULL, &c)) == NULL)
		owt_fatal("out of memory");
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
			return doc_done(&c);
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
	owt_fail(err, errsize, NULL, XDATA,
	    "byte %zu: %.*s", at + 1, (int)n, what);
	if (code != NULL)
		*code = XDATA;
	if (msg != NULL)
		yajl_free_error(c.h, msg);
	if (c.h != NULL)
		yajl_free(c.h);
	doc_drop(&c);
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

void
json_doc_free(struct json_val *v)
{
	struct doc_root *r = (struct doc_root *)v;

	if (v == NULL)
		return;
	free_strs(r->strs);
	free_strs(r->kids);
	free(r);
}

/* ---- strings ---- */

/* The code point of the valid UTF-8 sequence u[0..k) */
static uint32_t
decode(const unsigned char *u, size_t k)
{
	uint32_t cp = k == 1 ? u[0] : u[0] & (0x7f >> k);
	size_t j;

	for (j = 1; j < k; j++)
		cp = cp << 6 | (u[j] & 0x3f);
	return cp;
}

/*
 * The quoted, escaped string s[0..n) of valid UTF-8 (ascii: \u escapes
 * above 0x7e). Inlined with ascii a constant, so that the common loop
 * tests only what it needs.
 */
static inline __attribute__((always_inline)) void
escape(struct buf *b, const char *s, size_t n, int ascii)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i, k, run = 0;
	uint32_t cp;

	buf_reserve(b, n + 2);
	buf_addc(b, '"');
	for (i = 0; i < n; i++) {
		if (u[i] >= 0x20 && u[i] != '"' && u[i] != '\\' &&
		    (!ascii || u[i] < 0x7f))
			continue;
		buf_add(b, s + run, i - run);
		run = i + 1;
		if (ascii && u[i] >= 0x80) {	/* UTF-16 escapes */
			k = utf8_seqlen(u + i, n - i);
			cp = decode(u + i, k);
			if (cp >= 0x10000) {
				cp -= 0x10000;
				buf_printf(b, "\\u%04x", 0xd800 + (unsigned)(cp >> 10));
				cp = 0xdc00 + (cp & 0x3ff);
			}
			buf_printf(b, "\\u%04x", (unsigned)cp);
			run = i + k;
			i += k - 1;
			continue;
		}
		buf_addc(b, '\\');
		switch (u[i]) {
		case '"': buf_addc(b, '"'); break;
		case '\\': buf_addc(b, '\\'); break;
		case '\n': buf_addc(b, 'n'); break;
		case '\t': buf_addc(b, 't'); break;
		case '\r': buf_addc(b, 'r'); break;
		case '\b': buf_addc(b, 'b'); break;
		case '\f': buf_addc(b, 'f'); break;
		default:
			buf_add(b, "u00", 3);
			buf_addc(b, hex[u[i] >> 4]);
			buf_addc(b, hex[u[i] & 15]);
		}
	}
	buf_add(b, s + run, n - run);
	buf_addc(b, '"');
}

void
json_string_as(struct buf *b, const char *s, size_t n, int flags)
{
	const unsigned char *u = (const unsigned char *)s;
	struct buf t = { 0 };
	size_t i, k;

	if ((flags & (JSON_LOSSY | JSON_ASCII)) && utf8_valid(s, n) != n) {
		for (i = 0; i < n; ) {
			k = utf8_valid(s + i, n - i);
			buf_add(&t, s + i, k);
			if ((i += k) < n) {
				buf_adds(&t, "\357\277\275");
				while (++i < n && (u[i] & 0xc0) == 0x80)
					;
			}
		}
		json_string_as(b, t.p, t.len, flags & ~JSON_LOSSY);
		buf_free(&t);
		return;
	}
	if (flags & JSON_ASCII)
		escape(b, s, n, 1);
	else
		escape(b, s, n, 0);
}

void
json_string(struct buf *b, const char *s, size_t n)
{
	json_string_as(b, s, n, 0);
}

void
json_string_lossy(struct buf *b, const char *s, size_t n)
{
	json_string_as(b, s, n, JSON_LOSSY);
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
	w->style = style & ~(JSON_ASCII | JSON_LOSSY);
	w->flags = style & (JSON_ASCII | JSON_LOSSY);
}

void
json_w_within(struct json_w *w, struct buf *b, int style)
{
	json_w_init(w, b, style);
	w->depth = 1;
	w->more = BIT(1);
}

void
json_w_members(struct json_w *w, struct buf *b, int style)
{
	json_w_init(w, b, style);
	w->depth = 1;
}

void
json_w_nested(struct json_w *w, struct buf *b, int style, int depth)
{
	json_w_init(w, b, style);
	w->depth = depth;
	w->afterkey = depth > 0;
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
	json_string_as(w->b, key, strlen(key), w->flags);
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
	json_string_as(w->b, s, n, w->flags);
}

void
json_w_strz(struct json_w *w, const char *s)
{
	json_w_str(w, s, strlen(s));
}

void
json_w_kstr(struct json_w *w, const char *key, const char *s)
{
	json_w_key(w, key);
	json_w_strz(w, s);
}

void
json_w_kint(struct json_w *w, const char *key, long long v)
{
	json_w_key(w, key);
	json_w_int(w, v);
}

void
json_w_ku64(struct json_w *w, const char *key, uint64_t v)
{
	json_w_key(w, key);
	json_w_u64(w, v);
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

struct json_val *
json_doc_load(const char *path, char *err, size_t errsize, int *code)
{
	struct json_val *doc;
	struct buf b = { 0 };
	char why[256];
	int r;

	if ((r = input_read_file(path, &b, err, errsize, code)) != 0) {
		buf_free(&b);
		if (r > 0)
			owt_fail(err, errsize, code, XDATA, "%s: no such file",
			    path);
		return NULL;
	}
	doc = json_doc_parse(b.p, b.len, why, sizeof why, code);
	buf_free(&b);
	if (doc == NULL || doc->type != JV_MAP) {
		owt_fail(err, errsize, code, XDATA, "%s: %s", path,
		    doc ? "not a JSON object" : why);
		json_doc_free(doc);
		return NULL;
	}
	return doc;
}
