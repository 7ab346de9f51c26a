/* dedup.c - duplicate detection: exact text and URL, MinHash LSH over word 5-grams */
#include <stdlib.h>
#include <string.h>

#include "text/dedup.h"

static uint64_t
load64(const unsigned char *s)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | s[i];
	return v;
}

uint64_t
dedup_hash(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	unsigned char tail[8] = { 0 };
	uint64_t h = owt_mix64(seed ^ n);

	for (; n >= 8; s += 8, n -= 8)
		h = (h ^ owt_mix64(load64(s))) * 0x9fb21c651e98df25ULL;
	memcpy(tail, s, n);
	h ^= owt_mix64(load64(tail) ^ ((uint64_t)n << 56));
	return owt_mix64(h);
}

/* The length of the whitespace character at s[i] (Python's str.isspace), or 0. */
static size_t
space_at(const unsigned char *s, size_t n, size_t i)
{
	unsigned c = s[i];

	if (c < 0x80)
		return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
	if (c == 0xc2 && i + 1 < n && (s[i + 1] == 0x85 || s[i + 1] == 0xa0))
		return 2;
	if (i + 2 >= n)
		return 0;
	if ((c == 0xe1 && s[i + 1] == 0x9a && s[i + 2] == 0x80) ||
	    (c == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] <= 0x8a ||
	    s[i + 2] == 0xa8 || s[i + 2] == 0xa9 || s[i + 2] == 0xaf)) ||
	    (c == 0xe2 && s[i + 1] == 0x81 && s[i + 2] == 0x9f) ||
	    (c == 0xe3 && s[i + 1] == 0x80 && s[i + 2] == 0x80))
		return 3;
	return 0;
}

void
dedup_text_hash(const char *text, size_t n, uint64_t h[2])
{
	const unsigned char *s = (const unsigned char *)text;
	unsigned char block[4096];
	size_t i = 0, k, len = 0;
	int gap = 0;

	h[0] = 1;
	h[1] = 2;
	while (i < n) {
		if ((k = space_at(s, n, i)) > 0) {
			gap = len > 0 || gap;
			i += k;
			continue;
		}
		if (len + 2 > sizeof block) {
			h[0] = dedup_hash(block, len, h[0]);
			h[1] = dedup_hash(block, len, ~h[1]);
			len = 0;
		}
		if (gap)
			block[len++] = ' ';
		gap = 0;
		block[len++] = s[i++];
	}
	h[0] = dedup_hash(block, len, h[0]);
	h[1] = dedup_hash(block, len, ~h[1]);
}

#define URL_SEED 0x75726c

uint64_t
dedup_url_hash(const char *url, size_t n)
{
	return dedup_hash(url, n, URL_SEED);
}

void
dedup_sign(const struct minhash *m, const char *text, size_t n,
    const char *url, size_t urllen, struct words *w, struct dedup_sig *s)
{
	dedup_text_hash(text, n, s->text);
	s->has_url = url != NULL;
	s->url = url != NULL ? dedup_url_hash(url, urllen) : 0;
	s->has_sketch = 0;
	if (w != NULL) {
		words_split(text, n, w);
		s->has_sketch = minhash_sketch(m, w, s->sketch) > 0;
	}
}

/* Fixed-size records per kept document, in chunks of 4096 documents. */
#define CHUNK_BITS 12
struct column {
	unsigned char **chunk;
	size_t nchunk, elsize;
};

static inline void *
col_at(const struct column *c, uint32_t k)
{
	return c->chunk[k >> CHUNK_BITS] + (size_t)(k & ((1u << CHUNK_BITS) - 1)) *
	    c->elsize;
}

static void
col_need(struct column *c, uint32_t k)
{
	size_t i = k >> CHUNK_BITS;

	if (i < c->nchunk)
		return;
	c->chunk = xrealloc(c->chunk, (i + 1) * sizeof *c->chunk);
	c->chunk[i] = xmalloc(c->elsize << CHUNK_BITS);
	c->nchunk = i + 1;
}

/* Open addressing, linear probing; a slot holds a document number + 1. */
struct table {
	uint32_t *slot;
	size_t size, used;
};

enum { KEY_TEXT = DEDUP_BANDS, KEY_URL };

struct dedup {
	int parts;
	uint32_t n;
	struct column text, url, sketch;
	struct table t[DEDUP_BANDS + 2];	/* bands, text, URL */
	uint32_t *seen;				/* candidates of one query */
	size_t nseen, seencap;
};

/* A band value shared by this many kept documents is not indexed again. */
#define BAND_CROWD 32

static inline size_t
home(const struct table *t, uint64_t h)
{
	return (size_t)(((unsigned __int128)h * t->size) >> 64);
}

static inline size_t
next(const struct table *t, size_t i)
{
	return i + 1 == t->size ? 0 : i + 1;
}

static uint64_t
band_key(const uint8_t *sk, int j)
{
	const uint8_t *b = sk + j * DEDUP_ROWS;

	return owt_mix64((uint64_t)j << 32 | (uint32_t)b[0] | (uint32_t)b[1] << 8 |
	    (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
}

static uint64_t
key_of(const struct dedup *d, uint32_t k, int which)
{
	if (which == KEY_TEXT)
		return ((uint64_t *)col_at(&d->text, k))[0];
	if (which == KEY_URL)
		return *(uint64_t *)col_at(&d->url, k);
	return band_key(col_at(&d->sketch, k), which);
}

static void
put(struct table *t, uint64_t h, uint32_t k)
{
	size_t i;

	for (i = home(t, h); t->slot[i]; i = next(t, i))
		;
	t->slot[i] = k + 1;
	t->used++;
}

/*
 * Grow by a quarter when the load would pass 3/4, so that the load stays
 * between 0.6 and 0.75: 5.3 to 6.7 bytes per entry.
 */
static void
reserve(struct dedup *d, int which)
{
	struct table *t = &d->t[which], old = *t;
	size_t i;

	if ((t->used + 1) * 4 <= t->size * 3)
		return;
	t->size = old.size ? old.size + old.size / 4 : 1024;
	t->slot = xcalloc(t->size, sizeof *t->slot);
	t->used = 0;
	for (i = 0; i < old.size; i++)
		if (old.slot[i])
			put(t, key_of(d, old.slot[i] - 1, which), old.slot[i] - 1);
	free(old.slot);
}

struct dedup *
dedup_new(int parts)
{
	struct dedup *d = xcalloc(1, sizeof *d);

	d->parts = parts;
	d->text.elsize = 2 * sizeof(uint64_t);
	d->url.elsize = sizeof(uint64_t);
	d->sketch.elsize = MINHASH_K;
	return d;
}

static void
col_free(struct column *c)
{
	size_t i;

	for (i = 0; i < c->nchunk; i++)
		free(c->chunk[i]);
	free(c->chunk);
}

void
dedup_free(struct dedup *d)
{
	size_t i;

	if (d == NULL)
		return;
	col_free(&d->text);
	col_free(&d->url);
	col_free(&d->sketch);
	for (i = 0; i < DEDUP_BANDS + 2; i++)
		free(d->t[i].slot);
	free(d->seen);
	free(d);
}

long
dedup_find_text(const struct dedup *d, const uint64_t h[2])
{
	const struct table *t = &d->t[KEY_TEXT];
	const uint64_t *x;
	size_t i;

	if (t->size == 0)
		return -1;
	for (i = home(t, h[0]); t->slot[i]; i = next(t, i)) {
		x = col_at(&d->text, t->slot[i] - 1);
		if (x[0] == h[0] && x[1] == h[1])
			return t->slot[i] - 1;
	}
	return -1;
}

long
dedup_find_url(const struct dedup *d, uint64_t h)
{
	const struct table *t = &d->t[KEY_URL];
	size_t i;

	if (t->size == 0)
		return -1;
	for (i = home(t, h); t->slot[i]; i = next(t, i))
		if (*(uint64_t *)col_at(&d->url, t->slot[i] - 1) == h)
			return t->slot[i] - 1;
	return -1;
}

long
dedup_find_near(struct dedup *d, const uint8_t *sk, double threshold,
    double *sim)
{
	const struct table *t;
	const uint8_t *o;
	long best = -1;
	double s, bs = 0;
	size_t i, c;
	uint32_t k;
	int j;

	d->nseen = 0;
	for (j = 0; j < DEDUP_BANDS; j++) {
		t = &d->t[j];
		if (t->size == 0)
			continue;
		for (i = home(t, band_key(sk, j)); t->slot[i]; i = next(t, i)) {
			k = t->slot[i] - 1;
			o = col_at(&d->sketch, k);
			if (memcmp(o + j * DEDUP_ROWS, sk + j * DEDUP_ROWS,
			    DEDUP_ROWS) != 0)
				continue;
			for (c = 0; c < d->nseen && d->seen[c] != k; c++)
				;
			if (c < d->nseen)
				continue;
			if (d->nseen == d->seencap)
				d->seen = xgrow(d->seen, &d->seencap, d->nseen + 1,
				    sizeof *d->seen);
			d->seen[d->nseen++] = k;
			s = minhash_similarity(o, sk);
			if (s >= threshold && (best < 0 || s > bs ||
			    (s == bs && (long)k < best))) {
				best = k;
				bs = s;
			}
		}
	}
	*sim = bs;
	return best;
}

const uint8_t *
dedup_sketch(const struct dedup *d, uint32_t k)
{
	return d->parts & DEDUP_NEAR ? col_at(&d->sketch, k) : NULL;
}

int
dedup_check(struct dedup *d, const struct dedup_sig *s, double threshold,
    long *kept, double *sim)
{
	const uint8_t *ks;

	*sim = -1;
	if (d->parts & DEDUP_EXACT) {
		if ((*kept = dedup_find_text(d, s->text)) >= 0) {
			*sim = 1;
			return DEDUP_SAME_TEXT;
		}
		if (s->has_url && (*kept = dedup_find_url(d, s->url)) >= 0) {
			ks = dedup_sketch(d, (uint32_t)*kept);
			if (ks != NULL && s->has_sketch)
				*sim = minhash_similarity(ks, s->sketch);
			return DEDUP_SAME_URL;
		}
	}
	*kept = -1;
	if ((d->parts & DEDUP_NEAR) && s->has_sketch &&
	    (*kept = dedup_find_near(d, s->sketch, threshold, sim)) >= 0)
		return DEDUP_SIMILAR;
	*sim = -1;
	return DEDUP_NEW;
}

/* How many kept documents already have this band value. */
static size_t
crowd(const struct dedup *d, const uint8_t *sk, int j)
{
	const struct table *t = &d->t[j];
	size_t i, n = 0;

	if (t->size == 0)
		return 0;
	for (i = home(t, band_key(sk, j)); t->slot[i] && n < BAND_CROWD;
	    i = next(t, i))
		n += memcmp((uint8_t *)col_at(&d->sketch, t->slot[i] - 1) +
		    j * DEDUP_ROWS, sk + j * DEDUP_ROWS, DEDUP_ROWS) == 0;
	return n;
}

uint32_t
dedup_add(struct dedup *d, const struct dedup_sig *s)
{
	const uint8_t *sk = s->has_sketch ? s->sketch : NULL;
	uint32_t k = d->n++;
	int j;

	if (d->parts & DEDUP_EXACT) {
		col_need(&d->text, k);
		col_need(&d->url, k);
		memcpy(col_at(&d->text, k), s->text, sizeof s->text);
		*(uint64_t *)col_at(&d->url, k) = s->has_url ? s->url : 0;
		reserve(d, KEY_TEXT);
		put(&d->t[KEY_TEXT], s->text[0], k);
		if (s->has_url) {
			reserve(d, KEY_URL);
			put(&d->t[KEY_URL], s->url, k);
		}
	}
	if (d->parts & DEDUP_NEAR) {
		col_need(&d->sketch, k);
		if (sk == NULL) {
			memset(col_at(&d->sketch, k), 0, MINHASH_K);
			return k;
		}
		memcpy(col_at(&d->sketch, k), sk, MINHASH_K);
		for (j = 0; j < DEDUP_BANDS; j++) {
			if (crowd(d, sk, j) >= BAND_CROWD)
				continue;
			reserve(d, j);
			put(&d->t[j], band_key(sk, j), k);
		}
	}
	return k;
}

size_t
dedup_count(const struct dedup *d)
{
	return d->n;
}

size_t
dedup_bytes(const struct dedup *d)
{
	size_t b = sizeof *d, i;

	b += (d->text.nchunk * d->text.elsize + d->url.nchunk * d->url.elsize +
	    d->sketch.nchunk * d->sketch.elsize) << CHUNK_BITS;
	for (i = 0; i < DEDUP_BANDS + 2; i++)
		b += d->t[i].size * sizeof(uint32_t);
	return b;
}
