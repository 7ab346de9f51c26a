/* unit-sample.c - generation: the few-row kernels, int8, inference with a key/value cache against the full forward pass, and the sampler */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "blas.h"
#include "gemv.h"
#include "gen.h"
#include "gpt.h"
#include "gpt_infer.h"
#include "util.h"
#include "unit.h"

static uint64_t rng_state = 11;

static float
frand(void)
{
	return (float)((owt_mix64(rng_state++) >> 40) / 16777216.0 - 0.5);
}

static float *
randv(size_t n)
{
	float *p = xmalloc(n * sizeof *p);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = frand();
	return p;
}

/* max |a - b| / max |b| */
static double
rel(const float *a, const double *b, size_t n)
{
	double d = 0, s = 1e-30;
	size_t i;

	for (i = 0; i < n; i++) {
		d = fmax(d, fabs(a[i] - b[i]));
		s = fmax(s, fabs(b[i]));
	}
	return d / s;
}

/*
 * gemv_f32, gemv_f32t and gemv_q8 against double sums, on sizes that are
 * not multiples of the vector width; and each row's result is bitwise the
 * same alone as among others, and with one thread as with two.
 */
static void
test_gemv(void)
{
	static const int shape[][2] = { { 64, 192 }, { 37, 50 }, { 129, 17 },
	    { 768, 300 } };
	size_t k;

	for (k = 0; k < sizeof shape / sizeof *shape; k++) {
		int C = shape[k][0], OC = shape[k][1], N = 11, n, o, c, same = 1;
		float *x = randv((size_t)N * C), *w = randv((size_t)C * OC);
		float *b = randv(OC), *s = randv(OC), *out = randv((size_t)N * OC);
		float *one = randv(OC);
		double *ref = xmalloc((size_t)N * OC * sizeof *ref);
		int8_t *q = xmalloc((size_t)C * OC);

		for (o = 0; o < C * OC; o++)
			q[o] = (int8_t)(owt_mix64(rng_state++) % 255 - 127);
		for (n = 0; n < N; n++)
			for (o = 0; o < OC; o++) {
				double a = b[o];

				for (c = 0; c < C; c++)
					a += (double)x[n * C + c] * w[(size_t)c * OC + o];
				ref[n * OC + o] = a;
			}
		gemv_f32(out, x, w, b, N, C, OC);
		OK(rel(out, ref, (size_t)N * OC) < 1e-5,
		    "gemv_f32 (%d, %d) x (%d, %d) within 1e-5", N, C, C, OC);
		for (n = 0; n < N; n++) {
			omp_set_num_threads(n % 2 + 1);
			gemv_f32(one, x + n * C, w, b, 1, C, OC);
			same &= memcmp(one, out + n * OC, OC * sizeof *one) == 0;
		}
		omp_set_num_threads(2);
		OK(same, "gemv_f32 (%d, %d): a row alone is bitwise the same", C, OC);

		for (n = 0; n < N; n++)
			for (o = 0; o < OC; o++) {
				double a = 0;

				for (c = 0; c < C; c++)
					a += (double)x[n * C + c] * w[(size_t)o * C + c];
				ref[n * OC + o] = a;
			}
		gemv_f32t(out, x, w, N, C, OC);
		OK(rel(out, ref, (size_t)N * OC) < 1e-5,
		    "gemv_f32t (%d, %d) x (%d, %d)^T within 1e-5", N, C, OC, C);

		for (n = 0; n < N; n++)
			for (o = 0; o < OC; o++) {
				double a = 0;

				for (c = 0; c < C; c++)
					a += (double)x[n * C + c] * q[(size_t)o * C + c];
				ref[n * OC + o] = a * s[o] + b[o];
			}
		gemv_q8(out, x, q, s, b, N, C, OC);
		OK(rel(out, ref, (size_t)N * OC) < 1e-5,
		    "gemv_q8 (%d, %d) x int8 (%d, %d)^T within 1e-5", N, C, OC, C);
		{	/* more rows than GEMV_MAXN: widened, through sgemm */
			int M = GEMV_MAXN + 5;
			float *xm = randv((size_t)M * C);
			float *om = randv((size_t)M * OC);
			double *rm = xmalloc((size_t)M * OC * sizeof *rm);

			for (n = 0; n < M; n++)
				for (o = 0; o < OC; o++) {
					double a = 0;

					for (c = 0; c < C; c++)
						a += (double)xm[n * C + c] *
						    q[(size_t)o * C + c];
					rm[n * OC + o] = a * s[o] + b[o];
				}
			gpt_cpu.matmul_forward_q8(om, xm, q, s, b, M, C, OC);
			OK(rel(om, rm, (size_t)M * OC) < 1e-5, "matmul_forward_q8 "
			    "of %d rows (%d, %d) within 1e-5", M, C, OC);
			free(xm);
			free(om);
			free(rm);
		}
		free(x);
		free(w);
		free(b);
		free(s);
		free(out);
		free(one);
		free(ref);
		free(q);
	}
}

static const struct gpt_config small = {
	.nlayer = 2, .nhead = 4, .nembd = 64, .maxpos = 40, .vocab = 300,
	.vocab_pad = 384, .ln_eps = 1e-5f,
};

/*
 * Inference with the cache against the training forward pass: three
 * sequences fed in pieces of different sizes, interleaved in one slot
 * table, give each position the logits of the full forward pass; int8
 * weights stay close to them.
 */
static void
test_infer(void)
{
	enum { B = 3, T = 37 };
	struct gpt m;
	struct gpt_infer g;
	int32_t tok[B * T], seq[64];
	float *full, *got;
	double *ref;
	char err[256];
	int b, t, i, n, done[B] = { 0 }, piece[] = { 5, 1, 12, 1, 1, 17 };
	double worst = 0, worst8 = 0;
	int pass;

	OK(gpt_init(&m, &small, &gpt_cpu, err, sizeof err) == 0, "model");
	gpt_init_weights(&m, 5, 0.2f);
	gpt_set_batch(&m, B, T, err, sizeof err);
	for (i = 0; i < B * T; i++)
		tok[i] = (int32_t)(owt_mix64(rng_state++) % small.vocab);
	gpt_forward(&m, tok, NULL, 0, 0, 0);
	full = xmalloc((size_t)B * T * small.vocab * sizeof *full);
	memcpy(full, m.a.logits, (size_t)B * T * small.vocab * sizeof *full);
	ref = xmalloc((size_t)T * small.vocab * sizeof *ref);
	got = xmalloc((size_t)T * small.vocab * sizeof *got);
	OK(gpt_infer_init(&g, &m, B, 64, 64, err, sizeof err) == 0,
	    "an inference state of 3 slots");
	for (pass = 0; pass < 2; pass++) {
		if (pass)
			gpt_infer_quantize(&g);
		for (b = 0; b < B; b++) {
			gpt_infer_reset(&g, b);
			done[b] = 0;
		}
		for (i = 0; done[0] < T || done[1] < T || done[2] < T; i++) {
			int32_t ids[64];

			/* a piece of each unfinished sequence, in one step */
			for (b = n = 0; b < B; b++) {
				int k = piece[(i + b) % 6];

				k = k < T - done[b] ? k : T - done[b];
				for (t = 0; t < k; t++) {
					ids[n] = tok[b * T + done[b] + t];
					seq[n++] = b;
				}
			}
			if (gpt_infer_step(&g, n, ids, seq, n, err, sizeof err))
				break;
			gpt_infer_logits(&g, n, got);
			for (b = n = 0; b < B; b++) {
				int k = piece[(i + b) % 6], v;

				k = k < T - done[b] ? k : T - done[b];
				for (t = 0; t < k; t++, n++)
					for (v = 0; v < small.vocab; v++)
						ref[(size_t)n * small.vocab + v] =
						    full[((size_t)b * T + done[b] + t) *
						    small.vocab + v];
				done[b] += k;
			}
			if (pass)
				worst8 = fmax(worst8, rel(got, ref,
				    (size_t)n * small.vocab));
			else
				worst = fmax(worst, rel(got, ref,
				    (size_t)n * small.vocab));
		}
	}
	OK(worst < 1e-5, "cached inference in pieces gives the full forward "
	    "pass's logits (max rel diff %.2g)", worst);
	OK(worst8 < 0.05 && worst8 > 0, "int8 weights stay within 5%% "
	    "(max rel diff %.2g)", worst8);
	gpt_infer_reset(&g, 0);
	memset(seq, 0, sizeof seq);
	OK(gpt_infer_step(&g, 40, tok, seq, 1, err, sizeof err) == 0,
	    "a slot takes the model's 40 positions");
	OK(gpt_infer_step(&g, 1, tok, seq, 1, err, sizeof err) < 0 &&
	    g.len[0] == 40, "one more fails, and feeds nothing");
	SAMES(err, "a sequence would grow beyond the 40 positions of the model",
	    "with a message");
	free(full);
	free(ref);
	free(got);
	gpt_infer_free(&g);
	gpt_free(&m);
}

/* The set a reference implementation keeps: sort, cut, ties kept. */
static void
allowed(const struct gen_opts *o, const float *logits, int V, int *keep,
    double *prob)
{
	double *z = xmalloc((size_t)V * sizeof *z), max = -INFINITY, sum = 0;
	double *sorted = xmalloc((size_t)V * sizeof *sorted), kth = -INFINITY;
	double cut = -INFINITY, cum = 0;
	int i, j;

	for (i = 0; i < V; i++) {
		z[i] = (float)(logits[i] / (float)o->temperature);
		sorted[i] = z[i];
	}
	for (i = 0; i < V; i++)		/* descending insertion sort */
		for (j = i; j > 0 && sorted[j] > sorted[j - 1]; j--) {
			double t = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	if (o->top_k > 0 && o->top_k < V)
		kth = sorted[o->top_k - 1];
	for (i = 0; i < V; i++)
		if (z[i] >= kth)
			sum += exp(z[i] - sorted[0]);
	if (o->top_p > 0)
		for (i = 0; i < V && sorted[i] >= kth; i++) {
			cum += exp(sorted[i] - sorted[0]) / sum;
			if (cum > o->top_p) {
				cut = sorted[i];
				break;
			}
		}
	for (i = 0, sum = 0; i < V; i++) {
		keep[i] = z[i] >= kth && z[i] >= cut;
		sum += keep[i] ? exp(z[i] - sorted[0]) : 0;
	}
	for (i = 0; i < V; i++)
		prob[i] = keep[i] ? exp(z[i] - sorted[0]) / sum : 0;
	(void)max;
	free(z);
	free(sorted);
}

/*
 * The sampler on constructed distributions: never a token outside the
 * reference's allowed set, and frequencies that pass a chi-square test
 * at the 0.1% level (fixed seed, so the result is fixed too).
 */
static void
test_pick(void)
{
	/* ties at the top-k threshold and at the top-p cut */
	static const float L[] = { 2.0f, 1.0f, 3.0f, 1.0f, 0.5f, 3.0f, -1.0f,
	    0.0f, 1.0f, 2.5f, -3.0f, 0.25f };
	static const struct { double temp; int k; double p; } cfg[] = {
		{ 1.0, 0, 0 }, { 1.0, 3, 0 }, { 1.0, 5, 0 }, { 0.7, 0, 0.5 },
		{ 1.0, 0, 0.9 }, { 2.0, 6, 0.8 }, { 1.0, 0, 0.3 },
		{ 1.3, 4, 0.95 },
	};
	/* chi-square critical values at p = 0.001 for 1..11 degrees of freedom */
	static const double crit[] = { 0, 10.83, 13.82, 16.27, 18.47, 20.52,
	    22.46, 24.32, 26.12, 27.88, 29.59, 31.26 };
	enum { V = sizeof L / sizeof *L, DRAWS = 20000 };
	struct gen_pick_buf buf;
	size_t c;

	gen_pick_init(&buf, V);
	for (c = 0; c < sizeof cfg / sizeof *cfg; c++) {
		struct gen_opts o = { .temperature = cfg[c].temp,
		    .top_k = cfg[c].k, .top_p = cfg[c].p };
		int keep[V], count[V] = { 0 }, i, outside = 0, df = -1;
		double prob[V], chi = 0;

		allowed(&o, L, V, keep, prob);
		for (i = 0; i < DRAWS; i++) {
			int t = gen_pick(&o, L, V, gen_uniform(42, c, i), &buf);

			outside += !keep[t];
			count[t]++;
		}
		for (i = 0; i < V; i++)
			if (keep[i]) {
				double e = prob[i] * DRAWS;

				chi += (count[i] - e) * (count[i] - e) / e;
				df++;
			}
		OK(outside == 0, "temperature %g, top-k %d, top-p %g: no draw "
		    "outside the %d allowed tokens", o.temperature, o.top_k,
		    o.top_p, df + 1);
		OK(df == 0 ? count[0] + count[2] + count[5] == DRAWS ||
		    chi == 0 : chi < crit[df], "and the frequencies pass "
		    "chi-square (%.2f, %d degrees of freedom)", chi, df);
	}
	{
		struct gen_opts o = { .temperature = 0 };
		int t0 = gen_pick(&o, L, V, 0.9, &buf), t1, t2;

		o.temperature = 1;
		o.top_k = 1;
		t1 = gen_pick(&o, L, V, 0.9, &buf);
		o.top_k = 0;
		o.greedy = 1;
		t2 = gen_pick(&o, L, V, 0.9, &buf);
		OK(t0 == 2 && t1 == 2 && t2 == 2, "temperature 0, top-k 1 and "
		    "greedy pick the first largest logit (%d %d %d)", t0, t1, t2);
	}
	{
		int i, lo = 1, hi = 1;

		for (i = 0; i < 100000; i++) {
			double u = gen_uniform(1, 2, i);

			lo &= u >= 0;
			hi &= u < 1;
		}
		OK(lo && hi, "gen_uniform draws from [0, 1)");
		OK(gen_uniform(1, 2, 3) == gen_uniform(1, 2, 3) &&
		    gen_uniform(1, 2, 3) != gen_uniform(1, 3, 3) &&
		    gen_uniform(1, 2, 3) != gen_uniform(2, 2, 3),
		    "gen_uniform depends on seed, stream and step");
	}
	gen_pick_free(&buf);
}

int
main(void)
{
	omp_set_num_threads(2);
	blas_init(2);
	test_gemv();
	test_infer();
	test_pick();
	return unit_done();
}
