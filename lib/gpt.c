/* gpt.c - GPT-2: parameter layout, initialisation, and the forward, backward and AdamW passes over a backend */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpt.h"
#include "util.h"

/* Per tensor: the Hugging Face name (%d the layer), shape of a slice, decay. */
static const struct {
	const char *name;
	int layered, decay;
} pinfo[GPT_NPARAM] = {
	[GPT_WTE] = { "wte.weight", 0, 1 },
	[GPT_WPE] = { "wpe.weight", 0, 1 },
	[GPT_LN1W] = { "h.%d.ln_1.weight", 1, 0 },
	[GPT_LN1B] = { "h.%d.ln_1.bias", 1, 0 },
	[GPT_QKVW] = { "h.%d.attn.c_attn.weight", 1, 1 },
	[GPT_QKVB] = { "h.%d.attn.c_attn.bias", 1, 0 },
	[GPT_ATTPROJW] = { "h.%d.attn.c_proj.weight", 1, 1 },
	[GPT_ATTPROJB] = { "h.%d.attn.c_proj.bias", 1, 0 },
	[GPT_LN2W] = { "h.%d.ln_2.weight", 1, 0 },
	[GPT_LN2B] = { "h.%d.ln_2.bias", 1, 0 },
	[GPT_FCW] = { "h.%d.mlp.c_fc.weight", 1, 1 },
	[GPT_FCB] = { "h.%d.mlp.c_fc.bias", 1, 0 },
	[GPT_FCPROJW] = { "h.%d.mlp.c_proj.weight", 1, 1 },
	[GPT_FCPROJB] = { "h.%d.mlp.c_proj.bias", 1, 0 },
	[GPT_LNFW] = { "ln_f.weight", 0, 0 },
	[GPT_LNFB] = { "ln_f.bias", 0, 0 },
};

int
gpt_pad_vocab(int vocab, int div)
{
	return div <= 1 ? vocab : (vocab + div - 1) / div * div;
}

const char *
gpt_config_check(const struct gpt_config *c)
{
	static char why[128];

	if (c->nlayer < 1 || c->nhead < 1 || c->nembd < 1 || c->maxpos < 1 ||
	    c->vocab < 1)
		return "every size must be at least 1";
	if (c->nembd % c->nhead != 0) {
		snprintf(why, sizeof why, "hidden size %d is not a multiple of "
		    "the %d attention heads", c->nembd, c->nhead);
		return why;
	}
	if (c->vocab_pad < c->vocab)
		return "the padded vocabulary is smaller than the vocabulary";
	if ((double)c->vocab_pad * c->nembd > 1e11 ||
	    (double)c->nlayer * 12 * c->nembd * c->nembd > 1e11)
		return "the model is too large";
	if (!(c->hidden_dropout >= 0 && c->hidden_dropout < 1 &&
	    c->attn_dropout >= 0 && c->attn_dropout < 1))
		return "dropout must be in [0, 1)";
	return NULL;
}

void
gpt_param_name(char *buf, size_t size, int k, int l, int prefix)
{
	char s[64];

	snprintf(s, sizeof s, pinfo[k].name, l);
	snprintf(buf, size, "%s%s", prefix ? "transformer." : "", s);
}

static void
layout_tensors(struct gpt *m)
{
	const struct gpt_config *c = &m->cfg;
	int C = c->nembd, L = c->nlayer;
	int shape[GPT_NPARAM][2] = {
		[GPT_WTE] = { c->vocab_pad, C }, [GPT_WPE] = { c->maxpos, C },
		[GPT_LN1W] = { C }, [GPT_LN1B] = { C },
		[GPT_QKVW] = { C, 3 * C }, [GPT_QKVB] = { 3 * C },
		[GPT_ATTPROJW] = { C, C }, [GPT_ATTPROJB] = { C },
		[GPT_LN2W] = { C }, [GPT_LN2B] = { C },
		[GPT_FCW] = { C, 4 * C }, [GPT_FCB] = { 4 * C },
		[GPT_FCPROJW] = { 4 * C, C }, [GPT_FCPROJB] = { C },
		[GPT_LNFW] = { C }, [GPT_LNFB] = { C },
	};
	size_t off = 0;
	int k;

	for (k = 0; k < GPT_NPARAM; k++) {
		struct gpt_tensor *t = &m->t[k];

		t->layered = pinfo[k].layered;
		t->decay = pinfo[k].decay;
		t->dim[0] = shape[k][0];
		t->dim[1] = shape[k][1];
		t->rank = t->dim[1] ? 2 : 1;
		t->n = (size_t)t->dim[0] * (t->rank == 2 ? t->dim[1] : 1) *
		    (t->layered ? L : 1);
		t->off = off;
		off += t->n;
	}
	m->nparams = off;
}

size_t
gpt_nparams(const struct gpt_config *c)
{
	size_t C = c->nembd;

	return (size_t)c->vocab * C + (size_t)c->maxpos * C + 2 * C +
	    (size_t)c->nlayer * (12 * C * C + 13 * C);
}

static void *
balloc(const struct gpt *m, size_t n, size_t elsize)
{
	void *p = m->be->alloc(n * elsize);

	if (p == NULL)
		owt_die(XSYS, "out of %s memory allocating %zu bytes",
		    m->be->name, n * elsize);
	return p;
}

int
gpt_layout(struct gpt *m, const struct gpt_config *c, char *err,
    size_t errsize)
{
	const char *why;

	memset(m, 0, sizeof *m);
	if ((why = gpt_config_check(c)) != NULL) {
		snprintf(err, errsize, "%s", why);
		return -1;
	}
	m->cfg = *c;
	layout_tensors(m);
	return 0;
}

int
gpt_init(struct gpt *m, const struct gpt_config *c,
    const struct gpt_backend *be, char *err, size_t errsize)
{
	if (gpt_layout(m, c, err, errsize) < 0)
		return -1;
	m->be = be;
	m->params = balloc(m, m->nparams, sizeof(float));
	return 0;
}

static void
free_acts(struct gpt *m)
{
	float **f = (float **)&m->a;
	size_t i;

	for (i = 0; i < offsetof(struct gpt_acts, inputs) / sizeof(float *); i++)
		m->be->free(f[i]);
	m->be->free(m->a.inputs);
	m->be->free(m->a.targets);
	memset(&m->a, 0, sizeof m->a);
	free(m->host_losses);
	m->host_losses = NULL;
}

void
gpt_free(struct gpt *m)
{
	if (m->be == NULL)
		return;
	free_acts(m);
	m->be->free(m->params);
	m->be->free(m->grads);
	m->be->free(m->m);
	m->be->free(m->v);
	memset(m, 0, sizeof *m);
}

/*
 * Standard normal draws for elements 2j and 2j + 1 of tensor k under seed:
 * Box-Muller on two splitmix64 outputs for the counter (k, j).
 */
static void
normal2(uint64_t seed, int k, size_t j, double *z0, double *z1)
{
	uint64_t base = owt_mix64(seed ^ owt_mix64((uint64_t)k + 1));
	uint64_t x = owt_mix64(base + 2 * (uint64_t)j);
	uint64_t y = owt_mix64(base + 2 * (uint64_t)j + 1);
	double r = sqrt(-2 * log(((double)(x >> 11) + 1) *
	    (1.0 / 9007199254740992.0)));
	double t = 2 * M_PI * (double)(y >> 11) * (1.0 / 9007199254740992.0);

	*z0 = r * cos(t);
	*z1 = r * sin(t);
}

void
gpt_init_weights(struct gpt *m, uint64_t seed, float std)
{
	const struct gpt_config *c = &m->cfg;
	float *h = xmalloc(m->nparams * sizeof *h);
	float out_std = std / sqrtf(2.0f * (float)c->nlayer);
	size_t i, real;
	int k;

	for (k = 0; k < GPT_NPARAM; k++) {
		const struct gpt_tensor *t = &m->t[k];
		float *p = h + t->off, s = std;

		switch (k) {
		case GPT_LN1W: case GPT_LN2W: case GPT_LNFW:
			for (i = 0; i < t->n; i++)
				p[i] = 1;
			continue;
		case GPT_ATTPROJW: case GPT_FCPROJW:
			s = out_std;
			break;
		default:
			if (!t->decay) {	/* biases */
				memset(p, 0, t->n * sizeof *p);
				continue;
			}
		}
		real = k == GPT_WTE ? (size_t)c->vocab * c->nembd : t->n;
#pragma omp parallel for schedule(static)
		for (i = 0; i < real; i += 2) {
			double z0, z1;

			normal2(seed, k, i / 2, &z0, &z1);
			p[i] = (float)(s * z0);
			if (i + 1 < real)
				p[i + 1] = (float)(s * z1);
		}
		memset(p + real, 0, (t->n - real) * sizeof *p);
	}
	m->be->put(m->params, h, m->nparams * sizeof *h);
	free(h);
}

int
gpt_set_batch(struct gpt *m, int B, int T, char *err, size_t errsize)
{
	const struct gpt_config *c = &m->cfg;
	size_t L = c->nlayer, C = c->nembd, NH = c->nhead, BT;
	struct gpt_acts *a = &m->a;

	if (T > c->maxpos) {
		snprintf(err, errsize, "sequence length %d is beyond the %d "
		    "positions of the model", T, c->maxpos);
		return -1;
	}
	if (B == m->B && T == m->T)
		return 0;
	free_acts(m);
	m->B = B;
	m->T = T;
	BT = (size_t)B * T;
	a->encoded = balloc(m, BT * C, sizeof(float));
	a->ln1 = balloc(m, L * BT * C, sizeof(float));
	a->ln1_mean = balloc(m, L * BT, sizeof(float));
	a->ln1_rstd = balloc(m, L * BT, sizeof(float));
	a->qkv = balloc(m, L * BT * 3 * C, sizeof(float));
	a->atty = balloc(m, L * BT * C, sizeof(float));
	a->att = balloc(m, L * B * NH * T * T, sizeof(float));
	a->res2 = balloc(m, L * BT * C, sizeof(float));
	a->ln2 = balloc(m, L * BT * C, sizeof(float));
	a->ln2_mean = balloc(m, L * BT, sizeof(float));
	a->ln2_rstd = balloc(m, L * BT, sizeof(float));
	a->fch = balloc(m, L * BT * 4 * C, sizeof(float));
	a->fch_gelu = balloc(m, L * BT * 4 * C, sizeof(float));
	a->res3 = balloc(m, L * BT * C, sizeof(float));
	a->lnf = balloc(m, BT * C, sizeof(float));
	a->lnf_mean = balloc(m, BT, sizeof(float));
	a->lnf_rstd = balloc(m, BT, sizeof(float));
	a->logits = balloc(m, BT * c->vocab, sizeof(float));
	a->losses = balloc(m, BT, sizeof(float));
	a->dres = balloc(m, BT * C, sizeof(float));
	a->dbt4c = balloc(m, BT * 4 * C, sizeof(float));
	a->dbt4c2 = balloc(m, BT * 4 * C, sizeof(float));
	a->dbtc = balloc(m, BT * C, sizeof(float));
	a->datt = balloc(m, (size_t)B * NH * T * T, sizeof(float));
	a->tmp = balloc(m, BT * C, sizeof(float));
	a->inputs = balloc(m, BT, sizeof(int32_t));
	a->targets = balloc(m, BT, sizeof(int32_t));
	m->host_losses = xmalloc(BT * sizeof(float));
	return 0;
}

/* The dropout key of layer l (L for the embedding) and site s. */
static uint64_t
site_key(uint64_t key, int l, int s)
{
	return owt_mix64(key + (uint64_t)l * 4 + (uint64_t)s);
}

/* Layer l's activations (struct gpt_acts), and its input. */
struct layer {
	float *in, *ln1, *ln1_mean, *ln1_rstd, *qkv, *atty, *att, *res2;
	float *ln2, *ln2_mean, *ln2_rstd, *fch, *fchg, *res3;
};

static void
layer_acts(struct gpt *m, int l, struct layer *x)
{
	struct gpt_acts *a = &m->a;
	size_t bt = (size_t)m->B * m->T, btc = bt * m->cfg.nembd;

	x->in = l == 0 ? a->encoded : a->res3 + (l - 1) * btc;
	x->ln1 = a->ln1 + l * btc;
	x->ln1_mean = a->ln1_mean + l * bt;
	x->ln1_rstd = a->ln1_rstd + l * bt;
	x->qkv = a->qkv + 3 * l * btc;
	x->atty = a->atty + l * btc;
	x->att = a->att + l * bt * m->cfg.nhead * m->T;
	x->res2 = a->res2 + l * btc;
	x->ln2 = a->ln2 + l * btc;
	x->ln2_mean = a->ln2_mean + l * bt;
	x->ln2_rstd = a->ln2_rstd + l * bt;
	x->fch = a->fch + 4 * l * btc;
	x->fchg = a->fch_gelu + 4 * l * btc;
	x->res3 = a->res3 + l * btc;
}

/* Pointers to tensor k of layer l in a flat buffer. */
#define P(buf, k, l) ((buf) + m->t[k].off + (size_t)(l) * (m->t[k].n / L))

float
gpt_forward(struct gpt *m, const int32_t *inputs, const int32_t *targets,
    float dloss, uint64_t key)
{
	const struct gpt_backend *be = m->be;
	const struct gpt_config *c = &m->cfg;
	struct gpt_acts *a = &m->a;
	int L = c->nlayer, C = c->nembd, NH = c->nhead, B = m->B, T = m->T;
	int BT = B * T, l;
	size_t btc = (size_t)BT * C;
	float hp = 0, ap = 0, *w = m->params;
	struct layer x;
	double sum = 0;

	m->train = dloss != 0;
	m->key = key;
	if (m->train) {
		hp = c->hidden_dropout;
		ap = c->attn_dropout;
	}
	be->put(a->inputs, inputs, (size_t)BT * sizeof *inputs);
	be->encoder_forward(a->encoded, a->inputs, w + m->t[GPT_WTE].off,
	    w + m->t[GPT_WPE].off, B, T, C);
	if (hp > 0)
		be->dropout(a->encoded, a->encoded, btc, hp, site_key(key, L, 0));
	for (l = 0; l < L; l++) {
		layer_acts(m, l, &x);
		be->layernorm_forward(x.ln1, x.ln1_mean, x.ln1_rstd, x.in,
		    P(w, GPT_LN1W, l), P(w, GPT_LN1B, l), BT, C, c->ln_eps);
		be->matmul_forward(x.qkv, x.ln1, P(w, GPT_QKVW, l),
		    P(w, GPT_QKVB, l), BT, C, 3 * C);
		be->attention_forward(x.atty, x.att, x.qkv, B, T, C, NH, ap,
		    site_key(key, l, 0));
		be->matmul_forward(a->tmp, x.atty, P(w, GPT_ATTPROJW, l),
		    P(w, GPT_ATTPROJB, l), BT, C, C);
		be->residual_forward(x.res2, x.in, a->tmp, btc, hp,
		    site_key(key, l, 1));
		be->layernorm_forward(x.ln2, x.ln2_mean, x.ln2_rstd, x.res2,
		    P(w, GPT_LN2W, l), P(w, GPT_LN2B, l), BT, C, c->ln_eps);
		be->matmul_forward(x.fch, x.ln2, P(w, GPT_FCW, l),
		    P(w, GPT_FCB, l), BT, C, 4 * C);
		be->gelu_forward(x.fchg, x.fch, 4 * btc);
		be->matmul_forward(a->tmp, x.fchg, P(w, GPT_FCPROJW, l),
		    P(w, GPT_FCPROJB, l), BT, 4 * C, C);
		be->residual_forward(x.res3, x.res2, a->tmp, btc, hp,
		    site_key(key, l, 2));
	}
	be->layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd,
	    a->res3 + (L - 1) * btc,
	    w + m->t[GPT_LNFW].off, w + m->t[GPT_LNFB].off, BT, C, c->ln_eps);
	be->lmhead_forward(a->logits, a->lnf, w + m->t[GPT_WTE].off, BT, C,
	    c->vocab);
	if (targets == NULL) {
		m->train = 0;
		return 0;
	}
	be->put(a->targets, targets, (size_t)BT * sizeof *targets);
	be->crossentropy(a->losses, a->logits, a->targets, BT, c->vocab, dloss);
	be->get(m->host_losses, a->losses, (size_t)BT * sizeof(float));
	for (l = 0; l < BT; l++)
		sum += m->host_losses[l];
	return (float)(sum / BT);
}

static float *
buffer(struct gpt *m, enum gpt_buffer which)
{
	float **p = which == GPT_PARAMS ? &m->params : which == GPT_GRADS ?
	    &m->grads : which == GPT_ADAM_M ? &m->m : &m->v;

	if (*p == NULL)
		*p = balloc(m, m->nparams, sizeof(float));
	return *p;
}

/*
 * The gradient of a residual branch's output: the residual gradient,
 * through the branch's dropout mask when there is one.
 */
static const float *
dropout_grad(struct gpt *m, int l, int site)
{
	size_t n = (size_t)m->B * m->T * m->cfg.nembd;

	if (m->cfg.hidden_dropout == 0)
		return m->a.dres;
	m->be->dropout(m->a.tmp, m->a.dres, n, m->cfg.hidden_dropout,
	    site_key(m->key, l, site));
	return m->a.tmp;
}

void
gpt_backward(struct gpt *m)
{
	const struct gpt_backend *be = m->be;
	const struct gpt_config *c = &m->cfg;
	struct gpt_acts *a = &m->a;
	int L = c->nlayer, C = c->nembd, NH = c->nhead, B = m->B, T = m->T;
	int BT = B * T, l;
	size_t btc = (size_t)BT * C;
	float hp = c->hidden_dropout, ap = c->attn_dropout;
	const float *dproj, *w = m->params;
	float *g = buffer(m, GPT_GRADS);
	struct layer x;

	if (!m->train)
		return;
	be->lmhead_backward(a->dbtc, g + m->t[GPT_WTE].off, a->logits, a->lnf,
	    w + m->t[GPT_WTE].off, BT, C, c->vocab);
	be->zero(a->dres, btc * sizeof(float));
	be->layernorm_backward(a->dres, g + m->t[GPT_LNFW].off,
	    g + m->t[GPT_LNFB].off, a->dbtc, a->res3 + (L - 1) * btc,
	    w + m->t[GPT_LNFW].off, a->lnf_mean, a->lnf_rstd, BT, C);
	for (l = L - 1; l >= 0; l--) {
		layer_acts(m, l, &x);
		/* res3 = res2 + dropout(fcproj(gelu(fc(ln2(res2))))) */
		dproj = dropout_grad(m, l, 2);
		be->matmul_backward(a->dbt4c, P(g, GPT_FCPROJW, l),
		    P(g, GPT_FCPROJB, l), dproj, x.fchg, P(w, GPT_FCPROJW, l),
		    BT, 4 * C, C);
		be->gelu_backward(a->dbt4c2, x.fch, a->dbt4c, 4 * btc);
		be->matmul_backward(a->dbtc, P(g, GPT_FCW, l), P(g, GPT_FCB, l),
		    a->dbt4c2, x.ln2, P(w, GPT_FCW, l), BT, C, 4 * C);
		be->layernorm_backward(a->dres, P(g, GPT_LN2W, l),
		    P(g, GPT_LN2B, l), a->dbtc, x.res2, P(w, GPT_LN2W, l),
		    x.ln2_mean, x.ln2_rstd, BT, C);

		/* res2 = in + dropout(attproj(attention(qkv(ln1(in))))) */
		dproj = dropout_grad(m, l, 1);
		be->matmul_backward(a->dbtc, P(g, GPT_ATTPROJW, l),
		    P(g, GPT_ATTPROJB, l), dproj, x.atty, P(w, GPT_ATTPROJW, l),
		    BT, C, C);
		be->attention_backward(a->dbt4c, a->datt, a->dbtc, x.qkv, x.att,
		    B, T, C, NH, ap, site_key(m->key, l, 0));
		be->matmul_backward(a->dbtc, P(g, GPT_QKVW, l), P(g, GPT_QKVB, l),
		    a->dbt4c, x.ln1, P(w, GPT_QKVW, l), BT, C, 3 * C);
		be->layernorm_backward(a->dres, P(g, GPT_LN1W, l),
		    P(g, GPT_LN1B, l), a->dbtc, x.in, P(w, GPT_LN1W, l),
		    x.ln1_mean, x.ln1_rstd, BT, C);
	}
	if (hp > 0)
		be->dropout(a->dres, a->dres, btc, hp, site_key(m->key, L, 0));
	be->encoder_backward(g + m->t[GPT_WTE].off, g + m->t[GPT_WPE].off,
	    a->dres, a->inputs, B, T, C);
	m->train = 0;
}

void
gpt_zero_grad(struct gpt *m)
{
	m->be->zero(buffer(m, GPT_GRADS), m->nparams * sizeof(float));
}

double
gpt_grad_norm(struct gpt *m)
{
	return sqrt(m->be->sumsq(buffer(m, GPT_GRADS), m->nparams));
}

void
gpt_update(struct gpt *m, const struct adamw *o, float lr, float gscale)
{
	float *g = buffer(m, GPT_GRADS), *mm = buffer(m, GPT_ADAM_M);
	float *vv = buffer(m, GPT_ADAM_V);
	float bc1, bc2;
	int k;

	m->step++;
	bc1 = (float)(1 - pow(o->beta1, (double)m->step));
	bc2 = (float)(1 - pow(o->beta2, (double)m->step));
	for (k = 0; k < GPT_NPARAM; k++) {
		const struct gpt_tensor *t = &m->t[k];

		m->be->adamw(m->params + t->off, g + t->off, mm + t->off,
		    vv + t->off, t->n, lr, o->beta1, o->beta2, o->eps,
		    t->decay ? o->wd : 0, bc1, bc2, gscale);
	}
}

void
gpt_get(struct gpt *m, enum gpt_buffer which, float *host)
{
	m->be->get(host, buffer(m, which), m->nparams * sizeof(float));
}

void
gpt_put(struct gpt *m, enum gpt_buffer which, const float *host)
{
	m->be->put(buffer(m, which), host, m->nparams * sizeof(float));
}
