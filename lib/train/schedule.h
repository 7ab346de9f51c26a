/* schedule.h - a run's length and learning-rate schedule: Megatron's OptimizerParamScheduler, in samples */
#ifndef OWT_SCHEDULE_H
#define OWT_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Megatron's OptimizerParamScheduler, counted in samples: linear warmup
 * from 0 to max_lr over warmup samples, then decay to min_lr at decay
 * samples, min_lr after. The first iteration runs at lr(0), which is 0
 * when there is warmup, as in Megatron. The warmup need not be whole
 * samples: Megatron keeps lr_warmup_fraction x decay as a float.
 */
enum { SCHEDULE_CONSTANT, SCHEDULE_LINEAR, SCHEDULE_COSINE, SCHEDULE_INVSQRT };
struct schedule {
	int style;
	double max_lr, min_lr;
	double warmup;		/* samples; 0: none */
	uint64_t decay;		/* samples; more than warmup */
};
double schedule_lr_at(const struct schedule *s, uint64_t samples);

/* SCHEDULE_* of a --lr-decay-style name, or -1. */
int schedule_style(const char *name);

/*
 * The options that set a run's length and schedule, Megatron's, and
 * which of them were given (on the command line or by a checkpoint):
 * bits of given. Not given, the warmup is none and the decay ends with
 * the training.
 */
enum {
	SCHEDULE_G_WARMUP_FRACTION = 1, SCHEDULE_G_WARMUP_ITERS = 2,
	SCHEDULE_G_WARMUP_SAMPLES = 4, SCHEDULE_G_DECAY_ITERS = 8,
	SCHEDULE_G_DECAY_SAMPLES = 16, SCHEDULE_G_MIN_LR = 32
};
struct schedule_opts {
	uint64_t train_iters, train_samples;	/* train_samples rules; 0: unset */
	int micro, global;		/* global 0: the micro-batch */
	double lr, min_lr;
	const char *style;		/* a name schedule_style knows */
	double warmup_fraction;
	uint64_t warmup_iters;
	double warmup_samples;
	uint64_t decay_iters, decay_samples;
	unsigned given;			/* SCHEDULE_G_* */
};

/*
 * The SCHEDULE_G_* bits of p's options given (given[] indexed as p's
 * table; --lr-warmup-fraction ... --min-lr, Megatron's names).
 */
struct opt_prog;
unsigned schedule_given(const struct opt_prog *p, const char *given);

/* A resolved run: its length, batch and schedule. */
struct schedule_run {
	uint64_t train_iters;		/* iterations to train */
	uint64_t train_samples;		/* samples to train */
	int global;			/* samples per iteration */
	struct schedule lr;
};

/*
 * Resolve o as Megatron does: the run is train_samples, else train_iters
 * global batches; the decay ends at decay_samples, decay_iters global
 * batches, or the end of the run; the warmup is warmup_samples,
 * warmup_iters global batches, or warmup_fraction of the decay, by the
 * first of them given. 0, or -1 with err and *code XUSAGE: no length,
 * a global batch that is not a multiple of the micro-batch, an unknown
 * style, min_lr above lr, a warmup not shorter than a decay.
 */
int schedule_resolve(const struct schedule_opts *o, struct schedule_run *r,
    char *err, size_t errsize, int *code);

#endif
