/* dedup.h - duplicate detection: exact text and URL, MinHash LSH over word 5-grams */
#ifndef OWT_DEDUP_H
#define OWT_DEDUP_H

#include <stddef.h>
#include <stdint.h>

#include "text/minhash.h"
#include "core/util.h"
#include "text/words.h"

/*
 * Candidate near duplicates are found by locality-sensitive hashing of
 * their sketches (minhash.h): DEDUP_BANDS bands of DEDUP_ROWS bytes each;
 * two documents are compared when a band is equal.
 */
#define DEDUP_BANDS 10
#define DEDUP_ROWS 4

/* A 64-bit hash of bytes. */
uint64_t dedup_hash(const void *p, size_t n, uint64_t seed);
/* A 128-bit hash of the text with whitespace runs as one space, trimmed. */
void dedup_text_hash(const char *s, size_t n, uint64_t h[2]);

/* What the exact and near stages know of a document. */
struct dedup_sig {
	uint64_t text[2];		/* dedup_text_hash */
	uint64_t url;			/* hash of the url field, if has_url */
	int has_url, has_sketch;	/* no sketch: a text without words */
	uint8_t sketch[MINHASH_K];
};

/* The signature of a text and its URL (url NULL: none); w NULL: no sketch. */
void dedup_sign(const struct minhash *m, const char *text, size_t n,
    const char *url, size_t urllen, struct words *w, struct dedup_sig *s);
/* The hash of a URL in a signature (dedup_sig.url). */
uint64_t dedup_url_hash(const char *url, size_t n);

/*
 * The fingerprints of the kept documents, numbered 0, 1, ... in the
 * order they were added. Memory per document: 16 bytes of text hash, 8 of
 * URL hash, MINHASH_K of sketch, and one 4-byte hash-table slot per key
 * (text, URL, each band) at a load of 0.6 to 0.75: 216 to 232 bytes with
 * both parts. The per-document arrays grow 4096 documents at a time.
 */
enum { DEDUP_EXACT = 1, DEDUP_NEAR = 2 };
struct dedup;
struct dedup *dedup_new(int parts);
void dedup_free(struct dedup *d);

/* The kept document with this text hash, or -1. */
long dedup_find_text(const struct dedup *d, const uint64_t h[2]);
/* The kept document with this URL hash, or -1. */
long dedup_find_url(const struct dedup *d, uint64_t h);
/*
 * The kept document most similar to the sketch (the first kept of equals)
 * among those with an estimated similarity of at least threshold, and
 * that similarity in *sim; -1 if there is none.
 */
long dedup_find_near(struct dedup *d, const uint8_t *sk, double threshold,
    double *sim);
/* The sketch of kept document k (NULL without the near part or a sketch). */
const uint8_t *dedup_sketch(const struct dedup *d, uint32_t k);

/* What dedup_check finds a document to be. */
enum { DEDUP_NEW, DEDUP_SAME_TEXT, DEDUP_SAME_URL, DEDUP_SIMILAR };
/*
 * owt-dedup's exact and near stages, in that order, by the parts d has:
 * the kept document with the same text, else (exact part) the one with
 * the same URL, else (near part, s with a sketch) the most similar one
 * at threshold or above. Returns DEDUP_NEW with *kept -1, or what it
 * found with the kept document in *kept and the similarity in *sim: 1
 * for the same text; for the same URL the estimate from the sketches, or
 * -1 where either has none.
 */
int dedup_check(struct dedup *d, const struct dedup_sig *s, double threshold,
    long *kept, double *sim);

/* Keep a document; returns its number. */
uint32_t dedup_add(struct dedup *d, const struct dedup_sig *s);
/* The number of kept documents. */
size_t dedup_count(const struct dedup *d);
/* Bytes allocated. */
size_t dedup_bytes(const struct dedup *d);

#endif
