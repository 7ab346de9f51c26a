/* train_prep.h - gpt-train's options and the prelude its run and --dry-run share */
#ifndef OWT_TRAIN_PREP_H
#define OWT_TRAIN_PREP_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/opt.h"
#include "model/gpt.h"
#include "train/ckpt_args.h"
#include "train/gpt_data.h"
#include "train/schedule.h"
#include "train/train.h"
#include "model/ckpt_tok.h"
#include "tok/tokenizer.h"
#include "train/train_run.h"

/* gpt-train(1)'s options, as its table sets them. */
struct train_opts {
	int layers, hidden, heads, seq, maxpos, vocab, vocab_div;
	double init_std, hidden_dropout, attn_dropout;
	int micro, global;
	uint64_t train_iters, train_samples;
	double lr, min_lr, warmup_fraction, warmup_samples;
	const char *decay_style;
	uint64_t warmup_iters, decay_iters, decay_samples;
	double wd, clip, beta1, beta2, eps, exit_mins;
	double initial_scale, min_scale;
	uint64_t scale_window, hysteresis;
	const char *split, *split_rounding, *device, *save, *load, *log_json;
	struct tokenizer_opts tk;	/* --tokenizer-type ..., --vocab-file ... */
	uint64_t seed, save_interval, eval_interval, eval_iters, log_interval,
	    exit_interval;
	int mock, finetune, force, no_load_optim, override_sched, use_ckpt_sched;
	int quiet, workers;
	int prec;		/* GPT_FP16 ...: --fp16, --bf16, --fp32 */
	int tp, pp, dist_opt, overlap_grad;
	double dist_timeout;
	const char *ddp_impl, *dist_backend;	/* notes, kept */
	int ckpt_act, recompute_act, recompute_n;
	const char *recompute_gran, *recompute_method;
	int dry_run, world_size, ranks_per_node;
	struct opt_list data_paths;	/* --data-path's words, then the operands */
};

/* What the prelude found: the checkpoint's, the recomputation's. */
struct train_prep {
	struct ckpt_args_load ld;	/* free with ckpt_args_free */
	struct gpt_recompute rc;
	int sched;		/* CKPT_ARGS_OVERRIDE, _USE_CKPT or _CHECK */
	uint32_t ntok;		/* the tokenizer's, or 0 without one */
	struct ckpt_tok tok;	/* the run's tokenizer, its checkpoints' (ntok > 0) */
	int replace;		/* --save's checkpoints go first (--force) */
};

/*
 * The checks a run and --dry-run share, in this order: the
 * recomputation's options; the run's tokenizer (train_run_vocab);
 * --load by gpt-train(1)'s table (ckpt_args_load; --dry-run overrides
 * the schedule), its warning on stderr, and its tokenizer (one that is
 * not the options' exits 2; without tokenizer options the run keeps the
 * checkpoint's, ckpt_tok.h); the run's --save
 * (ckpt_args_save); --seq-length within the positions. o's options
 * (given[], indexed as p's table) take the checkpoint's values. 0, or
 * -1 with err and *code; pr->ld is to be freed either way.
 */
int train_prep(struct train_prep *pr, struct train_opts *o,
    const struct opt_prog *p, char *given, int dry_run, char *err,
    size_t errsize, int *code);

/* The model's shape from o (vocab_pad: --make-vocab-size-divisible-by's). */
void train_prep_shape(const struct train_opts *o, struct gpt_config *c);

/*
 * o's run length and schedule resolved into *run (schedule_resolve), and
 * what the checkpoint keeps written back to o. 0, or -1 with err and *code.
 */
int train_prep_schedule(struct train_opts *o, const struct opt_prog *p,
    const char *given, struct schedule_run *run, char *err, size_t errsize,
    int *code);

/* --workers, or the node's processors shared by its local_size ranks. */
int train_prep_workers(int workers, int local_size);

/*
 * The run's model config and trainer from o, the prelude's checkpoint
 * and run's schedule: cfg the options' shape on the checkpoint's (or
 * GPT-2's LayerNorm epsilon), the dropouts; tr's batch, optimizer,
 * clipping, loss scaler and state (the checkpoint's when resumed, the
 * seed o's). Before train_ranks_layout.
 */
void train_prep_trainer(struct trainer *tr, struct gpt_config *cfg,
    const struct train_opts *o, const struct train_prep *pr,
    const struct schedule_run *run);

/*
 * r's fields that o and the prelude give (its length, intervals, stops,
 * saves, log); the caller sets the pointers and memory.
 */
void train_prep_run(struct train_run *r, const struct train_opts *o,
    const struct train_prep *pr);

/*
 * The run's data: o's --data-path (or --mock-data), split, the samples
 * run trains and o's evaluations read (gpt_data_open). 0, or -1 with err
 * and *code.
 */
int train_prep_data(struct gpt_data *d, const struct train_opts *o,
    const struct schedule_run *run, char *err, size_t errsize, int *code);

/*
 * --dry-run: the launcher's world, the prelude, then lib/dist/gpt_plan.h's
 * figures for o's run appended to out; no data, devices or MPI. 0, or -1
 * with err and *code.
 */
int train_prep_dry_run(struct train_opts *o, const struct opt_prog *p,
    char *given, struct buf *out, char *err, size_t errsize, int *code);

#endif
