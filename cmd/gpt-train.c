/* gpt-train - train GPT-2 on Megatron indexed datasets, saving Hugging Face checkpoints */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "ckpt.h"
#include "gpt.h"
#include "gpt_data.h"
#include "gpt_device.h"
#include "json.h"
#include "train.h"
#include "util.h"

static const char usage_line[] =
    "usage: gpt-train [-hq] [--adam-beta1 x] [--adam-beta2 x] [--adam-eps x] "
    "[--attention-dropout p] [--bf16] [--clip-grad x] "
    "[--data-path [weight] prefix ...] [--device dev] [--eval-interval n] "
    "[--eval-iters n] [--exit-duration-in-mins x] [--exit-interval n] "
    "[--finetune] [--force] [--fp16] [--fp32] "
    "[--global-batch-size n] [--hidden-dropout p] [--hidden-size n] "
    "[--hysteresis n] [--init-method-std x] [--initial-loss-scale x] "
    "[--load dir] [--log-interval n] [--log-json file] "
    "[--loss-scale-window n] [--lr x] [--lr-decay-iters n] [--lr-decay-samples n] "
    "[--lr-decay-style style] [--lr-warmup-fraction x] [--lr-warmup-iters n] "
    "[--lr-warmup-samples n] [--make-vocab-size-divisible-by n] "
    "[--max-position-embeddings n] [--micro-batch-size n] "
    "[--min-loss-scale x] [--min-lr x] [--mock-data] [--no-load-optim] [--num-attention-heads n] "
    "[--num-layers n] [--override-opt_param-scheduler] "
    "[--pipeline-model-parallel-size n] [--save dir] [--save-interval n] "
    "[--seed n] [--seq-length n] [--split s] "
    "[--tensor-model-parallel-size n] [--train-iters n] [--train-samples n] "
    "[--version] [--vocab-size n] [--weight-decay x] [--workers n]\n";

static const char options_help[] =
    "  -h, --help                       print this help and exit\n"
    "  -q, --quiet                      no log lines on stderr, only errors\n"
    "      --adam-beta1 x               AdamW beta1 (0.9)\n"
    "      --adam-beta2 x               AdamW beta2 (0.95; Megatron 0.999)\n"
    "      --adam-eps x                 AdamW epsilon (1e-8)\n"
    "      --attention-dropout p        dropout on attention probabilities (0.0; Megatron 0.1)\n"
    "      --bf16                       bf16 matrix products (cuda; the default on sm_80 and newer)\n"
    "      --clip-grad x                clip the global gradient norm to x; 0: off (1.0)\n"
    "      --data-path [weight] prefix ...  datasets PREFIX.bin/.idx, blended by weight\n"
    "      --device dev                 auto, cpu or cuda ($OWT_DEVICE, else auto)\n"
    "      --eval-interval n            validation loss every n iterations (1000)\n"
    "      --eval-iters n               batches per evaluation; 0: none (100)\n"
    "      --exit-duration-in-mins x    save and exit after x minutes of training\n"
    "      --exit-interval n            save and exit after iteration n, 2n, ...\n"
    "      --finetune                   load only the weights; iteration 0, new optimizer\n"
    "      --force                      a new run replaces the checkpoints in --save\n"
    "      --fp16                       fp16 matrix products with dynamic loss scaling (cuda)\n"
    "      --fp32                       fp32 throughout (the cpu backend's only mode)\n"
    "      --global-batch-size n        sequences per iteration (the micro-batch size)\n"
    "      --hidden-dropout p           dropout after embeddings and residual branches (0.0; Megatron 0.1)\n"
    "      --hidden-size n              channels (768)\n"
    "      --hysteresis n               fp16: overflows before the loss scale halves (2)\n"
    "      --init-method-std x          standard deviation of the initial weights (0.02)\n"
    "      --initial-loss-scale x       fp16: the first loss scale (4294967296)\n"
    "      --load dir                   resume from a checkpoint, or start from HF weights\n"
    "      --log-interval n             log every n iterations (100)\n"
    "      --log-json file              also write the log as JSON lines to file\n"
    "      --loss-scale-window n        fp16: clean iterations before the scale doubles (1000)\n"
    "      --lr x                       peak learning rate (6e-4)\n"
    "      --lr-decay-iters n           decay over n iterations (--train-iters)\n"
    "      --lr-decay-samples n         decay over n samples\n"
    "      --lr-decay-style style       constant, linear, cosine, inverse-square-root (cosine)\n"
    "      --lr-warmup-fraction x       warm up over this fraction of the decay (0.01)\n"
    "      --lr-warmup-iters n          warm up over n iterations\n"
    "      --lr-warmup-samples n        warm up over n samples\n"
    "      --make-vocab-size-divisible-by n  pad the vocabulary to a multiple of n (128)\n"
    "      --max-position-embeddings n  positions of the model (1024)\n"
    "      --micro-batch-size n         sequences per forward pass (4)\n"
    "      --min-loss-scale x           fp16: the smallest loss scale (1)\n"
    "      --min-lr x                   learning rate at the end of the decay (6e-5)\n"
    "      --mock-data                  train on generated counting sequences\n"
    "      --no-load-optim              resume with new AdamW moments, not the saved ones\n"
    "      --num-attention-heads n      attention heads (12)\n"
    "      --num-layers n               transformer layers (12)\n"
    "      --override-opt_param-scheduler  the options' learning-rate schedule, not the checkpoint's\n"
    "      --pipeline-model-parallel-size n  must be 1\n"
    "      --save dir                   save checkpoints under dir\n"
    "      --save-interval n            save every n iterations (at the end only)\n"
    "      --seed n                     data order, initial weights, dropout (1234)\n"
    "      --seq-length n               tokens per sequence (1024)\n"
    "      --split s                    train, valid, test weights (969, 30, 1)\n"
    "      --tensor-model-parallel-size n  must be 1\n"
    "      --train-iters n              iterations to train\n"
    "      --train-samples n            samples to train (instead of --train-iters)\n"
    "      --version                    print the version and exit\n"
    "      --vocab-size n               the tokenizer's vocabulary (50257)\n"
    "      --weight-decay x             AdamW weight decay, not on biases and LayerNorm (0.1; Megatron 0.01)\n"
    "      --workers n                  threads (all processors)\n";

enum { T_INT, T_U64, T_DBL, T_STR, T_FLAG };

/* What a checkpoint does to an option not given: nothing, or sets it. */
enum { C_NONE, C_ARG, C_SCHED, C_MODEL };

static struct {
	int layers, hidden, heads, seq, maxpos, vocab, vocab_div;
	double init_std, hidden_dropout, attn_dropout;
	int micro, global;
	uint64_t train_iters, train_samples;
	double lr, min_lr, warmup_fraction;
	const char *decay_style;
	uint64_t warmup_iters, warmup_samples, decay_iters, decay_samples;
	double wd, clip, beta1, beta2, eps, exit_mins;
	double initial_scale, min_scale;
	uint64_t scale_window, hysteresis;
	const char *split, *device, *save, *load, *log_json;
	uint64_t seed, save_interval, eval_interval, eval_iters, log_interval,
	    exit_interval;
	int mock, finetune, force, no_load_optim, override_sched, quiet, workers;
	int fp16, bf16, fp32, tp, pp;
} o = {
	.layers = 12, .hidden = 768, .heads = 12, .seq = 1024, .maxpos = 1024,
	.vocab = 50257, .vocab_div = 128, .init_std = 0.02, .micro = 4,
	.lr = 6e-4, .min_lr = 6e-5, .warmup_fraction = 0.01,
	.decay_style = "cosine", .wd = 0.1, .clip = 1.0, .beta1 = 0.9,
	.beta2 = 0.95, .eps = 1e-8, .split = "969, 30, 1",
	.initial_scale = 4294967296.0, .min_scale = 1, .scale_window = 1000,
	.hysteresis = 2,
	.seed = 1234, .eval_interval = 1000, .eval_iters = 100,
	.log_interval = 100, .tp = 1, .pp = 1,
};

static const struct optdef {
	const char *name;
	int type;
	void *p;
	double min, max;
	int ckpt;		/* C_*: where a checkpoint sets it from */
	const char *key;	/* config.json key, for C_MODEL */
} opts[] = {
	{ "adam-beta1", T_DBL, &o.beta1, 0, 0.999999, C_ARG, NULL },
	{ "adam-beta2", T_DBL, &o.beta2, 0, 0.999999, C_ARG, NULL },
	{ "adam-eps", T_DBL, &o.eps, 1e-30, 1, C_ARG, NULL },
	{ "attention-dropout", T_DBL, &o.attn_dropout, 0, 0.99, C_ARG, NULL },
	{ "bf16", T_FLAG, &o.bf16, 0, 0, C_NONE, NULL },
	{ "clip-grad", T_DBL, &o.clip, 0, 1e30, C_ARG, NULL },
	{ "data-path", T_STR, NULL, 0, 0, C_NONE, NULL },
	{ "device", T_STR, &o.device, 0, 0, C_NONE, NULL },
	{ "eval-interval", T_U64, &o.eval_interval, 1, 1e15, C_ARG, NULL },
	{ "eval-iters", T_U64, &o.eval_iters, 0, 1e15, C_ARG, NULL },
	{ "exit-duration-in-mins", T_DBL, &o.exit_mins, 1e-9, 1e9, C_NONE, NULL },
	{ "exit-interval", T_U64, &o.exit_interval, 1, 1e15, C_NONE, NULL },
	{ "finetune", T_FLAG, &o.finetune, 0, 0, C_NONE, NULL },
	{ "force", T_FLAG, &o.force, 0, 0, C_NONE, NULL },
	{ "fp16", T_FLAG, &o.fp16, 0, 0, C_NONE, NULL },
	{ "fp32", T_FLAG, &o.fp32, 0, 0, C_NONE, NULL },
	{ "global-batch-size", T_INT, &o.global, 1, 1 << 24, C_ARG, NULL },
	{ "hidden-dropout", T_DBL, &o.hidden_dropout, 0, 0.99, C_ARG, NULL },
	{ "hidden-size", T_INT, &o.hidden, 1, 1 << 16, C_MODEL, "n_embd" },
	{ "hysteresis", T_U64, &o.hysteresis, 1, 1e15, C_NONE, NULL },
	{ "init-method-std", T_DBL, &o.init_std, 0, 10, C_NONE, NULL },
	{ "initial-loss-scale", T_DBL, &o.initial_scale, 1, 1e38, C_NONE, NULL },
	{ "load", T_STR, &o.load, 0, 0, C_NONE, NULL },
	{ "log-interval", T_U64, &o.log_interval, 1, 1e15, C_NONE, NULL },
	{ "log-json", T_STR, &o.log_json, 0, 0, C_NONE, NULL },
	{ "loss-scale-window", T_U64, &o.scale_window, 1, 1e15, C_NONE, NULL },
	{ "lr", T_DBL, &o.lr, 0, 1e6, C_SCHED, NULL },
	{ "lr-decay-iters", T_U64, &o.decay_iters, 1, 1e15, C_NONE, NULL },
	{ "lr-decay-samples", T_U64, &o.decay_samples, 1, 1e15, C_SCHED, NULL },
	{ "lr-decay-style", T_STR, &o.decay_style, 0, 0, C_SCHED, NULL },
	{ "lr-warmup-fraction", T_DBL, &o.warmup_fraction, 0, 1, C_NONE, NULL },
	{ "lr-warmup-iters", T_U64, &o.warmup_iters, 0, 1e15, C_NONE, NULL },
	{ "lr-warmup-samples", T_U64, &o.warmup_samples, 0, 1e15, C_SCHED, NULL },
	{ "make-vocab-size-divisible-by", T_INT, &o.vocab_div, 1, 1 << 16, C_NONE, NULL },
	{ "max-position-embeddings", T_INT, &o.maxpos, 1, 1 << 20, C_MODEL, "n_positions" },
	{ "micro-batch-size", T_INT, &o.micro, 1, 1 << 16, C_ARG, NULL },
	{ "min-loss-scale", T_DBL, &o.min_scale, 1e-30, 1e38, C_NONE, NULL },
	{ "min-lr", T_DBL, &o.min_lr, 0, 1e6, C_SCHED, NULL },
	{ "mock-data", T_FLAG, &o.mock, 0, 0, C_NONE, NULL },
	{ "no-load-optim", T_FLAG, &o.no_load_optim, 0, 0, C_NONE, NULL },
	{ "num-attention-heads", T_INT, &o.heads, 1, 1 << 12, C_MODEL, "n_head" },
	{ "num-layers", T_INT, &o.layers, 1, 1 << 12, C_MODEL, "n_layer" },
	{ "override-opt_param-scheduler", T_FLAG, &o.override_sched, 0, 0, C_NONE, NULL },
	{ "pipeline-model-parallel-size", T_INT, &o.pp, 1, 1 << 16, C_NONE, NULL },
	{ "save", T_STR, &o.save, 0, 0, C_NONE, NULL },
	{ "save-interval", T_U64, &o.save_interval, 1, 1e15, C_NONE, NULL },
	{ "seed", T_U64, &o.seed, 0, 4294967295.0, C_ARG, NULL },
	{ "seq-length", T_INT, &o.seq, 1, 1 << 20, C_ARG, NULL },
	{ "split", T_STR, &o.split, 0, 0, C_ARG, NULL },
	{ "tensor-model-parallel-size", T_INT, &o.tp, 1, 1 << 16, C_NONE, NULL },
	{ "train-iters", T_U64, &o.train_iters, 1, 1e15, C_ARG, NULL },
	{ "train-samples", T_U64, &o.train_samples, 1, 1e15, C_ARG, NULL },
	{ "vocab-size", T_INT, &o.vocab, 2, 1 << 30, C_MODEL, "vocab_size" },
	{ "weight-decay", T_DBL, &o.wd, 0, 1e6, C_ARG, NULL },
	{ "workers", T_INT, &o.workers, 1, 1024, C_NONE, NULL },
};
#define NOPTS (sizeof opts / sizeof *opts)
enum { O_HELP = 'h', O_QUIET = 'q', O_VERSION = 1000, O_BASE = 256 };

static char given[NOPTS];
static char **data_args;
static int ndata_args;
static volatile sig_atomic_t stop_signal;

static int
opt_index(const char *name)
{
	size_t i;

	for (i = 0; i < NOPTS; i++)
		if (strcmp(opts[i].name, name) == 0)
			return (int)i;
	return -1;
}

#define GIVEN(name) given[opt_index(name)]

static void
set_opt(const struct optdef *d, const char *arg)
{
	char flag[64];

	snprintf(flag, sizeof flag, "--%s", d->name);
	switch (d->type) {
	case T_INT:
		*(int *)d->p = (int)opt_int(flag, arg, (long long)d->min,
		    (long long)d->max);
		break;
	case T_U64:
		*(uint64_t *)d->p = (uint64_t)opt_int(flag, arg,
		    (long long)d->min, (long long)d->max);
		break;
	case T_DBL:
		*(double *)d->p = opt_double(flag, arg, d->min, d->max);
		break;
	case T_STR:
		*(const char **)d->p = arg;
		break;
	case T_FLAG:
		*(int *)d->p = 1;
		break;
	}
}

static void
parse(int argc, char **argv)
{
	struct option *lo = xcalloc(NOPTS + 4, sizeof *lo);
	size_t i, n = 0;
	int c;

	for (i = 0; i < NOPTS; i++) {
		lo[n].name = opts[i].name;
		lo[n].has_arg = opts[i].type == T_FLAG ? no_argument :
		    required_argument;
		lo[n++].val = O_BASE + (int)i;
	}
	lo[n++] = (struct option){ "help", no_argument, NULL, O_HELP };
	lo[n++] = (struct option){ "quiet", no_argument, NULL, O_QUIET };
	lo[n++] = (struct option){ "version", no_argument, NULL, O_VERSION };
	while ((c = getopt_long(argc, argv, "hq", lo, NULL)) != -1) {
		if (c == O_HELP) {
			exit(owt_help(usage_line, options_help));
		} else if (c == O_QUIET) {
			o.quiet = 1;
		} else if (c == O_VERSION) {
			exit(owt_version());
		} else if (c >= O_BASE && c < O_BASE + (int)NOPTS) {
			const struct optdef *d = &opts[c - O_BASE];

			given[c - O_BASE] = 1;
			if (d->p == NULL) {	/* --data-path: this and the operands */
				data_args = xrealloc(data_args,
				    (size_t)(ndata_args + 1) * sizeof *data_args);
				data_args[ndata_args++] = optarg;
			} else {
				set_opt(d, optarg);
			}
		} else {
			owt_usage(usage_line);
		}
	}
	free(lo);
	if (optind < argc && ndata_args == 0)
		owt_die(XUSAGE, "unexpected operand '%s'", argv[optind]);
	/* Megatron's --data-path takes several words: "0.7 A 0.3 B" */
	while (optind < argc) {
		data_args = xrealloc(data_args, (size_t)(ndata_args + 1) *
		    sizeof *data_args);
		data_args[ndata_args++] = argv[optind++];
	}
}

static int
decay_style(const char *s)
{
	if (strcmp(s, "constant") == 0)
		return SCHEDULE_CONSTANT;
	if (strcmp(s, "linear") == 0)
		return SCHEDULE_LINEAR;
	if (strcmp(s, "cosine") == 0)
		return SCHEDULE_COSINE;
	if (strcmp(s, "inverse-square-root") == 0)
		return SCHEDULE_INVSQRT;
	owt_die(XUSAGE, "--lr-decay-style: '%s' is not constant, linear, "
	    "cosine or inverse-square-root", s);
}

/* The model shape from a checkpoint's config.json, against the options given. */
static void
merge_config(const char *path, const struct gpt_config *c)
{
	size_t i;
	int v = 0;

	for (i = 0; i < NOPTS; i++) {
		const struct optdef *d = &opts[i];

		if (d->ckpt != C_MODEL)
			continue;
		if (strcmp(d->key, "n_embd") == 0)
			v = c->nembd;
		else if (strcmp(d->key, "n_positions") == 0)
			v = c->maxpos;
		else if (strcmp(d->key, "n_head") == 0)
			v = c->nhead;
		else if (strcmp(d->key, "n_layer") == 0)
			v = c->nlayer;
		else if (strcmp(d->key, "vocab_size") == 0)
			v = c->vocab;
		if (given[i] && *(int *)d->p != v)
			owt_die(XDATA, "%s/config.json: %s is %d, but --%s is "
			    "%d", path, d->key, v, d->name, *(int *)d->p);
		*(int *)d->p = v;
	}
}

/* The value of option d in a checkpoint's "args", as text for messages. */
static int
arg_from(const struct optdef *d, const struct json_val *v, char *text,
    size_t size)
{
	if (d->type == T_STR) {
		if (v->type != JV_STRING)
			return -1;
		snprintf(text, size, "%s", v->str);
		if (strcmp(*(const char **)d->p, v->str) == 0)
			return 0;
		return 1;
	}
	if (v->type != JV_NUMBER)
		return -1;
	snprintf(text, size, "%.9g", v->num);
	switch (d->type) {
	case T_INT:
		return *(int *)d->p != (int)v->num;
	case T_U64:
		return *(uint64_t *)d->p != (uint64_t)v->num;
	default:
		return *(double *)d->p != v->num;
	}
}

/*
 * Whether the options that set the same quantity as d were given: the
 * warmup and decay are kept in samples but set in several ways, and the
 * training length is iterations or samples.
 */
static int
given_as(const struct optdef *d)
{
	if (strcmp(d->name, "lr-warmup-samples") == 0)
		return GIVEN("lr-warmup-samples") || GIVEN("lr-warmup-iters") ||
		    GIVEN("lr-warmup-fraction");
	if (strcmp(d->name, "lr-decay-samples") == 0)
		return GIVEN("lr-decay-samples") || GIVEN("lr-decay-iters");
	if (strcmp(d->name, "train-iters") == 0 ||
	    strcmp(d->name, "train-samples") == 0)
		return GIVEN("train-iters") || GIVEN("train-samples");
	return given[d - opts];
}

/*
 * Options not given take the checkpoint's values. With check set (after
 * the options are resolved), a learning-rate option given with another
 * value than the checkpoint's is an error, as in Megatron, unless
 * --override-opt_param-scheduler.
 */
static void
merge_args(const char *path, const struct json_val *args, int check)
{
	const struct json_val *v;
	char text[256];
	size_t i;
	int diff;

	for (i = 0; i < NOPTS; i++) {
		const struct optdef *d = &opts[i];

		if (d->ckpt != C_ARG && d->ckpt != C_SCHED)
			continue;
		if ((v = json_doc_get(args, d->name)) == NULL ||
		    v->type == JV_NULL)
			continue;
		if ((diff = arg_from(d, v, text, sizeof text)) < 0)
			owt_die(XDATA, "%s/trainer_state.json: bad value of "
			    "'%s'", path, d->name);
		if (given_as(d)) {
			if (check && diff && d->ckpt == C_SCHED &&
			    !o.override_sched)
				owt_die(XDATA, "%s/trainer_state.json: %s is %s, "
				    "but the options make it differ (use "
				    "--override-opt_param-scheduler)", path,
				    d->name, text);
			continue;
		}
		if (check)
			continue;
		given[i] = 1;
		switch (d->type) {
		case T_INT: *(int *)d->p = (int)v->num; break;
		case T_U64: *(uint64_t *)d->p = (uint64_t)v->num; break;
		case T_DBL: *(double *)d->p = v->num; break;
		case T_STR: *(const char **)d->p = xstrdup(v->str); break;
		}
	}
}

/* The options a checkpoint keeps, as a JSON object. */
static char *
args_json(void)
{
	struct buf b = { 0 };
	size_t i;
	int first = 1;

	buf_addc(&b, '{');
	for (i = 0; i < NOPTS; i++) {
		const struct optdef *d = &opts[i];

		if (d->ckpt != C_ARG && d->ckpt != C_SCHED)
			continue;
		if (d->type == T_U64 && *(uint64_t *)d->p == 0 &&
		    d->ckpt == C_ARG)
			continue;	/* unset: --train-samples */
		buf_printf(&b, "%s\n    \"%s\": ", first ? "" : ",", d->name);
		first = 0;
		switch (d->type) {
		case T_INT: buf_printf(&b, "%d", *(int *)d->p); break;
		case T_U64: buf_printf(&b, "%" PRIu64, *(uint64_t *)d->p); break;
		case T_DBL: buf_printf(&b, "%.17g", *(double *)d->p); break;
		case T_STR: buf_printf(&b, "\"%s\"", *(const char **)d->p); break;
		}
	}
	buf_printf(&b, "\n  }");
	return b.p;
}

static void
on_signal(int sig)
{
	stop_signal = sig;
}

static FILE *logf_json;

static void
log_json(const char *fmt, ...) OWT_PRINTF(1, 2);

static void
log_json(const char *fmt, ...)
{
	va_list ap;

	if (logf_json == NULL)
		return;
	va_start(ap, fmt);
	vfprintf(logf_json, fmt, ap);
	va_end(ap);
	fputc('\n', logf_json);
	if (fflush(logf_json) != 0)
		owt_die_errno(XSYS, "%s: write error", o.log_json);
}

static void
say(const char *fmt, ...) OWT_PRINTF(1, 2);

static void
say(const char *fmt, ...)
{
	va_list ap;

	if (o.quiet)
		return;
	fprintf(stderr, "%s: ", owt_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static struct gpt model;
static struct trainer tr;
static struct gpt_device dev;
static uint64_t saved_iter = UINT64_MAX;
static char *args_text;
static int replace_old;		/* --force: remove the checkpoints in --save first */

static void
save(void)
{
	char err[1024];
	int code;

	if (o.save == NULL || saved_iter == tr.st.iteration)
		return;
	if (replace_old) {
		if (ckpt_remove_run(o.save, err, sizeof err, &code) < 0)
			owt_die(code, "%s", err);
		replace_old = 0;
		say("removed the checkpoints in %s (--force)", o.save);
	}
	if (ckpt_save(o.save, &model, &tr.st, args_text, 1, err, sizeof err,
	    &code) < 0)
		owt_die(code, "%s", err);
	saved_iter = tr.st.iteration;
	say("saved %s/iter_%07" PRIu64, o.save, tr.st.iteration);
}

static void
evaluate(const struct sample_src *src, uint64_t first, const char *what)
{
	char err[1024];
	double loss;
	int code;

	if (train_eval(&tr, src, first, (int)o.eval_iters, &loss, err,
	    sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	say("iteration %" PRIu64 " | %s loss %.6f | %s ppl %.3f",
	    tr.st.iteration, what, loss, what, exp(fmin(20, loss)));
	log_json("{\"iteration\": %" PRIu64 ", \"%s_loss\": %.9g}",
	    tr.st.iteration, what, loss);
}

/* The next validation batches, when there are any. */
static void
validate(const struct gpt_data *d)
{
	if (o.eval_iters == 0 || !d->have[1])
		return;
	evaluate(&d->src[1], tr.st.consumed_valid, "valid");
	tr.st.consumed_valid += o.eval_iters * (uint64_t)o.global;
}

int
main(int argc, char **argv)
{
	struct gpt_config cfg = { 0 };
	struct gpt_data data;
	struct json_val *state_doc = NULL;
	struct step_result r;
	char err[1024], path[4096], cfgpath[4200], list[256];
	uint64_t G, first_iter, log_iters = 0, log_skipped = 0, train_samples;
	double t0, tlast, loss_sum = 0;
	const char *why;
	int code, k, kind = CKPT_NONE, have = 0, from_ckpt = 0;

	owt_setprog(argv[0]);
	parse(argc, argv);

	if (o.fp16 + o.bf16 + o.fp32 > 1)
		owt_die(XUSAGE, "--fp16, --bf16 and --fp32 exclude each other");
	if (o.tp != 1 || o.pp != 1)
		owt_die(XUSAGE, "--%s-model-parallel-size: only 1 is supported",
		    o.tp != 1 ? "tensor" : "pipeline");
	if (o.mock == (ndata_args > 0))
		owt_die(XUSAGE, "%s", o.mock ? "--mock-data and --data-path "
		    "exclude each other" : "no data: give --data-path or "
		    "--mock-data");

	if (o.finetune && !o.load)
		owt_die(XUSAGE, "--finetune needs --load");

	/*
	 * A checkpoint supplies what the options do not. The table in
	 * gpt-train(1): nothing there starts from scratch; a run's iteration
	 * resumes, and must be complete; weights alone (or --finetune) start
	 * at iteration 0 with a new optimizer.
	 */
	if (o.load && ckpt_resolve(o.load, path, sizeof path, &kind, err,
	    sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	if (o.load && kind == CKPT_NONE) {
		if (o.finetune)
			owt_die(XDATA, "%s; nothing to fine-tune from", err);
		owt_warn("%s; starting from scratch", err);
	}
	if (kind != CKPT_NONE) {
		from_ckpt = kind == CKPT_RUN && !o.finetune;
		if ((have = ckpt_complete(path, from_ckpt ? CKPT_F_STATE |
		    (o.no_load_optim ? 0 : CKPT_F_OPTIM) : 0, err, sizeof err,
		    &code)) < 0)
			owt_die(code, "%s", err);
		snprintf(cfgpath, sizeof cfgpath, "%s/config.json", path);
		if (ckpt_read_config(cfgpath, &cfg, err, sizeof err, &code) < 0 ||
		    ckpt_check_model(path, &cfg, err, sizeof err, &code) < 0)
			owt_die(code, "%s", err);
		merge_config(path, &cfg);
	}
	if (from_ckpt) {
		if ((k = ckpt_load_state(path, &tr.st, &state_doc, err,
		    sizeof err, &code)) != 0)
			owt_die(k < 0 ? code : XDATA, "%s%s", k < 0 ? err : path,
			    k < 0 ? "" : ": no trainer_state.json");
		if (!GIVEN("seed"))
			o.seed = tr.st.seed;
		merge_args(path, json_doc_get(state_doc, "args"), 0);
		if (!(have & CKPT_F_OPTIM))
			owt_warn("%s: no optimizer.safetensors: resuming with "
			    "new AdamW moments (--no-load-optim)", path);
	}
	/* A run that does not resume would mix its saves with another's. */
	if (o.save && !from_ckpt && ckpt_existing(o.save, list,
	    sizeof list) > 0) {
		if (!o.force)
			owt_die(XDATA, "%s: already holds checkpoints (%s) of a "
			    "run this one does not resume: --load %s resumes "
			    "it, --force replaces them", o.save, list, o.save);
		replace_old = 1;
	}

	if (o.train_iters == 0 && o.train_samples == 0)
		owt_die(XUSAGE, "one of --train-iters and --train-samples is "
		    "required");
	if (o.train_iters && o.train_samples && GIVEN("train-iters") &&
	    GIVEN("train-samples"))
		owt_die(XUSAGE, "--train-iters and --train-samples exclude "
		    "each other");
	if (!GIVEN("global-batch-size") && o.global == 0)
		o.global = o.micro;
	if (o.global % o.micro != 0)
		owt_die(XUSAGE, "--global-batch-size %d is not a multiple of "
		    "--micro-batch-size %d", o.global, o.micro);
	if (o.seq > o.maxpos)
		owt_die(XUSAGE, "--seq-length %d is beyond the %d positions of "
		    "the model (--max-position-embeddings%s)", o.seq, o.maxpos,
		    kind != CKPT_NONE ? ", n_positions in the checkpoint" : "");
	G = (uint64_t)o.global;
	train_samples = o.train_samples ? o.train_samples : o.train_iters * G;
	if (o.train_iters == 0)
		o.train_iters = train_samples / G;
	/* Megatron's schedule, in samples */
	tr.lr.style = decay_style(o.decay_style);
	tr.lr.max_lr = o.lr;
	tr.lr.min_lr = o.min_lr;
	tr.lr.decay = GIVEN("lr-decay-samples") ? o.decay_samples :
	    (GIVEN("lr-decay-iters") ? o.decay_iters : o.train_iters) * G;
	tr.lr.warmup = GIVEN("lr-warmup-samples") ? o.warmup_samples :
	    GIVEN("lr-warmup-iters") ? o.warmup_iters * G :
	    (uint64_t)(o.warmup_fraction * (double)tr.lr.decay);
	o.decay_samples = tr.lr.decay;
	o.warmup_samples = tr.lr.warmup;
	if (from_ckpt)
		merge_args(path, json_doc_get(state_doc, "args"), 1);
	if (o.min_lr > o.lr)
		owt_die(XUSAGE, "--min-lr %g%s is above --lr %g", o.min_lr,
		    GIVEN("min-lr") ? "" : " (the default)", o.lr);
	if (tr.lr.warmup >= tr.lr.decay && tr.lr.style != SCHEDULE_CONSTANT &&
	    tr.lr.style != SCHEDULE_INVSQRT)
		owt_die(XUSAGE, "the warmup (%" PRIu64 " samples) must be "
		    "shorter than the decay (%" PRIu64 " samples)",
		    tr.lr.warmup, tr.lr.decay);

	if (o.workers == 0)
		o.workers = owt_ncpu();
	omp_set_num_threads(o.workers);
	blas_init(o.workers);

	cfg.nlayer = o.layers;
	cfg.nhead = o.heads;
	cfg.nembd = o.hidden;
	cfg.maxpos = o.maxpos;
	cfg.vocab = o.vocab;
	cfg.vocab_pad = gpt_pad_vocab(o.vocab, o.vocab_div);
	if (kind == CKPT_NONE)
		cfg.ln_eps = 1e-5f;
	cfg.hidden_dropout = (float)o.hidden_dropout;
	cfg.attn_dropout = (float)o.attn_dropout;
	if (gpt_device_open(&dev, o.device, o.fp16 ? GPT_FP16 : o.bf16 ?
	    GPT_BF16 : o.fp32 ? GPT_FP32 : GPT_PREC_DEFAULT, 1, err,
	    sizeof err) < 0)
		owt_die(XUSAGE, "%s", err);
	if (gpt_init(&model, &cfg, dev.be, err, sizeof err) < 0)
		owt_die(XUSAGE, "%s", err);
	if (gpt_set_batch(&model, o.micro, o.seq, err, sizeof err) < 0)
		owt_die(XUSAGE, "%s", err);
	if (from_ckpt)
		saved_iter = tr.st.iteration;
	if (kind != CKPT_NONE) {
		if (ckpt_load_model(path, &model, err, sizeof err, &code) < 0)
			owt_die(code, "%s", err);
		if (from_ckpt && !o.no_load_optim &&
		    ckpt_load_optim(path, &model, err, sizeof err, &code) < 0)
			owt_die(code, "%s", err);
	} else {
		gpt_init_weights(&model, o.seed, (float)o.init_std);
	}
	tr.st.seed = o.seed;
	tr.m = &model;
	tr.micro = o.micro;
	tr.T = o.seq;
	tr.nmicro = o.global / o.micro;
	tr.adam = (struct adamw){ (float)o.beta1, (float)o.beta2,
	    (float)o.eps, (float)o.wd };
	tr.clip = (float)o.clip;
	tr.scaler = (struct loss_scaler){ o.min_scale, o.scale_window,
	    o.hysteresis };
	/* A checkpoint's scale goes on in fp16 and is dropped in other precisions. */
	if (dev.prec != GPT_FP16)
		tr.st.loss_scale = 0;
	else if (tr.st.loss_scale == 0)
		train_scaler_start(&tr.scaler, &tr.st, o.initial_scale);
	train_init(&tr);
	args_text = args_json();

	if (gpt_data_open(&data, o.mock ? NULL : data_args, ndata_args,
	    o.split, (uint32_t)o.seed, o.seq, (uint32_t)o.vocab, train_samples,
	    (o.train_iters / o.eval_interval + 1) * o.eval_iters * G,
	    o.eval_iters * G, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);

	say("GPT-2: %d layers, %d hidden, %d heads, %d positions, vocabulary "
	    "%d (padded to %d): %zu parameters", cfg.nlayer, cfg.nembd,
	    cfg.nhead, cfg.maxpos, cfg.vocab, cfg.vocab_pad, gpt_nparams(&cfg));
	say("%s", gpt_device_desc(&dev, o.workers));
	say("%s", data.desc);
	if (tr.st.iteration > 0)
		say("resuming at iteration %" PRIu64 ", %" PRIu64 " samples "
		    "consumed", tr.st.iteration, tr.st.consumed_train);

	if (o.log_json && (logf_json = fopen(o.log_json, from_ckpt ? "a" :
	    "w")) == NULL)
		owt_die_errno(XSYS, "cannot create '%s'", o.log_json);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);

	t0 = tlast = owt_now();
	first_iter = tr.st.iteration;
	while (tr.st.iteration < o.train_iters) {
		k = train_iteration(&tr, &data.src[0], &r, err, sizeof err, &code);
		if (k < 0)
			owt_die(code, "%s", err);
		if (k > 0)
			owt_die(XDATA, "iteration %" PRIu64 ": the %s is %g; "
			    "stopping without saving%s", tr.st.iteration + 1,
			    isfinite(r.loss) ? "gradient norm" : "loss",
			    isfinite(r.loss) ? r.grad_norm : r.loss,
			    saved_iter != UINT64_MAX ? " (the last checkpoint "
			    "is intact)" : "");
		if (r.skipped) {	/* fp16 overflow: Megatron counts, not averages, it */
			log_skipped++;
		} else {
			loss_sum += r.loss;
			log_iters++;
		}
		why = stop_signal == SIGINT ? "interrupted" :
		    stop_signal == SIGHUP ? "hung up" :
		    stop_signal ? "terminated" :
		    o.exit_interval && tr.st.iteration % o.exit_interval == 0 ?
		    "exit interval reached" :
		    o.exit_mins > 0 && owt_now() - t0 >= o.exit_mins * 60 ?
		    "exit duration reached" : NULL;
		if (tr.st.iteration % o.log_interval == 0 ||
		    tr.st.iteration == o.train_iters || why) {
			double now = owt_now(), n = (double)(log_iters + log_skipped);
			double tps = n * G * o.seq / (now - tlast);
			double loss = log_iters ? loss_sum / log_iters : NAN;
			char scale[96] = "", lossj[32];

			if (r.loss_scale > 0)
				snprintf(scale, sizeof scale, " | loss scale %g | "
				    "skipped %" PRIu64, tr.st.loss_scale, log_skipped);
			say("iteration %" PRIu64 "/%" PRIu64 " | loss %.6f | lr "
			    "%.4e | grad norm %.4f%s | %.0f tokens/s | %.1f s",
			    tr.st.iteration, o.train_iters, loss, r.lr,
			    r.grad_norm, scale, tps, now - t0);
			if (r.loss_scale > 0)
				snprintf(scale, sizeof scale, ", \"loss_scale\": "
				    "%.17g, \"skipped\": %" PRIu64, tr.st.loss_scale,
				    log_skipped);
			snprintf(lossj, sizeof lossj, log_iters ? "%.9g" :
			    "null", loss);	/* null: every iteration skipped */
			log_json("{\"iteration\": %" PRIu64 ", \"loss\": %s, "
			    "\"lr\": %.9g, \"grad_norm\": %.9g%s, "
			    "\"tokens_per_s\": %.1f, \"elapsed_s\": %.3f}",
			    tr.st.iteration, lossj, r.lr, r.grad_norm, scale, tps,
			    now - t0);
			loss_sum = 0;
			log_iters = log_skipped = 0;
			tlast = now;
		}
		if (tr.st.iteration % o.eval_interval == 0)
			validate(&data);
		if (o.save_interval && tr.st.iteration % o.save_interval == 0)
			save();
		if (why) {
			save();
			say("%s at iteration %" PRIu64 "; exiting", why,
			    tr.st.iteration);
			goto out;
		}
	}
	if (tr.st.iteration > first_iter)
		save();
	validate(&data);
	if (o.eval_iters > 0 && data.have[2])
		evaluate(&data.src[2], 0, "test");
out:
	if (gpt_device_peak_bytes(&dev) > 0)
		say("peak GPU memory %.2f GB", gpt_device_peak_bytes(&dev) / 1e9);
	if (logf_json && fclose(logf_json) != 0)
		owt_die_errno(XSYS, "%s: write error", o.log_json);
	gpt_data_close(&data);
	json_doc_free(state_doc);
	train_free(&tr);
	gpt_free(&model);
	free(args_text);
	free(data_args);
	return owt_finish(XOK);
}
