/* minhash.h - b-bit MinHash sketches of word 5-grams */
#ifndef OWT_MINHASH_H
#define OWT_MINHASH_H

#include <stddef.h>
#include <stdint.h>

#include "text/words.h"

/*
 * Near duplicates are found by comparing the word 5-gram sets of two
 * documents (words as in words.h). A document's sketch holds, for each of
 * MINHASH_K seeded hash functions, the lowest 8 bits of the minimum hash
 * of its 5-grams (one-byte "b-bit" MinHash). The fraction of equal bytes
 * estimates the Jaccard similarity of the two 5-gram sets.
 */
#define MINHASH_K 128
#define MINHASH_SHINGLE 5

/* The hash functions, from a seed. */
struct minhash {
	uint32_t seed[MINHASH_K];
};
void minhash_init(struct minhash *m, uint64_t seed);

/*
 * The sketch of a text given its words. A text of fewer than five
 * words has one shingle, all its words. Returns the number of shingles;
 * 0 (no words) leaves the sketch undefined.
 */
size_t minhash_sketch(const struct minhash *m, struct words *w,
    uint8_t sk[MINHASH_K]);

/* The Jaccard similarity estimated from two sketches, 0..1. */
double minhash_similarity(const uint8_t *a, const uint8_t *b);

#endif
