/* coreprobe - how much of its core this process gets now */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * usage: coreprobe [ITERATIONS]
 * Prints "SHARE T8 T1": T8 the nanoseconds an iteration of eight
 * independent chains of shifts, adds and xors takes, T1 the same of one
 * chain, and SHARE = 4 * T1 / T8, the throughput the eight chains get
 * against one chain's latency, scaled so that a free core of the build
 * machine reads about 1.0 (a figure to compare within one host).
 *
 * Why: the build machine is a virtual one whose core is a hyperthread;
 * when the other thread of the same physical core is busy (another
 * guest), code that issues several instructions a cycle (bpe-encode, at
 * about 2 a cycle) slows by half while one dependent chain does not. On
 * 6 December 2026 the eight chains took 4.3-4.7 ns an iteration in some
 * minutes and 7.2-7.5 ns in others, one chain 1.07-1.15 ns throughout,
 * and bpe-encode's cl100k_base run 0.40-0.42 s against 0.60-0.62 s with
 * them (contrib/bench/RESULTS.md, twelfth slice). The benchmarks print
 * SHARE beside each run so that a run made on a shared core is seen as
 * one. ITERATIONS (20000000) sets the length: about 0.1 s each.
 */
#define STEP(v) ((v) = ((v) + ((v) << 3)) ^ ((v) >> 5))

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8, x = 1;
	volatile uint64_t sink;
	size_t i, n = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000;
	double t0, t8, t1;

	if (n == 0) {
		fprintf(stderr, "usage: coreprobe [ITERATIONS]\n");
		return 2;
	}
	t0 = now();
	/* eight chains in registers (an array was kept in memory) */
	for (i = 0; i < n; i++) {
		STEP(a), STEP(b), STEP(c), STEP(d);
		STEP(e), STEP(f), STEP(g), STEP(h);
	}
	t8 = (now() - t0) / (double)n * 1e9;
	t0 = now();
	for (i = 0; i < n; i++)
		STEP(x);
	t1 = (now() - t0) / (double)n * 1e9;
	sink = a ^ b ^ c ^ d ^ e ^ f ^ g ^ h ^ x;
	(void)sink;	/* the chains' values kept: no loop left out */
	printf("%.2f %.3f %.3f\n", 8 * t1 / t8, t8, t1);
	return 0;
}
