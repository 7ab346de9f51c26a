/* serve_api.c - the protocols of gpt-sample --listen: a request's JSON as samples, samples as its answer */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json.h"
#include "gen/serve_api.h"
#include "core/util.h"

void
serve_api_error(struct buf *b, int kind, int status, const char *msg)
{
	struct json_w w;

	json_w_init(&w, b, JSON_COMPACT);
	if (kind == SERVE_MEGATRON) {	/* flask_restful's answer: a string */
		json_w_strz(&w, msg);
		buf_add(b, "\n", 1);
		return;
	}
	json_w_obj(&w);
	json_w_key(&w, "error");
	if (SERVE_IS_V2(kind)) {	/* KServe's {"error": msg} */
		json_w_strz(&w, msg);
		json_w_end(&w);
		buf_add(b, "\n", 1);
		return;
	}
	json_w_obj(&w);
	json_w_kstr(&w, "message", msg);
	json_w_kstr(&w, "type",
	    status == 429 || status == 503 ? "server_error" :
	    status == 404 ? "not_found_error" : status == 401 ?
	    "authentication_error" : "invalid_request_error");
	json_w_key(&w, "param");
	json_w_null(&w);
	json_w_key(&w, "code");
	json_w_null(&w);
	json_w_end(&w);
	json_w_end(&w);
	buf_add(b, "\n", 1);
}

void
serve_api_free(struct serve_req *r)
{
	int i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nseq; i++) {
		struct serve_seq *s = &r->seq[i];

		free(s->prompt);
		free(s->plp);
		free(s->ids.v);
		free(s->lp);
		free(s->topid);
		free(s->toplp);
		buf_free(&s->text);
	}
	for (i = 0; i < r->nstop; i++)
		free(r->stop[i]);
	free(r->seq);
	free(r->v2id);
	buf_free(&r->out);
	free(r);
}

/* A failed parse: the answer in err, NULL. */
static struct serve_req *
refuse(struct serve_req *r, struct buf *err, int *status, int code,
    const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	*status = code;
	serve_api_error(err, r->kind, code, msg);
	serve_api_free(r);
	return NULL;
}

static int
is_int(const struct json_val *v, double lo, double hi)
{
	return v != NULL && v->type == JV_NUMBER && v->num == floor(v->num) &&
	    v->num >= lo && v->num <= hi;
}

/* A new sample of r on prompt ids (n of them, copied). */
static struct serve_seq *
add_seq(struct serve_req *r, const int32_t *ids, int n, int index)
{
	struct serve_seq *s = &r->seq[r->nseq++];

	memset(s, 0, sizeof *s);
	s->req = r;
	s->index = index;
	s->g.user = s;
	s->o = r->o;
	s->g.o = &s->o;
	s->g.stream = (uint64_t)index;
	s->prompt = xmalloc((size_t)n * sizeof *s->prompt);
	memcpy(s->prompt, ids, (size_t)n * sizeof *ids);
	s->nprompt = n;
	if (r->logprobs && n > 1) {
		s->plp = xmalloc((size_t)(n - 1) * sizeof *s->plp);
		s->g.prompt_lp = s->plp;
	}
	return s;
}

static struct serve_req *
new_req(int kind, const struct serve_api_ctx *c)
{
	struct serve_req *r = xcalloc(1, sizeof *r);
	static unsigned long long nreq;

	r->kind = kind;
	r->model = c->model;
	r->vocab = c->vocab;
	r->V = c->V;
	r->stop_token = -1;
	r->created = (long long)time(NULL);
	snprintf(r->id, sizeof r->id, "cmpl-%016llx",
	    (unsigned long long)owt_mix64(c->seed + ++nreq));
	r->o.temperature = 1.0;
	r->o.eod = (int32_t)tokenizer_eod(c->vocab);
	r->o.nvocab = (int)tokenizer_nvocab(c->vocab);
	r->o.ctx = c->ctx;
	r->o.seed = owt_mix64(c->seed ^ nreq);
	r->seq = xcalloc(SERVE_MAX_SAMPLES, sizeof *r->seq);
	return r;
}

/* The ids of a JSON array of token ids into ids, or -1. */
static int
token_array(const struct json_val *v, const struct serve_api_ctx *c,
    struct bpe_ids *ids)
{
	size_t i;

	ids->n = 0;
	for (i = 0; i < v->nkids; i++) {
		if (!is_int(&v->kids[i], 0, tokenizer_nvocab(c->vocab) - 1))
			return -1;
		if (ids->n == ids->cap) {
			ids->cap = ids->cap ? 2 * ids->cap : 64;
			ids->v = xrealloc(ids->v, ids->cap * sizeof *ids->v);
		}
		ids->v[ids->n++] = (uint32_t)v->kids[i].num;
	}
	return 0;
}

static const char *const openai_keys[] = {
	"model", "prompt", "max_tokens", "temperature", "top_p", "top_k", "n",
	"stop", "seed", "logprobs", "echo", "stream", "stream_options",
	"user", "suffix", "best_of", "frequency_penalty", "presence_penalty",
	"logit_bias", "ignore_eos",
};

static struct serve_req *
parse_openai(const struct json_val *doc, const struct serve_api_ctx *c,
    int *status, struct buf *err)
{
	struct serve_req *r = new_req(SERVE_OPENAI, c);
	const struct json_val *v, *p;
	struct bpe_ids ids = { 0 };
	int n = 1, max_tokens = 16, i, j, k, np;
	size_t m;

	for (m = 0; m < doc->nkids; m++) {
		for (k = 0; k < (int)(sizeof openai_keys /
		    sizeof *openai_keys); k++)
			if (strcmp(doc->kids[m].key, openai_keys[k]) == 0)
				break;
		if (k == (int)(sizeof openai_keys / sizeof *openai_keys))
			return refuse(r, err, status, 400, "Unrecognized "
			    "request argument supplied: %s", doc->kids[m].key);
	}
#define NUL(v) ((v) == NULL || (v)->type == JV_NULL)
	if (!NUL(v = json_doc_get(doc, "max_tokens"))) {
		if (!is_int(v, 0, 1 << 30))
			return refuse(r, err, status, 400, "max_tokens: "
			    "must be an integer of at least 0");
		max_tokens = (int)v->num;
	}
	if (!NUL(v = json_doc_get(doc, "temperature"))) {
		if (v->type != JV_NUMBER || !(v->num >= 0 && v->num <= 2))
			return refuse(r, err, status, 400, "temperature: "
			    "must be a number from 0 to 2");
		r->o.temperature = v->num;
	}
	if (!NUL(v = json_doc_get(doc, "top_p"))) {
		if (v->type != JV_NUMBER || !(v->num > 0 && v->num <= 1))
			return refuse(r, err, status, 400, "top_p: must be a "
			    "number above 0, at most 1");
		r->o.top_p = v->num < 1 ? v->num : 0;
	}
	if (!NUL(v = json_doc_get(doc, "top_k"))) {
		if (!is_int(v, -1, 1 << 30))
			return refuse(r, err, status, 400, "top_k: must be an "
			    "integer; -1 or 0: all");
		r->o.top_k = v->num > 0 ? (int)v->num : 0;
	}
	if (!NUL(v = json_doc_get(doc, "n"))) {
		if (!is_int(v, 1, SERVE_MAX_SAMPLES))
			return refuse(r, err, status, 400, "n: must be an "
			    "integer from 1 to %d", SERVE_MAX_SAMPLES);
		n = (int)v->num;
	}
	if (!NUL(v = json_doc_get(doc, "best_of")) && !is_int(v, n, n))
		return refuse(r, err, status, 400, "best_of: only equal to n "
		    "is supported");
	if (!NUL(v = json_doc_get(doc, "suffix")))
		return refuse(r, err, status, 400, "suffix: not supported");
	if ((!NUL(v = json_doc_get(doc, "frequency_penalty")) &&
	    (v->type != JV_NUMBER || v->num != 0)) ||
	    (!NUL(v = json_doc_get(doc, "presence_penalty")) &&
	    (v->type != JV_NUMBER || v->num != 0)))
		return refuse(r, err, status, 400, "frequency_penalty and "
		    "presence_penalty: only 0 is supported");
	if (!NUL(v = json_doc_get(doc, "logit_bias")) &&
	    (v->type != JV_MAP || v->nkids > 0))
		return refuse(r, err, status, 400, "logit_bias: not "
		    "supported");
	if (!NUL(v = json_doc_get(doc, "seed"))) {
		if (!is_int(v, -9223372036854775808.0, 9223372036854775807.0))
			return refuse(r, err, status, 400, "seed: must be an "
			    "integer");
		r->o.seed = (uint64_t)(int64_t)v->num;
	}
	if (!NUL(v = json_doc_get(doc, "logprobs"))) {
		if (!is_int(v, 0, SERVE_MAX_TOP))
			return refuse(r, err, status, 400, "logprobs: must be "
			    "an integer from 0 to %d", SERVE_MAX_TOP);
		r->logprobs = 1;
		r->ntop = (int)v->num;
	}
	if (!NUL(v = json_doc_get(doc, "echo"))) {
		if (v->type != JV_BOOL)
			return refuse(r, err, status, 400, "echo: must be a "
			    "boolean");
		r->echo = (int)v->num;
	}
	if (!NUL(v = json_doc_get(doc, "stream"))) {
		if (v->type != JV_BOOL)
			return refuse(r, err, status, 400, "stream: must be a "
			    "boolean");
		r->stream = (int)v->num;
	}
	/* vLLM's extension: the end-of-text token does not end a sample. */
	if (!NUL(v = json_doc_get(doc, "ignore_eos"))) {
		if (v->type != JV_BOOL)
			return refuse(r, err, status, 400, "ignore_eos: must be a "
			    "boolean");
		if (v->num != 0)
			r->o.eod = -1;
	}
	if (!NUL(v = json_doc_get(doc, "stream_options"))) {
		if (v->type != JV_MAP || !r->stream)
			return refuse(r, err, status, 400, "stream_options: "
			    "an object, only with stream");
		p = json_doc_get(v, "include_usage");
		if (!NUL(p) && p->type != JV_BOOL)
			return refuse(r, err, status, 400, "stream_options."
			    "include_usage: must be a boolean");
		r->include_usage = !NUL(p) && p->num != 0;
	}
	if (r->stream && r->logprobs)
		return refuse(r, err, status, 400, "logprobs: not supported "
		    "with stream");
	if (!NUL(v = json_doc_get(doc, "stop"))) {
		const struct json_val *one = v->type == JV_STRING ? v : NULL;
		size_t ns = one ? 1 : v->type == JV_ARRAY ? v->nkids : 0;

		if ((one == NULL && v->type != JV_ARRAY) ||
		    ns > SERVE_MAX_STOPS)
			return refuse(r, err, status, 400, "stop: must be a "
			    "string or a list of at most %d", SERVE_MAX_STOPS);
		for (m = 0; m < ns; m++) {
			const struct json_val *s = one ? one : &v->kids[m];

			if (s->type != JV_STRING || s->str[0] == '\0')
				return refuse(r, err, status, 400, "stop: "
				    "must hold strings that are not empty");
			r->stop[r->nstop++] = xstrdup(s->str);
		}
	}
	p = json_doc_get(doc, "prompt");
	if (p == NULL || !(p->type == JV_STRING || (p->type == JV_ARRAY &&
	    p->nkids > 0)))
		return refuse(r, err, status, 400, "prompt: must be a string, "
		    "a list of strings, of token ids, or of lists of them");
	np = p->type == JV_STRING ? 1 : (int)p->nkids;
	if (p->type == JV_ARRAY && p->kids[0].type == JV_NUMBER)
		np = 1;		/* one prompt of token ids */
	if ((long long)np * n > SERVE_MAX_SAMPLES)
		return refuse(r, err, status, 400, "prompt and n: at most %d "
		    "completions a request", SERVE_MAX_SAMPLES);
	r->o.max_new = max_tokens;
	for (i = 0; i < np; i++) {
		const struct json_val *e = p->type == JV_STRING ? p :
		    p->kids[0].type == JV_NUMBER ? p : &p->kids[i];

		ids.n = 0;
		if (e->type == JV_STRING)
			tokenizer_encode(c->bs, e->str, strlen(e->str), &ids);
		else if (e->type != JV_ARRAY || token_array(e, c, &ids) < 0) {
			free(ids.v);
			return refuse(r, err, status, 400, "prompt: must be a "
			    "string, a list of strings, of token ids (0 to "
			    "%u), or of lists of them",
			    tokenizer_nvocab(c->vocab) - 1);
		}
		if (ids.n == 0) {	/* generate from <|endoftext|> */
			if (ids.cap == 0)
				ids.v = xmalloc(sizeof *ids.v * (ids.cap = 1));
			ids.v[ids.n++] = (uint32_t)r->o.eod;
		}
		if ((long long)ids.n + max_tokens > c->ctx || ids.n >=
		    (size_t)c->ctx) {
			free(ids.v);
			return refuse(r, err, status, 400, "This model's "
			    "maximum context length is %d tokens, however you "
			    "requested %lld tokens (%zu in your prompt; %d for "
			    "the completion). Please reduce your prompt; or "
			    "completion length.", c->ctx,
			    (long long)ids.n + max_tokens, ids.n, max_tokens);
		}
		r->ptokens += (long long)ids.n;
		for (j = 0; j < n; j++)
			add_seq(r, (const int32_t *)ids.v, (int)ids.n,
			    i * n + j);
	}
	free(ids.v);
	if (!r->echo)
		for (i = 0; i < r->nseq; i++) {	/* prompt logprobs unasked */
			free(r->seq[i].plp);
			r->seq[i].plp = r->seq[i].g.prompt_lp = NULL;
		}
	return r;
#undef NUL
}

/* Megatron's flask_restful server's checks, in its order and words. */
static struct serve_req *
parse_megatron(const struct json_val *doc, const struct serve_api_ctx *c,
    int *status, struct buf *err)
{
	struct serve_req *r = new_req(SERVE_MEGATRON, c);
	const struct json_val *v, *p;
	struct bpe_ids ids = { 0 };
	int ttg = 64, add_bos = 0, maxlen = 0, i;
	double top_k = 0, top_p = 0;
	size_t m;

#define BAD(...) return refuse(r, err, status, 400, __VA_ARGS__)
	if ((p = json_doc_get(doc, "prompts")) == NULL)
		BAD("prompts argument required");
	if (json_doc_get(doc, "max_len") != NULL)
		BAD("max_len is no longer used.  Replace with "
		    "tokens_to_generate");
	if (json_doc_get(doc, "sentences") != NULL)
		BAD("sentences is no longer used.  Replace with prompts");
	if (p->type != JV_ARRAY)
		BAD("prompts is not a list of strings");
	if (p->nkids == 0)
		BAD("prompts is empty");
	if (p->nkids > 128)
		BAD("Maximum number of prompts is 128");
	for (m = 0; m < p->nkids; m++)
		if (p->kids[m].type != JV_STRING)
			BAD("prompts is not a list of strings");
	if ((v = json_doc_get(doc, "tokens_to_generate")) != NULL) {
		if (!is_int(v, -1e18, 1e18))
			BAD("tokens_to_generate must be an integer greater "
			    "than 0");
		if (v->num < 0)
			BAD("tokens_to_generate must be an integer greater "
			    "than or equal to 0");
		if (v->num > 1 << 30)
			BAD("Length of prompt + tokens_to_generate longer than "
			    "allowed");
		ttg = (int)v->num;
	}
	if ((v = json_doc_get(doc, "logprobs")) != NULL) {
		if (v->type != JV_BOOL)
			BAD("logprobs must be a boolean value");
		r->logprobs = (int)v->num;
	}
	if (ttg == 0 && !r->logprobs)
		BAD("tokens_to_generate=0 implies logprobs should be True");
	if ((v = json_doc_get(doc, "temperature")) != NULL) {
		if (v->type != JV_NUMBER)
			BAD("temperature must be a positive number less than "
			    "or equal to 100.0");
		if (!(v->num > 0 && v->num <= 100))
			BAD("temperature must be a positive number less than "
			    "or equal to 100.0");
		r->o.temperature = v->num;
	}
	if ((v = json_doc_get(doc, "top_k")) != NULL) {
		if (!is_int(v, -1e18, 1e18))
			BAD("top_k must be an integer equal to or greater than "
			    "0 and less than or equal to 1000");
		if (!(v->num >= 0 && v->num <= 1000))
			BAD("top_k must be equal to or greater than 0 and less "
			    "than or equal to 1000");
		top_k = v->num;
	}
	if ((v = json_doc_get(doc, "top_p")) != NULL) {
		if (v->type != JV_NUMBER)
			BAD("top_p must be a positive float less than or equal "
			    "to 1.0");
		if (v->num > 0 && top_k > 0)
			BAD("cannot set both top-k and top-p samplings.");
		if (!(v->num >= 0 && v->num <= 1))
			BAD("top_p must be less than or equal to 1.0");
		top_p = v->num;
	}
	if ((v = json_doc_get(doc, "top_p_decay")) != NULL) {
		if (v->type != JV_NUMBER)
			BAD("top_p_decay must be a positive float less than or "
			    "equal to 1.0");
		if (top_p == 0)
			BAD("top_p_decay cannot be set without top_p");
		if (!(v->num >= 0 && v->num <= 1))
			BAD("top_p_decay must be less than or equal to 1.0");
		r->o.top_p_decay = v->num;
	}
	if ((v = json_doc_get(doc, "top_p_bound")) != NULL) {
		if (v->type != JV_NUMBER)
			BAD("top_p_bound must be a positive float less than or "
			    "equal to top_p");
		if (top_p == 0)
			BAD("top_p_bound cannot be set without top_p");
		if (!(v->num > 0 && v->num <= top_p))
			BAD("top_p_bound must be greater than 0 and less than "
			    "top_p");
		r->o.top_p_bound = v->num;
	}
	if ((v = json_doc_get(doc, "add_BOS")) != NULL) {
		if (v->type != JV_BOOL)
			BAD("add_BOS must be a boolean value");
		add_bos = (int)v->num;
	}
	for (m = 0; m < p->nkids; m++)
		if (p->kids[m].str[0] == '\0' && !add_bos)
			BAD("Empty prompts require add_BOS=true");
	if ((v = json_doc_get(doc, "stop_on_double_eol")) != NULL) {
		if (v->type != JV_BOOL)
			BAD("stop_on_double_eol must be a boolean value");
		r->stop_double_eol = (int)v->num;
	}
	if ((v = json_doc_get(doc, "stop_on_eol")) != NULL) {
		if (v->type != JV_BOOL)
			BAD("stop_on_eol must be a boolean value");
		r->stop_eol = (int)v->num;
	}
	if ((v = json_doc_get(doc, "prevent_newline_after_colon")) != NULL) {
		if (v->type != JV_BOOL)
			BAD("prevent_newline_after_colon must be a boolean "
			    "value");
		/* a vocabulary without those tokens has nothing to ban */
		r->o.ban = (int)v->num && c->colon >= 0 && c->nl >= 0;
		r->o.ban_after = c->colon;
		r->o.ban_tok = c->nl;
	}
	if ((v = json_doc_get(doc, "random_seed")) != NULL) {
		if (!is_int(v, -1e300, 1e300))
			BAD("random_seed must be integer");
		if (v->num < 0)
			BAD("random_seed must be a positive integer");
		if (v->num > 18446744073709549568.0)
			BAD("random_seed must be integer");
		r->o.seed = (uint64_t)v->num;
	}
	if ((v = json_doc_get(doc, "no_log")) != NULL) {
		if (v->type != JV_BOOL)
			BAD("no_log must be a boolean value");
		r->no_log = (int)v->num;
	}
	if ((v = json_doc_get(doc, "beam_width")) != NULL) {
		if (!is_int(v, -1e18, 1e18))
			BAD("beam_width must be integer");
		if (v->num < 1)
			BAD("beam_width must be an integer > 1");
		if (p->nkids > 1)
			BAD("When doing beam_search, batch size must be 1");
		if (v->num > 1)
			BAD("beam_width > 1 is not supported: beam search is "
			    "not built");
		r->beam = 1;
	}
	if ((v = json_doc_get(doc, "stop_token")) != NULL) {
		if (!is_int(v, -1e18, 1e18))
			BAD("stop_token must be an integer");
		r->stop_token = v->num >= 0 && v->num < c->V ?
		    (int32_t)v->num : -1;
	} else {
		r->stop_token = (int32_t)tokenizer_eod(c->vocab);
	}
	if ((v = json_doc_get(doc, "length_penalty")) != NULL &&
	    v->type != JV_NUMBER)
		BAD("length_penalty must be a float");
	/* top_k 1 is greedy (gen_pick); beam width 1 is greedy too */
	r->o.top_k = r->beam ? 1 : (int)top_k;
	r->o.top_p = top_p < 1 ? top_p : 0;
	r->o.eod = -1;		/* the stop tokens are the server's */
	r->nl = c->nl;
	r->nlnl = c->nlnl;
	for (m = 0; m < p->nkids; m++) {
		size_t n;

		ids.n = 0;
		n = tokenizer_encode(c->bs, p->kids[m].str,
		    strlen(p->kids[m].str), &ids) + (size_t)add_bos;

		if ((int)n > maxlen)
			maxlen = (int)n;
	}
	if ((long long)maxlen + ttg > c->ctx)
		BAD("Length of prompt + tokens_to_generate longer than "
		    "allowed");
	for (m = 0; m < p->nkids; m++) {
		ids.n = 0;
		if (add_bos) {
			if (ids.cap == 0)
				ids.v = xmalloc(sizeof *ids.v * (ids.cap = 64));
			ids.v[ids.n++] = tokenizer_eod(c->vocab);
		}
		tokenizer_encode(c->bs, p->kids[m].str, strlen(p->kids[m].str), &ids);
		if (ids.n >= (size_t)c->ctx || (ids.n == 0)) {
			free(ids.v);
			BAD("Length of prompt + tokens_to_generate longer than "
			    "allowed");
		}
		r->ptokens += (long long)ids.n;
		add_seq(r, (const int32_t *)ids.v, (int)ids.n, (int)m);
	}
	free(ids.v);
	/*
	 * Megatron pads every prompt to the longest and generates up to
	 * the longest plus tokens_to_generate: a shorter prompt gets more.
	 */
	for (i = 0; i < r->nseq; i++)
		r->seq[i].o.max_new = ttg == 0 ? 0 :
		    maxlen + ttg - r->seq[i].nprompt;
	return r;
#undef BAD
}

/*
 * Triton's fields: a name and its values. The generate extension gives
 * them as members of the body (TensorRT-LLM's backend: a tensor of one
 * element may come as a list of one) and of its "parameters" (vLLM's
 * backend, also as the JSON text of "sampling_parameters"); infer as
 * KServe v2 tensors, each with its datatype.
 */
#define V2_MAX_FIELDS 32
struct v2f {
	const char *name;
	const struct json_val **v;	/* (n) */
	size_t n;
	const char *dtype;		/* infer's datatype, or NULL */
};

struct v2set {
	struct v2f f[V2_MAX_FIELDS];
	int n;
	const struct json_val *one[V2_MAX_FIELDS];	/* generate's values */
};

static void
v2_free(struct v2set *fs)
{
	int i;

	for (i = 0; i < fs->n; i++)
		if (fs->f[i].v != &fs->one[i])
			free(fs->f[i].v);
}

/* The field name, or NULL. */
static const struct v2f *
v2_get(const struct v2set *fs, const char *name)
{
	int i;

	for (i = 0; i < fs->n; i++)
		if (strcmp(fs->f[i].name, name) == 0)
			return &fs->f[i];
	return NULL;
}

/* Add name with value v (a list: its members); NULL, or why not. */
static const char *
v2_add(struct v2set *fs, const char *name, const struct json_val *v,
    const char *dtype)
{
	struct v2f *f;
	size_t i;

	if (v2_get(fs, name) != NULL)
		return "is given twice";
	if (fs->n == V2_MAX_FIELDS)
		return "is one field too many";
	f = &fs->f[fs->n];
	f->name = name;
	f->dtype = dtype;
	if (v->type == JV_ARRAY) {
		f->v = xmalloc((v->nkids ? v->nkids : 1) * sizeof *f->v);
		for (i = f->n = 0; i < v->nkids; i++) {
			const struct json_val *k = &v->kids[i];

			if (k->type == JV_ARRAY && k->nkids == 1)
				k = &k->kids[0];	/* a [N, 1] tensor */
			f->v[f->n++] = k;
		}
	} else {
		fs->one[fs->n] = v;
		f->v = &fs->one[fs->n];
		f->n = 1;
	}
	fs->n++;
	return NULL;
}

/* The members of map m as fields; NULL, or the name of a bad one. */
static const char *
v2_members(struct v2set *fs, const struct json_val *m, const char **why)
{
	size_t i;

	for (i = 0; i < m->nkids; i++)
		if ((*why = v2_add(fs, m->kids[i].key, &m->kids[i], NULL)) !=
		    NULL)
			return m->kids[i].key;
	return NULL;
}

/* The fields and their types: S string, I integer, F number, B boolean. */
static const struct { const char *name; char type; int list; } v2_known[] = {
	{ "text_input", 'S', 1 }, { "max_tokens", 'I', 0 },
	{ "temperature", 'F', 0 }, { "top_k", 'I', 0 }, { "top_p", 'F', 0 },
	{ "random_seed", 'I', 0 }, { "seed", 'I', 0 },
	{ "stop_words", 'S', 1 }, { "stop", 'S', 1 },
	{ "bad_words", 'S', 1 }, { "return_log_probs", 'B', 0 },
	{ "exclude_input_in_output", 'B', 0 }, { "stream", 'B', 0 },
	{ "ignore_eos", 'B', 0 }, { "end_id", 'I', 0 },
	{ "beam_width", 'I', 0 }, { "return_finish_reason", 'B', 0 },
	{ "return_num_input_tokens", 'B', 0 },
	{ "return_num_output_tokens", 'B', 0 },
};
#define V2_NKNOWN (sizeof v2_known / sizeof *v2_known)

/* Whether infer's datatype dt carries values of type t. */
static int
v2_dtype_ok(const char *dt, char t)
{
	int integer = strncmp(dt, "INT", 3) == 0 || strncmp(dt, "UINT", 4) == 0;

	return t == 'S' ? strcmp(dt, "BYTES") == 0 : t == 'B' ?
	    strcmp(dt, "BOOL") == 0 : t == 'I' ? integer :
	    integer || strncmp(dt, "FP", 2) == 0;
}

/* Check every field against v2_known; NULL, or the message. */
static const char *
v2_check(const struct v2set *fs, int kind, char *msg, size_t size)
{
	int i;
	size_t k, j;

	for (i = 0; i < fs->n; i++) {
		const struct v2f *f = &fs->f[i];
		const char *what;

		for (k = 0; k < V2_NKNOWN && strcmp(f->name, v2_known[k].name);
		    k++)
			;
		if (k == V2_NKNOWN) {
			snprintf(msg, size, "unexpected inference input '%s'",
			    f->name);
			return msg;
		}
		what = v2_known[k].type == 'S' ? "a string" : v2_known[k].type
		    == 'I' ? "an integer" : v2_known[k].type == 'F' ?
		    "a number" : "a boolean";
		if (f->dtype != NULL && !v2_dtype_ok(f->dtype, v2_known[k].type)) {
			snprintf(msg, size, "%s: datatype %s does not hold %s",
			    f->name, f->dtype, what);
			return msg;
		}
		if (!v2_known[k].list && f->n != 1) {
			snprintf(msg, size, "%s: must be one value", f->name);
			return msg;
		}
		if (strcmp(f->name, "text_input") == 0 && (f->n == 0 ||
		    f->n > (kind == SERVE_INFER ? SERVE_MAX_SAMPLES : 1))) {
			snprintf(msg, size, "text_input: must be %s",
			    kind == SERVE_INFER ? "1 to 128 strings" :
			    "one string");
			return msg;
		}
		for (j = 0; j < f->n; j++) {
			const struct json_val *v = f->v[j];
			int ok = v2_known[k].type == 'S' ? v->type == JV_STRING :
			    v2_known[k].type == 'B' ? v->type == JV_BOOL :
			    v2_known[k].type == 'I' ? is_int(v, -1e300, 1e300) :
			    v->type == JV_NUMBER;

			if (!ok) {
				snprintf(msg, size, "%s: must be %s%s", f->name,
				    what, v2_known[k].list ? " or a list of them"
				    : "");
				return msg;
			}
		}
	}
	return NULL;
}

/* The body of an infer: its input tensors and parameters as fields. */
static const char *
v2_infer_fields(struct serve_req *r, const struct json_val *doc,
    struct v2set *fs, char *msg, size_t size)
{
	const struct json_val *in, *v, *o, *n;
	const char *bad, *why;
	static const char *const outs[] = { "text_output", "cum_log_probs",
	    "output_log_probs", "finish_reason", "num_input_tokens",
	    "num_output_tokens" };
	int k;
	size_t i, j;

	for (i = 0; i < doc->nkids; i++)
		if (strcmp(doc->kids[i].key, "inputs") &&
		    strcmp(doc->kids[i].key, "outputs") &&
		    strcmp(doc->kids[i].key, "parameters") &&
		    strcmp(doc->kids[i].key, "id")) {
			snprintf(msg, size, "unexpected member '%s' of an "
			    "inference request", doc->kids[i].key);
			return msg;
		}
	if ((in = json_doc_get(doc, "inputs")) == NULL || in->type != JV_ARRAY)
		return "inputs: must be a list of tensors";
	for (i = 0; i < in->nkids; i++) {
		const struct json_val *t = &in->kids[i], *dt, *sh, *d;
		double count = 1;
		size_t nd = 0;

		if (t->type != JV_MAP || (n = json_doc_get(t, "name")) == NULL ||
		    n->type != JV_STRING || (dt = json_doc_get(t, "datatype")) ==
		    NULL || dt->type != JV_STRING || (sh = json_doc_get(t,
		    "shape")) == NULL || sh->type != JV_ARRAY || (d =
		    json_doc_get(t, "data")) == NULL || d->type != JV_ARRAY ||
		    sh->nkids < 1 || sh->nkids > 2)
			return "inputs: each a tensor of name, datatype, shape "
			    "(of one or two dimensions) and data";
		for (j = 0; j < sh->nkids; j++) {
			if (!is_int(&sh->kids[j], 0, 1 << 20))
				return "inputs: a shape holds sizes";
			count *= sh->kids[j].num;
		}
		for (j = 0; j < d->nkids; j++)	/* data flat or nested once */
			nd += d->kids[j].type == JV_ARRAY ? d->kids[j].nkids : 1;
		if (sh->nkids == 2 && sh->kids[1].num != 1) {
			snprintf(msg, size, "%s: shape [N, 1] or [N] only",
			    n->str);
			return msg;
		}
		if ((double)nd != count || nd != d->nkids) {
			snprintf(msg, size, "%s: its data does not fill its "
			    "shape", n->str);
			return msg;
		}
		if ((why = v2_add(fs, n->str, d, dt->str)) != NULL) {
			snprintf(msg, size, "%s %s", n->str, why);
			return msg;
		}
		if (strcmp(n->str, "text_input") == 0)
			r->v2shape = (int)sh->nkids;
	}
	if ((v = json_doc_get(doc, "parameters")) != NULL) {
		if (v->type != JV_MAP)
			return "parameters: must be an object";
		if ((bad = v2_members(fs, v, &why)) != NULL) {
			snprintf(msg, size, "%s %s", bad, why);
			return msg;
		}
	}
	if ((o = json_doc_get(doc, "outputs")) != NULL) {
		if (o->type != JV_ARRAY)
			return "outputs: must be a list";
		r->v2out = 0;
		for (i = 0; i < o->nkids; i++) {
			n = o->kids[i].type == JV_MAP ? json_doc_get(&o->kids[i],
			    "name") : NULL;
			for (k = 0; k < 6 && (n == NULL || n->type != JV_STRING ||
			    strcmp(n->str, outs[k])); k++)
				;
			if (k == 6)
				return "outputs: each names an output: "
				    "text_output, cum_log_probs, output_log_probs, "
				    "finish_reason, num_input_tokens or "
				    "num_output_tokens";
			r->v2out |= 1 << k;
		}
	}
	return NULL;
}

/* The value of field name: the integer, number or boolean in *x; 0 if absent. */
static int
v2_val(const struct v2set *fs, const char *name, double *x)
{
	const struct v2f *f = v2_get(fs, name);

	if (f == NULL || f->n == 0)
		return 0;
	*x = f->v[0]->num;
	return 1;
}

/*
 * Triton's generate, generate_stream (kind) or infer: one sample for each
 * text_input, with TensorRT-LLM's and vLLM's fields.
 */
static struct serve_req *
parse_v2(int kind, const struct json_val *doc, const struct serve_api_ctx *c,
    int *status, struct buf *err)
{
	struct serve_req *r = new_req(kind, c);
	struct json_val *sp = NULL;
	struct v2set fs;
	const struct json_val *v;
	const struct v2f *f;
	struct bpe_ids ids = { 0 };
	const char *bad, *why = NULL;
	char msg[300];
	double x;
	int max_tokens = 16, i;
	size_t m;

	fs.n = 0;
	r->v2out = 1;
	r->echo = 1;
	r->stream = kind == SERVE_GENERATE_STREAM;
#define BAD(...) do { v2_free(&fs); json_doc_free(sp); \
	return refuse(r, err, status, 400, __VA_ARGS__); } while (0)
	if ((v = json_doc_get(doc, "id")) != NULL) {
		if (v->type != JV_STRING)
			BAD("id: must be a string");
		r->v2id = xstrdup(v->str);
	}
	if (kind == SERVE_INFER) {
		if ((why = v2_infer_fields(r, doc, &fs, msg, sizeof msg)) != NULL)
			BAD("%s", why);
	} else {
		for (m = 0; m < doc->nkids; m++) {
			const char *k = doc->kids[m].key;

			if (strcmp(k, "id") == 0)
				continue;
			if (strcmp(k, "parameters") == 0) {
				if (doc->kids[m].type != JV_MAP)
					BAD("parameters: must be an object");
				if ((bad = v2_members(&fs, &doc->kids[m], &why)))
					BAD("%s %s", bad, why);
			} else if (strcmp(k, "sampling_parameters") == 0) {
				const struct json_val *t = &doc->kids[m];
				char e[200];

				if (t->type == JV_ARRAY && t->nkids == 1)
					t = &t->kids[0];
				if (t->type != JV_STRING || sp != NULL ||
				    (sp = json_doc_parse(t->str, strlen(t->str),
				    e, sizeof e, NULL)) == NULL ||
				    sp->type != JV_MAP)
					BAD("sampling_parameters: must be an "
					    "object as JSON text");
				if ((bad = v2_members(&fs, sp, &why)))
					BAD("%s %s", bad, why);
			} else if ((why = v2_add(&fs, k, &doc->kids[m], NULL))) {
				BAD("%s %s", k, why);
			}
		}
	}
	if ((why = v2_check(&fs, kind, msg, sizeof msg)) != NULL)
		BAD("%s", why);
	if ((f = v2_get(&fs, "text_input")) == NULL)
		BAD("text_input: required");
	if (v2_val(&fs, "stream", &x) && (x != 0) != (kind ==
	    SERVE_GENERATE_STREAM))
		BAD("stream: %s", kind == SERVE_GENERATE_STREAM ? "must be true "
		    "here, or absent" : kind == SERVE_INFER ? "not supported "
		    "by infer: use generate_stream" : "must be false here, or "
		    "absent: use generate_stream");
	if (v2_val(&fs, "max_tokens", &x)) {
		if (x < 0 || x > 1 << 30)
			BAD("max_tokens: must be an integer of at least 0");
		max_tokens = (int)x;
	}
	if (v2_val(&fs, "temperature", &x)) {
		if (!(x >= 0 && x <= 100))
			BAD("temperature: must be a number from 0 to 100");
		r->o.temperature = x;
	}
	if (v2_val(&fs, "top_k", &x)) {
		if (x < -1 || x > 1 << 30)
			BAD("top_k: must be an integer; -1 or 0: all");
		r->o.top_k = x > 0 ? (int)x : 0;
	}
	if (v2_val(&fs, "top_p", &x)) {
		if (!(x >= 0 && x <= 1))
			BAD("top_p: must be a number from 0 to 1; 0 or 1: all");
		r->o.top_p = x > 0 && x < 1 ? x : 0;
	}
	if (v2_get(&fs, "random_seed") && v2_get(&fs, "seed"))
		BAD("random_seed and seed: give one");
	if (v2_val(&fs, "random_seed", &x) || v2_val(&fs, "seed", &x)) {
		if (x < 0 || x > 18446744073709549568.0)
			BAD("%s: must be an integer from 0 to 2^64-1",
			    v2_get(&fs, "seed") ? "seed" : "random_seed");
		r->o.seed = (uint64_t)x;
	}
	if (v2_val(&fs, "ignore_eos", &x) && x != 0)
		r->o.eod = -1;
	if (v2_val(&fs, "end_id", &x)) {
		if (x < 0 || x >= c->V)
			BAD("end_id: must be a token id from 0 to %d", c->V - 1);
		if (r->o.eod < 0)
			BAD("end_id and ignore_eos: give one");
		r->o.eod = (int32_t)x;
	}
	if (v2_val(&fs, "beam_width", &x) && x != 1)
		BAD("beam_width: only 1 is supported: beam search is not built");
	if ((f = v2_get(&fs, "bad_words")) != NULL)
		for (m = 0; m < f->n; m++)
			if (f->v[m]->str[0] != '\0')
				BAD("bad_words: not supported");
	if (v2_get(&fs, "stop_words") && v2_get(&fs, "stop"))
		BAD("stop_words and stop: give one");
	if ((f = v2_get(&fs, "stop_words")) != NULL || (f = v2_get(&fs,
	    "stop")) != NULL) {
		if (f->n > SERVE_MAX_STOPS)
			BAD("%s: at most %d strings", f->name, SERVE_MAX_STOPS);
		for (m = 0; m < f->n; m++)
			if (f->v[m]->str[0] != '\0')	/* "": none */
				r->stop[r->nstop++] = xstrdup(f->v[m]->str);
	}
	/* infer's outputs, where given, choose; else return_* add to text */
	if (kind != SERVE_INFER || json_doc_get(doc, "outputs") == NULL) {
		if (v2_val(&fs, "return_log_probs", &x) && x != 0)
			r->v2out |= 2 | 4;
		if (v2_val(&fs, "return_finish_reason", &x) && x != 0)
			r->v2out |= 8;
		if (v2_val(&fs, "return_num_input_tokens", &x) && x != 0)
			r->v2out |= 16;
		if (v2_val(&fs, "return_num_output_tokens", &x) && x != 0)
			r->v2out |= 32;
	}
	r->logprobs = (r->v2out & 6) != 0;
	if (r->stream && r->logprobs)
		BAD("return_log_probs: not supported with generate_stream");
	if (v2_val(&fs, "exclude_input_in_output", &x))
		r->echo = x == 0;
	r->o.max_new = max_tokens;
	f = v2_get(&fs, "text_input");
	for (m = 0; m < f->n; m++) {
		const char *t = f->v[m]->str;

		ids.n = 0;
		tokenizer_encode(c->bs, t, strlen(t), &ids);
		if (ids.n == 0) {	/* generate from <|endoftext|> */
			if (ids.cap == 0)
				ids.v = xmalloc(sizeof *ids.v * (ids.cap = 1));
			ids.v[ids.n++] = tokenizer_eod(c->vocab);
		}
		if ((long long)ids.n + max_tokens > c->ctx || ids.n >=
		    (size_t)c->ctx) {
			free(ids.v);
			BAD("text_input and max_tokens: %zu and %d tokens, over "
			    "the model's context of %d", ids.n, max_tokens,
			    c->ctx);
		}
		r->ptokens += (long long)ids.n;
		add_seq(r, (const int32_t *)ids.v, (int)ids.n, (int)m)->noecho =
		    t[0] == '\0';
	}
	free(ids.v);
	for (i = 0; i < r->nseq; i++) {	/* no prompt logprobs */
		free(r->seq[i].plp);
		r->seq[i].plp = r->seq[i].g.prompt_lp = NULL;
	}
	v2_free(&fs);
	json_doc_free(sp);
	return r;
#undef BAD
}

struct serve_req *
serve_api_parse(int kind, const char *body, size_t len,
    const struct serve_api_ctx *c, int *status, struct buf *err)
{
	struct json_val *doc;
	struct serve_req *r;
	char why[256];

	if ((doc = json_doc_parse(body, len, why, sizeof why, NULL)) == NULL) {
		*status = 400;
		if (kind == SERVE_MEGATRON)	/* flask's words */
			serve_api_error(err, kind, 400, "Failed to decode JSON "
			    "object");
		else {
			char msg[320];

			snprintf(msg, sizeof msg, "invalid JSON: %s", why);
			serve_api_error(err, kind, 400, msg);
		}
		return NULL;
	}
	if (doc->type != JV_MAP) {
		json_doc_free(doc);
		*status = 400;
		serve_api_error(err, kind, 400, kind == SERVE_MEGATRON ?
		    "prompts argument required" : "the request body must be "
		    "a JSON object");
		return NULL;
	}
	r = kind == SERVE_OPENAI ? parse_openai(doc, c, status, err) :
	    kind == SERVE_MEGATRON ? parse_megatron(doc, c, status, err) :
	    parse_v2(kind, doc, c, status, err);
	json_doc_free(doc);
	return r;
}

/* The log-probability of tok under logits (V), and the top n of them. */
static float
logprob(const float *logits, int V, int32_t tok, int n, int32_t *topid,
    float *toplp)
{
	double max = -INFINITY, sum = 0, lse;
	int i, j, k;

	for (i = 0; i < V; i++)
		max = logits[i] > max ? logits[i] : max;
	for (i = 0; i < V; i++)
		sum += exp((double)logits[i] - max);
	lse = max + log(sum);
	for (k = 0; k < n; k++) {	/* n <= SERVE_MAX_TOP: insertion */
		topid[k] = -1;
		toplp[k] = -INFINITY;
	}
	for (i = 0; i < V && n > 0; i++) {
		if (topid[n - 1] >= 0 && logits[i] <= toplp[n - 1])
			continue;
		for (j = n - 1; j > 0 && (topid[j - 1] < 0 ||
		    logits[i] > toplp[j - 1]); j--) {
			topid[j] = topid[j - 1];
			toplp[j] = toplp[j - 1];
		}
		topid[j] = i;
		toplp[j] = logits[i];
	}
	for (k = 0; k < n; k++)
		toplp[k] = (float)(toplp[k] - lse);
	return (float)(logits[tok] - lse);
}

/* The bytes of text[0..n) that end at a character's end. */
static size_t
utf8_whole(const char *text, size_t n)
{
	size_t i = n, need;
	unsigned char c;

	while (i > 0 && n - i < 4 && ((unsigned char)text[i - 1] & 0xc0) ==
	    0x80)
		i--;
	if (i == 0)
		return n;
	c = (unsigned char)text[i - 1];
	need = c >= 0xf0 && c < 0xf8 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
	if (c < 0xc0 || c >= 0xf8)
		return n;
	return i - 1 + need > n ? i - 1 : n;
}

/*
 * OpenAI: the end of what may be sent of s's text: not inside a
 * character, not into a tail that may still become a stop string.
 */
static size_t
sendable(const struct serve_seq *s, int final)
{
	const struct serve_req *r = s->req;
	size_t n = s->text.len, hold = 0, k;
	int i;

	if (final)
		return n;
	for (i = 0; i < r->nstop; i++) {
		size_t sl = strlen(r->stop[i]);

		for (k = sl - 1 < n ? sl - 1 : n; k > hold; k--)
			if (memcmp(s->text.p + n - k, r->stop[i], k) == 0) {
				hold = k;
				break;
			}
	}
	return utf8_whole(s->text.p, n - hold);
}

static void
chunk_head(struct json_w *w, const struct serve_req *r)
{
	json_w_obj(w);
	json_w_kstr(w, "id", r->id);
	json_w_kstr(w, "object", "text_completion");
	json_w_kint(w, "created", r->created);
	json_w_kstr(w, "model", r->model);
}

static const char *
finish_reason(const struct serve_seq *s)
{
	return s->stopped || s->g.end == GEN_EOD ? "stop" : "length";
}

/* Triton's answer's head: the model, its version, the request's id. */
static void
v2_head(struct json_w *w, const struct serve_req *r)
{
	json_w_obj(w);
	json_w_kstr(w, "model_name", r->model);
	json_w_kstr(w, "model_version", "1");
	if (r->v2id != NULL) {
		json_w_kstr(w, "id", r->v2id);
	}
}

static const char *finish_reason(const struct serve_seq *s);

/* The outputs of generate that text_output's bit leaves out, of s. */
static void
v2_extras(struct json_w *w, const struct serve_seq *s)
{
	const struct serve_req *r = s->req;

	if (r->v2out & 8) {
		json_w_kstr(w, "finish_reason", finish_reason(s));
	}
	if (r->v2out & 16) {
		json_w_kint(w, "num_input_tokens", s->nprompt);
	}
	if (r->v2out & 32) {
		json_w_ku64(w, "num_output_tokens", s->ids.n);
	}
}

/*
 * A stream event: text (a JSON string) of s, and whether it ends.
 * OpenAI's chunk, or Triton's generate_stream answer.
 */
static void
stream_chunk(struct serve_seq *s, const char *text, size_t n, int end)
{
	struct serve_req *r = s->req;
	struct json_w w;

	buf_add(&r->out, "data: ", 6);
	json_w_init(&w, &r->out, JSON_COMPACT);
	if (SERVE_IS_V2(r->kind)) {
		v2_head(&w, r);
		json_w_key(&w, "text_output");
		json_w_raw(&w, text, n);
		if (end)
			v2_extras(&w, s);
		json_w_end(&w);
		buf_add(&r->out, "\n\n", 2);
		return;
	}
	chunk_head(&w, r);
	json_w_key(&w, "choices");
	json_w_arr(&w);
	json_w_obj(&w);
	json_w_key(&w, "text");
	json_w_raw(&w, text, n);
	json_w_kint(&w, "index", s->index);
	json_w_key(&w, "logprobs");
	json_w_null(&w);
	json_w_key(&w, "finish_reason");
	if (end)
		json_w_strz(&w, finish_reason(s));
	else
		json_w_null(&w);
	json_w_end(&w);
	json_w_end(&w);
	if (r->include_usage) {
		json_w_key(&w, "usage");
		json_w_null(&w);
	}
	json_w_end(&w);
	buf_add(&r->out, "\n\n", 2);
}

/*
 * The next stream event of s: what may be sent, bad UTF-8 as U+FFFD as
 * in the whole answer (cut between characters, the same text).
 */
static void
stream_text(struct serve_seq *s, int final)
{
	size_t e = sendable(s, final);
	struct buf t = { 0 };

	if (e <= s->sent && !final)
		return;
	json_string_lossy(&t, s->text.p ? s->text.p + s->sent : "", e - s->sent);
	stream_chunk(s, t.p, t.len, final);
	buf_free(&t);
	s->sent = e;
}

int
serve_api_token(struct serve_seq *s, int32_t tok, const float *logits)
{
	struct serve_req *r = s->req;
	size_t n, len, old = s->text.len;
	const char *b;
	int i, stop = 0;

	if (s->ids.n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 32;
		s->ids.v = xrealloc(s->ids.v, s->cap * sizeof *s->ids.v);
		s->lp = xrealloc(s->lp, s->cap * sizeof *s->lp);
		if (r->ntop > 0) {
			s->topid = xrealloc(s->topid, s->cap * r->ntop *
			    sizeof *s->topid);
			s->toplp = xrealloc(s->toplp, s->cap * r->ntop *
			    sizeof *s->toplp);
		}
	}
	n = s->ids.n++;
	s->ids.v[n] = (uint32_t)tok;
	if (r->logprobs)
		s->lp[n] = logprob(logits, r->V, tok, r->ntop, r->ntop ?
		    s->topid + n * r->ntop : NULL, r->ntop ? s->toplp + n *
		    r->ntop : NULL);
	if ((b = tokenizer_token(r->vocab, (uint32_t)tok, &len)) != NULL)
		buf_add(&s->text, b, len);
	if (r->kind == SERVE_MEGATRON) {
		if (r->stop_double_eol)
			stop = tok == r->nlnl || (tok == r->nl && (n > 0 ?
			    (int32_t)s->ids.v[n - 1] : s->prompt[s->nprompt -
			    1]) == r->nl);
		else if (r->stop_eol)
			stop = tok == r->nlnl || tok == r->nl;
		else
			stop = tok == r->stop_token;
		return s->stopped = stop;
	}
	for (i = 0; i < r->nstop && s->text.len > 0; i++) {
		size_t sl = strlen(r->stop[i]), from = old >= sl ? old - sl + 1
		    : 0;
		char *at = memmem(s->text.p + from, s->text.len - from,
		    r->stop[i], sl);

		if (at != NULL && (!stop || (size_t)(at - s->text.p) <
		    s->text.len)) {
			s->text.len = (size_t)(at - s->text.p);
			s->text.p[s->text.len] = '\0';
			stop = 1;
		}
	}
	s->stopped = stop;
	if (r->stream && !stop)
		stream_text(s, 0);
	return stop;
}

void
serve_api_begin(struct serve_seq *s)
{
	struct buf t = { 0 }, j = { 0 };

	if (s->req->kind == SERVE_MEGATRON || !s->req->stream ||
	    !s->req->echo || s->noecho)
		return;
	tokenizer_decode(s->req->vocab, (const uint32_t *)s->prompt,
	    (size_t)s->nprompt, &t);
	json_string_lossy(&j, t.p, t.len);
	stream_chunk(s, j.p, j.len, 0);
	buf_free(&t);
	buf_free(&j);
}

void
serve_api_end(struct serve_seq *s)
{
	if (s->req->kind != SERVE_MEGATRON && s->req->stream)
		stream_text(s, 1);
}

/* OpenAI's logprobs object of s: its tokens (the prompt's with echo). */
static void
openai_logprobs(struct json_w *w, const struct serve_seq *s, size_t textlen)
{
	const struct serve_req *r = s->req;
	int np = r->echo ? s->nprompt : 0, i, k, pass;
	size_t len, off;
	const char *b;

	json_w_obj(w);
	for (pass = 0; pass < 4; pass++) {
		json_w_key(w, pass == 0 ? "tokens" : pass == 1 ?
		    "token_logprobs" : pass == 2 ? "top_logprobs" :
		    "text_offset");
		json_w_arr(w);
		off = 0;
		for (i = 0; i < np + (int)s->ids.n; i++) {
			uint32_t id = i < np ? (uint32_t)s->prompt[i] :
			    s->ids.v[i - np];

			if (off >= textlen && i >= np)
				break;	/* cut by a stop string */
			b = tokenizer_token(r->vocab, id, &len);
			if (pass == 0)
				json_w_str(w, b ? b : "", b ? len : 0);
			else if (pass == 1 && i == 0 && np > 0)
				json_w_null(w);
			else if (pass == 1)
				json_w_num(w, "%.9g", i < np ? s->plp[i - 1] :
				    s->lp[i - np]);
			else if (pass == 2 && (i < np || r->ntop == 0))
				json_w_null(w);
			else if (pass == 2) {
				json_w_obj(w);
				for (k = 0; k < r->ntop; k++) {
					int32_t t = s->topid[(i - np) *
					    r->ntop + k];
					const char *tb;
					size_t tl;
					char *key;

					if (t < 0)
						continue;
					tb = tokenizer_token(r->vocab, (uint32_t)t,
					    &tl);
					key = xmalloc(tl + 1);
					memcpy(key, tb, tl);
					key[tl] = '\0';
					json_w_key(w, key);
					free(key);
					json_w_num(w, "%.9g", s->toplp[(i -
					    np) * r->ntop + k]);
				}
				json_w_end(w);
			} else if (pass == 3)
				json_w_u64(w, off);
			off += len;
		}
		json_w_end(w);
	}
	json_w_end(w);
}

static void
usage(struct json_w *w, const struct serve_req *r)
{
	long long gen = 0;
	int i;

	for (i = 0; i < r->nseq; i++)
		gen += (long long)r->seq[i].ids.n;
	json_w_key(w, "usage");
	json_w_obj(w);
	json_w_kint(w, "prompt_tokens", r->ptokens);
	json_w_kint(w, "completion_tokens", gen);
	json_w_kint(w, "total_tokens", r->ptokens + gen);
	json_w_end(w);
}

static void
answer_openai(struct serve_req *r)
{
	struct json_w w;
	struct buf t = { 0 }, lossy = { 0 };
	int i;

	if (r->stream) {
		if (r->include_usage) {
			buf_add(&r->out, "data: ", 6);
			json_w_init(&w, &r->out, JSON_COMPACT);
			chunk_head(&w, r);
			json_w_key(&w, "choices");
			json_w_arr(&w);
			json_w_end(&w);
			usage(&w, r);
			json_w_end(&w);
			buf_add(&r->out, "\n\n", 2);
		}
		buf_adds(&r->out, "data: [DONE]\n\n");
		return;
	}
	json_w_init(&w, &r->out, JSON_COMPACT);
	chunk_head(&w, r);
	json_w_key(&w, "choices");
	json_w_arr(&w);
	for (i = 0; i < r->nseq; i++) {
		struct serve_seq *s = &r->seq[i];

		t.len = 0;
		if (r->echo)
			tokenizer_decode(r->vocab, (const uint32_t *)s->prompt,
			    (size_t)s->nprompt, &t);
		buf_add(&t, s->text.p, s->text.len);
		json_w_obj(&w);
		json_w_key(&w, "text");
		lossy.len = 0;
		json_string_lossy(&lossy, t.p, t.len);
		json_w_raw(&w, lossy.p, lossy.len);
		json_w_kint(&w, "index", s->index);
		json_w_key(&w, "logprobs");
		if (r->logprobs)
			openai_logprobs(&w, s, t.len);
		else
			json_w_null(&w);
		json_w_kstr(&w, "finish_reason", finish_reason(s));
		json_w_end(&w);
	}
	json_w_end(&w);
	usage(&w, r);
	json_w_end(&w);
	buf_add(&r->out, "\n", 1);
	buf_free(&t);
	buf_free(&lossy);
}

static void
answer_megatron(struct serve_req *r)
{
	struct json_w w;
	struct buf t = { 0 }, l = { 0 };
	const char *b;
	size_t len, k;
	int i, pass;

	json_w_init(&w, &r->out, JSON_COMPACT);
	json_w_obj(&w);
	for (pass = 0; pass < 3; pass++) {
		json_w_key(&w, pass == 0 ? "text" : pass == 1 ? "segments" :
		    r->beam ? "scores" : "logprobs");
		if (pass == 2 && !r->logprobs && !r->beam) {
			json_w_null(&w);
			continue;
		}
		json_w_arr(&w);
		for (i = 0; i < r->nseq; i++) {
			struct serve_seq *s = &r->seq[i];
			size_t n = (size_t)s->nprompt + s->ids.n;
			double sum = 0;

			if (pass == 0) {
				t.len = 0;
				tokenizer_decode(r->vocab, (const uint32_t *)s->prompt,
				    (size_t)s->nprompt, &t);
				buf_add(&t, s->text.p, s->text.len);
				l.len = 0;
				json_string_lossy(&l, t.p, t.len);
				json_w_raw(&w, l.p, l.len);
				continue;
			}
			if (pass == 2 && r->beam) {
				for (k = 0; k < s->ids.n; k++)
					sum += s->lp[k];
				json_w_num(&w, "%.9g", sum);
				continue;
			}
			json_w_arr(&w);
			for (k = pass == 1 ? 0 : 1; k < n; k++) {
				uint32_t id = k < (size_t)s->nprompt ?
				    (uint32_t)s->prompt[k] :
				    s->ids.v[k - s->nprompt];

				if (pass == 2) {
					json_w_num(&w, "%.9g", k <
					    (size_t)s->nprompt ? s->plp[k - 1] :
					    s->lp[k - s->nprompt]);
					continue;
				}
				b = tokenizer_token(r->vocab, id, &len);
				l.len = 0;
				json_string_lossy(&l, b ? b : "", b ? len : 0);
				json_w_raw(&w, l.p, l.len);
			}
			json_w_end(&w);
		}
		json_w_end(&w);
	}
	json_w_end(&w);
	buf_add(&r->out, "\n", 1);
	buf_free(&t);
	buf_free(&l);
}

/* The text_output of s: its prompt unless excluded, and its text. */
static void
v2_text(struct buf *t, const struct serve_seq *s)
{
	t->len = 0;
	if (s->req->echo && !s->noecho)
		tokenizer_decode(s->req->vocab, (const uint32_t *)s->prompt,
		    (size_t)s->nprompt, t);
	buf_add(t, s->text.p, s->text.len);
}

/*
 * The generated tokens of s that its text holds (a stop string cuts
 * the text, and the tokens from the one it begins in).
 */
static size_t
v2_ntok(const struct serve_seq *s)
{
	size_t k, off = 0, len;

	for (k = 0; k < s->ids.n && off < s->text.len; k++) {
		if (tokenizer_token(s->req->vocab, s->ids.v[k], &len) != NULL)
			off += len;
	}
	return s->stopped ? k : s->ids.n;
}

static double
v2_cum(const struct serve_seq *s)
{
	size_t k, n = v2_ntok(s);
	double sum = 0;

	for (k = 0; k < n; k++)
		sum += s->lp[k];
	return sum;
}

/* A tensor's object opened: name, datatype, shape [n] or [n, second]. */
static void
v2_tensor_head(struct json_w *w, const char *name, const char *dtype, int n,
    int second)
{
	json_w_obj(w);
	json_w_kstr(w, "name", name);
	json_w_kstr(w, "datatype", dtype);
	json_w_key(w, "shape");
	json_w_arr(w);
	json_w_int(w, n);
	if (second >= 0)
		json_w_int(w, second);
	json_w_end(w);
}

/* An infer output tensor, its data array opened. */
static void
v2_tensor(struct json_w *w, const char *name, const char *dtype, int n,
    int second)
{
	v2_tensor_head(w, name, dtype, n, second);
	json_w_key(w, "data");
	json_w_arr(w);
}

static void
answer_v2(struct serve_req *r)
{
	struct json_w w;
	struct buf t = { 0 }, lossy = { 0 };
	struct serve_seq *s = &r->seq[0];
	size_t k, n, most = 0;
	int i;

	if (r->stream)		/* its last event is sent */
		return;
	json_w_init(&w, &r->out, JSON_COMPACT);
	v2_head(&w, r);
	if (r->kind == SERVE_GENERATE) {
		if (r->v2out & 1) {
			v2_text(&t, s);
			json_string_lossy(&lossy, t.p ? t.p : "", t.len);
			json_w_key(&w, "text_output");
			json_w_raw(&w, lossy.p, lossy.len);
		}
		if (r->v2out & 2) {
			json_w_key(&w, "cum_log_probs");
			json_w_num(&w, "%.9g", v2_cum(s));
		}
		if (r->v2out & 4) {
			json_w_key(&w, "output_log_probs");
			json_w_arr(&w);
			for (k = 0, n = v2_ntok(s); k < n; k++)
				json_w_num(&w, "%.9g", s->lp[k]);
			json_w_end(&w);
		}
		v2_extras(&w, s);
		goto out;
	}
	json_w_key(&w, "outputs");
	json_w_arr(&w);
	if (r->v2out & 1) {
		v2_tensor(&w, "text_output", "BYTES", r->nseq, r->v2shape == 2 ?
		    1 : -1);
		for (i = 0; i < r->nseq; i++) {
			v2_text(&t, &r->seq[i]);
			lossy.len = 0;
			json_string_lossy(&lossy, t.p ? t.p : "", t.len);
			json_w_raw(&w, lossy.p, lossy.len);
		}
		json_w_end(&w);
		json_w_end(&w);
	}
	if (r->v2out & 2) {
		v2_tensor(&w, "cum_log_probs", "FP32", r->nseq, -1);
		for (i = 0; i < r->nseq; i++)
			json_w_num(&w, "%.9g", v2_cum(&r->seq[i]));
		json_w_end(&w);
		json_w_end(&w);
	}
	if (r->v2out & 4) {	/* padded with 0, as TensorRT-LLM pads */
		for (i = 0; i < r->nseq; i++)
			if (v2_ntok(&r->seq[i]) > most)
				most = v2_ntok(&r->seq[i]);
		v2_tensor(&w, "output_log_probs", "FP32", r->nseq, (int)most);
		for (i = 0; i < r->nseq; i++)
			for (k = 0, n = v2_ntok(&r->seq[i]); k < most; k++)
				json_w_num(&w, "%.9g", k < n ?
				    r->seq[i].lp[k] : 0);
		json_w_end(&w);
		json_w_end(&w);
	}
	if (r->v2out & 8) {
		v2_tensor(&w, "finish_reason", "BYTES", r->nseq, -1);
		for (i = 0; i < r->nseq; i++)
			json_w_strz(&w, finish_reason(&r->seq[i]));
		json_w_end(&w);
		json_w_end(&w);
	}
	for (k = 0; k < 2; k++) {
		if (!(r->v2out & (16 << k)))
			continue;
		v2_tensor(&w, k ? "num_output_tokens" : "num_input_tokens",
		    "INT32", r->nseq, -1);
		for (i = 0; i < r->nseq; i++)
			json_w_u64(&w, k ? r->seq[i].ids.n :
			    (uint64_t)r->seq[i].nprompt);
		json_w_end(&w);
		json_w_end(&w);
	}
	json_w_end(&w);
out:
	json_w_end(&w);
	buf_add(&r->out, "\n", 1);
	buf_free(&t);
	buf_free(&lossy);
}

void
serve_api_answer(struct serve_req *r)
{
	if (r->kind == SERVE_OPENAI)
		answer_openai(r);
	else if (r->kind == SERVE_MEGATRON)
		answer_megatron(r);
	else
		answer_v2(r);
}

int
serve_api_v2_path(const char *url, const char *model)
{
	size_t ml = strlen(model), vl;
	const char *p;

	if (strncmp(url, "/v2", 3) != 0 || (url[3] != '\0' && url[3] != '/'))
		return SERVE_V2_NONE;
	if (strcmp(url, "/v2") == 0 || strcmp(url, "/v2/") == 0)
		return SERVE_V2_SERVER;
	if (strcmp(url, "/v2/health/live") == 0)
		return SERVE_V2_LIVE;
	if (strcmp(url, "/v2/health/ready") == 0)
		return SERVE_V2_READY;
	if (strncmp(url, "/v2/models/", 11) != 0)
		return SERVE_V2_UNKNOWN;
	p = url + 11;
	if (strncmp(p, model, ml) != 0 || (p[ml] != '\0' && p[ml] != '/'))
		return SERVE_V2_NOMODEL;
	p += ml;
	if (strncmp(p, "/versions/", 10) == 0) {	/* the one version: 1 */
		vl = strcspn(p + 10, "/");
		if (vl != 1 || p[10] != '1')
			return SERVE_V2_NOMODEL;
		p += 11;
	}
	return *p == '\0' ? SERVE_V2_MODEL : strcmp(p, "/ready") == 0 ?
	    SERVE_V2_MODEL_READY : strcmp(p, "/generate") == 0 ?
	    SERVE_V2_GENERATE : strcmp(p, "/generate_stream") == 0 ?
	    SERVE_V2_STREAM : strcmp(p, "/infer") == 0 ? SERVE_V2_INFER :
	    SERVE_V2_UNKNOWN;
}

/* A tensor's metadata: name, datatype, shape [n]. */
static void
v2_meta_tensor(struct json_w *w, const char *name, const char *dtype, int n)
{
	v2_tensor_head(w, name, dtype, n, -1);
	json_w_end(w);
}

void
serve_api_v2_meta(struct buf *b, int path, const char *model, int ctx)
{
	static const struct { const char *name, *dtype; } in[] = {
		{ "text_input", "BYTES" }, { "max_tokens", "INT32" },
		{ "temperature", "FP32" }, { "top_k", "INT32" },
		{ "top_p", "FP32" }, { "random_seed", "UINT64" },
		{ "stop_words", "BYTES" }, { "bad_words", "BYTES" },
		{ "end_id", "INT32" }, { "beam_width", "INT32" },
		{ "ignore_eos", "BOOL" }, { "exclude_input_in_output", "BOOL" },
		{ "return_log_probs", "BOOL" }, { "return_finish_reason", "BOOL" },
		{ "return_num_input_tokens", "BOOL" },
		{ "return_num_output_tokens", "BOOL" },
	}, out[] = {
		{ "text_output", "BYTES" }, { "cum_log_probs", "FP32" },
		{ "output_log_probs", "FP32" }, { "finish_reason", "BYTES" },
		{ "num_input_tokens", "INT32" }, { "num_output_tokens", "INT32" },
	};
	struct json_w w;
	size_t i;

	json_w_init(&w, b, JSON_COMPACT);
	json_w_obj(&w);
	json_w_key(&w, "name");
	if (path == SERVE_V2_SERVER) {
		json_w_strz(&w, "owt");
		json_w_kstr(&w, "version", OWT_VERSION);
		json_w_key(&w, "extensions");
		json_w_arr(&w);
		json_w_strz(&w, "generate");
		json_w_end(&w);
	} else {
		json_w_strz(&w, model);
		json_w_key(&w, "versions");
		json_w_arr(&w);
		json_w_strz(&w, "1");
		json_w_end(&w);
		json_w_kstr(&w, "platform", "owt");
		json_w_kint(&w, "max_model_len", ctx);
		json_w_key(&w, "inputs");
		json_w_arr(&w);
		for (i = 0; i < sizeof in / sizeof *in; i++)
			v2_meta_tensor(&w, in[i].name, in[i].dtype, i == 0 ||
			    i == 6 || i == 7 ? -1 : 1);
		json_w_end(&w);
		json_w_key(&w, "outputs");
		json_w_arr(&w);
		for (i = 0; i < sizeof out / sizeof *out; i++)
			v2_meta_tensor(&w, out[i].name, out[i].dtype, i == 0 ||
			    i == 2 ? -1 : 1);
		json_w_end(&w);
	}
	json_w_end(&w);
	buf_add(b, "\n", 1);
}

int32_t
serve_api_token_id(const struct tokenizer *t, const char *s)
{
	uint32_t id, n = tokenizer_nvocab(t);
	const char *b;
	size_t len;

	for (id = 0; id < n; id++)
		if ((b = tokenizer_token(t, id, &len)) != NULL &&
		    len == strlen(s) && memcmp(b, s, len) == 0)
			return (int32_t)id;
	return -1;
}
