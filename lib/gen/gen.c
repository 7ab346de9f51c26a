/* gen.c - text generation and scoring with GPT-2: Megatron's sampling, a batched decoding loop, perplexity in windows */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "model/gemv.h"
#include "core/util.h"

void
gen_pick_init(struct gen_pick_buf *b, int V)
{
	b->z = xmalloc((size_t)V * sizeof *b->z);
	b->w = xmalloc((size_t)V * sizeof *b->w);
	b->id = xmalloc((size_t)V * sizeof *b->id);
	b->V = V;
}

void
gen_pick_free(struct gen_pick_buf *b)
{
	free(b->z);
	free(b->w);
	free(b->id);
	memset(b, 0, sizeof *b);
}

double
gen_uniform(uint64_t seed, uint64_t s, uint64_t k)
{
	uint64_t x = owt_mix64(owt_mix64(seed ^ owt_mix64(s + 1)) + k);

	return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

static void
swap(struct gen_pick_buf *b, int i, int j)
{
	int32_t t = b->id[i];

	b->id[i] = b->id[j];
	b->id[j] = t;
}

/*
 * Of the candidates id[0..n) (values z[id], weights w[id]) in descending
 * order of value, the value of the first one at which the running sum of
 * weights exceeds target; -INFINITY when none does. Quickselect with a
 * three-way partition: expected time linear in n, ties stay together.
 */
static float
crossing(struct gen_pick_buf *b, int n, double target)
{
	double before = 0;
	int lo = 0, hi = n;
	uint64_t r = 0x9e3779b97f4a7c15ULL;

	while (lo < hi) {
		float pv = b->z[b->id[lo + (int)((r = owt_mix64(r)) %
		    (uint64_t)(hi - lo))]];
		int gt = lo, eq = lo, i;
		double mgt = 0, meq = 0;

		/* [lo, gt) > pv, [gt, eq) == pv, [eq, i) < pv */
		for (i = lo; i < hi; i++) {
			float v = b->z[b->id[i]];

			if (v > pv) {
				swap(b, i, eq);
				swap(b, eq++, gt++);
			} else if (v == pv) {
				swap(b, i, eq++);
			}
		}
		for (i = lo; i < gt; i++)
			mgt += b->w[b->id[i]];
		for (i = gt; i < eq; i++)
			meq += b->w[b->id[i]];
		if (before + mgt > target) {
			hi = gt;
		} else if (before + mgt + meq > target) {
			return pv;
		} else {
			before += mgt + meq;
			lo = eq;
		}
	}
	return -INFINITY;
}

int32_t
gen_pick(const struct gen_opts *o, const float *logits, int V, double u,
    struct gen_pick_buf *b)
{
	float max = -INFINITY, thr = -INFINITY, t;
	double total = 0, acc;
	int i, n, best = 0;

	for (i = 0; i < V; i++)
		if (logits[i] > logits[best])
			best = i;
	if (o->greedy || o->temperature == 0 || o->top_k == 1)
		return best;
	t = (float)o->temperature;
	for (i = 0; i < V; i++) {
		b->z[i] = logits[i] / t;
		max = b->z[i] > max ? b->z[i] : max;
	}
	if (o->top_k > 0 && o->top_k < V) {
		for (i = 0; i < V; i++) {
			b->id[i] = i;
			b->w[i] = 1;
		}
		thr = crossing(b, V, o->top_k - 1);
	}
	for (i = n = 0; i < V; i++) {
		b->w[i] = b->z[i] >= thr ? exp((double)b->z[i] - max) : 0;
		total += b->w[i];
		if (b->z[i] >= thr)
			b->id[n++] = i;
	}
	if (o->top_p > 0) {
		float p = crossing(b, n, o->top_p * total);

		if (p > thr) {
			thr = p;
			for (i = 0, total = 0; i < V; i++)
				if (b->z[i] < thr)
					b->w[i] = 0;
				else
					total += b->w[i];
		}
	}
	acc = 0;
	for (i = 0; i < V; i++) {
		if (b->w[i] == 0)
			continue;
		best = i;
		acc += b->w[i];
		if (acc > u * total)
			break;
	}
	return best;
}

void
gen_init(struct gen *g, struct gpt_infer *inf, const struct gen_opts *o,
    gen_token_fn *fn, void *arg)
{
	int V = inf->m->cfg.vocab;

	memset(g, 0, sizeof *g);
	g->inf = inf;
	g->o = *o;
	g->fn = fn;
	g->arg = arg;
	g->slot = xcalloc((size_t)inf->S, sizeof *g->slot);
	g->logits = xmalloc((size_t)inf->S * V * sizeof *g->logits);
	g->ids = xmalloc((size_t)(inf->N > inf->S ? inf->N : inf->S) *
	    sizeof *g->ids);
	g->seq = xmalloc((size_t)(inf->N > inf->S ? inf->N : inf->S) *
	    sizeof *g->seq);
	g->cseq = xmalloc((size_t)(o->chunk > 0 ? o->chunk : 1) *
	    sizeof *g->cseq);
	gen_pick_init(&g->pick, V);
}

void
gen_free(struct gen *g)
{
	free(g->slot);
	free(g->logits);
	free(g->ids);
	free(g->seq);
	free(g->cseq);
	gen_pick_free(&g->pick);
	memset(g, 0, sizeof *g);
}

int
gen_has_room(const struct gen *g)
{
	return g->running < g->inf->S;
}

/* Prompt and text at most this many tokens. */
static int
context(const struct gen *g)
{
	int T = g->inf->m->cfg.maxpos;

	return g->o.ctx > 0 && g->o.ctx < T ? g->o.ctx : T;
}

static void
finish(struct gen *g, struct gen_seq *s, int why)
{
	s->end = why;
	g->slot[s->slot] = NULL;
	g->running--;
	g->fn(g->arg, s, -1);
}

/* Draw s's next token from logits (V), and end s when it is over. */
static void
draw(struct gen *g, struct gen_seq *s, float *logits)
{
	const struct gen_opts *o = s->o != NULL ? s->o : &g->o;
	struct gen_opts decayed;
	int V = g->inf->m->cfg.vocab, k;
	int32_t tok;

	if (o->nvocab > 0 && o->nvocab < V)
		V = o->nvocab;
	if (o->ban && s->last == o->ban_after && o->ban_tok >= 0 &&
	    o->ban_tok < V)
		logits[o->ban_tok] = -1e10f;	/* Megatron's value */
	if (o->top_p > 0 && o->top_p_decay > 0 && s->ngen > 0) {
		decayed = *o;
		for (k = 0; k < s->ngen; k++) {
			decayed.top_p *= o->top_p_decay;
			if (o->top_p_bound > 0 && decayed.top_p < o->top_p_bound)
				decayed.top_p = o->top_p_bound;
		}
		o = &decayed;
	}
	tok = gen_pick(o, logits, V, gen_uniform(o->seed,
	    s->stream, (uint64_t)s->ngen), &g->pick);
	if (tok == o->eod) {
		finish(g, s, GEN_EOD);
		return;
	}
	s->ngen++;
	s->last = tok;
	s->logits = logits;
	g->fn(g->arg, s, tok);
	s->logits = NULL;
	if (s->end != GEN_RUNNING)
		return;
	if (s->ngen >= o->max_new)
		finish(g, s, GEN_LENGTH);
	else if (s->nprompt + s->ngen >= context(g))
		finish(g, s, GEN_CONTEXT);
}

int
gen_start(struct gen *g, struct gen_seq *s, const int32_t *prompt, int n,
    char *err, size_t errsize, int *code)
{
	int T = context(g), k, c, i;
	int32_t *seq;

	if (n >= T || (n > g->inf->N && (g->o.chunk == 0 || s->prompt_lp)))
		return owt_fail(err, errsize, code, XDATA, "a prompt of %d "
		    "tokens leaves no room in a context of %d", n, T);
	for (k = 0; g->slot[k] != NULL; k++)
		;
	s->slot = k;
	s->nprompt = n;
	s->ngen = 0;
	s->end = GEN_RUNNING;
	g->slot[k] = s;
	g->running++;
	if ((s->o != NULL ? s->o : &g->o)->max_new == 0 &&
	    s->prompt_lp == NULL) {
		finish(g, s, GEN_LENGTH);
		return 0;
	}
	gpt_infer_reset(g->inf, k);
	s->fed = 0;
	s->prompt = prompt;
	if (g->o.chunk > 0 && s->prompt_lp == NULL) {	/* gen_step feeds it */
		s->order = g->nstarted++;
		return 0;
	}
	s->fed = n;
	seq = xmalloc((size_t)n * sizeof *seq);
	for (k = 0; k < n; k++)
		seq[k] = s->slot;
	k = 0;
	if (s->prompt_lp != NULL)	/* in chunks of NL rows, then the last */
		for (; k < n - 1; k += c) {
			c = n - 1 - k < g->inf->NL ? n - 1 - k : g->inf->NL;
			if (gpt_infer_step(g->inf, c, prompt + k, seq, c, err,
			    errsize, code) < 0)
				owt_fatal("gen_start: %s: a bug", err);
			gpt_infer_losses(g->inf, c, prompt + k + 1,
			    s->prompt_lp + k);
			for (i = k; i < k + c; i++)
				s->prompt_lp[i] = -s->prompt_lp[i];
		}
	if ((s->o != NULL ? s->o : &g->o)->max_new == 0) {
		free(seq);
		finish(g, s, GEN_LENGTH);
		return 0;
	}
	if (gpt_infer_step(g->inf, n - k, prompt + k, seq, 1, err, errsize,
	    code) < 0)
		owt_fatal("gen_start: %s: a bug", err);	/* checked above */
	free(seq);
	s->last = prompt[n - 1];
	gpt_infer_logits(g->inf, 1, g->logits);
	draw(g, s, g->logits);
	return 0;
}

/*
 * The oldest prompt still to feed: its next chunk, whose last draws the
 * first token. The number of tokens fed, 0 when no prompt is left.
 */
static int
prefill(struct gen *g)
{
	struct gen_seq *s = NULL;
	char err[OWT_ERRSIZE];
	int k, c, last, code;

	for (k = 0; k < g->inf->S; k++)
		if (g->slot[k] != NULL && g->slot[k]->fed < g->slot[k]->nprompt &&
		    (s == NULL || g->slot[k]->order < s->order))
			s = g->slot[k];
	if (s == NULL)
		return 0;
	c = s->nprompt - s->fed < g->o.chunk ? s->nprompt - s->fed : g->o.chunk;
	last = s->fed + c == s->nprompt;
	for (k = 0; k < c; k++)
		g->cseq[k] = s->slot;
	if (gpt_infer_step(g->inf, c, s->prompt + s->fed, g->cseq, last, err,
	    sizeof err, &code) < 0)
		owt_fatal("gen_step: %s: a bug", err);	/* gen_start checked */
	s->fed += c;
	if (last) {
		s->last = s->prompt[s->nprompt - 1];
		gpt_infer_logits(g->inf, 1, g->logits);
		draw(g, s, g->logits);
	}
	return c;
}

/*
 * A row-wise step (inf->rowwise) in one call: the step's prompt chunks,
 * up to o.chunk tokens of the oldest prompts, each a whole chunk, then
 * the running samples' last tokens. Rows of one slot stay in order: the
 * chunks' rows but the last chunks' final rows first, then those final
 * rows and the running samples' rows, whose logits are drawn from.
 */
static void
step_rows(struct gen *g, struct gen_seq **run, int n)
{
	struct gen_seq *pre[g->inf->S > 0 ? g->inf->S : 1], *s;
	int V = g->inf->m->cfg.vocab, npre = 0, fed = 0, rows = 0, nlast = 0;
	int pc[g->inf->S > 0 ? g->inf->S : 1], taken[g->inf->S > 0 ?
	    g->inf->S : 1];
	int k, i, j, c, code;
	char err[OWT_ERRSIZE];

	memset(taken, 0, sizeof taken);
	while (g->o.chunk > 0 && fed < g->o.chunk) {
		for (s = NULL, k = 0; k < g->inf->S; k++)
			if (g->slot[k] != NULL && !taken[k] &&
			    g->slot[k]->fed < g->slot[k]->nprompt &&
			    (s == NULL || g->slot[k]->order < s->order))
				s = g->slot[k];
		if (s == NULL)
			break;
		c = s->nprompt - s->fed < g->o.chunk ? s->nprompt - s->fed :
		    g->o.chunk;
		if (n + fed + c > g->inf->N)
			break;
		taken[s->slot] = 1;
		pre[npre] = s;
		pc[npre++] = c;
		fed += c;
	}
	for (i = 0; i < npre; i++) {
		s = pre[i];
		c = pc[i] - (s->fed + pc[i] == s->nprompt);
		for (j = 0; j < c; j++) {
			g->ids[rows] = s->prompt[s->fed + j];
			g->seq[rows++] = s->slot;
		}
	}
	for (i = 0; i < npre; i++)
		if (pre[i]->fed + pc[i] == pre[i]->nprompt) {
			g->ids[rows] = pre[i]->prompt[pre[i]->nprompt - 1];
			g->seq[rows++] = pre[i]->slot;
			nlast++;
		}
	for (k = 0; k < n; k++) {
		g->ids[rows] = run[k]->last;
		g->seq[rows++] = run[k]->slot;
	}
	if (rows == 0)
		return;
	if (gpt_infer_step(g->inf, rows, g->ids, g->seq, nlast + n, err,
	    sizeof err, &code) < 0)
		owt_fatal("gen_step: %s: a bug", err);	/* gen_start checked */
	gpt_infer_logits(g->inf, nlast + n, g->logits);
	for (i = 0; i < npre; i++)
		pre[i]->fed += pc[i];
	for (k = 0; k < n; k++)
		draw(g, run[k], g->logits + (size_t)(nlast + k) * V);
	for (i = j = 0; i < npre; i++)
		if (pre[i]->fed == pre[i]->nprompt) {
			pre[i]->last = pre[i]->prompt[pre[i]->nprompt - 1];
			draw(g, pre[i], g->logits + (size_t)j++ * V);
		}
}

int
gen_step(struct gen *g)
{
	struct gen_seq *run[g->inf->S > 0 ? g->inf->S : 1];
	int V = g->inf->m->cfg.vocab, n = 0, k, i, r, fed, c;
	char err[OWT_ERRSIZE];
	int code;

	for (k = 0; k < g->inf->S; k++)
		if (g->slot[k] != NULL && g->slot[k]->fed == g->slot[k]->nprompt) {
			run[n] = g->slot[k];
			g->ids[n] = run[n]->last;
			g->seq[n++] = k;
		}
	if (g->inf->rowwise) {
		step_rows(g, run, n);
		return g->running;
	}
	/* draw ends a sample before its slot is full */
	for (i = 0; i < n; i += r) {
		r = n - i < GEMV_MAXN ? n - i : GEMV_MAXN;
		if (gpt_infer_step(g->inf, r, g->ids + i, g->seq + i, r, err,
		    sizeof err, &code) < 0)
			owt_fatal("gen_step: %s: a bug", err);
		gpt_infer_logits(g->inf, r, g->logits + (size_t)i * V);
	}
	for (k = 0; k < n; k++)
		draw(g, run[k], g->logits + (size_t)k * V);
	for (fed = 0; g->o.chunk > 0 && fed < g->o.chunk; fed += c)
		if ((c = prefill(g)) == 0)
			break;
	return g->running;
}

void
gen_stop(struct gen *g, struct gen_seq *s)
{
	if (s->end == GEN_RUNNING)
		finish(g, s, GEN_STOPPED);
}

void
gen_score(struct gpt_infer *g, const int32_t *tok, int n, int T, int stride,
    double *nll, int *count)
{
	int s = 0, done = 1, e, k;
	float *loss = xmalloc((size_t)T * sizeof *loss);
	int32_t *seq = xcalloc((size_t)T, sizeof *seq);
	char err[OWT_ERRSIZE];
	int code;

	*nll = 0;
	*count = 0;
	while (done < n) {
		e = n - s < T ? n : s + T;
		if (e > done) {
			gpt_infer_reset(g, 0);
			if (gpt_infer_step(g, e - 1 - s, tok + s, seq, e - done,
			    err, sizeof err, &code) < 0)	/* windows fit */
				owt_fatal("gen_score: %s: a bug", err);
			gpt_infer_losses(g, e - done, tok + done, loss);
			for (k = 0; k < e - done; k++)
				*nll += loss[k];
			*count += e - done;
			done = e;
		}
		s += stride;
	}
	free(loss);
	free(seq);
}
