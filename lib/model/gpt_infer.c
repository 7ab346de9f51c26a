/* gpt_infer.c - GPT-2 inference with a key/value cache over a backend, fp32 or int8 weights */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/gpt.h"
#include "model/gpt_infer.h"
#include "core/util.h"

static void *
ialloc(const struct gpt *m, size_t n, size_t elsize, int *fail)
{
	void *p = m->be->alloc(n * elsize);

	if (p == NULL)
		*fail = 1;
	return p;
}

int
gpt_infer_init(struct gpt_infer *g, struct gpt *m, int S, int N, int NL,
    char *err, size_t errsize, int *code)
{
	const struct gpt_config *c = &m->cfg;
	size_t C = c->nembd, cache = (size_t)c->nlayer * S * c->maxpos * C;
	int fail = 0;

	memset(g, 0, sizeof *g);
	g->m = m;
	g->S = S;
	g->N = N;
	g->NL = NL;
	g->len = xcalloc((size_t)S, sizeof *g->len);
	g->hpos = xmalloc((size_t)N * sizeof *g->hpos);
	g->kcache = ialloc(m, cache, sizeof(float), &fail);
	g->vcache = ialloc(m, cache, sizeof(float), &fail);
	g->x = ialloc(m, N * C, sizeof(float), &fail);
	g->ln = ialloc(m, N * C, sizeof(float), &fail);
	g->qkv = ialloc(m, N * 3 * C, sizeof(float), &fail);
	g->atty = ialloc(m, N * C, sizeof(float), &fail);
	g->tmp = ialloc(m, N * C, sizeof(float), &fail);
	g->fch = ialloc(m, N * 4 * C, sizeof(float), &fail);
	g->fchg = ialloc(m, N * 4 * C, sizeof(float), &fail);
	g->mean = ialloc(m, N, sizeof(float), &fail);
	g->rstd = ialloc(m, N, sizeof(float), &fail);
	g->logits = ialloc(m, (size_t)NL * c->vocab, sizeof(float), &fail);
	g->losses = ialloc(m, NL, sizeof(float), &fail);
	g->ids = ialloc(m, N, sizeof(int32_t), &fail);
	g->seq = ialloc(m, N, sizeof(int32_t), &fail);
	g->pos = ialloc(m, N, sizeof(int32_t), &fail);
	g->targets = ialloc(m, NL, sizeof(int32_t), &fail);
	if (fail) {
		owt_fail(err, errsize, code, XSYS, "out of %s memory for a "
		    "key/value cache of %d sequences of %d positions (%.1f GB)",
		    m->be->name, S, c->maxpos, 2.0 * cache * sizeof(float) / 1e9);
		gpt_infer_free(g);
		return -1;
	}
	return 0;
}

void
gpt_infer_free(struct gpt_infer *g)
{
	const struct gpt_backend *be;
	void *dev[] = { g->kcache, g->vcache, g->x, g->ln, g->qkv, g->atty,
	    g->tmp, g->fch, g->fchg, g->mean, g->rstd, g->logits, g->losses,
	    g->ids, g->seq, g->pos, g->targets, g->q8, g->q8scale };
	size_t i;

	if (g->m == NULL)
		return;
	be = g->m->be;
	for (i = 0; i < sizeof dev / sizeof *dev; i++)
		if (dev[i])
			be->free(dev[i]);
	free(g->len);
	free(g->hpos);
	memset(g, 0, sizeof *g);
}

void
gpt_infer_reset(struct gpt_infer *g, int s)
{
	g->len[s] = 0;
}

/* The matrices that go int8, and their (OC, C) shapes; 0 for the rest. */
static int
q8_shape(const struct gpt_config *c, int k, int *OC, int *C)
{
	int E = c->nembd;

	switch (k) {
	case GPT_WTE: *OC = c->vocab; *C = E; return 1;
	case GPT_QKVW: *OC = 3 * E; *C = E; return 1;
	case GPT_ATTPROJW: *OC = E; *C = E; return 1;
	case GPT_FCW: *OC = 4 * E; *C = E; return 1;
	case GPT_FCPROJW: *OC = E; *C = 4 * E; return 1;
	}
	*OC = *C = 0;
	return 0;
}

/*
 * Quantise w, OC outputs of C inputs with element (o, c) at
 * w[o * so + c * sc], into q (OC,C) and scale (OC).
 */
static void
quantize(int8_t *q, float *scale, const float *w, int OC, int C, size_t so,
    size_t sc)
{
	long o;

#pragma omp parallel for schedule(static)
	for (o = 0; o < OC; o++) {
		float max = 0, inv;
		int c;

		for (c = 0; c < C; c++)
			max = fmaxf(max, fabsf(w[o * so + c * sc]));
		scale[o] = max / 127;
		inv = max > 0 ? 127 / max : 0;
		for (c = 0; c < C; c++)
			q[(size_t)o * C + c] = (int8_t)nearbyintf(
			    w[o * so + c * sc] * inv);
	}
}

void
gpt_infer_quantize(struct gpt_infer *g)
{
	struct gpt *m = g->m;
	const struct gpt_config *c = &m->cfg;
	int L = c->nlayer, k, l, OC, C, layers;
	size_t nq = 0, ns = 0;
	float *w = xmalloc(m->nparams * sizeof *w), *hs;
	int8_t *hq;

	for (k = 0; k < GPT_NPARAM; k++)
		if (q8_shape(c, k, &OC, &C)) {
			layers = m->t[k].layered ? L : 1;
			g->q8off[k] = nq;
			g->q8soff[k] = ns;
			nq += (size_t)layers * OC * C;
			ns += (size_t)layers * OC;
		}
	hq = xmalloc(nq);
	hs = xmalloc(ns * sizeof *hs);
	gpt_get(m, GPT_PARAMS, w);
	for (k = 0; k < GPT_NPARAM; k++) {
		if (!q8_shape(c, k, &OC, &C))
			continue;
		layers = m->t[k].layered ? L : 1;
		for (l = 0; l < layers; l++) {
			const float *src = w + m->t[k].off + (size_t)l * OC * C;
			int8_t *q = hq + g->q8off[k] + (size_t)l * OC * C;
			float *s = hs + g->q8soff[k] + (size_t)l * OC;

			/* the embedding is (V,C) already; Conv1D weights are (C,OC) */
			if (k == GPT_WTE)
				quantize(q, s, src, OC, C, (size_t)C, 1);
			else
				quantize(q, s, src, OC, C, 1, (size_t)OC);
		}
	}
	g->q8 = m->be->alloc(nq);
	g->q8scale = m->be->alloc(ns * sizeof *hs);
	if (g->q8 == NULL || g->q8scale == NULL)
		owt_fatal("out of %s memory for int8 weights", m->be->name);
	m->be->put(g->q8, hq, nq);
	m->be->put(g->q8scale, hs, ns * sizeof *hs);
	free(hq);
	free(hs);
	free(w);
}

/* Pointers to tensor k of layer l of the parameters. */
#define P(k, l) (m->params + m->t[k].off + (size_t)(l) * (m->t[k].n / \
    (m->t[k].layered ? c->nlayer : 1)))

/* out (n,OC) = inp (n,IC) @ W + bias, for weight matrix k of layer l. */
static void
linear(struct gpt_infer *g, int k, int l, float *out, const float *inp,
    const float *bias, int n)
{
	struct gpt *m = g->m;
	const struct gpt_config *c = &m->cfg;
	const struct gpt_backend *be = m->be;
	int OC, C, rows = g->rowwise && be->matmul_forward_rows &&
	    be->lmhead_forward_rows && be->matmul_forward_q8_rows;

	q8_shape(c, k, &OC, &C);
	if (g->q8)
		(rows ? be->matmul_forward_q8_rows : be->matmul_forward_q8)(out,
		    inp, g->q8 + g->q8off[k] + (size_t)l * OC * C, g->q8scale +
		    g->q8soff[k] + (size_t)l * OC, bias, n, C, OC);
	else if (k == GPT_WTE)
		(rows ? be->lmhead_forward_rows : be->lmhead_forward)(out, inp,
		    P(GPT_WTE, 0), n, C, OC);
	else
		(rows ? be->matmul_forward_rows : be->matmul_forward)(out, inp,
		    P(k, l), bias, n, C, OC);
}

int
gpt_infer_step(struct gpt_infer *g, int n, const int32_t *ids,
    const int32_t *seq, int nout, char *err, size_t errsize, int *code)
{
	struct gpt *m = g->m;
	const struct gpt_backend *be = m->be;
	const struct gpt_config *c = &m->cfg;
	int C = c->nembd, NH = c->nhead, T = c->maxpos, i, l;
	size_t layer = (size_t)g->S * T * C, nc = (size_t)n * C;
	int32_t *hpos = g->hpos;

	for (i = 0; i < n; i++) {
		int s = seq[i];

		hpos[i] = g->len[s]++;
		if (hpos[i] >= T) {
			while (i >= 0)
				g->len[seq[i--]]--;
			return owt_fail(err, errsize, code, XDATA, "a sequence "
			    "would grow beyond the %d positions of the model", T);
		}
	}
	be->put(g->ids, ids, (size_t)n * sizeof *ids);
	be->put(g->seq, seq, (size_t)n * sizeof *seq);
	be->put(g->pos, hpos, (size_t)n * sizeof *hpos);
	be->encoder_forward_pos(g->x, g->ids, g->pos, P(GPT_WTE, 0),
	    P(GPT_WPE, 0), n, C);
	for (l = 0; l < c->nlayer; l++) {
		be->layernorm_forward(g->ln, g->mean, g->rstd, g->x,
		    P(GPT_LN1W, l), P(GPT_LN1B, l), n, C, c->ln_eps);
		linear(g, GPT_QKVW, l, g->qkv, g->ln, P(GPT_QKVB, l), n);
		be->attention_forward_kv(g->atty, g->kcache + l * layer,
		    g->vcache + l * layer, g->qkv, g->seq, g->pos, n, C, NH, T);
		linear(g, GPT_ATTPROJW, l, g->tmp, g->atty, P(GPT_ATTPROJB, l),
		    n);
		be->residual_forward(g->x, g->x, g->tmp, nc, 0, 0, 0);
		be->layernorm_forward(g->ln, g->mean, g->rstd, g->x,
		    P(GPT_LN2W, l), P(GPT_LN2B, l), n, C, c->ln_eps);
		linear(g, GPT_FCW, l, g->fch, g->ln, P(GPT_FCB, l), n);
		be->gelu_forward(g->fchg, g->fch, 4 * nc);
		linear(g, GPT_FCPROJW, l, g->tmp, g->fchg, P(GPT_FCPROJB, l), n);
		be->residual_forward(g->x, g->x, g->tmp, nc, 0, 0, 0);
	}
	if (nout == 0)	/* a prompt's chunk before its last */
		return 0;
	be->layernorm_forward(g->ln, g->mean, g->rstd,
	    g->x + (size_t)(n - nout) * C, P(GPT_LNFW, 0), P(GPT_LNFB, 0), nout,
	    C, c->ln_eps);
	linear(g, GPT_WTE, 0, g->logits, g->ln, NULL, nout);
	return 0;
}

void
gpt_infer_logits(struct gpt_infer *g, int nout, float *host)
{
	g->m->be->get(host, g->logits, (size_t)nout * g->m->cfg.vocab *
	    sizeof *host);
}

void
gpt_infer_losses(struct gpt_infer *g, int nout, const int32_t *targets,
    float *host)
{
	const struct gpt_backend *be = g->m->be;

	be->put(g->targets, targets, (size_t)nout * sizeof *targets);
	be->crossentropy(g->losses, g->logits, g->targets, nout,
	    g->m->cfg.vocab, 0);
	be->get(host, g->losses, (size_t)nout * sizeof *host);
}
