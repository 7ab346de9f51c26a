/* urlset.c - a set of strings kept as 64-bit hashes (the URLs seen) */
#include <stdlib.h>
#include <string.h>

#include "web/urlset.h"
#include "core/util.h"

/* FNV-1a, then splitmix64's finaliser; never 0 (the empty slot). */
static uint64_t
hash(const char *s, size_t n)
{
	uint64_t h = owt_mix64(owt_fnv1a(s, n));

	return h ? h : 1;
}

static size_t
slot(const struct urlset *u, uint64_t h)
{
	size_t i, mask = u->cap - 1;

	for (i = h & mask; u->h[i] && u->h[i] != h; i = (i + 1) & mask)
		;
	return i;
}

int
urlset_add(struct urlset *u, const char *s, size_t n)
{
	uint64_t h = hash(s, n);
	size_t i;

	if (2 * (u->n + 1) > u->cap) {
		struct urlset old = *u;

		u->cap = u->cap ? 2 * u->cap : 1024;
		u->h = xcalloc(u->cap, sizeof *u->h);
		for (i = 0; i < old.cap; i++)
			if (old.h[i])
				u->h[slot(u, old.h[i])] = old.h[i];
		free(old.h);
	}
	i = slot(u, h);
	if (u->h[i])
		return 1;
	u->h[i] = h;
	u->n++;
	return 0;
}

int
urlset_has(const struct urlset *u, const char *s, size_t n)
{
	return u->cap > 0 && u->h[slot(u, hash(s, n))] != 0;
}

void
urlset_free(struct urlset *u)
{
	free(u->h);
	memset(u, 0, sizeof *u);
}
