/* minhash.c - b-bit MinHash sketches of word 5-grams */
#include <string.h>

#include "text/minhash.h"
#include "core/util.h"

void
minhash_init(struct minhash *m, uint64_t seed)
{
	uint64_t x = owt_mix64(seed ^ 0x6d696e68617368ULL);
	size_t k;

	for (k = 0; k < MINHASH_K; k++)
		m->seed[k] = (uint32_t)(owt_mix64(x += 0x9e3779b97f4a7c15ULL) >> 32);
}

static inline uint64_t
rotl(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

/*
 * The minima over the shingle hashes x[0..n) of MINHASH_K hash functions
 * h_k(x) = fmix32(x ^ seed_k) (MurmurHash3's finaliser, a bijection). The
 * loop over k is written so that compilers vectorize it; on x86-64 a copy
 * for AVX2 is chosen at run time. Integer arithmetic: the same result on
 * every machine either way.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static void
minima(const uint32_t *seed, const uint32_t *x, size_t n,
    uint32_t out[MINHASH_K])
{
	uint32_t mn[MINHASH_K], sd[MINHASH_K], h, v;
	size_t i, k;

	memcpy(sd, seed, sizeof sd);
	memset(mn, 0xff, sizeof mn);
	for (i = 0; i < n; i++) {
		v = x[i];
		for (k = 0; k < MINHASH_K; k++) {
			h = v ^ sd[k];
			h ^= h >> 16;
			h *= 0x85ebca6bu;
			h ^= h >> 13;
			h *= 0xc2b2ae35u;
			h ^= h >> 16;
			mn[k] = h < mn[k] ? h : mn[k];
		}
	}
	memcpy(out, mn, sizeof mn);
}

size_t
minhash_sketch(const struct minhash *m, struct words *w, uint8_t sk[MINHASH_K])
{
	uint32_t mn[MINHASH_K], *x;
	size_t i, k, ns;
	uint64_t h;

	if (w->n == 0)
		return 0;
	ns = w->n < MINHASH_SHINGLE ? 1 : w->n - MINHASH_SHINGLE + 1;
	if (w->xcap < ns)
		w->x = xgrow(w->x, &w->xcap, ns, sizeof *w->x);
	x = w->x;
	for (i = 0; i < ns; i++) {
		if (w->n < MINHASH_SHINGLE)
			h = words_seq_hash(w->w, w->n);
		else
			h = owt_mix64(w->w[i].hash ^ rotl(w->w[i + 1].hash, 13) ^
			    rotl(w->w[i + 2].hash, 26) ^ rotl(w->w[i + 3].hash, 39) ^
			    rotl(w->w[i + 4].hash, 52));
		x[i] = (uint32_t)(h ^ h >> 32);
	}
	minima(m->seed, x, ns, mn);
	for (k = 0; k < MINHASH_K; k++)
		sk[k] = (uint8_t)mn[k];
	return ns;
}

double
minhash_similarity(const uint8_t *a, const uint8_t *b)
{
	unsigned eq = 0;
	size_t k;
	double f;

	for (k = 0; k < MINHASH_K; k++)
		eq += a[k] == b[k];
	/* Unequal minima still share their low byte once in 256 times. */
	f = ((double)eq / MINHASH_K - 1.0 / 256) / (1 - 1.0 / 256);
	return f < 0 ? 0 : f;
}
