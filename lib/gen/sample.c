/* sample.c - gpt-sample's run: the model of --load opened, prompts generated or texts scored, --listen served */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/util.h"
#include "gen/gen.h"
#include "gen/sample.h"
#include "gen/serve.h"
#include "model/ckpt.h"
#include "model/ckpt_tok.h"
#include "model/gpt_infer.h"
#include "train/ckpt_args.h"

/* A log line, unless quiet. */
#define say(...) do { if (!s->o->quiet) owt_warn(__VA_ARGS__); } while (0)

static volatile sig_atomic_t interrupted;

int
sample_out_check(struct sample *s, char *err, size_t errsize, int *code)
{
	if (!s->q.werrno && !ferror(stdout))
		return 0;
	errno = s->q.werrno ? s->q.werrno : errno ? errno : EIO;
	if (s->outname && strcmp(s->outname, "-") != 0)
		return owt_fail_errno(err, errsize, code, XSYS,
		    "%s: write error", s->outname);
	return owt_fail_errno(err, errsize, code, XSYS,
	    "write error on standard output");
}

/*
 * A failed read: a bad record is reported and counted, 0 to go on, 1 to
 * stop unless keep_going; another error -1.
 */
static int
bad(struct sample *s, int code, const char *err)
{
	if (code != XDATA)
		return -1;
	owt_warn("%s", err);
	s->nbad++;
	s->status = XDATA;
	return s->o->keep_going ? 0 : 1;
}

static void
on_sigint(int sig)
{
	if (!interrupted) {
		interrupted = 1;
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void
sample_catch_sigint(void)
{
	signal(SIGINT, on_sigint);
}

/* The inference state: S slots, N rows a step, NL of them with logits. */
static int
infer_init(struct sample *s, struct gpt_infer *inf, struct gpt *m, int S,
    int N, int NL, char *err, size_t errsize, int *code)
{
	if (gpt_infer_init(inf, m, S, N, NL, err, errsize, code) < 0)
		return -1;
	if (s->o->int8)
		gpt_infer_quantize(inf);
	return 0;
}

int
sample_generate(struct sample *s, struct gpt *m, struct input *in,
    int interactive, char *err, size_t errsize, int *code)
{
	const struct sample_opts *opt = s->o;
	struct gen_queue *q = &s->q;
	struct gpt_infer inf;
	struct gen_opts o = {
		.temperature = opt->temperature, .top_k = opt->top_k,
		.top_p = opt->top_p, .greedy = opt->greedy,
		.max_new = opt->out_len, .seed = opt->seed,
		.eod = (int32_t)tokenizer_eod(s->vocab),
		.nvocab = (int)tokenizer_nvocab(s->vocab),
		.ctx = opt->seq ? opt->seq : m->cfg.maxpos,
	};
	int more = in != NULL, tty = interactive && isatty(0), r, k, rc = -1;
	double t0;

	if (infer_init(s, &inf, m, opt->batch, o.ctx - 1 > opt->batch ?
	    o.ctx - 1 : opt->batch, opt->batch, err, errsize, code) < 0)
		return -1;
	gen_queue_model(q, &inf, &o);
	if (in == NULL && gen_queue_add(q, "", 0, 1, err, errsize) < 0) {
		*code = XUSAGE;
		goto out;
	}
	t0 = owt_now();
	for (;;) {
		while (more && gen_queue_wants(q) && !(interactive && q->head)) {
			if (tty) {
				fputs("> ", stderr);
				fflush(stderr);
				interrupted = 1;	/* ^C at the prompt exits */
			}
			while ((r = gen_queue_read(q, in, err, errsize,
			    code)) < 0 && (k = bad(s, *code, err)) == 0)
				;
			if (r < 0 && k < 0)
				goto out;
			more = r > 0;
			interrupted = 0;
			if (sample_out_check(s, err, errsize, code) < 0)
				goto out;
		}
		if (gen_queue_step(q) == 0 && !more)
			break;
		if (sample_out_check(s, err, errsize, code) < 0)
			goto out;
		if (interrupted) {
			gen_queue_stop(q);
			interrupted = 0;
		}
	}
	say("%llu prompts, %llu samples, %llu tokens in %.1f s, %.1f tokens/s",
	    q->nprompts, q->nsamples, q->ntokens, owt_now() - t0,
	    q->ntokens / fmax(owt_now() - t0, 1e-9));
	if (gpt_device_peak_bytes(&s->dev) > 0)
		say("peak GPU memory %.2f GB",
		    gpt_device_peak_bytes(&s->dev) / 1e9);
	rc = 0;
out:
	gpt_infer_free(&inf);
	return rc;
}

int
sample_score(struct sample *s, struct gpt *m, struct input *in, char *err,
    size_t errsize, int *code)
{
	struct gen_queue *q = &s->q;
	struct gpt_infer inf;
	struct buf out = { 0 };
	int T = s->o->seq ? s->o->seq : m->cfg.maxpos, r, k, rc = -1;
	int stride = s->o->stride ? s->o->stride : T / 2;
	double t0 = owt_now();

	if (stride >= T || stride < 1)
		return owt_fail(err, errsize, code, XUSAGE, "--score-stride %d: "
		    "must be below the window of %d tokens", stride, T);
	if (infer_init(s, &inf, m, 1, T, T, err, errsize, code) < 0)
		return -1;
	while ((r = gen_queue_score_read(q, &inf, T, stride, in, &out, err,
	    errsize, code)) != 0) {
		if (r < 0) {
			if ((k = bad(s, *code, err)) < 0)
				goto out;
			if (k > 0)
				break;
			continue;
		}
		fwrite(out.p, 1, out.len, stdout);
		if (sample_out_check(s, err, errsize, code) < 0)
			goto out;
	}
	if (q->nscored > 0)
		say("%llu records, %llu tokens in %.1f s: nll %.6f, ppl %.4f",
		    q->nrec, q->nscored, owt_now() - t0, q->nll / q->nscored,
		    exp(q->nll / q->nscored));
	else
		say("%llu records, no tokens", q->nrec);
	if (q->nonfinite) {
		owt_warn("%llu record%s a non-finite nll, written as null",
		    q->nonfinite, q->nonfinite == 1 ? " has" : "s have");
		s->status = XDATA;
	}
	rc = 0;
out:
	buf_free(&out);
	gpt_infer_free(&inf);
	return rc;
}

/*
 * The tokenizer that the checkpoint of --load keeps, if any, against
 * s->vocab, which the options named: 0 where it keeps none or the same,
 * else -1 with err (XUSAGE: another; XDATA: a bad copy).
 */
static int
kept_check(struct sample *s, char *err, size_t errsize, int *code)
{
	struct ckpt_tok saved, given;
	char path[4096];
	int kind, k;

	if (ckpt_resolve(s->o->load, path, sizeof path, &kind, err, errsize,
	    code) < 0)
		return -1;
	if (kind == CKPT_NONE || (k = ckpt_tok_read(&saved, path, err,
	    errsize, code)) == 0)
		return 0;
	if (k < 0)
		return -1;
	k = ckpt_tok_from(&given, &s->o->tk, s->vocab, err, errsize, code);
	if (k == 0)
		k = ckpt_tok_check(&given, &saved, path, err, errsize, code);
	ckpt_tok_free(&given);
	ckpt_tok_free(&saved);
	return k;
}

int
sample_tokenizer(struct sample *s, char *err, size_t errsize, int *code)
{
	const struct tokenizer_opts *tk = &s->o->tk;
	struct tokenizer_opts o = *tk;
	struct ckpt_tok saved;
	char path[4096], paths[CKPT_TOK_MAXFILES][4200];
	int kind, k = 0;
	int named = tk->type || tk->vocab || tk->model || tk->pattern;

	/*
	 * The checkpoint's small files only (config.json, the tokenizer's
	 * copy): --listen binds its port before the weights load, so that
	 * health answers while they do.
	 */
	if (!named) {
		if (ckpt_resolve(s->o->load, path, sizeof path, &kind, err,
		    errsize, code) < 0)
			return -1;
		if (kind != CKPT_NONE && (k = ckpt_tok_read(&saved, path, err,
		    errsize, code)) < 0)
			return -1;
		if (k == 1)
			ckpt_tok_opts(&saved, path, &o, paths);
	}
	s->vocab = tokenizer_load(&o, err, errsize, code);
	if (k == 1)
		ckpt_tok_free(&saved);
	if (s->vocab == NULL)
		return -1;
	if (named && kept_check(s, err, errsize, code) < 0) {
		tokenizer_free(s->vocab);
		s->vocab = NULL;
		return -1;
	}
	s->ts = tokenizer_state_new(s->vocab, 0);
	return 0;
}

void
sample_tokenizer_free(struct sample *s)
{
	tokenizer_state_free(s->ts);
	tokenizer_free(s->vocab);
	s->ts = NULL;
	s->vocab = NULL;
}

int
sample_load(struct sample *s, struct gpt *m, char *err, size_t errsize,
    int *code)
{
	const struct sample_opts *opt = s->o;
	struct ckpt_args_load l;
	struct gpt_config *cfg = &l.cfg;
	char e[OWT_ERRSIZE];
	int ntok, padded;

	if (ckpt_args_open(&l, s->p, s->given, opt->load, 0, err, errsize,
	    code) < 0 || l.kind == CKPT_NONE)
		return -1;
	cfg->vocab_pad = gpt_pad_vocab(cfg->vocab, opt->vocab_div ?
	    opt->vocab_div : 128);
	/* Megatron's padded vocabulary, where the flag names its padding */
	ntok = (int)tokenizer_nvocab(s->vocab);
	padded = opt->vocab_div ? gpt_pad_vocab(ntok, opt->vocab_div) : 0;
	if (opt->vocab_div && cfg->vocab != ntok && cfg->vocab != padded)
		return owt_fail(err, errsize, code, XDATA, "%s/config.json: "
		    "vocab_size %d is neither the tokenizer's %d tokens nor them "
		    "padded to a multiple of %d (%d)", l.path, cfg->vocab, ntok,
		    opt->vocab_div, padded);
	if (opt->seq > cfg->maxpos)
		return owt_fail(err, errsize, code, XUSAGE, "--seq-length %d is "
		    "beyond the %d positions of the model", opt->seq,
		    cfg->maxpos);
	if ((uint32_t)cfg->vocab < tokenizer_nvocab(s->vocab))
		return owt_fail(err, errsize, code, XDATA, "%s/config.json: "
		    "vocab_size %d is smaller than the tokenizer's %u tokens",
		    l.path, cfg->vocab, tokenizer_nvocab(s->vocab));
	/* a Megatron script's --fp16 runs on the cpu too: in fp32, a warning */
	if (gpt_device_open(&s->dev, opt->device, opt->prec, 0, err, errsize,
	    code) < 0)
		return -1;
	if (s->dev.warn[0] != '\0')
		owt_warn("%s", s->dev.warn);
	if (gpt_init(m, cfg, s->dev.be, e, sizeof e) < 0)
		return owt_fail(err, errsize, code, XDATA, "%s/config.json: %s",
		    l.path, e);
	if (ckpt_load_model(l.path, m, err, errsize, code) < 0) {
		gpt_free(m);
		return -1;
	}
	say("GPT-2 from %s: %d layers, %d hidden, %d heads, %d positions, "
	    "vocabulary %d: %zu parameters", l.path, cfg->nlayer, cfg->nembd,
	    cfg->nhead, cfg->maxpos, cfg->vocab, gpt_nparams(cfg));
	return 0;
}

/* --served-model-name, else the last component of --load as given. */
static const char *
model_name(const struct sample_opts *o)
{
	static char name[256];
	size_t n = strlen(o->load), e;

	if (o->name != NULL)
		return o->name;
	while (n > 1 && o->load[n - 1] == '/')
		n--;
	e = n;
	while (n > 0 && o->load[n - 1] != '/')
		n--;
	snprintf(name, sizeof name, "%.*s", (int)(e - n), o->load + n);
	return name;
}

/* The key of --api-key-file in *key: its first line (NULL: none). */
static int
api_key(const char *file, char **key, char *err, size_t errsize, int *code)
{
	struct buf b = { 0 };
	char chunk[512];
	size_t n;
	FILE *f;

	*key = NULL;
	if (file == NULL)
		return 0;
	if ((f = fopen(file, "r")) == NULL)
		return owt_fail_errno(err, errsize, code, XSYS,
		    "cannot open '%s'", file);
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_add(&b, chunk, n);
	if (ferror(f)) {
		owt_fail_errno(err, errsize, code, XSYS, "%s: read error",
		    file);
		fclose(f);
		buf_free(&b);
		return -1;
	}
	fclose(f);
	b.len = strcspn(b.p ? b.p : "", "\r\n");
	if (b.len == 0) {
		buf_free(&b);
		return owt_fail(err, errsize, code, XDATA,
		    "%s: no key on its first line", file);
	}
	b.p[b.len] = '\0';
	*key = b.p;
	return 0;
}

int
sample_serve(struct sample *s, char *err, size_t errsize, int *code)
{
	const struct sample_opts *opt = s->o;
	struct serve_opts so = {
		.listen = opt->listen, .name = model_name(opt),
		.parallel = opt->parallel, .queue = opt->queue,
		.ctx = opt->seq, .drain = opt->drain, .quiet = opt->quiet,
	};
	struct serve *sv = NULL;
	struct gpt m;
	struct gpt_infer inf;
	char *key;
	double slot;
	int T, NL;

	if (api_key(opt->keyfile, &key, err, errsize, code) < 0)
		return -1;
	so.key = key;
	tokenizer_tokens(s->vocab);
	if (opt->log_json && (so.log = fopen(opt->log_json, "a")) == NULL) {
		free(key);
		return owt_fail_errno(err, errsize, code, XSYS, "cannot create "
		    "'%s'", opt->log_json);
	}
	if ((sv = serve_open(&so, s->vocab, err, errsize, code)) == NULL)
		goto fail;
	say("listening on http://%s", serve_addr(sv));
	if (sample_load(s, &m, err, errsize, code) < 0)
		goto fail;
	say("%s%s", gpt_device_desc(&s->dev, opt->workers),
	    opt->int8 ? "; int8 weights" : "");
	T = opt->seq ? opt->seq : m.cfg.maxpos;
	NL = opt->parallel > 64 ? opt->parallel : 64;
	if (infer_init(s, &inf, &m, opt->parallel, T - 1 > opt->parallel ?
	    T - 1 : opt->parallel, NL < T - 1 ? NL : T - 1 > opt->parallel ?
	    T - 1 : opt->parallel, err, errsize, code) < 0) {
		gpt_free(&m);
		goto fail;
	}
	slot = 2.0 * m.cfg.nlayer * m.cfg.maxpos * m.cfg.nembd * sizeof(float);
	say("%d slots of %d positions, %.1f MB of key/value cache each, %.1f "
	    "MB in all; ready as '%s'", opt->parallel, m.cfg.maxpos, slot / 1e6,
	    slot * opt->parallel / 1e6, so.name);
	serve_run(sv, &inf);
	say("stopped");
	serve_close(sv);
	free(key);
	gpt_infer_free(&inf);
	gpt_free(&m);
	if (so.log != NULL && (ferror(so.log) | fclose(so.log)) != 0)
		return owt_fail_errno(err, errsize, code, XSYS, "%s: write "
		    "error", opt->log_json);
	return 0;
fail:
	serve_close(sv);
	free(key);
	if (so.log != NULL)
		fclose(so.log);
	return -1;
}
