/* ckpt_args.c - a run's options against a checkpoint: --load's rules, config.json's shape, trainer_state.json's "args" */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/buf.h"
#include "train/ckpt_args.h"
#include "core/json.h"
#include "core/util.h"

/* The CKPT_ARGS_MODEL options: their keys in config.json and fields of the config. */
static const struct { const char *opt, *key; size_t off; } model_keys[] = {
	{ "hidden-size", "n_embd", offsetof(struct gpt_config, nembd) },
	{ "max-position-embeddings", "n_positions",
	    offsetof(struct gpt_config, maxpos) },
	{ "num-attention-heads", "n_head", offsetof(struct gpt_config, nhead) },
	{ "num-layers", "n_layer", offsetof(struct gpt_config, nlayer) },
	{ "vocab-size", "vocab_size", offsetof(struct gpt_config, vocab) },
};

/* A kept option and the options that set the same quantity. */
static const char *const groups[][4] = {
	{ "lr-warmup-samples", "lr-warmup-iters", "lr-warmup-fraction", NULL },
	{ "lr-decay-samples", "lr-decay-iters", NULL },
	{ "train-iters", "train-samples", NULL },
	{ "train-samples", "train-iters", NULL },
};

/* What an option meant in a checkpoint saved before it existed. */
static const struct { const char *opt, *value; } before[] = {
	{ "split-rounding", "core" },	/* Megatron-core's order, then the only one */
};

/* Whether option i, or another that sets its quantity, was given. */
static int
given_as(const struct opt_prog *p, const char *given, size_t i)
{
	size_t g;
	int k, j;

	for (g = 0; g < sizeof groups / sizeof *groups; g++) {
		if (strcmp(groups[g][0], p->opt[i].name) != 0)
			continue;
		for (j = 0; j < 4 && groups[g][j]; j++)
			if ((k = opt_find(p, groups[g][j])) >= 0 && given[k])
				return 1;
		return 0;
	}
	return given[i];
}

/*
 * The value of option d in a checkpoint's "args", as text for messages:
 * 0 when it equals d's, 1 when it differs, -1 when it is of another type.
 */
static int
arg_from(const struct opt *d, const struct json_val *v, char *text,
    size_t size)
{
	if (d->type == OPT_STR) {
		if (v->type != JV_STRING)
			return -1;
		snprintf(text, size, "%s", v->str);
		return strcmp(*(const char **)d->p, v->str) != 0;
	}
	if (v->type != JV_NUMBER)
		return -1;
	snprintf(text, size, "%.9g", v->num);
	switch (d->type) {
	case OPT_INT:
		return *(int *)d->p != (int)v->num;
	case OPT_U64:
		return *(uint64_t *)d->p != (uint64_t)v->num;
	case OPT_DOUBLE:
		return *(double *)d->p != v->num;
	}
	return -1;
}

static void
arg_set(const struct opt *d, const struct json_val *v)
{
	switch (d->type) {
	case OPT_INT: *(int *)d->p = (int)v->num; break;
	case OPT_U64: *(uint64_t *)d->p = (uint64_t)v->num; break;
	case OPT_DOUBLE: *(double *)d->p = v->num; break;
	case OPT_STR: *(const char **)d->p = v->str; break;	/* l->state's */
	}
}

static int
kept(const struct opt *d)
{
	return d->tag == CKPT_ARGS_KEEP || d->tag == CKPT_ARGS_SCHED;
}

int
ckpt_args_config(const struct opt_prog *p, const char *given,
    const char *path, const struct gpt_config *c, char *err,
    size_t errsize, int *code)
{
	const struct opt *d;
	size_t i;
	int k, v;

	for (i = 0; i < sizeof model_keys / sizeof *model_keys; i++) {
		if ((k = opt_find(p, model_keys[i].opt)) < 0)
			continue;
		d = &p->opt[k];
		v = *(const int *)((const char *)c + model_keys[i].off);
		if (given[k] && *(int *)d->p != v)
			return owt_fail(err, errsize, code, XDATA,
			    "%s/config.json: %s is %d, but --%s is %d", path,
			    model_keys[i].key, v, d->name, *(int *)d->p);
		*(int *)d->p = v;
	}
	return 0;
}

int
ckpt_args_merge(struct ckpt_args_load *l, const struct opt_prog *p, char *given,
    int sched, char *err, size_t errsize, int *code)
{
	const struct json_val *args = json_doc_get(l->state, "args"), *v;
	char *given0 = xmalloc(p->n), text[256];
	size_t i;
	int k, r = 0;

	memcpy(given0, given, p->n);
	if ((k = opt_find(p, "seed")) >= 0 && !given[k] &&
	    p->opt[k].type == OPT_U64)
		*(uint64_t *)p->opt[k].p = l->st.seed;
	for (i = 0; i < p->n; i++) {
		const struct opt *d = &p->opt[i];

		if (!kept(d))
			continue;
		if ((v = json_doc_get(args, d->name)) == NULL || v->type == JV_NULL)
			continue;
		if (arg_from(d, v, text, sizeof text) < 0) {
			r = owt_fail(err, errsize, code, XDATA,
			    "%s/trainer_state.json: bad value of '%s'", l->path,
			    d->name);
			break;
		}
		if (given_as(p, given0, i) && !(d->tag == CKPT_ARGS_SCHED &&
		    sched == CKPT_ARGS_USE_CKPT))
			continue;
		arg_set(d, v);
		given[i] = 1;
	}
	for (i = 0; r == 0 && i < sizeof before / sizeof *before; i++)
		if ((k = opt_find(p, before[i].opt)) >= 0 && !given[k] &&
		    json_doc_get(args, before[i].opt) == NULL)
			*(const char **)p->opt[k].p = before[i].value;
	free(given0);
	return r;
}

/*
 * Megatron's torch checkpoint file (--load X.pt): one that is missing
 * starts from scratch, as in Megatron (a warning; 1), one there is not
 * read (-1); 0: dir is not one.
 */
static int
torch_file(struct ckpt_args_load *l, const char *dir, int finetune,
    char *err, size_t errsize, int *code)
{
	size_t n = strlen(dir);
	struct stat sb;

	if (n < 3 || strcmp(dir + n - 3, ".pt") != 0)
		return 0;
	if (stat(dir, &sb) == 0)
		return owt_fail(err, errsize, code, XDATA, "%s: a Megatron-LM "
		    "torch checkpoint, which gpt-train does not read: convert "
		    "it with contrib/install/megatron-to-owt", dir);
	if (errno != ENOENT)
		return owt_fail_errno(err, errsize, code, XSYS,
		    "%s: cannot open", dir);
	if (finetune)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: no such file; nothing to fine-tune from", dir);
	snprintf(l->warn, sizeof l->warn, "%s: no such file; starting from "
	    "scratch", dir);
	return 1;
}

int
ckpt_args_open(struct ckpt_args_load *l, const struct opt_prog *p,
    const char *given, const char *dir, int run_need, char *err,
    size_t errsize, int *code)
{
	char cfgpath[4200];

	memset(l, 0, sizeof *l);
	if (ckpt_resolve(dir, l->path, sizeof l->path, &l->kind, err, errsize,
	    code) < 0)
		return -1;
	if (l->kind == CKPT_NONE)
		return 0;
	if ((l->have = ckpt_complete(l->path, l->kind == CKPT_RUN ? run_need :
	    0, err, errsize, code)) < 0)
		return -1;
	snprintf(cfgpath, sizeof cfgpath, "%s/config.json", l->path);
	if (ckpt_read_config(cfgpath, &l->cfg, err, errsize, code) < 0 ||
	    ckpt_check_model(l->path, &l->cfg, err, errsize, code) < 0 ||
	    ckpt_args_config(p, given, l->path, &l->cfg, err, errsize,
	    code) < 0)
		return -1;
	return 0;
}

int
ckpt_args_load(struct ckpt_args_load *l, const struct opt_prog *p,
    char *given, const char *dir, int finetune, int no_load_optim,
    int sched, char *err, size_t errsize, int *code)
{
	int k;

	memset(l, 0, sizeof *l);
	if (torch_file(l, dir, finetune, err, errsize, code) != 0)
		return l->warn[0] != '\0' ? 0 : -1;
	if (ckpt_args_open(l, p, given, dir, finetune ? 0 : CKPT_F_STATE |
	    (no_load_optim ? 0 : CKPT_F_OPTIM), err, errsize, code) < 0)
		return -1;
	if (l->kind == CKPT_NONE) {
		if (finetune) {
			size_t n = strlen(err);

			snprintf(err + n, errsize - n, "; nothing to fine-tune "
			    "from");
			*code = XDATA;
			return -1;
		}
		snprintf(l->warn, sizeof l->warn, "%s; starting from scratch",
		    err);
		return 0;
	}
	l->resume = l->kind == CKPT_RUN && !finetune;
	if (!l->resume)
		return 0;
	if ((k = ckpt_load_state(l->path, &l->st, &l->state, err, errsize,
	    code)) != 0) {
		if (k > 0)
			owt_fail(err, errsize, code, XDATA,
			    "%s: no trainer_state.json", l->path);
		return -1;
	}
	if (ckpt_args_merge(l, p, given, sched, err, errsize, code) < 0)
		return -1;
	if (!(l->have & CKPT_F_OPTIM))
		snprintf(l->warn, sizeof l->warn, "%s: no optimizer.safetensors: "
		    "resuming with new AdamW moments (--no-load-optim)", l->path);
	return 0;
}

int
ckpt_args_save(const struct ckpt_args_load *l, const char *dir, int force,
    int *replace, char *err, size_t errsize, int *code)
{
	char list[256];

	if (dir == NULL || l->resume || ckpt_existing(dir, list,
	    sizeof list) <= 0)
		return 0;
	if (!force)
		return owt_fail(err, errsize, code, XDATA, "%s: already holds "
		    "checkpoints (%s) of a run this one does not resume: --load "
		    "%s resumes it, --force replaces them", dir, list, dir);
	*replace = 1;
	return 0;
}

int
ckpt_args_check(const struct ckpt_args_load *l, const struct opt_prog *p,
    const char *given, int sched, char *err, size_t errsize, int *code)
{
	const struct json_val *args, *v;
	char text[256];
	size_t i;

	if (!l->resume || sched != CKPT_ARGS_CHECK)
		return 0;
	args = json_doc_get(l->state, "args");
	for (i = 0; i < p->n; i++) {
		const struct opt *d = &p->opt[i];

		if (d->tag != CKPT_ARGS_SCHED || !given_as(p, given, i))
			continue;
		if ((v = json_doc_get(args, d->name)) == NULL || v->type == JV_NULL)
			continue;
		if (arg_from(d, v, text, sizeof text) > 0)
			return owt_fail(err, errsize, code, XDATA,
			    "%s/trainer_state.json: %s is %s, but the options "
			    "make it differ (use "
			    "--override-opt_param-scheduler)", l->path, d->name,
			    text);
	}
	return 0;
}

void
ckpt_args_free(struct ckpt_args_load *l)
{
	json_doc_free(l->state);
	l->state = NULL;
}

char *
ckpt_args_json(const struct opt_prog *p)
{
	struct buf b = { 0 };
	struct json_w w;
	size_t i;

	/* "args" of trainer_state.json, a member of its pretty top level */
	json_w_nested(&w, &b, JSON_PRETTY, 1);
	json_w_obj(&w);
	for (i = 0; i < p->n; i++) {
		const struct opt *d = &p->opt[i];

		if (!kept(d))
			continue;
		if (d->type == OPT_U64 && *(uint64_t *)d->p == 0 &&
		    d->tag == CKPT_ARGS_KEEP)
			continue;	/* unset: --train-samples */
		json_w_key(&w, d->name);
		switch (d->type) {
		case OPT_INT: json_w_int(&w, *(int *)d->p); break;
		case OPT_U64: json_w_u64(&w, *(uint64_t *)d->p); break;
		case OPT_DOUBLE: json_w_num(&w, "%.17g", *(double *)d->p); break;
		case OPT_STR: json_w_strz(&w, *(const char **)d->p); break;
		}
	}
	json_w_end(&w);
	return b.p;
}
