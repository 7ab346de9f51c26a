/* tiktoken-time - CPU time of tiktoken_encode alone, for comparing versions */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * usage: tiktoken-time RANKFILE ENCODING TEXTS
 * TEXTS holds documents each ended by a NUL byte, say from a JSONL file:
 *	/usr/bin/python3 -c 'import json, sys
 *	for l in open(sys.argv[1]): sys.stdout.write(json.loads(l)["text"] + "\0")' \
 *	    in.jsonl >texts
 * It loads the rank file, reads TEXTS, then encodes each document with
 * one tiktoken_state and prints the tokens, a checksum of the ids (equal
 * for equal output) and the CPU time of the encode calls alone: none of
 * bpe-encode's reading, JSON or writing, nor its start-up, so that a
 * change to the encoder is seen through less noise. The file is built
 * with a tiktoken.c included whole (TK, lib/tok/tiktoken.c by default),
 * so that two versions of it can be built side by side and run in turns:
 *	cc -O2 -Ilib -D_GNU_SOURCE -DTK='"/path/to/tiktoken.c"' \
 *	    contrib/bench/tiktoken-time.c -o tt build/lib/libowt.a \
 *	    -lpcre2-8 -lz -lzstd -lyajl -lunistring -lm -lpthread
 * (the numbers of issue 29's sixth slice in RESULTS.md: medians of 8
 * runs of each of two such builds, alternating, taskset -c 1).
 */
#ifndef TK
#define TK "tok/tiktoken.c"
#endif
#include TK
#include "core/util.h"

static double
ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 +
	    (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

int
main(int argc, char **argv)
{
	struct tiktoken_opts o = { NULL, 0, NULL, 0 };
	struct bpe_ids out = { 0 };
	struct timespec a, b, c;
	struct tiktoken_state *s;
	struct tiktoken *t;
	unsigned long long sum = 0;
	size_t n = 0, cap = 0, got, i, k, l, tokens = 0, *end = NULL;
	size_t ncap = 0, ndoc = 0, d;
	char err[256], *text = NULL;
	FILE *f;
	int code;

	if (argc != 4) {
		fprintf(stderr, "usage: tiktoken-time RANKFILE ENCODING TEXTS\n");
		return 2;
	}
	heap_huge((size_t)256 << 20);	/* as bpe-encode's */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	o.pattern = argv[2];
	if ((t = tiktoken_load_with(argv[1], &o, err, sizeof err, &code)) ==
	    NULL) {
		fprintf(stderr, "tiktoken-time: %s\n", err);
		return 1;
	}
	s = tiktoken_state_new(t);
	if ((f = fopen(argv[3], "rb")) == NULL) {
		perror(argv[3]);
		return 1;
	}
	do {
		text = xgrow(text, &cap, n + (1 << 20), 1);
		n += got = fread(text + n, 1, cap - n, f);
	} while (got > 0);
	fclose(f);
	/* the documents' ends, found before the clock starts */
	for (i = 0; i < n; i += strnlen(text + i, n - i) + 1) {
		end = xgrow(end, &ncap, ndoc + 1, sizeof *end);
		end[ndoc++] = i + strnlen(text + i, n - i);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	for (i = 0, d = 0; d < ndoc; i = end[d++] + 1) {
		l = end[d] - i;
		out.n = 0;
		tiktoken_encode(s, text + i, l, &out);
		for (k = 0; k < out.n; k++)
			sum = sum * 1000003 + out.v[k];
		tokens += out.n;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
	printf("tokens %zu sum %llx load %.1f ms encode %.1f ms\n", tokens,
	    sum, ms(&a, &b), ms(&b, &c));
	tiktoken_state_free(s);
	tiktoken_free(t);
	free(out.v);
	free(text);
	free(end);
	return 0;
}
