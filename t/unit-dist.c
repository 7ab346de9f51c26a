/* unit-dist - lib/dist/dist.c: Megatron's rank layout and each rank's part of the model */
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "unit.h"
#include "core/util.h"

static char err[256];
static int code;

static struct gpt_config
cfg_of(int L, int C, int NH, int V)
{
	struct gpt_config c;

	memset(&c, 0, sizeof c);
	c.nlayer = L;
	c.nembd = C;
	c.nhead = NH;
	c.maxpos = 16;
	c.vocab = V;
	c.vocab_pad = V;
	return c;
}

static int
same_ranks(const int *a, int na, const int *b, int nb)
{
	return na == nb && memcmp(a, b, (size_t)na * sizeof *a) == 0;
}

/* Megatron's docstring: 16 GPUs, TP 2, PP 4. */
static void
test_docstring(void)
{
	static const int dp[8][2] = { { 0, 2 }, { 1, 3 }, { 4, 6 }, { 5, 7 },
	    { 8, 10 }, { 9, 11 }, { 12, 14 }, { 13, 15 } };
	static const int pp[4][4] = { { 0, 4, 8, 12 }, { 1, 5, 9, 13 },
	    { 2, 6, 10, 14 }, { 3, 7, 11, 15 } };
	struct gpt_config c = cfg_of(8, 64, 8, 300);
	struct dist d;
	int g[16], n, okdp = 1, oktp = 1, okpp = 1, okemb = 1;

	OK(dist_init(&d, 16, 0, 2, 4, &c, 128, 1, 2, err, sizeof err, &code) == 0,
	    "16 ranks, TP 2, PP 4: a layout");
	OK(d.dp == 2 && d.micro == 1, "2 data-parallel ranks, 1 micro-batch");
	for (int r = 0; r < 16; r++) {
		int want[2] = { r / 2 * 2, r / 2 * 2 + 1 }, emb[2];

		n = dist_group(&d, r, DIST_DP, g);
		okdp &= same_ranks(g, n, dp[r / 4 * 2 + r % 2], 2);
		n = dist_group(&d, r, DIST_TP, g);
		oktp &= same_ranks(g, n, want, 2);
		n = dist_group(&d, r, DIST_PP, g);
		okpp &= same_ranks(g, n, pp[r % 4], 4);
		n = dist_group(&d, r, DIST_EMB, g);
		emb[0] = pp[r % 4][0];
		emb[1] = pp[r % 4][3];
		okemb &= r / 4 == 1 || r / 4 == 2 ? n == 0 :
		    same_ranks(g, n, emb, 2);
	}
	OK(okdp, "data-parallel groups as Megatron's docstring");
	OK(oktp, "tensor-parallel groups as Megatron's docstring");
	OK(okpp, "pipeline groups as Megatron's docstring");
	OK(okemb, "embedding groups: the first and last stage");
}

/*
 * Megatron's initialize_model_parallel (v2.5), written out: the group of
 * kind holding rank r.
 */
static int
megatron_group(int world, int tp, int pp, int r, int kind, int *out)
{
	int ntp = world / tp, npp = world / pp, n;

	if (kind == DIST_DP) {
		for (int i = 0; i < pp; i++)
			for (int j = 0; j < tp; j++) {
				n = 0;
				for (int k = i * npp + j; k < (i + 1) * npp; k += tp)
					out[n++] = k;
				for (int k = 0; k < n; k++)
					if (out[k] == r)
						return n;
			}
	} else if (kind == DIST_TP) {
		for (int i = 0; i < ntp; i++)
			if (r >= i * tp && r < (i + 1) * tp) {
				for (n = 0; n < tp; n++)
					out[n] = i * tp + n;
				return n;
			}
	} else {
		for (int i = 0; i < npp; i++) {
			int ranks[64];

			for (n = 0; i + n * npp < world; n++)
				ranks[n] = i + n * npp;
			if (kind == DIST_EMB && n > 1) {
				ranks[1] = ranks[n - 1];
				n = 2;
			}
			for (int k = 0; k < n; k++)
				if (ranks[k] == r) {
					memcpy(out, ranks, (size_t)n * sizeof *out);
					return n;
				}
		}
	}
	return 0;
}

static void
test_layouts(void)
{
	/* 840 layers, channels and heads: a multiple of every size to 8 */
	struct gpt_config c = cfg_of(840, 840, 840, 300);
	struct dist d;
	int g[64], m[64];

	for (int world = 1; world <= 8; world++)
		for (int tp = 1; tp <= world; tp++)
			for (int pp = 1; tp * pp <= world; pp++) {
				int ok = 1, layers = 0, nl, nm;

				if (world % (tp * pp) != 0)
					continue;
				for (int r = 0; r < world; r++) {
					int p, q, t;

					ok &= dist_init(&d, world, r, tp, pp, &c, 128,
					    1, world, err, sizeof err, &code) == 0;
					dist_coords(&d, r, &p, &q, &t);
					ok &= dist_rank(&d, p, q, t) == r &&
					    p == d.pp_rank && q == d.dp_rank &&
					    t == d.tp_rank && r == p * d.dp * tp +
					    q * tp + t;
					for (int kind = 0; kind < DIST_NGROUP; kind++) {
						nl = dist_group(&d, r, kind, g);
						nm = megatron_group(world, tp, pp, r,
						    kind, m);
						ok &= same_ranks(g, nl, m, nm);
					}
					if (d.tp_rank == 0 && d.dp_rank == 0) {
						ok &= d.l0 == layers &&
						    d.l1 - d.l0 == 840 / pp;
						layers = d.l1;
					}
				}
				OK(ok && layers == 840, "world %d, TP %d, PP %d: "
				    "Megatron's groups, coordinates, stages",
				    world, tp, pp);
			}
}

/*
 * Every layout of world ranks with model c: each rank's runs stay inside
 * its part and the whole slice, cover its part once (but vocabulary
 * padding), and the owners of one data-parallel replica cover every
 * element of every slice once; a scatter and gather give the slice back.
 */
static void
test_slices(int world, int tp, int pp, const struct gpt_config *c)
{
	struct dist d;
	struct dist_run run[DIST_MAXRUN];
	int ok = 1, dim[2];

	if (dist_init(&d, world, 0, tp, pp, c, 128, 1, world, err, sizeof err,
	    &code) == -1) {
		OK(0, "layout %d/%d/%d: %s", world, tp, pp, err);
		return;
	}
	for (int k = 0; k < GPT_NPARAM; k++) {
		int nd = dist_shape(&d, k, 0, dim);
		size_t gsize = (size_t)dim[0] * (nd == 2 ? (size_t)dim[1] : 1);
		size_t lsize, i;
		int layered = k != GPT_WTE && k != GPT_WPE && k != GPT_LNFW &&
		    k != GPT_LNFB;

		nd = dist_shape(&d, k, 1, dim);
		lsize = (size_t)dim[0] * (nd == 2 ? (size_t)dim[1] : 1);
		for (int l = 0; l < (layered ? c->nlayer : 1); l++) {
			unsigned char *gcov = xcalloc(gsize, 1);
			float *whole = xmalloc(gsize * sizeof *whole);
			float *back = xcalloc(gsize, sizeof *back);
			float *part = xmalloc(lsize * sizeof *part);

			for (i = 0; i < gsize; i++)
				whole[i] = (float)(owt_mix64(i ^ (size_t)k << 32 ^
				    (size_t)l << 40) >> 40);
			for (int r = 0; r < world; r++) {
				unsigned char *lcov = xcalloc(lsize, 1);
				int n = dist_runs(&d, r, k, l, run);
				int pp_r, dp_r, tp_r;

				dist_coords(&d, r, &pp_r, &dp_r, &tp_r);
				for (i = 0; i < lsize; i++)
					part[i] = -1;
				for (int u = 0; u < n; u++)
					for (size_t row = 0; row < run[u].rows; row++)
						for (size_t e = 0; e < run[u].n; e++) {
							size_t gi = run[u].global +
							    row * run[u].gstride + e;
							size_t li = run[u].local +
							    row * run[u].lstride + e;

							if (gi >= gsize || li >= lsize ||
							    lcov[li]++) {
								ok = 0;
								continue;
							}
							part[li] = whole[gi];
							if (dp_r == 0 &&
							    dist_owner(&d, r, k)) {
								gcov[gi]++;
								back[gi] = part[li];
							}
						}
				/* All of the part is covered but padding rows. */
				for (i = 0; n > 0 && i < lsize; i++)
					if (!lcov[i] && !(k == GPT_WTE &&
					    (size_t)tp_r * lsize + i >=
					    (size_t)c->vocab * (size_t)c->nembd))
						ok = 0;
				free(lcov);
			}
			for (i = 0; i < gsize; i++)
				ok &= gcov[i] == 1;
			ok &= memcmp(back, whole, gsize * sizeof *whole) == 0;
			free(gcov);
			free(whole);
			free(back);
			free(part);
		}
	}
	OK(ok, "world %d, TP %d, PP %d: every slice is the sum of its parts",
	    world, tp, pp);
}

/* Where element (row, col) of rank's part of tensor k lies in the whole. */
static long
global_of(const struct dist *d, int rank, int k, size_t row, size_t col)
{
	struct dist_run run[DIST_MAXRUN];
	int n = dist_runs(d, rank, k, 0, run), dim[2];
	size_t li;

	dist_shape(d, k, 1, dim);
	li = row * (size_t)dim[1] + col;
	for (int u = 0; u < n; u++)
		for (size_t r = 0; r < run[u].rows; r++)
			if (li >= run[u].local + r * run[u].lstride &&
			    li < run[u].local + r * run[u].lstride + run[u].n)
				return (long)(run[u].global + r * run[u].gstride +
				    li - run[u].local - r * run[u].lstride);
	return -1;
}

static void
test_split_semantics(void)
{
	struct gpt_config c = cfg_of(4, 32, 4, 300);
	struct dist d;
	struct dist_run run[DIST_MAXRUN];
	int dim[2];

	dist_init(&d, 2, 1, 2, 1, &c, 128, 1, 1, err, sizeof err, &code);
	/* QKVW: rank 1 holds the k columns of heads 2 and 3 at 16..31 of k. */
	OK(global_of(&d, 1, GPT_QKVW, 3, 16 + 5) == 3 * 96 + 32 + 16 + 5,
	    "TP 2: QKVW (3, C/2 + 5) of rank 1 is (3, C + C/2 + 5)");
	OK(global_of(&d, 0, GPT_QKVW, 0, 2 * 16) == 2 * 32,
	    "TP 2: QKVW's v columns of rank 0 start at 2C");
	OK(global_of(&d, 1, GPT_ATTPROJW, 0, 0) == 16 * 32,
	    "TP 2: ATTPROJW of rank 1 starts at row C/2");
	OK(global_of(&d, 1, GPT_FCW, 2, 7) == 2 * 128 + 64 + 7,
	    "TP 2: FCW (2, 7) of rank 1 is (2, 2C + 7)");
	OK(global_of(&d, 1, GPT_FCPROJW, 1, 3) == (64 + 1) * 32 + 3,
	    "TP 2: FCPROJW (1, 3) of rank 1 is (2C + 1, 3)");
	OK(dist_shape(&d, GPT_QKVW, 1, dim) == 2 && dim[0] == 32 &&
	    dim[1] == 48, "TP 2: QKVW's part is (C, 3C/2)");
	OK(d.vocab_pad == 512 && dist_shape(&d, GPT_WTE, 1, dim) == 2 &&
	    dim[0] == 256 && dist_shape(&d, GPT_WTE, 0, dim) == 2 &&
	    dim[0] == 300, "TP 2: WTE's part is Vp/2 = 256 rows of 300");
	OK(dist_runs(&d, 1, GPT_WTE, 0, run) == 1 && run[0].global == 256 * 32 &&
	    run[0].n == 44 * 32, "TP 2: rank 1 holds vocabulary rows 256..299");
	dist_init(&d, 4, 3, 4, 1, &c, 128, 1, 1, err, sizeof err, &code);
	OK(dist_runs(&d, 3, GPT_WTE, 0, run) == 0,
	    "TP 4: rank 3 holds only padding of the vocabulary");
	dist_init(&d, 4, 0, 1, 4, &c, 128, 1, 1, err, sizeof err, &code);
	OK(dist_runs(&d, 0, GPT_WTE, 0, run) == 1 &&
	    dist_runs(&d, 3, GPT_WTE, 0, run) == 1 &&
	    dist_runs(&d, 1, GPT_WTE, 0, run) == 0 &&
	    dist_owner(&d, 0, GPT_WTE) && !dist_owner(&d, 3, GPT_WTE),
	    "PP 4: the first and last stage hold WTE, the first owns it");
	OK(dist_runs(&d, 0, GPT_WPE, 0, run) == 1 &&
	    dist_runs(&d, 3, GPT_WPE, 0, run) == 0 &&
	    dist_runs(&d, 3, GPT_LNFW, 0, run) == 1 &&
	    dist_runs(&d, 0, GPT_LNFB, 0, run) == 0,
	    "PP 4: WPE on the first stage, LNF on the last");
	OK(dist_runs(&d, 2, GPT_FCW, 2, run) == 1 &&
	    dist_runs(&d, 2, GPT_FCW, 1, run) == 0,
	    "PP 4: stage 2 holds layer 2 only");
}

static void
test_vocab_batch(void)
{
	struct gpt_config c = cfg_of(8, 64, 8, 50257);
	struct dist d;
	int tps[4] = { 1, 2, 4, 8 }, want[4] = { 50304, 50432, 50688, 51200 };
	unsigned char seen[64];
	int ok = 1;

	for (int i = 0; i < 4; i++) {
		dist_init(&d, 8, 0, tps[i], 1, &c, 128, 1, 8, err, sizeof err,
		    &code);
		OK(d.vocab_pad == want[i], "TP %d pads 50257 to %d", tps[i],
		    want[i]);
	}
	OK(dist_init(&d, 4, 1, 1, 1, &c, 128, 2, 16, err, sizeof err,
	    &code) == 0 && d.dp == 4 && d.micro == 2,
	    "global batch 16, micro-batch 2, DP 4: 2 micro-batches");
	OK(dist_sample(&d, 1, 100, 1) == 110,
	    "micro-batch 1 of replica 1 starts at sample 100 + (1 x 4 + 1) x 2");
	memset(seen, 0, sizeof seen);
	for (int r = 0; r < 4; r++)
		for (int j = 0; j < d.micro; j++)
			for (int s = 0; s < 2; s++)
				seen[dist_sample(&d, r, 100, j) - 100 + s]++;
	for (int i = 0; i < 64; i++)
		ok &= seen[i] == (i < 16);
	OK(ok, "the replicas' micro-batches take the global batch once");
	dist_init(&d, 8, 5, 2, 2, &c, 128, 1, 8, err, sizeof err, &code);
	OK(dist_sample(&d, 5, 0, 3) == 3 * 2 + 0 && d.dp_rank == 0 &&
	    dist_sample(&d, 7, 0, 3) == 3 * 2 + 1,
	    "TP 2 x PP 2: ranks of one replica read the same samples");
}

static void
fails(int world, int rank, int tp, int pp, int L, int C, int NH, int mb,
    int G, int want, const char *msg)
{
	struct gpt_config c = cfg_of(L, C, NH, 300);
	struct dist d;
	int rc;

	code = 0;
	err[0] = '\0';
	rc = dist_init(&d, world, rank, tp, pp, &c, 128, mb, G, err,
	    sizeof err, &code);
	OK(rc == -1 && code == want, "'%s' exits %d", msg, want);
	SAMES(err, msg, "the message");
}

static void
test_errors(void)
{
	fails(6, 0, 4, 1, 4, 32, 4, 1, 6, XUSAGE, "world size 6 is not a "
	    "multiple of --tensor-model-parallel-size 4 x "
	    "--pipeline-model-parallel-size 1");
	fails(8, 0, 2, 3, 6, 32, 4, 1, 8, XUSAGE, "world size 8 is not a "
	    "multiple of --tensor-model-parallel-size 2 x "
	    "--pipeline-model-parallel-size 3");
	fails(3, 0, 1, 3, 4, 32, 4, 1, 3, XUSAGE, "--num-layers 4 is not a "
	    "multiple of --pipeline-model-parallel-size 3");
	fails(3, 0, 3, 1, 4, 32, 4, 1, 3, XUSAGE, "--hidden-size 32 is not a "
	    "multiple of --tensor-model-parallel-size 3");
	fails(3, 0, 3, 1, 4, 48, 4, 1, 3, XUSAGE, "--num-attention-heads 4 is "
	    "not a multiple of --tensor-model-parallel-size 3");
	fails(2, 0, 1, 1, 4, 32, 4, 4, 12, XUSAGE, "--global-batch-size 12 is "
	    "not a multiple of --micro-batch-size 4 x 2 data-parallel ranks");
	fails(4, 0, 2, 1, 4, 32, 4, 4, 4, XUSAGE, "--global-batch-size 4 is "
	    "not a multiple of --micro-batch-size 4 x 2 data-parallel ranks");
	fails(4, 4, 1, 1, 4, 32, 4, 1, 4, XSYS, "rank 4 in a world of 4");
}

static void
test_split(void)
{
	size_t off[5];

	dist_split(1000, 3, 16, off);
	OK(off[0] == 0 && off[1] == 336 && off[2] == 672 && off[3] == 1000,
	    "1000 in 3 parts on 16: 0 336 672 1000");
	dist_split(10, 4, 16, off);
	OK(off[0] == 0 && off[1] == 10 && off[4] == 10,
	    "10 in 4 parts on 16: all in the first");
	dist_split(12, 4, 1, off);
	OK(off[1] == 3 && off[2] == 6 && off[3] == 9 && off[4] == 12,
	    "12 in 4 parts: 3 each");
}

int
main(void)
{
	struct gpt_config small = cfg_of(4, 32, 4, 300);

	test_docstring();
	test_layouts();
	test_split_semantics();
	for (int world = 1; world <= 8; world++)
		for (int tp = 1; tp <= 4; tp *= 2)
			for (int pp = 1; pp <= 4; pp *= 2)
				if (world % (tp * pp) == 0)
					test_slices(world, tp, pp, &small);
	test_vocab_batch();
	test_errors();
	test_split();
	return unit_done();
}
