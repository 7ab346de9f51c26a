/* unit-bpe.c - lib/bpe: the default vocabulary, pieces, ids, decoding, threads */
#include <pthread.h>
#include <stdlib.h>

#include "bpe.h"
#include "uniclass.h"
#include "util.h"
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
ref_init(void)
{
	const char *tok;
	size_t len, i;
	uint32_t id;

	for (rmask = 1; rmask < 4 * (size_t)bpe_nvocab(v); rmask *= 2)
		;
	rtab = malloc(rmask * sizeof *rtab);
	memset(rtab, 0xff, rmask * sizeof *rtab);
	rmask--;
	for (id = 0; id < bpe_nvocab(v); id++) {
		if (id == bpe_eod(v))
			continue;
		tok = bpe_token(v, id, &len);
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
		tok = bpe_token(v, rtab[i], &len);
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
	static const size_t lens[] = { 65, 200, 1000, 4096, 4097, 4160, 4191,
	    6000, 8193 };
	static const char *const cjk[] = { "\xe7\x9a\x84", "\xe4\xb8\x80",
	    "\xe6\x98\xaf", "\xe4\xb8\x8d", "\xe4\xba\x86", "\xe4\xba\xba" };
	struct bpe_state *s = bpe_state_new(v, 0);
	struct bpe_ids got = { 0 }, want = { 0 };
	struct buf text = { 0 };
	size_t i, l, k;
	uint64_t x = 11;
	int kind;

	ref_init();
	for (kind = 0; kind < 7; kind++)
		for (l = 0; l < sizeof lens / sizeof lens[0]; l++) {
			text.len = 0;
			for (i = 0; text.len < lens[l]; i++) {
				x = owt_mix64(x);
				switch (kind) {
				case 0: buf_addc(&text, 'a'); break;
				case 1: buf_addc(&text, "etaoin"[x % 6]); break;
				case 2: buf_addc(&text, 'a' + x % 26); break;
				case 3: buf_addc(&text, '0' + x % 10); break;
				case 4: buf_addc(&text, "-=_*.#"[x % 6]); break;
				case 5:
					k = lens[l] - text.len;
					buf_add(&text, cjk[x % 6], k < 3 ? k : 3);
					break;
				default: buf_addc(&text, (char)(x >> 56)); break;
				}
			}
			got.n = want.n = 0;
			bpe_encode(s, text.p, text.len, &got);
			ref_encode(text.p, text.len, &want);
			OK(got.n == want.n && memcmp(got.v, want.v,
			    got.n * sizeof *got.v) == 0, "kind %d, %zu bytes: "
			    "%zu ids, as tiktoken's merge", kind, lens[l], want.n);
		}
	free(rtab);
	free(got.v);
	free(want.v);
	buf_free(&text);
	bpe_state_free(s);
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

	v = bpe_load(NULL, NULL, &code, err, sizeof err);
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
	test_threads();
	bpe_free(v);
	return unit_done();
}
