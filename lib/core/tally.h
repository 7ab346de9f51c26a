/* tally.h - counters by reason and their one-line summary */
#ifndef OWT_TALLY_H
#define OWT_TALLY_H

#include <stddef.h>

/* Counters by reason, for the "nothing is lost silently" summaries. */
struct tally {
	const char *name;
	unsigned long long n;
};
/*
 * Print "prog: what: N name, N name, ..." on stderr, naming only the
 * non-zero counters, or "none" when all are zero.
 */
void tally_print(const char *what, const struct tally *t, size_t n);

#endif
