/* gpt_cpu.c - the CPU backend of the GPT-2 model: fp32, OpenMP, matmuls through blas.h */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/blas.h"
#include "model/gemv.h"
#include "model/gpt.h"
#include "core/util.h"

/*
 * Every loop is split so that each output element is computed by one
 * thread in a fixed order: results do not depend on the thread count.
 * Hot kernels get AVX-512 and AVX2 clones where the compiler can make
 * them; the choice is made once at load time.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HOT
#endif

#define GELU_K 0.7978845608028654f	/* sqrt(2/pi) */

/*
 * Below about this much work (elements, or multiply-adds over 4 for
 * attention) a loop runs on one thread. A fork and join costs microseconds
 * on an idle machine, but up to a scheduler time slice on a busy one,
 * where a thread of the team waits for a processor; a millisecond of work
 * is worth splitting either way.
 */
#define BIG(n) ((size_t)(n) >= (1 << 20))

/*
 * exp(x) to about 2 ulp, branch-free so that loops over it vectorize
 * (Cephes' expf: x = n ln2 + r, a polynomial for exp(r), 2^n built from
 * the exponent bits). x is clamped to [-87.3, 88]: below, about 1e-38
 * instead of 0; above, exp(88). NaN stays NaN.
 */
static inline float
fexp(float x)
{
	union { float f; uint32_t u; } v, e;
	float n, r, y;

	x = x < -87.3f ? -87.3f : x;
	x = x > 88.0f ? 88.0f : x;
	/* 1.5 * 2^23 makes the float round x / ln2 and hold it in its low bits */
	v.f = x * 1.44269504088896341f + 12582912.0f;
	n = v.f - 12582912.0f;
	r = x - n * 0.693359375f + n * 2.12194440e-4f;
	y = 1.9875691500e-4f;
	y = y * r + 1.3981999507e-3f;
	y = y * r + 8.3334519073e-3f;
	y = y * r + 4.1665795894e-2f;
	y = y * r + 1.6666665459e-1f;
	y = y * r + 5.0000001201e-1f;
	y = y * r * r + r + 1.0f;
	e.u = (v.u - 0x4b400000u + 127u) << 23;
	return y * e.f;
}

/* tanh(x) = 1 - 2 / (exp(2x) + 1) */
static inline float
ftanh(float x)
{
	return 1.0f - 2.0f / (fexp(2.0f * x) + 1.0f);
}

static void *
cpu_alloc(size_t size)
{
	void *p = NULL;

	size = (size + 63) & ~(size_t)63;
	if (posix_memalign(&p, 64, size ? size : 64) != 0)
		return NULL;
	memset(p, 0, size);
	return p;
}

static void
cpu_free(void *p)
{
	free(p);
}

static void
cpu_copy(void *dst, const void *src, size_t size)
{
	if (size)
		memcpy(dst, src, size);
}

static void
cpu_zero(void *p, size_t size)
{
	if (size)
		memset(p, 0, size);
}

/* out (C) = e (C) + p (C) */
static inline void
add_row(float *out, const float *e, const float *p, int C)
{
	int c;

#pragma omp simd
	for (c = 0; c < C; c++)
		out[c] = e[c] + p[c];
}

/* out (B,T,C) = wte[inp - v0] + wpe[t], or 0 for tokens outside [v0, v0 + nrows) */
static void
encoder_forward(float *out, const int32_t *inp, const float *wte,
    const float *wpe, int B, int T, int C, int v0, int nrows)
{
	long bt;

#pragma omp parallel for schedule(static) if (BIG((size_t)B * T * C))
	for (bt = 0; bt < (long)B * T; bt++) {
		int v = inp[bt] - v0;

		if (v >= 0 && v < nrows)
			add_row(out + bt * C, wte + (size_t)v * C,
			    wpe + (size_t)(bt % T) * C, C);
		else
			memset(out + bt * C, 0, (size_t)C * sizeof *out);
	}
}

/* dwte (nrows,C) += for tokens in [v0, v0 + nrows), dwpe (maxT,C) +=; dout (B,T,C), inp (B,T) */
static void
encoder_backward(float *dwte, float *dwpe, const float *dout,
    const int32_t *inp, int B, int T, int C, int v0, int nrows)
{
	int t;
	long c0;

	/* Tokens repeat, so threads split the channels, not the tokens. */
#pragma omp parallel for schedule(static) if (BIG((size_t)B * T * C))
	for (c0 = 0; c0 < C; c0 += 16) {
		int c1 = c0 + 16 < C ? c0 + 16 : C;
		long bt;
		int c;

		for (bt = 0; bt < (long)B * T; bt++) {
			int v = inp[bt] - v0;
			float *d = dwte + (size_t)v * C;
			const float *g = dout + bt * C;

			if (v < 0 || v >= nrows)
				continue;
			for (c = c0; c < c1; c++)
				d[c] += g[c];
		}
	}
#pragma omp parallel for schedule(static) if (BIG((size_t)B * T * C))
	for (t = 0; t < T; t++) {
		float *d = dwpe + (size_t)t * C;
		int b, c;

		for (b = 0; b < B; b++) {
			const float *g = dout + ((size_t)b * T + t) * C;

#pragma omp simd
			for (c = 0; c < C; c++)
				d[c] += g[c];
		}
	}
}

HOT static void
layernorm_row(float *out, float *mean, float *rstd, const float *x,
    const float *w, const float *b, int C, float eps)
{
	float m = 0, v = 0, s;
	int c;

#pragma omp simd reduction(+:m)
	for (c = 0; c < C; c++)
		m += x[c];
	m /= C;
#pragma omp simd reduction(+:v)
	for (c = 0; c < C; c++)
		v += (x[c] - m) * (x[c] - m);
	v /= C;
	s = 1.0f / sqrtf(v + eps);
#pragma omp simd
	for (c = 0; c < C; c++)
		out[c] = (x[c] - m) * s * w[c] + b[c];
	*mean = m;
	*rstd = s;
}

/* out (N,C), mean (N), rstd (N); inp (N,C), w (C), b (C) */
static void
layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
    const float *w, const float *b, int N, int C, float eps)
{
	long n;

#pragma omp parallel for schedule(static) if (BIG((size_t)N * C))
	for (n = 0; n < N; n++)
		layernorm_row(out + n * C, mean + n, rstd + n, inp + n * C, w, b,
		    C, eps);
}

HOT static void
layernorm_drow(float *dx, const float *dy, const float *x, const float *w,
    float mean, float rstd, int C)
{
	float dmean = 0, dnorm = 0;
	int c;

#pragma omp simd reduction(+:dmean, dnorm)
	for (c = 0; c < C; c++) {
		float g = dy[c] * w[c];

		dmean += g;
		dnorm += g * (x[c] - mean) * rstd;
	}
	dmean /= C;
	dnorm /= C;
#pragma omp simd
	for (c = 0; c < C; c++) {
		float norm = (x[c] - mean) * rstd;

		dx[c] += (dy[c] * w[c] - dmean - norm * dnorm) * rstd;
	}
}

HOT static void
layernorm_dparams(float *dw, float *db, const float *dout, const float *inp,
    const float *mean, const float *rstd, int N, int C, int c0, int c1)
{
	int n, c;

	for (n = 0; n < N; n++) {
		const float *dy = dout + (size_t)n * C, *x = inp + (size_t)n * C;
		float m = mean[n], s = rstd[n];

#pragma omp simd
		for (c = c0; c < c1; c++) {
			dw[c] += dy[c] * (x[c] - m) * s;
			db[c] += dy[c];
		}
	}
}

/* dinp (N,C) +=, dw (C) +=, db (C) +=; dout (N,C), inp (N,C), w (C), mean, rstd (N) */
static void
layernorm_backward(float *dinp, float *dw, float *db, const float *dout,
    const float *inp, const float *w, const float *mean, const float *rstd,
    int N, int C)
{
	long n, c0;

#pragma omp parallel if (BIG((size_t)N * C))
	{
#pragma omp for schedule(static) nowait
		for (n = 0; n < N; n++)
			layernorm_drow(dinp + n * C, dout + n * C, inp + n * C, w,
			    mean[n], rstd[n], C);
#pragma omp for schedule(static)
		for (c0 = 0; c0 < C; c0 += 64)
			layernorm_dparams(dw, db, dout, inp, mean, rstd, N, C,
			    (int)c0, c0 + 64 < C ? (int)c0 + 64 : C);
	}
}

/* db (OC) += the column sums of dout (N,OC) */
HOT static void
colsum(float *db, const float *dout, int N, int OC, int c0, int c1)
{
	int n, c;

	for (n = 0; n < N; n++)
#pragma omp simd
		for (c = c0; c < c1; c++)
			db[c] += dout[(size_t)n * OC + c];
}

/* out (N,OC) = inp (N,C) @ w (C,OC) + bias (OC) */
static void
matmul_forward(float *out, const float *inp, const float *w,
    const float *bias, int N, int C, int OC)
{
	long n;

	if (N <= GEMV_MAXN) {
		gemv_f32(out, inp, w, bias, N, C, OC);
		return;
	}
	if (bias) {
#pragma omp parallel for schedule(static) if (BIG((size_t)N * OC))
		for (n = 0; n < N; n++)
			memcpy(out + n * OC, bias, (size_t)OC * sizeof *out);
	}
	blas_sgemm(0, 0, N, OC, C, 1, inp, C, w, OC, bias ? 1 : 0, out, OC);
}

/* dinp (N,C) =, dw (C,OC) +=, dbias (OC) +=; dout (N,OC), inp (N,C), w (C,OC) */
static void
matmul_backward(float *dinp, float *dw, float *dbias, const float *dout,
    const float *inp, const float *w, int N, int C, int OC)
{
	long c0;

	blas_sgemm(0, 1, N, C, OC, 1, dout, OC, w, OC, 0, dinp, C);
	blas_sgemm(1, 0, C, OC, N, 1, inp, C, dout, OC, 1, dw, OC);
	if (dbias) {
#pragma omp parallel for schedule(static) if (BIG((size_t)N * OC))
		for (c0 = 0; c0 < OC; c0 += 64)
			colsum(dbias, dout, N, OC, (int)c0,
			    c0 + 64 < OC ? (int)c0 + 64 : OC);
	}
}

/*
 * One query row of one head: att (T) the probabilities over keys 0..t,
 * out (HS) their weighted sum of values after dropout, unless out is
 * NULL. q, k, v point at the head's first channel; key rows are 3C apart.
 */
HOT static void
attention_row(float *out, float *att, const float *q, const float *k,
    const float *v, int t, int T, int C3, int HS, float scale, float p,
    uint64_t key, uint64_t idx)
{
	float max = -INFINITY, sum = 0, inv, keep = 1.0f / (1.0f - p);
	int t2, i;

	for (t2 = 0; t2 <= t; t2++) {
		const float *kk = k + (size_t)t2 * C3;
		float s = 0;

#pragma omp simd reduction(+:s)
		for (i = 0; i < HS; i++)
			s += q[i] * kk[i];
		s *= scale;
		att[t2] = s;
		max = s > max ? s : max;
	}
#pragma omp simd reduction(+:sum)
	for (t2 = 0; t2 <= t; t2++) {
		att[t2] = fexp(att[t2] - max);
		sum += att[t2];
	}
	inv = 1.0f / sum;
#pragma omp simd
	for (t2 = 0; t2 <= t; t2++)
		att[t2] *= inv;
	for (t2 = t + 1; t2 < T; t2++)
		att[t2] = 0;
	if (out == NULL)
		return;
	for (i = 0; i < HS; i++)
		out[i] = 0;
	for (t2 = 0; t2 <= t; t2++) {
		const float *vv = v + (size_t)t2 * C3;
		float a = att[t2];

		if (p > 0)
			a = gpt_dropout_keep(key, idx + t2, p) ? a * keep : 0;
#pragma omp simd
		for (i = 0; i < HS; i++)
			out[i] += a * vv[i];
	}
}

/*
 * The mask index of probability row r = (b, h, t) of a call: its first
 * element's (struct gpt_mask).
 */
static uint64_t
mask_row(const struct gpt_mask *mk, long r, int T, int NH)
{
	uint64_t t = (uint64_t)(r % T), h = (uint64_t)(r / T % NH);
	uint64_t b = (uint64_t)(r / T / NH);

	if (mk == NULL)
		return 0;
	return (((mk->s0 + b) * (uint64_t)mk->nh + (uint64_t)mk->h0 + h) *
	    (uint64_t)T + t) * (uint64_t)T;
}

/* out (B,T,C), att (B,NH,T,T); qkv (B,T,3C) */
static void
attention_forward(float *out, float *att, const float *qkv, int B, int T,
    int C, int NH, float p, const struct gpt_mask *mk)
{
	int HS = C / NH;
	float scale = 1.0f / sqrtf((float)HS);
	uint64_t key = mk ? mk->key : 0;
	long r;

#pragma omp parallel for schedule(static) if (BIG((size_t)B * T * T * C / 4))
	for (r = 0; r < (long)B * NH * T; r++) {
		int t = (int)(r % T), h = (int)(r / T % NH), b = (int)(r / T / NH);
		const float *base = qkv + (size_t)b * T * 3 * C + h * HS;

		attention_row(out ? out + ((size_t)b * T + t) * C + h * HS :
		    NULL, att + (size_t)r * T, base + (size_t)t * 3 * C, base + C,
		    base + 2 * C, t, T, 3 * C, HS, scale, p, key,
		    mask_row(mk, r, T, NH));
	}
}

/*
 * One query row backward: dq (HS) =, dk and dv rows += for keys 0..t;
 * dp (T) scratch; dout (HS) the gradient of the row's output.
 */
HOT static void
attention_drow(float *dq, float *dk, float *dv, float *dp, const float *dout,
    const float *q, const float *k, const float *v, const float *att, int t,
    int C3, int HS, float scale, float p, uint64_t key, uint64_t idx)
{
	float keep = 1.0f / (1.0f - p), dot = 0;
	int t2, i;

	for (t2 = 0; t2 <= t; t2++) {
		const float *vv = v + (size_t)t2 * C3;
		float *dvv = dv + (size_t)t2 * C3, s = 0, a = att[t2], m = 1;

		if (p > 0)
			m = gpt_dropout_keep(key, idx + t2, p) ? keep : 0;
		a *= m;
#pragma omp simd reduction(+:s)
		for (i = 0; i < HS; i++) {
			s += dout[i] * vv[i];
			dvv[i] += a * dout[i];
		}
		dp[t2] = s * m;
		dot += dp[t2] * att[t2];
	}
	for (i = 0; i < HS; i++)
		dq[i] = 0;
	for (t2 = 0; t2 <= t; t2++) {
		const float *kk = k + (size_t)t2 * C3;
		float *dkk = dk + (size_t)t2 * C3;
		float ds = att[t2] * (dp[t2] - dot) * scale;

#pragma omp simd
		for (i = 0; i < HS; i++) {
			dq[i] += ds * kk[i];
			dkk[i] += ds * q[i];
		}
	}
}

/* dqkv (B,T,3C) =, scratch (B,NH,T,T); dout (B,T,C), qkv (B,T,3C), att (B,NH,T,T) */
static void
attention_backward(float *dqkv, float *scratch, const float *dout,
    const float *qkv, const float *att, int B, int T, int C, int NH, float p,
    const struct gpt_mask *mk)
{
	int HS = C / NH;
	float scale = 1.0f / sqrtf((float)HS);
	uint64_t key = mk ? mk->key : 0;
	long bh;

	/* Keys and values gather from every later query: a thread owns a head. */
#pragma omp parallel for schedule(static) if (BIG((size_t)B * T * T * C / 4))
	for (bh = 0; bh < (long)B * NH; bh++) {
		int b = (int)(bh / NH), h = (int)(bh % NH), t;
		size_t off = (size_t)b * T * 3 * C + h * HS;
		const float *base = qkv + off;
		float *dbase = dqkv + off;

		for (t = 0; t < T; t++) {
			memset(dbase + (size_t)t * 3 * C + C, 0, HS * sizeof(float));
			memset(dbase + (size_t)t * 3 * C + 2 * C, 0,
			    HS * sizeof(float));
		}
		for (t = 0; t < T; t++) {
			size_t r = (size_t)bh * T + t;

			attention_drow(dbase + (size_t)t * 3 * C, dbase + C,
			    dbase + 2 * C, scratch + r * T,
			    dout + ((size_t)b * T + t) * C + h * HS,
			    base + (size_t)t * 3 * C, base + C, base + 2 * C,
			    att + r * T, t, 3 * C, HS, scale, p, key,
			    mask_row(mk, (long)r, T, NH));
		}
	}
}

HOT static void
gelu_chunk(float *out, const float *x, size_t n)
{
	size_t i;

#pragma omp simd
	for (i = 0; i < n; i++) {
		float u = GELU_K * (x[i] + 0.044715f * x[i] * x[i] * x[i]);

		out[i] = 0.5f * x[i] * (1.0f + ftanh(u));
	}
}

HOT static void
gelu_dchunk(float *dx, const float *x, const float *dy, size_t n)
{
	size_t i;

#pragma omp simd
	for (i = 0; i < n; i++) {
		float x2 = x[i] * x[i];
		float th = ftanh(GELU_K * (x[i] + 0.044715f * x2 * x[i]));
		float sech2 = 1.0f - th * th;
		float du = GELU_K * (1.0f + 3.0f * 0.044715f * x2);

		dx[i] = dy[i] * (0.5f * (1.0f + th) + 0.5f * x[i] * sech2 * du);
	}
}

#define CHUNK GPT_NORM_CHUNK
/*
 * The loop of the elementwise passes: i over [0, N) in steps of CHUNK, in
 * parallel where N is BIG, CLEN(i) the length of the chunk at i. N is
 * the pass's element count, a parameter of the function that uses it.
 */
#define FOR_CHUNKS(i) \
	_Pragma("omp parallel for schedule(static) if (BIG(N))") \
	for (long i = 0; i < (long)N; i += CHUNK)
#define CLEN(i) (N - (size_t)(i) < CHUNK ? N - (size_t)(i) : CHUNK)

/* out (N) = gelu(inp (N)) */
static void
gelu_forward(float *out, const float *inp, size_t N)
{
	FOR_CHUNKS(i)
		gelu_chunk(out + i, inp + i, CLEN(i));
}

/* dinp (N) = gelu'(inp) * dout */
static void
gelu_backward(float *dinp, const float *inp, const float *dout, size_t N)
{
	FOR_CHUNKS(i)
		gelu_dchunk(dinp + i, inp + i, dout + i, CLEN(i));
}

/* out (n) = a + dropout(b), for elements i0.. of the tensor */
HOT static void
residual_chunk(float *out, const float *a, const float *b, size_t n,
    float p, uint64_t key, uint64_t i0)
{
	float keep = 1.0f / (1.0f - p);
	size_t i;

	if (p > 0) {
		for (i = 0; i < n; i++)
			out[i] = (a ? a[i] : 0) + (gpt_dropout_keep(key, i0 + i, p) ?
			    b[i] * keep : 0);
	} else if (a) {
#pragma omp simd
		for (i = 0; i < n; i++)
			out[i] = a[i] + b[i];
	} else if (out != b) {
		memcpy(out, b, n * sizeof *out);
	}
}

/* out (N) = a + dropout(b), the masks of elements i0.. */
static void
residual_forward(float *out, const float *a, const float *b, size_t N,
    float p, uint64_t key, uint64_t i0)
{
	FOR_CHUNKS(i)
		residual_chunk(out + i, a + i, b + i, CLEN(i), p, key,
		    i0 + (uint64_t)i);
}

/* out (N) = dropout(inp (N)), the masks of elements i0.. */
static void
dropout(float *out, const float *inp, size_t N, float p, uint64_t key,
    uint64_t i0)
{
	FOR_CHUNKS(i)
		residual_chunk(out + i, NULL, inp + i, CLEN(i), p, key,
		    i0 + (uint64_t)i);
}

HOT static void
add_chunk(float *out, const float *a, size_t n)
{
	size_t i;

#pragma omp simd
	for (i = 0; i < n; i++)
		out[i] += a[i];
}

/* out (N) += a (N) */
static void
add(float *out, const float *a, size_t N)
{
	FOR_CHUNKS(i)
		add_chunk(out + i, a + i, CLEN(i));
}

/* logits (N,V) = inp (N,C) @ wte[:V]^T; wte (Vp,C) */
static void
lmhead_forward(float *logits, const float *inp, const float *wte, int N,
    int C, int V)
{
	if (N <= GEMV_MAXN)
		gemv_f32t(logits, inp, wte, N, C, V);
	else
		blas_sgemm(0, 1, N, V, C, 1, inp, C, wte, C, 0, logits, V);
}

/* dinp (N,C) =, dwte (Vp,C) +=; dlogits (N,V), inp (N,C), wte (Vp,C) */
static void
lmhead_backward(float *dinp, float *dwte, const float *dlogits,
    const float *inp, const float *wte, int N, int C, int V)
{
	blas_sgemm(0, 0, N, C, V, 1, dlogits, V, wte, C, 0, dinp, C);
	blas_sgemm(1, 0, V, C, N, 1, dlogits, V, inp, C, 1, dwte, C);
}

/*
 * One row: the loss at target, and the row replaced by its gradient. The
 * exponentials are summed in double: a float sum of 50257 terms can be
 * off by 1e-5 of the loss when the compiler does not split it into lanes.
 */
HOT static float
crossentropy_row(float *x, int target, int V, float dloss)
{
	float max = -INFINITY, xt = x[target], inv;
	double sum = 0;
	int i;

#pragma omp simd reduction(max:max)
	for (i = 0; i < V; i++)
		max = x[i] > max ? x[i] : max;
	if (dloss == 0) {
#pragma omp simd reduction(+:sum)
		for (i = 0; i < V; i++)
			sum += fexp(x[i] - max);
		return (float)(log(sum) - (xt - max));
	}
#pragma omp simd reduction(+:sum)
	for (i = 0; i < V; i++) {
		x[i] = fexp(x[i] - max);
		sum += x[i];
	}
	inv = (float)(dloss / sum);
#pragma omp simd
	for (i = 0; i < V; i++)
		x[i] *= inv;
	x[target] -= dloss;
	return (float)(log(sum) - (xt - max));
}

/* losses (N); logits (N,V) replaced by the gradient when dloss != 0; targets (N) */
static void
crossentropy(float *losses, float *logits, const int32_t *targets, int N,
    int V, float dloss)
{
	long n;

#pragma omp parallel for schedule(static) if (BIG((size_t)N * V))
	for (n = 0; n < N; n++)
		losses[n] = crossentropy_row(logits + n * V, targets[n], V, dloss);
}

/* mx (N) = the rows' max of logits (N,V) */
static void
ce_rowmax(float *mx, const float *logits, int N, int V)
{
	long n;

#pragma omp parallel for schedule(static) if (BIG((size_t)N * V))
	for (n = 0; n < N; n++) {
		const float *x = logits + n * V;
		float max = -INFINITY;
		int i;

#pragma omp simd reduction(max:max)
		for (i = 0; i < V; i++)
			max = x[i] > max ? x[i] : max;
		mx[n] = max;
	}
}

/* sx (2N): each row's sum of exp(x - mx) in double, then its target's logit (here, else 0) */
static void
ce_rowsum(double *sx, const float *logits, const int32_t *targets,
    const float *mx, int N, int V, int v0)
{
	long n;

#pragma omp parallel for schedule(static) if (BIG((size_t)N * V))
	for (n = 0; n < N; n++) {
		const float *x = logits + n * V;
		float max = mx[n];
		double sum = 0;
		int i, t = targets[n] - v0;

#pragma omp simd reduction(+:sum)
		for (i = 0; i < V; i++)
			sum += fexp(x[i] - max);
		sx[n] = sum;
		sx[N + n] = t >= 0 && t < V ? x[t] : 0;
	}
}

/* losses (N) from the reduced mx and sx; logits replaced by the gradient when dloss != 0 */
static void
ce_grad(float *losses, float *logits, const int32_t *targets, const float *mx,
    const double *sx, int N, int V, int v0, float dloss)
{
	long n;

#pragma omp parallel for schedule(static) if (BIG((size_t)N * V))
	for (n = 0; n < N; n++) {
		float *x = logits + n * V, max = mx[n], inv;
		int i, t = targets[n] - v0;

		losses[n] = (float)(log(sx[n]) - ((float)sx[N + n] - max));
		if (dloss == 0)
			continue;
		inv = (float)(dloss / sx[n]);
#pragma omp simd
		for (i = 0; i < V; i++)
			x[i] = fexp(x[i] - max) * inv;
		if (t >= 0 && t < V)
			x[t] -= dloss;
	}
}

HOT static void
adamw_chunk(float *p, const float *g, float *m, float *v, size_t n, float lr,
    float beta1, float beta2, float eps, float wd, float bc1, float bc2,
    float gscale)
{
	size_t i;

#pragma omp simd
	for (i = 0; i < n; i++)
		gpt_adamw_elem(p + i, g[i], m + i, v + i, lr, beta1, beta2, eps,
		    wd, bc1, bc2, gscale);
}

/* AdamW on N elements (gpt.h) */
static void
adamw(float *p, const float *g, float *m, float *v, size_t N, float lr,
    float beta1, float beta2, float eps, float wd, float bc1, float bc2,
    float gscale)
{
	FOR_CHUNKS(i)
		adamw_chunk(p + i, g + i, m + i, v + i, CLEN(i), lr, beta1,
		    beta2, eps, wd, bc1, bc2, gscale);
}

HOT static double
sumsq_chunk(const float *x, size_t n)
{
	double s = 0;
	size_t i;

#pragma omp simd reduction(+:s)
	for (i = 0; i < n; i++)
		s += (double)x[i] * x[i];
	return s;
}

/* part (ceil(n / CHUNK)) = the sums of squares of x's chunks */
static void
sumsq_chunks(double *part, const float *x, size_t n)
{
	long i, nchunk = (long)((n + CHUNK - 1) / CHUNK);

#pragma omp parallel for schedule(static) if (BIG(n))
	for (i = 0; i < nchunk; i++)
		part[i] = sumsq_chunk(x + i * CHUNK,
		    n - i * CHUNK < CHUNK ? n - i * CHUNK : CHUNK);
}

/* sum of x (n) squared: fixed chunks, summed in order */
static double
sumsq(const float *x, size_t n)
{
	size_t nchunk = (n + CHUNK - 1) / CHUNK, i;
	double *part = calloc(nchunk ? nchunk : 1, sizeof *part), s = 0;

	if (part == NULL)
		return sumsq_chunk(x, n);
	sumsq_chunks(part, x, n);
	for (i = 0; i < nchunk; i++)
		s += part[i];
	free(part);
	return s;
}

/* out (N,C) = wte[inp[i]] + wpe[pos[i]]; inp (N), pos (N) */
static void
encoder_forward_pos(float *out, const int32_t *inp, const int32_t *pos,
    const float *wte, const float *wpe, int N, int C)
{
	long i;

#pragma omp parallel for schedule(static) if (BIG((size_t)N * C))
	for (i = 0; i < N; i++)
		add_row(out + i * C, wte + (size_t)inp[i] * C,
		    wpe + (size_t)pos[i] * C, C);
}

/* out (N,C), kcache, vcache (S,NH,maxT,HS); qkv (N,3C), seq (N), pos (N) */
static void
attention_forward_kv(float *out, float *kcache, float *vcache,
    const float *qkv, const int32_t *seq, const int32_t *pos, int N, int C,
    int NH, int maxT)
{
	int HS = C / NH;
	float scale = 1.0f / sqrtf((float)HS);
	size_t work = 0;
	long r;

	for (r = 0; r < N; r++)
		work += (size_t)(pos[r] + 1) * C;
#pragma omp parallel if (BIG(work / 4))
	{
		float *att = xmalloc((size_t)maxT * sizeof *att);

#pragma omp for schedule(static)
		for (r = 0; r < (long)N * NH; r++) {
			int i = (int)(r / NH), h = (int)(r % NH);
			size_t row = (((size_t)seq[i] * NH + h) * maxT + pos[i]) * HS;
			const float *q = qkv + (size_t)i * 3 * C + h * HS;

			memcpy(kcache + row, q + C, HS * sizeof *q);
			memcpy(vcache + row, q + 2 * C, HS * sizeof *q);
		}
#pragma omp for schedule(static)
		for (r = 0; r < (long)N * NH; r++) {
			int i = (int)(r / NH), h = (int)(r % NH), p = pos[i];
			size_t base = ((size_t)seq[i] * NH + h) * maxT * HS;

			attention_row(out + (size_t)i * C + h * HS, att,
			    qkv + (size_t)i * 3 * C + h * HS, kcache + base,
			    vcache + base, p, p + 1, HS, HS, scale, 0, 0, 0);
		}
		free(att);
	}
}

/* out (N,OC) = inp (N,C) @ (w (OC,C) * scale (OC))^T + bias; w int8 */
static void
matmul_forward_q8(float *out, const float *inp, const int8_t *w,
    const float *scale, const float *bias, int N, int C, int OC)
{
	enum { ROWS = 2048 };	/* weight rows widened to fp32 at a time */
	float *wf;
	long o0, o;

	if (N <= GEMV_MAXN) {
		gemv_q8(out, inp, w, scale, bias, N, C, OC);
		return;
	}
	/* Many rows (a prompt, a window to score): widen and use sgemm. */
	wf = xmalloc((size_t)ROWS * C * sizeof *wf);
	for (o0 = 0; o0 < OC; o0 += ROWS) {
		int n = OC - o0 < ROWS ? (int)(OC - o0) : ROWS;

#pragma omp parallel for schedule(static) if (BIG((size_t)n * C))
		for (o = 0; o < n; o++) {
			const int8_t *src = w + (size_t)(o0 + o) * C;
			float *dst = wf + (size_t)o * C, s = scale[o0 + o];
			int c;

#pragma omp simd
			for (c = 0; c < C; c++)
				dst[c] = (float)src[c] * s;
		}
#pragma omp parallel for schedule(static) if (BIG((size_t)N * n))
		for (o = 0; o < N; o++) {
			int c;

			for (c = 0; c < n; c++)
				out[(size_t)o * OC + o0 + c] = bias ? bias[o0 + c] : 0;
		}
		blas_sgemm(0, 1, N, n, C, 1, inp, C, wf, C, 1, out + o0, OC);
	}
	free(wf);
}

const struct gpt_backend gpt_cpu = {
	.name = "cpu",
	.alloc = cpu_alloc,
	.free = cpu_free,
	.put = cpu_copy,
	.get = cpu_copy,
	.zero = cpu_zero,
	.encoder_forward = encoder_forward,
	.encoder_backward = encoder_backward,
	.layernorm_forward = layernorm_forward,
	.layernorm_backward = layernorm_backward,
	.matmul_forward = matmul_forward,
	.matmul_backward = matmul_backward,
	.attention_forward = attention_forward,
	.attention_backward = attention_backward,
	.gelu_forward = gelu_forward,
	.gelu_backward = gelu_backward,
	.residual_forward = residual_forward,
	.dropout = dropout,
	.add = add,
	.lmhead_forward = lmhead_forward,
	.lmhead_backward = lmhead_backward,
	.crossentropy = crossentropy,
	.ce_rowmax = ce_rowmax,
	.ce_rowsum = ce_rowsum,
	.ce_grad = ce_grad,
	.adamw = adamw,
	.sumsq = sumsq,
	.sumsq_chunks = sumsq_chunks,
	.encoder_forward_pos = encoder_forward_pos,
	.attention_forward_kv = attention_forward_kv,
	.matmul_forward_q8 = matmul_forward_q8,
	.matmul_forward_rows = gemv_f32,
	.lmhead_forward_rows = gemv_f32t,
	.matmul_forward_q8_rows = gemv_q8,
};
