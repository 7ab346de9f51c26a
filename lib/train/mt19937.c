/* mt19937.c - numpy's RandomState: MT19937 (init_genrand) and its shuffle */
#include <string.h>

#include "train/mt19937.h"

void
mt19937_seed(struct mt19937 *r, uint32_t seed)
{
	int i;

	r->mt[0] = seed;
	for (i = 1; i < 624; i++)
		r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) +
		    (uint32_t)i;
	r->i = 624;
}

uint32_t
mt19937_next(struct mt19937 *r)
{
	uint32_t y;
	int k;

	if (r->i >= 624) {
		for (k = 0; k < 624; k++) {
			y = (r->mt[k] & 0x80000000u) |
			    (r->mt[(k + 1) % 624] & 0x7fffffffu);
			r->mt[k] = r->mt[(k + 397) % 624] ^ (y >> 1) ^
			    (y & 1 ? 0x9908b0dfu : 0);
		}
		r->i = 0;
	}
	y = r->mt[r->i++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	return y ^ (y >> 18);
}

/* numpy's legacy random_interval: uniform in [0, max] by masked rejection. */
static uint64_t
bounded(struct mt19937 *r, uint64_t max)
{
	uint64_t mask = max, v;

	if (max == 0)
		return 0;
	mask |= mask >> 1;
	mask |= mask >> 2;
	mask |= mask >> 4;
	mask |= mask >> 8;
	mask |= mask >> 16;
	mask |= mask >> 32;
	if (max <= 0xffffffffu) {
		while ((v = mt19937_next(r) & mask) > max)
			;
	} else {
		do {
			v = (uint64_t)mt19937_next(r) << 32;
			v |= mt19937_next(r);
		} while ((v &= mask) > max);
	}
	return v;
}

void
mt19937_shuffle(struct mt19937 *r, void *a, size_t n, size_t size)
{
	unsigned char *p = a, t[8];
	size_t i, j;

	for (i = n > 0 ? n - 1 : 0; i > 0; i--) {
		j = (size_t)bounded(r, i);
		memcpy(t, p + i * size, size);
		memcpy(p + i * size, p + j * size, size);
		memcpy(p + j * size, t, size);
	}
}
