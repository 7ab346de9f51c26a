/* ckpt_args.h - a run's options against a checkpoint: --load's rules, config.json's shape, trainer_state.json's "args" */
#ifndef OWT_CKPT_ARGS_H
#define OWT_CKPT_ARGS_H

#include <stddef.h>

#include "model/ckpt.h"
#include "model/gpt.h"
#include "core/opt.h"

/*
 * What a checkpoint does to an option (struct opt's tag): nothing; keeps
 * it in trainer_state.json's "args", whence a resumed run takes it when
 * it is not given; the same, and a value given that differs from the
 * checkpoint's is an error (the learning-rate schedule, as in Megatron);
 * or config.json sets it (the model's shape: n_layer, n_embd, n_head,
 * n_positions, vocab_size), and a value given must equal it.
 *
 * Some options set one quantity between them: the warmup and the decay
 * are kept in samples (lr-warmup-samples, lr-decay-samples) and set in
 * samples, iterations or a fraction; the run's length is train-iters or
 * train-samples. Any of a group given counts as the kept option given.
 */
enum { CKPT_ARGS_NONE, CKPT_ARGS_KEEP, CKPT_ARGS_SCHED, CKPT_ARGS_MODEL };

/* How a resumed run treats a schedule option given that differs. */
enum {
	CKPT_ARGS_CHECK,	/* an error (Megatron's default) */
	CKPT_ARGS_OVERRIDE,	/* the option wins (--override-lr-scheduler) */
	CKPT_ARGS_USE_CKPT	/* the checkpoint wins (--use-checkpoint-lr-scheduler) */
};

struct json_val;

/* What --load found. */
struct ckpt_args_load {
	int kind;		/* CKPT_NONE, CKPT_RUN or CKPT_WEIGHTS */
	int resume;		/* a run's iteration, resumed (not --finetune) */
	int have;		/* the CKPT_F_* files there */
	char path[4096];	/* the checkpoint directory */
	struct gpt_config cfg;	/* its config.json */
	struct train_state st;	/* resume: its trainer_state.json */
	struct json_val *state;	/* resume: the parsed file */
	char warn[4400];	/* a warning for the log, or "" */
};

/*
 * The checkpoint a program opens with --load dir, gpt-train's and
 * gpt-sample's: where it is (l->kind, l->path; none there is CKPT_NONE,
 * 0 with err saying why), complete (the model and config.json, and for
 * a run's iteration the CKPT_F_* files of run_need; l->have), config.json
 * read into l->cfg and checked against the weights' header, then against
 * the options of p (ckpt_args_config). l is cleared first. 0, or -1 with
 * err and *code.
 */
int ckpt_args_open(struct ckpt_args_load *l, const struct opt_prog *p,
    const char *given, const char *dir, int run_need, char *err,
    size_t errsize, int *code);

/*
 * --load dir by the table of gpt-train(1): nothing there starts from
 * scratch (a warning; with finetune an error); a Megatron torch
 * checkpoint (dir ends in ".pt") that is missing does too, one that is
 * there is an error naming contrib/install/megatron-to-owt; a run's iteration resumes,
 * and must be complete (its optimizer may be missing with no_load_optim:
 * a warning); weights alone, or finetune, give the weights and config
 * only. The model's shape is read from config.json and checked against
 * the weights' header and the options (ckpt_args_config). On resuming,
 * the options of p not given (given[], indexed as p's table) take the
 * checkpoint's "args" and are marked given, seed from trainer_state.json
 * included; with CKPT_ARGS_USE_CKPT, the schedule's options also when
 * given. 0, or -1 with err and *code. Free with ckpt_args_free, after
 * the last use of the options: their strings may be the checkpoint's.
 */
int ckpt_args_load(struct ckpt_args_load *l, const struct opt_prog *p,
    char *given, const char *dir, int finetune, int no_load_optim,
    int sched, char *err, size_t errsize, int *code);
void ckpt_args_free(struct ckpt_args_load *l);

/*
 * The resumed run's side of ckpt_args_load: the options of p not given
 * take the values of l->state's "args" (and become given), seed that of
 * l->st; with CKPT_ARGS_USE_CKPT the schedule's options given do too. An
 * option a checkpoint saved before it existed takes its meaning then
 * (split-rounding: core). 0, or -1 with err and *code XDATA ("PATH/
 * trainer_state.json: bad value of 'NAME'").
 */
int ckpt_args_merge(struct ckpt_args_load *l, const struct opt_prog *p,
    char *given, int sched, char *err, size_t errsize, int *code);

/*
 * The CKPT_ARGS_MODEL options against config.json's c, read from path:
 * one given with another value is an error ("PATH/config.json: n_layer
 * is 2, but --num-layers is 3", XDATA); the others take c's values. 0 or
 * -1 with err and *code.
 */
int ckpt_args_config(const struct opt_prog *p, const char *given,
    const char *path, const struct gpt_config *c, char *err,
    size_t errsize, int *code);

/*
 * --save dir against what --load found: a run that does not resume
 * would mix its saves with another's, so checkpoints in dir are an error
 * (XDATA) that names them, or with force *replace is set (the run
 * removes them before its first save). 0 or -1 with err and *code.
 */
int ckpt_args_save(const struct ckpt_args_load *l, const char *dir,
    int force, int *replace, char *err, size_t errsize, int *code);

/*
 * After the options are resolved, a resumed run's schedule options given
 * against the checkpoint's: with CKPT_ARGS_CHECK, one that differs is an
 * error (XDATA) that names it. 0 or -1 with err and *code.
 */
int ckpt_args_check(const struct ckpt_args_load *l, const struct opt_prog *p,
    const char *given, int sched, char *err, size_t errsize, int *code);

/*
 * The CKPT_ARGS_KEEP and CKPT_ARGS_SCHED options of p as the JSON object
 * trainer_state.json keeps ("args"), one member a line; an integer
 * option at 0 that is not of the schedule (unset) is left out. Free it.
 */
char *ckpt_args_json(const struct opt_prog *p);

#endif
