/* pretok.c - a tokenizer's split pattern, its own regex compiled by PCRE2 (JIT): text to pieces */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "tok/pretok.h"
#include "tok/pretok_unicode.h"
#include "core/util.h"

/* Unicode White_Space (Rust regex's \s), as the inside of a class. */
#define WHITE_SPACE "\\t-\\r\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}" \
	"\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}"

/*
 * Two compiled forms: re with the classes brought to Unicode 16, plain
 * with PCRE2's own (about twice as fast: the added ranges are tried at
 * every character). They differ only on the added code points, which are
 * all from U+0897 on, so a text holds one only where a lead byte of E0 or
 * more and the byte after it are in need[] (a bit for each such pair):
 * plain cuts every other text.
 */
struct pretok {
	pcre2_code *re, *plain;
	int jit;		/* JIT-compiled: pcre2_jit_match */
	uint8_t need[65536 / 8];
};

struct pretok_state {
	const struct pretok *p;
	pcre2_match_data *md;
	pcre2_match_context *mc;
	pcre2_jit_stack *stack;
	const pcre2_code *re;	/* the form for the text being cut */
	/* The match found after a gap, for the next call. */
	const char *text;
	size_t start, end;
};

/*
 * What Unicode 16 adds to PCRE2's \p{NAME} at p ("\p{NAME}..."), as the
 * inside of a class, and the length of "\p{NAME}"; NULL for none.
 */
static const char *
unicode_add(const char *p, size_t *len)
{
	const char *end;
	size_t i, n;

	if (p[1] != 'p' || p[2] != '{' || (end = strchr(p, '}')) == NULL)
		return NULL;
	n = (size_t)(end - p - 3);
	for (i = 0; i < sizeof pretok_unicode / sizeof *pretok_unicode; i++)
		if (strlen(pretok_unicode[i].prop) == n &&
		    memcmp(pretok_unicode[i].prop, p + 3, n) == 0 &&
		    *pretok_unicode[i].add != '\0') {
			*len = n + 4;
			return pretok_unicode[i].add;
		}
	return NULL;
}

/*
 * Set the bit in need[] of the first two bytes of each code point that
 * add ("\x{A}-\x{B}\x{C}...") holds.
 */
static void
need_mark(uint8_t *need, const char *add)
{
	unsigned long lo, hi, cp;
	unsigned k;
	char *end;

	while ((add = strstr(add, "\\x{")) != NULL) {
		lo = hi = strtoul(add + 3, &end, 16);
		add = end + 1;
		if (strncmp(add, "-\\x{", 4) == 0) {
			hi = strtoul(add + 4, &end, 16);
			add = end + 1;
		}
		for (cp = lo; cp <= hi; cp++) {
			if (cp < 0x800)
				owt_fatal("pretok_unicode.h: U+%04lX: below U+0800", cp);
			k = cp < 0x10000 ? (0xe0 | cp >> 12) << 8 | (0x80 |
			    (cp >> 6 & 63)) : (0xf0 | cp >> 18) << 8 | (0x80 |
			    (cp >> 12 & 63));
			need[k >> 3] |= (uint8_t)(1u << (k & 7));
		}
	}
}

/*
 * pattern with \s and \S spelled out (PCRE2's \s has no U+0085) and,
 * with need, \p{L}, \p{N}, \p{M} and the letters' \p{Lu} ... \p{Lo}
 * given the code points of Unicode 16 that PCRE2's tables lack
 * (pretok_unicode.h; marked in need), into out; -1 for \S inside a class,
 * which a class cannot spell.
 */
static int
translate(const char *pattern, struct buf *out, uint8_t *need)
{
	const char *p, *add;
	size_t n;
	int in_class = 0;

	for (p = pattern; *p; p++) {
		if (*p == '\\' && need != NULL &&
		    (add = unicode_add(p, &n)) != NULL) {
			need_mark(need, add);
			buf_printf(out, in_class ? "%.*s%s" : "[%.*s%s]", (int)n, p,
			    add);
			p += n - 1;
			continue;
		}
		if (*p == '\\' && p[1] != '\0') {
			p++;
			if (*p == 's')
				buf_printf(out, in_class ? "%s" : "[%s]", WHITE_SPACE);
			else if (*p == 'S' && in_class)
				return -1;
			else if (*p == 'S')
				buf_printf(out, "[^%s]", WHITE_SPACE);
			else {
				buf_addc(out, '\\');
				buf_addc(out, *p);
			}
			continue;
		}
		if (*p == '[' && !in_class) {
			in_class = 1;
			buf_addc(out, *p);
			/* "[]..." and "[^]...": the first ] is literal */
			if (p[1] == '^')
				buf_addc(out, *++p);
			if (p[1] == ']')
				buf_addc(out, *++p);
			continue;
		}
		if (*p == ']' && in_class)
			in_class = 0;
		buf_addc(out, *p);
	}
	return 0;
}

/* One form of pattern, or NULL with err and *code. */
static pcre2_code *
compile(const char *pattern, uint8_t *need, int *jit, char *err,
    size_t errsize, int *code)
{
	struct buf b = { 0 };
	pcre2_code *re;
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE at;
	int e;

	if (translate(pattern, &b, need) < 0) {
		buf_free(&b);
		owt_fail(err, errsize, code, XUSAGE, "pattern '%s': \\S inside a "
		    "class is not supported", pattern);
		return NULL;
	}
	re = pcre2_compile((PCRE2_SPTR)b.p, b.len, PCRE2_UTF | PCRE2_UCP |
	    PCRE2_MATCH_INVALID_UTF, &e, &at, NULL);
	buf_free(&b);
	if (re == NULL) {
		pcre2_get_error_message(e, msg, sizeof msg);
		owt_fail(err, errsize, code, XUSAGE, "pattern '%s': %s",
		    pattern, (char *)msg);
		return NULL;
	}
	*jit = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) == 0;
	return re;
}

struct pretok *
pretok_compile(const char *pattern, char *err, size_t errsize, int *code)
{
	struct pretok *p = xcalloc(1, sizeof *p);
	int jit1 = 0, jit2 = 0;

	if ((p->re = compile(pattern, p->need, &jit1, err, errsize, code)) ==
	    NULL || (p->plain = compile(pattern, NULL, &jit2, err, errsize,
	    code)) == NULL) {
		pretok_free(p);
		return NULL;
	}
	p->jit = jit1 && jit2;
	return p;
}

void
pretok_free(struct pretok *p)
{
	if (p == NULL)
		return;
	pcre2_code_free(p->re);
	pcre2_code_free(p->plain);
	free(p);
}

/* Whether text[0..len) may hold a code point that Unicode 16 added. */
static int
needs_added(const struct pretok *p, const char *text, size_t len)
{
	const unsigned char *t = (const unsigned char *)text;
	size_t i;
	unsigned k;

	for (i = 0; i + 1 < len; i++)
		if (t[i] >= 0xe0) {
			k = (unsigned)t[i] << 8 | t[i + 1];
			if (p->need[k >> 3] & (1u << (k & 7)))
				return 1;
		}
	return 0;
}

struct pretok_state *
pretok_state_new(const struct pretok *p)
{
	struct pretok_state *s = xcalloc(1, sizeof *s);

	s->p = p;
	if ((s->md = pcre2_match_data_create_from_pattern(p->re, NULL)) == NULL ||
	    (s->mc = pcre2_match_context_create(NULL)) == NULL)
		owt_fatal("out of memory");
	/* Lookahead after a long run backtracks over it: room for that. */
	if (p->jit) {
		if ((s->stack = pcre2_jit_stack_create(32 << 10, 64 << 20,
		    NULL)) == NULL)
			owt_fatal("out of memory");
		pcre2_jit_stack_assign(s->mc, NULL, s->stack);
	}
	return s;
}

void
pretok_state_free(struct pretok_state *s)
{
	if (s == NULL)
		return;
	pcre2_match_data_free(s->md);
	pcre2_match_context_free(s->mc);
	pcre2_jit_stack_free(s->stack);
	free(s);
}

size_t
pretok_next(struct pretok_state *s, const char *text, size_t len, size_t at)
{
	PCRE2_SIZE *ov;
	int rc;

	if (at == 0) {
		s->text = NULL;
		s->re = needs_added(s->p, text, len) ? s->p->re : s->p->plain;
	} else if (s->text == text && s->start == at && s->end <= len)
		return s->end - at;
	rc = s->p->jit ?
	    pcre2_jit_match(s->re, (PCRE2_SPTR)text, len, at,
	    PCRE2_NOTEMPTY, s->md, s->mc) :
	    pcre2_match(s->re, (PCRE2_SPTR)text, len, at, PCRE2_NOTEMPTY,
	    s->md, s->mc);
	if (rc == PCRE2_ERROR_NOMATCH)
		return len - at;
	if (rc < 0)
		owt_fatal("PCRE2 match error %d at byte %zu", rc, at);
	ov = pcre2_get_ovector_pointer(s->md);
	if (ov[0] == at)
		return ov[1] - at;
	s->text = text;
	s->start = ov[0];
	s->end = ov[1];
	return ov[0] - at;
}
