/* ckpt.c - checkpoints: Hugging Face GPT-2 safetensors and config.json, optimizer and trainer state, atomic saves */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/ckpt.h"
#include "model/ckpt_tok.h"
#include "core/input.h"
#include "core/json.h"
#include "core/outfile.h"
#include "model/safetensors.h"
#include "core/util.h"

#define LATEST "latest_checkpointed_iteration.txt"

/*
 * A file inside a checkpoint's temporary directory: created with 0666
 * under the umask; outfile_commit syncs it with the directory.
 */
static int
write_file(const char *path, const void *p, size_t n, char *err,
    size_t errsize)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

	if (fd < 0)
		return owt_fail_errno(err, errsize, NULL, XSYS,
		    "%s: cannot create", path);
	if (outfile_write_all(fd, p, n) < 0) {
		owt_fail_errno(err, errsize, NULL, XSYS, "%s: write error",
		    path);
		close(fd);
		return -1;
	}
	if (close(fd) < 0)
		return owt_fail_errno(err, errsize, NULL, XSYS,
		    "%s: write error", path);
	return 0;
}

static int
rm_entry(const char *path, const struct stat *st, int type, struct FTW *f)
{
	return remove(path);
}

static int
rm_rf(const char *path)
{
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* config.json */

char *
ckpt_config_json(const struct gpt_config *c)
{
	const struct ckpt_tok *tk = ckpt_tok_get();
	struct buf b = { 0 };
	struct json_w w;

	json_w_init(&w, &b, JSON_PRETTY);
	json_w_obj(&w);
	json_w_kstr(&w, "activation_function", "gelu_new");
	json_w_key(&w, "architectures");
	json_w_arr(&w);
	json_w_strz(&w, "GPT2LMHeadModel");
	json_w_end(&w);
	json_w_key(&w, "attn_pdrop");
	json_w_num(&w, "%.9g", c->attn_dropout);
	if (tk != NULL) {
		if (tk->bos != BPE_NOID) {
			json_w_ku64(&w, "bos_token_id", tk->bos);
		}
	} else if (c->vocab == 50257) {
		json_w_kint(&w, "bos_token_id", 50256);
	}
	json_w_key(&w, "embd_pdrop");
	json_w_num(&w, "%.9g", c->hidden_dropout);
	if (tk != NULL) {
		if (tk->eos != BPE_NOID) {
			json_w_ku64(&w, "eos_token_id", tk->eos);
		}
	} else if (c->vocab == 50257) {
		json_w_kint(&w, "eos_token_id", 50256);
	}
	json_w_key(&w, "initializer_range");
	json_w_raw(&w, "0.02", 4);
	json_w_key(&w, "layer_norm_epsilon");
	json_w_num(&w, "%.9g", c->ln_eps);
	json_w_kstr(&w, "model_type", "gpt2");
	json_w_kint(&w, "n_ctx", c->maxpos);
	json_w_kint(&w, "n_embd", c->nembd);
	json_w_kint(&w, "n_head", c->nhead);
	json_w_key(&w, "n_inner");
	json_w_null(&w);
	json_w_kint(&w, "n_layer", c->nlayer);
	json_w_kint(&w, "n_positions", c->maxpos);
	if (tk != NULL)
		ckpt_tok_json(tk, &w);
	json_w_key(&w, "resid_pdrop");
	json_w_num(&w, "%.9g", c->hidden_dropout);
	json_w_key(&w, "scale_attn_weights");
	json_w_bool(&w, 1);
	json_w_key(&w, "tie_word_embeddings");
	json_w_bool(&w, 1);
	json_w_kstr(&w, "torch_dtype", "float32");
	json_w_key(&w, "use_cache");
	json_w_bool(&w, 1);
	json_w_kint(&w, "vocab_size", c->vocab);
	json_w_end(&w);
	buf_addc(&b, '\n');
	return b.p;
}

/* An integer member in [1, 2^30]: 1 found, 0 absent, -1 bad. */
static int
get_int(const struct json_val *doc, const char *key, int *out)
{
	const struct json_val *v = json_doc_get(doc, key);

	if (v == NULL || v->type == JV_NULL)
		return 0;
	if (v->type != JV_NUMBER || v->num != floor(v->num) || v->num < 1 ||
	    v->num > (1 << 30))
		return -1;
	*out = (int)v->num;
	return 1;
}

int
ckpt_read_config(const char *path, struct gpt_config *c, char *err,
    size_t errsize, int *code)
{
	static const struct {
		const char *key;
		size_t off;
	} ints[] = {
		{ "n_layer", offsetof(struct gpt_config, nlayer) },
		{ "n_head", offsetof(struct gpt_config, nhead) },
		{ "n_embd", offsetof(struct gpt_config, nembd) },
		{ "vocab_size", offsetof(struct gpt_config, vocab) },
		{ "n_positions", offsetof(struct gpt_config, maxpos) },
	};
	struct json_val *doc;
	const struct json_val *v;
	size_t i;
	int r, inner;

	if ((doc = json_doc_load(path, err, errsize, code)) == NULL)
		return -1;
	r = -1;
	for (i = 0; i < sizeof ints / sizeof *ints; i++) {
		int *field = (int *)((char *)c + ints[i].off), k;

		k = get_int(doc, ints[i].key, field);
		if (k == 0 && strcmp(ints[i].key, "n_positions") == 0)
			k = get_int(doc, "n_ctx", field);
		if (k <= 0) {
			owt_fail(err, errsize, code, XDATA, "%s: %s '%s'", path,
			    k == 0 ? "missing" : "bad", ints[i].key);
			goto out;
		}
	}
	c->ln_eps = 1e-5f;
	if ((v = json_doc_get(doc, "layer_norm_epsilon")) != NULL) {
		if (v->type != JV_NUMBER || !(v->num > 0 && v->num < 1)) {
			owt_fail(err, errsize, code, XDATA,
			    "%s: bad 'layer_norm_epsilon'", path);
			goto out;
		}
		c->ln_eps = (float)v->num;
	}
	if ((v = json_doc_get(doc, "activation_function")) != NULL &&
	    (v->type != JV_STRING || (strcmp(v->str, "gelu_new") != 0 &&
	    strcmp(v->str, "gelu_pytorch_tanh") != 0))) {
		owt_fail(err, errsize, code, XDATA, "%s: activation_function "
		    "'%s' is not supported (only the tanh GELU, gelu_new)",
		    path, v->type == JV_STRING ? v->str : "?");
		goto out;
	}
	if ((v = json_doc_get(doc, "model_type")) != NULL &&
	    (v->type != JV_STRING || strcmp(v->str, "gpt2") != 0)) {
		owt_fail(err, errsize, code, XDATA,
		    "%s: model_type '%s' is not gpt2", path,
		    v->type == JV_STRING ? v->str : "?");
		goto out;
	}
	if ((r = get_int(doc, "n_inner", &inner)) != 0 &&
	    (r < 0 || inner != 4 * c->nembd)) {
		r = -1;
		owt_fail(err, errsize, code, XDATA,
		    "%s: n_inner must be 4 * n_embd", path);
		goto out;
	}
	if ((v = json_doc_get(doc, "tie_word_embeddings")) != NULL &&
	    v->type == JV_BOOL && v->num == 0) {
		r = -1;
		owt_fail(err, errsize, code, XDATA,
		    "%s: untied output embeddings are not supported", path);
		goto out;
	}
	r = 0;
out:
	json_doc_free(doc);
	return r;
}

/* Model and optimizer tensors */

struct safetensors_out *
ckpt_tensors(const struct gpt *m, const float *buf, const char *pre, size_t *n)
{
	const struct gpt_config *c = &m->cfg;
	struct safetensors_out *t = xcalloc((size_t)GPT_NPARAM * c->nlayer,
	    sizeof *t);
	char name[80];
	int k, l;

	*n = 0;
	for (k = 0; k < GPT_NPARAM; k++) {
		const struct gpt_tensor *g = &m->t[k];
		int nl = g->layered ? c->nlayer : 1;

		for (l = 0; l < nl; l++) {
			struct safetensors_out *o = &t[(*n)++];

			gpt_param_name(name, sizeof name, k, l, 1);
			snprintf(o->name, sizeof o->name, "%s%s", pre, name);
			o->rank = g->rank;
			o->shape[0] = k == GPT_WTE ? c->vocab : g->dim[0];
			o->shape[1] = g->dim[1];
			o->data = buf + g->off + (size_t)l * (g->n / nl);
		}
	}
	return t;
}

/* params, mm, mv: the weights and moments on the host, or NULL for m's */
static int
save_files(const char *tmp, struct gpt *m, const float *params,
    const float *mm, const float *mv, const struct train_state *st,
    const char *args_json, int with_optim, char *err, size_t errsize)
{
	struct safetensors_out *t, *t2;
	struct buf b = { 0 };
	struct json_w w;
	char path[4200], step[24];
	float *host = xmalloc(m->nparams * sizeof *host);
	float *host2 = NULL;
	char *cfg;
	size_t n;
	int r = -1;

	if (params == NULL)
		gpt_get(m, GPT_PARAMS, host);
	t = ckpt_tensors(m, params ? params : host, "", &n);
	snprintf(path, sizeof path, "%s/model.safetensors", tmp);
	if (safetensors_write(path, NULL, t, n, err, errsize) < 0)
		goto out;
	cfg = ckpt_config_json(&m->cfg);
	snprintf(path, sizeof path, "%s/config.json", tmp);
	r = write_file(path, cfg, strlen(cfg), err, errsize);
	free(cfg);
	if (r < 0 || (ckpt_tok_get() != NULL &&
	    (r = ckpt_tok_write(ckpt_tok_get(), tmp, err, errsize)) < 0))
		goto out;
	r = -1;
	if (with_optim) {
		if (mm == NULL) {
			host2 = xmalloc(m->nparams * sizeof *host2);
			gpt_get(m, GPT_ADAM_M, host);
			gpt_get(m, GPT_ADAM_V, host2);
			mm = host;
			mv = host2;
		}
		free(t);
		t = xcalloc(2 * n, sizeof *t);
		t2 = ckpt_tensors(m, mm, "exp_avg.", &n);
		memcpy(t, t2, n * sizeof *t);
		free(t2);
		t2 = ckpt_tensors(m, mv, "exp_avg_sq.", &n);
		memcpy(t + n, t2, n * sizeof *t);
		free(t2);
		snprintf(step, sizeof step, "%" PRIu64, m->step);
		json_w_members(&w, &b, JSON_COMPACT);
		json_w_key(&w, "step");
		json_w_strz(&w, step);	/* safetensors' metadata: strings only */
		snprintf(path, sizeof path, "%s/optimizer.safetensors", tmp);
		r = safetensors_write(path, b.p, t, 2 * n, err, errsize);
		buf_free(&b);
		if (r < 0)
			goto out;
		r = -1;
	}
	json_w_init(&w, &b, JSON_PRETTY);
	json_w_obj(&w);
	json_w_kstr(&w, "format", "owt gpt-train 1");
	json_w_ku64(&w, "iteration", st->iteration);
	json_w_ku64(&w, "consumed_train_samples", st->consumed_train);
	json_w_ku64(&w, "consumed_valid_samples", st->consumed_valid);
	json_w_ku64(&w, "scheduler_samples", st->sched_samples);
	json_w_ku64(&w, "seed", st->seed);
	if (st->loss_scale > 0) {
		json_w_key(&w, "loss_scale");
		json_w_num(&w, "%.17g", st->loss_scale);
		json_w_ku64(&w, "loss_scale_growth", st->ls_growth);
		json_w_ku64(&w, "loss_scale_hysteresis", st->ls_hyst);
	}
	json_w_key(&w, "args");
	if (args_json != NULL)
		json_w_raw(&w, args_json, strlen(args_json));
	else
		json_w_raw(&w, "{}", 2);
	json_w_end(&w);
	buf_addc(&b, '\n');
	snprintf(path, sizeof path, "%s/trainer_state.json", tmp);
	r = write_file(path, b.p, b.len, err, errsize);
out:
	buf_free(&b);
	free(t);
	free(host);
	free(host2);
	return r;
}

int
ckpt_save(const char *dir, struct gpt *m, const struct train_state *st,
    const char *args_json, int with_optim, char *err, size_t errsize,
    int *code)
{
	return ckpt_save_host(dir, m, NULL, NULL, NULL, st, args_json,
	    with_optim, err, errsize, code);
}

int
ckpt_save_host(const char *dir, struct gpt *m, const float *params,
    const float *mm, const float *mv, const struct train_state *st,
    const char *args_json, int with_optim, char *err, size_t errsize,
    int *code)
{
	struct outfile o;
	char final[4096], num[32];
	int n;

	snprintf(final, sizeof final, "%s/iter_*", dir);
	if (outfile_mkdirs(final, err, errsize, code) < 0)
		return -1;
	outfile_sweep(final);
	snprintf(final, sizeof final, "%s/" LATEST, dir);
	outfile_sweep(final);
	snprintf(final, sizeof final, "%s/iter_%07" PRIu64, dir, st->iteration);
	if (outfile_open_dir(&o, final, err, errsize, code) < 0)
		return -1;
	if (save_files(o.tmp, m, params, mm, mv, st, args_json, with_optim,
	    err, errsize) < 0) {
		*code = XSYS;
		outfile_abort(&o);
		return -1;
	}
	if (outfile_commit(&o, 0, err, errsize, code) < 0)
		return -1;
	snprintf(final, sizeof final, "%s/" LATEST, dir);
	n = snprintf(num, sizeof num, "%" PRIu64, st->iteration);
	if (outfile_open(&o, final, err, errsize, code) < 0)
		return -1;
	if (outfile_write_all(o.fd, num, (size_t)n) < 0) {
		owt_fail_errno(err, errsize, code, XSYS, "%s: write error",
		    final);
		outfile_abort(&o);
		return -1;
	}
	return outfile_commit(&o, 0, err, errsize, code);
}

/*
 * -1 with err when dir, which has no model.safetensors, holds a checkpoint
 * in another format; else 0.
 */
static int
unknown_layout(const char *dir, char *err, size_t errsize, int *code)
{
	static const struct { const char *file, *what; } known[] = {
		{ "pytorch_model.bin", "a PyTorch pickle (pytorch_model.bin) "
		    "without model.safetensors: save it with safetensors "
		    "(save_pretrained(..., safe_serialization=True))" },
		{ "mp_rank_00", "a Megatron-LM torch checkpoint (mp_rank_00/): "
		    "convert it to Hugging Face GPT-2 safetensors" },
		{ "model.ckpt.index", "a TensorFlow checkpoint: convert it to "
		    "Hugging Face GPT-2 safetensors" },
	};
	char p[4200];
	struct stat sb;
	size_t i;

	for (i = 0; i < sizeof known / sizeof *known; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, known[i].file);
		if (stat(p, &sb) == 0)
			return owt_fail(err, errsize, code, XDATA, "%s: %s",
			    dir, known[i].what);
	}
	return 0;
}

/* Whether path/name exists. */
static int
has_file(const char *path, const char *name)
{
	char p[4200];
	struct stat sb;

	snprintf(p, sizeof p, "%s/%s", path, name);
	return stat(p, &sb) == 0;
}

/* Whether dir's trainer_state.json is gpt-train's (not, say, HF Trainer's). */
static int
owt_state(const char *dir)
{
	struct buf b = { 0 };
	struct json_val *doc;
	const struct json_val *v;
	char p[4200], jerr[128];
	int r = 0, code;

	snprintf(p, sizeof p, "%s/trainer_state.json", dir);
	if (input_read_file(p, &b, jerr, sizeof jerr, &code) == 0 && (doc =
	    json_doc_parse(b.p, b.len, jerr, sizeof jerr, &code)) != NULL) {
		v = json_doc_get(doc, "format");
		r = v && v->type == JV_STRING &&
		    strncmp(v->str, "owt gpt-train ", 14) == 0;
		json_doc_free(doc);
	}
	buf_free(&b);
	return r;
}

int
ckpt_resolve(const char *dir, char *path, size_t size, int *kind, char *err,
    size_t errsize, int *code)
{
	struct buf b = { 0 };
	char lp[4096], *end;
	struct stat sb;
	unsigned long long it;
	int r;

	*kind = CKPT_NONE;
	if (stat(dir, &sb) < 0) {
		if (errno != ENOENT)
			return owt_fail_errno(err, errsize, code, XSYS,
			    "%s: cannot open", dir);
		owt_fail(err, errsize, code, XDATA,
		    "%s: no such checkpoint directory", dir);
		return 0;
	}
	if (!S_ISDIR(sb.st_mode))
		return owt_fail(err, errsize, code, XDATA,
		    "%s: not a directory", dir);
	snprintf(lp, sizeof lp, "%s/" LATEST, dir);
	r = input_read_file(lp, &b, err, errsize, code);
	if (r < 0)
		goto out;
	if (r == 1) {
		r = 0;
		snprintf(path, size, "%s", dir);
		if (has_file(dir, "model.safetensors"))
			*kind = owt_state(dir) ? CKPT_RUN : CKPT_WEIGHTS;
		else if ((r = unknown_layout(dir, err, errsize, code)) == 0)
			owt_fail(err, errsize, code, XDATA,
			    "%s: no checkpoint (neither " LATEST
			    " nor model.safetensors)", dir);
		goto out;
	}
	while (b.len > 0 && (b.p[b.len - 1] == '\n' || b.p[b.len - 1] == ' '))
		b.p[--b.len] = '\0';
	if (strcmp(b.p, "release") == 0) {
		snprintf(path, size, "%s/release", dir);
		*kind = CKPT_WEIGHTS;
	} else {
		errno = 0;
		it = strtoull(b.p, &end, 10);
		if (b.len == 0 || *end != '\0' || errno != 0 || b.p[0] == '-') {
			r = owt_fail(err, errsize, code, XDATA,
			    "%s: not an iteration number", lp);
			goto out;
		}
		snprintf(path, size, "%s/iter_%07llu", dir, it);
		if (stat(path, &sb) < 0) {
			r = owt_fail(err, errsize, code, XDATA,
			    "%s: iteration %llu: no directory '%s'", lp, it,
			    path);
			goto out;
		}
		*kind = CKPT_RUN;
	}
	if (!has_file(path, "model.safetensors"))
		r = unknown_layout(path, err, errsize, code);
out:
	buf_free(&b);
	if (r < 0)
		*kind = CKPT_NONE;
	return r;
}

int
ckpt_complete(const char *path, int need, char *err, size_t errsize,
    int *code)
{
	static const char *const files[] = { "model.safetensors",
	    "config.json", "trainer_state.json", "optimizer.safetensors" };
	char missing[256] = "";
	int i, have = 0;

	need |= CKPT_F_MODEL | CKPT_F_CONFIG;
	for (i = 0; i < 4; i++) {
		if (has_file(path, files[i]))
			have |= 1 << i;
		else if (need & 1 << i)
			snprintf(missing + strlen(missing), sizeof missing -
			    strlen(missing), "%s%s", *missing ? ", " : "",
			    files[i]);
	}
	if (*missing)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: incomplete checkpoint: no %s", path, missing);
	return have;
}

/* 1 if name is a checkpoint's entry in a save directory. */
static int
is_ckpt_name(const char *name)
{
	size_t i;

	if (strcmp(name, LATEST) == 0 || strcmp(name, "release") == 0)
		return 1;
	if (strncmp(name, "iter_", 5) != 0 || name[5] == '\0')
		return 0;
	for (i = 5; name[i]; i++)
		if (name[i] < '0' || name[i] > '9')
			return 0;
	return 1;
}

static int
by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
ckpt_existing(const char *dir, char *list, size_t size)
{
	DIR *dp;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, i;

	*list = '\0';
	if ((dp = opendir(dir)) == NULL)
		return 0;
	while ((e = readdir(dp)) != NULL) {
		if (!is_ckpt_name(e->d_name))
			continue;
		names = xgrow(names, &cap, n + 1, sizeof *names);
		names[n++] = xstrdup(e->d_name);
	}
	closedir(dp);
	qsort(names, n, sizeof *names, by_str);
	for (i = 0; i < n; i++) {
		if (i < 4 || n == 5)
			snprintf(list + strlen(list), size - strlen(list),
			    "%s%s", i ? ", " : "", names[i]);
		else if (i == 4)
			snprintf(list + strlen(list), size - strlen(list),
			    " and %zu more", n - 4);
		free(names[i]);
	}
	free(names);
	return (int)n;
}

int
ckpt_remove_run(const char *dir, char *err, size_t errsize, int *code)
{
	DIR *dp;
	struct dirent *e;
	char p[4200];

	snprintf(p, sizeof p, "%s/" LATEST, dir);
	if (unlink(p) < 0 && errno != ENOENT)
		return owt_fail_errno(err, errsize, code, XSYS,
		    "%s: cannot remove", p);
	if ((dp = opendir(dir)) == NULL)
		return errno == ENOENT ? 0 : owt_fail_errno(err, errsize, code,
		    XSYS, "%s: cannot open", dir);
	while ((e = readdir(dp)) != NULL) {
		if (!is_ckpt_name(e->d_name))
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (rm_rf(p) != 0) {
			owt_fail_errno(err, errsize, code, XSYS,
			    "%s: cannot remove", p);
			closedir(dp);
			return -1;
		}
	}
	closedir(dp);
	return 0;
}

static void
shape_str(char *s, size_t size, int rank, const int64_t *d)
{
	int j;

	snprintf(s, size, "[");
	for (j = 0; j < rank; j++)
		snprintf(s + strlen(s), size - strlen(s), "%s%" PRId64,
		    j ? ", " : "", d[j]);
	snprintf(s + strlen(s), size - strlen(s), "]");
}

/*
 * Check the tensors named pre+NAME (NAME with or without "transformer.")
 * against m's layout, and with buf read them into it. The shapes come
 * from config.json, so a mismatch names it.
 */
static int
load_tensors(const struct safetensors_file *f, const char *file,
    const struct gpt *m, float *buf, const char *pre, char *err,
    size_t errsize, int *code)
{
	const struct gpt_config *c = &m->cfg;
	const struct safetensors_tensor *st;
	char name[128], alt[128], full[160], got[160], exp[64];
	int k, l, j, ok;

	for (k = 0; k < GPT_NPARAM; k++) {
		const struct gpt_tensor *g = &m->t[k];
		int nl = g->layered ? c->nlayer : 1;

		for (l = 0; l < nl; l++) {
			int64_t want[2] = { k == GPT_WTE ? c->vocab : g->dim[0],
			    g->dim[1] };

			gpt_param_name(name, sizeof name, k, l, 1);
			gpt_param_name(alt, sizeof alt, k, l, 0);
			snprintf(full, sizeof full, "%s%s", pre, name);
			if ((st = safetensors_find(f, full)) == NULL) {
				snprintf(full, sizeof full, "%s%s", pre, alt);
				st = safetensors_find(f, full);
			}
			if (st == NULL && g->layered)
				return owt_fail(err, errsize, code, XDATA,
				    "%s: no tensor '%s%s' of the %d layers of "
				    "config.json", file, pre, name, c->nlayer);
			if (st == NULL)
				return owt_fail(err, errsize, code, XDATA,
				    "%s: no tensor '%s%s'", file, pre, name);
			if (st->dtype < 0)
				return owt_fail(err, errsize, code, XDATA,
				    "%s: tensor '%s' is not F32, F16 or BF16",
				    file, full);
			ok = st->rank == g->rank;
			for (j = 0; ok && j < g->rank; j++)
				ok = st->shape[j] == want[j];
			if (!ok) {
				shape_str(got, sizeof got, st->rank, st->shape);
				shape_str(exp, sizeof exp, g->rank, want);
				return owt_fail(err, errsize, code, XDATA,
				    "%s: tensor '%s' has shape %s, expected %s",
				    file, full, got, exp);
			}
			if (buf)
				safetensors_to_f32(st, buf + g->off +
				    (size_t)l * (g->n / nl));
		}
	}
	for (j = 0; j < (int)f->n; j++) {
		const char *nm = f->t[j].name;

		if (strncmp(nm, pre, strlen(pre)) == 0)
			nm += strlen(pre);
		if (strncmp(nm, "transformer.", 12) == 0)
			nm += 12;
		if (sscanf(nm, "h.%d.", &l) == 1 && l >= c->nlayer)
			return owt_fail(err, errsize, code, XDATA, "%s: tensor "
			    "'%s' is beyond the %d layers of config.json", file,
			    f->t[j].name, c->nlayer);
	}
	return 0;
}

int
ckpt_check_model(const char *path, const struct gpt_config *c, char *err,
    size_t errsize, int *code)
{
	struct gpt_config cc = *c;
	struct gpt m;
	struct safetensors_file f;
	char file[4096], why[256];
	int r;

	snprintf(file, sizeof file, "%s/config.json", path);
	if (cc.vocab_pad < cc.vocab)
		cc.vocab_pad = cc.vocab;
	if (gpt_layout(&m, &cc, why, sizeof why) < 0)
		return owt_fail(err, errsize, code, XDATA, "%s: %s", file, why);
	snprintf(file, sizeof file, "%s/model.safetensors", path);
	if (safetensors_open(&f, file, err, errsize, code) < 0)
		return -1;
	r = load_tensors(&f, file, &m, NULL, "", err, errsize, code);
	safetensors_close(&f);
	return r;
}

int
ckpt_load_model(const char *path, struct gpt *m, char *err, size_t errsize,
    int *code)
{
	struct safetensors_file f;
	char file[4096];
	float *host;
	int r;

	snprintf(file, sizeof file, "%s/model.safetensors", path);
	if (safetensors_open(&f, file, err, errsize, code) < 0)
		return -1;
	if ((r = load_tensors(&f, file, m, NULL, "", err, errsize, code)) == 0) {
		host = xcalloc(m->nparams, sizeof *host);
		r = load_tensors(&f, file, m, host, "", err, errsize, code);
		if (r == 0)
			gpt_put(m, GPT_PARAMS, host);
		free(host);
	}
	safetensors_close(&f);
	return r;
}

int
ckpt_load_optim(const char *path, struct gpt *m, char *err, size_t errsize,
    int *code)
{
	struct safetensors_file f;
	const struct json_val *step;
	char file[4096], *end;
	float *host;
	struct stat sb;
	unsigned long long nstep;
	int r;

	snprintf(file, sizeof file, "%s/optimizer.safetensors", path);
	if (stat(file, &sb) < 0 && errno == ENOENT)
		return 1;
	if (safetensors_open(&f, file, err, errsize, code) < 0)
		return -1;
	step = json_doc_get(json_doc_get(f.hdr, "__metadata__"), "step");
	if (step == NULL || step->type != JV_STRING) {
		safetensors_close(&f);
		return owt_fail(err, errsize, code, XDATA,
		    "%s: no step in the metadata", file);
	}
	errno = 0;
	nstep = strtoull(step->str, &end, 10);
	if (*step->str < '0' || *step->str > '9' || *end != '\0' || errno) {
		safetensors_close(&f);
		return owt_fail(err, errsize, code, XDATA,
		    "%s: bad step '%s' in the metadata", file, step->str);
	}
	if ((r = load_tensors(&f, file, m, NULL, "exp_avg.", err, errsize,
	    code)) == 0)
		r = load_tensors(&f, file, m, NULL, "exp_avg_sq.", err, errsize,
		    code);
	if (r == 0) {
		host = xcalloc(m->nparams, sizeof *host);
		load_tensors(&f, file, m, host, "exp_avg.", err, errsize, code);
		gpt_put(m, GPT_ADAM_M, host);
		load_tensors(&f, file, m, host, "exp_avg_sq.", err, errsize,
		    code);
		gpt_put(m, GPT_ADAM_V, host);
		free(host);
		m->step = nstep;
	}
	safetensors_close(&f);
	return r;
}

/* Whether path's last name is iter_ and 7 or more digits, *it their number. */
static int
iter_named(const char *path, uint64_t *it)
{
	size_t n = strlen(path), i, k;

	while (n > 1 && path[n - 1] == '/')
		n--;
	for (i = n; i > 0 && path[i - 1] != '/'; i--)
		;
	if (n - i < 5 + 7 || n - i > 5 + 18 ||
	    strncmp(path + i, "iter_", 5) != 0)
		return 0;
	*it = 0;
	for (k = i + 5; k < n; k++) {
		if (path[k] < '0' || path[k] > '9')
			return 0;
		*it = *it * 10 + (uint64_t)(path[k] - '0');
	}
	return 1;
}

int
ckpt_load_state(const char *path, struct train_state *st, struct json_val **doc,
    char *err, size_t errsize, int *code)
{
	static const struct {
		const char *key;
		size_t off;
		int optional;	/* fp16 runs only */
	} fields[] = {
		{ "iteration", offsetof(struct train_state, iteration), 0 },
		{ "consumed_train_samples", offsetof(struct train_state, consumed_train), 0 },
		{ "consumed_valid_samples", offsetof(struct train_state, consumed_valid), 0 },
		{ "scheduler_samples", offsetof(struct train_state, sched_samples), 0 },
		{ "seed", offsetof(struct train_state, seed), 0 },
		{ "loss_scale_growth", offsetof(struct train_state, ls_growth), 1 },
		{ "loss_scale_hysteresis", offsetof(struct train_state, ls_hyst), 1 },
	};
	const struct json_val *ls;
	struct buf b = { 0 };
	char file[4096], jerr[128];
	uint64_t it;
	size_t i;
	int r;

	*doc = NULL;
	snprintf(file, sizeof file, "%s/trainer_state.json", path);
	if ((r = input_read_file(file, &b, err, errsize, code)) != 0) {
		buf_free(&b);
		return r;
	}
	*doc = json_doc_parse(b.p, b.len, jerr, sizeof jerr, code);
	buf_free(&b);
	if (*doc == NULL || (*doc)->type != JV_MAP) {
		r = owt_fail(err, errsize, code, XDATA, "%s: %s", file,
		    *doc ? "not a JSON object" : jerr);
		goto bad;
	}
	for (i = 0; i < sizeof fields / sizeof *fields; i++) {
		const struct json_val *v = json_doc_get(*doc, fields[i].key);

		if (v == NULL && fields[i].optional) {
			*(uint64_t *)((char *)st + fields[i].off) = 0;
			continue;
		}
		if (v == NULL || v->type != JV_NUMBER || v->num < 0 ||
		    v->num != floor(v->num) || v->num > 9007199254740992.0) {
			r = owt_fail(err, errsize, code, XDATA, "%s: %s '%s'",
			    file, v ? "bad" : "missing", fields[i].key);
			goto bad;
		}
		*(uint64_t *)((char *)st + fields[i].off) = (uint64_t)v->num;
	}
	if (iter_named(path, &it) && it != st->iteration) {
		r = owt_fail(err, errsize, code, XDATA, "%s: iteration %" PRIu64
		    " does not match its directory iter_%07" PRIu64, file,
		    st->iteration, it);
		goto bad;
	}
	/* the global batch may change on resuming: only bounds hold */
	if (st->iteration == 0 ? st->consumed_train != 0 :
	    st->consumed_train < st->iteration ||
	    (st->consumed_train - 1) / st->iteration >= CKPT_MAX_BATCH) {
		r = owt_fail(err, errsize, code, XDATA, "%s: %" PRIu64
		    " samples consumed in %" PRIu64 " iterations, not 1 to %d "
		    "an iteration", file, st->consumed_train, st->iteration,
		    CKPT_MAX_BATCH);
		goto bad;
	}
	st->loss_scale = 0;
	if ((ls = json_doc_get(*doc, "loss_scale")) != NULL) {
		if (ls->type != JV_NUMBER || !(ls->num > 0)) {
			r = owt_fail(err, errsize, code, XDATA,
			    "%s: bad 'loss_scale'", file);
			goto bad;
		}
		st->loss_scale = ls->num;
	}
	return 0;
bad:
	json_doc_free(*doc);
	*doc = NULL;
	return r;
}
