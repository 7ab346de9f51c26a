/* coreprobe - how much of its core this process gets now */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * usage: coreprobe [ITERATIONS]
 * Prints "PAR T8 T1": T8 the nanoseconds an iteration of eight
 * independent chains of shifts, adds and xors takes, T1 the same of one
 * chain, and PAR = 8 * T1 / T8, how many of the eight chains the core
 * runs at once (a figure to compare within one host).
 *
 * Why: the build machine is a virtual one whose core is a hyperthread;
 * when the other thread of the same physical core is busy (another
 * guest's), code that issues several instructions a cycle (bpe-encode,
 * about 2 a cycle) slows by half while one dependent chain does not. On
 * 6 December 2026 PAR read about 4.0 on a free core and 2.3-3.4 beside a
 * busy twin, T1 1.1-1.3 ns throughout, and bpe-encode's cl100k_base run
 * took 0.34-0.41 s against up to 0.65 s with them (RESULTS.md, twelfth
 * slice). The benchmarks print PAR beside their runs so that a run made
 * on a shared core is seen as one. ITERATIONS (20000000) sets the
 * length: about 0.1 s.
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
