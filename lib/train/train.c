/* train.c - training: iterations with accumulation and clipping, the fp16 loss scaler, evaluation */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist/pipeline.h"
#include "train/train.h"
#include "core/util.h"

/* The canonical gradient norm's chunks, which ZeRO's shards keep whole. */
#define NORM_CHUNK GPT_NORM_CHUNK

static int
ndp(const struct trainer *tr)
{
	return tr->dist ? tr->dist->dp : 1;
}

static int
dp_rank(const struct trainer *tr)
{
	return tr->dist ? tr->dist->dp_rank : 0;
}

static float *
balloc(const struct gpt *m, size_t n)
{
	float *p = m->be->alloc(n * sizeof *p);

	if (p == NULL && n > 0)
		owt_fatal("out of %s memory allocating %zu bytes",
		    m->be->name, n * sizeof *p);
	return p;
}

/*
 * ZeRO's shards of the flat buffers: about equal, cut where a chunk of
 * the canonical norm starts (a tensor slice's start, or GPT_NORM_CHUNK
 * elements into one).
 */
static void
zero_split(const struct gpt *m, int d, size_t *off)
{
	size_t want = (m->nparams + (size_t)d - 1) / (size_t)d, best, c;
	int q, k, l, nl;

	off[0] = 0;
	off[d] = m->nparams;
	for (q = 1; q < d; q++) {
		best = m->nparams;
		for (k = 0; k < GPT_NPARAM; k++) {
			const struct gpt_tensor *t = &m->t[k];
			size_t slice;

			if (t->n == 0)
				continue;
			nl = t->layered ? m->nl : 1;
			slice = t->n / (size_t)nl;
			for (l = 0; l < nl; l++)
				for (c = 0; c < slice; c += NORM_CHUNK) {
					size_t at = t->off + (size_t)l * slice + c;

					if (at >= want * (size_t)q && at < best)
						best = at;
				}
		}
		off[q] = best > off[q - 1] ? best : off[q - 1];
	}
}

/* Move moments m holds (a loaded checkpoint) into the shard: m keeps none. */
static void
take_moments(struct trainer *tr)
{
	struct gpt *m = tr->m;
	size_t a = tr->shard[dp_rank(tr)], n = tr->shard[dp_rank(tr) + 1] - a;
	float *host = xmalloc((n ? n : 1) * sizeof *host);
	float **mv[2] = { &m->m, &m->v }, *z[2] = { tr->zm, tr->zv };

	for (int i = 0; i < 2; i++) {
		if (*mv[i] == NULL)
			continue;
		m->be->get(host, *mv[i] + a, n * sizeof *host);
		m->be->put(z[i], host, n * sizeof *host);
		m->be->free(*mv[i]);
		*mv[i] = NULL;
	}
	free(host);
}

void
train_init(struct trainer *tr)
{
	size_t n = (size_t)tr->micro * tr->T;
	struct gpt *m = tr->m;
	int d = ndp(tr);

	if (tr->dist) {
		if (tr->zero && (tr->dist->pp != 1 || tr->dist->tp != 1))
			owt_fatal("train_init: the distributed optimizer with "
			    "model parallelism is not implemented");
		tr->nmicro = tr->dist->micro;
	}
	tr->tokens = xmalloc((size_t)tr->micro * (tr->T + 1) * sizeof *tr->tokens);
	tr->inputs = xmalloc(n * sizeof *tr->inputs);
	tr->targets = xmalloc(n * sizeof *tr->targets);
	tr->nctl = (size_t)tr->nmicro * d + 1 + gpt_norm_nparts(m);
	if (tr->zero) {
		size_t a, len;

		tr->shard = xmalloc(((size_t)d + 1) * sizeof *tr->shard);
		zero_split(m, d, tr->shard);
		a = tr->shard[dp_rank(tr)];
		len = tr->shard[dp_rank(tr) + 1] - a;
		tr->zm = balloc(m, len ? len : 1);
		tr->zv = balloc(m, len ? len : 1);
		take_moments(tr);
	}
	tr->ctl = xcalloc(tr->nctl, sizeof *tr->ctl);
}

void
train_free(struct trainer *tr)
{
	const struct gpt_backend *be = tr->m ? tr->m->be : NULL;

	free(tr->tokens);
	free(tr->inputs);
	free(tr->targets);
	tr->tokens = NULL;
	tr->inputs = tr->targets = NULL;
	if (be) {
		if (tr->zm)
			be->free(tr->zm);
		if (tr->zv)
			be->free(tr->zv);
	}
	tr->zm = tr->zv = NULL;
	free(tr->shard);
	free(tr->ctl);
	tr->shard = NULL;
	tr->ctl = NULL;
}

uint64_t
train_batch(const struct trainer *tr)
{
	return (uint64_t)tr->micro * tr->nmicro * ndp(tr);
}

/* Samples first .. first + micro into inputs and targets. */
static int
fetch(struct trainer *tr, const struct sample_src *src, uint64_t first,
    char *err, size_t errsize, int *code)
{
	int b, t, T = tr->T;

	for (b = 0; b < tr->micro; b++) {
		uint32_t *x = tr->tokens + (size_t)b * (T + 1);

		if (src->get(src->arg, first + b, x, err, errsize, code) < 0)
			return -1;
		for (t = 0; t < T; t++) {
			tr->inputs[b * T + t] = (int32_t)x[t];
			tr->targets[b * T + t] = (int32_t)x[t + 1];
		}
	}
	return 0;
}

void
train_scaler_start(const struct loss_scaler *s, struct train_state *st,
    double initial)
{
	st->loss_scale = initial;
	st->ls_growth = 0;
	st->ls_hyst = s->hysteresis;
}

void
train_scaler_update(const struct loss_scaler *s, struct train_state *st,
    int overflow)
{
	if (overflow) {
		st->ls_growth = 0;
		if (st->ls_hyst > 0)
			st->ls_hyst--;
		if (st->ls_hyst == 0)
			st->loss_scale = fmax(st->loss_scale * 0.5, s->min);
	} else if (++st->ls_growth == s->window) {
		st->ls_growth = 0;
		st->ls_hyst = s->hysteresis;
		st->loss_scale *= 2;
	}
}

/*
 * ZeRO's gradient sum: each rank gets the ordered sum of its shard only,
 * and of the output layer's gradient for the token-embedding rows of its
 * shard; tied, and zero outside the shard, so that the canonical norm's
 * chunks (which shards do not cut) are this rank's or 0.
 */
static int
zero_reduce(struct trainer *tr, char *err, size_t errsize, int *code)
{
	struct gpt *m = tr->m;
	const struct gpt_tensor *w = &m->t[GPT_WTE];
	int d = ndp(tr), me = dp_rank(tr);
	size_t a = tr->shard[me], b = tr->shard[me + 1];
	size_t *oh = xmalloc(((size_t)d + 1) * sizeof *oh);
	int r = 0;

	if (d > 1 && comm_reduce_scatter_ordered(tr->dp, m->grads, tr->shard,
	    "gradients", err, errsize, code) < 0)
		r = -1;
	if (r == 0 && d > 1 && m->head > 0) {
		for (int q = 0; q <= d; q++)
			oh[q] = tr->shard[q] <= w->off ? 0 :
			    tr->shard[q] - w->off > w->n ? w->n :
			    tr->shard[q] - w->off;
		oh[d] = w->n;
		if (comm_reduce_scatter_ordered(tr->dp, m->grads + m->head,
		    oh, "gradients of the output layer", err, errsize,
		    code) < 0)
			r = -1;
	}
	free(oh);
	if (r < 0)
		return -1;
	gpt_grad_tie(m);
	if (a > 0)
		m->be->zero(m->grads, a * sizeof(float));
	if (b < m->nparams)
		m->be->zero(m->grads + b, (m->nparams - b) * sizeof(float));
	return 0;
}

/*
 * AdamW on this rank's shard only (the tensors' pieces in it, each with
 * its own decay), as gpt_update does on the whole; then every rank's
 * shard to every rank.
 */
static int
zero_update(struct trainer *tr, float lr, float gscale, char *err,
    size_t errsize, int *code)
{
	struct gpt *m = tr->m;
	const struct adamw *o = &tr->adam;
	size_t a = tr->shard[dp_rank(tr)], b = tr->shard[dp_rank(tr) + 1];
	float bc1, bc2;

	m->step++;
	bc1 = (float)(1 - pow(o->beta1, (double)m->step));
	bc2 = (float)(1 - pow(o->beta2, (double)m->step));
	for (int k = 0; k < GPT_NPARAM; k++) {
		const struct gpt_tensor *t = &m->t[k];
		size_t lo = t->off > a ? t->off : a;
		size_t hi = t->off + t->n < b ? t->off + t->n : b;

		if (lo >= hi)
			continue;
		m->be->adamw(m->params + lo, m->grads + lo, tr->zm + (lo - a),
		    tr->zv + (lo - a), hi - lo, lr, o->beta1, o->beta2, o->eps,
		    t->decay ? o->wd : 0, bc1, bc2, gscale);
	}
	return comm_allgather(tr->dp, m->params, tr->shard, "parameters", err,
	    errsize, code);
}

/* One iteration's micro-batches through this stage of a pipeline. */
struct pipe_ctx {
	struct trainer *tr;
	const struct sample_src *src;
	float dloss;
	uint64_t key, first;
};

static int
pipe_forward(void *arg, int j, const float *in, float *out, char *err,
    size_t errsize, int *code)
{
	struct pipe_ctx *c = arg;
	struct trainer *tr = c->tr;
	struct gpt *m = tr->m;
	uint64_t g = (uint64_t)j * ndp(tr) + dp_rank(tr);
	uint64_t s0 = c->first + g * tr->micro;
	size_t size = (size_t)tr->micro * tr->T * m->cfg.nembd * sizeof(float);
	int slot = j % (m->nslot > 1 ? m->nslot : 1);
	float loss;

	/* the first stage reads the inputs, the last the targets */
	if ((m->part.first || m->part.last) && fetch(tr, c->src, s0, err,
	    errsize, code) < 0)
		return -1;
	if (in)
		m->be->put(gpt_stage_input(m, slot), in, size);
	loss = gpt_forward_stage(m, slot, tr->inputs, m->part.last ?
	    tr->targets : NULL, c->dloss, c->key, s0);
	if (m->part.last && m->part.tp_rank == 0)
		tr->ctl[g] = loss;
	if (out)
		m->be->get(out, gpt_stage_output(m, slot), size);
	return 0;
}

static int
pipe_backward(void *arg, int j, const float *dout, float *din, char *err,
    size_t errsize, int *code)
{
	struct pipe_ctx *c = arg;
	struct trainer *tr = c->tr;
	struct gpt *m = tr->m;
	size_t size = (size_t)tr->micro * tr->T * m->cfg.nembd * sizeof(float);

	if (dout)
		m->be->put(gpt_stage_grad(m), dout, size);
	gpt_zero_grad(m);
	gpt_backward_stage(m, j % (m->nslot > 1 ? m->nslot : 1));
	gpt_grad_accumulate(m, j, tr->nmicro);
	if (din)
		m->be->get(din, gpt_stage_grad(m), size);
	return 0;
}

int
train_iteration(struct trainer *tr, const struct sample_src *src,
    struct step_result *r, char *err, size_t errsize, int *code)
{
	struct gpt *m = tr->m;
	double scale = tr->st.loss_scale > 0 ? tr->st.loss_scale : 1;
	int d = ndp(tr), me = dp_rank(tr);
	size_t gmicro = (size_t)tr->nmicro * d, i, nchunk = 0;
	float dloss = (float)(scale / ((double)tr->micro * tr->T * gmicro));
	uint64_t first = tr->st.consumed_train;
	uint64_t key = owt_mix64(tr->st.seed);
	uint64_t batch = train_batch(tr);
	double loss = 0, coef = 1, *ctl = tr->ctl;
	int j;

	memset(ctl, 0, tr->nctl * sizeof *ctl);
	if (tr->dist && tr->dist->pp > 1) {
		struct pipe_ctx pc = { tr, src, dloss, key, first };
		struct pipe_stage st = { pipe_forward, pipe_backward, &pc,
		    (size_t)tr->micro * tr->T * m->cfg.nembd };

		if (pipeline_run(tr->pp, tr->nmicro, &st, err, errsize,
		    code) < 0)
			return -1;
	}
	for (j = 0; (!tr->dist || tr->dist->pp == 1) && j < tr->nmicro; j++) {
		/* global micro-batch g: samples first + g * micro, Megatron's order */
		uint64_t g = (uint64_t)j * d + me;

		if (fetch(tr, src, first + g * tr->micro, err, errsize,
		    code) < 0)
			return -1;
		/* dropout masks: a function of the seed and the sample */
		gpt_zero_grad(m);
		ctl[g] = gpt_forward(m, tr->inputs, tr->targets, dloss, key,
		    first + g * tr->micro);
		if (m->part.tp_rank != 0)	/* each replica's loss once */
			ctl[g] = 0;
		gpt_backward(m);
		gpt_grad_accumulate(m, j, tr->nmicro);
	}
	ctl[gmicro] = tr->stop;
	/* both gradients of the tied embedding, summed apart, then tied */
	if (d > 1 && !tr->zero && comm_sum_ordered(tr->dp, m->grads,
	    m->ngrads, "gradients", err, errsize, code) < 0)
		return -1;
	if (tr->zero) {
		if (zero_reduce(tr, err, errsize, code) < 0)
			return -1;
		nchunk = gpt_norm_nparts(m);
		gpt_norm_parts(m, ctl + gmicro + 1);
	} else {
		gpt_grad_tie(m);
	}
	/* the embedding's gradient: the first stage's encoder's + the output layer's */
	if (tr->emb && tr->emb->size > 1 && comm_sum_ordered(tr->emb,
	    m->grads + m->t[GPT_WTE].off, m->t[GPT_WTE].n,
	    "gradients of the embedding", err, errsize, code) < 0)
		return -1;
	/* the norm's parts of one replica (ZeRO: of every shard) */
	if (!tr->zero) {
		nchunk = gpt_norm_nparts(m);
		if (me == 0)
			gpt_norm_parts(m, ctl + gmicro + 1);
	}
	/* losses, the stop flag and the norm's parts: one message */
	if (tr->world && tr->world->size > 1 && comm_ctl_allreduce(tr->world,
	    ctl, gmicro + 1 + nchunk, COMM_SUM, "losses", err, errsize,
	    code) < 0)
		return -1;
	for (i = 0; i < gmicro; i++)
		loss += (float)ctl[i];
	tr->stop = ctl[gmicro];
	r->loss = loss / (double)gmicro;
	r->grad_norm = gpt_norm_sum(ctl + gmicro + 1, nchunk) / scale;
	r->lr = schedule_lr_at(&tr->lr, tr->st.sched_samples);
	r->loss_scale = tr->st.loss_scale;
	r->skipped = 0;
	if (!isfinite(r->loss))
		return 1;
	if (tr->st.loss_scale > 0) {
		r->skipped = !isfinite(r->grad_norm);
		train_scaler_update(&tr->scaler, &tr->st, r->skipped);
		if (r->skipped) {
			tr->st.iteration++;
			tr->st.consumed_train += batch;
			return 0;
		}
	}
	if (!isfinite(r->grad_norm))
		return 1;
	if (tr->clip > 0 && tr->clip / (r->grad_norm + 1e-6) < 1)
		coef = tr->clip / (r->grad_norm + 1e-6);
	if (tr->zero) {
		if (zero_update(tr, (float)r->lr, (float)(coef / scale), err,
		    errsize, code) < 0)
			return -1;
	} else {
		gpt_update(m, &tr->adam, (float)r->lr, (float)(coef / scale));
	}
	tr->st.iteration++;
	tr->st.consumed_train += batch;
	tr->st.sched_samples += batch;
	return 0;
}

int
train_eval(struct trainer *tr, const struct sample_src *src, uint64_t first,
    int iters, double *loss, char *err, size_t errsize, int *code)
{
	struct gpt *m = tr->m;
	int d = ndp(tr), me = dp_rank(tr);
	int pp = tr->dist ? tr->dist->pp : 1;
	int prev = pp > 1 && !m->part.first ? tr->pp->rank - 1 : -1;
	int next = pp > 1 && !m->part.last ? tr->pp->rank + 1 : -1;
	size_t i, n = (size_t)iters * tr->nmicro * d;
	size_t size = (size_t)tr->micro * tr->T * m->cfg.nembd * sizeof(float);
	double sum = 0, *l = xcalloc(n ? n : 1, sizeof *l);
	float *buf = pp > 1 ? xmalloc(size) : NULL, x;
	int r = -1;

	/*
	 * Global micro-batch i on replica i mod DP, as in training; through
	 * a pipeline's stages one after the other.
	 */
	for (i = me; i < n; i += d) {
		if ((pp == 1 || m->part.first || m->part.last) && fetch(tr, src,
		    first + (uint64_t)i * tr->micro, err, errsize, code) < 0)
			goto out;
		if (pp == 1) {
			x = gpt_forward(m, tr->inputs, tr->targets, 0, 0, 0);
			l[i] = m->part.tp_rank == 0 ? x : 0;
			continue;
		}
		if (prev >= 0) {
			if (comm_sendrecv(tr->pp, NULL, 0, -1, buf, size, prev,
			    "activations", err, errsize, code) < 0)
				goto out;
			m->be->put(gpt_stage_input(m, 0), buf, size);
		}
		x = gpt_forward_stage(m, 0, tr->inputs, m->part.last ?
		    tr->targets : NULL, 0, 0, 0);
		if (m->part.last && m->part.tp_rank == 0)
			l[i] = x;
		if (next >= 0) {
			m->be->get(buf, gpt_stage_output(m, 0), size);
			if (comm_sendrecv(tr->pp, buf, size, next, NULL, 0, -1,
			    "activations", err, errsize, code) < 0)
				goto out;
		}
	}
	if (tr->world && tr->world->size > 1 && n > 0 &&
	    comm_ctl_allreduce(tr->world, l, n, COMM_SUM, "validation losses",
	    err, errsize, code) < 0)
		goto out;
	r = 0;
out:
	free(buf);
	if (r < 0) {
		free(l);
		return -1;
	}
	for (i = 0; i < n; i++)
		sum += (float)l[i];
	free(l);
	*loss = n > 0 ? sum / (double)n : 0;
	return 0;
}

int
train_gather_moments(struct trainer *tr, float *hm, float *hv, char *err,
    size_t errsize, int *code)
{
	struct gpt *m = tr->m;
	int d = ndp(tr), me = dp_rank(tr);
	float *z[2] = { tr->zm, tr->zv }, *h[2] = { hm, hv };

	if (!tr->zero) {
		if (me == 0) {
			gpt_get(m, GPT_ADAM_M, hm);
			gpt_get(m, GPT_ADAM_V, hv);
		}
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		size_t a = tr->shard[me], n = tr->shard[me + 1] - a;

		if (me == 0) {
			m->be->get(h[i], z[i], n * sizeof(float));
			for (int q = 1; q < d; q++)
				if (comm_sendrecv(tr->dp, NULL, 0, -1,
				    h[i] + tr->shard[q], (tr->shard[q + 1] -
				    tr->shard[q]) * sizeof(float), q,
				    "optimizer state", err, errsize, code) < 0)
					return -1;
		} else {
			float *host = xmalloc((n ? n : 1) * sizeof *host);
			int rc;

			m->be->get(host, z[i], n * sizeof *host);
			rc = comm_sendrecv(tr->dp, host, n * sizeof *host, 0,
			    NULL, 0, -1, "optimizer state", err, errsize, code);
			free(host);
			if (rc < 0)
				return -1;
		}
	}
	return 0;
}

int
train_ranks_open(struct train_ranks *r, double timeout, char *err,
    size_t errsize, int *code)
{
	memset(r, 0, sizeof *r);
	return comm_init(&r->world, timeout, err, errsize, code);
}

int
train_ranks_layout(struct train_ranks *r, struct trainer *tr, int tp, int pp,
    const struct gpt_config *cfg, int vocab_div, int global, char *err,
    size_t errsize, int *code)
{
	int *ranks, n;

	if (dist_init(&r->dist, r->world->size, r->world->rank, tp, pp, cfg,
	    vocab_div, tr->micro, global, err, errsize, code) < 0)
		return -1;
	/* every rank makes the same comm_group calls, in the same order */
	ranks = xmalloc((size_t)r->world->size * sizeof *ranks);
	n = dist_group(&r->dist, r->world->rank, DIST_DP, ranks);
	n = comm_group(r->world, ranks, n, &r->dp, err, errsize, code);
	if (n == 0) {
		n = dist_group(&r->dist, r->world->rank, DIST_PP, ranks);
		n = comm_group(r->world, ranks, n, &r->pp, err, errsize, code);
	}
	if (n == 0) {
		/* a middle stage has none: a group of itself alone */
		if ((n = dist_group(&r->dist, r->world->rank, DIST_EMB,
		    ranks)) == 0)
			ranks[n++] = r->world->rank;
		n = comm_group(r->world, ranks, n, &r->emb, err, errsize, code);
	}
	if (n == 0) {
		n = dist_group(&r->dist, r->world->rank, DIST_TP, ranks);
		n = comm_group(r->world, ranks, n, &r->tp, err, errsize, code);
	}
	free(ranks);
	if (n < 0)
		return -1;
	tr->dist = &r->dist;
	tr->world = r->world;
	tr->dp = r->dp;
	tr->pp = r->pp;
	tr->emb = r->emb;
	return 0;
}

int
train_ranks_close(struct train_ranks *r, char *err, size_t errsize, int *code)
{
	if (r->dp)
		comm_group_free(r->dp);
	if (r->pp)
		comm_group_free(r->pp);
	if (r->emb)
		comm_group_free(r->emb);
	if (r->tp)
		comm_group_free(r->tp);
	r->dp = r->pp = r->emb = r->tp = NULL;
	if (r->world == NULL)
		return 0;
	return comm_finish(r->world, err, errsize, code);
}

/* The part of the model world rank q holds. */
static void
part_of(const struct dist *d, int q, struct gpt_part *p)
{
	int pp, dp, tp;

	dist_coords(d, q, &pp, &dp, &tp);
	p->l0 = pp * (d->nlayer / d->pp);
	p->l1 = p->l0 + d->nlayer / d->pp;
	p->first = pp == 0;
	p->last = pp == d->pp - 1;
	p->tp = d->tp;
	p->tp_rank = tp;
}

/*
 * Copy rank q's runs (dist_runs) between a whole model's host buffer wb
 * (whole's layout) and q's part pb (part's layout): to the whole from the
 * copy that counts (dist_owner), or from the whole into every copy.
 */
static void
place(const struct dist *d, int q, const struct gpt *whole,
    const struct gpt *part, float *wb, float *pb, int to_whole)
{
	struct dist_run run[DIST_MAXRUN];
	int k, l, nl, n, i;
	size_t row;

	for (k = 0; k < GPT_NPARAM; k++) {
		const struct gpt_tensor *wt = &whole->t[k], *pt = &part->t[k];
		size_t wslice, pslice;

		if (pt->n == 0 || (to_whole && !dist_owner(d, q, k)))
			continue;
		nl = wt->layered ? d->nlayer : 1;
		wslice = wt->n / (size_t)nl;
		pslice = pt->n / (size_t)(wt->layered ? part->nl : 1);
		for (l = 0; l < nl; l++) {
			n = dist_runs(d, q, k, l, run);
			for (i = 0; i < n; i++)
				for (row = 0; row < run[i].rows; row++) {
					float *w = wb + wt->off + (size_t)l *
					    wslice + run[i].global + row *
					    run[i].gstride;
					float *p = pb + pt->off + (wt->layered ?
					    (size_t)(l - part->part.l0) : 0) *
					    pslice + run[i].local + row *
					    run[i].lstride;

					if (to_whole)
						memcpy(w, p, run[i].n * sizeof *w);
					else
						memcpy(p, w, run[i].n * sizeof *w);
				}
		}
	}
}

/* A whole model's layout for d's configuration (no memory). */
static int
whole_layout(const struct trainer *tr, struct gpt *w, char *err,
    size_t errsize, int *code)
{
	struct gpt_config c = tr->m->cfg;

	c.vocab_pad = tr->dist->vocab_pad;
	if (gpt_layout(w, &c, err, errsize) < 0) {
		*code = XSYS;
		return -1;
	}
	return 0;
}

/*
 * A pipeline's checkpoint: replica 0's stages send their parts to world
 * rank 0 (pipeline rank 0), which puts them together.
 */
static int
save_parts(struct trainer *tr, const char *dir, const char *args_json,
    char *err, size_t errsize, int *code)
{
	struct gpt *m = tr->m, whole, pl;
	struct gpt_part p;
	float *h[3] = { 0 }, *w[3] = { 0 };
	int b, q, r = -1;

	if (dp_rank(tr) != 0)
		return 0;
	if (whole_layout(tr, &whole, err, errsize, code) < 0)
		return -1;
	for (b = 0; b < 3; b++) {
		h[b] = xmalloc(m->nparams * sizeof(float));
		gpt_get(m, b == 0 ? GPT_PARAMS : b == 1 ? GPT_ADAM_M :
		    GPT_ADAM_V, h[b]);
	}
	if (tr->world->rank != 0) {
		for (b = 0; b < 3; b++)
			if (comm_sendrecv(tr->world, h[b], m->nparams *
			    sizeof(float), 0, NULL, 0, -1, "checkpoint", err,
			    errsize, code) < 0)
				goto out;
		r = 0;
		goto out;
	}
	for (b = 0; b < 3; b++)
		w[b] = xcalloc(whole.nparams, sizeof(float));
	for (q = 0; q < tr->world->size; q++) {
		int wq = q, qp, qd, qt;

		dist_coords(tr->dist, wq, &qp, &qd, &qt);
		if (qd != 0)
			continue;
		if (q > 0) {
			part_of(tr->dist, wq, &p);
			if (gpt_layout_part(&pl, &whole.cfg, &p, err,
			    errsize) < 0) {
				*code = XSYS;
				goto out;
			}
			for (b = 0; b < 3; b++) {
				h[b] = xrealloc(h[b], pl.nparams * sizeof(float));
				if (comm_sendrecv(tr->world, NULL, 0, -1, h[b],
				    pl.nparams * sizeof(float), q, "checkpoint",
				    err, errsize, code) < 0)
					goto out;
			}
		}
		for (b = 0; b < 3; b++)
			place(tr->dist, wq, &whole, q > 0 ? &pl : m, w[b], h[b],
			    1);
	}
	whole.step = m->step;
	r = ckpt_save_host(dir, &whole, w[0], w[1], w[2], &tr->st, args_json,
	    1, err, errsize, code);
out:
	for (b = 0; b < 3; b++) {
		free(h[b]);
		free(w[b]);
	}
	return r;
}

int
train_save(struct trainer *tr, const char *dir, const char *args_json,
    char *err, size_t errsize, int *code)
{
	struct gpt *m = tr->m;
	float *hm = NULL, *hv = NULL;
	int r = 0, me = dp_rank(tr);

	if (tr->dist && (tr->dist->pp > 1 || tr->dist->tp > 1))
		return save_parts(tr, dir, args_json, err, errsize, code);
	if (me == 0) {
		hm = xmalloc(m->nparams * sizeof *hm);
		hv = xmalloc(m->nparams * sizeof *hv);
	}
	if (train_gather_moments(tr, hm, hv, err, errsize, code) < 0)
		r = -1;
	else if ((tr->dist == NULL || tr->dist->rank == 0) &&
	    ckpt_save_host(dir, m, NULL, hm, hv, &tr->st, args_json, 1, err,
	    errsize, code) < 0)
		r = -1;
	free(hm);
	free(hv);
	return r;
}

int
train_load_part(struct trainer *tr, const char *path, int optim, char *err,
    size_t errsize, int *code)
{
	struct gpt *m = tr->m, whole;
	float *w, *h;
	int b, r = -1;

	if (whole_layout(tr, &whole, err, errsize, code) < 0)
		return -1;
	whole.be = &gpt_cpu;
	whole.params = xcalloc(whole.nparams, sizeof(float));
	whole.m = whole.v = NULL;
	if (ckpt_load_model(path, &whole, err, errsize, code) < 0 ||
	    (optim && ckpt_load_optim(path, &whole, err, errsize, code) < 0))
		goto out;
	h = xcalloc(m->nparams, sizeof *h);
	for (b = 0; b < (optim ? 3 : 1); b++) {
		w = b == 0 ? whole.params : b == 1 ? whole.m : whole.v;
		if (w == NULL)
			continue;
		memset(h, 0, m->nparams * sizeof *h);
		place(tr->dist, tr->dist->rank, &whole, m, w, h, 0);
		gpt_put(m, b == 0 ? GPT_PARAMS : b == 1 ? GPT_ADAM_M :
		    GPT_ADAM_V, h);
	}
	free(h);
	if (optim)
		m->step = whole.step;
	r = 0;
out:
	free(whole.params);
	free(whole.m);
	free(whole.v);
	return r;
}
