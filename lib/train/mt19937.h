/* mt19937.h - numpy's RandomState: MT19937 (init_genrand) and its shuffle */
#ifndef OWT_MT19937_H
#define OWT_MT19937_H

#include <stddef.h>
#include <stdint.h>

/*
 * numpy's RandomState(seed), which Megatron-LM builds its training order
 * with: MT19937 seeded by init_genrand, and a Fisher-Yates shuffle drawing
 * masked rejection samples, so that a shuffle here equals numpy's.
 */
struct mt19937 {
	uint32_t mt[624];
	int i;
};
void mt19937_seed(struct mt19937 *r, uint32_t seed);
uint32_t mt19937_next(struct mt19937 *r);
/* numpy's RandomState.shuffle of n elements of size bytes (at most 8). */
void mt19937_shuffle(struct mt19937 *r, void *a, size_t n, size_t size);

#endif
