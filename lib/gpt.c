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

/* Floats of one slice of an activation array: a multiple of 256 bytes. */
static size_t
slice(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/* The recomputation's layer count, within [1, L]. */
static int
rc_n(const struct gpt *m)
{
	int n = m->rc.nlayers, L = m->cfg.nlayer;

	return n < 1 ? 1 : n > L ? L : n;
}

static int
full(const struct gpt *m, int method)
{
	return m->rc.granularity == GPT_RECOMPUTE_FULL && m->rc.method == method;
}

/*
 * The slices of the activation arrays: nslot of each per-layer array but
 * att and res3, natt of att, nres of res3. UNIFORM keeps one slice of
 * res3 per chunk (its output, the next chunk's input) and works on one
 * chunk's worth of slices; BLOCK shares one working slice among the
 * recomputed layers and gives every other layer its own.
 */
static void
slices(const struct gpt *m, size_t *nslot, size_t *natt, size_t *nres)
{
	size_t L = m->cfg.nlayer, n = rc_n(m);

	*nslot = *natt = *nres = L;
	if (m->rc.granularity == GPT_RECOMPUTE_SELECTIVE) {
		*natt = 1;
	} else if (full(m, GPT_RECOMPUTE_UNIFORM)) {
		*nslot = *natt = n;
		*nres = (L + n - 1) / n + n - 1;
	} else if (full(m, GPT_RECOMPUTE_BLOCK)) {
		*nslot = *natt = 1 + L - n;
	}
}

/* Layer l's slice of the per-layer arrays but att and res3. */
static size_t
slot_of(const struct gpt *m, int l)
{
	int n = rc_n(m);

	if (full(m, GPT_RECOMPUTE_UNIFORM))
		return (size_t)(l % n);
	if (full(m, GPT_RECOMPUTE_BLOCK))
		return l < n ? 0 : (size_t)(1 + l - n);
	return (size_t)l;
}

static size_t
att_of(const struct gpt *m, int l)
{
	return m->rc.granularity == GPT_RECOMPUTE_SELECTIVE ? 0 : slot_of(m, l);
}

/* Layer l's slice of res3: kept for a chunk's last layer, else working. */
static size_t
res_of(const struct gpt *m, int l)
{
	int n = rc_n(m), L = m->cfg.nlayer;

	if (!full(m, GPT_RECOMPUTE_UNIFORM))
		return (size_t)l;
	if (l % n == n - 1 || l == L - 1)
		return (size_t)(l / n);
	return (size_t)((L + n - 1) / n + l % n);
}

/*
 * Whether layer l is recomputed (FULL), and its chunk [*s, *e). live is
 * the last layer of the chunk the forward pass computed last: its
 * activations are still there for the backward pass.
 */
static int
chunk_of(const struct gpt *m, int l, int *s, int *e, int *live)
{
	int n = rc_n(m), L = m->cfg.nlayer;

	if (full(m, GPT_RECOMPUTE_UNIFORM)) {
		*s = l / n * n;
		*e = *s + n < L ? *s + n : L;
		*live = L - 1;
		return 1;
	}
	if (full(m, GPT_RECOMPUTE_BLOCK) && l < n) {
		*s = l;
		*e = l + 1;
		*live = n - 1;
		return 1;
	}
	return 0;
}

/*
 * The backend allocations of gpt_set_batch for (B,T): into a, or, with a
 * NULL, only counted. The sum of their bytes.
 */
static size_t
acts_alloc(const struct gpt *m, int B, int T, struct gpt_acts *a)
{
	const struct gpt_config *c = &m->cfg;
	size_t C = c->nembd, NH = c->nhead, BT = (size_t)B * T, total = 0;
	size_t btc = slice(BT * C), bt = slice(BT), S, SA, SR;

	slices(m, &S, &SA, &SR);
#define ACT(field, n, type) do { \
	size_t n_ = (n); \
	total += n_ * sizeof(type); \
	if (a != NULL) \
		a->field = balloc(m, n_, sizeof(type)); \
} while (0)
	ACT(encoded, BT * C, float);
	ACT(ln1, S * btc, float);
	ACT(ln1_mean, S * bt, float);
	ACT(ln1_rstd, S * bt, float);
	ACT(qkv, S * slice(BT * 3 * C), float);
	ACT(atty, S * btc, float);
	ACT(att, SA * slice((size_t)B * NH * T * T), float);
	ACT(res2, S * btc, float);
	ACT(ln2, S * btc, float);
	ACT(ln2_mean, S * bt, float);
	ACT(ln2_rstd, S * bt, float);
	ACT(fch, S * slice(BT * 4 * C), float);
	ACT(fch_gelu, S * slice(BT * 4 * C), float);
	ACT(res3, SR * btc, float);
	ACT(lnf, BT * C, float);
	ACT(lnf_mean, BT, float);
	ACT(lnf_rstd, BT, float);
	ACT(logits, BT * c->vocab, float);
	ACT(losses, BT, float);
	ACT(dres, BT * C, float);
	ACT(dbt4c, BT * 4 * C, float);
	ACT(dbt4c2, BT * 4 * C, float);
	ACT(dbtc, BT * C, float);
	ACT(datt, (size_t)B * NH * T * T, float);
	ACT(tmp, BT * C, float);
	ACT(inputs, BT, int32_t);
	ACT(targets, BT, int32_t);
#undef ACT
	return total;
}

size_t
gpt_acts_bytes(const struct gpt *m, int B, int T)
{
	return acts_alloc(m, B, T, NULL);
}

int
gpt_set_batch(struct gpt *m, int B, int T, char *err, size_t errsize)
{
	const struct gpt_config *c = &m->cfg;

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
	acts_alloc(m, B, T, &m->a);
	m->host_losses = xmalloc((size_t)B * T * sizeof(float));
	return 0;
}

void
gpt_set_recompute(struct gpt *m, const struct gpt_recompute *r)
{
	if (m->be != NULL)
		free_acts(m);
	m->B = m->T = 0;
	m->rc = *r;
}

int
gpt_recompute_parse(struct gpt_recompute *r, int checkpoint_activations,
    int recompute_activations, const char *granularity, const char *method,
    int nlayers, char *err, size_t errsize)
{
	int g = GPT_RECOMPUTE_NONE;

	memset(r, 0, sizeof *r);
	if (granularity != NULL) {
		if (strcmp(granularity, "full") == 0)
			g = GPT_RECOMPUTE_FULL;
		else if (strcmp(granularity, "selective") == 0)
			g = GPT_RECOMPUTE_SELECTIVE;
		else {
			snprintf(err, errsize, "--recompute-granularity: '%s' "
			    "is not full or selective", granularity);
			return -1;
		}
	}
	if (method != NULL && strcmp(method, "uniform") != 0 &&
	    strcmp(method, "block") != 0) {
		snprintf(err, errsize, "--recompute-method: '%s' is not uniform "
		    "or block", method);
		return -1;
	}
	if (checkpoint_activations && recompute_activations) {
		snprintf(err, errsize, "--checkpoint-activations and "
		    "--recompute-activations exclude each other");
		return -1;
	}
	if ((checkpoint_activations && g == GPT_RECOMPUTE_SELECTIVE) ||
	    (recompute_activations && g == GPT_RECOMPUTE_FULL)) {
		snprintf(err, errsize, "--%s and --recompute-granularity %s "
		    "exclude each other", checkpoint_activations ?
		    "checkpoint-activations" : "recompute-activations",
		    granularity);
		return -1;
	}
	if (checkpoint_activations)
		g = GPT_RECOMPUTE_FULL;
	else if (recompute_activations)
		g = GPT_RECOMPUTE_SELECTIVE;
	if (g == GPT_RECOMPUTE_FULL && method == NULL &&
	    !checkpoint_activations) {
		snprintf(err, errsize, "--recompute-granularity full needs "
		    "--recompute-method uniform or block");
		return -1;
	}
	if (g != GPT_RECOMPUTE_FULL && method != NULL) {
		snprintf(err, errsize, "--recompute-method needs "
		    "--recompute-granularity full");
		return -1;
	}
	if (nlayers < 1) {
		snprintf(err, errsize, "--recompute-num-layers must be at "
		    "least 1");
		return -1;
	}
	r->granularity = g;
	r->method = method != NULL && strcmp(method, "block") == 0 ?
	    GPT_RECOMPUTE_BLOCK : GPT_RECOMPUTE_UNIFORM;
	r->nlayers = nlayers;
	return 0;
}

void
gpt_recompute_desc(const struct gpt *m, char *buf, size_t size)
{
	int n = rc_n(m);

	if (m->rc.granularity == GPT_RECOMPUTE_SELECTIVE)
		snprintf(buf, size, "selective (attention probabilities)");
	else if (full(m, GPT_RECOMPUTE_UNIFORM))
		snprintf(buf, size, "full, uniform, %d layer%s per chunk", n,
		    n == 1 ? "" : "s");
	else if (full(m, GPT_RECOMPUTE_BLOCK))
		snprintf(buf, size, "full, block, the first %d of %d layers", n,
		    m->cfg.nlayer);
	else
		snprintf(buf, size, "none");
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
	size_t BT = (size_t)m->B * m->T, C = m->cfg.nembd;
	size_t btc = slice(BT * C), bt = slice(BT), s = slot_of(m, l);

	x->in = l == 0 ? a->encoded : a->res3 + res_of(m, l - 1) * btc;
	x->ln1 = a->ln1 + s * btc;
	x->ln1_mean = a->ln1_mean + s * bt;
	x->ln1_rstd = a->ln1_rstd + s * bt;
	x->qkv = a->qkv + s * slice(BT * 3 * C);
	x->atty = a->atty + s * btc;
	x->att = a->att + att_of(m, l) * slice(BT * m->cfg.nhead * m->T);
	x->res2 = a->res2 + s * btc;
	x->ln2 = a->ln2 + s * btc;
	x->ln2_mean = a->ln2_mean + s * bt;
	x->ln2_rstd = a->ln2_rstd + s * bt;
	x->fch = a->fch + s * slice(BT * 4 * C);
	x->fchg = a->fch_gelu + s * slice(BT * 4 * C);
	x->res3 = a->res3 + res_of(m, l) * btc;
}

/* Pointers to tensor k of layer l in a flat buffer. */
#define P(buf, k, l) ((buf) + m->t[k].off + (size_t)(l) * (m->t[k].n / L))

/*
 * Layer l's forward pass from x->in into x, with dropout probabilities hp
 * (hidden) and ap (attention) under key; with out 0, all but the layer's
 * output x->res3 (kept from the first pass).
 */
static void
layer_forward(struct gpt *m, int l, const struct layer *x, float hp, float ap,
    uint64_t key, int out)
{
	const struct gpt_backend *be = m->be;
	const struct gpt_config *c = &m->cfg;
	int L = c->nlayer, C = c->nembd, NH = c->nhead, B = m->B, T = m->T;
	int BT = B * T;
	size_t btc = (size_t)BT * C;
	const float *w = m->params;
	float *tmp = m->a.tmp;

	be->layernorm_forward(x->ln1, x->ln1_mean, x->ln1_rstd, x->in,
	    P(w, GPT_LN1W, l), P(w, GPT_LN1B, l), BT, C, c->ln_eps);
	be->matmul_forward(x->qkv, x->ln1, P(w, GPT_QKVW, l), P(w, GPT_QKVB, l),
	    BT, C, 3 * C);
	be->attention_forward(x->atty, x->att, x->qkv, B, T, C, NH, ap,
	    site_key(key, l, 0));
	be->matmul_forward(tmp, x->atty, P(w, GPT_ATTPROJW, l),
	    P(w, GPT_ATTPROJB, l), BT, C, C);
	be->residual_forward(x->res2, x->in, tmp, btc, hp, site_key(key, l, 1));
	be->layernorm_forward(x->ln2, x->ln2_mean, x->ln2_rstd, x->res2,
	    P(w, GPT_LN2W, l), P(w, GPT_LN2B, l), BT, C, c->ln_eps);
	be->matmul_forward(x->fch, x->ln2, P(w, GPT_FCW, l), P(w, GPT_FCB, l),
	    BT, C, 4 * C);
	be->gelu_forward(x->fchg, x->fch, 4 * btc);
	if (!out)
		return;
	be->matmul_forward(tmp, x->fchg, P(w, GPT_FCPROJW, l),
	    P(w, GPT_FCPROJB, l), BT, 4 * C, C);
	be->residual_forward(x->res3, x->res2, tmp, btc, hp, site_key(key, l, 2));
}

float
gpt_forward(struct gpt *m, const int32_t *inputs, const int32_t *targets,
    float dloss, uint64_t key)
{
	const struct gpt_backend *be = m->be;
	const struct gpt_config *c = &m->cfg;
	struct gpt_acts *a = &m->a;
	int L = c->nlayer, C = c->nembd, B = m->B, T = m->T;
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
		layer_forward(m, l, &x, hp, ap, key, 1);
	}
	be->layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, x.res3,
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
	int BT = B * T, l, k, s, e, live;
	size_t btc = (size_t)BT * C;
	float hp = c->hidden_dropout, ap = c->attn_dropout;
	const float *dproj, *w = m->params;
	float *g = buffer(m, GPT_GRADS);
	struct layer x;

	if (!m->train)
		return;
	layer_acts(m, L - 1, &x);
	be->lmhead_backward(a->dbtc, g + m->t[GPT_WTE].off, a->logits, a->lnf,
	    w + m->t[GPT_WTE].off, BT, C, c->vocab);
	be->zero(a->dres, btc * sizeof(float));
	be->layernorm_backward(a->dres, g + m->t[GPT_LNFW].off,
	    g + m->t[GPT_LNFB].off, a->dbtc, x.res3,
	    w + m->t[GPT_LNFW].off, a->lnf_mean, a->lnf_rstd, BT, C);
	for (l = L - 1; l >= 0; l--) {
		/* full recomputation: the chunk's forward pass again, from its kept input */
		if (chunk_of(m, l, &s, &e, &live) && l == e - 1 && l != live)
			for (k = s; k < e; k++) {
				layer_acts(m, k, &x);
				layer_forward(m, k, &x, hp, ap, m->key, k < e - 1);
			}
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
		/* selective: the probabilities again, from the kept qkv */
		if (m->rc.granularity == GPT_RECOMPUTE_SELECTIVE && l != L - 1)
			be->attention_forward(NULL, x.att, x.qkv, B, T, C, NH,
			    ap, site_key(m->key, l, 0));
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
