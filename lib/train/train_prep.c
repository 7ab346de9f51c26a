/* train_prep.c - gpt-train's options and the prelude its run and --dry-run share */
#include <stdlib.h>

#include "comm/comm.h"
#include "dist/gpt_plan.h"
#include "train/train_prep.h"
#include "train/train_run.h"
#include "core/util.h"

/*
 * --load's tokenizer against the options': another is refused; none
 * given, the run keeps the checkpoint's.
 */
static int
train_prep_tok(struct train_prep *pr, char *err, size_t errsize, int *code)
{
	struct ckpt_tok saved;
	int k;

	if ((k = ckpt_tok_read(&saved, pr->ld.path, err, errsize, code)) <= 0)
		return k;
	if (pr->tok.type[0]) {
		k = ckpt_tok_check(&pr->tok, &saved, pr->ld.path, err, errsize,
		    code);
		ckpt_tok_free(&saved);
		return k;
	}
	pr->tok = saved;
	return 0;
}

int
train_prep(struct train_prep *pr, struct train_opts *o,
    const struct opt_prog *p, char *given, int dry_run, char *err,
    size_t errsize, int *code)
{
	struct ckpt_args_load *ld = &pr->ld;

	if (gpt_recompute_parse(&pr->rc, o->ckpt_act, o->recompute_act,
	    o->recompute_gran, o->recompute_method, o->recompute_n, err,
	    errsize) < 0)
	{
		*code = XUSAGE;
		return -1;
	}
	/* A tokenizer named: the built-in GPT-2 alone is kept as before. */
	if (!dry_run && (o->tk.type || o->tk.vocab || o->tk.model ||
	    o->tk.pattern) && train_run_vocab(&o->tk, &o->vocab,
	    given[opt_find(p, "vocab-size")], &pr->ntok, &pr->tok, err,
	    errsize, code) < 0)
		return -1;

	/* A checkpoint supplies what the options do not (gpt-train(1)'s table). */
	pr->sched = dry_run || o->override_sched ? CKPT_ARGS_OVERRIDE :
	    o->use_ckpt_sched ? CKPT_ARGS_USE_CKPT : CKPT_ARGS_CHECK;
	if (o->load && ckpt_args_load(ld, p, given, o->load, o->finetune,
	    o->no_load_optim, pr->sched, err, errsize, code) < 0)
		return -1;
	if (ld->warn[0] != '\0')
		owt_warn("%s", ld->warn);
	if (ld->kind != CKPT_NONE && (uint32_t)ld->cfg.vocab < pr->ntok)
		return owt_fail(err, errsize, code, XDATA, "%s/config.json: "
		    "vocab_size %d is smaller than the %u tokens of "
		    "the tokenizer", ld->path, ld->cfg.vocab, pr->ntok);
	if (!dry_run && ld->kind != CKPT_NONE && train_prep_tok(pr, err,
	    errsize, code) < 0)
		return -1;
	if (!dry_run && pr->tok.type[0])
		ckpt_tok_set(&pr->tok);
	if (!dry_run && ckpt_args_save(ld, o->save, o->force, &pr->replace,
	    err, errsize, code) < 0)
		return -1;
	/* --dry-run's message has always named the option alone */
	if (o->seq > o->maxpos)
		return owt_fail(err, errsize, code, XUSAGE, "--seq-length %d "
		    "is beyond the %d positions of the model "
		    "(--max-position-embeddings%s)", o->seq, o->maxpos,
		    !dry_run && ld->kind != CKPT_NONE ?
		    ", n_positions in the checkpoint" : "");
	return 0;
}

void
train_prep_shape(const struct train_opts *o, struct gpt_config *c)
{
	c->nlayer = o->layers;
	c->nhead = o->heads;
	c->nembd = o->hidden;
	c->maxpos = o->maxpos;
	c->vocab = o->vocab;
	c->vocab_pad = gpt_pad_vocab(o->vocab, o->vocab_div);
}

int
train_prep_schedule(struct train_opts *o, const struct opt_prog *p,
    const char *given, struct schedule_run *run, char *err, size_t errsize,
    int *code)
{
	struct schedule_opts so = {
		.train_iters = o->train_iters,
		.train_samples = o->train_samples,
		.micro = o->micro, .global = o->global, .lr = o->lr,
		.min_lr = o->min_lr, .style = o->decay_style,
		.warmup_fraction = o->warmup_fraction,
		.warmup_iters = o->warmup_iters,
		.warmup_samples = o->warmup_samples,
		.decay_iters = o->decay_iters,
		.decay_samples = o->decay_samples,
		.given = schedule_given(p, given),
	};

	if (schedule_resolve(&so, run, err, errsize, code) < 0)
		return -1;
	/* what the checkpoint keeps */
	o->global = run->global;
	o->train_iters = run->train_iters;
	o->decay_samples = run->lr.decay;
	o->warmup_samples = run->lr.warmup;
	return 0;
}

int
train_prep_workers(int workers, int local_size)
{
	if (workers > 0)
		return workers;
	return owt_ncpu() / local_size > 1 ? owt_ncpu() / local_size : 1;
}

void
train_prep_trainer(struct trainer *tr, struct gpt_config *cfg,
    const struct train_opts *o, const struct train_prep *pr,
    const struct schedule_run *run)
{
	if (pr->ld.kind != CKPT_NONE)
		*cfg = pr->ld.cfg;
	train_prep_shape(o, cfg);
	if (pr->ld.kind == CKPT_NONE)
		cfg->ln_eps = 1e-5f;
	cfg->hidden_dropout = (float)o->hidden_dropout;
	cfg->attn_dropout = (float)o->attn_dropout;
	tr->micro = o->micro;
	tr->T = o->seq;
	tr->zero = o->dist_opt;
	if (pr->ld.resume)
		tr->st = pr->ld.st;
	tr->st.seed = o->seed;
	tr->nmicro = o->global / o->micro;
	tr->lr = run->lr;
	tr->adam = (struct adamw){ (float)o->beta1, (float)o->beta2,
	    (float)o->eps, (float)o->wd };
	tr->clip = (float)o->clip;
	tr->scaler = (struct loss_scaler){ o->min_scale, o->scale_window,
	    o->hysteresis };
}

void
train_prep_run(struct train_run *r, const struct train_opts *o,
    const struct train_prep *pr)
{
	r->train_iters = o->train_iters;
	r->global = o->global;
	r->log_interval = o->log_interval;
	r->eval_interval = o->eval_interval;
	r->eval_iters = o->eval_iters;
	r->save_interval = o->save_interval;
	r->exit_interval = o->exit_interval;
	r->exit_mins = o->exit_mins;
	r->clip = o->clip > 0;
	r->save = o->save;
	r->replace = pr->replace;
	r->quiet = o->quiet;
	r->json_name = o->log_json;
	r->saved_iter = pr->ld.resume ? pr->ld.st.iteration : UINT64_MAX;
}

int
train_prep_data(struct gpt_data *d, const struct train_opts *o,
    const struct schedule_run *run, char *err, size_t errsize, int *code)
{
	uint64_t G = (uint64_t)o->global;

	return gpt_data_open(d, o->mock ? NULL : o->data_paths.v,
	    (int)o->data_paths.n, o->split, o->split_rounding,
	    (uint32_t)o->seed, o->seq, (uint32_t)o->vocab, run->train_samples,
	    (o->train_iters / o->eval_interval + 1) * o->eval_iters * G,
	    o->eval_iters * G, err, errsize, code);
}

int
train_prep_dry_run(struct train_opts *o, const struct opt_prog *p,
    char *given, struct buf *out, char *err, size_t errsize, int *code)
{
	struct gpt_plan_in in = { .vocab_div = o->vocab_div, .tp = o->tp,
	    .pp = o->pp, .ranks_per_node = o->ranks_per_node,
	    .zero = o->dist_opt };	/* options a checkpoint does not keep */
	struct gpt_plan *plan = NULL;
	struct train_prep pr = { 0 };
	struct comm_launch l;
	int rv = -1;

	if (comm_launch(&l, err, errsize, code) < 0 || train_prep(&pr, o, p,
	    given, 1, err, errsize, code) < 0)
		goto out;
	in.rc = pr.rc;
	in.world = given[opt_find(p, "world-size")] ? o->world_size :
	    l.size > 1 ? l.size : o->tp * o->pp;
	train_prep_shape(o, &in.cfg);
	in.cfg.ln_eps = 1e-5f;
	in.micro_batch = o->micro;
	in.global_batch = o->global > 0 ? o->global : o->micro;
	in.seq = o->seq;
	plan = xcalloc(1, sizeof *plan);
	if (gpt_plan_make(plan, &in, err, errsize, code) < 0)
		goto out;
	gpt_plan_print(out, plan);
	rv = 0;
out:
	free(plan);
	ckpt_args_free(&pr.ld);
	return rv;
}
