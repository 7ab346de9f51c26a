/* chars.c - the table of characters taken whole before BPE's merges (chars.h) */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "tok/chars.h"

#define CH_MAX 0xfffe		/* characters, at most (o200k_base: 5115) */
#define CH_SETS 4096		/* distinct byte sets, at most (cl100k_base: 217) */
#define EDGE_BITS 14

struct edge {
	uint32_t key, rank;
	uint8_t byte;
};

struct pending {
	unsigned cp;
	uint32_t tok, rank, key[2][3];
};

struct chars_build {
	struct pending *ch;
	size_t n, cap;
	struct edge *v;
	size_t nv, capv;
};

struct chars_build *
chars_build_new(void)
{
	return xcalloc(1, sizeof(struct chars_build));
}

void
chars_build_char(struct chars_build *b, unsigned cp, uint32_t tok,
    uint32_t rank, const uint32_t *left, const uint32_t *right)
{
	struct pending *p;

	if (b->n == CH_MAX || cp >= 0x10000)
		return;
	if (b->n == b->cap)
		b->ch = xgrow(b->ch, &b->cap, b->n + 1, sizeof *b->ch);
	p = &b->ch[b->n++];
	p->cp = cp;
	p->tok = tok;
	p->rank = rank;
	memcpy(p->key[0], left, sizeof p->key[0]);
	memcpy(p->key[1], right, sizeof p->key[1]);
}

void
chars_build_edge(struct chars_build *b, uint32_t key, uint8_t byte,
    uint32_t rank)
{
	if (b->nv == b->capv)
		b->v = xgrow(b->v, &b->capv, b->nv + 1, sizeof *b->v);
	b->v[b->nv++] = (struct edge){ key, rank, byte };
}

static inline uint32_t
bucket_of(uint32_t key)
{
	return (uint32_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >>
	    (64 - EDGE_BITS));
}

/*
 * Edges v[0..n) in a row by bucket (a counting sort: chains through a
 * megabyte at random cost o200k_base's load 2 ms more): bucket k's from
 * at[k] to at[k + 1].
 */
static struct edge *
edge_sort(const struct edge *v, size_t n, uint32_t *at)
{
	struct edge *w = xmalloc((n + 1) * sizeof *w);
	size_t i, k;

	for (i = 0; i < n; i++)
		at[bucket_of(v[i].key) + 1]++;
	for (k = 0; k < (size_t)1 << EDGE_BITS; k++)
		at[k + 1] += at[k];
	for (i = 0; i < n; i++)
		w[at[bucket_of(v[i].key)]++] = v[i];
	/* each at[k] is now bucket k + 1's start: back by one bucket */
	for (k = (size_t)1 << EDGE_BITS; k > 0; k--)
		at[k] = at[k - 1];
	at[0] = 0;
	return w;
}

/* The bytes of the edges of key ranked below r, into set. */
static void
edge_set(const struct edge *w, const uint32_t *at, uint32_t key, uint32_t r,
    uint64_t *set)
{
	uint32_t k = bucket_of(key), i;

	for (i = at[k]; i < at[k + 1]; i++)
		if (w[i].key == key && w[i].rank < r)
			set[w[i].byte >> 6] |= 1ull << (w[i].byte & 63);
}

/* The index of byte set s in c->set (found by its hash in seen[]), added where new. */
static uint16_t
set_index(struct chars *c, uint16_t *seen, size_t *n, const uint64_t *s)
{
	uint64_t h = (s[0] ^ s[1] * 3 ^ s[2] * 5 ^ s[3] * 7) *
	    0x9e3779b97f4a7c15ull;
	size_t i;

	for (i = h >> (64 - 13);; i = (i + 1) & 8191) {
		if (seen[i] == 0) {
			if (*n == CH_SETS)
				return CH_SETS;
			memcpy(c->set[*n], s, sizeof *c->set);
			seen[i] = (uint16_t)++*n;
			return (uint16_t)(*n - 1);
		}
		if (memcmp(c->set[seen[i] - 1], s, sizeof *c->set) == 0)
			return (uint16_t)(seen[i] - 1);
	}
}

struct chars *
chars_build_end(struct chars_build *b)
{
	struct chars *c = NULL;
	struct edge *w;
	uint32_t *at;
	uint16_t *seen;
	uint64_t set[2][4];
	size_t i, k, side, nset = 0;
	struct char_tok *t;

	if (b->n == 0)
		goto out;
	at = xcalloc(((size_t)1 << EDGE_BITS) + 1, sizeof *at);
	w = edge_sort(b->v, b->nv, at);
	c = xcalloc(1, sizeof *c);
	c->idx = xcalloc(0x10000, sizeof *c->idx);
	c->ch = xcalloc(b->n + 1, sizeof *c->ch);
	c->set = xcalloc(CH_SETS, sizeof *c->set);
	seen = xcalloc(8192, sizeof *seen);
	for (i = 0; i < b->n; i++) {
		if (c->idx[b->ch[i].cp] != 0)
			continue;
		memset(set, 0, sizeof set);
		for (side = 0; side < 2; side++)
			for (k = 0; k < 3; k++)
				if (b->ch[i].key[side][k] != 0)
					edge_set(w, at, b->ch[i].key[side][k],
					    b->ch[i].rank, set[side]);
		t = &c->ch[c->n + 1];
		t->tok = b->ch[i].tok;
		t->rank = b->ch[i].rank;
		t->left = set_index(c, seen, &nset, set[0]);
		t->right = set_index(c, seen, &nset, set[1]);
		if (t->left == CH_SETS || t->right == CH_SETS)
			continue;
		c->idx[b->ch[i].cp] = (uint16_t)++c->n;
	}
	c->set = xrealloc(c->set, (nset + 1) * sizeof *c->set);
	free(seen);
	free(w);
	free(at);
out:
	free(b->ch);
	free(b->v);
	free(b);
	return c;
}

void
chars_free(struct chars *c)
{
	if (c == NULL)
		return;
	free(c->idx);
	free(c->ch);
	free(c->set);
	free(c);
}
