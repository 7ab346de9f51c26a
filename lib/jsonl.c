/* jsonl.c - JSON Lines records: read (yajl), validate, pass through, edit, write */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "jsonl.h"
#include "utf8.h"

struct pctx {
	struct jsonl_rec *r;
	yajl_handle h;
	int depth;
	int top;		/* the top-level value was an object */
	int cur;		/* index of the member being parsed, or -1 */
	size_t end;		/* where the top-level object ended */
	const char *why;	/* reason a callback cancelled the parse */
};

void
jsonl_rec_init(struct jsonl_rec *r, const char *const *want, size_t nwant)
{
	memset(r, 0, sizeof *r);
	r->want = want;
	r->nwant = nwant;
}

void
jsonl_rec_free(struct jsonl_rec *r)
{
	free(r->f);
	buf_free(&r->arena);
	r->f = NULL;
	r->nf = r->fcap = 0;
}

static int
wanted(const struct jsonl_rec *r, const char *key, size_t klen)
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
	struct jsonl_field *f;
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
	struct jsonl_field *f;

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
	struct jsonl_field *f;

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
	struct jsonl_rec *r = c->r;
	struct jsonl_field *f;
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
		 * Plain ASCII without a backslash goes 8 bytes at a time, to
		 * the first byte that is neither (the lowest flagged byte of
		 * the zero-byte test is exact).
		 */
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
 * The fast path of jsonl_parse, for the common record: one flat object
 * whose values are strings, numbers, true, false or null, in strict JSON
 * with blanks, tabs, CRs and LFs between tokens, its UTF-8 and surrogate
 * escapes checked before (check_text). It takes a subset of what yajl
 * takes and gives the same fields; on anything else (a nested value, other
 * white space, an error) it returns -1 and yajl parses the line, and says
 * what is wrong.
 */

/* The first byte of s[i..n) that is '"', '\\' or a control character, or n. */
static size_t
str_special(const unsigned char *s, size_t i, size_t n)
{
#ifdef __SSE2__
	const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	const __m128i ctl = _mm_set1_epi8(0x1f);
	__m128i x;
	int m;

	for (; i + 16 <= n; i += 16) {
		x = _mm_loadu_si128((const __m128i *)(s + i));
		m = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(
		    _mm_cmpeq_epi8(x, q), _mm_cmpeq_epi8(x, bs)),
		    _mm_cmpeq_epi8(_mm_min_epu8(x, ctl), x)));
		if (m != 0)
			return i + (size_t)__builtin_ctz((unsigned)m);
	}
#endif
	while (i < n && s[i] != '"' && s[i] != '\\' && s[i] >= 0x20)
		i++;
	return i;
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
	char *o = NULL;
	size_t j;
	int u, v;
	uint32_t cp;

	if (out != NULL) {
		/* The value is never longer than the literal. */
		buf_reserve(out, n - i + 1);
		o = out->p + out->len;
	}
	for (i++;; i = j) {
		j = str_special(s, i, n);
		if (j + 1 >= n)
			return -1;
		if (o != NULL) {
			memcpy(o, s + i, j - i);
			o += j - i;
		}
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
			*o++ = (char)cp;
		} else if (cp < 0x800) {
			*o++ = (char)(0xc0 | cp >> 6);
			*o++ = (char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			*o++ = (char)(0xe0 | cp >> 12);
			*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
			*o++ = (char)(0x80 | (cp & 0x3f));
		} else {
			*o++ = (char)(0xf0 | cp >> 18);
			*o++ = (char)(0x80 | (cp >> 12 & 0x3f));
			*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
			*o++ = (char)(0x80 | (cp & 0x3f));
		}
	}
	*end = j + 1;
	if (o != NULL) {
		*o = '\0';
		out->len = (size_t)(o - out->p);
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

/* Parse r->line as jsonl_parse does; 0, or -1 for yajl to do it. */
static int
fast_parse(struct jsonl_rec *r)
{
	const unsigned char *s = (const unsigned char *)r->line;
	struct jsonl_field *f;
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
jsonl_parse(struct jsonl_rec *r, const char *line, size_t len, char *err,
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
		snprintf(err, errsize, "empty line");
		return BAD_EMPTYLINE;
	}
	if ((k = check_text(line, len, &bad)) != 0) {
		snprintf(err, errsize, k == BAD_UTF8 ?
		    "invalid UTF-8 at byte %zu" :
		    "invalid JSON: unpaired UTF-16 surrogate escape at byte %zu",
		    bad + 1);
		return k;
	}
	if (fast_parse(r) == 0)
		goto done;
	r->nf = 0;
	r->arena.len = 0;
	memset(&c, 0, sizeof c);
	c.r = r;
	c.cur = -1;
	c.h = yajl_alloc(r->nwant > 0 ? &callbacks : &callbacks_nostr, NULL, &c);
	if (c.h == NULL)
		owt_die(XSYS, "out of memory");
	yajl_config(c.h, yajl_dont_validate_strings, 1);
	st = yajl_parse(c.h, (const unsigned char *)line, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(c.h);
	if (st != yajl_status_ok) {
		if (c.why != NULL) {
			snprintf(err, errsize, "%s", c.why);
			yajl_free(c.h);
			return BAD_NOTOBJECT;
		} else {
			msg = yajl_get_error(c.h, 0, (const unsigned char *)line, len);
			i = strcspn((char *)msg, ".\n");
			snprintf(err, errsize, "invalid JSON: %.*s at byte %zu",
			    (int)i, msg, yajl_get_bytes_consumed(c.h) + 1);
			yajl_free_error(c.h, msg);
		}
		yajl_free(c.h);
		return BAD_JSON;
	}
	yajl_free(c.h);
	if (!c.top) {
		snprintf(err, errsize, "not a JSON object");
		return BAD_NOTOBJECT;
	}
	/* yajl waits for more input after a token cut short (`{}"x`). */
	if (c.end != len) {
		snprintf(err, errsize, "invalid JSON: trailing garbage at byte %zu",
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

const struct jsonl_field *
jsonl_get(const struct jsonl_rec *r, const char *key)
{
	size_t i = r->nf, n = strlen(key);

	while (i-- > 0)
		if (r->f[i].klen == n && memcmp(r->f[i].key, key, n) == 0)
			return &r->f[i];
	return NULL;
}

const char *
jsonl_str(const struct jsonl_rec *r, const char *key, size_t *len,
    const char **why)
{
	const struct jsonl_field *f = jsonl_get(r, key);

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

void
jsonl_write(struct buf *out, const struct jsonl_rec *r,
    const struct jsonl_edit *ed, size_t ned)
{
	const struct jsonl_field *f;
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
		if (j == ned || jsonl_get(r, ed[j].key) != f)
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

int
jsonl_open(struct jsonl *j, const char *path, const char *const *want,
    size_t nwant)
{
	memset(j, 0, sizeof *j);
	jsonl_rec_init(&j->rec, want, nwant);
	if (input_open(&j->in, path) < 0) {
		j->errcode = j->in.errcode;
		j->reason = j->in.reason;
		snprintf(j->err, sizeof j->err, "%s", j->in.err);
		return -1;
	}
	return 0;
}

int
jsonl_next(struct jsonl *j, struct jsonl_rec **rec)
{
	char *line, why[256];
	size_t len;
	int r;

	r = input_line(&j->in, &line, &len);
	if (r < 0) {
		j->errcode = j->in.errcode;
		j->reason = j->in.reason;
		snprintf(j->err, sizeof j->err, "%s", j->in.err);
		return -1;
	}
	if (r == 0)
		return 0;
	if ((r = jsonl_parse(&j->rec, line, len, why, sizeof why)) != 0) {
		j->errcode = XDATA;
		j->reason = r;
		snprintf(j->err, sizeof j->err, "%s:%lu: %s", j->in.name,
		    j->in.lineno, why);
		return -1;
	}
	*rec = &j->rec;
	return 1;
}

void
jsonl_close(struct jsonl *j)
{
	input_close(&j->in);
	jsonl_rec_free(&j->rec);
}
