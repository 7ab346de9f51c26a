/* pretok.c - a tokenizer's split pattern, its own regex compiled by PCRE2 (JIT): text to pieces */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pretok.h"
#include "pretok_unicode.h"
#include "util.h"

/* Unicode White_Space (Rust regex's \s), as the inside of a class. */
#define WHITE_SPACE "\\t-\\r\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}" \
	"\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}"

struct pretok {
	pcre2_code *re;
	int jit;		/* JIT-compiled: pcre2_jit_match */
};

struct pretok_state {
	const struct pretok *p;
	pcre2_match_data *md;
	pcre2_match_context *mc;
	pcre2_jit_stack *stack;
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
 * pattern with \s and \S spelled out (PCRE2's \s has no U+0085) and
 * \p{L}, \p{N}, \p{M} and the letters' \p{Lu} ... \p{Lo} given the code
 * points of Unicode 16 that PCRE2's tables lack (pretok_unicode.h), into
 * out; -1 for \S inside a class, which a class cannot spell.
 */
static int
translate(const char *pattern, struct buf *out)
{
	const char *p, *add;
	size_t n;
	int in_class = 0;

	for (p = pattern; *p; p++) {
		if (*p == '\\' && (add = unicode_add(p, &n)) != NULL) {
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

struct pretok *
pretok_compile(const char *pattern, char *err, size_t errsize, int *code)
{
	struct pretok *p;
	struct buf re = { 0 };
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE at;
	int e;

	if (translate(pattern, &re) < 0) {
		buf_free(&re);
		owt_fail(err, errsize, code, XUSAGE, "pattern '%s': \\S inside a "
		    "class is not supported", pattern);
		return NULL;
	}
	p = xcalloc(1, sizeof *p);
	p->re = pcre2_compile((PCRE2_SPTR)re.p, re.len, PCRE2_UTF | PCRE2_UCP |
	    PCRE2_MATCH_INVALID_UTF, &e, &at, NULL);
	buf_free(&re);
	if (p->re == NULL) {
		pcre2_get_error_message(e, msg, sizeof msg);
		owt_fail(err, errsize, code, XUSAGE, "pattern '%s': %s",
		    pattern, (char *)msg);
		free(p);
		return NULL;
	}
	p->jit = pcre2_jit_compile(p->re, PCRE2_JIT_COMPLETE) == 0;
	return p;
}

void
pretok_free(struct pretok *p)
{
	if (p == NULL)
		return;
	pcre2_code_free(p->re);
	free(p);
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

	if (at == 0)
		s->text = NULL;
	else if (s->text == text && s->start == at && s->end <= len)
		return s->end - at;
	rc = s->p->jit ?
	    pcre2_jit_match(s->p->re, (PCRE2_SPTR)text, len, at,
	    PCRE2_NOTEMPTY, s->md, s->mc) :
	    pcre2_match(s->p->re, (PCRE2_SPTR)text, len, at, PCRE2_NOTEMPTY,
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
