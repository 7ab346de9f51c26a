/* sgemm512.c - single-precision matrix multiply with AVX-512 FMA: packed panels, a 14x32 register kernel, OpenMP */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "model/blas.h"
#include "core/util.h"

/*
 * The BLIS scheme: op(B) is packed KC rows by NC columns at a time into
 * panels NR wide, MC rows of op(A) into panels MR tall, and a kernel
 * multiplies them keeping an MR x NR block of C in 28 registers. Every
 * element of C is a sum over k in the same order whatever the thread
 * count, so results do not depend on it.
 */
#define MR 14
#define NR 32
#define KC 256
#define MC_MAX 168
#define NC 3072

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f")))

int
sgemm512_available(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f");
}

/* C (mr, nr) = (first ? beta * C : C) + acc; rows ldc apart. */
AVX512 static void
store(float *c, int ldc, const __m512 *acc, int mr, int nr, float beta,
    int first)
{
	__mmask16 m0 = nr >= 16 ? 0xffff : (__mmask16)((1u << nr) - 1);
	__mmask16 m1 = nr >= 32 ? 0xffff : nr > 16 ?
	    (__mmask16)((1u << (nr - 16)) - 1) : 0;
	__m512 vb = _mm512_set1_ps(beta);
	int r;

	for (r = 0; r < mr; r++, c += ldc) {
		__m512 x0 = acc[2 * r], x1 = acc[2 * r + 1];

		if (!first || beta != 0) {
			__m512 y0 = _mm512_maskz_loadu_ps(m0, c);
			__m512 y1 = _mm512_maskz_loadu_ps(m1, c + 16);

			if (first) {
				y0 = _mm512_mul_ps(y0, vb);
				y1 = _mm512_mul_ps(y1, vb);
			}
			x0 = _mm512_add_ps(x0, y0);
			x1 = _mm512_add_ps(x1, y1);
		}
		_mm512_mask_storeu_ps(c, m0, x0);
		if (m1)
			_mm512_mask_storeu_ps(c + 16, m1, x1);
	}
}

/* acc (MR, NR) = a (kc, MR) packed ^T @ b (kc, NR) packed */
AVX512 static void
kernel(int kc, const float *a, const float *b, float *c, int ldc, int mr,
    int nr, float beta, int first)
{
	__m512 acc[2 * MR];
	__m512 c0a, c0b, c1a, c1b, c2a, c2b, c3a, c3b, c4a, c4b, c5a, c5b,
	    c6a, c6b, c7a, c7b, c8a, c8b, c9a, c9b, c10a, c10b, c11a, c11b,
	    c12a, c12b, c13a, c13b;
	int k;

	c0a = c0b = c1a = c1b = c2a = c2b = c3a = c3b = c4a = c4b = c5a = c5b =
	    c6a = c6b = c7a = c7b = c8a = c8b = c9a = c9b = c10a = c10b = c11a =
	    c11b = c12a = c12b = c13a = c13b = _mm512_setzero_ps();
	for (k = 0; k < kc; k++, a += MR, b += NR) {
		__m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16), x;

#define ROW(r) \
		x = _mm512_set1_ps(a[r]); \
		c##r##a = _mm512_fmadd_ps(x, b0, c##r##a); \
		c##r##b = _mm512_fmadd_ps(x, b1, c##r##b);
		ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6)
		ROW(7) ROW(8) ROW(9) ROW(10) ROW(11) ROW(12) ROW(13)
#undef ROW
	}
#define KEEP(r) acc[2 * r] = c##r##a; acc[2 * r + 1] = c##r##b;
	KEEP(0) KEEP(1) KEEP(2) KEEP(3) KEEP(4) KEEP(5) KEEP(6)
	KEEP(7) KEEP(8) KEEP(9) KEEP(10) KEEP(11) KEEP(12) KEEP(13)
#undef KEEP
	store(c, ldc, acc, mr, nr, beta, first);
}

/* Rows i0.. (mc) and columns k0.. (kc) of alpha * op(A) into MR-row panels. */
static void
pack_a(float *ap, const float *A, int lda, int ta, int i0, int mc, int k0,
    int kc, float alpha)
{
	int p, r, k;

	for (p = 0; p < mc; p += MR, ap += MR * kc) {
		int mr = mc - p < MR ? mc - p : MR;

		for (r = 0; r < MR; r++) {
			float *d = ap + r;

			if (r >= mr) {
				for (k = 0; k < kc; k++)
					d[k * MR] = 0;
			} else if (ta) {
				const float *s = A + (size_t)k0 * lda + i0 + p + r;

				for (k = 0; k < kc; k++)
					d[k * MR] = alpha * s[(size_t)k * lda];
			} else {
				const float *s = A + (size_t)(i0 + p + r) * lda + k0;

				for (k = 0; k < kc; k++)
					d[k * MR] = alpha * s[k];
			}
		}
	}
}

/*
 * Panel q (NR columns from j0 + q * NR) of rows k0.. (kc) of op(B). A
 * transposed B is read with gathers: each column's cache line serves 16
 * successive rows of the panel.
 */
AVX512 static void
pack_b(float *bp, const float *B, int ldb, int tb, int j0, int nc, int k0,
    int kc, int q)
{
	int j = j0 + q * NR, nr = nc - q * NR < NR ? nc - q * NR : NR, k, c;
	__m512i idx;
	__mmask16 m0, m1;

	bp += (size_t)q * NR * kc;
	if (!tb) {
		for (k = 0; k < kc; k++, bp += NR) {
			memcpy(bp, B + (size_t)(k0 + k) * ldb + j, (size_t)nr * 4);
			memset(bp + nr, 0, (size_t)(NR - nr) * 4);
		}
		return;
	}
	if ((long long)ldb * NR >= (1LL << 29)) {	/* offsets beyond int32 */
		for (c = 0; c < NR; c++)
			for (k = 0; k < kc; k++)
				bp[k * NR + c] = c < nr ?
				    B[(size_t)(j + c) * ldb + k0 + k] : 0;
		return;
	}
	idx = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9,
	    8, 7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi32(ldb));
	m0 = nr >= 16 ? 0xffff : (__mmask16)((1u << nr) - 1);
	m1 = nr >= 32 ? 0xffff : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : 0;
	for (k = 0; k < kc; k++, bp += NR) {
		const float *s = B + (size_t)j * ldb + k0 + k;

		_mm512_store_ps(bp, _mm512_mask_i32gather_ps(_mm512_setzero_ps(),
		    m0, idx, s, 4));
		_mm512_store_ps(bp + 16, m1 ? _mm512_mask_i32gather_ps(
		    _mm512_setzero_ps(), m1, idx, s + (size_t)16 * ldb, 4) :
		    _mm512_setzero_ps());
	}
}

/*
 * Packing buffers, one pair per OpenMP thread number, kept for the life of
 * the process: sgemm512 is called from one thread at a time.
 */
static struct {
	float *a, *b;
} bufs[1024];

static void
buffers(int t, float **a, float **b)
{
	if (bufs[t].a == NULL && (posix_memalign((void **)&bufs[t].a, 64,
	    (size_t)MC_MAX * KC * sizeof(float)) != 0 ||
	    posix_memalign((void **)&bufs[t].b, 64, (size_t)KC * NC *
	    sizeof(float)) != 0))
		owt_fatal("out of memory in sgemm");
	*a = bufs[t].a;
	*b = bufs[t].b;
}

/* C[i0:i1, j0:j1] of the product, on one thread. */
static void
gemm_block(int ta, int tb, int i0, int i1, int j0, int j1, int K,
    float alpha, const float *A, int lda, const float *B, int ldb,
    float beta, float *C, int ldc, int t)
{
	float *ap, *bp;
	int jc, pc, q, ic;

	buffers(t, &ap, &bp);
	for (jc = j0; jc < j1; jc += NC) {
		int nc = j1 - jc < NC ? j1 - jc : NC;

		for (pc = 0; pc < K; pc += KC) {
			int kc = K - pc < KC ? K - pc : KC;

			for (q = 0; q < (nc + NR - 1) / NR; q++)
				pack_b(bp, B, ldb, tb, jc, nc, pc, kc, q);
			for (ic = i0; ic < i1; ic += MC_MAX) {
				int m = i1 - ic < MC_MAX ? i1 - ic : MC_MAX, jr, ir;

				pack_a(ap, A, lda, ta, ic, m, pc, kc, alpha);
				for (jr = 0; jr < nc; jr += NR)
					for (ir = 0; ir < m; ir += MR)
						kernel(kc, ap + (size_t)ir * kc,
						    bp + (size_t)jr * kc,
						    C + (size_t)(ic + ir) * ldc + jc + jr,
						    ldc, m - ir < MR ? m - ir : MR,
						    nc - jr < NR ? nc - jr : NR,
						    beta, pc == 0);
			}
		}
	}
}

/*
 * The threads split C into column slices (or row slices, when C has more
 * row panels than column panels) and work on their own without a barrier:
 * on a busy machine every hand-off between threads can cost a time slice.
 */
void
sgemm512(int ta, int tb, int M, int N, int K, float alpha, const float *A,
    int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	int nt = (double)M * N * K >= 5e7 ? omp_get_max_threads() : 1;
	int bycol = (N + NR - 1) / NR >= (M + MR - 1) / MR;

	if (K == 0) {
		int i, j;

		for (i = 0; i < M; i++)
			for (j = 0; j < N; j++)
				C[(size_t)i * ldc + j] = beta == 0 ? 0 :
				    beta * C[(size_t)i * ldc + j];
		return;
	}
	if (nt > 1024)
		nt = 1024;
#pragma omp parallel num_threads(nt) if (nt > 1)
	{
		int t = omp_get_thread_num(), n = omp_get_num_threads();
		int unit = bycol ? NR : MR, len = bycol ? N : M;
		int panels = (len + unit - 1) / unit;
		int lo = (int)((long)panels * t / n) * unit;
		int hi = (int)((long)panels * (t + 1) / n) * unit;

		hi = hi < len ? hi : len;
		if (lo < hi) {
			if (bycol)
				gemm_block(ta, tb, 0, M, lo, hi, K, alpha, A, lda,
				    B, ldb, beta, C, ldc, t);
			else
				gemm_block(ta, tb, lo, hi, 0, N, K, alpha, A, lda,
				    B, ldb, beta, C, ldc, t);
		}
	}
}

#else

int
sgemm512_available(void)
{
	return 0;
}

/* Never called: sgemm512_available says no (blas.h). */
void
sgemm512(int ta, int tb, int M, int N, int K, float alpha, const float *A,
    int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	owt_fatal("sgemm512: built without AVX-512");
}

#endif
