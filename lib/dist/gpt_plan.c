/* gpt_plan.c - gpt-train --dry-run: a layout's parameters, memory, communication, bubble and FLOPs */
#include <string.h>

#include "dist/gpt_plan.h"
#include "core/util.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static int
node_of(const struct gpt_plan_in *in, int rank)
{
	return rank / in->ranks_per_node;
}

/* 1 where world ranks a and b are on different nodes. */
static int
apart(const struct gpt_plan_in *in, int a, int b)
{
	return node_of(in, a) != node_of(in, b);
}

/*
 * Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
 * Transformer Models": the bytes of one layer's activations of one
 * micro-batch (fp16 activations, 1-byte masks, no sequence parallelism,
 * which owt does not have).
 */
static double
mg_layer(const struct gpt_plan_in *in)
{
	double s = in->seq, b = in->micro_batch, h = in->cfg.nembd;
	double a = in->cfg.nhead, t = in->tp, sbh = s * b * h;

	switch (in->rc.granularity) {
	case GPT_RECOMPUTE_FULL:
		return 2 * sbh;
	case GPT_RECOMPUTE_SELECTIVE:
		return sbh * (10 + 24 / t);
	default:
		return sbh * (10 + 24 / t + 5 * a * s / (h * t));
	}
}

static int
plan_rank(struct gpt_plan *p, struct gpt_plan_rank *r, int stage, char *err,
    size_t errsize, int *code)
{
	const struct gpt_plan_in *in = &p->in;
	const struct dist *d = &p->d;
	struct gpt_config cfg = in->cfg;
	struct gpt_part part;
	struct gpt m;
	int per = d->dp * d->tp, first = stage * per, slots;
	double bsh = (double)in->micro_batch * in->seq * in->cfg.nembd;
	double t = in->tp, mb = d->micro, nl;

	cfg.vocab_pad = d->vocab_pad;
	part.l0 = stage * (cfg.nlayer / d->pp);
	part.l1 = part.l0 + cfg.nlayer / d->pp;
	part.first = stage == 0;
	part.last = stage == d->pp - 1;
	part.tp = d->tp;
	part.tp_rank = 0;
	if (gpt_layout_part(&m, &cfg, &part, err, errsize) < 0) {
		*code = XUSAGE;
		return -1;
	}
	slots = d->pp - stage < d->micro ? d->pp - stage : d->micro;
	if (d->pp > 1)
		gpt_set_slots(&m, slots);
	gpt_set_recompute(&m, &in->rc);
	memset(r, 0, sizeof *r);
	r->stage = stage;
	r->l0 = part.l0;
	r->l1 = part.l1;
	r->params = m.nparams;
	r->ngrads = m.ngrads;
	r->slots = d->pp > 1 ? slots : 1;
	r->b_params = m.nparams * sizeof(float);
	r->b_grads = m.ngrads * sizeof(float);
	/* ZeRO: train.c's shards cut at norm chunks, about an even share */
	r->b_optim = 2 * sizeof(float) * (in->zero ? (m.nparams +
	    (size_t)d->dp - 1) / (size_t)d->dp : m.nparams);
	r->b_acc = d->micro > 1 ? m.ngrads * sizeof(float) : 0;
	r->b_acts = gpt_acts_bytes(&m, in->micro_batch, in->seq);
	r->total = r->b_params + r->b_grads + r->b_optim + r->b_acc +
	    r->b_acts;
	r->b_acts_tplast = r->b_acts;
	if (part.tp > 1 && part.last) {
		part.tp_rank = part.tp - 1;
		if (gpt_layout_part(&m, &cfg, &part, err, errsize) < 0) {
			*code = XUSAGE;
			return -1;
		}
		if (d->pp > 1)
			gpt_set_slots(&m, slots);
		gpt_set_recompute(&m, &in->rc);
		r->b_acts_tplast = gpt_acts_bytes(&m, in->micro_batch, in->seq);
	}
	r->total_tplast = r->total - r->b_acts + r->b_acts_tplast;

	nl = part.l1 - part.l0;
	r->mg_acts = mg_layer(in) * nl * r->slots;
	if (part.last)
		r->mg_acts += 4 * bsh / t * (1 + (double)d->vocab_pad /
		    in->cfg.nembd);
	r->mg_static = (double)m.nparams * (in->zero ? 6 + 12.0 / d->dp : 18);

	r->tp_bytes = d->tp > 1 ? 4 * nl * mb * 2 * (t - 1) / t * bsh * 4 : 0;
	r->pp_bytes = mb * bsh * 4 * (!part.last + !part.first);
	r->dp_bytes = d->dp > 1 ? 2.0 * (d->dp - 1) / d->dp *
	    (double)m.ngrads * 4 : 0;
	r->emb_bytes = d->pp > 1 && (part.first || part.last) ?
	    (double)d->vocab_pad / d->tp * in->cfg.nembd * 4 : 0;
	r->tp_inter = apart(in, first, first + d->tp - 1);
	r->dp_inter = apart(in, first, first + (d->dp - 1) * d->tp);
	r->pp_inter = (!part.last && apart(in, first, first + per)) ||
	    (!part.first && apart(in, first - per, first));
	return 0;
}

int
gpt_plan_make(struct gpt_plan *p, const struct gpt_plan_in *in,
    char *err, size_t errsize, int *code)
{
	double l, h, s, V, B;
	int stages[3], n = 0, k;

	memset(p, 0, sizeof *p);
	p->in = *in;
	if (dist_init(&p->d, in->world, 0, in->tp, in->pp, &in->cfg,
	    in->vocab_div, in->micro_batch, in->global_batch, err, errsize,
	    code) < 0)
		return -1;
	stages[n++] = 0;
	if (in->pp > 2)
		stages[n++] = 1;
	if (in->pp > 1)
		stages[n++] = in->pp - 1;
	for (k = 0; k < n; k++)
		if (plan_rank(p, &p->r[k], stages[k], err, errsize, code) < 0)
			return -1;
	p->nrank = n;
	p->total_params = gpt_nparams(&in->cfg);
	l = in->cfg.nlayer;
	h = in->cfg.nembd;
	s = in->seq;
	V = p->d.vocab_pad;
	B = in->global_batch;
	p->narayanan = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) /
	    (12 * l * h));
	p->bubble = (double)(in->pp - 1) / p->d.micro;
	p->idle = (double)(in->pp - 1) / (p->d.micro + in->pp - 1);
	p->flops = (in->rc.granularity == GPT_RECOMPUTE_FULL ? 96 : 72) *
	    B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
	return 0;
}

static const char *
link_of(int inter)
{
	return inter ? "inter-node" : "intra-node";
}

void
gpt_plan_print(struct buf *out, const struct gpt_plan *p)
{
	const struct gpt_plan_in *in = &p->in;
	const struct dist *d = &p->d;
	struct gpt m;
	char rc[128], err[256];
	int k;

	/* the whole model, for gpt_recompute_desc's words */
	{
		struct gpt_config c = in->cfg;

		c.vocab_pad = d->vocab_pad;
		if (gpt_layout(&m, &c, err, sizeof err) < 0)
			memset(&m, 0, sizeof m);
		m.rc = in->rc;
		gpt_recompute_desc(&m, rc, sizeof rc);
	}
	buf_printf(out, "model: %d layers, hidden size %d, %d heads, %d "
	    "positions, vocabulary %d (padded to %d): %zu parameters; "
	    "Narayanan's 12lh^2(1 + 13/(12h) + (V+s)/(12lh)): %.0f\n",
	    in->cfg.nlayer, in->cfg.nembd, in->cfg.nhead, in->cfg.maxpos,
	    in->cfg.vocab, d->vocab_pad, p->total_params, p->narayanan);
	buf_printf(out, "layout: %d ranks = %d tensor-parallel x %d pipeline "
	    "stages x %d data-parallel, %d ranks a node; micro-batches of %d "
	    "x %d tokens, %d a replica an iteration; recomputation: %s%s\n",
	    d->world, d->tp, d->pp, d->dp, in->ranks_per_node,
	    in->micro_batch, in->seq, d->micro, rc,
	    in->zero ? "; the optimizer sharded over the data-parallel ranks"
	    : "");
	for (k = 0; k < p->nrank; k++) {
		const struct gpt_plan_rank *r = &p->r[k];
		const char *what = d->pp == 1 ? "every rank" : r->stage == 0 ?
		    "first stage" : r->stage == d->pp - 1 ? "last stage" :
		    "middle stage";

		buf_printf(out, "%s (stage %d, layers [%d, %d)):\n", what,
		    r->stage, r->l0, r->l1);
		buf_printf(out, "  parameters: %zu a rank (padding included)\n",
		    r->params);
		buf_printf(out, "  owt memory a rank: parameters %zu, gradients "
		    "%zu, optimizer %zu%s, accumulation %zu, activations %zu "
		    "(%d of %d micro-batches held); total %zu bytes (%.2f GiB)\n",
		    r->b_params, r->b_grads, r->b_optim, in->zero ?
		    " (about: shards cut at norm chunks)" : "", r->b_acc,
		    r->b_acts, r->slots, d->micro, r->total,
		    (double)r->total / GIB);
		if (r->total_tplast != r->total)
			buf_printf(out, "  owt memory, tensor-parallel rank %d "
			    "(fewer real vocabulary rows): activations %zu; total "
			    "%zu bytes (%.2f GiB)\n", d->tp - 1, r->b_acts_tplast,
			    r->total_tplast, (double)r->total_tplast / GIB);
		buf_printf(out, "  Megatron a rank (Korthikanti 2022): "
		    "activations %.0f bytes (%.2f GiB)%s, static %.0f bytes "
		    "(%.2f GiB, %s B/param)\n", r->mg_acts, r->mg_acts / GIB,
		    r->stage == d->pp - 1 ? " with the last stage's 4sbh/t(1 + "
		    "v/h) (check eq. (5)-(6) in the paper)" : "", r->mg_static,
		    r->mg_static / GIB, in->zero ? "6 + 12/d" : "18");
		buf_printf(out, "  sent a rank an iteration: tensor-parallel "
		    "%.0f bytes (%s), pipeline %.0f bytes (%s), data-parallel "
		    "%.0f bytes (%s), embedding %.0f bytes\n", r->tp_bytes,
		    link_of(r->tp_inter), r->pp_bytes, link_of(r->pp_inter),
		    r->dp_bytes, link_of(r->dp_inter), r->emb_bytes);
	}
	buf_printf(out, "bubble: (p-1)/m = %.6f; idle share (p-1)/(m+p-1) = "
	    "%.6f\n", p->bubble, p->idle);
	buf_printf(out, "FLOPs an iteration: %s = %.4e; %.4e a rank\n",
	    in->rc.granularity == GPT_RECOMPUTE_FULL ?
	    "96Bslh^2(1 + s/(6h) + V/(16lh))" :
	    "72Bslh^2(1 + s/(6h) + V/(16lh))", p->flops, p->flops / d->world);
}
