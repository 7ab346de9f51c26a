/* unit.h - TAP output for the C unit tests (t/unit-*.c) */
#ifndef OWT_UNIT_H
#define OWT_UNIT_H

#include <stdio.h>
#include <string.h>

#include "core/buf.h"

static int unit_n, unit_failed;

#define OK(cond, ...) do { \
	int c_ = (cond) != 0; \
	unit_n++; \
	if (c_) { \
		printf("ok %d - ", unit_n); \
	} else { \
		unit_failed++; \
		printf("not ok %d - ", unit_n); \
	} \
	printf(__VA_ARGS__); \
	putchar('\n'); \
	if (!c_) \
		printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
} while (0)

/* Compare two byte strings; on failure show both. */
#define SAME(got, glen, want, wlen, ...) do { \
	size_t g_ = (glen), w_ = (wlen); \
	int eq_ = g_ == w_ && memcmp((got), (want), g_) == 0; \
	OK(eq_, __VA_ARGS__); \
	if (!eq_) \
		printf("#   got  '%.*s'\n#   want '%.*s'\n", (int)g_, \
		    (const char *)(got), (int)w_, (const char *)(want)); \
} while (0)

#define SAMES(got, want, ...) SAME(got, strlen(got), want, strlen(want), __VA_ARGS__)

/*
 * What a FILE (a tmpfile the code under test wrote) holds from its start,
 * as a string to free; the FILE stays open.
 */
static inline char *
unit_file_text(FILE *f)
{
	struct buf b = { 0 };
	char chunk[4096];
	size_t n;

	fflush(f);
	rewind(f);
	buf_add(&b, "", 0);
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_add(&b, chunk, n);
	return b.p;
}

static inline int
unit_done(void)
{
	printf("1..%d\n", unit_n);
	return unit_failed != 0;
}

#endif
