/* schedule.c - a run's length and learning-rate schedule: Megatron's OptimizerParamScheduler, in samples */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/opt.h"
#include "train/schedule.h"
#include "core/util.h"

double
schedule_lr_at(const struct schedule *s, uint64_t samples)
{
	double ratio, coeff, w, n, x = (double)samples;

	if (s->warmup > 0 && x <= s->warmup)
		return s->max_lr * x / s->warmup;
	switch (s->style) {
	case SCHEDULE_CONSTANT:
		return s->max_lr;
	case SCHEDULE_INVSQRT:
		w = s->warmup > 1 ? s->warmup : 1;
		n = samples > 0 ? x : 1;
		return fmax(s->min_lr, s->max_lr * sqrt(w) / sqrt(n));
	}
	if (samples > s->decay)
		return s->min_lr;
	ratio = (x - s->warmup) / ((double)s->decay - s->warmup);
	coeff = s->style == SCHEDULE_COSINE ? 0.5 * (cos(M_PI * ratio) + 1) :
	    1 - ratio;
	return s->min_lr + coeff * (s->max_lr - s->min_lr);
}

unsigned
schedule_given(const struct opt_prog *p, const char *given)
{
	static const struct { const char *name; unsigned bit; } bits[] = {
		{ "lr-warmup-fraction", SCHEDULE_G_WARMUP_FRACTION },
		{ "lr-warmup-iters", SCHEDULE_G_WARMUP_ITERS },
		{ "lr-warmup-samples", SCHEDULE_G_WARMUP_SAMPLES },
		{ "lr-decay-iters", SCHEDULE_G_DECAY_ITERS },
		{ "lr-decay-samples", SCHEDULE_G_DECAY_SAMPLES },
		{ "min-lr", SCHEDULE_G_MIN_LR },
	};
	unsigned g = 0;
	size_t i;
	int k;

	for (i = 0; i < sizeof bits / sizeof *bits; i++)
		if ((k = opt_find(p, bits[i].name)) >= 0 && given[k])
			g |= bits[i].bit;
	return g;
}

int
schedule_style(const char *name)
{
	static const char *const names[] = { "constant", "linear", "cosine",
	    "inverse-square-root" };
	int i;

	for (i = 0; i < 4; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

int
schedule_resolve(const struct schedule_opts *o, struct schedule_run *r,
    char *err, size_t errsize, int *code)
{
	struct schedule *s = &r->lr;
	uint64_t G;

	memset(r, 0, sizeof *r);
	if (o->train_iters == 0 && o->train_samples == 0)
		return owt_fail(err, errsize, code, XUSAGE,
		    "one of --train-iters and --train-samples is required");
	r->global = o->global > 0 ? o->global : o->micro;
	if (o->micro <= 0 || r->global % o->micro != 0)
		return owt_fail(err, errsize, code, XUSAGE,
		    "--global-batch-size %d is not a multiple of "
		    "--micro-batch-size %d", r->global, o->micro);
	G = (uint64_t)r->global;
	r->train_samples = o->train_samples ? o->train_samples :
	    o->train_iters * G;
	r->train_iters = o->train_iters ? o->train_iters :
	    o->train_samples / G;
	if ((s->style = schedule_style(o->style)) < 0)
		return owt_fail(err, errsize, code, XUSAGE, "--lr-decay-style: "
		    "'%s' is not constant, linear, cosine or "
		    "inverse-square-root", o->style);
	s->max_lr = o->lr;
	s->min_lr = o->min_lr;
	s->decay = o->given & SCHEDULE_G_DECAY_SAMPLES ? o->decay_samples :
	    o->given & SCHEDULE_G_DECAY_ITERS ? o->decay_iters * G :
	    r->train_iters * G;
	s->warmup = o->given & SCHEDULE_G_WARMUP_SAMPLES ? o->warmup_samples :
	    o->given & SCHEDULE_G_WARMUP_ITERS ? (double)(o->warmup_iters * G) :
	    o->given & SCHEDULE_G_WARMUP_FRACTION ?
	    o->warmup_fraction * (double)s->decay : 0;
	if (o->min_lr > o->lr)
		return owt_fail(err, errsize, code, XUSAGE,
		    "--min-lr %g%s is above --lr %g", o->min_lr,
		    o->given & SCHEDULE_G_MIN_LR ? "" : " (the default)",
		    o->lr);
	if (s->warmup >= (double)s->decay && s->style != SCHEDULE_CONSTANT &&
	    s->style != SCHEDULE_INVSQRT)
		return owt_fail(err, errsize, code, XUSAGE, "the warmup (%.*f "
		    "samples) must be shorter than the decay (%" PRIu64
		    " samples)", s->warmup == floor(s->warmup) ? 0 : 3,
		    s->warmup, s->decay);
	return 0;
}
