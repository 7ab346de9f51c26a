/*
 * unit-cuda.c - the CUDA backend against the CPU one (the specification):
 * every launcher on seeded random inputs in fp32, bf16 and fp16, the
 * embedding gradients bit for bit, then 20 training steps of a small
 * model on both, a GPU run repeated and recomputed to the same bits.
 * Skips without a device.
 *
 * The error of a result is max |gpu - cpu| / max |cpu| over the tensor.
 * Thresholds: 1e-5 for fp32 element-wise work and reductions (the GPU's
 * expf and tanhf against the CPU's 2-ulp fexp, other summation orders),
 * 1e-4 for fp32 products of long sums; bf16 products (8-bit mantissas)
 * 2e-2, fp16 (11 bits) 4e-3; index-only kernels and the embedding
 * gradients (the same additions in the same order) exactly. The backend
 * comes from the plugin lib/owt/gpt-cuda.so, loaded as the programs load
 * it (gpt_device_cuda).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/blas.h"
#include "model/gpt.h"
#include "train/gpt_data.h"
#include "train/train.h"
#include "core/util.h"
#include "unit.h"

#ifndef OWT_CUDA
int
main(void)
{
	puts("1..0 # SKIP built without CUDA (nvcc was not found)");
	return 0;
}
#else
#include "model/gpt_device.h"
#include "owtcuda.h"

static const struct owtcuda *cuda;	/* the plugin, as the programs open it */
static const struct gpt_backend *cu, *cpu = &gpt_cpu;
static uint64_t seed = 1;

static void
fill(float *x, size_t n, float scale)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = scale * ((float)(owt_mix64(seed++) >> 40) /
		    16777216.0f * 2.0f - 1.0f);
}

static float *
rnd(size_t n, float scale)
{
	float *x = xmalloc((n ? n : 1) * sizeof *x);

	fill(x, n, scale);
	return x;
}

/* A device copy of host memory. */
static void *
dev(const void *h, size_t bytes)
{
	void *d = cu->alloc(bytes);

	if (d == NULL)
		owt_die(XSYS, "out of device memory");
	cu->put(d, h, bytes);
	return d;
}

/* The error of the device tensor d (n floats) against the host one want. */
static double
err_of(const float *d, const float *want, size_t n)
{
	float *got = xmalloc(n * sizeof *got);
	double max = 0, ref = 0;
	size_t i;

	cu->get(got, d, n * sizeof *got);
	for (i = 0; i < n; i++) {
		double e = fabs((double)got[i] - want[i]);

		if (!(e <= max))	/* NaN counts as the largest */
			max = isnan(e) ? INFINITY : e;
		ref = fmax(ref, fabs((double)want[i]));
	}
	free(got);
	return ref > 0 ? max / ref : max;
}

#define CHECK(d, want, n, tol, ...) do { \
	double e_ = err_of((d), (want), (n)); \
	OK(e_ <= (tol), __VA_ARGS__); \
	printf("#   error %.3g (threshold %.3g)\n", e_, (double)(tol)); \
} while (0)

static const char *pname[] = { "fp32", "bf16", "fp16" };
/* products: fp32, bf16, fp16 */
static const double tol_mm[] = { 1e-4, 2e-2, 4e-3 };

/* Each launcher once, in precision prec. */
static void
test_launchers(int prec)
{
	enum { B = 2, T = 37, C = 96, NH = 3, OC = 160, V = 1001, Vp = 1024 };
	enum { maxT = 64, N = B * T };
	const char *pn = pname[prec];
	size_t btc = (size_t)B * T * C, natt = (size_t)B * NH * T * T;
	float *x = rnd(btc * 4, 1), *w = rnd((size_t)Vp * C, 0.5f);
	float *wpe = rnd((size_t)maxT * C, 0.5f);
	float *bias = rnd(4 * C + OC, 0.5f), *dout = rnd(btc * 4, 1);
	float *out = xcalloc(btc * 4 + natt + (size_t)N * V, sizeof *out);
	float *out2 = xcalloc(btc * 4 + natt, sizeof *out2);
	float *out3 = xcalloc((size_t)Vp * C, sizeof *out3);
	float *mean = xmalloc(N * sizeof *mean), *rstd = xmalloc(N * sizeof *rstd);
	float *dx, *dw, *dwb, *dm, *dr, *db, *dd, *dd2, *dd3, *att, *logits;
	int32_t tok[N], pos[N], seq[N], tg[N];
	int i;

	for (i = 0; i < N; i++) {
		tok[i] = (int32_t)(owt_mix64(seed++) % V);
		tg[i] = (int32_t)(owt_mix64(seed++) % V);
		pos[i] = i % T;
		seq[i] = i / T;
	}
	int32_t *dtok = dev(tok, sizeof tok), *dpos = dev(pos, sizeof pos);
	int32_t *dseq = dev(seq, sizeof seq), *dtg = dev(tg, sizeof tg);
	dx = dev(x, btc * 4 * sizeof *x);
	dw = dev(w, (size_t)Vp * C * sizeof *w);
	dwb = dev(bias, (4 * C + OC) * sizeof *bias);
	float *dwpe = dev(wpe, (size_t)maxT * C * sizeof *wpe);
	dd = dev(dout, btc * 4 * sizeof *dout);
	dr = cu->alloc((btc * 4 + natt + (size_t)N * V) * sizeof(float));
	dd2 = cu->alloc((btc * 4 + natt) * sizeof(float));
	dd3 = cu->alloc((size_t)Vp * C * sizeof(float));
	dm = cu->alloc(N * sizeof(float));
	db = cu->alloc(N * sizeof(float));

	/* encoder: an exact gather; its gradient a scatter-add */
	cpu->encoder_forward(out, tok, w, wpe, B, T, C, 0, Vp);
	cu->encoder_forward(dr, dtok, dw, dwpe, B, T, C, 0, Vp);
	CHECK(dr, out, btc, 0, "%s encoder forward", pn);
	memset(out3, 0, (size_t)Vp * C * sizeof *out3);
	memset(out2, 0, (size_t)maxT * C * sizeof *out2);
	cu->zero(dd3, (size_t)Vp * C * sizeof(float));
	cu->zero(dd2, (size_t)maxT * C * sizeof(float));
	cpu->encoder_backward(out3, out2, dout, tok, B, T, C, 0, Vp);
	cu->encoder_backward(dd3, dd2, dd, dtok, B, T, C, 0, Vp);
	CHECK(dd3, out3, (size_t)Vp * C, 0, "%s encoder backward: token "
	    "embedding, exactly", pn);
	CHECK(dd2, out2, (size_t)T * C, 0, "%s encoder backward: positions, "
	    "exactly", pn);

	/* layernorm */
	cpu->layernorm_forward(out, mean, rstd, x, bias, bias + C, N, C, 1e-5f);
	cu->layernorm_forward(dr, dm, db, dx, dwb, dwb + C, N, C, 1e-5f);
	CHECK(dr, out, btc, 1e-5, "%s layernorm forward", pn);
	CHECK(dm, mean, N, 1e-5, "%s layernorm forward: mean", pn);
	CHECK(db, rstd, N, 1e-5, "%s layernorm forward: rstd", pn);
	memcpy(out2, x + btc, btc * sizeof *x);	/* dinp accumulates */
	cu->put(dd2, x + btc, btc * sizeof *x);
	memset(out3, 0, 2 * C * sizeof *out3);
	cu->zero(dd3, 2 * C * sizeof(float));
	cpu->layernorm_backward(out2, out3, out3 + C, dout, x, bias, mean, rstd,
	    N, C);
	cu->layernorm_backward(dd2, dd3, dd3 + C, dd, dx, dwb, dm, db, N, C);
	CHECK(dd2, out2, btc, 1e-5, "%s layernorm backward: input (+=)", pn);
	CHECK(dd3, out3, 2 * (size_t)C, 1e-5, "%s layernorm backward: weight "
	    "and bias (+=)", pn);

	/* matmul: (N,C) @ (C,OC) + bias */
	cpu->matmul_forward(out, x, w, bias, N, C, OC);
	cu->matmul_forward(dr, dx, dw, dwb, N, C, OC);
	CHECK(dr, out, (size_t)N * OC, tol_mm[prec], "%s matmul forward", pn);
	cpu->matmul_forward(out, x, w, NULL, N, C, OC);
	cu->matmul_forward(dr, dx, dw, NULL, N, C, OC);
	CHECK(dr, out, (size_t)N * OC, tol_mm[prec], "%s matmul forward, no "
	    "bias", pn);
	for (i = 0; i < C * OC + OC; i++)
		out3[i] = 0.25f;
	cu->put(dd3, out3, (size_t)(C * OC + OC) * sizeof *out3);
	cpu->matmul_backward(out2, out3, out3 + C * OC, dout, x, w, N, C, OC);
	cu->matmul_backward(dd2, dd3, dd3 + C * OC, dd, dx, dw, N, C, OC);
	CHECK(dd2, out2, (size_t)N * C, tol_mm[prec], "%s matmul backward: "
	    "input", pn);
	CHECK(dd3, out3, (size_t)C * OC, tol_mm[prec], "%s matmul backward: "
	    "weight (+=)", pn);
	CHECK(dd3 + C * OC, out3 + C * OC, OC, 1e-5, "%s matmul backward: bias "
	    "(+=)", pn);
	cpu->matmul_backward(out2, out3, NULL, dout, x, w, N, C, OC);
	cu->matmul_backward(dd2, dd3, NULL, dd, dx, dw, N, C, OC);
	CHECK(dd3, out3, (size_t)C * OC, tol_mm[prec], "%s matmul backward "
	    "without a bias (+= again)", pn);

	/* attention, without and with dropout */
	for (i = 0; i < 2; i++) {
		float p = i ? 0.1f : 0;
		/* with dropout: heads 2..4 of 7, from sample 5 (struct gpt_mask) */
		struct gpt_mask mk = { 99, i ? 5 : 0, i ? 2 : 0, i ? 7 : NH };

		att = out + btc;
		cpu->attention_forward(out, att, x, B, T, C, NH, p, &mk);
		cu->attention_forward(dr, dr + btc, dx, B, T, C, NH, p, &mk);
		CHECK(dr, out, btc, tol_mm[prec] * 2, "%s attention forward "
		    "(dropout %g)", pn, p);
		CHECK(dr + btc, att, natt, tol_mm[prec] * 2, "%s attention "
		    "probabilities (dropout %g)", pn, p);
		/* the probabilities alone (out NULL): the same bits */
		cu->attention_forward(NULL, dd3, dx, B, T, C, NH, p, &mk);
		cu->get(out3, dd3, natt * sizeof *out3);
		cu->get(out2, dr + btc, natt * sizeof *out2);
		OK(memcmp(out3, out2, natt * sizeof *out3) == 0, "%s attention "
		    "probabilities alone, without the output (dropout %g): the "
		    "same bits", pn, p);
		/* the backward pass from the CPU's probabilities on both */
		cu->put(dr + btc, att, natt * sizeof *att);
		cpu->attention_backward(out2, out2 + 3 * btc, dout, x, att, B, T,
		    C, NH, p, &mk);
		cu->attention_backward(dd2, dd2 + 3 * btc, dd, dx, dr + btc, B,
		    T, C, NH, p, &mk);
		CHECK(dd2, out2, 3 * btc, tol_mm[prec] * 2, "%s attention "
		    "backward (dropout %g)", pn, p);
	}

	/* element-wise */
	cpu->gelu_forward(out, x, btc * 4);
	cu->gelu_forward(dr, dx, btc * 4);
	CHECK(dr, out, btc * 4, 1e-5, "%s gelu forward", pn);
	cpu->gelu_backward(out, x, dout, btc * 4);
	cu->gelu_backward(dr, dx, dd, btc * 4);
	CHECK(dr, out, btc * 4, 1e-5, "%s gelu backward", pn);
	cpu->residual_forward(out, x, dout, btc, 0.2f, 7, 12345);
	cu->residual_forward(dr, dx, dd, btc, 0.2f, 7, 12345);
	CHECK(dr, out, btc, 1e-6, "%s residual with dropout (the same mask, "
	    "from element 12345)", pn);
	memcpy(out, x, btc * sizeof *x);	/* as inference calls it: out is a */
	cu->put(dr, x, btc * sizeof *x);
	cpu->residual_forward(out, out, dout, btc, 0, 0, 0);
	cu->residual_forward(dr, dr, dd, btc, 0, 0, 0);
	CHECK(dr, out, btc, 0, "%s residual in place, no dropout", pn);
	cpu->dropout(out, dout, btc, 0.3f, 8, (uint64_t)1 << 40);
	cu->dropout(dr, dd, btc, 0.3f, 8, (uint64_t)1 << 40);
	CHECK(dr, out, btc, 1e-6, "%s dropout, from element 2^40", pn);
	memcpy(out, x, btc * sizeof *x);
	cu->put(dr, x, btc * sizeof *x);
	cpu->add(out, dout, btc);
	cu->add(dr, dd, btc);
	CHECK(dr, out, btc, 0, "%s add, exactly", pn);

	/* output layer and cross-entropy */
	logits = out + btc;
	cpu->lmhead_forward(logits, x, w, N, C, V);
	cu->lmhead_forward(dr + btc, dx, dw, N, C, V);
	CHECK(dr + btc, logits, (size_t)N * V, tol_mm[prec], "%s output layer "
	    "forward", pn);
	cu->put(dr + btc, logits, (size_t)N * V * sizeof *logits);
	cpu->crossentropy(out, logits, tg, N, V, 0);
	cu->crossentropy(dr, dr + btc, dtg, N, V, 0);
	CHECK(dr, out, N, 1e-5, "%s cross-entropy losses", pn);
	cpu->crossentropy(out, logits, tg, N, V, 1.0f / N);
	cu->crossentropy(dr, dr + btc, dtg, N, V, 1.0f / N);
	CHECK(dr, out, N, 1e-5, "%s cross-entropy losses with the gradient",
	    pn);
	CHECK(dr + btc, logits, (size_t)N * V, 1e-5, "%s cross-entropy "
	    "gradient, in place", pn);
	/* the cross-entropy of a vocabulary part [100, 100 + V - 300), in three calls */
	{
		int VP = V - 300, v0 = 100;
		float *lp = xmalloc((size_t)N * VP * sizeof *lp), mx[N], *dmx;
		double sx[2 * N], *dsx;
		float *dlp;

		for (int n = 0; n < N; n++)
			memcpy(lp + (size_t)n * VP, x + (size_t)n * V % btc,
			    VP * sizeof *lp);
		dlp = dev(lp, (size_t)N * VP * sizeof *lp);
		dmx = cu->alloc(N * sizeof *dmx);
		dsx = cu->alloc(2 * N * sizeof *dsx);
		cpu->ce_rowmax(mx, lp, N, VP);
		cu->ce_rowmax(dmx, dlp, N, VP);
		CHECK(dmx, mx, N, 0, "%s cross-entropy part: row maxima", pn);
		cpu->ce_rowsum(sx, lp, tg, mx, N, VP, v0);
		cu->ce_rowsum(dsx, dlp, dtg, dmx, N, VP, v0);
		{
			double got[2 * N], e = 0;

			cu->get(got, dsx, sizeof got);
			for (int n = 0; n < 2 * N; n++)
				e = fmax(e, fabs(got[n] - sx[n]) / (fabs(sx[n]) + 1e-30));
			OK(e <= 1e-6, "%s cross-entropy part: sums and target "
			    "logits (%.3g)", pn, e);
		}
		cu->put(dsx, sx, sizeof sx);
		cpu->ce_grad(out, lp, tg, mx, sx, N, VP, v0, 1.0f / N);
		cu->ce_grad(dr, dlp, dtg, dmx, dsx, N, VP, v0, 1.0f / N);
		CHECK(dr, out, N, 1e-5, "%s cross-entropy part: losses", pn);
		CHECK(dlp, lp, (size_t)N * VP, 1e-5, "%s cross-entropy part: "
		    "gradient, in place", pn);
		cu->free(dlp);
		cu->free(dmx);
		cu->free(dsx);
		free(lp);
	}
	memset(out3, 0, (size_t)Vp * C * sizeof *out3);
	cu->zero(dd3, (size_t)Vp * C * sizeof(float));
	cpu->lmhead_backward(out2, out3, logits, x, w, N, C, V);
	cu->lmhead_backward(dd2, dd3, dr + btc, dx, dw, N, C, V);
	CHECK(dd2, out2, (size_t)N * C, tol_mm[prec], "%s output layer "
	    "backward: input", pn);
	CHECK(dd3, out3, (size_t)Vp * C, tol_mm[prec], "%s output layer "
	    "backward: embedding (+=)", pn);

	/* AdamW and the norm */
	{
		size_t n = btc;
		float *p = rnd(n, 1), *m = rnd(n, 0.1f), *v = rnd(n, 0.1f);
		float *dp, *dmm, *dv;
		double a, b;

		for (size_t j = 0; j < n; j++)
			v[j] = fabsf(v[j]);
		dp = dev(p, n * sizeof *p);
		dmm = dev(m, n * sizeof *m);
		dv = dev(v, n * sizeof *v);
		cpu->adamw(p, dout, m, v, n, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f,
		    0.19f, 0.0975f, 0.5f);
		cu->adamw(dp, dd, dmm, dv, n, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f,
		    0.19f, 0.0975f, 0.5f);
		CHECK(dp, p, n, 1e-5, "%s adamw: weights", pn);
		CHECK(dmm, m, n, 1e-6, "%s adamw: first moment", pn);
		CHECK(dv, v, n, 1e-6, "%s adamw: second moment", pn);
		a = cpu->sumsq(dout, btc * 4);
		b = cu->sumsq(dd, btc * 4);
		OK(fabs(a - b) <= 1e-12 * a, "%s sum of squares (%.17g, %.17g)",
		    pn, b, a);
		{
			size_t nc = (btc * 4 + GPT_NORM_CHUNK - 1) / GPT_NORM_CHUNK;
			double *pa = xmalloc(nc * sizeof *pa), *pb = xmalloc(nc * sizeof *pb);
			double e = 0;

			cpu->sumsq_chunks(pa, dout, btc * 4);
			cu->sumsq_chunks(pb, dd, btc * 4);
			for (size_t j = 0; j < nc; j++)
				e = fmax(e, fabs(pa[j] - pb[j]) / pa[j]);
			OK(e <= 1e-12, "%s sums of squares of %zu chunks (%.3g)",
			    pn, nc, e);
			free(pa);
			free(pb);
		}
		cu->free(dp);
		cu->free(dmm);
		cu->free(dv);
		free(p);
		free(m);
		free(v);
	}

	/* decoding: embeddings by position, attention over a cache */
	{
		size_t cache = (size_t)B * maxT * C;
		float *kc = xcalloc(cache, sizeof *kc), *vc = xcalloc(cache, sizeof *vc);
		float *dkc = cu->alloc(cache * sizeof(float));
		float *dvc = cu->alloc(cache * sizeof(float));
		int n1 = T - 1;

		cpu->encoder_forward_pos(out, tok, pos, w, wpe, N, C);
		cu->encoder_forward_pos(dr, dtok, dpos, dw, dwpe, N, C);
		CHECK(dr, out, (size_t)N * C, 0, "%s encoder by position", pn);
		/*
		 * Two slots: rows 0..T-2 of each in one call (a prompt), then
		 * the last row of each (a decoding step).
		 */
		for (i = 0; i < 2; i++) {
			int r0 = i ? n1 : 0, rn = i ? 1 : n1, s;

			for (s = 0; s < B; s++) {
				size_t r = (size_t)s * T + r0;

				cpu->attention_forward_kv(out + r * C, kc, vc,
				    x + r * 3 * C, seq + r, pos + r, rn, C, NH,
				    maxT);
				cu->attention_forward_kv(dr + r * C, dkc, dvc,
				    dx + r * 3 * C, dseq + r, dpos + r, rn, C,
				    NH, maxT);
			}
		}
		CHECK(dr, out, (size_t)N * C, 1e-5, "%s attention over the "
		    "key/value cache", pn);
		CHECK(dkc, kc, cache, 0, "%s key cache contents", pn);
		CHECK(dvc, vc, cache, 0, "%s value cache contents", pn);
		cu->free(dkc);
		cu->free(dvc);
		free(kc);
		free(vc);
	}

	/* int8 weights, few rows (a warp per output) and many (dequantised) */
	{
		int8_t *q = xmalloc((size_t)OC * C);
		int8_t *dq;
		float *ds;

		for (i = 0; i < OC * C; i++)
			q[i] = (int8_t)(owt_mix64(seed++) % 255 - 127);
		dq = dev(q, (size_t)OC * C);
		ds = dev(bias, OC * sizeof *bias);
		for (i = 0; i < 4; i++) {
			int n = i % 2 ? N : 3;

			cpu->matmul_forward_q8(out, x, q, bias, i < 2 ? bias + OC :
			    NULL, n, C, OC);
			cu->matmul_forward_q8(dr, dx, dq, ds, i < 2 ? dwb + OC : NULL,
			    n, C, OC);
			CHECK(dr, out, (size_t)n * OC, i % 2 ? tol_mm[prec] : 1e-5,
			    "%s int8 matmul, %d rows%s", pn, n, i < 2 ? "" :
			    ", no bias");
		}
		cu->free(dq);
		cu->free(ds);
		free(q);
	}

	cu->free(dtok);
	cu->free(dpos);
	cu->free(dseq);
	cu->free(dtg);
	cu->free(dx);
	cu->free(dw);
	cu->free(dwb);
	cu->free(dwpe);
	free(wpe);
	cu->free(dd);
	cu->free(dr);
	cu->free(dd2);
	cu->free(dd3);
	cu->free(dm);
	cu->free(db);
	free(x);
	free(w);
	free(bias);
	free(dout);
	free(out);
	free(out2);
	free(out3);
	free(mean);
	free(rstd);
}

/*
 * The embedding gradients bit for bit against the CPU, both adding each
 * element's rows in position order: a token at every third position,
 * ids above the kernel's 128 owners, more positions than one tile of
 * ids, a width that is not a multiple of the block; and a second run
 * from the same start gives the same bits.
 */
static void
test_dwte(void)
{
	enum { B = 3, T = 500, C = 100, Vp = 1024, N = B * T };
	size_t btc = (size_t)N * C, nw = (size_t)Vp * C, np = (size_t)T * C;
	float *dout = rnd(btc, 1), *w0 = rnd(nw, 0.5f), *p0 = rnd(np, 0.5f);
	float *w = xmalloc(nw * sizeof *w), *p = xmalloc(np * sizeof *p);
	float *dd, *dw, *dp;
	int32_t *tok = xmalloc(N * sizeof *tok), *dt;
	int i, k;

	for (i = 0; i < N; i++)
		tok[i] = i % 3 == 0 ? 7 : (int32_t)(owt_mix64(seed++) %
		    (i % 2 ? 20 : Vp));
	memcpy(w, w0, nw * sizeof *w);
	memcpy(p, p0, np * sizeof *p);
	cpu->encoder_backward(w, p, dout, tok, B, T, C, 0, Vp);
	dd = dev(dout, btc * sizeof *dout);
	dt = dev(tok, N * sizeof *tok);
	dw = cu->alloc(nw * sizeof *dw);
	dp = cu->alloc(np * sizeof *dp);
	for (k = 0; k < 2; k++) {
		cu->put(dw, w0, nw * sizeof *w0);
		cu->put(dp, p0, np * sizeof *p0);
		cu->encoder_backward(dw, dp, dd, dt, B, T, C, 0, Vp);
		CHECK(dw, w, nw, 0, "encoder backward, run %d: the token "
		    "embedding's gradient is the CPU's, bit for bit (%d "
		    "positions, repeated tokens)", k + 1, N);
		CHECK(dp, p, np, 0, "encoder backward, run %d: the positions' "
		    "too", k + 1);
	}
	/* a vocabulary part: rows [5, 517) of the table (token 7 among them) */
	memcpy(w, w0, nw * sizeof *w);
	memcpy(p, p0, np * sizeof *p);
	cpu->encoder_backward(w, p, dout, tok, B, T, C, 5, 512);
	cu->put(dw, w0, nw * sizeof *w0);
	cu->put(dp, p0, np * sizeof *p0);
	cu->encoder_backward(dw, dp, dd, dt, B, T, C, 5, 512);
	CHECK(dw, w, nw, 0, "encoder backward of a vocabulary part: the "
	    "CPU's, bit for bit");
	CHECK(dp, p, np, 0, "encoder backward of a vocabulary part: the "
	    "positions' too");
	cu->free(dd);
	cu->free(dt);
	cu->free(dw);
	cu->free(dp);
	free(dout);
	free(w0);
	free(p0);
	free(w);
	free(p);
	free(tok);
}

/*
 * The column sums and the norm over many blocks: LayerNorm's and a bias's
 * gradients over rows in several chunks, a sum of squares longer than
 * one pass of the grid.
 */
static void
test_reductions(void)
{
	enum { N = 1500, C = 96 };
	size_t nc = (size_t)N * C, big = (size_t)1 << 20;
	float *x = rnd(nc, 1), *dy = rnd(nc, 1), *w = rnd(2 * C, 1);
	float *mean = xmalloc(N * sizeof *mean), *rstd = xmalloc(N * sizeof *rstd);
	float *out = xcalloc(nc, sizeof *out), *g = xcalloc(2 * C, sizeof *g);
	float *s = rnd(big, 1);
	float *dx = dev(x, nc * sizeof *x), *ddy = dev(dy, nc * sizeof *dy);
	float *dw = dev(w, 2 * C * sizeof *w), *dout = dev(out, nc * sizeof *out);
	float *dg = dev(g, 2 * C * sizeof *g), *dm = cu->alloc(N * sizeof(float));
	float *dr = cu->alloc(N * sizeof(float)), *ds = dev(s, big * sizeof *s);
	double a, b;

	cpu->layernorm_forward(out, mean, rstd, x, w, w + C, N, C, 1e-5f);
	cu->layernorm_forward(dout, dm, dr, dx, dw, dw + C, N, C, 1e-5f);
	cu->put(dm, mean, N * sizeof *mean);
	cu->put(dr, rstd, N * sizeof *rstd);
	cu->zero(dout, nc * sizeof(float));
	memset(out, 0, nc * sizeof *out);
	cpu->layernorm_backward(out, g, g + C, dy, x, w, mean, rstd, N, C);
	cu->layernorm_backward(dout, dg, dg + C, ddy, dx, dw, dm, dr, N, C);
	CHECK(dg, g, 2 * C, 1e-5, "layernorm backward over %d rows (several "
	    "chunks): weight and bias", N);
	a = cpu->sumsq(s, big);
	b = cu->sumsq(ds, big);
	OK(fabs(a - b) <= 1e-12 * a, "sum of squares of %zu elements (%.17g, "
	    "%.17g)", big, b, a);
	cu->free(dx);
	cu->free(ddy);
	cu->free(dw);
	cu->free(dout);
	cu->free(dg);
	cu->free(dm);
	cu->free(dr);
	cu->free(ds);
	free(x);
	free(dy);
	free(w);
	free(mean);
	free(rstd);
	free(out);
	free(g);
	free(s);
}

/* Train a small model for STEPS iterations on be; losses into loss. */
enum { STEPS = 20 };

static void
train(const struct gpt_backend *be, float dropout, double initial_scale,
    const struct gpt_recompute *rc, double *loss, int *skipped)
{
	static const struct gpt_config base = {
		.nlayer = 2, .nhead = 4, .nembd = 128, .maxpos = 64,
		.vocab = 1000, .vocab_pad = 1024, .ln_eps = 1e-5f,
	};
	struct gpt_config c = base;
	struct gpt_data_mock md = { 5, 0, 64, 1000 };
	struct sample_src src = { gpt_data_mock_get, &md };
	struct trainer tr = { 0 };
	struct step_result r;
	struct gpt m;
	char err[256];
	int code, i;

	c.hidden_dropout = c.attn_dropout = dropout;
	if (gpt_init(&m, &c, be, err, sizeof err) < 0)
		owt_die(XSYS, "%s", err);
	if (rc != NULL)
		gpt_set_recompute(&m, rc);
	if (gpt_set_batch(&m, 4, 64, err, sizeof err) < 0)
		owt_die(XSYS, "%s", err);
	gpt_init_weights(&m, 42, 0.02f);
	tr.m = &m;
	tr.micro = 4;
	tr.T = 64;
	tr.nmicro = 2;
	tr.lr = (struct schedule){ SCHEDULE_CONSTANT, 1e-3, 0, 0, 1 };
	tr.adam = (struct adamw){ 0.9f, 0.95f, 1e-8f, 0.1f };
	tr.clip = 1.0f;
	tr.scaler = (struct loss_scaler){ 1, 1000, 2 };
	tr.st.seed = 3;
	if (initial_scale > 0)
		train_scaler_start(&tr.scaler, &tr.st, initial_scale);
	train_init(&tr);
	*skipped = 0;
	for (i = 0; i < STEPS; i++) {
		if (train_iteration(&tr, &src, &r, err, sizeof err, &code) != 0)
			owt_die(XSYS, "step %d: %s", i, err);
		loss[i] = r.skipped ? NAN : r.loss;
		*skipped += r.skipped;
	}
	train_free(&tr);
	gpt_free(&m);
}

/* The largest |a - b| / b over the steps both ran (skipped: NaN in a). */
static double
track(const double *a, const double *b)
{
	double e = 0;
	int i;

	for (i = 0; i < STEPS; i++)
		if (!isnan(a[i]))
			e = fmax(e, fabs(a[i] - b[i]) / b[i]);
	return e;
}

static void
test_training(void)
{
	static const struct gpt_recompute rc[2] = {
		{ GPT_RECOMPUTE_FULL, GPT_RECOMPUTE_UNIFORM, 1 },
		{ GPT_RECOMPUTE_SELECTIVE, 0, 1 },
	};
	double ref[STEPS], ref_drop[STEPS], got[STEPS], again[STEPS];
	char why[256];
	int skipped, k;

	train(cpu, 0, 0, NULL, ref, &skipped);
	train(cpu, 0.1f, 0, NULL, ref_drop, &skipped);

	cu = cuda->backend(OWTCUDA_FP32, why, sizeof why);
	train(cu, 0, 0, NULL, got, &skipped);
	OK(track(got, ref) <= 1e-4, "fp32: %d training steps on the GPU match "
	    "the CPU within 1e-4 of the loss (%.3g; first %.6f last %.6f "
	    "against %.6f %.6f)", STEPS, track(got, ref), got[0],
	    got[STEPS - 1], ref[0], ref[STEPS - 1]);
	train(cu, 0.1f, 0, NULL, got, &skipped);
	OK(track(got, ref_drop) <= 1e-4, "fp32 with dropout 0.1: the same "
	    "masks, losses within 1e-4 (%.3g)", track(got, ref_drop));
	train(cu, 0.1f, 0, NULL, again, &skipped);
	OK(memcmp(again, got, sizeof got) == 0, "fp32 with dropout: a second "
	    "run repeats the first bit for bit (last loss %.9g)",
	    again[STEPS - 1]);
	for (k = 0; k < 2; k++) {
		train(cu, 0.1f, 0, &rc[k], again, &skipped);
		OK(memcmp(again, got, sizeof got) == 0, "fp32 with dropout, "
		    "recompute %s: the losses of %d steps are bit-identical to "
		    "keeping everything", k ? "selective" : "full, uniform, 1",
		    STEPS);
	}

	if (cuda->capability(NULL, 0) >= 80) {
		cu = cuda->backend(OWTCUDA_BF16, why, sizeof why);
		train(cu, 0, 0, NULL, got, &skipped);
		OK(track(got, ref) <= 0.02, "bf16 tracks fp32: losses within "
		    "2%% at every step (%.3g; last %.6f against %.6f)",
		    track(got, ref), got[STEPS - 1], ref[STEPS - 1]);
	} else {
		printf("ok %d # SKIP no bf16 before sm_80\n", ++unit_n);
	}
	cu = cuda->backend(OWTCUDA_FP16, why, sizeof why);
	train(cu, 0, 1024, NULL, got, &skipped);
	OK(track(got, ref) <= 0.01 && skipped == 0, "fp16, loss scale 1024: "
	    "no overflow, losses within 1%% (%.3g, %d skipped)", track(got, ref),
	    skipped);
	/*
	 * Whether fp16 operands overflow at 2^32 is cuBLAS's choice of kernel
	 * (FAST_16F allows, not promises, the down-conversion): skipped
	 * steps are reported, not required; the scaler's rules are tested
	 * on the CPU (t/unit-gpt.c).
	 */
	train(cu, 0, 4294967296.0, NULL, got, &skipped);
	OK(skipped < STEPS && !isnan(got[STEPS - 1]) &&
	    got[STEPS - 1] < ref[0], "fp16 from Megatron's 2^32: training "
	    "runs, the loss falls (%d overflowing steps skipped)", skipped);
}

/* "unit-cuda launchers": the fp32 launcher tests alone (t/9002, memcheck). */
int
main(int argc, char **argv)
{
	char why[256] = "", name[128] = "";
	int prec, quick = argc > 1 && strcmp(argv[1], "launchers") == 0;

	if ((cuda = gpt_device_cuda(why, sizeof why, NULL)) == NULL) {
		printf("Bail out! the CUDA plugin: %s\n", why);
		return 1;
	}
	if ((cu = cuda->backend(OWTCUDA_FP32, why, sizeof why)) == NULL) {
		printf("1..0 # SKIP no CUDA device (%s)\n", why);
		return 0;
	}
	prec = cuda->capability(name, sizeof name);
	printf("# device: %s, sm_%d\n", name, prec);
	blas_init(omp_get_max_threads());
	if (quick) {
		test_launchers(OWTCUDA_FP32);
		test_reductions();
		test_dwte();
		cuda->shutdown();
		return unit_done();
	}
	for (prec = OWTCUDA_FP32; prec <= OWTCUDA_FP16; prec++) {
		if (prec == OWTCUDA_BF16 && cuda->capability(NULL, 0) < 80)
			continue;
		cu = cuda->backend(prec, why, sizeof why);
		test_launchers(prec);
	}
	cu = cuda->backend(OWTCUDA_FP32, why, sizeof why);
	test_reductions();
	test_dwte();
	test_training();
	printf("# peak device memory %.1f MB\n", cuda->peak_bytes() / 1e6);
	cuda->shutdown();
	return unit_done();
}
#endif
