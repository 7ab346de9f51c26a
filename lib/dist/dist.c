/* dist.c - Megatron's rank layout: tensor-, pipeline- and data-parallel ranks, and each rank's part of the model */
#include <stdio.h>
#include <string.h>

#include "dist/dist.h"
#include "core/util.h"

int
dist_init(struct dist *d, int world, int rank, int tp, int pp,
    const struct gpt_config *cfg, int vocab_div, int micro_batch,
    int global_batch, char *err, size_t errsize, int *code)
{
	memset(d, 0, sizeof *d);
	if (world < 1 || rank < 0 || rank >= world)
		return owt_fail(err, errsize, code, XSYS,
		    "rank %d in a world of %d", rank, world);
	if (tp < 1 || pp < 1 || micro_batch < 1 || global_batch < 1 ||
	    vocab_div < 1)
		return owt_fail(err, errsize, code, XUSAGE,
		    "every size must be at least 1");
	if (world % (tp * pp) != 0)
		return owt_fail(err, errsize, code, XUSAGE, "world size %d is "
		    "not a multiple of --tensor-model-parallel-size %d x "
		    "--pipeline-model-parallel-size %d", world, tp, pp);
	if (cfg->nlayer % pp != 0)
		return owt_fail(err, errsize, code, XUSAGE, "--num-layers %d "
		    "is not a multiple of --pipeline-model-parallel-size %d",
		    cfg->nlayer, pp);
	if (cfg->nembd % tp != 0)
		return owt_fail(err, errsize, code, XUSAGE, "--hidden-size %d "
		    "is not a multiple of --tensor-model-parallel-size %d",
		    cfg->nembd, tp);
	if (cfg->nhead % tp != 0)
		return owt_fail(err, errsize, code, XUSAGE,
		    "--num-attention-heads %d is not a multiple of "
		    "--tensor-model-parallel-size %d", cfg->nhead, tp);
	d->world = world;
	d->rank = rank;
	d->tp = tp;
	d->pp = pp;
	d->dp = world / (tp * pp);
	if (global_batch % ((long long)micro_batch * d->dp) != 0)
		return owt_fail(err, errsize, code, XUSAGE,
		    "--global-batch-size %d is not a multiple of "
		    "--micro-batch-size %d x %d data-parallel ranks",
		    global_batch, micro_batch, d->dp);
	dist_coords(d, rank, &d->pp_rank, &d->dp_rank, &d->tp_rank);
	d->micro_batch = micro_batch;
	d->micro = global_batch / (micro_batch * d->dp);
	d->nlayer = cfg->nlayer;
	d->nembd = cfg->nembd;
	d->nhead = cfg->nhead;
	d->maxpos = cfg->maxpos;
	d->vocab = cfg->vocab;
	/* Megatron pads to make_vocab_size_divisible_by x TP. */
	d->vocab_pad = gpt_pad_vocab(cfg->vocab, vocab_div * tp);
	d->l0 = d->pp_rank * (cfg->nlayer / pp);
	d->l1 = d->l0 + cfg->nlayer / pp;
	return 0;
}

int
dist_rank(const struct dist *d, int pp, int dp, int tp)
{
	return pp * d->dp * d->tp + dp * d->tp + tp;
}

void
dist_coords(const struct dist *d, int rank, int *pp, int *dp, int *tp)
{
	*tp = rank % d->tp;
	*dp = rank / d->tp % d->dp;
	*pp = rank / (d->tp * d->dp);
}

int
dist_group(const struct dist *d, int rank, int kind, int *ranks)
{
	int pp, dp, tp, n = 0, i;

	dist_coords(d, rank, &pp, &dp, &tp);
	switch (kind) {
	case DIST_TP:
		for (i = 0; i < d->tp; i++)
			ranks[n++] = dist_rank(d, pp, dp, i);
		break;
	case DIST_DP:
		for (i = 0; i < d->dp; i++)
			ranks[n++] = dist_rank(d, pp, i, tp);
		break;
	case DIST_PP:
		for (i = 0; i < d->pp; i++)
			ranks[n++] = dist_rank(d, i, dp, tp);
		break;
	case DIST_EMB:
		if (pp != 0 && pp != d->pp - 1)
			break;
		ranks[n++] = dist_rank(d, 0, dp, tp);
		if (d->pp > 1)
			ranks[n++] = dist_rank(d, d->pp - 1, dp, tp);
		break;
	}
	return n;
}

/* Whether stage pp holds tensor k's layer l. */
static int
holds(const struct dist *d, int pp, int k, int l)
{
	int per = d->nlayer / d->pp;

	switch (k) {
	case GPT_WTE:
		return pp == 0 || pp == d->pp - 1;
	case GPT_WPE:
		return pp == 0;
	case GPT_LNFW:
	case GPT_LNFB:
		return pp == d->pp - 1;
	default:
		return l >= pp * per && l < (pp + 1) * per;
	}
}

/* dim[] = { a, b }, or { a } where b is 0: the number of dimensions */
static int
dims(int dim[2], int a, int b)
{
	dim[0] = a;
	dim[1] = b;
	return b ? 2 : 1;
}

int
dist_shape(const struct dist *d, int k, int local, int dim[2])
{
	int C = d->nembd, t = local ? d->tp : 1;

	switch (k) {
	case GPT_WTE:
		return dims(dim, local ? d->vocab_pad / d->tp : d->vocab, C);
	case GPT_WPE:
		return dims(dim, d->maxpos, C);
	case GPT_QKVW:
		return dims(dim, C, 3 * C / t);
	case GPT_QKVB:
		return dims(dim, 3 * C / t, 0);
	case GPT_ATTPROJW:
		return dims(dim, C / t, C);
	case GPT_FCW:
		return dims(dim, C, 4 * C / t);
	case GPT_FCB:
		return dims(dim, 4 * C / t, 0);
	case GPT_FCPROJW:
		return dims(dim, 4 * C / t, C);
	default:		/* LayerNorms and the biases after a sum */
		return dims(dim, C, 0);
	}
}

int
dist_runs(const struct dist *d, int rank, int k, int l, struct dist_run *run)
{
	size_t C = (size_t)d->nembd, t = (size_t)d->tp, w = C / t, lo, hi;
	int pp, dp, tp, dim[2], n = 0;

	dist_coords(d, rank, &pp, &dp, &tp);
	if (!holds(d, pp, k, l))
		return 0;
	memset(run, 0, DIST_MAXRUN * sizeof *run);
	switch (k) {
	case GPT_QKVW:
	case GPT_QKVB:
		/* q, k and v: the same columns of each */
		for (n = 0; n < 3; n++) {
			run[n].global = (size_t)n * C + (size_t)tp * w;
			run[n].local = (size_t)n * w;
			run[n].n = w;
			run[n].rows = k == GPT_QKVW ? C : 1;
			run[n].gstride = 3 * C;
			run[n].lstride = 3 * w;
		}
		return 3;
	case GPT_FCW:
	case GPT_FCB:
		run[0].global = (size_t)tp * 4 * w;
		run[0].n = 4 * w;
		run[0].rows = k == GPT_FCW ? C : 1;
		run[0].gstride = 4 * C;
		run[0].lstride = 4 * w;
		return 1;
	case GPT_ATTPROJW:
	case GPT_FCPROJW:
		run[0].n = (k == GPT_FCPROJW ? 4 : 1) * w * C;
		run[0].global = (size_t)tp * run[0].n;
		run[0].rows = 1;
		return 1;
	case GPT_WTE:
		lo = (size_t)tp * (size_t)(d->vocab_pad / d->tp);
		hi = lo + (size_t)(d->vocab_pad / d->tp);
		if (hi > (size_t)d->vocab)
			hi = (size_t)d->vocab;
		if (lo >= hi)
			return 0;
		run[0].global = lo * C;
		run[0].n = (hi - lo) * C;
		run[0].rows = 1;
		return 1;
	default:
		n = dist_shape(d, k, 1, dim);
		run[0].n = (size_t)dim[0] * (n == 2 ? (size_t)dim[1] : 1);
		run[0].rows = 1;
		return 1;
	}
}

int
dist_owner(const struct dist *d, int rank, int k)
{
	int pp, dp, tp;

	dist_coords(d, rank, &pp, &dp, &tp);
	switch (k) {
	case GPT_WTE:
		return pp == 0;
	case GPT_QKVW:
	case GPT_QKVB:
	case GPT_ATTPROJW:
	case GPT_FCW:
	case GPT_FCB:
	case GPT_FCPROJW:
		return 1;
	default:
		return tp == 0;
	}
}

long long
dist_sample(const struct dist *d, int rank, long long consumed, int j)
{
	int pp, dp, tp;

	dist_coords(d, rank, &pp, &dp, &tp);
	return consumed + ((long long)j * d->dp + dp) * d->micro_batch;
}

void
dist_split(size_t n, int parts, size_t align, size_t *off)
{
	size_t part = (n + (size_t)parts - 1) / (size_t)parts;

	if (align > 1)
		part = (part + align - 1) / align * align;
	for (int q = 0; q <= parts; q++)
		off[q] = (size_t)q * part < n ? (size_t)q * part : n;
}
