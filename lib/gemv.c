/* gemv.c - matrix products of a few rows for inference: fp32 and int8 weights, AVX-512 and portable */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "blas.h"

/*
 * A decoding step multiplies a few rows by every weight matrix once, so
 * it is bound by reading the weights: these kernels stream each matrix
 * once, without the packing sgemm does, and keep the rows in registers.
 * The threads split the outputs. Every output element is summed in an
 * order fixed by C alone, so a row's result does not depend on N, on the
 * other rows or on the thread count.
 */

#define VEC 16		/* floats in a vector */
#define DOT_J 4		/* outputs per dot-product block */

/* The threads for a matrix of n elements: one below 256K. */
static int
threads_for(size_t n)
{
	return n >= (1 << 18) ? omp_get_max_threads() : 1;
}

/* The slice [*lo, *hi) of units 0..n that thread t of nt takes, in units of u. */
static void
slice(int n, int u, int t, int nt, int *lo, int *hi)
{
	int blocks = (n + u - 1) / u;

	*lo = (int)((long)blocks * t / nt) * u;
	*hi = (int)((long)blocks * (t + 1) / nt) * u;
	if (*hi > n)
		*hi = n;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f")))
#define INLINE512 __attribute__((target("avx512f"), always_inline)) inline

static __mmask16
tailmask(int n)
{
	return n >= VEC ? 0xffff : n <= 0 ? 0 : (__mmask16)((1u << n) - 1);
}

/*
 * out (R,OC) += x (R,C) rows c0..c0+KB @ w (C,OC) rows c0..c0+KB, for
 * columns lo..hi: the KB rows of w are read as KB streams, each output
 * vector is loaded and stored once per KB rows, and the sum still runs
 * over c in order.
 */
#define KB 8

static INLINE512 void
axpy_block(int R, float *out, const float *x, int C, const float *w, int OC,
    int c0, int lo, int hi)
{
	const float *wr = w + (size_t)c0 * OC;
	int r, k, o;

	for (o = lo; o < hi; o += VEC) {
		__mmask16 m = tailmask(hi - o);
		__m512 wv[KB];

#pragma GCC unroll 8
		for (k = 0; k < KB; k++)
			wv[k] = _mm512_maskz_loadu_ps(m, wr + (size_t)k * OC + o);
#pragma GCC unroll 8
		for (r = 0; r < R; r++) {
			float *y = out + (size_t)r * OC + o;
			const float *xr = x + (size_t)r * C + c0;
			__m512 a = _mm512_maskz_loadu_ps(m, y);

#pragma GCC unroll 8
			for (k = 0; k < KB; k++)
				a = _mm512_fmadd_ps(_mm512_set1_ps(xr[k]), wv[k], a);
			_mm512_mask_storeu_ps(y, m, a);
		}
	}
}

AVX512 static void
axpy_rows(float *out, const float *x, const float *w, const float *bias,
    int R, int C, int OC, int lo, int hi)
{
	int r, c, o;

	for (r = 0; r < R; r++)
		for (o = lo; o < hi; o++)
			out[(size_t)r * OC + o] = bias ? bias[o] : 0;
	for (c = 0; c + KB <= C; c += KB) {
		switch (R) {
		case 1: axpy_block(1, out, x, C, w, OC, c, lo, hi); break;
		case 2: axpy_block(2, out, x, C, w, OC, c, lo, hi); break;
		case 3: axpy_block(3, out, x, C, w, OC, c, lo, hi); break;
		case 4: axpy_block(4, out, x, C, w, OC, c, lo, hi); break;
		default: axpy_block(R, out, x, C, w, OC, c, lo, hi); break;
		}
	}
	for (; c < C; c++)
		for (r = 0; r < R; r++) {
			float xv = x[(size_t)r * C + c], *y = out + (size_t)r * OC;
			const float *wr = w + (size_t)c * OC;

			for (o = lo; o < hi; o++)
				y[o] = fmaf(xv, wr[o], y[o]);
		}
}

/* 16 weights of row p from column c: fp32, or int8 widened. */
static INLINE512 __m512
wload(const void *p, int q8, int c)
{
	if (q8)
		return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(
		    (const __m128i *)((const int8_t *)p + c))));
	return _mm512_loadu_ps((const float *)p + c);
}

/* The last n < 16 weights of row p from column c, zero-padded. */
static INLINE512 __m512
wtail(const void *p, int q8, int c, int n)
{
	int8_t t[VEC] = { 0 };

	if (!q8)
		return _mm512_maskz_loadu_ps(tailmask(n), (const float *)p + c);
	memcpy(t, (const int8_t *)p + c, (size_t)n);
	return wload(t, 1, 0);
}

/*
 * out rows 0..R (ldo apart), outputs o..o+J = x (R,C) @ w[o..o+J]^T,
 * scaled and biased; w (OC,C) fp32 or int8. Each sum runs over 16 lanes
 * of c in order, then the lanes are added.
 */
static INLINE512 void
dot_block(int R, int J, int q8, float *out, int ldo, const float *x, int C,
    const void *w, const float *scale, const float *bias, int o)
{
	__m512 acc[8][DOT_J], wv[DOT_J];
	const char *row[DOT_J];
	int r, j, c;

#pragma GCC unroll 4
	for (j = 0; j < J; j++)
		row[j] = (const char *)w + (size_t)(o + j) * C *
		    (q8 ? 1 : sizeof(float));
#pragma GCC unroll 8
	for (r = 0; r < R; r++)
#pragma GCC unroll 4
		for (j = 0; j < J; j++)
			acc[r][j] = _mm512_setzero_ps();
	for (c = 0; c < C; c += VEC) {
		int full = C - c >= VEC;

#pragma GCC unroll 4
		for (j = 0; j < J; j++)
			wv[j] = full ? wload(row[j], q8, c) :
			    wtail(row[j], q8, c, C - c);
#pragma GCC unroll 8
		for (r = 0; r < R; r++) {
			__m512 xv = _mm512_maskz_loadu_ps(tailmask(C - c),
			    x + (size_t)r * C + c);

#pragma GCC unroll 4
			for (j = 0; j < J; j++)
				acc[r][j] = _mm512_fmadd_ps(xv, wv[j], acc[r][j]);
		}
	}
#pragma GCC unroll 8
	for (r = 0; r < R; r++)
#pragma GCC unroll 4
		for (j = 0; j < J; j++) {
			float s = _mm512_reduce_add_ps(acc[r][j]);

			if (scale)
				s *= scale[o + j];
			out[(size_t)r * ldo + o + j] = s + (bias ? bias[o + j] : 0);
		}
}

/* Outputs lo..hi for R rows: blocks of J outputs (R * J <= 16 accumulators). */
#define DOT(R, Q) do { \
	int J = R <= 4 ? DOT_J : 2; \
	for (o = lo; o + J <= hi; o += J) \
		dot_block(R, R <= 4 ? DOT_J : 2, Q, out, OC, x, C, w, scale, \
		    bias, o); \
	for (; o < hi; o++) \
		dot_block(R, 1, Q, out, OC, x, C, w, scale, bias, o); \
} while (0)
#define DOT2(R) case R: if (q8) DOT(R, 1); else DOT(R, 0); break;

AVX512 static void
dot_rows(float *out, const float *x, const void *w, int q8,
    const float *scale, const float *bias, int R, int C, int OC, int lo,
    int hi)
{
	int o;

	switch (R) {
	DOT2(1) DOT2(2) DOT2(3) DOT2(4) DOT2(5) DOT2(6) DOT2(7)
	default: if (q8) DOT(8, 1); else DOT(8, 0); break;
	}
}

static int
have512(void)
{
	static int have = -1;

	if (have < 0)
		have = sgemm512_available();
	return have;
}
#else
static int
have512(void)
{
	return 0;
}
#define axpy_rows(out, x, w, bias, R, C, OC, lo, hi) ((void)0)
#define dot_rows(out, x, w, q8, scale, bias, R, C, OC, lo, hi) ((void)0)
#endif

/* The portable kernels: the same products, summed in c order. */
static void
axpy_plain(float *out, const float *x, const float *w, const float *bias,
    int R, int C, int OC, int lo, int hi)
{
	int r, c, o;

	for (r = 0; r < R; r++) {
		float *y = out + (size_t)r * OC;

		for (o = lo; o < hi; o++)
			y[o] = bias ? bias[o] : 0;
		for (c = 0; c < C; c++) {
			const float *wr = w + (size_t)c * OC;
			float xv = x[(size_t)r * C + c];

#pragma omp simd
			for (o = lo; o < hi; o++)
				y[o] = fmaf(xv, wr[o], y[o]);
		}
	}
}

static void
dot_plain(float *out, const float *x, const void *w, int q8,
    const float *scale, const float *bias, int R, int C, int OC, int lo,
    int hi)
{
	int r, c, o;

	for (r = 0; r < R; r++)
		for (o = lo; o < hi; o++) {
			const float *xr = x + (size_t)r * C;
			float s = 0;

			if (q8) {
				const int8_t *wr = (const int8_t *)w + (size_t)o * C;

				for (c = 0; c < C; c++)
					s += xr[c] * (float)wr[c];
				s *= scale[o];
			} else {
				const float *wr = (const float *)w + (size_t)o * C;

				for (c = 0; c < C; c++)
					s += xr[c] * wr[c];
			}
			out[(size_t)r * OC + o] = s + (bias ? bias[o] : 0);
		}
}

void
gemv_f32(float *out, const float *inp, const float *w, const float *bias,
    int N, int C, int OC)
{
	int nt = threads_for((size_t)C * OC);

#pragma omp parallel num_threads(nt) if (nt > 1)
	{
		int lo, hi, n, R;

		slice(OC, 4 * VEC, omp_get_thread_num(), omp_get_num_threads(),
		    &lo, &hi);
		for (n = 0; n < N && lo < hi; n += R) {
			R = N - n;
			if (have512())
				axpy_rows(out + (size_t)n * OC, inp + (size_t)n * C,
				    w, bias, R, C, OC, lo, hi);
			else
				axpy_plain(out + (size_t)n * OC, inp + (size_t)n * C,
				    w, bias, R, C, OC, lo, hi);
		}
	}
}

static void
dot(float *out, const float *inp, const void *w, int q8, const float *scale,
    const float *bias, int N, int C, int OC)
{
	int nt = threads_for((size_t)C * OC);

#pragma omp parallel num_threads(nt) if (nt > 1)
	{
		int lo, hi, n, R;

		slice(OC, DOT_J, omp_get_thread_num(), omp_get_num_threads(),
		    &lo, &hi);
		for (n = 0; n < N && lo < hi; n += R) {
			R = N - n < 8 ? N - n : 8;
			if (have512())
				dot_rows(out + (size_t)n * OC, inp + (size_t)n * C,
				    w, q8, scale, bias, R, C, OC, lo, hi);
			else
				dot_plain(out + (size_t)n * OC, inp + (size_t)n * C,
				    w, q8, scale, bias, R, C, OC, lo, hi);
		}
	}
}

void
gemv_f32t(float *out, const float *inp, const float *w, int N, int C, int OC)
{
	dot(out, inp, w, 0, NULL, NULL, N, C, OC);
}

void
gemv_q8(float *out, const float *inp, const int8_t *w, const float *scale,
    const float *bias, int N, int C, int OC)
{
	dot(out, inp, w, 1, scale, bias, N, C, OC);
}
