/* unit-sample.c - generation: the few-row kernels, int8, inference with a key/value cache against the full forward pass, the sampler, and gpt-sample's queue and records */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "model/blas.h"
#include "tok/bpe.h"
#include "tok/tokenizer.h"
#include "model/gemv.h"
#include "gen/gen.h"
#include "gen/gen_queue.h"
#include "model/gpt.h"
#include "model/gpt_infer.h"
#include "core/json.h"
#include "core/util.h"
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

/*
 * Batch invariance, directly: for R = 1..40 rows, starting at different
 * rows of x, on one thread or two, each row of gemv_f32, gemv_f32t and
 * gemv_q8 is bitwise what a call of that row alone gives, and the widest
 * call is within 1e-5 of double sums. The shapes have C beyond a pass of
 * the tiles' c (384) and outputs that are not a multiple of their width.
 */
#define INV_ROWS 40

static double *
inv_ref(int kind, const float *x, const float *w, const int8_t *q,
    const float *s, const float *b, int R, int C, int OC)
{
	double *ref = xmalloc((size_t)R * OC * sizeof *ref);
	int n, o, c;

	for (n = 0; n < R; n++)
		for (o = 0; o < OC; o++) {
			double a = 0;

			for (c = 0; c < C; c++)
				a += (double)x[(size_t)n * C + c] * (kind == 0 ?
				    w[(size_t)c * OC + o] : kind == 1 ?
				    w[(size_t)o * C + c] : q[(size_t)o * C + c]);
			ref[(size_t)n * OC + o] = kind == 0 ? a + b[o] :
			    kind == 1 ? a : a * s[o] + b[o];
		}
	return ref;
}

static void
inv_call(int kind, float *out, const float *x, const float *w,
    const int8_t *q, const float *s, const float *b, int R, int C, int OC)
{
	if (kind == 0)
		gemv_f32(out, x, w, b, R, C, OC);
	else if (kind == 1)
		gemv_f32t(out, x, w, R, C, OC);
	else
		gemv_q8(out, x, q, s, b, R, C, OC);
}

static void
test_gemv_invariant(void)
{
	static const int shape[][2] = { { 768, 400 }, { 800, 113 },
	    { 37, 50 }, { 1000, 290 }, { 16, 48 } };
	static const char *name[] = { "gemv_f32", "gemv_f32t", "gemv_q8" };
	size_t k;
	int kind;

	for (k = 0; k < sizeof shape / sizeof *shape; k++) {
		int C = shape[k][0], OC = shape[k][1], M = INV_ROWS + 3;
		float *x = randv((size_t)M * C), *w = randv((size_t)C * OC);
		float *b = randv(OC), *s = randv(OC);
		float *one = xmalloc((size_t)M * OC * sizeof *one);
		float *out = xmalloc((size_t)M * OC * sizeof *out);
		int8_t *q = xmalloc((size_t)C * OC);
		double *ref;
		int i, n, R, same;

		for (i = 0; i < C * OC; i++)
			q[i] = (int8_t)(owt_mix64(rng_state++) % 255 - 127);
		for (kind = 0; kind < 3; kind++) {
			omp_set_num_threads(2);
			for (n = 0; n < M; n++)
				inv_call(kind, one + (size_t)n * OC, x +
				    (size_t)n * C, w, q, s, b, 1, C, OC);
			for (same = 1, R = 1; R <= INV_ROWS; R++) {
				int first = R % 4;	/* the rows' position */

				omp_set_num_threads(R % 2 + 1);
				memset(out, 0xff, (size_t)M * OC * sizeof *out);
				inv_call(kind, out, x + (size_t)first * C, w, q, s,
				    b, R, C, OC);
				same &= memcmp(out, one + (size_t)first * OC,
				    (size_t)R * OC * sizeof *out) == 0;
			}
			omp_set_num_threads(2);
			OK(same, "%s (%d, %d): each row of 1 to %d is bitwise the "
			    "row alone", name[kind], C, OC, INV_ROWS);
			ref = inv_ref(kind, x, w, q, s, b, INV_ROWS, C, OC);
			inv_call(kind, out, x, w, q, s, b, INV_ROWS, C, OC);
			OK(rel(out, ref, (size_t)INV_ROWS * OC) < 1e-5,
			    "%s (%d, %d) x %d rows within 1e-5", name[kind], C,
			    OC, INV_ROWS);
			free(ref);
		}
		free(x);
		free(w);
		free(b);
		free(s);
		free(one);
		free(out);
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
	int pass, code = 0;

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
	OK(gpt_infer_init(&g, &m, B, 64, 64, err, sizeof err, &code) == 0,
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
			if (gpt_infer_step(&g, n, ids, seq, n, err, sizeof err, &code))
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
	OK(gpt_infer_step(&g, 40, tok, seq, 1, err, sizeof err, &code) == 0,
	    "a slot takes the model's 40 positions");
	OK(gpt_infer_step(&g, 1, tok, seq, 1, err, sizeof err, &code) < 0 &&
	    g.len[0] == 40 && code == XDATA,
	    "one more fails (XDATA), and feeds nothing");
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

/* A model of 150 positions for prompts of several chunks. */
static const struct gpt_config mid = {
	.nlayer = 2, .nhead = 4, .nembd = 64, .maxpos = 150, .vocab = 300,
	.vocab_pad = 384, .ln_eps = 1e-5f,
};

/* A sample of test_chunked: its tokens, a hash of each one's logits. */
struct crec {
	int32_t tok[32];
	uint64_t h[32];
	int n;
	int step;		/* the gen_step count at its first token */
};

static int csteps;

static void
on_crec(void *arg, struct gen_seq *s, int32_t tok)
{
	struct crec *r = s->user;
	uint64_t h = 0;
	int v;

	(void)arg;
	if (tok < 0 || r->n == 32)
		return;
	for (v = 0; v < mid.vocab; v++) {
		uint32_t bits;

		memcpy(&bits, &s->logits[v], sizeof bits);
		h = owt_mix64(h ^ bits);
	}
	if (r->n == 0)
		r->step = csteps;
	r->tok[r->n] = tok;
	r->h[r->n++] = h;
}

/*
 * Sample 0 (3 tokens of prompt[0]) runs; sample 1 (40 of prompt[1])
 * joins: whether it is fed a chunk of 8 a step while sample 0 gets a
 * token a step, and draws its first token with its last chunk.
 */
static int
interleave(struct gpt_infer *inf, int32_t **prompt)
{
	struct gen_opts o = { .temperature = 1, .top_k = 20, .seed = 3,
	    .eod = -1, .chunk = 8, .max_new = 12 };
	struct gen g;
	struct gen_seq s[2];
	struct crec r[2];
	char err[256];
	int ok, k, code;

	gen_init(&g, inf, &o, on_crec, NULL);
	memset(s, 0, sizeof s);
	memset(r, 0, sizeof r);
	s[0].user = &r[0];
	s[1].user = &r[1];
	s[1].stream = 1;
	gen_start(&g, &s[0], prompt[0], 3, err, sizeof err, &code);
	ok = r[0].n == 0;
	csteps = 1;
	gen_step(&g);
	ok &= r[0].n == 1;
	gen_start(&g, &s[1], prompt[1], 40, err, sizeof err, &code);
	for (k = 2; k <= 6; k++) {
		csteps = k;
		gen_step(&g);
		ok &= r[0].n == k && s[1].fed == 8 * (k - 1) &&
		    r[1].n == (k == 6);
	}
	while (gen_step(&g))
		;
	gen_free(&g);
	return ok;
}

/*
 * Chunked prefill (gen.h): a prompt of 5 chunks is fed one chunk a step
 * while a running sample gets a token each step, and its first token
 * comes at its fifth step; 24 seeded samples started at once, more
 * than GEMV_MAXN decoding together, prompts of 1 to 7 chunks, give each
 * sample alone's tokens and bitwise the same logits: fp32 and int8, the
 * decoding in products of GEMV_MAXN rows and a prompt's chunk in a call
 * of its own, or a whole step in one row-wise call (inf->rowwise).
 */
static void
test_chunked(void)
{
	enum { NS = 24 };
	struct gpt m;
	struct gpt_infer inf;
	struct gen g;
	struct gen_opts o = { .temperature = 1, .top_k = 20, .seed = 3,
	    .eod = -1, .chunk = 8 };
	struct gen_seq s[NS];
	struct crec alone[NS], busy[NS];
	int32_t *prompt[NS];
	int len[NS], i, k, pass, code, same, most;
	char err[256];

	OK(gpt_init(&m, &mid, &gpt_cpu, err, sizeof err) == 0, "model");
	gpt_init_weights(&m, 7, 0.2f);
	OK(gpt_infer_init(&inf, &m, NS, NS + 16, NS, err, sizeof err, &code) == 0,
	    "an inference state of 24 slots");
	for (i = 0; i < NS; i++) {
		len[i] = i % 4 ? 1 + i % 7 : 20 + (i * 13) % 37;
		prompt[i] = xmalloc((size_t)len[i] * sizeof **prompt);
		for (k = 0; k < len[i]; k++)
			prompt[i][k] = (int32_t)(owt_mix64(rng_state++) % 300);
	}
	/* the interleaving: sample 0 (3 tokens) runs, sample 1 (40) joins */
	for (i = 0; i < 2; i++) {
		prompt[i] = xrealloc(prompt[i], 40 * sizeof **prompt);
		for (k = len[i]; k < 40; k++)
			prompt[i][k] = (int32_t)(owt_mix64(rng_state++) % 300);
	}
	len[0] = 3;
	len[1] = 40;
	for (pass = 0; pass < 2; pass++) {
		inf.rowwise = pass;
		OK(interleave(&inf, prompt), "a prompt of 40 tokens is fed 8 a "
		    "step beside a running sample, which gets a token each "
		    "step; its first token comes with its last chunk%s", pass ?
		    " (a step in one row-wise call)" : "");
	}
	o.max_new = 32;
	for (pass = 0; pass < 4; pass++) {
		if (pass == 2)
			gpt_infer_quantize(&inf);
		inf.rowwise = pass % 2;
		gen_init(&g, &inf, &o, on_crec, NULL);
		memset(s, 0, sizeof s);
		memset(alone, 0, sizeof alone);
		memset(busy, 0, sizeof busy);
		for (i = 0; i < NS; i++) {
			s[i].user = &alone[i];
			s[i].stream = (uint64_t)i;
			s[i].o = NULL;
			gen_start(&g, &s[i], prompt[i], len[i], err, sizeof err,
			    &code);
			while (gen_step(&g))
				;
		}
		for (i = 0; i < NS; i++) {
			s[i].user = &busy[i];
			gen_start(&g, &s[i], prompt[i], len[i], err, sizeof err,
			    &code);
		}
		for (most = 0; gen_step(&g); )
			for (i = k = 0; i < NS; i++)
				if (s[i].end == GEN_RUNNING && s[i].fed == len[i] &&
				    ++k > most)
					most = k;
		for (i = same = 0; i < NS; i++)
			same += alone[i].n == 32 && busy[i].n == 32 &&
			    memcmp(alone[i].tok, busy[i].tok, sizeof busy[i].tok)
			    == 0 && memcmp(alone[i].h, busy[i].h,
			    sizeof busy[i].h) == 0;
		OK(same == NS && most > GEMV_MAXN, "%s%s: 24 samples at once "
		    "(%d decoding together at most), prompts of 1 to 7 chunks: "
		    "each sample alone's tokens and logits (%d of 24)",
		    pass >= 2 ? "int8" : "fp32", inf.rowwise ? ", a step in one "
		    "row-wise call" : "", most, same);
		gen_free(&g);
	}
	for (i = 0; i < NS; i++)
		free(prompt[i]);
	gpt_infer_free(&inf);
	gpt_free(&m);
}

/* A model over the GPT-2 vocabulary, small enough to run anywhere. */
static const struct gpt_config gpt2tiny = {
	.nlayer = 1, .nhead = 2, .nembd = 16, .maxpos = 16, .vocab = 50257,
	.vocab_pad = 50304, .ln_eps = 1e-5f,
};

/* A queue over m writing to a memory stream: run every prompt added. */
struct qrun {
	struct gen_queue q;
	struct gpt_infer inf;
	FILE *f;
	char *p;
	size_t n;
};

/* The queue's tokenizer: the built-in GPT-2 through tokenizer.h. */
static struct tokenizer *qtok;
static struct tokenizer_state *qts;

static void
qrun_start(struct qrun *r, struct gpt *m, struct bpe *v, struct bpe_state *bs,
    const struct gen_queue_opts *qo, int S, int max_new)
{
	struct gen_opts o = { .temperature = 1, .top_k = 50, .max_new = max_new,
	    .seed = 9, .eod = (int32_t)bpe_eod(v), .nvocab = (int)bpe_nvocab(v),
	    .ctx = m->cfg.maxpos };
	char err[256];
	int code;

	memset(r, 0, sizeof *r);
	r->f = open_memstream(&r->p, &r->n);
	(void)bs;
	gen_queue_init(&r->q, qo, qtok, qts, r->f);
	if (gpt_infer_init(&r->inf, m, S, 16, 16, err, sizeof err, &code) < 0)
		abort();
	gen_queue_model(&r->q, &r->inf, &o);
}

static void
qrun_end(struct qrun *r)
{
	while (gen_queue_step(&r->q))
		;
	fclose(r->f);
	gen_queue_free(&r->q);
	gpt_infer_free(&r->inf);
}

static int
qadd(struct qrun *r, const char *line, unsigned long lineno, char *err,
    size_t errsize)
{
	return gen_queue_add(&r->q, line, strlen(line), lineno, err, errsize);
}

/* The most likely first token after text (<|endoftext|> when empty). */
static int32_t
greedy_first(struct gpt *m, struct bpe_state *bs, const char *text,
    uint32_t eod)
{
	struct gpt_infer g;
	struct bpe_ids ids = { 0 };
	int32_t seq[16] = { 0 }, best = 0;
	float *lg = xmalloc((size_t)m->cfg.vocab * sizeof *lg);
	char err[256];
	int i, code;

	if (*text) {
		bpe_encode(bs, text, strlen(text), &ids);
	} else {
		ids.v = xmalloc(sizeof *ids.v);
		ids.v[ids.n++] = eod;
	}
	if (gpt_infer_init(&g, m, 1, 16, 1, err, sizeof err, &code) < 0 ||
	    gpt_infer_step(&g, (int)ids.n, (const int32_t *)ids.v, seq, 1,
	    err, sizeof err, &code) < 0)
		abort();
	gpt_infer_logits(&g, 1, lg);
	for (i = 1; i < 50257; i++)
		if (lg[i] > lg[best])
			best = i;
	gpt_infer_free(&g);
	free(ids.v);
	free(lg);
	return best;
}

/*
 * The queue: samples written in input order whatever the slots, each
 * format's bytes, the records of bad lines, Megatron's "stop" line and
 * prompt newline, and --score's records against gen_score.
 */
static void
test_queue(void)
{
	static const char *prompts[] = { "And the", "", "In", "x\r" };
	struct gen_queue_opts qo = { .format = GEN_QUEUE_TEXT, .nsamples = 2,
	    .key = "prompt" };
	struct qrun r;
	struct gpt m;
	struct bpe *v;
	struct bpe_state *bs;
	struct buf out = { 0 };
	char err[512], *one = NULL, *want;
	size_t k, lines;
	int code, S, count;
	double nll;

	v = bpe_load(NULL, NULL, err, sizeof err, &code);
	OK(v != NULL, "the GPT-2 vocabulary (%s)", v ? "loaded" : err);
	if (v == NULL)
		return;
	bs = bpe_state_new(v, 0);
	qtok = tokenizer_load(&(struct tokenizer_opts){ 0 }, err, sizeof err,
	    &code);
	OK(qtok != NULL, "the GPT-2 tokenizer (%s)", qtok ? "loaded" : err);
	if (qtok == NULL)
		return;
	qts = tokenizer_state_new(qtok, 0);
	OK(gpt_init(&m, &gpt2tiny, &gpt_cpu, err, sizeof err) == 0, "model");
	gpt_init_weights(&m, 3, 0.5f);

	for (S = 1; S <= 3; S += 2) {
		qrun_start(&r, &m, v, bs, &qo, S, 4);
		for (k = 0; k < 4; k++)
			if (qadd(&r, prompts[k], k + 1, err, sizeof err) != 0)
				break;
		qrun_end(&r);
		for (k = lines = 0; k < r.n; k++)
			lines += r.p[k] == '\n';
		if (S == 1) {
			OK(lines == 8 && r.q.nsamples == 8 && r.q.ntokens == 32,
			    "text: two samples of four prompts, a line each");
			one = r.p;
		} else {
			SAMES(r.p, one, "three slots write the same text, in "
			    "input order");
			free(r.p);
		}
	}
	free(one);

	qo.format = GEN_QUEUE_TEXT;
	qo.nsamples = 1;
	qo.ids = 1;
	qrun_start(&r, &m, v, bs, &qo, 2, 0);
	qadd(&r, "{\"id\":1,\"prompt\":\"A\\u00e9\"}", 1, err, sizeof err);
	qadd(&r, "{\"prompt\":\"\"}", 2, err, sizeof err);
	OK(qadd(&r, "{\"prompt\":", 3, err, sizeof err) < 0 &&
	    strncmp(err, "invalid JSON: ", 14) == 0,
	    "JSONL: a line that is not JSON is a bad record (%s)", err);
	OK(qadd(&r, "{\"prompt\":1}", 4, err, sizeof err) < 0, "and a prompt "
	    "that is no string");
	SAMES(err, "'prompt' is not a string", "with its message");
	qadd(&r, "{\"id\":2}", 5, err, sizeof err);
	SAMES(err, "'prompt' is missing", "a record without a prompt");
	qrun_end(&r);
	want = "{\"id\":1,\"prompt\":\"A\\u00e9\",\"text\":\"\","
	    "\"prompt_tokens\":2,\"tokens\":0,\"finished\":false,"
	    "\"prompt_ids\":[32, 2634],\"ids\":[]}\n"
	    "{\"prompt\":\"\",\"text\":\"\",\"prompt_tokens\":0,\"tokens\":0,"
	    "\"finished\":false,\"prompt_ids\":[50256],\"ids\":[]}\n";
	SAMES(r.p, want, "JSONL in: the records with the sample's fields");
	free(r.p);

	qo.format = GEN_QUEUE_JSONL;
	qo.ids = 0;
	qo.nsamples = 2;
	qrun_start(&r, &m, v, bs, &qo, 1, 0);
	qadd(&r, "a\377\r", 1, err, sizeof err);
	OK(qadd(&r, "a a a a a a a a a a a a a a a a", 2, err, sizeof err) < 0,
	    "a prompt as long as the context is a bad record");
	SAMES(err, "a prompt of 16 tokens leaves no room in a context of 16",
	    "with its message");
	qrun_end(&r);
	want = "{\"prompt\":\"a\357\277\275\",\"text\":\"\",\"prompt_tokens\":2,"
	    "\"tokens\":0,\"finished\":false,\"sample\":0}\n"
	    "{\"prompt\":\"a\357\277\275\",\"text\":\"\",\"prompt_tokens\":2,"
	    "\"tokens\":0,\"finished\":false,\"sample\":1}\n";
	SAMES(r.p, want, "JSONL out: a text line becomes a record, '\\r' cut, "
	    "invalid UTF-8 as U+FFFD, samples numbered");
	free(r.p);

	qo.format = GEN_QUEUE_MEGATRON;
	qo.nsamples = 1;
	qrun_start(&r, &m, v, bs, &qo, 1, 0);
	OK(qadd(&r, "{\"prompt\":\"x\"}", 1, err, sizeof err) == 0 &&
	    qadd(&r, "", 2, err, sizeof err) == 0, "Megatron's file mode: "
	    "lines as they are, an empty one too");
	OK(qadd(&r, "a a a a a a a a a a a a a a a", 3, err, sizeof err) < 0,
	    "a prompt is encoded with its newline");
	SAMES(err, "a prompt of 16 tokens leaves no room in a context of 16",
	    "and counted with it");
	OK(qadd(&r, "nonstop", 4, err, sizeof err) == 1 && r.q.nprompts == 2,
	    "a line holding \"stop\" ends the input");
	qrun_end(&r);
	want = "\nContext:{\"prompt\":\"x\"}\n\n\nMegatron-LM:\n"
	    "\nContext:\n\n\nMegatron-LM:\n";
	SAMES(r.p, want, "each sample as \\nContext:LINE\\n\\n\\nMegatron-LM:"
	    "TEXT\\n");
	free(r.p);

	qo.format = GEN_QUEUE_UNCOND;
	qo.nsamples = 2;
	qrun_start(&r, &m, v, bs, &qo, 1, 0);
	qadd(&r, "", 1, err, sizeof err);
	qrun_end(&r);
	want = "{\"text\": \"\", \"length\": 0, \"finished\": false}\n"
	    "{\"text\": \"\", \"length\": 0, \"finished\": false}\n";
	SAMES(r.p, want, "Megatron's unconditional mode: json.dumps's records");
	free(r.p);

	qo.format = GEN_QUEUE_MEGATRON;
	qo.nsamples = 1;
	qrun_start(&r, &m, v, bs, &qo, 1, 3);
	qadd(&r, "The", 1, err, sizeof err);
	qrun_end(&r);
	OK(r.q.ntokens == 3 && strncmp(r.p, "\nContext:The\n\n\nMegatron-LM:",
	    27) == 0 && r.p[r.n - 1] == '\n', "a continuation of three tokens");
	free(r.p);

	/* a sample the model ends: its greedy first token made the EOD */
	qo.ids = 0;
	qo.nsamples = 1;
	for (k = 0; k < 3; k++) {
		static const int fmt[] = { GEN_QUEUE_JSONL, GEN_QUEUE_MEGATRON,
		    GEN_QUEUE_UNCOND };
		static const char *const text[] = { "The", "The\n", "" };
		static const char *const end[] = {
		    "{\"prompt\":\"The\",\"text\":\"\",\"prompt_tokens\":1,"
		    "\"tokens\":0,\"finished\":true}\n",
		    "\nContext:The\n\n\nMegatron-LM:<|endoftext|>\n",
		    "{\"text\": \"\", \"length\": 0, \"finished\": true}\n" };

		qo.format = fmt[k];
		qrun_start(&r, &m, v, bs, &qo, 1, 4);
		r.q.gen.o.greedy = 1;
		r.q.gen.o.eod = greedy_first(&m, bs, text[k], bpe_eod(v));
		qadd(&r, k == 2 ? "" : "The", 1, err, sizeof err);
		qrun_end(&r);
		SAMES(r.p, end[k], "a sample the model ends: finished%s",
		    k == 1 ? ", <|endoftext|> written" : "");
		free(r.p);
	}

	/* --score: the record with nll, ppl and tokens, and the totals */
	qo.format = GEN_QUEUE_TEXT;
	qo.key = "text";
	qo.ids = 1;
	qrun_start(&r, &m, v, bs, &qo, 1, 0);
	{
		static const char rec[] = "{\"text\":\"And the\",\"n\":1}";
		const int32_t ids[] = { 1870, 262, 50256 };
		char num[64];

		OK(gen_queue_score_rec(&r.q, &r.inf, 16, 8, rec,
		    sizeof rec - 1, &out, err, sizeof err) == 0, "a record "
		    "scored");
		gen_score(&r.inf, ids, 3, 16, 8, &nll, &count);
		snprintf(num, sizeof num, "%.9g", nll / count);
		OK(strstr(out.p, num) != NULL && count == 2 &&
		    r.q.nscored == 2 && r.q.nrec == 1 && r.q.nll == nll,
		    "with gen_score's nll of its tokens and <|endoftext|>");
		OK(strncmp(out.p, "{\"text\":\"And the\",\"n\":1,\"nll\":", 30)
		    == 0 && strstr(out.p, ",\"tokens\":2,\"ids\":[1870, 262, "
		    "50256]}\n") != NULL, "the fields added to the record");
		OK(gen_queue_score_rec(&r.q, &r.inf, 16, 8, "{}", 2, &out, err,
		    sizeof err) < 0, "a record without text is bad");
		SAMES(err, "'text' is missing", "with its message");
	}
	qrun_end(&r);
	free(r.p);
	buf_free(&out);

	gpt_free(&m);
	tokenizer_state_free(qts);
	tokenizer_free(qtok);
	bpe_state_free(bs);
	bpe_free(v);
}

/* Python's decoding and json.dumps, as Megatron's formats need them. */
static void
test_py(void)
{
	static const char in[] = "a\"\\\n\t\001\177\303\251\342\202\254"
	    "\360\237\230\200\377\342\202A\355\240\200\360\220\200\357\277\275"
	    "\200\200\300\257\364\220\200\200\340\200";
	struct buf b = { 0 }, t = { 0 };
	const char *want;
	size_t k;

	/* the bytes and what Python 3 makes of them: checked with python3 */
	gen_queue_py_text(&t, in, sizeof in - 1);
	json_string_as(&b, t.p, t.len, JSON_ASCII);
	want = "\"a\\\"\\\\\\n\\t\\u0001\\u007f\\u00e9\\u20ac\\ud83d\\ude00"
	    "\\ufffd\\ufffdA\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"
	    "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"";
	SAME(b.p, b.len, want, strlen(want), "json.dumps(b.decode(\"utf-8\", "
	    "\"replace\")): one U+FFFD per maximal invalid subpart");
	b.len = 0;
	gen_queue_py_text(&b, in, sizeof in - 1);
	for (k = 0; k < b.len && b.p[k] != 'A'; k++)
		;
	OK(b.len == k + 1 + 15 * 3 && memcmp(b.p, in, 16) == 0 &&
	    memcmp(b.p + 16, "\357\277\275\357\277\275A", 7) == 0,
	    "the same text in UTF-8");
	buf_free(&b);
	buf_free(&t);
}

int
main(void)
{
	omp_set_num_threads(2);
	blas_init(2);
	test_gemv();
	test_gemv_invariant();
	test_infer();
	test_pick();
	test_chunked();
	test_queue();
	test_py();
	return unit_done();
}
