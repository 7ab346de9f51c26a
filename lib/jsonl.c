/* jsonl.c - JSON Lines records: read (yajl), validate, pass through, edit, write */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

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
		if ((k = utf8_seqlen(s + i, n - i)) == 0) {
			*at = i;
			return BAD_UTF8;
		}
		i += k;
	}
	return 0;
badpair:
	*at = i;
	return BAD_JSON;
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
