/* train.c - training: iterations with accumulation and clipping, the fp16 loss scaler, evaluation */
#include <math.h>
#include <stdlib.h>

#include "train.h"
#include "util.h"

void
train_init(struct trainer *tr)
{
	size_t n = (size_t)tr->micro * tr->T;

	tr->tokens = xmalloc((size_t)tr->micro * (tr->T + 1) * sizeof *tr->tokens);
	tr->inputs = xmalloc(n * sizeof *tr->inputs);
	tr->targets = xmalloc(n * sizeof *tr->targets);
}

void
train_free(struct trainer *tr)
{
	free(tr->tokens);
	free(tr->inputs);
	free(tr->targets);
	tr->tokens = NULL;
	tr->inputs = tr->targets = NULL;
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

int
train_iteration(struct trainer *tr, const struct sample_src *src,
    struct step_result *r, char *err, size_t errsize, int *code)
{
	struct gpt *m = tr->m;
	double scale = tr->st.loss_scale > 0 ? tr->st.loss_scale : 1;
	float dloss = (float)(scale / ((double)tr->micro * tr->T * tr->nmicro));
	uint64_t first = tr->st.consumed_train;
	uint64_t key = owt_mix64(tr->st.seed);
	uint64_t batch = (uint64_t)tr->micro * tr->nmicro;
	double loss = 0, coef = 1;
	int j;

	for (j = 0; j < tr->nmicro; j++) {
		if (fetch(tr, src, first + (uint64_t)j * tr->micro, err,
		    errsize, code) < 0)
			return -1;
		/* dropout masks: a function of the seed and the sample */
		gpt_zero_grad(m);
		loss += gpt_forward(m, tr->inputs, tr->targets, dloss, key,
		    first + (uint64_t)j * tr->micro);
		gpt_backward(m);
		gpt_grad_accumulate(m, j, tr->nmicro);
	}
	gpt_grad_tie(m);
	r->loss = loss / tr->nmicro;
	r->grad_norm = gpt_grad_norm(m) / scale;
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
	gpt_update(m, &tr->adam, (float)r->lr, (float)(coef / scale));
	tr->st.iteration++;
	tr->st.consumed_train += batch;
	tr->st.sched_samples += batch;
	return 0;
}

int
train_eval(struct trainer *tr, const struct sample_src *src, uint64_t first,
    int iters, double *loss, char *err, size_t errsize, int *code)
{
	double sum = 0;
	long i, n = (long)iters * tr->nmicro;

	for (i = 0; i < n; i++) {
		if (fetch(tr, src, first + (uint64_t)i * tr->micro, err,
		    errsize, code) < 0)
			return -1;
		sum += gpt_forward(tr->m, tr->inputs, tr->targets, 0, 0, 0);
	}
	*loss = n > 0 ? sum / n : 0;
	return 0;
}
