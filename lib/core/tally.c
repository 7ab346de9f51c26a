/* tally.c - counters by reason and their one-line summary */
#include <stdio.h>

#include "core/tally.h"
#include "core/util.h"

void
tally_print(const char *what, const struct tally *t, size_t n)
{
	size_t i;
	int any = 0;

	fprintf(stderr, "%s: %s:", owt_prog, what);
	for (i = 0; i < n; i++) {
		if (t[i].n == 0)
			continue;
		fprintf(stderr, "%s %llu %s", any ? "," : "", t[i].n, t[i].name);
		any = 1;
	}
	fprintf(stderr, "%s\n", any ? "" : " none");
}
