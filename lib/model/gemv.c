/* gemv.c - matrix products of a few rows for inference: fp32 and int8 weights, AVX-512 and portable */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "model/blas.h"
#include "model/gemv.h"
#include "core/util.h"

/*
 * A decoding step multiplies a few rows by every weight matrix once, so
 * it is bound by reading the weights: these kernels stream each matrix
 * once, without the packing sgemm does, and keep the rows in registers.
 * Every output element is summed in an order fixed by C alone, so a
 * row's result does not depend on N, on the other rows or on the thread
 * count.
 */

#define VEC 16		/* floats in a vector */
#define DOT_J 6		/* outputs per dot-product block */
#define DOT_MR 4	/* rows per dot-product block: 24 sums */

/*
 * The threads: a crew of helpers that claim parts of a product from a
 * counter, the calling thread among them. A product takes a fraction of
 * a millisecond, and on a busy machine a thread can wait a scheduler
 * time slice to run; so the caller never waits for a helper that has not
 * started: it does the unclaimed parts itself, and waits only for parts
 * a helper is working on. Idle helpers spin briefly, then sleep.
 */
typedef void part_fn(const void *job, int part);

static struct {
	_Atomic uint64_t next;		/* job number << 32 | next part */
	_Atomic(part_fn *) fn;
	_Atomic(const void *) job;
	atomic_int nparts;
	atomic_int done;		/* parts of this job finished */
	atomic_int sleepers;
	uint32_t gen;			/* the caller's job number */
	int nhelpers;
	pthread_mutex_t mu;
	pthread_cond_t cv;
} crew = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

#define CREW_SPIN 4000

static inline void
pause_cpu(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Claim and run parts of job g until none is left. A claim is a
 * compare-and-swap that holds the job number, so it never takes a part
 * of a later job; while this one has a part unclaimed the caller does
 * not set up the next, so what was read for it is still its own.
 */
static void
crew_work(uint32_t g)
{
	uint64_t v = atomic_load_explicit(&crew.next, memory_order_acquire);

	while ((uint32_t)(v >> 32) == g) {
		part_fn *fn = atomic_load_explicit(&crew.fn, memory_order_relaxed);
		const void *job = atomic_load_explicit(&crew.job,
		    memory_order_relaxed);
		int np = atomic_load_explicit(&crew.nparts, memory_order_relaxed);

		if ((int)(uint32_t)v >= np)
			return;
		if (atomic_compare_exchange_weak_explicit(&crew.next, &v, v + 1,
		    memory_order_acq_rel, memory_order_acquire)) {
			fn(job, (int)(uint32_t)v);
			atomic_fetch_add_explicit(&crew.done, 1,
			    memory_order_release);
			v = atomic_load_explicit(&crew.next, memory_order_acquire);
		}
	}
}

static void *
crew_helper(void *arg)
{
	uint32_t seen = 0;
	uint64_t v;
	int spins;

	for (;;) {
		for (spins = 0;; spins++) {
			v = atomic_load(&crew.next);
			if ((uint32_t)(v >> 32) != seen)
				break;
			if (spins < CREW_SPIN) {
				pause_cpu();
				continue;
			}
			pthread_mutex_lock(&crew.mu);
			atomic_fetch_add(&crew.sleepers, 1);
			while ((uint32_t)(atomic_load(&crew.next) >> 32) == seen)
				pthread_cond_wait(&crew.cv, &crew.mu);
			atomic_fetch_sub(&crew.sleepers, 1);
			pthread_mutex_unlock(&crew.mu);
		}
		seen = (uint32_t)(v >> 32);
		crew_work(seen);
	}
	return arg;
}

/* fn(job, p) for p in 0..nparts, on nt threads; from one thread at a time. */
static void
crew_run(part_fn *fn, const void *job, int nparts, int nt)
{
	pthread_t t;
	int p, e;

	if (nt <= 1 || nparts <= 1) {
		for (p = 0; p < nparts; p++)
			fn(job, p);
		return;
	}
	for (; crew.nhelpers < nt - 1; crew.nhelpers++)
		if ((e = pthread_create(&t, NULL, crew_helper, NULL)) != 0 ||
		    (e = pthread_detach(t)) != 0)
			owt_fatal_threads(nt, e);
	crew.gen++;
	atomic_store_explicit(&crew.fn, fn, memory_order_relaxed);
	atomic_store_explicit(&crew.job, job, memory_order_relaxed);
	atomic_store_explicit(&crew.nparts, nparts, memory_order_relaxed);
	atomic_store_explicit(&crew.done, 0, memory_order_relaxed);
	atomic_store(&crew.next, (uint64_t)crew.gen << 32);
	if (atomic_load(&crew.sleepers) > 0) {
		pthread_mutex_lock(&crew.mu);
		pthread_cond_broadcast(&crew.cv);
		pthread_mutex_unlock(&crew.mu);
	}
	crew_work(crew.gen);
	while (atomic_load_explicit(&crew.done, memory_order_acquire) < nparts)
		pause_cpu();
}

/* The threads for a matrix of n elements: one below 256K. */
static int
threads_for(size_t n)
{
	return n >= (1 << 18) ? omp_get_max_threads() : 1;
}

/* Parts of n units, about 2 per thread, each a multiple of u units. */
static int
part_size(int n, int u, int nt)
{
	int per = (n + 2 * nt - 1) / (2 * nt);

	return (per + u - 1) / u * u;
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
 * over c in order. Each weight vector read prefetches the one KB rows on
 * (past the matrix, harmless: a prefetch never faults): on one thread
 * 1.1-1.25x with 1 row, 1.4x with 2, 1.5-1.9x with 3.
 */
#define KB 8
#define AXPY_TILED 4	/* rows from which axpy_tiled does the product */

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
		for (k = 0; k < KB; k++) {
			_mm_prefetch((const char *)(wr + (size_t)(k + KB) * OC +
			    o), _MM_HINT_T0);
			wv[k] = _mm512_maskz_loadu_ps(m, wr + (size_t)k * OC + o);
		}
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

/*
 * From 4 rows on, a tile of out, MR rows by NR vectors of columns o..,
 * stays in registers over c0..c1 (the last vector masked by m): each
 * c loads NR weight vectors once for MR rows and broadcasts MR x values,
 * so the loop is bound by the FMAs, not by loads and stores of out. The
 * tile starts from the bias at c0 == 0, else from out (the sum of the
 * earlier c, stored exactly), so each element still takes the FMAs of
 * c in order, the same as in axpy_block and whatever the tiling.
 */
#define TILE_NR 3	/* vectors of columns in a tile */
#define TILE_MR 8	/* rows in a tile: 24 sums, 3 weights in 32 registers */
#define TILE_KC 128	/* c a pass, and columns a panel: the panel of */
#define TILE_NC 384	/* weights, 192K, stays in L2 for every row tile */

static INLINE512 void
axpy_tile(int MR, int NR, __mmask16 m, float *out, const float *x, int C,
    const float *w, const float *bias, int OC, int o, int c0, int c1,
    ptrdiff_t pf)
{
	__m512 acc[TILE_MR][TILE_NR], wv[TILE_NR];
	int r, j, c;

#pragma GCC unroll 8
	for (r = 0; r < MR; r++)
#pragma GCC unroll 3
		for (j = 0; j < NR; j++) {
			__mmask16 mj = j == NR - 1 ? m : 0xffff;

			if (c0 > 0)
				acc[r][j] = _mm512_maskz_loadu_ps(mj,
				    out + (size_t)r * OC + o + j * VEC);
			else if (bias)
				acc[r][j] = _mm512_maskz_loadu_ps(mj,
				    bias + o + j * VEC);
			else
				acc[r][j] = _mm512_setzero_ps();
		}
	for (c = c0; c < c1; c++) {
		const float *wr = w + (size_t)c * OC + o;

		if (pf)
#pragma GCC unroll 3
			for (j = 0; j < NR; j++)
				_mm_prefetch((const char *)(wr + pf + j * VEC),
				    _MM_HINT_T0);
#pragma GCC unroll 3
		for (j = 0; j < NR; j++)
			wv[j] = _mm512_maskz_loadu_ps(j == NR - 1 ? m : 0xffff,
			    wr + j * VEC);
#pragma GCC unroll 8
		for (r = 0; r < MR; r++) {
			__m512 xv = _mm512_set1_ps(x[(size_t)r * C + c]);

#pragma GCC unroll 3
			for (j = 0; j < NR; j++)
				acc[r][j] = _mm512_fmadd_ps(xv, wv[j], acc[r][j]);
		}
	}
#pragma GCC unroll 8
	for (r = 0; r < MR; r++)
#pragma GCC unroll 3
		for (j = 0; j < NR; j++)
			_mm512_mask_storeu_ps(out + (size_t)r * OC + o + j * VEC,
			    j == NR - 1 ? m : 0xffff, acc[r][j]);
}

/*
 * Tiles of MR rows over columns lo..hi, c0..c1: full ones, then the tail;
 * with pf, each weight read also prefetches the one pf floats on.
 */
static INLINE512 void
axpy_tiles(int MR, float *out, const float *x, int C, const float *w,
    const float *bias, int OC, int lo, int hi, int c0, int c1, ptrdiff_t pf)
{
	int o;

	for (o = lo; o + TILE_NR * VEC <= hi; o += TILE_NR * VEC)
		axpy_tile(MR, TILE_NR, 0xffff, out, x, C, w, bias, OC, o, c0,
		    c1, pf);
	for (; o < hi; o += VEC)
		axpy_tile(MR, 1, tailmask(hi - o), out, x, C, w, bias, OC, o,
		    c0, c1, pf);
}

/*
 * The first row tile of a panel reads it from memory; it also prefetches
 * the next panel, which the other row tiles leave time to arrive (on
 * one thread: 4 rows 1.17x, 8 rows 1.35x, 32 rows 1.12x).
 */
AVX512 static void
axpy_tiled(float *out, const float *x, const float *w, const float *bias,
    int R, int C, int OC, int lo, int hi)
{
	int r, n, c0, c1, o0, o1;
	ptrdiff_t next;

	for (c0 = 0; c0 == 0 || c0 < C; c0 = c1) {
		c1 = C - c0 > TILE_KC ? c0 + TILE_KC : C;
		for (o0 = lo; o0 < hi; o0 = o1) {
			o1 = hi - o0 > TILE_NC ? o0 + TILE_NC : hi;
			next = o1 < hi ? TILE_NC : c1 < C ? (ptrdiff_t)TILE_KC *
			    OC + lo - o0 : 0;
			for (r = 0; r < R; r += n) {
				float *y = out + (size_t)r * OC;
				const float *xr = x + (size_t)r * C;

				n = R - r < TILE_MR ? R - r : TILE_MR;
#define TILES(M, P) axpy_tiles(M, y, xr, C, w, bias, OC, o0, o1, c0, c1, P)
#define ALL(P) switch (n) { \
	case 1: TILES(1, P); break; case 2: TILES(2, P); break; \
	case 3: TILES(3, P); break; case 4: TILES(4, P); break; \
	case 5: TILES(5, P); break; case 6: TILES(6, P); break; \
	case 7: TILES(7, P); break; default: TILES(TILE_MR, P); break; \
}
				if (r == 0 && next != 0)
					ALL(next)
				else
					ALL(0)
#undef ALL
#undef TILES
			}
		}
	}
}

AVX512 static void
axpy_rows(float *out, const float *x, const float *w, const float *bias,
    int R, int C, int OC, int lo, int hi)
{
	int r, c, o;

	if (R >= AXPY_TILED) {
		axpy_tiled(out, x, w, bias, R, C, OC, lo, hi);
		return;
	}

	for (r = 0; r < R; r++)
		for (o = lo; o < hi; o++)
			out[(size_t)r * OC + o] = bias ? bias[o] : 0;
	for (c = 0; c + KB <= C; c += KB) {
		switch (R) {
		case 1: axpy_block(1, out, x, C, w, OC, c, lo, hi); break;
		case 2: axpy_block(2, out, x, C, w, OC, c, lo, hi); break;
		case 3: axpy_block(3, out, x, C, w, OC, c, lo, hi); break;
		case 4: axpy_block(4, out, x, C, w, OC, c, lo, hi); break;
		default:	/* 8 rows at a time: registers, not memory */
			for (r = 0; r + 8 <= R; r += 8)
				axpy_block(8, out + (size_t)r * OC, x +
				    (size_t)r * C, C, w, OC, c, lo, hi);
			for (; r + 4 <= R; r += 4)
				axpy_block(4, out + (size_t)r * OC, x +
				    (size_t)r * C, C, w, OC, c, lo, hi);
			for (; r < R; r++)
				axpy_block(1, out + (size_t)r * OC, x +
				    (size_t)r * C, C, w, OC, c, lo, hi);
			break;
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
 * of c in order, then the lanes are added: the same operations whatever
 * R and J. A block of R x J sums takes R + J loads a 16 c for R J FMAs.
 */
static INLINE512 void
dot_block(int R, int J, int q8, int pf, float *out, int ldo, const float *x,
    int C, const void *w, const float *scale, const float *bias, int o)
{
	size_t next = (size_t)J * C * (q8 ? 1 : sizeof(float));
	__m512 acc[DOT_MR][DOT_J], wv[DOT_J];
	const char *row[DOT_J];
	int r, j, c;

#pragma GCC unroll 8
	for (j = 0; j < J; j++)
		row[j] = (const char *)w + (size_t)(o + j) * C *
		    (q8 ? 1 : sizeof(float));
#pragma GCC unroll 8
	for (r = 0; r < R; r++)
#pragma GCC unroll 8
		for (j = 0; j < J; j++)
			acc[r][j] = _mm512_setzero_ps();
	for (c = 0; c + VEC <= C; c += VEC) {
		if (pf && (!q8 || c % 64 == 0))
#pragma GCC unroll 8
			for (j = 0; j < J; j++)
				_mm_prefetch(row[j] + next + c * (q8 ? 1 :
				    sizeof(float)), _MM_HINT_T0);
#pragma GCC unroll 8
		for (j = 0; j < J; j++)
			wv[j] = wload(row[j], q8, c);
#pragma GCC unroll 8
		for (r = 0; r < R; r++) {
			__m512 xv = _mm512_loadu_ps(x + (size_t)r * C + c);

#pragma GCC unroll 8
			for (j = 0; j < J; j++)
				acc[r][j] = _mm512_fmadd_ps(xv, wv[j], acc[r][j]);
		}
	}
	if (c < C) {	/* the same FMA on zero-padded vectors */
#pragma GCC unroll 8
		for (j = 0; j < J; j++)
			wv[j] = wtail(row[j], q8, c, C - c);
#pragma GCC unroll 8
		for (r = 0; r < R; r++) {
			__m512 xv = _mm512_maskz_loadu_ps(tailmask(C - c),
			    x + (size_t)r * C + c);

#pragma GCC unroll 8
			for (j = 0; j < J; j++)
				acc[r][j] = _mm512_fmadd_ps(xv, wv[j], acc[r][j]);
		}
	}
#pragma GCC unroll 8
	for (r = 0; r < R; r++)
#pragma GCC unroll 8
		for (j = 0; j < J; j++) {
			float s = _mm512_reduce_add_ps(acc[r][j]);

			if (scale)
				s *= scale[o + j];
			out[(size_t)r * ldo + o + j] = s + (bias ? bias[o + j] : 0);
		}
}

/*
 * Outputs o..o+J for all R rows, DOT_MR rows a block; the first block
 * prefetches the next J weight rows while the others reuse these from
 * L1 (past the last row, a prefetch is harmless: it never faults).
 */
static INLINE512 void
dot_col(int J, int q8, float *out, const float *x, const void *w,
    const float *scale, const float *bias, int R, int C, int OC, int o)
{
	int r, n;

	for (r = 0; r < R; r += n) {
		float *y = out + (size_t)r * OC;
		const float *xr = x + (size_t)r * C;

		n = R - r < DOT_MR ? R - r : DOT_MR;
#define DOT_CASE(M, P) dot_block(M, J, q8, P, y, OC, xr, C, w, scale, \
    bias, o)
#define DOT_ALL(P) switch (n) { \
	case 1: DOT_CASE(1, P); break; case 2: DOT_CASE(2, P); break; \
	case 3: DOT_CASE(3, P); break; default: DOT_CASE(DOT_MR, P); break; \
}
		if (r == 0)
			DOT_ALL(1)
		else
			DOT_ALL(0)
#undef DOT_ALL
#undef DOT_CASE
	}
}

/*
 * Outputs lo..hi for R rows. The outer loop runs over the weights, so
 * each weight row is read from memory once for all R rows (the x rows
 * stay in L2), and its block of DOT_J rows from L1 for each DOT_MR rows.
 */
static INLINE512 void
dot_cols(int q8, float *out, const float *x, const void *w,
    const float *scale, const float *bias, int R, int C, int OC, int lo,
    int hi)
{
	int o;

	for (o = lo; o + DOT_J <= hi; o += DOT_J)
		dot_col(DOT_J, q8, out, x, w, scale, bias, R, C, OC, o);
	for (; o < hi; o++)
		dot_col(1, q8, out, x, w, scale, bias, R, C, OC, o);
}

AVX512 static void
dot_rows(float *out, const float *x, const void *w, int q8,
    const float *scale, const float *bias, int R, int C, int OC, int lo,
    int hi)
{
	if (q8)
		dot_cols(1, out, x, w, scale, bias, R, C, OC, lo, hi);
	else
		dot_cols(0, out, x, w, scale, bias, R, C, OC, lo, hi);
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

/* A product, cut into parts of size columns or outputs. */
struct gemv_job {
	float *out;
	const float *inp, *scale, *bias;
	const void *w;
	int q8, N, C, OC, size;
};

static void
axpy_part(const void *arg, int part)
{
	const struct gemv_job *j = arg;
	int lo = part * j->size, hi = lo + j->size < j->OC ? lo + j->size : j->OC;

	if (have512())
		axpy_rows(j->out, j->inp, j->w, j->bias, j->N, j->C, j->OC, lo,
		    hi);
	else
		axpy_plain(j->out, j->inp, j->w, j->bias, j->N, j->C, j->OC, lo,
		    hi);
}

static void
dot_part(const void *arg, int part)
{
	const struct gemv_job *j = arg;
	int lo = part * j->size, hi = lo + j->size < j->OC ? lo + j->size : j->OC;
	int n, R;

	if (have512()) {
		dot_rows(j->out, j->inp, j->w, j->q8, j->scale, j->bias, j->N,
		    j->C, j->OC, lo, hi);
		return;
	}
	for (n = 0; n < j->N; n += R) {
		float *out = j->out + (size_t)n * j->OC;
		const float *x = j->inp + (size_t)n * j->C;

		R = j->N - n < 8 ? j->N - n : 8;
		dot_plain(out, x, j->w, j->q8, j->scale, j->bias, R, j->C,
		    j->OC, lo, hi);
	}
}

static void
run(part_fn *fn, struct gemv_job *j, int unit)
{
	int nt = threads_for((size_t)j->C * j->OC);

	have512();	/* decided here, before any helper asks */
	j->size = part_size(j->OC, unit, nt);
	crew_run(fn, j, (j->OC + j->size - 1) / j->size, nt);
}

void
gemv_f32(float *out, const float *inp, const float *w, const float *bias,
    int N, int C, int OC)
{
	struct gemv_job j = { out, inp, NULL, bias, w, 0, N, C, OC, 0 };

	run(axpy_part, &j, 4 * VEC);
}

void
gemv_f32t(float *out, const float *inp, const float *w, int N, int C, int OC)
{
	struct gemv_job j = { out, inp, NULL, NULL, w, 0, N, C, OC, 0 };

	run(dot_part, &j, 2 * DOT_J);
}

void
gemv_q8(float *out, const float *inp, const int8_t *w, const float *scale,
    const float *bias, int N, int C, int OC)
{
	struct gemv_job j = { out, inp, scale, bias, w, 1, N, C, OC, 0 };

	run(dot_part, &j, 2 * DOT_J);
}
