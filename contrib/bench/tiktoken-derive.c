/* tiktoken-derive - the CPU time of deriving a rank file's merges from its ranks */
#include <stdio.h>
#include <time.h>

/*
 * usage: tiktoken-derive RANKFILE ENCODING
 * Loads the rank file, then splits every token into two at every place
 * and looks both halves up: a pair of tokens that make a third is one of
 * the merges that a Hugging Face tokenizer.json of the encoding lists
 * (those whose halves both rank below it, transformers' TikTokenConverter
 * keeps) or that a complete table of joins would hold (all of them, as
 * tiktoken's merge asks: the rank of any two adjacent parts' bytes).
 * Prints their counts and the CPU time of the derivation, the cost of
 * such a table at each start (issue 29's tenth slice in RESULTS.md):
 *	cc -O2 -Ilib -D_GNU_SOURCE contrib/bench/tiktoken-derive.c \
 *	    -o derive build/lib/libowt.a -lpcre2-8 -lz -lzstd -lyajl \
 *	    -lunistring -lm -lpthread
 */
#include "tok/tiktoken.c"

int
main(int argc, char **argv)
{
	struct tiktoken_opts o = { NULL, 0, NULL, 0 };
	struct timespec a, b;
	struct tiktoken *t;
	size_t id, k, n, pairs = 0, lower = 0, asked = 0;
	uint32_t l, r;
	const char *p;
	char err[256];
	int code;

	if (argc != 3) {
		fprintf(stderr, "usage: tiktoken-derive RANKFILE ENCODING\n");
		return 2;
	}
	o.pattern = argv[2];
	if ((t = tiktoken_load_with(argv[1], &o, err, sizeof err, &code)) ==
	    NULL) {
		fprintf(stderr, "tiktoken-derive: %s\n", err);
		return 1;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (id = 0; id < t->nvocab; id++) {
		n = t->off[id + 1] - t->off[id];
		p = t->blob + t->off[id];
		for (k = 1; k < n; k++) {
			asked++;
			if ((l = lookup(t, p, k)) == NONE)
				continue;
			asked++;
			if ((r = lookup(t, p + k, n - k)) == NONE)
				continue;
			pairs++;
			lower += l < id && r < id;
		}
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	printf("%u tokens: %zu pairs that make a token (%zu of halves ranked "
	    "below it), %zu lookups, %.1f ms\n", t->nvocab, pairs, lower, asked,
	    (double)(b.tv_sec - a.tv_sec) * 1e3 +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e6);
	tiktoken_free(t);
	return 0;
}
