/* pretok.c - a tokenizer's split pattern, its own regex compiled by PCRE2 (JIT): text to pieces */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <ctype.h>
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
struct scan;
struct bt;

struct pretok {
	pcre2_code *re, *plain;
	int jit;		/* JIT-compiled: pcre2_jit_match */
	struct scan *scan;	/* the fast scanner, or NULL */
	int use_scan;
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
	/* the scanner's backtrack stack */
	struct bt *bt;
	size_t nbt, capbt;
};

/*
 * The fast scanner: the same pattern compiled again, into a small
 * backtracking machine over the code points of the Basic Multilingual
 * Plane (below U+10000: ASCII, Latin, Greek, Cyrillic, Arabic, Indic
 * scripts, CJK, Hangul, ...). Its sets are PCRE2's own answers: each atom
 * of the translated pattern (a class, an escape, a literal, under (?i) or
 * not; with the Unicode 16 additions, as re has them) is compiled alone
 * by PCRE2 and run over a string of every code point of the plane, so
 * the scanner holds no Unicode table of its own. The plane is cut into
 * classes, the code points that every atom treats alike (a few dozen at
 * most for the encodings' patterns), and a set is a bit a class. The
 * machine tries the alternatives in order, quantifiers greedy,
 * backtracking as PCRE2 does, and refuses an empty match
 * (PCRE2_NOTEMPTY), so that a match it finds is PCRE2's. The moment it
 * would look at a character beyond the plane (four bytes: emoji, the
 * historic scripts) or at invalid UTF-8 it gives up, and PCRE2 cuts that
 * piece: which pieces each engine cuts changes no piece. A pattern with
 * what the machine lacks (anchors, backreferences, lookbehind, lazy or
 * possessive quantifiers, atomic groups, inline flags other than
 * (?i:...), a repeated group that can match empty, \C) or with more
 * than SCAN_CLASSES classes gets no scanner.
 */
#define SCAN_LIMIT 0x10000
#define SCAN_CLASSES 256
#define SCAN_INF 0xffffffffu

/*
 * A bit a class; a[] a byte a byte, 1 for the ASCII characters in the
 * set (0 from 0x80 on), for the runs of them (a load and a test a byte).
 */
struct scan_set {
	uint64_t w[SCAN_CLASSES / 64];
	uint8_t a[256];
};

enum { N_SET, N_CAT, N_ALT, N_REP, N_LOOK };

struct node {
	int kind, neg;		/* neg: a negative lookahead */
	uint32_t set, min, max;
	struct node **kid;
	size_t nkid, capkid;
};

/* I_STAR, I_PLUS, I_OPT: I_RUNs of *, + and ?, set apart after gen() */
enum { I_SET, I_RUN, I_SPLIT, I_JMP, I_LOOK, I_LEND, I_MATCH, I_STAR, I_PLUS,
	I_OPT };

struct inst {
	uint8_t op, neg;
	uint8_t last;		/* I_STAR, I_PLUS: the next is I_MATCH */
	/*
	 * I_STAR, I_PLUS: last, or a match surely ends after the run (a
	 * path from the next to I_MATCH takes no character and looks at
	 * none): having taken a character, the machine never backtracks
	 * to before it. (A start there is exact either way: the machine
	 * from there tries what the whole one would, in the same order,
	 * and where it fails PCRE2 cuts the piece; sure spares that.)
	 */
	uint8_t sure;
	/*
	 * I_STAR, I_PLUS: the classes of the character after the run (a
	 * bit a class; done_end, the end of the text) at which the way
	 * after it goes to I_MATCH taking nothing: the run is the rest of
	 * the match.
	 */
	uint8_t done_end;
	uint8_t ends;		/* any of them */
	/* I_LOOK: its body is one I_SET, tested here (no call of the machine) */
	uint8_t one;
	uint64_t done[SCAN_CLASSES / 64];
	uint32_t set, x, y, min, max;
	/* I_SPLIT: the first characters of x's matches and of y's, or NONE: any */
	uint32_t fx, fy;
	/* the first characters of the matches from here, or FIRST_ANY */
	uint32_t first;
	/* I_SPLIT: for an ASCII next character, ACT_X, ACT_Y or both */
	uint8_t act[128];
};
#define ACT_X 1
#define ACT_Y 2

/* Whether class c is in s; whether ASCII character u is. */
static inline int
in_set(const struct scan_set *s, unsigned c)
{
	return (int)(s->w[c >> 6] >> (c & 63) & 1);
}

static inline int
in_ascii(const struct scan_set *s, unsigned u)
{
	return s->a[u];
}

struct scan {
	struct inst *code;
	size_t ncode, capcode;
	struct scan_set *sets;
	char **atom;		/* each set's atom, "(?i)" first under (?i) */
	size_t nsets, natoms, capsets, capatom;
	uint8_t cls[SCAN_LIMIT];	/* each code point's class */
	/*
	 * Where a match starts by the class of its first character: past
	 * the alternatives that cannot take it (pc 0 when none is passed).
	 */
	uint32_t entry[SCAN_CLASSES];
	/*
	 * Where a match whose first two characters are of classes a and b
	 * goes surely (pair_search: a sure run that the machine comes to
	 * from entry[a] as they tell, at the first or the second):
	 * pair[a * ncls + b], pc + 1 with PAIR_TOOK for the second and
	 * START_RUN, 0 for none; haspair[a], whether any b has one. NULL
	 * for a long program.
	 */
	uint16_t *pair;
	unsigned ncls;
	uint8_t haspair[SCAN_CLASSES];
	/* entry[], with START_RUN where it is a run that may end the match */
	uint32_t start[SCAN_CLASSES];
	/*
	 * Where a match whose first two characters are ASCII bytes a and b
	 * goes: start[] and pair[] made one, apath[a << 7 | b] = pc with
	 * START_RUN, and PAIR_TOOK where it is at b (16 K entries: no class
	 * of either looked up, no product). NULL with pair.
	 */
	uint16_t *apath;
};
/* a start (pc) or pair (pc + 1) at an I_STAR or I_PLUS that may end a match */
#define START_RUN 0x8000u
/* a pair's run starts at the second character */
#define PAIR_TOOK 0x4000u

/* A backtrack entry: resume at pc, pos; a run's (lo != NONE) steps back to lo. */
struct bt {
	uint32_t pc;
	size_t pos, lo;
};
#define BT_SPLIT ((size_t)-1)

struct parse {
	const char *p;
	struct scan *sc;
	int bad;
};

static struct node *
node_new(int kind)
{
	struct node *n = xcalloc(1, sizeof *n);

	n->kind = kind;
	return n;
}

static void
node_add(struct node *n, struct node *k)
{
	n->kid = xgrow(n->kid, &n->capkid, n->nkid + 1, sizeof *n->kid);
	n->kid[n->nkid++] = k;
}

static void
node_free(struct node *n)
{
	size_t i;

	if (n == NULL)
		return;
	for (i = 0; i < n->nkid; i++)
		node_free(n->kid[i]);
	free(n->kid);
	free(n);
}

/*
 * Atom p[0..n) under ci, as the pattern of its runs ("(?i)A+": an atom
 * is one item, which + repeats whole, and a repeated item needs no
 * backtrack stack as a group would): its index (of its set, made by
 * scan_classes).
 */
static int
scan_atom(struct scan *sc, const char *p, size_t n, int ci)
{
	struct buf b = { 0 };
	size_t i;

	buf_printf(&b, "%s%.*s+", ci ? "(?i)" : "", (int)n, p);
	buf_addc(&b, '\0');
	for (i = 0; i < sc->nsets; i++)
		if (strcmp(sc->atom[i], b.p) == 0) {
			buf_free(&b);
			return (int)i;
		}
	sc->atom = xgrow(sc->atom, &sc->capatom, sc->nsets + 1, sizeof *sc->atom);
	sc->atom[sc->nsets] = b.p;
	return (int)sc->nsets++;
}

/* The code point at s[i] (valid UTF-8 of at most three bytes). */
static uint32_t
plane_cp(const unsigned char *s, size_t i)
{
	if (s[i] < 0x80)
		return s[i];
	if (s[i] < 0xe0)
		return (uint32_t)(s[i] & 0x1f) << 6 | (s[i + 1] & 0x3f);
	return (uint32_t)(s[i] & 0x0f) << 12 | (uint32_t)(s[i + 1] & 0x3f) << 6 |
	    (s[i + 2] & 0x3f);
}

/* The code point after cp in the plane (the surrogates left out). */
static uint32_t
plane_next(uint32_t cp)
{
	return cp == 0xd7ff ? 0xe000 : cp + 1;
}

/* The length of the character of the plane (valid UTF-8) that byte c leads. */
static inline size_t
bmp_len(unsigned c)
{
	return c < 0x80 ? 1 : c < 0xe0 ? 2 : 3;
}

/*
 * Whether p is a class escape or a property ("\d", "\w", "\s", "\p{..}"):
 * a backslash and a letter or digit, but for the escapes of one character
 * (\x.., \r, \n, \t, \f, \a, \e).
 */
static int
class_escape(const char *p)
{
	return p[0] == '\\' && isalnum((unsigned char)p[1]) &&
	    strchr("xrntfae", p[1]) == NULL;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The offsets in s[0..n) (valid UTF-8) of the start and end of each match
 * of pattern, appended to *off; -1 where PCRE2 refuses the pattern.
 */
static int
match_all(const char *pattern, const unsigned char *s, size_t n, size_t **off,
    size_t *noff, size_t *capoff)
{
	pcre2_code *re;
	pcre2_match_data *md;
	PCRE2_SIZE at, *ov;
	int e, rc;

	re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
	    PCRE2_UTF | PCRE2_UCP, &e, &at, NULL);
	if (re == NULL)
		return -1;
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	if ((md = pcre2_match_data_create_from_pattern(re, NULL)) == NULL)
		owt_fatal("out of memory");
	ov = pcre2_get_ovector_pointer(md);
	for (at = 0; (rc = pcre2_match(re, (PCRE2_SPTR)s, n, at,
	    PCRE2_NO_UTF_CHECK, md, NULL)) >= 0; at = ov[1]) {
		*off = xgrow(*off, capoff, *noff + 2, sizeof **off);
		(*off)[(*noff)++] = ov[0];
		(*off)[(*noff)++] = ov[1];
	}
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

/*
 * Of an atom ("(?i)X+") that takes few code points, itself; of one that
 * negates such a class ("[^...]+"), the class ("[...]+"); else NULL. Few:
 * a literal, an escaped character, a class of those and ranges of them,
 * not a property, a class escape or any character (only the time that
 * scan_classes takes hangs on it: the sets are exact either way).
 */
static char *
few_atom(const char *atom, int *neg)
{
	const char *x = atom + (strncmp(atom, "(?i)", 4) == 0 ? 4 : 0);
	size_t i, n = strlen(x) - 1;
	char *r;

	*neg = x[0] == '[' && x[1] == '^' && x[2] != '^';
	if (x[0] == '.' || (x[0] == '[' && x[1] == '^' && !*neg))
		return NULL;
	if (class_escape(x))
		return NULL;
	if (x[0] == '[')
		for (i = 1 + *neg; i < n; i++)
			if (x[i] == '\\' && class_escape(x + i++))
				return NULL;
	r = xstrdup(atom);
	if (*neg)	/* "[^" to "[" */
		memmove(r + (x - atom) + 1, r + (x - atom) + 2, n);
	return r;
}

/*
 * The first atom whose core (derive's, not NULL at a) is atom a's: a
 * where none before it has the same; its runs serve them all.
 */
static size_t
first_core(char *const *core, size_t a)
{
	size_t c;

	for (c = 0; c < a && (core[c] == NULL || strcmp(core[c], core[a]) != 0);
	    c++)
		;
	return c;
}

/* Runs of the plane: the intervals [r[2k], r[2k + 1]). */
struct runs {
	uint32_t *r;
	size_t n, cap;
};

static void
runs_add(struct runs *rs, uint32_t lo, uint32_t hi)
{
	rs->r = xgrow(rs->r, &rs->cap, rs->n + 2, sizeof *rs->r);
	rs->r[rs->n++] = lo;
	rs->r[rs->n++] = hi;
}

/* The gaps between runs r[0..n) (in order), the runs of the rest, into out. */
static void
runs_not(const uint32_t *r, size_t n, struct runs *out)
{
	uint32_t prev = 0;
	size_t k;

	for (k = 0; k < n; k += 2) {
		if (r[k] > prev)
			runs_add(out, prev, r[k]);
		prev = r[k + 1];
	}
	if (prev < SCAN_LIMIT)
		runs_add(out, prev, SCAN_LIMIT);
}

/*
 * The runs in the plane of a few atom pattern, whose code points are
 * among fcp[0..nf) (the string fs[0..flen), each at foff[]), into out;
 * -1 where PCRE2 fails.
 */
static int
few_runs(const char *pattern, const unsigned char *fs, size_t flen,
    const uint32_t *fcp, const size_t *foff, size_t nf, struct runs *out)
{
	size_t *off = NULL, noff = 0, capoff = 0, k, i;
	uint8_t *mem;
	uint32_t lo;

	if (match_all(pattern, fs, flen, &off, &noff, &capoff) < 0) {
		free(off);
		return -1;
	}
	mem = xcalloc(nf + 1, 1);
	for (k = 0, i = 0; k < noff; k += 2) {
		while (foff[i] < off[k])
			i++;
		for (; i < nf && foff[i] < off[k + 1]; i++)
			mem[i] = 1;
	}
	for (i = 0; i < nf; i++) {
		if (!mem[i])
			continue;
		lo = fcp[i];
		while (i + 1 < nf && mem[i + 1] && fcp[i + 1] ==
		    plane_next(fcp[i]))
			i++;
		runs_add(out, lo, plane_next(fcp[i]));
	}
	free(mem);
	free(off);
	return 0;
}

/*
 * The length of one character of a class at p ("\p{L}", "\x{41}", "\n",
 * "a"), 0 at its end or where it is what derive() does not know.
 */
static size_t
class_one(const char *p)
{
	const char *q;
	size_t n;

	if (*p == '\0' || *p == ']' || *p == '[')
		return 0;
	if (*p == '\\') {
		if ((p[1] == 'p' || p[1] == 'P' || p[1] == 'x') && p[2] == '{')
			return (q = strchr(p, '}')) != NULL ? (size_t)(q + 1 - p) :
			    0;
		if (p[1] == '\0' || strchr("xQENco0123456789", p[1]) != NULL)
			return 0;
		return 2;
	}
	for (n = 1; (p[n] & 0xc0) == 0x80; n++)
		;
	return n;
}

/* The length of the item of a class at p: a character or a range. */
static size_t
class_item(const char *p)
{
	size_t n, m;

	if ((n = class_one(p)) == 0)
		return 0;
	if (p[n] == '-' && p[n + 1] != ']' && (m = class_one(p + n + 1)) > 0)
		return n + 1 + m;
	return n;
}

/* The atom "[ITEMS]+" of a class's items (NUL-terminated); items is freed. */
static char *
class_of(struct buf *items)
{
	struct buf b = { 0 };

	buf_printf(&b, "[%.*s]+", (int)items->len, items->p);
	buf_addc(&b, '\0');
	buf_free(items);
	return b.p;
}

/*
 * Of an atom "[^...]+": the other atoms "[...]+" whose items it has,
 * each whole (dep[b] 1), the class of the few of the rest ("[...]+",
 * few_atom's) or NULL in *rest, and the class of the others (properties,
 * class escapes) or NULL in *core; 0, or -1 for any other atom. A class
 * is the union of its items: the atom's set is the plane less theirs,
 * without a run of PCRE2 over the plane of its own (the core's may serve
 * more than one).
 */
static int
derive(const struct scan *sc, size_t a, uint8_t *dep, char **rest,
    char **core)
{
	const char *s = sc->atom[a], *p, *end, *t;
	char *cls;
	struct buf r = { 0 }, co = { 0 };
	size_t n = strlen(s), b, bn, best, bb = 0, k, m;
	int any = 0, ng;

	*rest = *core = NULL;
	if (n < 5 || s[0] != '[' || s[1] != '^' || s[2] == '^' || s[2] == ']' ||
	    strcmp(s + n - 2, "]+") != 0)
		return -1;
	memset(dep, 0, sc->natoms);
	for (p = s + 2, end = s + n - 2; p < end;) {
		/* the longest other atom's items here */
		for (b = 0, best = 0; b < sc->natoms; b++) {
			t = sc->atom[b];
			bn = strlen(t);
			if (b == a || bn < 4 || t[0] != '[' || t[1] == '^' ||
			    t[1] == ']' || strcmp(t + bn - 2, "]+") != 0)
				continue;
			bn -= 3;
			if (bn <= best || bn > (size_t)(end - p) ||
			    memcmp(p, t + 1, bn) != 0)
				continue;
			for (k = 0; k < bn && (m = class_item(p + k)) > 0; k += m)
				;
			if (k == bn) {
				best = bn;
				bb = b;
			}
		}
		if (best > 0) {
			dep[bb] = 1;
			any = 1;
			p += best;
			continue;
		}
		if ((m = class_item(p)) == 0 || m > (size_t)(end - p))
			break;
		if (class_escape(p))
			buf_add(&co, p, m);
		else
			buf_add(&r, p, m);
		p += m;
	}
	if (p < end || (!any && co.len == 0)) {
		buf_free(&r);
		buf_free(&co);
		return -1;
	}
	if (co.len > 0)
		*core = class_of(&co);
	if (r.len > 0) {
		cls = class_of(&r);
		*rest = few_atom(cls, &ng);
		free(cls);
		if (*rest == NULL || ng) {
			free(*rest);
			free(*core);
			*rest = *core = NULL;
			return -1;
		}
	}
	return 0;
}

/*
 * The classes of the plane and the atoms' sets. PCRE2 finds each atom's
 * runs in the string of every code point of the plane, in order (the
 * surrogates left out), so that a run is an interval of code points; the
 * ends of all runs cut the plane into intervals, each taken or left
 * whole by every atom, and the intervals that every atom treats alike
 * are one class. -1 where PCRE2 refuses an atom, or there are more than
 * SCAN_CLASSES classes.
 *
 * An atom of few code points (few_atom) is run over the string of those
 * that any of them takes instead (found by their alternation, run once
 * over the plane), and a class that negates one is the plane less its
 * runs: the same runs, for a run over the plane for all of them instead
 * of one each (PCRE2 over the plane is most of a program's start-up).
 */
static int
scan_classes(struct scan *sc)
{
	unsigned char *plane, *fs = NULL;
	uint32_t *run = NULL, *cut = NULL, *fcp = NULL, cp, lo, hi;
	size_t *first = NULL, *j = NULL, *off = NULL, *foff = NULL, nrun = 0;
	size_t caprun = 0, ncut = 0, capcut = 0, a, k, c, i, ncls = 0, nw, nu;
	size_t plen = 0, noff = 0, capoff = 0, nf = 0, capfcp = 0, capfoff = 0;
	size_t flen = 0;
	uint64_t *sig = NULL, *cur = NULL;
	struct buf alt = { 0 };
	struct runs *ar = NULL, u = { 0 };
	char **few, **rest, **core, *t;
	uint8_t *neg, *der, *dep;
	int ok = -1, ng;

	plane = xmalloc(3 * SCAN_LIMIT);
	for (cp = 0; cp < SCAN_LIMIT; cp = plane_next(cp))
		if (cp < 0x80)
			plane[plen++] = (unsigned char)cp;
		else if (cp < 0x800) {
			plane[plen++] = (unsigned char)(0xc0 | cp >> 6);
			plane[plen++] = (unsigned char)(0x80 | (cp & 63));
		} else {
			plane[plen++] = (unsigned char)(0xe0 | cp >> 12);
			plane[plen++] = (unsigned char)(0x80 | (cp >> 6 & 63));
			plane[plen++] = (unsigned char)(0x80 | (cp & 63));
		}
	sc->natoms = sc->nsets;
	few = xcalloc(sc->natoms + 1, sizeof *few);
	rest = xcalloc(sc->natoms + 1, sizeof *rest);
	core = xcalloc(sc->natoms + 1, sizeof *core);
	neg = xcalloc(sc->natoms + 1, sizeof *neg);
	der = xcalloc(sc->natoms + 1, sizeof *der);
	dep = xcalloc(sc->natoms * sc->natoms + 1, sizeof *dep);
	for (a = 0; a < sc->natoms; a++) {
		if ((few[a] = few_atom(sc->atom[a], &ng)) != NULL)
			neg[a] = (uint8_t)ng;
		else if (derive(sc, a, dep + a * sc->natoms, &rest[a],
		    &core[a]) == 0)
			der[a] = 1;
		/* the few, and the rest of the derived, in the alternation */
		if ((t = few[a] != NULL ? few[a] : rest[a]) != NULL) {
			ng = strncmp(t, "(?i)", 4) == 0;
			buf_printf(&alt, "%s(?%s:%.*s)", alt.len ? "|" : "(?:",
			    ng ? "i" : "", (int)strlen(t) - 1 - 4 * ng, t + 4 * ng);
		}
	}
	if (alt.len > 0) {
		/*
		 * the code points that any of them takes, as a string (one a
		 * match: a repeated group would need PCRE2's stack for a long
		 * run; where PCRE2 fails, each over the plane after all)
		 */
		buf_adds(&alt, ")");
		buf_addc(&alt, '\0');
		if (match_all(alt.p, plane, plen, &off, &noff, &capoff) < 0)
			for (a = 0; a < sc->natoms; a++) {
				free(few[a]);
				free(rest[a]);
				free(core[a]);
				few[a] = rest[a] = core[a] = NULL;
				der[a] = 0;
			}
		fs = xmalloc(plen);
		for (k = 0; k < noff; k += 2)
			for (i = off[k]; i < off[k + 1]; i += bmp_len(plane[i])) {
				fcp = xgrow(fcp, &capfcp, nf + 1, sizeof *fcp);
				foff = xgrow(foff, &capfoff, nf + 1, sizeof *foff);
				fcp[nf] = plane_cp(plane, i);
				foff[nf++] = flen;
				memcpy(fs + flen, plane + i, bmp_len(plane[i]));
				flen += bmp_len(plane[i]);
			}
	}
	/* each atom's runs: over the plane, over the few, of the others */
	ar = xcalloc(2 * sc->natoms + 1, sizeof *ar);
	for (a = 0; a < 2 * sc->natoms; a++) {
		noff = 0;
		/* after the atoms, the cores (each once) */
		if (a >= sc->natoms) {
			if (core[a - sc->natoms] == NULL ||
			    first_core(core, a - sc->natoms) < a - sc->natoms)
				continue;
		} else if (der[a])
			continue;
		if (a >= sc->natoms || few[a] == NULL) {
			if (match_all(a < sc->natoms ? sc->atom[a] :
			    core[a - sc->natoms], plane,
			    plen, &off, &noff, &capoff) < 0)
				goto out;
			for (k = 0; k < noff; k += 2) {
				lo = plane_cp(plane, off[k]);
				hi = off[k + 1] < plen ? plane_cp(plane, off[k + 1]) :
				    SCAN_LIMIT;
				runs_add(&ar[a], lo, hi);
			}
			continue;
		}
		u.n = 0;
		if (few_runs(few[a], fs, flen, fcp, foff, nf, neg[a] ? &u :
		    &ar[a]) < 0)
			goto out;
		if (neg[a])
			runs_not(u.r, u.n, &ar[a]);
	}
	for (a = 0; a < sc->natoms; a++) {
		if (!der[a])
			continue;
		u.n = 0;
		for (c = 0; c < sc->natoms; c++)
			if (dep[a * sc->natoms + c])
				for (k = 0; k < ar[c].n; k += 2)
					runs_add(&u, ar[c].r[k], ar[c].r[k + 1]);
		/* the core's runs: of the first atom with the same core */
		if (core[a] != NULL)
			for (c = first_core(core, a), k = 0;
			    k < ar[sc->natoms + c].n; k += 2)
				runs_add(&u, ar[sc->natoms + c].r[k],
				    ar[sc->natoms + c].r[k + 1]);
		if (rest[a] != NULL && few_runs(rest[a], fs, flen, fcp, foff,
		    nf, &u) < 0)
			goto out;
		/* their union (runs in order, those that meet joined), less */
		qsort(u.r, u.n / 2, 2 * sizeof *u.r, cmp_u32);
		for (k = 0, i = 0; k < u.n; k += 2)
			if (i > 0 && u.r[k] <= u.r[i - 1]) {
				if (u.r[k + 1] > u.r[i - 1])
					u.r[i - 1] = u.r[k + 1];
			} else {
				u.r[i++] = u.r[k];
				u.r[i++] = u.r[k + 1];
			}
		runs_not(u.r, i, &ar[a]);
	}
	first = xcalloc(sc->natoms + 1, sizeof *first);
	for (a = 0; a < sc->natoms; a++) {
		first[a] = nrun;
		run = xgrow(run, &caprun, nrun + ar[a].n + 1, sizeof *run);
		memcpy(run + nrun, ar[a].r, ar[a].n * sizeof *run);
		nrun += ar[a].n;
	}
	first[a] = nrun;
	cut = xgrow(cut, &capcut, nrun + 2, sizeof *cut);
	memcpy(cut, run, nrun * sizeof *cut);
	ncut = nrun;
	cut[ncut++] = 0;
	cut[ncut++] = SCAN_LIMIT;
	qsort(cut, ncut, sizeof *cut, cmp_u32);
	for (i = 1, nu = 1; i < ncut; i++)
		if (cut[i] != cut[nu - 1])
			cut[nu++] = cut[i];
	/* each interval's signature: a bit an atom; the same, the same class */
	nw = sc->natoms / 64 + 1;
	cur = xcalloc(nw, sizeof *cur);
	sig = xcalloc(SCAN_CLASSES * nw, sizeof *sig);
	j = xcalloc(sc->natoms + 1, sizeof *j);
	for (a = 0; a < sc->natoms; a++)
		j[a] = first[a];
	for (k = 0; k + 1 < nu; k++) {
		memset(cur, 0, nw * sizeof *cur);
		for (a = 0; a < sc->natoms; a++) {
			while (j[a] < first[a + 1] && run[j[a] + 1] <= cut[k])
				j[a] += 2;
			if (j[a] < first[a + 1] && run[j[a]] <= cut[k])
				cur[a / 64] |= 1ull << (a % 64);
		}
		for (c = 0; c < ncls && memcmp(sig + c * nw, cur, nw *
		    sizeof *cur) != 0; c++)
			;
		if (c == ncls) {
			if (ncls == SCAN_CLASSES)
				goto out;
			memcpy(sig + ncls++ * nw, cur, nw * sizeof *cur);
		}
		memset(sc->cls + cut[k], (int)c, cut[k + 1] - cut[k]);
	}
	sc->ncls = (unsigned)ncls;
	sc->sets = xgrow(sc->sets, &sc->capsets, sc->natoms, sizeof *sc->sets);
	memset(sc->sets, 0, sc->natoms * sizeof *sc->sets);
	for (a = 0; a < sc->natoms; a++) {
		for (c = 0; c < ncls; c++)
			if (sig[c * nw + a / 64] >> (a % 64) & 1)
				sc->sets[a].w[c / 64] |= 1ull << (c % 64);
		for (i = 0; i < 128; i++)
			if (in_set(&sc->sets[a], sc->cls[i]))
				sc->sets[a].a[i] = 1;
	}
	ok = 0;
out:
	for (a = 0; a < sc->natoms; a++) {
		free(few[a]);
		free(rest[a]);
		free(core[a]);
		if (ar != NULL) {
			free(ar[a].r);
			free(ar[sc->natoms + a].r);
		}
	}
	free(few);
	free(rest);
	free(core);
	free(neg);
	free(der);
	free(dep);
	free(ar);
	free(u.r);
	buf_free(&alt);
	free(plane);
	free(fs);
	free(fcp);
	free(foff);
	free(off);
	free(run);
	free(cut);
	free(first);
	free(j);
	free(sig);
	free(cur);
	return ok;
}

static struct node *parse_alt(struct parse *ps, int ci);

/* One atom, with its quantifier; NULL at | or ) or the end. */
static struct node *
parse_quant(struct parse *ps, int ci)
{
	const char *p = ps->p, *a = p;
	struct node *n = NULL, *r;
	unsigned long lo, hi;
	char *end;
	int k, set;

	if (*p == '\0' || *p == '|' || *p == ')')
		return NULL;
	if (*p == '(') {
		int gci = ci, look = -1;

		p++;
		if (p[0] == '?') {
			if (p[1] == ':')
				p += 2;
			else if (p[1] == 'i' && p[2] == ':')
				gci = 1, p += 3;
			else if (p[1] == '!')
				look = 1, p += 2;
			else if (p[1] == '=')
				look = 0, p += 2;
			else {
				ps->bad = 1;
				return NULL;
			}
		}
		ps->p = p;
		r = parse_alt(ps, gci);
		if (ps->bad || *ps->p != ')') {
			node_free(r);
			ps->bad = 1;
			return NULL;
		}
		p = ps->p + 1;
		if (look >= 0) {
			n = node_new(N_LOOK);
			n->neg = look;
			node_add(n, r);
		} else
			n = r;
	} else {
		if (*p == '[') {
			p++;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			for (; *p != ']'; p++) {
				if (*p == '\0' || (*p == '[' && p[1] == ':')) {
					ps->bad = 1;
					return NULL;
				}
				if (*p == '\\' && p[1] != '\0')
					p++;
			}
			p++;
		} else if (*p == '\\') {
			p++;
			if (*p == '\0' || strchr("bBAzZGKQEgkRXC123456789", *p)) {
				ps->bad = 1;
				return NULL;
			}
			if ((*p == 'p' || *p == 'P' || *p == 'x') && p[1] == '{') {
				if ((p = strchr(p, '}')) == NULL) {
					ps->bad = 1;
					return NULL;
				}
			} else if (*p == 'x')
				p += 2;
			p++;
		} else if (strchr("^$*+?{", *p)) {
			ps->bad = 1;
			return NULL;
		} else {
			/* one character, UTF-8 */
			p++;
			while ((*p & 0xc0) == 0x80)
				p++;
		}
		if ((set = scan_atom(ps->sc, a, (size_t)(p - a), ci)) < 0) {
			ps->bad = 1;
			return NULL;
		}
		n = node_new(N_SET);
		n->set = (uint32_t)set;
	}
	/* quantifiers, greedy */
	for (;;) {
		if (*p == '?')
			lo = 0, hi = 1, k = 1;
		else if (*p == '*')
			lo = 0, hi = SCAN_INF, k = 1;
		else if (*p == '+')
			lo = 1, hi = SCAN_INF, k = 1;
		else if (*p == '{' && p[1] >= '0' && p[1] <= '9') {
			lo = hi = strtoul(p + 1, &end, 10);
			if (*end == ',' && end[1] == '}') {
				hi = SCAN_INF;
				end++;
			} else if (*end == ',' && end[1] >= '0' && end[1] <= '9')
				hi = strtoul(end + 1, &end, 10);
			if (*end != '}' || hi < lo || lo > 100 ||
			    (hi != SCAN_INF && hi > 100)) {
				node_free(n);
				ps->bad = 1;
				return NULL;
			}
			k = (int)(end + 1 - p);
		} else
			break;
		p += k;
		if (*p == '?' || *p == '+') {	/* lazy, possessive */
			node_free(n);
			ps->bad = 1;
			return NULL;
		}
		r = node_new(N_REP);
		r->min = (uint32_t)lo;
		r->max = (uint32_t)hi;
		node_add(r, n);
		n = r;
	}
	ps->p = p;
	return n;
}

static struct node *
parse_alt(struct parse *ps, int ci)
{
	struct node *alt = node_new(N_ALT), *cat, *q;

	for (;;) {
		cat = node_new(N_CAT);
		while ((q = parse_quant(ps, ci)) != NULL)
			node_add(cat, q);
		node_add(alt, cat);
		if (ps->bad || *ps->p != '|')
			break;
		ps->p++;
	}
	return alt;
}

/* Whether n can match the empty string. */
static int
nullable(const struct node *n)
{
	size_t i;

	switch (n->kind) {
	case N_SET:
		return 0;
	case N_LOOK:
		return 1;
	case N_REP:
		return n->min == 0 || nullable(n->kid[0]);
	case N_CAT:
		for (i = 0; i < n->nkid; i++)
			if (!nullable(n->kid[i]))
				return 0;
		return 1;
	default:
		for (i = 0; i < n->nkid; i++)
			if (nullable(n->kid[i]))
				return 1;
		return 0;
	}
}

static uint32_t
emit(struct scan *sc, int op)
{
	sc->code = xgrow(sc->code, &sc->capcode, sc->ncode + 1, sizeof *sc->code);
	memset(&sc->code[sc->ncode], 0, sizeof *sc->code);
	sc->code[sc->ncode].op = (uint8_t)op;
	return (uint32_t)sc->ncode++;
}

/* Code for n; -1 where a repeat could loop on the empty string. */
static int
gen(struct scan *sc, const struct node *n)
{
	uint32_t i, l = 0, *fix = NULL;
	size_t nfix = 0, capfix = 0, k;

	switch (n->kind) {
	case N_SET:
		l = emit(sc, I_SET);
		sc->code[l].set = n->set;
		return 0;
	case N_CAT:
		for (k = 0; k < n->nkid; k++)
			if (gen(sc, n->kid[k]) < 0)
				return -1;
		return 0;
	case N_LOOK:
		l = emit(sc, I_LOOK);
		sc->code[l].neg = (uint8_t)n->neg;
		if (gen(sc, n->kid[0]) < 0)
			return -1;
		emit(sc, I_LEND);
		sc->code[l].x = (uint32_t)sc->ncode;
		sc->code[l].one = sc->code[l].x == l + 3 &&
		    sc->code[l + 1].op == I_SET;
		return 0;
	case N_ALT:
		for (k = 0; k < n->nkid; k++) {
			if (k + 1 < n->nkid) {
				l = emit(sc, I_SPLIT);
				sc->code[l].x = l + 1;
			}
			if (gen(sc, n->kid[k]) < 0) {
				free(fix);
				return -1;
			}
			if (k + 1 < n->nkid) {
				fix = xgrow(fix, &capfix, nfix + 1, sizeof *fix);
				fix[nfix++] = emit(sc, I_JMP);
				sc->code[l].y = (uint32_t)sc->ncode;
			}
		}
		for (k = 0; k < nfix; k++)
			sc->code[fix[k]].x = (uint32_t)sc->ncode;
		free(fix);
		return 0;
	}
	/* N_REP */
	if (n->kid[0]->kind == N_SET) {
		l = emit(sc, I_RUN);
		sc->code[l].set = n->kid[0]->set;
		sc->code[l].min = n->min;
		sc->code[l].max = n->max;
		return 0;
	}
	if (n->max > 1 && nullable(n->kid[0]))
		return -1;
	for (i = 0; i < n->min; i++)
		if (gen(sc, n->kid[0]) < 0)
			return -1;
	if (n->max == SCAN_INF) {
		l = emit(sc, I_SPLIT);
		sc->code[l].x = l + 1;
		if (gen(sc, n->kid[0]) < 0)
			return -1;
		sc->code[emit(sc, I_JMP)].x = l;
		sc->code[l].y = (uint32_t)sc->ncode;
		return 0;
	}
	for (i = n->min; i < n->max; i++) {
		l = emit(sc, I_SPLIT);
		sc->code[l].x = l + 1;
		fix = xgrow(fix, &capfix, nfix + 1, sizeof *fix);
		fix[nfix++] = l;
		if (gen(sc, n->kid[0]) < 0) {
			free(fix);
			return -1;
		}
	}
	for (k = 0; k < nfix; k++)
		sc->code[fix[k]].y = (uint32_t)sc->ncode;
	free(fix);
	return 0;
}

static void
scan_free(struct scan *sc)
{
	size_t i;

	if (sc == NULL)
		return;
	for (i = 0; i < sc->nsets; i++)
		free(sc->atom[i]);
	free(sc->atom);
	free(sc->sets);
	free(sc->code);
	free(sc->pair);
	free(sc->apath);
	free(sc);
}

#define FIRST_ANY 0xffffffffu

/*
 * The set of the characters that a path from pc can take first (into a
 * new set, its index), or FIRST_ANY where a path may end, look ahead or
 * loop before it takes one; memo[pc] keeps each answer (0: not yet, 1:
 * being worked out, 2: FIRST_ANY, else index + 3).
 */
static uint32_t
first(struct scan *sc, uint32_t pc, uint32_t *memo)
{
	const struct inst in = sc->code[pc];
	uint32_t a, b, r, i;
	struct scan_set u;

	if (memo[pc] == 1)
		return FIRST_ANY;
	if (memo[pc] == 2)
		return FIRST_ANY;
	if (memo[pc] != 0)
		return memo[pc] - 3;
	memo[pc] = 1;
	switch (in.op) {
	case I_SET:
		r = in.set;
		break;
	case I_RUN:
	case I_SPLIT:
	case I_JMP:
		a = in.op == I_JMP ? FIRST_ANY : in.op == I_RUN ? in.set :
		    first(sc, in.x, memo);
		b = in.op == I_JMP ? first(sc, in.x, memo) : in.op == I_RUN ?
		    (in.min > 0 ? in.set : first(sc, pc + 1, memo)) :
		    first(sc, in.y, memo);
		if (in.op == I_JMP || a == b) {
			r = b;
			break;
		}
		if (a == FIRST_ANY || b == FIRST_ANY) {
			r = FIRST_ANY;
			break;
		}
		for (i = 0; i < SCAN_CLASSES / 64; i++)
			u.w[i] = sc->sets[a].w[i] | sc->sets[b].w[i];
		for (i = 0; i < 256; i++)
			u.a[i] = sc->sets[a].a[i] | sc->sets[b].a[i];
		sc->sets = xgrow(sc->sets, &sc->capsets, sc->nsets + 1,
		    sizeof *sc->sets);
		sc->atom = xgrow(sc->atom, &sc->capatom, sc->nsets + 1,
		    sizeof *sc->atom);
		sc->sets[sc->nsets] = u;
		sc->atom[sc->nsets] = xstrdup("");
		r = (uint32_t)sc->nsets++;
		break;
	default:
		r = FIRST_ANY;
	}
	if (in.op == I_SPLIT) {
		a = sc->code[pc].fx = first(sc, in.x, memo);
		b = sc->code[pc].fy = first(sc, in.y, memo);
		for (i = 0; i < 128; i++)
			sc->code[pc].act[i] = (uint8_t)((a == FIRST_ANY ||
			    in_ascii(&sc->sets[a], i) ? ACT_X : 0) |
			    (b == FIRST_ANY || in_ascii(&sc->sets[b], i) ? ACT_Y : 0));
	}
	memo[pc] = r == FIRST_ANY ? 2 : r + 3;
	return r;
}

/*
 * Whether a match surely ends from pc: a path to I_MATCH that takes no
 * character and looks at none (a lookahead could fail), which the
 * machine tries before it gives up the backtrack points from before pc.
 * memo: 0 not yet, 1 being worked out, 2 no, 3 yes.
 */
static int
sure_end(const struct scan *sc, uint32_t pc, uint8_t *memo)
{
	const struct inst *in = &sc->code[pc];
	int r;

	if (memo[pc] != 0)
		return memo[pc] == 3;
	memo[pc] = 1;
	switch (in->op) {
	case I_MATCH:
		r = 1;
		break;
	case I_JMP:
		r = sure_end(sc, in->x, memo);
		break;
	case I_SPLIT:
		r = sure_end(sc, in->x, memo) || sure_end(sc, in->y, memo);
		break;
	case I_STAR:
	case I_OPT:
		r = sure_end(sc, pc + 1, memo);
		break;
	case I_RUN:
		r = in->min == 0 && sure_end(sc, pc + 1, memo);
		break;
	default:
		r = 0;
	}
	memo[pc] = r ? 3 : 2;
	return r;
}

/*
 * scan_run's search from pc with i of the first two characters of a
 * match (of classes c[0], c[1]) taken, as far as they tell, ways tried in
 * its order: 1 with the first sure run that takes a character in *to
 * (pc, and PAIR_TOOK where i is 1; the way there taken and what failed
 * before it are the machine's, and a match ends after the run: the match
 * is the machine's from there); 0 where every way fails; -1 where a way
 * looks past the two, or matches within them (the machine's then). In a
 * lookahead (look) 1 where it matches, at I_LEND.
 */
static int
pair_search(const struct scan *sc, uint32_t pc, unsigned i, const unsigned *c,
    int look, uint32_t *to, unsigned depth)
{
	const struct inst *in;
	int r, x, y;

	for (; depth < 4 * sc->ncode; depth++) {
		in = &sc->code[pc];
		if (in->op == I_JMP) {
			pc = in->x;
			continue;
		}
		if (in->op == I_MATCH && i == 0)	/* empty: refused */
			return 0;
		if (in->op == I_LEND)
			return look ? 1 : -1;
		if (i == 2 || in->op == I_MATCH || in->op == I_RUN)
			return -1;
		switch (in->op) {
		case I_SET:
			if (!in_set(&sc->sets[in->set], c[i]))
				return 0;
			i++;
			pc++;
			continue;
		case I_OPT:
			/* the one, then none */
			if (in_set(&sc->sets[in->set], c[i]) &&
			    (r = pair_search(sc, pc + 1, i + 1, c, look, to,
			    depth + 1)) != 0)
				return r;
			pc++;
			continue;
		case I_STAR:
		case I_PLUS:
			if (!in_set(&sc->sets[in->set], c[i])) {
				if (in->op == I_PLUS)
					return 0;
				pc++;
				continue;
			}
			if (!look && in->sure) {
				*to = pc | (i ? PAIR_TOOK : 0);
				return 1;
			}
			/* a run of c[0] alone, then (a star) none */
			if (i == 1 || in_set(&sc->sets[in->set], c[1]))
				return -1;
			if ((r = pair_search(sc, pc + 1, 1, c, look, to,
			    depth + 1)) != 0 || in->op == I_PLUS)
				return r;
			pc++;
			continue;
		case I_SPLIT:
			x = in->fx == FIRST_ANY || in_set(&sc->sets[in->fx], c[i]);
			y = in->fy == FIRST_ANY || in_set(&sc->sets[in->fy], c[i]);
			if (x && y && (r = pair_search(sc, in->x, i, c, look, to,
			    depth + 1)) != 0)
				return r;
			pc = x && !y ? in->x : in->y;
			continue;
		case I_LOOK:
			if (look || (r = pair_search(sc, pc + 1, i, c, 1, to,
			    depth + 1)) < 0)
				return -1;
			if ((r == 1) == in->neg)
				return 0;
			pc = in->x;
			continue;
		default:
			return -1;
		}
	}
	return -1;
}

/*
 * Whether the machine's first way from pc, at a character of class c (-1:
 * the end of the text), goes to I_MATCH taking nothing, as scan_run
 * takes it (its I_SPLIT tests).
 */
static int
tail_done(const struct scan *sc, uint32_t pc, int c)
{
	const struct inst *in;
	size_t steps;

	for (steps = 0; steps < sc->ncode; steps++) {
		in = &sc->code[pc];
		switch (in->op) {
		case I_MATCH:
			return 1;
		case I_JMP:
			pc = in->x;
			continue;
		case I_SPLIT:
			if (c < 0)
				pc = in->fx != FIRST_ANY ? in->y : in->x;
			else
				pc = in->fx == FIRST_ANY || in_set(&sc->sets[in->fx],
				    (unsigned)c) ? in->x : in->y;
			continue;
		case I_OPT:
		case I_STAR:
			if (c >= 0 && in_set(&sc->sets[in->set], (unsigned)c))
				return 0;
			pc++;
			continue;
		default:
			return 0;
		}
	}
	return 0;
}

/* Run pc's done[], done_end and ends. */
static void
run_done(struct scan *sc, uint32_t pc)
{
	struct inst *in = &sc->code[pc];
	unsigned c;

	in->done_end = (uint8_t)tail_done(sc, pc + 1, -1);
	in->ends = in->done_end;
	for (c = 0; c < sc->ncls; c++)
		if (tail_done(sc, pc + 1, (int)c)) {
			in->done[c / 64] |= 1ull << (c % 64);
			in->ends = 1;
		}
}

/*
 * Where the machine may start a match from pc, its first character of
 * class c[0] (and with two, its second of c[1]): past each I_JMP, each
 * optional run that cannot take c[0] (which scan_run passes taking
 * nothing, pushing nothing), and each I_SPLIT of which one way alone can
 * take c[0] (scan_run's own tests) or, with two, whose first way surely
 * fails with both (pair_search: 0). The machine comes there with nothing
 * taken and no way left to try before it (each way passed failed and
 * gave back all it had pushed), so that it may as well start there.
 */
static uint32_t
entry_of(const struct scan *sc, uint32_t pc, const unsigned *c, int two)
{
	const struct inst *in;
	size_t steps;
	uint32_t to;
	int x, y;

	for (steps = 0; steps < sc->ncode; steps++) {
		in = &sc->code[pc];
		if (in->op == I_JMP) {
			pc = in->x;
			continue;
		}
		if ((in->op == I_OPT || in->op == I_STAR || (in->op == I_RUN &&
		    in->min == 0)) && !in_set(&sc->sets[in->set], c[0])) {
			pc++;
			continue;
		}
		if (in->op != I_SPLIT)
			break;
		x = in->fx == FIRST_ANY || in_set(&sc->sets[in->fx], c[0]);
		y = in->fy == FIRST_ANY || in_set(&sc->sets[in->fy], c[0]);
		if (x && y && (!two || pair_search(sc, in->x, 0, c, 0, &to, 0) != 0))
			break;
		pc = x && !y ? in->x : in->y;
	}
	return pc;
}

/* Whether pc is a run that may end the match (pretok_next's to take alone). */
static int
last_run(const struct scan *sc, uint32_t pc)
{
	return (sc->code[pc].op == I_STAR || sc->code[pc].op == I_PLUS) &&
	    sc->code[pc].ends;
}

/* The scanner of translated pattern, or NULL where it has what the scanner lacks. */
static struct scan *
scan_compile(const char *pattern)
{
	struct scan *sc = xcalloc(1, sizeof *sc);
	struct parse ps = { pattern, sc, 0 };
	struct node *n = parse_alt(&ps, 0);
	uint32_t *memo;
	size_t pc;
	unsigned c;

	if (ps.bad || *ps.p != '\0' || gen(sc, n) < 0 || scan_classes(sc) < 0) {
		node_free(n);
		scan_free(sc);
		return NULL;
	}
	emit(sc, I_MATCH);
	node_free(n);
	/* a jump to the match is the match: a run before it then ends it */
	for (pc = 0; pc < sc->ncode; pc++) {
		size_t to = pc, steps = 0;

		while (sc->code[to].op == I_JMP && steps++ < sc->ncode)
			to = sc->code[to].x;
		if (sc->code[pc].op == I_JMP && sc->code[to].op == I_MATCH)
			sc->code[pc].op = I_MATCH;
	}
	memo = xcalloc(sc->ncode, sizeof *memo);
	for (pc = 0; pc < sc->ncode; pc++)
		sc->code[pc].first = first(sc, (uint32_t)pc, memo);
	free(memo);
	/* after first(), which knows I_RUN alone */
	for (pc = 0; pc + 1 < sc->ncode; pc++)
		if (sc->code[pc].op == I_RUN && sc->code[pc].max == SCAN_INF &&
		    sc->code[pc].min <= 1) {
			sc->code[pc].op = sc->code[pc].min ? I_PLUS : I_STAR;
			sc->code[pc].last = sc->code[pc + 1].op == I_MATCH;
		} else if (sc->code[pc].op == I_RUN && sc->code[pc].min == 0 &&
		    sc->code[pc].max == 1 && sc->code[pc + 1].op != I_MATCH)
			sc->code[pc].op = I_OPT;
	for (pc = 0; pc < sc->ncode; pc++)
		if (sc->code[pc].op == I_STAR || sc->code[pc].op == I_PLUS)
			run_done(sc, (uint32_t)pc);
	for (c = 0; c < SCAN_CLASSES; c++) {
		sc->entry[c] = entry_of(sc, 0, &c, 0);
		sc->start[c] = sc->entry[c] | (last_run(sc, sc->entry[c]) ?
		    START_RUN : 0);
	}
	if (sc->ncode < PAIR_TOOK - 1) {
		uint8_t *m = xcalloc(sc->ncode, 1);
		unsigned two[2];
		uint32_t to, at;

		for (pc = 0; pc < sc->ncode; pc++)
			if (sc->code[pc].op == I_STAR ||
			    sc->code[pc].op == I_PLUS)
				sc->code[pc].sure = sc->code[pc].last ||
				    sure_end(sc, (uint32_t)pc + 1, m);
		free(m);
		sc->pair = xcalloc((size_t)sc->ncls * sc->ncls,
		    sizeof *sc->pair);
		for (two[0] = 0; two[0] < sc->ncls; two[0]++)
			for (two[1] = 0; two[1] < sc->ncls; two[1]++) {
				if (pair_search(sc, sc->entry[two[0]], 0, two, 0,
				    &to, 0) != 1) {
					/* no sure run: past what surely fails */
					to = entry_of(sc, sc->entry[two[0]], two, 1);
					if (to == sc->entry[two[0]])
						continue;
				}
				at = to & ~PAIR_TOOK;
				sc->pair[two[0] * sc->ncls + two[1]] =
				    (uint16_t)((at + 1) | (to & PAIR_TOOK) |
				    (last_run(sc, at) ? START_RUN : 0));
				sc->haspair[two[0]] = 1;
			}
		sc->apath = xcalloc(128 * 128, sizeof *sc->apath);
		for (c = 0; c < 128 * 128; c++) {
			unsigned a = sc->cls[c >> 7], b = sc->cls[c & 127];
			uint16_t f = sc->pair[a * sc->ncls + b];

			sc->apath[c] = f != 0 ? (uint16_t)(((f & ~(START_RUN |
			    PAIR_TOOK)) - 1) | (f & (START_RUN | PAIR_TOOK))) :
			    (uint16_t)sc->start[a];
		}
	}
	return sc;
}

/*
 * The class of the character at t[pos] (below SCAN_LIMIT) into *cl and
 * its length; 0 at the end; -1 for any other, or invalid UTF-8 (PCRE2's
 * then).
 */
static inline int
scan_char(const struct scan *sc, const unsigned char *t, size_t len,
    size_t pos, unsigned *cl)
{
	unsigned c, c1;

	if (pos >= len)
		return 0;
	c = t[pos];
	if (c < 0x80) {
		*cl = sc->cls[c];
		return 1;
	}
	if (c < 0xc2 || c > 0xef || pos + 1 >= len ||
	    ((c1 = t[pos + 1]) & 0xc0) != 0x80)
		return -1;
	if (c < 0xe0) {
		*cl = sc->cls[(c & 0x1f) << 6 | (c1 & 0x3f)];
		return 2;
	}
	/* three bytes: not overlong (E0 80..9F), not a surrogate (ED A0..BF) */
	if (pos + 2 >= len || (t[pos + 2] & 0xc0) != 0x80 ||
	    (c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0))
		return -1;
	*cl = sc->cls[(c & 0x0f) << 12 | (c1 & 0x3f) << 6 | (t[pos + 2] & 0x3f)];
	return 3;
}

#define SCAN_FAIL ((size_t)-1)
#define SCAN_GIVE_UP ((size_t)-2)

/*
 * The end of the run of set st's characters from pos, or SCAN_GIVE_UP
 * where it comes to one beyond the plane.
 */
static inline size_t
run_end(const struct scan *sc, const struct scan_set *st,
    const unsigned char *t, size_t len, size_t pos)
{
	unsigned cl;
	int c;

	/* the ASCII ones first, at a go */
	for (;;) {
		while (pos < len && in_ascii(st, t[pos]))
			pos++;
		if (pos >= len || t[pos] < 0x80)
			return pos;
		if ((c = scan_char(sc, t, len, pos, &cl)) < 0)
			return SCAN_GIVE_UP;
		if (!in_set(st, cl))
			return pos;
		pos += (size_t)c;
	}
}

/*
 * Whether the character at pos (< len) is in set f: 1 or 0; -1 where the
 * machine cannot tell (invalid UTF-8, a character beyond the plane: it
 * leaves those to PCRE2).
 */
static inline int
char_in(const struct scan *sc, uint32_t f, const unsigned char *t,
    size_t len, size_t pos)
{
	unsigned cl;

	if (t[pos] < 0x80)
		return in_ascii(&sc->sets[f], t[pos]);
	if (scan_char(sc, t, len, pos, &cl) <= 0)
		return -1;
	return in_set(&sc->sets[f], cl);
}

/*
 * Whether the way whose first characters are f (FIRST_ANY: any) can
 * start with the character at pos, one that a run took (valid, in the
 * plane).
 */
static inline int
takes(const struct scan *sc, uint32_t f, const unsigned char *t, size_t len,
    size_t pos)
{
	return f == FIRST_ANY || char_in(sc, f, t, len, pos) == 1;
}

/*
 * Whether the way whose first characters are f surely cannot start at
 * pos: the end of the text, or a character of the plane not in f.
 */
static inline int
cannot_start(const struct scan *sc, uint32_t f, const unsigned char *t,
    size_t len, size_t pos)
{
	return pos >= len || char_in(sc, f, t, len, pos) == 0;
}

/*
 * A run of [lo, p) given back: the start of its last character before p
 * that the way after it (first characters f) can start with, or lo,
 * which the caller tries.
 */
static inline size_t
give_back(const struct scan *sc, uint32_t f, const unsigned char *t,
    size_t len, size_t p, size_t lo)
{
	do {
		p--;
		while ((t[p] & 0xc0) == 0x80)
			p--;
	} while (p > lo && !takes(sc, f, t, len, p));
	return p;
}

/* A backtrack point: resume at pc, pos, down to lo (or BT_SPLIT). */
static inline void
push_bt(struct pretok_state *s, uint32_t pc, size_t pos, size_t lo)
{
	if (s->nbt == s->capbt)
		s->bt = xgrow(s->bt, &s->capbt, s->nbt + 1, sizeof *s->bt);
	s->bt[s->nbt++] = (struct bt){ pc, pos, lo };
}

/*
 * Run the machine from pc at pos: the end of the match (I_MATCH, not
 * empty: from start) or of the lookahead (I_LEND), SCAN_FAIL, or
 * SCAN_GIVE_UP.
 */
static size_t
scan_run(const struct scan *sc, struct pretok_state *s,
    const unsigned char *t, size_t len, uint32_t pc, size_t pos, size_t start)
{
	size_t base = s->nbt, p, pmin, r;
	const struct inst *in;
	const struct scan_set *st;
	struct bt *b;
	uint32_t k, f;
	unsigned u, cl;
	int c;

	for (;;) {
		in = &sc->code[pc];
		switch (in->op) {
		case I_SET:
			if ((c = scan_char(sc, t, len, pos, &cl)) < 0)
				goto give_up;
			if (c == 0 || !in_set(&sc->sets[in->set], cl))
				goto fail;
			pos += (size_t)c;
			pc++;
			continue;
		case I_STAR:
		case I_PLUS:
			/* the ASCII ones first, at a go */
			st = &sc->sets[in->set];
			for (p = pos;;) {
				while (p < len && in_ascii(st, t[p]))
					p++;
				if (p >= len || t[p] < 0x80)
					break;
				if ((c = scan_char(sc, t, len, p, &cl)) < 0)
					goto give_up;
				if (!in_set(st, cl))
					break;
				p += (size_t)c;
			}
			if (p == pos) {
				if (in->op == I_PLUS)
					goto fail;
				pc++;
				continue;
			}
			/* a run that ends a match: it is the match, no backtrack */
			if (in->last) {
				s->nbt = base;
				return p;
			}
			/* the end of the first character, for +'s backtrack */
			pmin = in->op == I_STAR ? pos : pos + bmp_len(t[pos]);
			/*
			 * The way after the run cannot start at its end (\s*
			 * then [\r\n]+ before a word): given back at once to
			 * the last character it can start with, or failed.
			 */
			f = sc->code[pc + 1].first;
			if (f != FIRST_ANY && cannot_start(sc, f, t, len, p)) {
				if (p == pmin)
					goto fail;
				p = give_back(sc, f, t, len, p, pmin);
				if (p == pmin && !takes(sc, f, t, len, p))
					goto fail;
			}
			if (p > pmin)
				push_bt(s, pc + 1, p, pmin);
			pos = p;
			pc++;
			continue;
		case I_OPT:
			/* one character or none, the one first (not before I_MATCH) */
			if ((c = scan_char(sc, t, len, pos, &cl)) < 0)
				goto give_up;
			if (c > 0 && in_set(&sc->sets[in->set], cl)) {
				push_bt(s, pc + 1, pos + (size_t)c, pos);
				pos += (size_t)c;
			}
			pc++;
			continue;
		case I_RUN:
			st = &sc->sets[in->set];
			pmin = in->min == 0 ? pos : SCAN_FAIL;
			for (k = 0, p = pos; k < in->max && p < len;) {
				if ((u = t[p]) < 0x80) {
					if (!in_ascii(st, u))
						break;
					p++;
				} else {
					if ((c = scan_char(sc, t, len, p, &cl)) < 0)
						goto give_up;
					if (!in_set(st, cl))
						break;
					p += (size_t)c;
				}
				if (++k == in->min)
					pmin = p;
			}
			if (k < in->min)
				goto fail;
			if (sc->code[pc + 1].op == I_MATCH && p > start) {
				s->nbt = base;
				return p;
			}
			if (p > pmin)
				push_bt(s, pc + 1, p, pmin);
			pos = p;
			pc++;
			continue;
		case I_SPLIT:
			/* a branch that cannot take the next character is passed over */
			if (pos < len && (u = t[pos]) < 0x80) {
				if (in->act[u] != (ACT_X | ACT_Y)) {
					pc = in->act[u] == ACT_X ? in->x : in->y;
					continue;
				}
			} else if ((c = scan_char(sc, t, len, pos, &cl)) > 0) {
				if (in->fx != FIRST_ANY &&
				    !in_set(&sc->sets[in->fx], cl)) {
					pc = in->y;
					continue;
				}
				if (in->fy != FIRST_ANY &&
				    !in_set(&sc->sets[in->fy], cl)) {
					pc = in->x;
					continue;
				}
			} else if (c == 0) {
				if (in->fx != FIRST_ANY) {
					pc = in->y;
					continue;
				}
				if (in->fy != FIRST_ANY) {
					pc = in->x;
					continue;
				}
			}
			push_bt(s, in->y, pos, BT_SPLIT);
			pc = in->x;
			continue;
		case I_JMP:
			pc = in->x;
			continue;
		case I_LOOK:
			if (in->one) {
				/* (?!\S): the next character's set alone */
				if ((c = scan_char(sc, t, len, pos, &cl)) < 0)
					goto give_up;
				if ((c > 0 && in_set(&sc->sets[sc->code[pc + 1].set],
				    cl)) == in->neg)
					goto fail;
				pc = in->x;
				continue;
			}
			r = scan_run(sc, s, t, len, pc + 1, pos, SCAN_FAIL);
			if (r == SCAN_GIVE_UP)
				goto give_up;
			if ((r != SCAN_FAIL) == in->neg)
				goto fail;
			pc = in->x;
			continue;
		case I_LEND:
			s->nbt = base;
			return pos;
		default:	/* I_MATCH */
			if (pos == start)
				goto fail;
			s->nbt = base;
			return pos;
		}
fail:
		if (s->nbt == base)
			return SCAN_FAIL;
		b = &s->bt[s->nbt - 1];
		pc = b->pc;
		if (b->lo == BT_SPLIT) {
			pos = b->pos;
			s->nbt--;
			continue;
		}
		/*
		 * A run gives back its last character, and the characters
		 * before it that the way after the run cannot take first
		 * (which it would try and fail on at once: \s*[\r\n]+ on
		 * a run of spaces gave them back one by one).
		 */
		f = sc->code[b->pc].first;
		b->pos = pos = give_back(sc, f, t, len, b->pos, b->lo);
		if (pos == b->lo) {
			s->nbt--;
			if (!takes(sc, f, t, len, pos))
				goto fail;
		}
	}
give_up:
	s->nbt = base;
	return SCAN_GIVE_UP;
}

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
		/* one a pair: 64 code points of three bytes, 4096 of four */
		for (cp = lo; cp <= hi;
		    cp = (cp | (cp < 0x10000 ? 63 : 4095)) + 1) {
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
 * Append the ranges of add ("\x{A}-\x{B}\x{C}...") that start below
 * limit to out.
 */
static void
add_below(struct buf *out, const char *add, unsigned long limit)
{
	const char *q;

	while ((add = strstr(add, "\\x{")) != NULL) {
		if ((q = strchr(add, '}')) == NULL)
			break;
		q++;
		if (strncmp(q, "-\\x{", 4) == 0 && (q = strchr(q, '}')) != NULL)
			q++;
		if (strtoul(add + 3, NULL, 16) < limit)
			buf_add(out, add, (size_t)(q - add));
		add = q;
	}
}

/*
 * pattern with \s and \S spelled out (PCRE2's \s has no U+0085) and,
 * with need, \p{L}, \p{N}, \p{M} and the letters' \p{Lu} ... \p{Lo}
 * given the code points of Unicode 16 that PCRE2's tables lack
 * (pretok_unicode.h; marked in need; those from limit on left out), into
 * out; -1 for \S inside a class, which a class cannot spell.
 */
static int
translate(const char *pattern, struct buf *out, uint8_t *need,
    unsigned long limit)
{
	const char *p, *add;
	size_t n;
	int in_class = 0;

	for (p = pattern; *p; p++) {
		if (*p == '\\' && need != NULL &&
		    (add = unicode_add(p, &n)) != NULL) {
			need_mark(need, add);
			buf_printf(out, in_class ? "%.*s" : "[%.*s", (int)n, p);
			add_below(out, add, limit);
			if (!in_class)
				buf_addc(out, ']');
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

	if (translate(pattern, &b, need, 0x110000) < 0) {
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
	struct buf b;
	int jit1 = 0, jit2 = 0;

	if ((p->re = compile(pattern, p->need, &jit1, err, errsize, code)) ==
	    NULL || (p->plain = compile(pattern, NULL, &jit2, err, errsize,
	    code)) == NULL) {
		pretok_free(p);
		return NULL;
	}
	p->jit = jit1 && jit2;
	/*
	 * the scanner's sets are re's: with Unicode 16's additions (those in
	 * its plane: the rest only slow PCRE2's runs over the plane)
	 */
	b = (struct buf){ 0 };
	translate(pattern, &b, p->need, SCAN_LIMIT);
	buf_addc(&b, '\0');
	p->scan = scan_compile(b.p);
	p->use_scan = p->scan != NULL;
	buf_free(&b);
	return p;
}

void
pretok_free(struct pretok *p)
{
	if (p == NULL)
		return;
	pcre2_code_free(p->re);
	pcre2_code_free(p->plain);
	scan_free(p->scan);
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
	free(s->bt);
	free(s);
}

/*
 * The end of the scanner's match at at: SCAN_FAIL, SCAN_GIVE_UP where
 * it has none (PCRE2's then).
 */
static inline size_t
scan_piece(const struct scan *sc, struct pretok_state *s,
    const unsigned char *t, size_t len, size_t at)
{
	const struct inst *in;
	size_t end, pos = at;
	unsigned cl, cl2;
	uint32_t pc;
	uint16_t f;
	int n;

	if (sc->apath != NULL && at + 1 < len && (t[at] | t[at + 1]) < 0x80) {
		f = sc->apath[t[at] << 7 | t[at + 1]];
		pc = f & ~PAIR_TOOK;
		pos = at + (f >> 14 & 1);	/* PAIR_TOOK */
	} else {
		if ((n = scan_char(sc, t, len, at, &cl)) <= 0)
			return SCAN_GIVE_UP;
		pc = sc->start[cl];
		/* a sure way to a run for the first two: start there */
		if (sc->haspair[cl] &&
		    scan_char(sc, t, len, at + (size_t)n, &cl2) > 0 &&
		    (f = sc->pair[cl * sc->ncls + cl2]) != 0) {
			pc = (((uint32_t)f & ~(START_RUN | PAIR_TOOK)) - 1) |
			    (f & START_RUN);
			if (f & PAIR_TOOK)
				pos = at + (size_t)n;
		}
	}
	/* a run that ends the match, without the machine */
	if (pc & START_RUN) {
		pc &= ~START_RUN;
		in = &sc->code[pc];
		end = run_end(sc, &sc->sets[in->set], t, len, pos);
		if (end > pos && end < SCAN_GIVE_UP) {
			if (in->last)
				return end;
			/* what follows the run: to I_MATCH at once? */
			n = scan_char(sc, t, len, end, &cl2);
			if (n == 0 ? in->done_end : n > 0 &&
			    (in->done[cl2 >> 6] >> (cl2 & 63) & 1))
				return end;
		}
	}
	return scan_run(sc, s, t, len, pc, pos, at);
}

size_t
pretok_next(struct pretok_state *s, const char *text, size_t len, size_t at)
{
	PCRE2_SIZE *ov;
	size_t end;
	int rc;

	if (at == 0) {
		s->text = NULL;
		s->re = NULL;	/* chosen when PCRE2 is first asked */
	} else if (s->text == text && s->start == at && s->end <= len)
		return s->end - at;
	if (s->p->use_scan && (end = scan_piece(s->p->scan, s,
	    (const unsigned char *)text, len, at)) < SCAN_GIVE_UP)
		return end - at;
	if (s->re == NULL)
		s->re = needs_added(s->p, text, len) ? s->p->re : s->p->plain;
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

int
pretok_has_scanner(const struct pretok *p)
{
	return p->scan != NULL;
}

void
pretok_use_scanner(struct pretok *p, int on)
{
	p->use_scan = on && p->scan != NULL;
}
