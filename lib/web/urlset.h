/* urlset.h - a set of strings kept as 64-bit hashes (the URLs seen) */
#ifndef OWT_URLSET_H
#define OWT_URLSET_H

#include <stddef.h>
#include <stdint.h>

/*
 * A set of strings, kept as 64-bit hashes (16 bytes a string): a false
 * "seen" has a chance of n/2^64 after n strings.
 */
struct urlset {
	uint64_t *h;		/* open addressing, 0 = empty */
	size_t n, cap;
};

/* Add s[0..n); 1 if it was already there, else 0. */
int urlset_add(struct urlset *u, const char *s, size_t n);
int urlset_has(const struct urlset *u, const char *s, size_t n);
void urlset_free(struct urlset *u);

#endif
