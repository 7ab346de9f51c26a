/* shuffle.h - a seeded shuffle of records that may not fit in memory */
#ifndef OWT_SHUFFLE_H
#define OWT_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/util.h"

/*
 * Record i (counted from 0 in the order added) gets the key
 * owt_mix64(owt_mix64(seed) + i), a bijection of i, so keys never tie; the
 * output is the records sorted by key. Records are kept in memory up to
 * mem bytes (each costs its length + 24 bytes), then sorted and spilled to
 * an unlinked temporary file in tmpdir; the runs are merged at the end.
 * The order therefore depends only on the seed and the input, never on
 * mem or tmpdir.
 */
struct shuffle {
	uint64_t base;
	size_t mem;
	const char *tmpdir;
	char *arena;
	size_t alen, acap;
	struct shuffle_rec *recs;
	size_t n, cap;
	uint64_t count;
	FILE **runs;
	size_t nruns, runcap;
	int errcode;		/* XSYS after an error */
	char err[OWT_ERRSIZE];
};

void shuffle_init(struct shuffle *s, uint64_t seed, size_t mem, const char *tmpdir);
/* Add one record. 0, or -1 with s->err (a temporary file failed). */
int shuffle_add(struct shuffle *s, const char *rec, size_t len);
/*
 * Hand every record to out(arg, rec, len) in shuffled order. 0; -1 with
 * s->err; or the first non-zero value out returned.
 */
int shuffle_finish(struct shuffle *s,
    int (*out)(void *arg, const char *rec, size_t len), void *arg);
void shuffle_free(struct shuffle *s);

#endif
