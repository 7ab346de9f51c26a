/* train.h - training: iterations with accumulation and clipping, the fp16 loss scaler, evaluation */
#ifndef OWT_TRAIN_H
#define OWT_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "model/ckpt.h"
#include "comm/comm.h"
#include "dist/dist.h"
#include "model/gpt.h"
#include "train/schedule.h"

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

/*
 * Data parallelism: DP ranks each hold the whole model and take their
 * share of every global batch, Megatron's mapping (dist_sample): micro
 * step j of replica dp is global micro-batch j * DP + dp. Every
 * micro-batch's gradients are computed into zeroed buffers and then
 * added, ((g0 + g1) + g2) + ..., on one rank as over the ranks (comm's
 * ordered sum); dropout masks and losses go by the global micro-batch.
 * So DP ranks with one micro-batch each train bit for bit as one process
 * does on the same global batch; with several each, the losses of an
 * iteration are the same and the gradients agree to rounding (the sum
 * associates per rank first).
 *
 * With zero set (--use-distributed-optimizer, ZeRO-1) the gradients are
 * reduce-scattered instead, each rank keeps the AdamW moments of its
 * shard of the flat buffers only (cut at the norm's chunks, so the
 * gradient norm adds the same partial sums as one process), updates its
 * shard, and the parameters are all-gathered: AdamW is elementwise, so
 * this trains bit for bit as plain data parallelism does.
 *
 * Pipeline parallelism (dist's pp > 1): m is this stage's part
 * (gpt_init_part, gpt_set_slots), the micro-batches run through
 * lib/dist/pipeline.c's 1F1B schedule, the tied embedding's gradient is summed
 * over the first and last stage, and losses and the norm's parts over the
 * world: a pipeline trains bit for bit as one process. Tensor
 * parallelism (dist's tp > 1) is inside the model's part (gpt_init_part
 * with the tensor-parallel group): each replica's loss and norm parts are
 * counted once (tensor-parallel rank 0's, gpt_norm_parts); its numbers
 * agree with one process's to rounding. The distributed optimizer is for
 * data parallelism alone.
 */
struct trainer {
	struct gpt *m;
	int micro;		/* sequences per micro-batch */
	int T;			/* sequence length */
	int nmicro;		/* micro-batches per iteration, on this rank */
	const struct dist *dist;	/* the layout; NULL alone */
	struct comm *world;	/* every rank; NULL alone */
	struct comm *dp;	/* the data-parallel group; NULL alone */
	struct comm *pp;	/* the pipeline: this replica's stages */
	struct comm *emb;	/* first and last stage: the tied embedding */
	int zero;		/* shard the optimizer over dp (ZeRO-1) */
	/*
	 * Set by the caller before an iteration on any rank (a signal,
	 * rank 0's clock); after it, the sum over the ranks, the same on
	 * every rank, so that every rank stops at the same iteration.
	 */
	double stop;
	struct schedule lr;
	struct adamw adam;
	float clip;		/* global-norm clipping; 0 for none */
	struct loss_scaler scaler;	/* used when st.loss_scale > 0 */
	struct train_state st;
	uint32_t *tokens;	/* (micro, T+1) */
	int32_t *inputs, *targets;	/* (micro, T) */

	/* private */
	size_t *shard;		/* zero: DP + 1 offsets into the flat buffers */
	float *zm, *zv;		/* zero: the moments of this rank's shard */
	double *ctl;		/* the control all-reduce's values */
	size_t nctl;
};

struct step_result {
	double loss;		/* mean over the iteration's tokens */
	double grad_norm;	/* before clipping */
	double lr;		/* the learning rate this iteration used */
	double loss_scale;	/* the scale this iteration used; 0 when off */
	int skipped;		/* the gradients overflowed: no update (fp16) */
};

/*
 * Allocate the buffers; m must be set up for (micro, T), and dist, dp and
 * zero set (nmicro is then dist's micro). Under zero, moments that m
 * holds (a loaded checkpoint) are moved into the shard and m's freed.
 */
void train_init(struct trainer *tr);
void train_free(struct trainer *tr);

/* The global batch: micro * nmicro * DP samples. */
uint64_t train_batch(const struct trainer *tr);

/*
 * One iteration on the global batch from sample consumed_train: forward
 * and backward per micro-batch, the gradients summed over micro-batches
 * and ranks, clipped, one AdamW step; the state advanced. Every rank
 * gets the same result. Returns 0; 1 when the loss or the gradient
 * is not finite (the weights are not updated, the state not advanced);
 * -1 with err and *code from the source or the ranks (a rank that does
 * not answer: XSYS, after which the world is broken). With loss scaling, gradients
 * that overflow are not an error: the iteration is skipped as Megatron
 * skips it (r->skipped; counted and its samples consumed, no update, the
 * learning-rate schedule not advanced) and 0 is returned.
 */
int train_iteration(struct trainer *tr, const struct sample_src *src,
    struct step_result *r, char *err, size_t errsize, int *code);

/*
 * The mean loss over iters global batches of src from sample first,
 * without dropout, the micro-batches shared out over the ranks as in
 * training and their losses added in global order. 0, or -1 with err
 * and *code.
 */
int train_eval(struct trainer *tr, const struct sample_src *src,
    uint64_t first, int iters, double *loss, char *err, size_t errsize,
    int *code);

/*
 * The ranks of a launched run. train_ranks_open: the world (comm_init;
 * timeout in seconds, --distributed-timeout-minutes), first thing, so
 * that every message can name its rank. train_ranks_layout: the layout
 * (dist_init, from tr->micro and the global batch: its errors are usage
 * errors) and the data-parallel group, set into tr->dist and tr->dp
 * (tr->zero is the caller's). A process alone is a world of one: nothing
 * is loaded and every collective returns at once. 0, or -1 with err and
 * *code.
 */
struct train_ranks {
	struct comm *world, *dp, *pp, *emb, *tp;
	struct dist dist;
};
int train_ranks_open(struct train_ranks *r, double timeout, char *err,
    size_t errsize, int *code);
int train_ranks_layout(struct train_ranks *r, struct trainer *tr, int tp,
    int pp, const struct gpt_config *cfg, int vocab_div, int global,
    char *err, size_t errsize, int *code);
/* The end of a successful run (comm_finish): every rank waits for the others. */
int train_ranks_close(struct train_ranks *r, char *err, size_t errsize,
    int *code);

/*
 * Save tr's model, moments and state under dir (ckpt_save_host), one
 * checkpoint whatever the layout: a collective over the data-parallel
 * group (the distributed optimizer's moments are gathered) or over the
 * first replica's pipeline (the stages' parts put together); world rank
 * 0 writes, the others return once they have sent. 0, or -1 with err
 * and *code.
 */
int train_save(struct trainer *tr, const char *dir, const char *args_json,
    char *err, size_t errsize, int *code);
/*
 * A pipeline stage's part (tr->m, on the cpu backend's memory layout)
 * from the checkpoint directory path, any layout's, and with optim the
 * moments and step: the rank reads the whole files (a shared file
 * system) and keeps its runs. Whole models load with ckpt_load_model
 * and ckpt_load_optim. 0, or -1 with err and *code.
 */
int train_load_part(struct trainer *tr, const char *path, int optim,
    char *err, size_t errsize, int *code);

/*
 * Under zero, the AdamW moments of the whole model into host buffers m
 * and v (nparams floats each) on data-parallel rank 0 (NULL elsewhere), a
 * collective over dp: to save them. Without zero, gpt_get's. 0, or -1
 * with err and *code.
 */
int train_gather_moments(struct trainer *tr, float *m, float *v, char *err,
    size_t errsize, int *code);

#endif
