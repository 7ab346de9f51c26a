/* unit-bpe.c - lib/tok/bpe: the default vocabulary, pieces, ids, decoding, threads */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tok/bpe.h"
#include "tok/uniclass.h"
#include "core/util.h"
#include "unit.h"

static struct bpe *v;

/* The pre-tokenizer's pieces of text, joined by '|'. */
static void
pieces(const char *text, size_t len, struct buf *out)
{
	size_t i = 0, k;

	out->len = 0;
	while (i < len) {
		k = bpe_piece(text + i, len - i);
		if (i > 0)
			buf_addc(out, '|');
		buf_add(out, text + i, k);
		i += k;
	}
}

static void
test_pieces(void)
{
	static const struct { const char *text, *want; } t[] = {
		{ "a   b", "a|  | b" },
		{ "a \tb", "a| |\t|b" },
		{ "a\n\n b", "a|\n\n| b" },
		{ "a \n b", "a| \n| b" },
		{ "x  ", "x|  " },
		{ "   ", "   " },
		{ "don't I'll we've", "don|'t| I|'ll| we|'ve" },
		{ "'S 'LL", "'|S| '|LL" },
		{ "''s rock'n'roll", "''|s| rock|'|n|'|roll" },
		{ "hello!!! world", "hello|!!!| world" },
		{ " !! 12ab", " !!| 12|ab" },
		{ "a\xc2\xa0" "b", "a|\xc2\xa0|b" },			/* NBSP is \s */
		{ "a\xc2\xa0\xc2\xa0" "b", "a|\xc2\xa0|\xc2\xa0|b" },
		{ "\n\n\xef\xbb\xbf..", "\n|\n|\xef\xbb\xbf.." },	/* U+FEFF is not */
		{ "a\xe2\x80\x8b" "b", "a|\xe2\x80\x8b|b" },		/* nor U+200B */
		{ "a\x1c\x1f" "b", "a|\x1c\x1f|b" },			/* nor U+001C..1F */
		{ "x\xe3\x80\x80y", "x|\xe3\x80\x80|y" },		/* U+3000 is */
		{ "e\xcc\x81t\xc3\xa9", "e|\xcc\x81|t\xc3\xa9" },	/* marks are not L */
		{ "\xe6\x97\xa5\xe6\x9c\xac 12\xef\xbc\x91", "\xe6\x97\xa5\xe6\x9c\xac| 12\xef\xbc\x91" },
		{ "\xc2\xb2\xc2\xbd" "a", "\xc2\xb2\xc2\xbd|a" },	/* No is N */
		{ "a\xff\xfe" "b \xff", "a|\xff\xfe|b| \xff" },		/* invalid bytes: no class */
		{ "<|endoftext|>", "<||endoftext||>" },
	};
	struct buf b = { 0 };
	size_t i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		pieces(t[i].text, strlen(t[i].text), &b);
		SAME(b.p, b.len, t[i].want, strlen(t[i].want), "pieces of case %zu", i);
	}
	buf_free(&b);
}

/* The generated tables: Unicode 16.0.0's counts, and White_Space exactly. */
static void
test_uniclass(void)
{
	static const uint32_t ws[] = { 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85,
	    0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006,
	    0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f,
	    0x3000 };
	size_t n[4] = { 0 }, i, isws;
	uint32_t cp;

	for (cp = 0; cp <= 0x10ffff; cp++) {
		n[uniclass(cp)]++;
		for (isws = 0, i = 0; i < sizeof ws / sizeof ws[0]; i++)
			isws |= ws[i] == cp;
		if (isws != (uniclass(cp) == UC_SPACE))
			break;
	}
	OK(cp == 0x110000, "white space is exactly White_Space (checked to U+%04X)", cp - 1);
	OK(n[UC_LETTER] == 141028, "141028 letters (\\p{L}), as Unicode 16.0.0");
	OK(n[UC_NUMBER] == 1911, "1911 numbers (\\p{N}), as Unicode 16.0.0");
	OK(uniclass(0xfeff) == UC_OTHER && uniclass(0x200b) == UC_OTHER &&
	    uniclass(0x180e) == UC_OTHER && uniclass(0x1c) == UC_OTHER,
	    "U+FEFF, U+200B, U+180E, U+001C are no class");
	OK(uniclass(0x31350) == UC_LETTER && uniclass(0xa7cb) == UC_LETTER &&
	    uniclass(0x10940) == UC_OTHER, "letters of 15.0 and 16.0 are letters, "
	    "17.0's are not yet");
}

static void
test_encode(void)
{
	static const struct { const char *text; uint32_t ids[8]; size_t n; } t[] = {
		{ "Hello world", { 15496, 995 }, 2 },
		{ " the", { 262 }, 1 },
		{ "\n\n", { 628 }, 1 },
		{ "<|endoftext|>", { 27, 91, 437, 1659, 5239, 91, 29 }, 7 },
		{ "", { 0 }, 0 },
	};
	struct bpe_state *s = bpe_state_new(v, 0);
	struct bpe_ids ids = { 0 };
	size_t i, k;
	int eq;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		ids.n = 0;
		k = bpe_encode(s, t[i].text, strlen(t[i].text), &ids);
		eq = k == t[i].n && ids.n == k &&
		    memcmp(ids.v, t[i].ids, k * sizeof *ids.v) == 0;
		OK(eq, "encode case %zu: %zu ids", i, t[i].n);
		OK(bpe_count(s, t[i].text, strlen(t[i].text)) == t[i].n,
		    "count case %zu", i);
	}
	ids.n = 5;
	k = bpe_encode(s, "Hello", 5, &ids);
	OK(k == 1 && ids.n == 6 && ids.v[5] == 15496, "encode appends to the ids");
	free(ids.v);
	bpe_state_free(s);
}

static void
test_decode(void)
{
	static const uint32_t some[] = { 15496, 995, 50256 }, bad[] = { 1, 50257, 2 };
	struct bpe_state *s = bpe_state_new(v, 0);
	struct bpe_ids ids = { 0 };
	struct buf b = { 0 };
	const char *tok;
	char text[4096];
	size_t len, i;
	uint64_t x = 7;

	tok = bpe_token(v, 50256, &len);
	SAME(tok, len, "<|endoftext|>", 13, "id 50256 is <|endoftext|>");
	tok = bpe_token(v, 0, &len);
	SAME(tok, len, "!", 1, "id 0 is '!'");
	tok = bpe_token(v, 188, &len);
	SAME(tok, len, "\0", 1, "id 188 is byte 0");
	tok = bpe_token(v, 255, &len);
	SAME(tok, len, "\xad", 1, "id 255 is byte 0xad");
	OK(bpe_token(v, 50257, &len) == NULL, "id 50257 is out of range");

	OK(bpe_decode(v, some, 3, &b) == 3, "decode three ids");
	SAME(b.p, b.len, "Hello world<|endoftext|>", 24, "their bytes");
	b.len = 0;
	OK(bpe_decode(v, bad, 3, &b) == 1 && b.len == 1,
	    "decode stops at an id out of range and says where");

	/* Any bytes, valid UTF-8 or not, encode and decode to themselves. */
	for (i = 0; i < sizeof text; i++) {
		x = owt_mix64(x);
		text[i] = (char)(x % 7 == 0 ? ' ' : x % 5 == 0 ? 'a' + x % 26 :
		    x >> 24);
	}
	ids.n = 0;
	bpe_encode(s, text, sizeof text, &ids);
	b.len = 0;
	OK(bpe_decode(v, ids.v, ids.n, &b) == ids.n, "random bytes: decode");
	SAME(b.p, b.len, text, sizeof text, "random bytes: round trip");
	free(ids.v);
	buf_free(&b);
	bpe_state_free(s);
}

/*
 * The reference: tiktoken's _byte_pair_merge as it is written (quadratic:
 * a scan of all pairs after every join), over a table of the vocabulary's
 * tokens by their bytes. GPT-2's ranks are its ids; <|endoftext|> is not
 * mergeable.
 */
#define RNONE 0xffffffffu
static const struct bpe *rv;
static uint32_t *rtab;
static size_t rmask;

static uint64_t
rhash(const unsigned char *p, size_t n)
{
	uint64_t h = n;
	size_t i;

	for (i = 0; i < n; i++)
		h = owt_mix64(h ^ p[i]);
	return h;
}

static void
ref_init(const struct bpe *x)
{
	const char *tok;
	size_t len, i;
	uint32_t id;

	rv = x;
	for (rmask = 1; rmask < 4 * (size_t)bpe_nvocab(rv); rmask *= 2)
		;
	rtab = malloc(rmask * sizeof *rtab);
	memset(rtab, 0xff, rmask * sizeof *rtab);
	rmask--;
	for (id = 0; id < bpe_nvocab(rv); id++) {
		if (id == bpe_eod(rv))
			continue;
		tok = bpe_token(rv, id, &len);
		for (i = rhash((const unsigned char *)tok, len) & rmask;
		    rtab[i] != RNONE; i = (i + 1) & rmask)
			;
		rtab[i] = id;
	}
}

static uint32_t
ref_rank(const unsigned char *p, size_t n)
{
	const char *tok;
	size_t i, len;

	for (i = rhash(p, n) & rmask; rtab[i] != RNONE; i = (i + 1) & rmask) {
		tok = bpe_token(rv, rtab[i], &len);
		if (len == n && memcmp(tok, p, n) == 0)
			return rtab[i];
	}
	return RNONE;
}

/* Parts (start, rank of it and the next two parts... as tiktoken's). */
struct rpart {
	size_t start;
	uint32_t rank;
};

static uint32_t
ref_get(const unsigned char *p, const struct rpart *pt, size_t np, size_t i)
{
	return i + 3 < np ? ref_rank(p + pt[i].start, pt[i + 3].start -
	    pt[i].start) : RNONE;
}

static void
ref_encode(const char *text, size_t len, struct bpe_ids *out)
{
	const unsigned char *p;
	struct rpart *pt;
	size_t i, n, np, at;
	uint32_t id, low;

	for (; len > 0; text += n, len -= n) {
		n = bpe_piece(text, len);
		p = (const unsigned char *)text;
		out->v = xgrow(out->v, &out->cap, out->n + n, sizeof *out->v);
		if ((id = ref_rank(p, n)) != RNONE) {
			out->v[out->n++] = id;
			continue;
		}
		pt = xmalloc((n + 1) * sizeof *pt);
		for (i = 0; i + 1 < n; i++) {
			pt[i].start = i;
			pt[i].rank = ref_rank(p + i, 2);
		}
		pt[n - 1].start = n - 1;
		pt[n].start = n;
		pt[n - 1].rank = pt[n].rank = RNONE;
		for (np = n + 1;;) {
			for (low = RNONE, at = 0, i = 0; i + 1 < np; i++)
				if (pt[i].rank < low) {
					low = pt[i].rank;
					at = i;
				}
			if (low == RNONE)
				break;
			if (at > 0)
				pt[at - 1].rank = ref_get(p, pt, np, at - 1);
			pt[at].rank = ref_get(p, pt, np, at);
			memmove(pt + at + 1, pt + at + 2, (np - at - 2) * sizeof *pt);
			np--;
		}
		for (i = 0; i + 1 < np; i++)
			out->v[out->n++] = ref_rank(p + pt[i].start,
			    pt[i + 1].start - pt[i].start);
		free(pt);
	}
}

/* bpe_encode of one text at a time against the reference merge. */
struct vs_ref {
	struct bpe_state *s;
	struct bpe_ids got, want;
	struct buf text;	/* the text, set by the caller */
};

static void
vs_start(struct vs_ref *c, const struct bpe *x)
{
	memset(c, 0, sizeof *c);
	c->s = bpe_state_new(x, 0);
	ref_init(x);
}

/* Whether bpe_encode gives c->text the reference's ids (in c->want). */
static int
vs_same(struct vs_ref *c)
{
	c->got.n = c->want.n = 0;
	bpe_encode(c->s, c->text.p, c->text.len, &c->got);
	ref_encode(c->text.p, c->text.len, &c->want);
	return c->got.n == c->want.n && memcmp(c->got.v, c->want.v,
	    c->got.n * sizeof *c->got.v) == 0;
}

static void
vs_end(struct vs_ref *c)
{
	free(rtab);
	free(c->got.v);
	free(c->want.v);
	buf_free(&c->text);
	bpe_state_free(c->s);
}

/*
 * Pieces of every length merge as tiktoken's byte_pair_merge does: up to
 * 64 bytes (an array), to 4096 (a heap), and longer (compact state), at
 * lengths around the bit-map words and the tree's blocks; one letter
 * repeated, a few letters, all letters, digits, punctuation, CJK, any
 * bytes.
 */
static void
test_long_pieces(void)
{
	static const size_t lens[] = { 2, 3, 8, 17, 31, 32, 33, 64, 65, 200,
	    1000, 4095, 4096, 4097, 4160, 4191, 6000, 8193 };
	static const char *const cjk[] = { "\xe7\x9a\x84", "\xe4\xb8\x80",
	    "\xe6\x98\xaf", "\xe4\xb8\x8d", "\xe4\xba\x86", "\xe4\xba\xba" };
	struct vs_ref c;
	size_t i, l, k;
	uint64_t x = 11;
	int kind, same;

	vs_start(&c, v);
	for (kind = 0; kind < 7; kind++)
		for (l = 0; l < sizeof lens / sizeof lens[0]; l++) {
			c.text.len = 0;
			for (i = 0; c.text.len < lens[l]; i++) {
				x = owt_mix64(x);
				switch (kind) {
				case 0: buf_addc(&c.text, 'a'); break;
				case 1: buf_addc(&c.text, "etaoin"[x % 6]); break;
				case 2: buf_addc(&c.text, 'a' + x % 26); break;
				case 3: buf_addc(&c.text, '0' + x % 10); break;
				case 4: buf_addc(&c.text, "-=_*.#"[x % 6]); break;
				case 5:
					k = lens[l] - c.text.len;
					buf_add(&c.text, cjk[x % 6], k < 3 ? k : 3);
					break;
				default: buf_addc(&c.text, (char)(x >> 56)); break;
				}
			}
			same = vs_same(&c);
			OK(same, "kind %d, %zu bytes: %zu ids, as tiktoken's "
			    "merge", kind, lens[l], c.want.n);
		}
	vs_end(&c);
}

/* Texts of mixed fragments: every piece as tiktoken's merge makes it. */
static void
test_mixed(void)
{
	static const char *const frag[] = { " the", "ing", "tion", " un",
	    "believ", "able", "'s", "'ll", " 1984", "20260", "3.14159", "  ",
	    "\n\n", "\t", " ", "!!", "...", "--", "==", "\xe4\xb8\xad\xe6\x96\x87",
	    "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "\xd0\xbf\xd1\x80\xd0\xb8",
	    "\xd0\xb2\xd0\xb5\xd1\x82", "\xc3\xa9t\xc3\xa9", "na\xc3\xafve",
	    "\xd8\xb9\xd8\xb1\xd8\xa8\xd9\x8a", "\xf0\x9f\x98\x80", "http://",
	    "www.example.com/a?b=c", "QmFzZTY0", "xyzzy", "AAAA", "aaaa",
	    "Zz", "_", "#", "\xe2\x80\x94", "\xc2\xa0", "0x7f", "\xef\xbb\xbf" };
	struct vs_ref c;
	uint64_t x = 5;
	size_t i, k, bad = 0, ntok = 0;

	vs_start(&c, v);
	for (i = 0; i < 3000; i++) {
		c.text.len = 0;
		x = owt_mix64(x);
		for (k = x % 24 + 1; k > 0; k--) {
			x = owt_mix64(x);
			buf_adds(&c.text, frag[x % (sizeof frag / sizeof frag[0])]);
		}
		if (!vs_same(&c))
			bad++;
		ntok += c.want.n;
	}
	OK(bad == 0, "3000 texts of mixed fragments, %zu ids, as tiktoken's "
	    "merge (%zu differ)", ntok, bad);
	vs_end(&c);
}

/*
 * The built-in image is what loading the files makes: the two written
 * out again are the same bytes.
 */
static void
test_image(void)
{
	const char *src = getenv("OWT_SRC");
	char enc[4096], mer[4096], err[512];
	struct buf a = { 0 }, b = { 0 };
	struct bpe *f;
	int code;

	snprintf(enc, sizeof enc, "%s/data/gpt2/encoder.json", src ? src : ".");
	snprintf(mer, sizeof mer, "%s/data/gpt2/vocab.bpe", src ? src : ".");
	f = bpe_load(enc, mer, err, sizeof err, &code);
	OK(f != NULL, "load data/gpt2 from its files");
	if (f == NULL) {
		printf("# %s\n", err);
		return;
	}
	bpe_image_write(v, &a);
	bpe_image_write(f, &b);
	OK(a.len > 0 && a.len == b.len && memcmp(a.p, b.p, a.len) == 0,
	    "the built-in image equals the files' tables (%zu bytes)", a.len);
	bpe_free(f);
	buf_free(&a);
	buf_free(&b);
}

/* The byte b in GPT-2's alphabet, UTF-8, appended to out (escaped for JSON). */
static void
alphabet(struct buf *out, unsigned b, int json)
{
	unsigned k, cp = b;

	if (!((b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || b >= 0xae))
		for (cp = 256, k = 0; k < b; k++)
			cp += !((k >= '!' && k <= '~') || (k >= 0xa1 && k <= 0xac) ||
			    k >= 0xae);
	if (cp < 0x80) {
		if (json && (cp == '"' || cp == '\\'))
			buf_addc(out, '\\');
		buf_addc(out, (char)cp);
	} else {
		buf_addc(out, (char)(0xc0 | cp >> 6));
		buf_addc(out, (char)(0x80 | (cp & 0x3f)));
	}
}

/*
 * Write a vocabulary: the 256 bytes with GPT-2's ids, then merges of
 * tokens given as byte strings, each "A B" (A and B split at the length
 * given), ids in order; load it.
 */
static struct bpe *
write_vocab(const char *dir, const char *const *tok, const size_t *split,
    size_t n)
{
	struct buf e = { 0 }, m = { 0 };
	char enc[512], mer[512], err[512];
	const char *t;
	struct bpe *x;
	size_t i, k, len;
	FILE *fp;
	int code;

	buf_addc(&e, '{');
	for (i = 0; i < 256; i++) {
		t = bpe_token(v, (uint32_t)i, &len);
		buf_adds(&e, i ? ",\"" : "\"");
		alphabet(&e, (unsigned char)t[0], 1);
		buf_printf(&e, "\":%zu", i);
	}
	buf_adds(&m, "#version: 0.2\n");
	for (i = 0; i < n; i++) {
		buf_adds(&e, ",\"");
		for (k = 0; tok[i][k]; k++) {
			if (k == split[i])
				buf_addc(&m, ' ');
			alphabet(&e, (unsigned char)tok[i][k], 1);
			alphabet(&m, (unsigned char)tok[i][k], 0);
		}
		buf_printf(&e, "\":%zu", 256 + i);
		buf_addc(&m, '\n');
	}
	buf_addc(&e, '}');
	snprintf(enc, sizeof enc, "%s/enc.json", dir);
	snprintf(mer, sizeof mer, "%s/merges.txt", dir);
	fp = fopen(enc, "w");
	fwrite(e.p, 1, e.len, fp);
	fclose(fp);
	fp = fopen(mer, "w");
	fwrite(m.p, 1, m.len, fp);
	fclose(fp);
	buf_free(&e);
	buf_free(&m);
	x = bpe_load(enc, mer, err, sizeof err, &code);
	if (x == NULL)
		printf("# %s\n", err);
	return x;
}

/* Random texts over alpha, one piece each (no spaces), as the reference. */
static size_t
check_vocab(struct bpe *x, const char *alpha, size_t maxlen, size_t ntext)
{
	struct vs_ref c;
	uint64_t r = 3;
	size_t i, k, bad = 0, na = strlen(alpha);

	vs_start(&c, x);
	for (i = 0; i < ntext; i++) {
		c.text.len = 0;
		r = owt_mix64(r);
		for (k = i < 200 ? i + 1 : r % maxlen + 1; k > 0; k--) {
			r = owt_mix64(r);
			buf_addc(&c.text, alpha[r % na]);
		}
		if (!vs_same(&c))
			bad++;
	}
	vs_end(&c);
	return bad;
}

/*
 * Other vocabularies take the other ways to merge: one whose last merge
 * line makes a part of its first ("abc" from "a" and "bc", "bc" after),
 * so that a join makes a token of lower rank than a part (no
 * backtracking); one of 65,536 ranks (no 16-bit ranks).
 */
static void
test_other_vocabs(void)
{
	static const char *const odd[] = { "abc", "bc", "ab", "ca", "cab",
	    "bcab", "aa", "aaa" };
	static const size_t odd_split[] = { 1, 1, 1, 1, 2, 2, 1, 2 };
	char dir[] = "/tmp/unit-bpe.XXXXXX", path[64];
	const char **tok;
	size_t *split, n = 0, a, b;
	char (*pool)[3];
	struct bpe *x;

	if (mkdtemp(dir) == NULL) {
		OK(0, "make a temporary directory");
		return;
	}
	x = write_vocab(dir, odd, odd_split, sizeof odd / sizeof odd[0]);
	OK(x != NULL, "load a vocabulary whose merges make parts after the whole");
	if (x != NULL) {
		OK(check_vocab(x, "abc", 300, 1500) == 0,
		    "its pieces of 1 to 300 bytes merge as tiktoken's merge");
		bpe_free(x);
	}

	/* Every pair of the bytes 1..255, then "Xab" for each X. */
	tok = xmalloc(65280 * sizeof *tok);
	split = xmalloc(65280 * sizeof *split);
	pool = xmalloc(65280 * sizeof *pool);
	for (a = 1; a < 256; a++)
		for (b = 1; b < 256; b++, n++) {
			pool[n][0] = (char)a;
			pool[n][1] = (char)b;
			pool[n][2] = '\0';
			tok[n] = pool[n];
			split[n] = 1;
		}
	for (a = 1; a < 256; a++, n++) {
		tok[n] = xmalloc(4);
		snprintf((char *)tok[n], 4, "%cab", (int)a);
		split[n] = 1;
	}
	OK(n == 65280, "65280 merges");
	x = write_vocab(dir, tok, split, n);
	OK(x != NULL && bpe_nvocab(x) == 65536, "load a vocabulary of 65,536 ranks");
	if (x != NULL) {
		OK(check_vocab(x, "abcz\x80\xe4\xb8", 200, 600) == 0,
		    "its pieces merge as tiktoken's merge");
		bpe_free(x);
	}
	for (a = 65025; a < n; a++)
		free((char *)tok[a]);
	free(tok);
	free(split);
	free(pool);
	snprintf(path, sizeof path, "%s/enc.json", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/merges.txt", dir);
	unlink(path);
	rmdir(dir);
}

/* Threads share the vocabulary, each with its own state. */
struct job {
	const char *text;
	size_t len;
	struct bpe_ids ids;
};

static void *
encode_thread(void *arg)
{
	struct job *j = arg;
	struct bpe_state *s = bpe_state_new(v, 0);
	int r;

	for (r = 0; r < 20; r++) {
		j->ids.n = 0;
		bpe_encode(s, j->text, j->len, &j->ids);
	}
	bpe_state_free(s);
	return NULL;
}

static void
test_threads(void)
{
	struct job j[4];
	pthread_t th[4];
	struct buf text = { 0 };
	uint64_t x = 1;
	size_t i, k;
	int same = 1;

	/* Words from a small alphabet: many repeats, many merges. */
	for (i = 0; i < 200000; i++) {
		x = owt_mix64(x);
		buf_addc(&text, x % 6 == 0 ? ' ' : "etaoinshrdlucmfw"[x >> 60]);
	}
	for (k = 0; k < 4; k++) {
		memset(&j[k], 0, sizeof j[k]);
		j[k].text = text.p;
		j[k].len = text.len;
		OK(pthread_create(&th[k], NULL, encode_thread, &j[k]) == 0,
		    "start thread %zu", k);
	}
	for (k = 0; k < 4; k++)
		pthread_join(th[k], NULL);
	for (k = 1; k < 4; k++)
		same &= j[k].ids.n == j[0].ids.n && memcmp(j[k].ids.v, j[0].ids.v,
		    j[0].ids.n * sizeof *j[0].ids.v) == 0;
	OK(same && j[0].ids.n > 0, "four threads give the same %zu ids", j[0].ids.n);
	for (k = 0; k < 4; k++)
		free(j[k].ids.v);
	buf_free(&text);
}

int
main(void)
{
	char err[512];
	int code;

	v = bpe_load(NULL, NULL, err, sizeof err, &code);
	OK(v != NULL, "load the default vocabulary (the built-in image)");
	if (v == NULL) {
		printf("# %s\n", err);
		return unit_done();
	}
	OK(bpe_nvocab(v) == 50257 && bpe_eod(v) == 50256,
	    "50257 tokens, <|endoftext|> is 50256");
	test_uniclass();
	test_pieces();
	test_encode();
	test_decode();
	test_long_pieces();
	test_mixed();
	test_image();
	test_other_vocabs();
	test_threads();
	bpe_free(v);
	return unit_done();
}
