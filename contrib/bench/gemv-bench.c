/* gemv-bench - time gemv_f32, gemv_f32t and gemv_q8 at the GPT-2 124M shapes */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/gemv.h"
#include "core/util.h"

/*
 * usage: gemv-bench [rows ...]
 * For each row count (default 1 8 32) and shape, the best of 7 runs of
 * about 50 ms, in GFLOP/s (2 R C OC per product), one line a product, on
 * OMP_NUM_THREADS threads. Weights are random (the speed does not depend
 * on them); each product takes the next matrix of a pool larger than the
 * caches, as a decoding step reads each layer's weights from memory.
 * Built with GEMV_OLD (make GEMV_OLD=FILE: another gemv.c, its functions
 * renamed old_*), it times that version too, the two runs alternating so
 * that both see the same load, and prints the ratio.
 */

#ifdef GEMV_OLD
void old_gemv_f32(float *, const float *, const float *, const float *, int,
    int, int);
void old_gemv_f32t(float *, const float *, const float *, int, int, int);
void old_gemv_q8(float *, const float *, const int8_t *, const float *,
    const float *, int, int, int);
#define NVER 2
#else
#define NVER 1
#endif

#define POOL ((size_t)80 << 20)	/* weights: floats, or int8 */
#define RUNS 7

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static float *
randv(size_t n, uint64_t seed)
{
	float *p = xmalloc(n * sizeof *p);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (float)((owt_mix64(seed + i) >> 40) / 16777216.0 - 0.5);
	return p;
}

/* One product of kind (0 f32, 1 f32t, 2 q8) by version v (1: the old). */
static void
product(int v, int kind, float *out, const float *x, const void *w,
    const float *s, const float *b, int R, int C, int OC)
{
#ifdef GEMV_OLD
	if (v == 1) {
		if (kind == 0)
			old_gemv_f32(out, x, w, b, R, C, OC);
		else if (kind == 1)
			old_gemv_f32t(out, x, w, R, C, OC);
		else
			old_gemv_q8(out, x, w, s, b, R, C, OC);
		return;
	}
#endif
	if (kind == 0)
		gemv_f32(out, x, w, b, R, C, OC);
	else if (kind == 1)
		gemv_f32t(out, x, w, R, C, OC);
	else
		gemv_q8(out, x, w, s, b, R, C, OC);
}

/* Seconds n products take, over the pool from *off on. */
static double
timed(int v, int kind, int n, size_t *off, float *out, const float *x,
    const void *pool, const float *s, const float *b, int R, int C, int OC)
{
	size_t size = (size_t)C * OC;
	double t = now();
	int k;

	for (k = 0; k < n; k++) {
		*off = *off + 2 * size > POOL ? 0 : *off + size;
		product(v, kind, out, x, kind == 2 ?
		    (const void *)((const int8_t *)pool + *off) :
		    (const void *)((const float *)pool + *off), s, b, R, C, OC);
	}
	return now() - t;
}

int
main(int argc, char **argv)
{
	static const int shape[][3] = {	/* kind, C, OC */
		{ 0, 768, 2304 }, { 0, 768, 768 }, { 0, 768, 3072 },
		{ 0, 3072, 768 }, { 1, 768, 50257 }, { 2, 768, 2304 },
		{ 2, 3072, 768 }, { 2, 768, 50257 }
	};
	static const char *name[] = { "f32", "f32t", "q8" };
	int rows[16] = { 1, 8, 32 }, nrows = 3, i, k, v, run, n;
	float *x, *w, *s, *b, *out;
	size_t off = 0;
	int8_t *q;

	if (argc > 1)
		for (nrows = 0; nrows < argc - 1 && nrows < 16; nrows++)
			rows[nrows] = atoi(argv[nrows + 1]);
	x = randv((size_t)64 * 3072, 1);
	w = randv(POOL, 2);
	s = randv(50257, 3);
	b = randv(50257, 4);
	out = randv((size_t)64 * 50257, 5);
	q = xmalloc(POOL);
	for (i = 0; i < (int)POOL; i++)
		q[i] = (int8_t)(owt_mix64((uint64_t)i) % 255 - 127);
	for (i = 0; i < nrows; i++)
		for (k = 0; k < (int)(sizeof shape / sizeof *shape); k++) {
			int R = rows[i] < 64 ? rows[i] : 64, C = shape[k][1];
			int OC = shape[k][2], kind = shape[k][0];
			const void *pool = kind == 2 ? (const void *)q : w;
			double t, min[NVER], flop = 2.0 * R * C * OC;

			t = timed(0, kind, 1, &off, out, x, pool, s, b, R, C, OC);
			n = t > 0.05 ? 1 : (int)(0.05 / t) + 1;
			for (v = 0; v < NVER; v++)
				min[v] = 1e30;
			for (run = 0; run < RUNS; run++)
				for (v = 0; v < NVER; v++) {
					t = timed(v, kind, n, &off, out, x, pool, s,
					    b, R, C, OC) / n;
					if (t < min[v])
						min[v] = t;
				}
			printf("%-4s R=%-2d %4d x %-5d %7.1f GFLOP/s", name[kind],
			    R, C, OC, flop / min[0] / 1e9);
#ifdef GEMV_OLD
			printf("  old %7.1f  new/old %5.2f", flop / min[1] / 1e9,
			    min[1] / min[0]);
#endif
			printf("  (%d threads)\n", omp_get_max_threads());
			fflush(stdout);
		}
	return 0;
}
