/* unit-pretok.c - lib/pretok: the classes against Unicode 16 (lib/uniclass), \s, gaps, refusals, the scanner against PCRE2 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tok/pretok.h"
#include "tok/uniclass.h"
#include "unit.h"
#include "core/util.h"

static size_t
utf8_put(uint32_t cp, char *s)
{
	if (cp < 0x80) {
		s[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		s[0] = (char)(0xc0 | cp >> 6);
		s[1] = (char)(0x80 | (cp & 63));
		return 2;
	}
	if (cp < 0x10000) {
		s[0] = (char)(0xe0 | cp >> 12);
		s[1] = (char)(0x80 | (cp >> 6 & 63));
		s[2] = (char)(0x80 | (cp & 63));
		return 3;
	}
	s[0] = (char)(0xf0 | cp >> 18);
	s[1] = (char)(0x80 | (cp >> 12 & 63));
	s[2] = (char)(0x80 | (cp >> 6 & 63));
	s[3] = (char)(0x80 | (cp & 63));
	return 4;
}

/*
 * Every code point: in the pattern's class exactly where lib/uniclass
 * (Unicode 16.0.0, tiktoken's tables) has it in cls. The pattern is
 * "C+|(?s:.)": the character twice is one piece where it is in C, two
 * where it is not.
 */
static void
check_class(const char *pattern, unsigned cls, const char *what)
{
	char err[OWT_ERRSIZE], s[8];
	struct pretok *p;
	struct pretok_state *st;
	uint32_t cp, bad = 0, first = 0;
	size_t n;
	int code, in;

	if ((p = pretok_compile(pattern, err, sizeof err, &code)) == NULL) {
		OK(0, "%s: %s", what, err);
		return;
	}
	st = pretok_state_new(p);
	for (cp = 0; cp < 0x110000; cp++) {
		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		n = utf8_put(cp, s);
		memcpy(s + n, s, n);
		in = pretok_next(st, s, 2 * n, 0) == 2 * n;
		if (in != (uniclass(cp) == cls)) {
			if (bad++ == 0)
				first = cp;
		}
	}
	OK(bad == 0, "%s: every code point as Unicode 16 has it (%u differ, "
	    "the first U+%04X)", what, bad, first);
	pretok_state_free(st);
	pretok_free(p);
}

/*
 * Whether the scanner and PCRE2 alone cut t[0..len) into the same pieces;
 * where not, the offset of the first piece they differ on in *at and
 * their lengths there in *na (the scanner's) and *nb.
 */
static int
same_pieces(struct pretok *p, struct pretok_state *a, struct pretok_state *b,
    const char *t, size_t len, size_t *at, size_t *na, size_t *nb)
{
	for (*at = 0; *at < len; *at += *na) {
		pretok_use_scanner(p, 1);
		*na = pretok_next(a, t, len, *at);
		pretok_use_scanner(p, 0);
		*nb = pretok_next(b, t, len, *at);
		if (*na != *nb)
			return 0;
	}
	return 1;
}

/*
 * The scanner against PCRE2 alone for every code point: the pieces of
 * the character twice, and of the character between two others, with
 * the scanner and without, the same.
 */
static void
check_every(const char *pattern, const char *what)
{
	static const char *const around[] = { "", "a", " ", "1", "'", "\n" };
	char err[OWT_ERRSIZE], s[32];
	struct pretok *p;
	struct pretok_state *a, *b;
	uint32_t cp, bad = 0, first = 0;
	size_t n, len, at, na, nb, k;
	int code;

	if ((p = pretok_compile(pattern, err, sizeof err, &code)) == NULL) {
		OK(0, "%s: %s", what, err);
		return;
	}
	OK(pretok_has_scanner(p), "%s: the scanner takes the pattern", what);
	a = pretok_state_new(p);
	b = pretok_state_new(p);
	for (cp = 0; cp < 0x110000; cp++) {
		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		for (k = 0; k < sizeof around / sizeof *around; k++) {
			len = strlen(around[k]);
			memcpy(s, around[k], len);
			n = utf8_put(cp, s + len);
			memcpy(s + len + n, s + len, n);
			len += 2 * n;
			memcpy(s + len, around[k], strlen(around[k]));
			len += strlen(around[k]);
			if (!same_pieces(p, a, b, s, len, &at, &na, &nb) &&
			    bad++ == 0)
				first = cp;
		}
	}
	OK(bad == 0, "%s: the scanner's pieces are PCRE2's around every code "
	    "point (%u differ, the first U+%04X)", what, bad, first);
	pretok_state_free(a);
	pretok_state_free(b);
	pretok_free(p);
}

/*
 * The characters of the random texts: those that the patterns tell apart
 * (ASCII, two- and three-byte letters, marks, digits and white space that
 * the scanner takes: CJK, Hangul, kana, fullwidth digits, Devanagari, the
 * code points that Unicode 15 and 16 added to \p{L} and \p{M} in the
 * plane; four-byte ones it leaves to PCRE2: emoji, Unicode 16's new
 * letters beyond the plane; the Kelvin sign and long s that (?i) matches
 * to k and s; invalid UTF-8: a stray byte, a surrogate, an overlong
 * form, a character cut short).
 */
static const char *const ch[] = {
	"a", "b", "Z", "s", "S", "t", "k", "K", "'", " ", " ", " ", "\t",
	"\r", "\n", "1", "9", "0", ".", ",", "/", "-", "_", "\xc3\xa9",
	"\xc3\x89", "\xc5\xbf", "\xe2\x84\xaa", "\xe4\xb8\xad",
	"\xc2\x85", "\xc2\xa0", "\xd9\xa3", "\xcc\x81", "\xd0\xb6",
	"\xe2\x80\x83", "\xf0\x9f\x98\x80", "\xff", "\xc2\xaa",
	"\xca\xb0", "\xc7\x85",
	"\xe4\xb8\x80", "\xe6\x96\x87", "\xed\x95\x9c",
	"\xea\xb8\x80", "\xe3\x81\x82", "\xe3\x82\xab",
	"\xe3\x80\x80", "\xe3\x80\x82", "\xef\xbc\x91",
	"\xe0\xa4\x95", "\xe0\xa4\xbf", "\xe2\x80\xa8",
	"\xef\xbb\xbf", "\xe2\x80\x8b", "\xe1\xb2\x89",
	"\xea\x9f\x8b", "\xea\x9f\x9b", "\xe0\xa2\x97",
	"\xe0\xb3\xb3", "\xe2\x85\xa0", "\xe2\x80\x99",
	"\xf0\x90\x97\x80", "\xf0\x9e\x97\x91", "\xed\xa0\x80",
	"\xe0\x80\xaf", "\xe4\xb8", "\xe4", "\xc3",
};

/* A number below n from the generator *r (a linear congruence). */
static unsigned
pick(unsigned *r, unsigned n)
{
	*r = *r * 1103515245 + 12345;
	return (*r >> 16) % n;
}

/* A random text of 1 to 24 of ch[]'s characters into t[256]: its length. */
static size_t
random_text(unsigned *r, char *t)
{
	size_t len = 0, k;
	const char *c;

	for (k = pick(r, 24) + 1; k > 0; k--) {
		c = ch[pick(r, sizeof ch / sizeof *ch)];
		memcpy(t + len, c, strlen(c));
		len += strlen(c);
	}
	return len;
}

/*
 * The scanner (pretok.c) against PCRE2 alone: the same pieces of ntext
 * texts, the chosen ones (NULL last) or, where chosen is NULL, random
 * ones from r; the number that differ (the first said).
 */
static size_t
texts_differ(struct pretok *p, const char *pattern,
    const char *const *chosen, size_t ntext, unsigned r)
{
	struct pretok_state *a = pretok_state_new(p), *b = pretok_state_new(p);
	char buf[256];
	const char *t;
	size_t i, len, at, na, nb, bad = 0;

	for (i = 0; chosen != NULL ? chosen[i] != NULL : i < ntext; i++) {
		if (chosen != NULL)
			len = strlen(t = chosen[i]);
		else
			len = random_text(&r, buf), t = buf;
		if (!same_pieces(p, a, b, t, len, &at, &na, &nb) && bad++ == 0)
			printf("# /%s/: '%.*s' at %zu: %zu, PCRE2 %zu\n", pattern,
			    (int)len, t, at, na, nb);
	}
	pretok_state_free(a);
	pretok_state_free(b);
	return bad;
}

/*
 * The scanner against PCRE2 alone on the texts t[] (NULL last), those
 * where a shortcut of the machine's would go wrong that random texts
 * seldom make.
 */
static void
check_texts(const char *pattern, const char *const *t, const char *what)
{
	char err[OWT_ERRSIZE];
	struct pretok *p;
	int code;

	if ((p = pretok_compile(pattern, err, sizeof err, &code)) == NULL) {
		OK(0, "%s: %s", what, err);
		return;
	}
	OK(texts_differ(p, pattern, t, 0, 0) == 0, "%s: the scanner's pieces "
	    "are PCRE2's", what);
	pretok_free(p);
}

/* The pattern has a scanner (has) or not, and 30000 random texts cut alike. */
static void
check_scanner(const char *pattern, int has, const char *what)
{
	char err[OWT_ERRSIZE];
	struct pretok *p;
	int code;

	if ((p = pretok_compile(pattern, err, sizeof err, &code)) == NULL) {
		OK(0, "%s: %s", what, err);
		return;
	}
	OK(pretok_has_scanner(p) == has, "%s: %s", what, has ?
	    "the scanner takes the pattern" : "no scanner: PCRE2 alone");
	OK(texts_differ(p, pattern, NULL, 30000, 12345) == 0, "%s: the scanner's "
	    "pieces are PCRE2's (30000 random texts)", what);
	pretok_free(p);
}

/*
 * Patterns made at random of what the machine takes: 2 to 7 ways of 1
 * to 3 atoms (classes, characters; ?, *, +, {1,3}, {2}), a lookahead or
 * a (?i:) group of such among them, and \s|\S last. Its shortcuts
 * (sure runs, pair_search, entry_of, a run given back, a lookahead of
 * one character) are worked out from each pattern, and a tokenizer.json
 * may bring any: npat of them, ntext random texts each.
 */
static void
random_ways(unsigned *r, char *pat, int depth)
{
	static const char *const atom[] = { "\\p{L}", "\\p{N}", "\\s", "\\S",
		"[\\r\\n]", "[^\\s\\p{L}\\p{N}]", "[^\\r\\n\\p{L}\\p{N}]", "'",
		"s", "t", "a", "k", "\\.", ",", " ", "\\n", "[kK]", "\\p{Lu}",
		"\\p{Ll}", "\\p{M}" };
	static const char *const quant[] = { "", "", "", "?", "*", "+", "+",
		"{1,3}", "{2}" };
	unsigned k, n = pick(r, 3) + 1;

	while (n-- > 0) {
		k = pick(r, 10);
		if (k < 2 && depth == 0) {
			strcat(pat, k == 0 ? (pick(r, 2) ? "(?=" : "(?!") : "(?i:");
			random_ways(r, pat, 1);
			strcat(pat, ")");
			continue;
		}
		strcat(pat, atom[pick(r, sizeof atom / sizeof *atom)]);
		strcat(pat, quant[pick(r, sizeof quant / sizeof *quant)]);
	}
}

static void
check_random_patterns(int npat, size_t ntext)
{
	char err[OWT_ERRSIZE], pat[2048];
	struct pretok *p;
	int i, j, ways, code, scanned = 0, bad = 0;
	unsigned r = 4242;

	for (i = 0; i < npat; i++) {
		pat[0] = '\0';
		for (j = 0, ways = (int)pick(&r, 6) + 2; j < ways; j++) {
			if (j > 0)
				strcat(pat, "|");
			random_ways(&r, pat, 0);
		}
		strcat(pat, "|\\s|\\S");
		if ((p = pretok_compile(pat, err, sizeof err, &code)) == NULL)
			continue;
		if (pretok_has_scanner(p)) {
			scanned++;
			bad += texts_differ(p, pat, NULL, ntext, (unsigned)i) != 0;
		}
		pretok_free(p);
	}
	OK(scanned > npat / 2 && bad == 0, "%d random patterns, %d with a "
	    "scanner: its pieces are PCRE2's on %zu random texts each (%d "
	    "patterns differ)", npat, scanned, ntext, bad);
}

int
main(void)
{
	char err[OWT_ERRSIZE];
	struct pretok *p;
	struct pretok_state *st;
	const char *t;
	int code = 0;

	check_class("\\p{L}+|(?s:.)", UC_LETTER, "\\p{L}");
	check_class("\\p{N}+|(?s:.)", UC_NUMBER, "\\p{N}");
	check_class("\\s+|(?s:.)", UC_SPACE, "\\s");
	check_class("[\\s]+|(?s:.)", UC_SPACE, "[\\s]");

	/* GPT-2's pattern: the pieces of a text with U+0085 and U+FEFF. */
	p = pretok_compile("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| "
	    "?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", err, sizeof err, &code);
	OK(p != NULL, "GPT-2's pattern compiles");
	st = pretok_state_new(p);
	t = "a\302\205\302\205b\357\273\277 c";	/* a NEL NEL b BOM space c */
	OK(pretok_next(st, t, strlen(t), 0) == 1, "a");
	OK(pretok_next(st, t, strlen(t), 1) == 2, "the first U+0085 alone: "
	    "white space before a letter leaves the last one");
	OK(pretok_next(st, t, strlen(t), 3) == 2, "the second alone: only a "
	    "space joins a word");
	OK(pretok_next(st, t, strlen(t), 6) == 3, "U+FEFF is no white space");
	/* Invalid UTF-8 matches nothing: a piece of its own. */
	t = "ab\377\376cd";
	OK(pretok_next(st, t, 6, 0) == 2 && pretok_next(st, t, 6, 2) == 2 &&
	    pretok_next(st, t, 6, 4) == 2, "invalid bytes are a piece between "
	    "the matches");
	pretok_state_free(st);
	pretok_free(p);

	/* every code point of the plane in the scanner's classes */
	check_every("\\p{L}+|\\p{N}+|\\s+(?!\\S)|\\s+|[^\\s\\p{L}\\p{N}]+",
	    "\\p{L}, \\p{N}, \\s");
	check_every("[\\p{Lu}\\p{Lt}]+|[\\p{Ll}\\p{Lm}]+|\\p{Lo}+|\\p{M}+|"
	    "(?i:k|s)+|[^\\r\\n\\p{L}\\p{N}]", "\\p{Lu} ... \\p{M}, (?i)");

	/* tiktoken's r50k, cl100k, o200k; Megatron's v1 (possessive) and v2 */
	check_scanner("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| "
	    "?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", 1, "r50k_base");
	check_scanner("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?"
	    "\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
	    "\\s+(?!\\S)|\\s+", 1, "cl100k_base");
	check_scanner("[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}"
	    "\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
	    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
	    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
	    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|"
	    "\\s+(?!\\S)|\\s+", 1, "o200k_base");
	check_scanner("[^\\r\\n\\p{L}\\p{N}]?+\\p{L}+|\\p{N}| "
	    "?[^\\s\\p{L}\\p{N}]++[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+", 0,
	    "Megatron's v1");
	/* what the machine does beyond them: groups repeated, counted, looked ahead */
	check_scanner("(?:a|ab|'s)+(?=\\s)|(?:\\p{L}\\p{N}?){2,4}|(?i:S)[^a]*?x|"
	    "(?i:k)+|\\p{N}{2}|(?!\\p{N})\\S+?|\\s", 0, "lazy quantifiers");
	/* a sure run after the first character; runs that are not sure */
	check_scanner("(?i:'s|'t)|[^\\s\\p{L}]?\\p{L}+(?:'\\p{L}|\\p{N}{2})?|"
	    "[^\\s\\p{L}]?\\p{N}+(?=\\s)|\\s?\\p{N}+\\p{L}*|[.,]?\\s+\\p{L}|"
	    "\\S|\\s+", 1, "a run after the first character, and more after it");
	check_scanner("\\p{N}+(?=\\s)|\\p{L}+(?:'\\p{L}|\\s\\p{N})?|[^\\p{N}\\p{L}]", 1,
	    "a run first, and what follows it, at the end of the text too");
	/* the first two characters' ways: a run given back, lookaheads */
	check_scanner("a*a[b]+|(?:\\s|'(?=s))[^\\s\\p{N}]+|(?!\\p{N})\\S\\p{L}*|"
	    "\\p{N}+(?:[.,]\\p{N}+)?|\\s+(?!\\S)|\\s", 1,
	    "the first two characters: runs given back, lookaheads");
	check_scanner("(?:a|ab|'s)+(?=\\s)|(?:\\p{L}\\p{N}?){2,4}|(?i:SK)+|"
	    "\\p{N}{2}|(?:\\p{N}\\s?)*\\p{N}|(?!\\p{N})\\S+|\\s|.", 1,
	    "groups repeated and counted, lookahead, (?i)");
	/*
	 * a run given back at once to what the way after it can start with
	 * (+ and * before a subset, at the text's end too), a lookahead of
	 * one character, ways that fail on the first two characters
	 */
	check_scanner("\\p{L}+s\\p{N}|\\p{L}*[kK]\\p{N}|\\s+[\\r\\n]|\\s*\\n\\s|"
	    "[^\\s\\p{L}]+(?=\\s)|\\S|\\s+(?!\\p{N})|\\s", 1,
	    "runs given back to what follows them, one-character lookaheads");
	check_scanner("\\s+\\p{L}+|'\\p{L}+s\\p{N}|\\s|\\S", 1,
	    "a run given back where its first character must stay, or where "
	    "PCRE2 must look");
	{
		/* a + run of one character before what cannot follow it; a
		 * run before a character of four bytes (PCRE2's to judge) */
		static const char *const t[] = { "'s1", "x's1 a", "''s9",
		    "'ks1", "  \xf0\x90\x97\x80", " \xf0\x90\x97\x80s",
		    "a \xf0\x9e\x97\x91 b", "  \xff", " \xe4\xb8", NULL };

		check_texts("\\s+\\p{L}+|'\\p{L}+s\\p{N}|\\s|\\S", t,
		    "a run given back where its first character must stay, "
		    "or where PCRE2 must look (chosen texts)");
	}
	check_scanner("'s\\p{L}|\\s\\p{N}+|\\s[.,]|\\s+\\p{L}+|\\s*[\\r\\n]+|"
	    "\\s+(?!\\S)|\\s+|\\S+", 1,
	    "ways that fail on the first two characters passed");

	check_random_patterns(300, 1000);

	OK(pretok_compile("(a", err, sizeof err, &code) == NULL &&
	    code == XUSAGE, "a bad pattern is refused (exit class 2)");
	SAMES(err, "pattern '(a': missing closing parenthesis",
	    "and PCRE2 says why");
	OK(pretok_compile("[^\\S]", err, sizeof err, &code) == NULL,
	    "\\S inside a class is refused");
	SAMES(err, "pattern '[^\\S]': \\S inside a class is not supported",
	    "and says so");
	return unit_done();
}
