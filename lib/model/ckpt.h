/* ckpt.h - checkpoints: Hugging Face GPT-2 safetensors and config.json, optimizer and trainer state, atomic saves */
#ifndef OWT_CKPT_H
#define OWT_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "model/gpt.h"
#include "model/safetensors.h"

/*
 * A checkpoint directory (Megatron's layout, Hugging Face's files):
 *	SAVE/latest_checkpointed_iteration.txt	"500", no newline
 *	SAVE/iter_0000500/model.safetensors	the weights, HF GPT-2 names and layouts
 *	SAVE/iter_0000500/config.json		HF GPT2Config keys
 *	SAVE/iter_0000500/optimizer.safetensors	"exp_avg.NAME", "exp_avg_sq.NAME"
 *	SAVE/iter_0000500/trainer_state.json	struct train_state and the run's arguments
 * Errors are returned as "PATH: what is wrong" with *code XDATA or XSYS.
 */

/*
 * The tensors of a flat buffer (gpt_get) as a checkpoint holds them: HF
 * names after pre ("", "exp_avg.", ...) and "transformer.", the embedding
 * cut to the real vocabulary. Free the array; data points into buf.
 */
struct safetensors_out *ckpt_tensors(const struct gpt *m, const float *buf,
    const char *pre, size_t *n);

/* The largest global batch, gpt-train's --global-batch-size. */
#define CKPT_MAX_BATCH (1 << 24)

/* The trainer's position, saved with the weights. */
struct train_state {
	uint64_t iteration;		/* iterations done */
	uint64_t consumed_train;	/* training samples consumed */
	uint64_t consumed_valid;	/* validation samples consumed */
	uint64_t sched_samples;		/* the learning-rate schedule's position, in samples */
	uint64_t seed;			/* dropout masks and data order derive from it */
	/* fp16's dynamic loss scaler (train.h); loss_scale 0 when off */
	double loss_scale;
	uint64_t ls_growth;		/* clean iterations since the scale last grew */
	uint64_t ls_hyst;		/* overflows left before the scale backs off */
};

/*
 * The HF config.json of a model, and the configuration read back from
 * one (n_layer, n_head, n_embd, n_positions or n_ctx, vocab_size,
 * layer_norm_epsilon; GELU must be the tanh form, n_inner 4 * n_embd).
 * vocab_pad and dropout are left as they are. With a run's tokenizer
 * (ckpt_tok_set), its BOS, EOS and "owt_tokenizer" (ckpt_tok.h), and a
 * checkpoint saved holds its files.
 */
char *ckpt_config_json(const struct gpt_config *c);
int ckpt_read_config(const char *path, struct gpt_config *c, char *err,
    size_t errsize, int *code);

/*
 * Save iteration st->iteration under dir (created if need be): the files
 * go into a temporary directory beside iter_N, which outfile_commit
 * renames into place (replacing an older save of the same iteration
 * whole), then latest_checkpointed_iteration.txt is published the same
 * way. Temporaries of killed saves are swept first. Modes follow the
 * umask (outfile.h). args_json (a JSON object, or NULL) is kept in
 * trainer_state.json as "args". With with_optim the AdamW moments are
 * saved too. 0, or -1 with err and *code.
 */
int ckpt_save(const char *dir, struct gpt *m, const struct train_state *st,
    const char *args_json, int with_optim, char *err, size_t errsize,
    int *code);
/*
 * The same from host buffers (nparams floats each, as gpt_get lays them
 * out), each NULL for m's own: the weights and moments of a model spread
 * over ranks, gathered (train_save), m then a whole model's layout
 * (gpt_layout) with its step. The files do not depend on how the run was
 * laid out over ranks.
 */
int ckpt_save_host(const char *dir, struct gpt *m, const float *params,
    const float *mm, const float *mv, const struct train_state *st,
    const char *args_json, int with_optim, char *err, size_t errsize,
    int *code);

/* What a --load directory holds (ckpt_resolve). */
enum {
	CKPT_NONE,	/* nothing: no such directory, or neither file below */
	CKPT_RUN,	/* a run's iteration: the iter_N that
			   latest_checkpointed_iteration.txt names, or an
			   iter_N directory itself (gpt-train's trainer_state.json) */
	CKPT_WEIGHTS	/* weights alone: a Hugging Face directory
			   (model.safetensors, config.json), Megatron's release */
};

/*
 * Where to load from, in path, and what it is, in *kind. 0: a checkpoint,
 * or CKPT_NONE with err saying why there is none ("DIR: no such checkpoint
 * directory"); -1 with err and *code for a bad latest file, a missing
 * iter_N, a directory in another format (a PyTorch pickle, a Megatron-LM
 * or TensorFlow checkpoint) or a system error.
 */
int ckpt_resolve(const char *dir, char *path, size_t size, int *kind,
    char *err, size_t errsize, int *code);

/* The files of a checkpoint directory, as bits. */
enum {
	CKPT_F_MODEL = 1,	/* model.safetensors */
	CKPT_F_CONFIG = 2,	/* config.json */
	CKPT_F_STATE = 4,	/* trainer_state.json */
	CKPT_F_OPTIM = 8	/* optimizer.safetensors */
};
/*
 * The CKPT_F_* bits of the files path holds, or -1 with err "PATH:
 * incomplete checkpoint: no FILE, ..." (XDATA) when one of need (the
 * model and config.json always) is missing.
 */
int ckpt_complete(const char *path, int need, char *err, size_t errsize,
    int *code);

/*
 * The checkpoints in a save directory (latest_checkpointed_iteration.txt,
 * iter_N, release): how many, and their names in list ("iter_0000020,
 * iter_0000040"; past four, "and N more"). 0 when there is none or no
 * directory.
 */
int ckpt_existing(const char *dir, char *list, size_t size);
/* Remove them, the latest file first. 0, or -1 with err and *code. */
int ckpt_remove_run(const char *dir, char *err, size_t errsize, int *code);

/*
 * Check model.safetensors in path against configuration c (config.json's)
 * before a model is allocated: every tensor there with c's shape, none of
 * a layer beyond c's. 0, or -1 with err naming the file (XDATA).
 */
int ckpt_check_model(const char *path, const struct gpt_config *c, char *err,
    size_t errsize, int *code);
/*
 * Read model.safetensors in path into m, whose configuration must match:
 * names with or without "transformer.", attention mask buffers and a tied
 * lm_head.weight ignored, every shape checked before anything is read.
 */
int ckpt_load_model(const char *path, struct gpt *m, char *err, size_t errsize,
    int *code);
/*
 * The AdamW moments and step; 1 when there is no optimizer.safetensors.
 * Both moments are checked before either is read.
 */
int ckpt_load_optim(const char *path, struct gpt *m, char *err,
    size_t errsize, int *code);
/*
 * trainer_state.json: 1 when absent, else 0 with *st filled and *doc the
 * parsed file (json_doc_free it), whose "args" member holds the arguments.
 * An iteration that contradicts path's name (iter_0000500), or samples
 * consumed that no iterations of 1 to CKPT_MAX_BATCH samples make, are
 * XDATA: resuming from them would skip iterations or data.
 */
int ckpt_load_state(const char *path, struct train_state *st,
    struct json_val **doc, char *err, size_t errsize, int *code);

#endif
