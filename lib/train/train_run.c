/* train_run.c - a training run: the model of a rank, iterations with Megatron's log, evaluations, saves and stops */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "tok/bpe.h"
#include "tok/tokenizer.h"
#include "core/buf.h"
#include "core/json.h"
#include "train/schedule.h"
#include "train/train_log.h"
#include "train/train_run.h"
#include "core/util.h"

/* The log, a line or a block at a time, as Megatron prints it; b emptied. */
static int
log_out(struct train_run *r, struct buf *b, char *err, size_t errsize,
    int *code)
{
	int rv = 0;

	if (!r->quiet && b->len > 0 && (fwrite(b->p, 1, b->len, stdout) !=
	    b->len || fflush(stdout) != 0)) {
		r->sigpipe = errno == EPIPE;
		rv = owt_fail_errno(err, errsize, code, XSYS,
		    "standard output: write error");
	}
	b->len = 0;
	return rv;
}

static int
say(struct train_run *r, char *err, size_t errsize, int *code,
    const char *fmt, ...) OWT_PRINTF(5, 6);

static int
say(struct train_run *r, char *err, size_t errsize, int *code,
    const char *fmt, ...)
{
	struct buf b = { 0 };
	char msg[4600];
	va_list ap;
	int rv;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	buf_printf(&b, "%s: %s\n", r->prog, msg);
	rv = log_out(r, &b, err, errsize, code);
	buf_free(&b);
	return rv;
}

/* A --log-json line: the writer's object in b, then a newline; b freed. */
static int
log_json(struct train_run *r, struct buf *b, char *err, size_t errsize,
    int *code)
{
	int rv = 0;

	buf_addc(b, '\n');
	if (r->json != NULL && (fwrite(b->p, 1, b->len, r->json) != b->len ||
	    fflush(r->json) != 0))
		rv = owt_fail_errno(err, errsize, code, XSYS,
		    "%s: write error", r->json_name);
	buf_free(b);
	return rv;
}

int
train_run_vocab(const struct tokenizer_opts *tk, int *vocab, int given,
    uint32_t *ntok, struct ckpt_tok *ct, char *err, size_t errsize,
    int *code)
{
	const char *name = tk->model ? tk->model : tk->vocab ? tk->vocab :
	    "the built-in GPT-2";
	struct tokenizer *t;
	uint32_t eod;
	int r;

	if ((t = tokenizer_load(tk, err, errsize, code)) == NULL)
		return -1;
	*ntok = tokenizer_nvocab(t);
	eod = tokenizer_eod(t);
	r = ckpt_tok_from(ct, tk, t, err, errsize, code);
	tokenizer_free(t);
	if (r < 0)
		return -1;
	if (eod == BPE_NOID)
		return owt_fail(err, errsize, code, XDATA, "%s: no end-of-text "
		    "token, the end of each document", name);
	if (given && (uint32_t)*vocab != *ntok)
		return owt_fail(err, errsize, code, XDATA, "%s: %u tokens, but "
		    "--vocab-size is %d", name, *ntok, *vocab);
	*vocab = (int)*ntok;
	return 0;
}

int
train_run_model(struct train_run *r, struct gpt *m, struct gpt_config *cfg,
    const struct gpt_recompute *rc, const char *path, int optim,
    uint64_t seed, double init_std, double initial_scale, char *err,
    size_t errsize, int *code)
{
	const struct dist *d = &r->ranks->dist;
	struct trainer *tr = r->tr;
	char why[OWT_ERRSIZE];	/* gpt.h's errors are the options' (XUSAGE) */
	int parts = d->pp > 1 || d->tp > 1;

	if (parts) {	/* this rank's part */
		struct gpt_part part = { d->l0, d->l1, d->pp_rank == 0,
		    d->pp_rank == d->pp - 1, d->tp, d->tp_rank };
		int slots = d->pp - d->pp_rank;

		cfg->vocab_pad = d->vocab_pad;
		if (gpt_init_part(m, cfg, &part, r->ranks->tp, r->dev->be, why,
		    sizeof why) < 0)
			return owt_fail(err, errsize, code, XUSAGE, "%s", why);
		if (d->pp > 1)
			gpt_set_slots(m, slots < d->micro ? slots : d->micro);
	} else if (gpt_init(m, cfg, r->dev->be, why, sizeof why) < 0) {
		return owt_fail(err, errsize, code, XUSAGE, "%s", why);
	}
	gpt_set_recompute(m, rc);
	if (gpt_set_batch(m, tr->micro, tr->T, why, sizeof why) < 0)
		return owt_fail(err, errsize, code, XUSAGE, "%s", why);
	tr->m = m;
	if (path != NULL && parts) {	/* the part's runs */
		if (train_load_part(tr, path, optim, err, errsize, code) < 0)
			return -1;
	} else if (path != NULL) {
		if (ckpt_load_model(path, m, err, errsize, code) < 0 ||
		    (optim && ckpt_load_optim(path, m, err, errsize,
		    code) < 0))	/* 1: none */
			return -1;
	} else {
		gpt_init_weights(m, seed, (float)init_std);
	}
	if (r->dev->prec != GPT_FP16)
		tr->st.loss_scale = 0;
	else if (tr->st.loss_scale == 0)
		train_scaler_start(&tr->scaler, &tr->st, initial_scale);
	train_init(tr);
	return 0;
}

int
train_run_describe(struct train_run *r, const struct gpt_config *cfg,
    int workers, int overlap_grad, char *err, size_t errsize, int *code)
{
	const struct trainer *tr = r->tr;
	const struct comm *w = r->ranks->world;
	char rc[256];

	gpt_recompute_desc(tr->m, rc, sizeof rc);
	if (say(r, err, errsize, code, "GPT-2: %d layers, %d hidden, %d heads, "
	    "%d positions, vocabulary %d (padded to %d): %zu parameters",
	    cfg->nlayer, cfg->nembd, cfg->nhead, cfg->maxpos, cfg->vocab,
	    cfg->vocab_pad, gpt_nparams(cfg)) < 0 ||
	    say(r, err, errsize, code, "activations: %zu bytes for "
	    "micro-batches of %d x %d tokens; recomputation: %s",
	    gpt_acts_bytes(tr->m, tr->micro, tr->T), tr->micro, tr->T,
	    rc) < 0 ||
	    say(r, err, errsize, code, "%s", gpt_device_desc(r->dev,
	    workers)) < 0)
		return -1;
	if (w->size > 1 && say(r, err, errsize, code, "%d ranks (%s, "
	    "collectives on %s): %d data-parallel, %d pipeline stages, %d "
	    "tensor-parallel, %d micro-batches each; %s", w->size, w->launcher,
	    w->impl, tr->dist->dp, tr->dist->pp, tr->dist->tp, tr->dist->micro,
	    tr->zero ? "the optimizer sharded (ZeRO-1)" : "the optimizer on "
	    "every rank") < 0)
		return -1;
	if (w->size == 1 && strcmp(w->impl, "self") != 0 &&	/* OWT_COMM=nccl */
	    say(r, err, errsize, code, "1 rank, collectives on %s ($OWT_COMM)",
	    w->impl) < 0)
		return -1;
	if (overlap_grad && say(r, err, errsize, code, "--overlap-grad-reduce: "
	    "no effect yet: gradients are reduced after the backward pass") < 0)
		return -1;
	if (say(r, err, errsize, code, "%s", r->data->desc) < 0)
		return -1;
	if (tr->st.iteration > 0)
		return say(r, err, errsize, code, "resuming at iteration %" PRIu64
		    ", %" PRIu64 " samples consumed", tr->st.iteration,
		    tr->st.consumed_train);
	return 0;
}

/* The iteration's checkpoint, unless saved: rank 0 writes, the others send. */
static int
save(struct train_run *r, char *err, size_t errsize, int *code)
{
	struct trainer *tr = r->tr;

	if (r->save == NULL || r->saved_iter == tr->st.iteration)
		return 0;
	if (r->replace) {
		if (r->ranks->world->rank == 0 && ckpt_remove_run(r->save, err,
		    errsize, code) < 0)
			return -1;
		r->replace = 0;
		if (say(r, err, errsize, code, "removed the checkpoints in %s "
		    "(--force)", r->save) < 0)
			return -1;
	}
	if (train_save(tr, r->save, r->args_json, err, errsize, code) < 0)
		return -1;
	r->saved_iter = tr->st.iteration;
	return say(r, err, errsize, code, "saved %s/iter_%07" PRIu64, r->save,
	    tr->st.iteration);
}

/* The loss of eval_iters batches of src from first, logged under prefix. */
static int
evaluate(struct train_run *r, const struct sample_src *src, uint64_t first,
    const char *what, const char *prefix, char *err, size_t errsize,
    int *code)
{
	struct buf b = { 0 };
	struct json_w w;
	char key[32];
	double loss;
	int rv;

	if (train_eval(r->tr, src, first, (int)r->eval_iters, &loss, err,
	    errsize, code) < 0)
		return -1;
	train_log_validation(&b, prefix, loss);
	rv = log_out(r, &b, err, errsize, code);
	buf_free(&b);
	if (rv < 0)
		return -1;
	snprintf(key, sizeof key, "%s_loss", what);
	json_w_init(&w, &b, JSON_SPACED);
	json_w_obj(&w);
	json_w_ku64(&w, "iteration", r->tr->st.iteration);
	json_w_key(&w, key);
	json_w_num(&w, "%.9g", loss);
	json_w_end(&w);
	return log_json(r, &b, err, errsize, code);
}

/* The next validation batches, when there are any. */
static int
validate(struct train_run *r, const char *prefix, char *err, size_t errsize,
    int *code)
{
	if (r->eval_iters == 0 || !r->data->have[1])
		return 0;
	if (evaluate(r, &r->data->src[1], r->tr->st.consumed_valid, "valid",
	    prefix, err, errsize, code) < 0)
		return -1;
	r->tr->st.consumed_valid += r->eval_iters * (uint64_t)r->global;
	return 0;
}

/*
 * Whether to stop after this iteration, the same on every rank: a signal
 * on any rank, rank 0's clock, or the exit interval. *why NULL to go on.
 */
static int
stop_why(struct train_run *r, double t0, const char **why, char *err,
    size_t errsize, int *code)
{
	double v[2] = { *r->signal, 0 };

	if (r->ranks->world->rank == 0 && r->exit_mins > 0 &&
	    owt_now() - t0 >= r->exit_mins * 60)
		v[1] = 1;
	if (comm_ctl_allreduce(r->ranks->world, v, 2, COMM_MAX, "stop signals",
	    err, errsize, code) < 0)
		return -1;
	*why = v[0] == SIGINT ? "interrupted" : v[0] == SIGHUP ? "hung up" :
	    v[0] > 0 ? "terminated" : r->exit_interval &&
	    r->tr->st.iteration % r->exit_interval == 0 ?
	    "exit interval reached" : v[1] > 0 ? "exit duration reached" : NULL;
	return 0;
}

/*
 * The backend memory this rank's model holds after its first iteration,
 * which --dry-run predicts (t/6102); the optimizer's shards under
 * --use-distributed-optimizer are lib/train/train.c's, not counted. Every rank
 * that reports names itself (owt_prog), quiet or not.
 */
static int
report_memory(struct train_run *r, char *err, size_t errsize, int *code)
{
	struct buf b = { 0 };
	int rv = 0;

	buf_printf(&b, "%s: memory: %zu bytes of %s memory allocated after "
	    "the first iteration%s\n", owt_prog, gpt_alloc_bytes(),
	    r->tr->m->be->name, r->tr->zero ? ", the optimizer's shards not "
	    "counted" : "");
	if (fwrite(b.p, 1, b.len, stdout) != b.len || fflush(stdout) != 0)
		rv = owt_fail_errno(err, errsize, code, XSYS,
		    "standard output: write error");
	buf_free(&b);
	return rv;
}

/* The interval lg's line, on standard output and as JSON; lg restarted. */
static int
log_line(struct train_run *r, struct train_log *lg,
    const struct step_result *s, double t0, double *tlast, struct buf *line,
    char *err, size_t errsize, int *code)
{
	const struct trainer *tr = r->tr;
	double now = owt_now(), n = (double)(lg->advanced + lg->skipped);
	double tps = n * r->global * tr->T / (now - *tlast);
	struct buf b = { 0 };

	lg->iteration = tr->st.iteration;
	lg->consumed = tr->st.consumed_train;
	lg->ms = (now - *tlast) * 1000;
	lg->lr = schedule_lr_at(&tr->lr, tr->st.sched_samples);
	lg->loss_scale = tr->st.loss_scale > 0 ? tr->st.loss_scale : 1;
	/* Megatron has no norm without clipping or after a skip */
	lg->grad_norm = r->clip && !s->skipped ? s->grad_norm : NAN;
	train_log_line(line, lg);
	buf_addc(line, '\n');
	if (log_out(r, line, err, errsize, code) < 0)
		return -1;
	train_log_json(&b, lg, s->lr, s->grad_norm, s->loss_scale > 0 ?
	    tr->st.loss_scale : 0, tps, now - t0);
	if (log_json(r, &b, err, errsize, code) < 0)
		return -1;
	lg->loss_sum = 0;
	lg->advanced = lg->skipped = lg->nan = 0;
	*tlast = now;
	return 0;
}

/*
 * Train to the end or a stop; Megatron v2.5's end: validation, the save,
 * then the test.
 */
static int
loop(struct train_run *r, struct buf *line, char *err, size_t errsize,
    int *code)
{
	struct trainer *tr = r->tr;
	struct train_log lg = { 0 };
	struct step_result s;
	uint64_t first = tr->st.iteration;
	double t0, tlast;
	const char *why;
	char prefix[64];
	int k;

	t0 = tlast = owt_now();
	lg.train_iters = r->train_iters;
	lg.global = r->global;
	while (tr->st.iteration < r->train_iters) {
		k = train_iteration(tr, &r->data->src[0], &s, err, errsize, code);
		if (k < 0)
			return -1;
		if (k > 0)
			return owt_fail(err, errsize, code, XDATA, "iteration %"
			    PRIu64 ": the %s is %g; stopping without saving%s",
			    tr->st.iteration + 1, isfinite(s.loss) ?
			    "gradient norm" : "loss", isfinite(s.loss) ?
			    s.grad_norm : s.loss, r->saved_iter != UINT64_MAX ?
			    " (the last checkpoint is intact)" : "");
		/* Megatron's report_memory: once, on each data-parallel rank 0 */
		if (tr->st.iteration == first + 1 && r->ranks->dist.dp_rank == 0 &&
		    r->memory && report_memory(r, err, errsize, code) < 0)
			return -1;
		if (s.skipped) {	/* fp16 overflow: Megatron counts, not averages, it */
			lg.skipped++;
			lg.nan += !isfinite(s.loss);
		} else {
			lg.loss_sum += s.loss;
			lg.advanced++;
		}
		if (stop_why(r, t0, &why, err, errsize, code) < 0)
			return -1;
		if ((tr->st.iteration % r->log_interval == 0 ||
		    tr->st.iteration == r->train_iters || why) &&
		    log_line(r, &lg, &s, t0, &tlast, line, err, errsize,
		    code) < 0)
			return -1;
		if (tr->st.iteration % r->eval_interval == 0) {
			snprintf(prefix, sizeof prefix, "iteration %" PRIu64,
			    tr->st.iteration);
			if (validate(r, prefix, err, errsize, code) < 0)
				return -1;
		}
		if (r->save_interval && tr->st.iteration % r->save_interval ==
		    0 && save(r, err, errsize, code) < 0)
			return -1;
		if (why)
			return save(r, err, errsize, code) < 0 ? -1 : say(r, err,
			    errsize, code, "%s at iteration %" PRIu64 "; exiting",
			    why, tr->st.iteration);
	}
	if (validate(r, "the end of training for val data", err, errsize,
	    code) < 0 || (tr->st.iteration > first && save(r, err, errsize,
	    code) < 0))
		return -1;
	if (r->eval_iters > 0 && r->data->have[2])
		return evaluate(r, &r->data->src[2], 0, "test",
		    "the end of training for test data", err, errsize, code);
	return 0;
}

int
train_run_loop(struct train_run *r, char *err, size_t errsize, int *code)
{
	struct buf line = { 0 };
	int rv = loop(r, &line, err, errsize, code);

	buf_free(&line);
	if (rv == 0 && gpt_device_peak_bytes(r->dev) > 0)
		rv = say(r, err, errsize, code, "peak GPU memory %.2f GB",
		    gpt_device_peak_bytes(r->dev) / 1e9);
	return rv;
}
