/* unit-plan - lib/dist/gpt_plan.c: --dry-run's figures against what the model allocates, and the published formulas */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "dist/gpt_plan.h"
#include "unit.h"
#include "core/util.h"

static char err[256];
static int code;

static struct gpt_plan_in
tiny(int tp, int pp, int dp, int micro, int global)
{
	return (struct gpt_plan_in){
		.cfg = { .nlayer = 4, .nembd = 32, .nhead = 4, .maxpos = 16,
		    .vocab = 300, .ln_eps = 1e-5f },
		.vocab_div = 8, .tp = tp, .pp = pp, .world = tp * pp * dp,
		.ranks_per_node = 8, .micro_batch = micro,
		.global_batch = global, .seq = 8,
	};
}

/*
 * Allocate rank class k's part as gpt-train does (lib/train/train.c: the part,
 * its slots, the recomputation, the batch, the gradients, the
 * accumulation over the rank's micro-batches, AdamW's moments) and
 * compare gpt_alloc_bytes with the plan's figures, exactly.
 */
static void
check_alloc(const struct gpt_plan_in *in, const char *what, int tp_rank)
{
	struct gpt_plan p;
	struct comm tpc;
	int k, j;

	if (gpt_plan_make(&p, in, err, sizeof err, &code) < 0) {
		OK(0, "%s: %s", what, err);
		return;
	}
	for (k = 0; k < p.nrank; k++) {
		const struct gpt_plan_rank *r = &p.r[k];
		struct gpt_config cfg = in->cfg;
		struct gpt_part part = { r->l0, r->l1, r->stage == 0,
		    r->stage == in->pp - 1, in->tp, 0 };
		struct gpt m;
		size_t before = gpt_alloc_bytes(), acts;

		memset(&tpc, 0, sizeof tpc);
		tpc.size = in->tp;
		tpc.rank = tp_rank;
		part.tp_rank = tp_rank;
		cfg.vocab_pad = p.d.vocab_pad;
		if (gpt_init_part(&m, &cfg, &part, in->tp > 1 ? &tpc : NULL,
		    &gpt_cpu, err, sizeof err) < 0) {
			OK(0, "%s: %s", what, err);
			continue;
		}
		OK(m.nparams == r->params && m.ngrads == r->ngrads,
		    "%s stage %d: %zu parameters, %zu gradients", what,
		    r->stage, r->params, r->ngrads);
		OK(gpt_alloc_bytes() - before == r->b_params,
		    "%s stage %d: parameters' bytes", what, r->stage);
		if (in->pp > 1)
			gpt_set_slots(&m, r->slots);
		gpt_set_recompute(&m, &in->rc);
		before = gpt_alloc_bytes();
		if (gpt_set_batch(&m, in->micro_batch, in->seq, err,
		    sizeof err) < 0)
			OK(0, "%s: %s", what, err);
		acts = gpt_alloc_bytes() - before;
		OK(acts == (tp_rank ? r->b_acts_tplast : r->b_acts),
		    "%s stage %d, tp rank %d: activations %zu bytes", what,
		    r->stage, tp_rank, acts);
		gpt_zero_grad(&m);
		for (j = 0; j < p.d.micro; j++)
			gpt_grad_accumulate(&m, j, p.d.micro);
		if (!in->zero)
			gpt_update(&m, &(struct adamw){ 0.9f, 0.999f, 1e-8f,
			    0.01f }, 0, 1);
		OK(gpt_alloc_bytes() - before + r->b_params == (tp_rank ?
		    r->total_tplast : r->total) - (in->zero ? r->b_optim : 0),
		    "%s stage %d, tp rank %d: the bytes in all", what, r->stage,
		    tp_rank);
		gpt_free(&m);
	}
}

static void
test_alloc(void)
{
	struct gpt_plan_in in;
	int g;

	in = tiny(1, 1, 1, 2, 2);
	check_alloc(&in, "one process", 0);
	in = tiny(1, 1, 1, 2, 6);
	check_alloc(&in, "one process, 3 micro-batches", 0);
	in = tiny(1, 1, 2, 1, 2);
	check_alloc(&in, "DP2", 0);
	in.zero = 1;
	check_alloc(&in, "DP2 ZeRO", 0);
	in = tiny(2, 1, 1, 2, 4);
	check_alloc(&in, "TP2", 0);
	check_alloc(&in, "TP2", 1);
	in = tiny(1, 2, 1, 1, 4);
	check_alloc(&in, "PP2", 0);
	in = tiny(2, 2, 1, 1, 4);
	check_alloc(&in, "TP2 x PP2", 0);
	check_alloc(&in, "TP2 x PP2", 1);
	in = tiny(1, 4, 1, 1, 2);
	check_alloc(&in, "PP4, 2 micro-batches", 0);
	for (g = GPT_RECOMPUTE_SELECTIVE; g <= GPT_RECOMPUTE_FULL; g++) {
		in = tiny(1, 2, 1, 1, 8);
		in.rc.granularity = g;
		in.rc.method = GPT_RECOMPUTE_UNIFORM;
		in.rc.nlayers = 1;
		check_alloc(&in, g == GPT_RECOMPUTE_FULL ? "PP2 full recompute" :
		    "PP2 selective recompute", 0);
	}
}

/* The seed's question (plan-16.md B3): 1.3B, TP 2, PP 4 on 8 GPUs. */
static void
test_seed(void)
{
	struct gpt_plan_in in = {
		.cfg = { .nlayer = 24, .nembd = 2048, .nhead = 16,
		    .maxpos = 2048, .vocab = 50257 },
		.vocab_div = 128, .tp = 2, .pp = 4, .world = 8,
		.ranks_per_node = 8, .micro_batch = 1, .global_batch = 512,
		.seq = 2048,
	};
	struct gpt_plan p;
	double layer = 2048.0 * 2048 * (10 + 24 / 2.0 + 5.0 * 16 * 2048 /
	    (2048 * 2));

	OK(gpt_plan_make(&p, &in, err, sizeof err, &code) == 0, "1.3B plans");
	OK(p.nrank == 3 && p.d.vocab_pad == 50432 && p.d.micro == 512,
	    "three rank classes, Vp 50432, 512 micro-batches");
	OK(p.r[0].params == 206948352, "first stage: 206948352 parameters "
	    "(%zu)", p.r[0].params);
	OK(layer == 62.0 * 2048 * 2048 && p.r[0].mg_acts == 24 * layer,
	    "Megatron's first stage: 24 layers of 248 MiB");
	OK(p.r[0].mg_static == 18.0 * 206948352, "18 bytes a parameter");
	OK(p.r[0].slots == 4 && p.r[1].slots == 3 && p.r[2].slots == 1,
	    "1F1B: 4, 3 and 1 micro-batches held");
	OK(p.r[0].total < 40.0 * 1000 * 1000 * 1000, "fits 40 GB");
	OK(fabs(p.bubble - 3.0 / 512) < 1e-15 && fabs(p.idle - 3.0 / 515) <
	    1e-15, "bubble 3/512, idle 3/515");
	OK(p.r[0].tp_bytes == 4.0 * 6 * 512 * 1 * 2048 * 2048 * 4 &&
	    p.r[0].pp_bytes == 512.0 * 2048 * 2048 * 4 &&
	    p.r[1].pp_bytes == 2 * p.r[0].pp_bytes && !p.r[0].tp_inter,
	    "communication: TP 4 all-reduces a layer, PP one way at the ends");
}

/* GPT-2 124M on one node of 8 and on 2 nodes of 4: the formulas. */
static void
test_124m(void)
{
	struct gpt_plan_in in = {
		.cfg = { .nlayer = 12, .nembd = 768, .nhead = 12,
		    .maxpos = 1024, .vocab = 50257 },
		.vocab_div = 128, .tp = 1, .pp = 1, .world = 8,
		.ranks_per_node = 8, .micro_batch = 4, .global_batch = 32,
		.seq = 1024,
	};
	struct gpt_plan p;
	double l = 12, h = 768, s = 1024, V = 50304, B = 32;

	OK(gpt_plan_make(&p, &in, err, sizeof err, &code) == 0, "124M DP8");
	OK(p.total_params == 124439808, "124439808 parameters");
	OK(p.narayanan == 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) /
	    (12 * l * h)), "Narayanan's total");
	OK(p.flops == 72 * B * s * l * h * h * (1 + s / (6 * h) + V /
	    (16 * l * h)), "72Bslh^2(...) FLOPs");
	OK(p.r[0].dp_bytes == 2.0 * 7 / 8 * (double)p.r[0].ngrads * 4 &&
	    !p.r[0].dp_inter, "DP8: ring all-reduce in one node");
	in.ranks_per_node = 4;
	OK(gpt_plan_make(&p, &in, err, sizeof err, &code) == 0 &&
	    p.r[0].dp_inter, "DP8 on nodes of 4: inter-node");
	in.tp = 2;
	in.ranks_per_node = 8;
	OK(gpt_plan_make(&p, &in, err, sizeof err, &code) == 0 &&
	    p.d.dp == 4 && p.r[0].tp_bytes > 0 && !p.r[0].tp_inter,
	    "TP2 x DP4: tensor-parallel pairs in the node");
	in.world = 6;
	OK(gpt_plan_make(&p, &in, err, sizeof err, &code) < 0 &&
	    code == XUSAGE, "global batch 32 over DP3: usage (%s)", err);
}

int
main(void)
{
	test_alloc();
	test_seed();
	test_124m();
	return unit_done();
}
