/* train.h - training: iterations with accumulation and clipping, the fp16 loss scaler, evaluation */
#ifndef OWT_TRAIN_H
#define OWT_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"
#include "gpt.h"
#include "schedule.h"

/*
 * Where samples come from: sample i (counted from 0 in consumption order)
 * is T+1 token ids. get returns 0, or -1 with err (a bad or unreadable
 * dataset) and *code XDATA or XSYS.
 */
struct sample_src {
	int (*get)(void *arg, uint64_t i, uint32_t *tokens, char *err,
	    size_t errsize, int *code);
	void *arg;
};

/*
 * Megatron's DynamicGradScaler, for fp16: the loss gradient is multiplied
 * by the scale; an iteration whose gradients overflow is skipped, and
 * after `hysteresis` overflows (counted since the scale last grew) the
 * scale halves, never below min; after `window` clean iterations in a
 * row it doubles and the hysteresis count is restored. Megatron's fp16
 * defaults: 2^32, min 1, window 1000, hysteresis 2. The state lives in
 * struct train_state so that a checkpoint resumes it.
 */
struct loss_scaler {
	double min;
	uint64_t window, hysteresis;
};
/* Start scaling: st->loss_scale = initial and the counters reset. */
void train_scaler_start(const struct loss_scaler *s, struct train_state *st,
    double initial);
/* After an iteration, overflowed or not. */
void train_scaler_update(const struct loss_scaler *s, struct train_state *st,
    int overflow);

struct trainer {
	struct gpt *m;
	int micro;		/* sequences per micro-batch */
	int T;			/* sequence length */
	int nmicro;		/* micro-batches per iteration */
	struct schedule lr;
	struct adamw adam;
	float clip;		/* global-norm clipping; 0 for none */
	struct loss_scaler scaler;	/* used when st.loss_scale > 0 */
	struct train_state st;
	uint32_t *tokens;	/* (micro, T+1) */
	int32_t *inputs, *targets;	/* (micro, T) */
};

struct step_result {
	double loss;		/* mean over the iteration's tokens */
	double grad_norm;	/* before clipping */
	double lr;		/* the learning rate this iteration used */
	double loss_scale;	/* the scale this iteration used; 0 when off */
	int skipped;		/* the gradients overflowed: no update (fp16) */
};

/* Allocate the buffers; m must be set up for (micro, T). */
void train_init(struct trainer *tr);
void train_free(struct trainer *tr);

/*
 * One iteration on samples consumed_train .. + micro * nmicro: forward and
 * backward per micro-batch, the gradients averaged, clipped, one AdamW
 * step; the state advanced. Returns 0; 1 when the loss or the gradient
 * is not finite (the weights are not updated, the state not advanced);
 * -1 with err and *code from the source. With loss scaling, gradients
 * that overflow are not an error: the iteration is skipped as Megatron
 * skips it (r->skipped; counted and its samples consumed, no update, the
 * learning-rate schedule not advanced) and 0 is returned.
 */
int train_iteration(struct trainer *tr, const struct sample_src *src,
    struct step_result *r, char *err, size_t errsize, int *code);

/*
 * The mean loss over iters batches of micro * nmicro samples of src from
 * sample first, without dropout. 0, or -1 with err and *code.
 */
int train_eval(struct trainer *tr, const struct sample_src *src,
    uint64_t first, int iters, double *loss, char *err, size_t errsize,
    int *code);

#endif
