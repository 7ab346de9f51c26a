/* train_run.h - a training run: the model of a rank, iterations with Megatron's log, evaluations, saves and stops */
#ifndef OWT_TRAIN_RUN_H
#define OWT_TRAIN_RUN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/gpt.h"
#include "train/gpt_data.h"
#include "model/gpt_device.h"
#include "train/train.h"
#include "model/ckpt_tok.h"
#include "tok/tokenizer.h"

/*
 * A run of gpt-train(1). The caller sets the fields above "the run's",
 * opens what they name (the ranks, the device, the data, the JSON log)
 * and calls train_run_model, train_run_describe and train_run_loop in
 * that order. The log goes to standard output, each line "PROG: " or
 * Megatron's iteration and validation lines, unless quiet.
 */
struct train_run {
	struct trainer *tr;		/* set up but m and train_init: train_run_model */
	struct train_ranks *ranks;	/* laid out (train_ranks_layout) */
	struct gpt_device *dev;
	const struct gpt_data *data;	/* src[0] trains, [1] validates, [2] tests */
	uint64_t train_iters;		/* the run ends after iteration train_iters */
	int global;			/* samples an iteration */
	uint64_t log_interval, eval_interval, eval_iters;
	uint64_t save_interval, exit_interval;	/* 0: none */
	double exit_mins;		/* 0: none */
	int clip;			/* gradients are clipped: the log has a norm */
	const char *save;		/* the checkpoint directory, or NULL */
	int replace;			/* remove save's checkpoints first (--force) */
	const char *args_json;		/* trainer_state.json's "args" */
	int quiet;			/* no log */
	int memory;			/* the memory line after the first iteration */
	const char *prog;		/* the log lines' prefix */
	FILE *json;			/* the log as JSON lines, or NULL */
	const char *json_name;
	const volatile sig_atomic_t *signal;	/* a signal caught: stop */

	/* the run's */
	uint64_t saved_iter;		/* the iteration saved last; UINT64_MAX: none */
	int sigpipe;			/* after -1: standard output's reader went away */
};

/*
 * The tokenizer tk names (tokenizer.h), loaded: *ntok its tokens, which
 * *vocab becomes; with given (--vocab-size) *vocab must equal them. An
 * EOD id must be there. ct: what a checkpoint keeps of it (ckpt_tok.h).
 * 0, or -1 with err and *code (XDATA; XUSAGE for options that do not go
 * together).
 */
int train_run_vocab(const struct tokenizer_opts *tk, int *vocab, int given,
    uint32_t *ntok, struct ckpt_tok *ct, char *err, size_t errsize,
    int *code);

/*
 * This rank's model m on r->dev's backend: the whole model, or its part
 * when r's layout has pipeline stages or tensor-parallel ranks
 * (cfg->vocab_pad becomes the layout's), with rc's recomputation, for
 * micro-batches of r->tr's micro x T. Its weights are the checkpoint
 * path's (NULL: initialised from seed and init_std), with optim its
 * AdamW moments too. Then the trainer, its other fields set (train_init):
 * in fp16 the loss scale goes on from the checkpoint's state or starts
 * at initial_scale; other precisions have none. 0, or -1 with err and
 * *code (XUSAGE: a model the backend cannot hold).
 */
int train_run_model(struct train_run *r, struct gpt *m, struct gpt_config *cfg,
    const struct gpt_recompute *rc, const char *path, int optim,
    uint64_t seed, double init_std, double initial_scale, char *err,
    size_t errsize, int *code);

/*
 * The log's opening lines: the model (cfg), the activations, the device
 * (workers threads), the ranks, the note that overlap_grad has no effect
 * yet, the data, the iteration resumed. 0, or -1 with err and *code.
 */
int train_run_describe(struct train_run *r, const struct gpt_config *cfg,
    int workers, int overlap_grad, char *err, size_t errsize, int *code);

/*
 * Train from r->tr's iteration to train_iters as Megatron does: the log
 * every log_interval iterations (and at the end or a stop), the
 * validation loss every eval_interval, a save every save_interval; then
 * the validation, the save and the test loss. A signal, exit_mins or
 * exit_interval stops the run on every rank at the same iteration, saved,
 * without the end's evaluations. 0, or -1 with err and *code (XDATA: a
 * loss or gradient norm that is not finite; r->sigpipe: the log's reader
 * went away).
 */
int train_run_loop(struct train_run *r, char *err, size_t errsize, int *code);

#endif
