/* gpt.c - GPT-2: parameter layout, initialisation, and the forward, backward and AdamW passes over a backend */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "model/gpt.h"
#include "core/util.h"

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

/* Tensors split over tensor-parallel ranks (lib/dist/dist.h), and how. */
enum { WHOLE, COLS, ROWS, QKV };

static int
split_of(int k)
{
	switch (k) {
	case GPT_QKVW: case GPT_QKVB: return QKV;
	case GPT_FCW: case GPT_FCB: return COLS;
	case GPT_ATTPROJW: case GPT_FCPROJW: case GPT_WTE: return ROWS;
	}
	return WHOLE;
}

/* The whole model's shape of one slice of tensor k. */
static void
whole_shape(const struct gpt_config *c, int k, int dim[2])
{
	int C = c->nembd;
	static const int mul[GPT_NPARAM][2] = {
		[GPT_LN1W] = { 1 }, [GPT_LN1B] = { 1 },
		[GPT_QKVW] = { 1, 3 }, [GPT_QKVB] = { 3 },
		[GPT_ATTPROJW] = { 1, 1 }, [GPT_ATTPROJB] = { 1 },
		[GPT_LN2W] = { 1 }, [GPT_LN2B] = { 1 },
		[GPT_FCW] = { 1, 4 }, [GPT_FCB] = { 4 },
		[GPT_FCPROJW] = { 4, 1 }, [GPT_FCPROJB] = { 1 },
		[GPT_LNFW] = { 1 }, [GPT_LNFB] = { 1 },
	};

	if (k == GPT_WTE || k == GPT_WPE) {
		dim[0] = k == GPT_WTE ? c->vocab_pad : c->maxpos;
		dim[1] = C;
		return;
	}
	dim[0] = mul[k][0] * C;
	dim[1] = mul[k][1] * C;
}

static size_t
elems(const int dim[2])
{
	return (size_t)dim[0] * (dim[1] ? dim[1] : 1);
}

/* Whether the part holds tensor k. */
static int
holds(const struct gpt *m, int k)
{
	if (k == GPT_WTE)
		return m->part.first || m->part.last;
	if (k == GPT_WPE)
		return m->part.first;
	if (k == GPT_LNFW || k == GPT_LNFB)
		return m->part.last;
	return 1;
}

static void
layout_tensors(struct gpt *m)
{
	int tp = m->part.tp;
	size_t off = 0;
	int k;

	for (k = 0; k < GPT_NPARAM; k++) {
		struct gpt_tensor *t = &m->t[k];
		int d[2];

		whole_shape(&m->cfg, k, d);
		t->layered = pinfo[k].layered;
		t->decay = pinfo[k].decay;
		t->rank = d[1] ? 2 : 1;
		/* the split dimension: the columns (the only one of a vector), or the rows */
		if (split_of(k) == ROWS)
			d[0] /= tp;
		else if (split_of(k) != WHOLE)
			d[t->rank - 1] /= tp;
		t->dim[0] = d[0];
		t->dim[1] = d[1];
		t->slice = elems(d);
		t->n = holds(m, k) ? t->slice * (t->layered ? m->nl : 1) : 0;
		t->off = off;
		off += t->n;
	}
	m->nparams = off;
	m->v0 = m->part.tp_rank * (m->cfg.vocab_pad / tp);
	m->vrows = m->cfg.vocab_pad / tp;
	m->vreal = m->cfg.vocab - m->v0;
	m->vreal = m->vreal < 0 ? 0 : m->vreal > m->vrows ? m->vrows : m->vreal;
	m->head = m->part.last ? m->nparams : 0;
	m->ngrads = m->nparams + (m->part.last ? m->t[GPT_WTE].n : 0);
}

/*
 * Element e of the part's slice of tensor k (one layer) in the whole
 * model's slice: the inverse of lib/dist/dist.h's split.
 */
static size_t
whole_index(const struct gpt *m, int k, size_t e)
{
	const struct gpt_tensor *t = &m->t[k];
	size_t r = (size_t)m->part.tp_rank, w = t->rank == 2 ? t->dim[1] : t->dim[0];
	size_t row = t->rank == 2 ? e / w : 0, col = e % w, part;

	switch (split_of(k)) {
	case ROWS:
		return r * t->slice + e;
	case COLS:
		return row * w * m->part.tp + r * w + col;
	case QKV:	/* q, k and v each w / 3 wide */
		part = w / 3;
		return row * w * m->part.tp + col / part * part * m->part.tp +
		    r * part + col % part;
	}
	return e;
}

size_t
gpt_nparams(const struct gpt_config *c)
{
	size_t C = c->nembd;

	return (size_t)c->vocab * C + (size_t)c->maxpos * C + 2 * C +
	    (size_t)c->nlayer * (12 * C * C + 13 * C);
}

static size_t alloc_bytes;

size_t
gpt_alloc_bytes(void)
{
	return alloc_bytes;
}

static void *
balloc(const struct gpt *m, size_t n, size_t elsize)
{
	void *p = m->be->alloc(n * elsize);

	alloc_bytes += n * elsize;
	if (p == NULL)
		owt_fatal("out of %s memory allocating %zu bytes",
		    m->be->name, n * elsize);
	return p;
}

int
gpt_layout_part(struct gpt *m, const struct gpt_config *c,
    const struct gpt_part *p, char *err, size_t errsize)
{
	struct gpt_part whole = { 0, c->nlayer, 1, 1, 1, 0 };
	const char *why;

	memset(m, 0, sizeof *m);
	if ((why = gpt_config_check(c)) != NULL) {
		return owt_fail(err, errsize, NULL, XUSAGE, "%s", why);
	}
	if (p == NULL)
		p = &whole;
	if (p->tp < 1 || p->tp_rank < 0 || p->tp_rank >= p->tp ||
	    p->l0 < 0 || p->l0 >= p->l1 || p->l1 > c->nlayer) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "a part of layers [%d, %d) at tensor-"
		    "parallel rank %d of %d is not one of the model's", p->l0,
		    p->l1, p->tp_rank, p->tp);
	}
	if (c->nembd % p->tp != 0 || c->nhead % p->tp != 0 ||
	    c->vocab_pad % p->tp != 0) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "hidden size %d, %d attention heads and "
		    "padded vocabulary %d must be multiples of the %d "
		    "tensor-parallel ranks", c->nembd, c->nhead, c->vocab_pad,
		    p->tp);
	}
	m->cfg = *c;
	m->part = *p;
	m->nl = p->l1 - p->l0;
	layout_tensors(m);
	return 0;
}

int
gpt_layout(struct gpt *m, const struct gpt_config *c, char *err,
    size_t errsize)
{
	return gpt_layout_part(m, c, NULL, err, errsize);
}

int
gpt_init_part(struct gpt *m, const struct gpt_config *c,
    const struct gpt_part *p, struct comm *tp, const struct gpt_backend *be,
    char *err, size_t errsize)
{
	if (gpt_layout_part(m, c, p, err, errsize) < 0)
		return -1;
	if (m->part.tp > 1 && (tp == NULL || tp->size != m->part.tp ||
	    tp->rank != m->part.tp_rank)) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "tensor-parallel rank %d of %d needs its "
		    "group of %d", m->part.tp_rank, m->part.tp, m->part.tp);
	}
	m->tp = m->part.tp > 1 ? tp : NULL;
	m->be = be;
	m->params = balloc(m, m->nparams ? m->nparams : 1, sizeof(float));
	return 0;
}

int
gpt_init(struct gpt *m, const struct gpt_config *c,
    const struct gpt_backend *be, char *err, size_t errsize)
{
	return gpt_init_part(m, c, NULL, NULL, be, err, errsize);
}

/*
 * The arrays of struct gpt_acts: those of one micro-batch (PER: kept from
 * its forward pass to its backward pass, one set per pipeline slot) and
 * the backward pass's scratch (SCRATCH: one set).
 */
enum { PER = 1, SCRATCH = 2 };
#define ACT_FIELDS(X) \
	X(encoded, PER) X(ln1, PER) X(ln1_mean, PER) X(ln1_rstd, PER) \
	X(qkv, PER) X(atty, PER) X(att, PER) X(res2, PER) X(ln2, PER) \
	X(ln2_mean, PER) X(ln2_rstd, PER) X(fch, PER) X(fch_gelu, PER) \
	X(res3, PER) X(lnf, PER) X(lnf_mean, PER) X(lnf_rstd, PER) \
	X(logits, PER) X(losses, PER) X(inputs, PER) X(targets, PER) \
	X(dres, SCRATCH) X(dbt4c, SCRATCH) X(dbt4c2, SCRATCH) \
	X(dbtc, SCRATCH) X(datt, SCRATCH) X(tmp, SCRATCH) \
	X(ce_mx, SCRATCH) X(ce_sx, SCRATCH)

/* Free a's arrays of the kinds in which. */
static void
free_set(struct gpt *m, struct gpt_acts *a, int which)
{
#define FREE(f, kind) if (which & (kind)) m->be->free(a->f);
	ACT_FIELDS(FREE)
#undef FREE
}

/* Point m->a's per-micro-batch arrays at slot s's, and restore its pass. */
static void
use_slot(struct gpt *m, int s)
{
	struct gpt_slot *sl;

	if (m->slot == NULL)
		return;
	sl = &m->slot[s];
#define USE(f, kind) if ((kind) == PER) m->a.f = sl->a.f;
	ACT_FIELDS(USE)
#undef USE
	m->key = sl->key;
	m->s0 = sl->s0;
	m->train = sl->train;
}

/* Keep the pass's state of slot s (its key, first sample, training). */
static void
keep_slot(struct gpt *m, int s)
{
	if (m->slot == NULL)
		return;
	m->slot[s].key = m->key;
	m->slot[s].s0 = m->s0;
	m->slot[s].train = m->train;
}

static void
free_acts(struct gpt *m)
{
	int s;

	if (m->slot != NULL) {
		free_set(m, &m->a, SCRATCH);
		for (s = 0; s < m->nslot; s++)
			free_set(m, &m->slot[s].a, PER);
		free(m->slot);
		m->slot = NULL;
	} else {
		free_set(m, &m->a, PER | SCRATCH);
	}
	memset(&m->a, 0, sizeof m->a);
	free(m->host_losses);
	free(m->host_ce);
	m->host_losses = NULL;
	m->host_ce = NULL;
}

void
gpt_free(struct gpt *m)
{
	if (m->be == NULL)
		return;
	free_acts(m);
	m->be->free(m->params);
	m->be->free(m->grads);
	m->be->free(m->acc);
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
	size_t i, real, g, ws;
	int k, d[2];

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
		if (t->n == 0)
			continue;
		if (m->part.tp > 1 || m->nl != c->nlayer) {
			/* a part: each element's draw in the whole tensor */
			whole_shape(c, k, d);
			ws = elems(d);
			real = k == GPT_WTE ? (size_t)c->vocab * c->nembd : SIZE_MAX;
#pragma omp parallel for schedule(static) private(g)
			for (i = 0; i < t->n; i++) {
				double z0, z1;

				g = whole_index(m, k, i % t->slice) + (t->layered ?
				    (size_t)(m->part.l0 + i / t->slice) * ws : 0);
				normal2(seed, k, g / 2, &z0, &z1);
				p[i] = g < real ? (float)(s * (g % 2 ? z1 : z0)) : 0;
			}
			continue;
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
	int n = m->rc.nlayers, L = m->nl;

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
	size_t L = m->nl, n = rc_n(m);

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
	int n = rc_n(m), L = m->nl;

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
	int n = rc_n(m), L = m->nl;

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
acts_alloc(const struct gpt *m, int B, int T, struct gpt_acts *a, int which)
{
	const struct gpt_config *c = &m->cfg;
	size_t tp = (size_t)m->part.tp, C = c->nembd, CL = C / tp;
	size_t NHL = c->nhead / tp, BT = (size_t)B * T, total = 0;
	size_t btc = slice(BT * C), bt = slice(BT), S, SA, SR;
	size_t last = m->part.last, ce = last && tp > 1;

	slices(m, &S, &SA, &SR);
#define ACT(field, n, type, kind) do { \
	size_t n_ = (n); \
	if (which & (kind)) { \
		total += n_ * sizeof(type); \
		if (a != NULL && n_ > 0) \
			a->field = balloc(m, n_, sizeof(type)); \
	} \
} while (0)
	ACT(encoded, BT * C, float, PER);
	ACT(ln1, S * btc, float, PER);
	ACT(ln1_mean, S * bt, float, PER);
	ACT(ln1_rstd, S * bt, float, PER);
	ACT(qkv, S * slice(BT * 3 * CL), float, PER);
	ACT(atty, S * slice(BT * CL), float, PER);
	ACT(att, SA * slice((size_t)B * NHL * T * T), float, PER);
	ACT(res2, S * btc, float, PER);
	ACT(ln2, S * btc, float, PER);
	ACT(ln2_mean, S * bt, float, PER);
	ACT(ln2_rstd, S * bt, float, PER);
	ACT(fch, S * slice(BT * 4 * CL), float, PER);
	ACT(fch_gelu, S * slice(BT * 4 * CL), float, PER);
	ACT(res3, SR * btc, float, PER);
	ACT(lnf, last * BT * C, float, PER);
	ACT(lnf_mean, last * BT, float, PER);
	ACT(lnf_rstd, last * BT, float, PER);
	ACT(logits, last * BT * (tp > 1 ? (size_t)m->vreal : (size_t)c->vocab),
	    float, PER);
	ACT(losses, last * BT, float, PER);
	ACT(dres, BT * C, float, SCRATCH);
	ACT(dbt4c, BT * 4 * CL, float, SCRATCH);
	ACT(dbt4c2, BT * 4 * CL, float, SCRATCH);
	ACT(dbtc, BT * C, float, SCRATCH);
	ACT(datt, (size_t)B * NHL * T * T, float, SCRATCH);
	ACT(tmp, BT * C, float, SCRATCH);
	ACT(inputs, BT, int32_t, PER);
	ACT(targets, BT, int32_t, PER);
	ACT(ce_mx, ce * BT, float, SCRATCH);
	ACT(ce_sx, ce * 2 * BT, double, SCRATCH);
#undef ACT
	return total;
}

size_t
gpt_acts_bytes(const struct gpt *m, int B, int T)
{
	size_t n = m->nslot > 1 ? (size_t)m->nslot : 1;

	return n * acts_alloc(m, B, T, NULL, PER) +
	    acts_alloc(m, B, T, NULL, SCRATCH);
}

int
gpt_set_batch(struct gpt *m, int B, int T, char *err, size_t errsize)
{
	const struct gpt_config *c = &m->cfg;
	int s;

	if (T > c->maxpos) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "sequence length %d is beyond the %d "
		    "positions of the model", T, c->maxpos);
	}
	if (B == m->B && T == m->T)
		return 0;
	free_acts(m);
	m->B = B;
	m->T = T;
	if (m->nslot > 1) {
		m->slot = xcalloc((size_t)m->nslot, sizeof *m->slot);
		for (s = 0; s < m->nslot; s++)
			acts_alloc(m, B, T, &m->slot[s].a, PER);
		acts_alloc(m, B, T, &m->a, SCRATCH);
		use_slot(m, 0);
	} else {
		acts_alloc(m, B, T, &m->a, PER | SCRATCH);
	}
	m->host_losses = xmalloc((size_t)B * T * sizeof(float));
	if (m->a.ce_mx != NULL)
		m->host_ce = xmalloc((size_t)B * T * 3 * sizeof(double));
	return 0;
}

void
gpt_set_slots(struct gpt *m, int n)
{
	if (m->be != NULL)
		free_acts(m);
	m->B = m->T = 0;
	m->nslot = n;
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
			return owt_fail(err, errsize, NULL, XUSAGE,
			    "--recompute-granularity: '%s' is not full or "
			    "selective", granularity);
		}
	}
	if (method != NULL && strcmp(method, "uniform") != 0 &&
	    strcmp(method, "block") != 0) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--recompute-method: '%s' is not uniform "
		    "or block", method);
	}
	if (checkpoint_activations && recompute_activations) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--checkpoint-activations and "
		    "--recompute-activations exclude each other");
	}
	if ((checkpoint_activations && g == GPT_RECOMPUTE_SELECTIVE) ||
	    (recompute_activations && g == GPT_RECOMPUTE_FULL)) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--%s and --recompute-granularity %s "
		    "exclude each other", checkpoint_activations ?
		    "checkpoint-activations" : "recompute-activations",
		    granularity);
	}
	if (checkpoint_activations)
		g = GPT_RECOMPUTE_FULL;
	else if (recompute_activations)
		g = GPT_RECOMPUTE_SELECTIVE;
	if (g == GPT_RECOMPUTE_FULL && method == NULL &&
	    !checkpoint_activations) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--recompute-granularity full needs "
		    "--recompute-method uniform or block");
	}
	if (g != GPT_RECOMPUTE_FULL && method != NULL) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--recompute-method needs "
		    "--recompute-granularity full");
	}
	if (nlayers < 1) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--recompute-num-layers must be at "
		    "least 1");
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
		    m->nl);
	else
		snprintf(buf, size, "none");
}

/* The dropout key of layer l (L for the embedding) and site s. */
static uint64_t
site_key(uint64_t key, int l, int s)
{
	return owt_mix64(key + (uint64_t)l * 4 + (uint64_t)s);
}

/* Layer l's activations (struct gpt_acts), and its input; l local. */
struct layer {
	float *in, *ln1, *ln1_mean, *ln1_rstd, *qkv, *atty, *att, *res2;
	float *ln2, *ln2_mean, *ln2_rstd, *fch, *fchg, *res3;
};

static void
layer_acts(struct gpt *m, int l, struct layer *x)
{
	struct gpt_acts *a = &m->a;
	size_t BT = (size_t)m->B * m->T, C = m->cfg.nembd, CL = C / m->part.tp;
	size_t btc = slice(BT * C), bt = slice(BT), s = slot_of(m, l);
	size_t nhl = (size_t)m->cfg.nhead / m->part.tp;

	x->in = l == 0 ? a->encoded : a->res3 + res_of(m, l - 1) * btc;
	x->ln1 = a->ln1 + s * btc;
	x->ln1_mean = a->ln1_mean + s * bt;
	x->ln1_rstd = a->ln1_rstd + s * bt;
	x->qkv = a->qkv + s * slice(BT * 3 * CL);
	x->atty = a->atty + s * slice(BT * CL);
	x->att = a->att + att_of(m, l) * slice(BT * nhl * m->T);
	x->res2 = a->res2 + s * btc;
	x->ln2 = a->ln2 + s * btc;
	x->ln2_mean = a->ln2_mean + s * bt;
	x->ln2_rstd = a->ln2_rstd + s * bt;
	x->fch = a->fch + s * slice(BT * 4 * CL);
	x->fchg = a->fch_gelu + s * slice(BT * 4 * CL);
	x->res3 = a->res3 + res_of(m, l) * btc;
}

/* Pointers to tensor k of local layer l in a flat buffer. */
#define P(buf, k, l) ((buf) + m->t[k].off + (size_t)(l) * m->t[k].slice)

/*
 * The sum over the tensor-parallel group of buf (n), in place: Megatron's
 * f and g. A failed collective ends the process: the world is broken.
 */
static void
tp_sum(struct gpt *m, float *buf, size_t n, const char *what)
{
	char err[512];
	int code;

	if (m->tp == NULL)
		return;
	if (comm_sum_ordered(m->tp, buf, n, what, err, sizeof err, &code) < 0)
		owt_fatal("%s", err);
}

/* The same for host doubles with op (the cross-entropy's row reductions). */
static void
tp_ctl(struct gpt *m, double *v, size_t n, int op, const char *what)
{
	char err[512];
	int code;

	if (comm_ctl_allreduce(m->tp, v, n, op, what, err, sizeof err,
	    &code) < 0)
		owt_fatal("%s", err);
}

/* The first element of the hidden states of the last forward, in the run. */
static uint64_t
hidden_i0(const struct gpt *m)
{
	return m->s0 * (uint64_t)m->T * (uint64_t)m->cfg.nembd;
}

/* Global layer l's attention mask over the rank's heads (struct gpt_mask). */
static struct gpt_mask
att_mask(const struct gpt *m, int l)
{
	int nhl = m->cfg.nhead / m->part.tp;

	return (struct gpt_mask){ site_key(m->key, l, 0), m->s0,
	    m->part.tp_rank * nhl, m->cfg.nhead };
}

/* The row-parallel bias k of layer l: tensor-parallel rank 0 adds it. */
static const float *
row_bias(const struct gpt *m, const float *w, int k, int l)
{
	return m->part.tp_rank == 0 ? P(w, k, l) : NULL;
}

/*
 * Layer l's (local) forward pass from x->in into x, with dropout
 * probabilities hp (hidden) and ap (attention) under m->key and m->s0;
 * with out 0, all but the layer's output x->res3 (kept from the first
 * pass). Under tensor parallelism the attention and MLP work on the
 * rank's heads and columns, and the projections' partial sums are added
 * over the group.
 */
static void
layer_forward(struct gpt *m, int l, const struct layer *x, float hp, float ap,
    int out)
{
	const struct gpt_backend *be = m->be;
	const struct gpt_config *c = &m->cfg;
	int C = c->nembd, CL = C / m->part.tp, NHL = c->nhead / m->part.tp;
	int B = m->B, T = m->T, BT = B * T, gl = m->part.l0 + l;
	size_t btc = (size_t)BT * C;
	const float *w = m->params;
	float *tmp = m->a.tmp;
	struct gpt_mask mk = att_mask(m, gl);
	uint64_t i0 = hidden_i0(m);

	be->layernorm_forward(x->ln1, x->ln1_mean, x->ln1_rstd, x->in,
	    P(w, GPT_LN1W, l), P(w, GPT_LN1B, l), BT, C, c->ln_eps);
	be->matmul_forward(x->qkv, x->ln1, P(w, GPT_QKVW, l), P(w, GPT_QKVB, l),
	    BT, C, 3 * CL);
	be->attention_forward(x->atty, x->att, x->qkv, B, T, CL, NHL, ap, &mk);
	be->matmul_forward(tmp, x->atty, P(w, GPT_ATTPROJW, l),
	    row_bias(m, w, GPT_ATTPROJB, l), BT, CL, C);
	tp_sum(m, tmp, btc, "attention output");
	be->residual_forward(x->res2, x->in, tmp, btc, hp, site_key(m->key, gl, 1),
	    i0);
	be->layernorm_forward(x->ln2, x->ln2_mean, x->ln2_rstd, x->res2,
	    P(w, GPT_LN2W, l), P(w, GPT_LN2B, l), BT, C, c->ln_eps);
	be->matmul_forward(x->fch, x->ln2, P(w, GPT_FCW, l), P(w, GPT_FCB, l),
	    BT, C, 4 * CL);
	be->gelu_forward(x->fchg, x->fch, (size_t)BT * 4 * CL);
	if (!out)
		return;
	be->matmul_forward(tmp, x->fchg, P(w, GPT_FCPROJW, l),
	    row_bias(m, w, GPT_FCPROJB, l), BT, 4 * CL, C);
	tp_sum(m, tmp, btc, "MLP output");
	be->residual_forward(x->res3, x->res2, tmp, btc, hp, site_key(m->key, gl, 2),
	    i0);
}

/*
 * The losses (B,T) of the logits of the rank's vocabulary part: the
 * cross-entropy in three calls around two reductions over the group.
 */
static void
crossentropy_parts(struct gpt *m, float dloss)
{
	const struct gpt_backend *be = m->be;
	struct gpt_acts *a = &m->a;
	size_t BT = (size_t)m->B * m->T, i;
	double *h = m->host_ce;
	float *f = (float *)(h + 2 * BT);

	be->ce_rowmax(a->ce_mx, a->logits, (int)BT, m->vreal);
	be->get(f, a->ce_mx, BT * sizeof *f);
	for (i = 0; i < BT; i++)
		h[i] = f[i];
	tp_ctl(m, h, BT, COMM_MAX, "logits' maxima");
	for (i = 0; i < BT; i++)
		f[i] = (float)h[i];
	be->put(a->ce_mx, f, BT * sizeof *f);
	be->ce_rowsum(a->ce_sx, a->logits, a->targets, a->ce_mx, (int)BT,
	    m->vreal, m->v0);
	be->get(h, a->ce_sx, 2 * BT * sizeof *h);
	tp_ctl(m, h, 2 * BT, COMM_SUM, "softmax sums");
	be->put(a->ce_sx, h, 2 * BT * sizeof *h);
	be->ce_grad(a->losses, a->logits, a->targets, a->ce_mx, a->ce_sx,
	    (int)BT, m->vreal, m->v0, dloss);
}

float
gpt_forward_stage(struct gpt *m, int slot, const int32_t *inputs,
    const int32_t *targets, float dloss, uint64_t key, uint64_t s0)
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

	use_slot(m, slot);
	m->train = dloss != 0;
	m->key = key;
	m->s0 = s0;
	if (m->train) {
		hp = c->hidden_dropout;
		ap = c->attn_dropout;
	}
	if (m->part.first) {
		be->put(a->inputs, inputs, (size_t)BT * sizeof *inputs);
		be->encoder_forward(a->encoded, a->inputs,
		    w + m->t[GPT_WTE].off, w + m->t[GPT_WPE].off, B, T, C,
		    m->v0, m->vrows);
		tp_sum(m, a->encoded, btc, "embeddings");
		if (hp > 0)
			be->dropout(a->encoded, a->encoded, btc, hp,
			    site_key(key, L, 0), hidden_i0(m));
	}
	for (l = 0; l < m->nl; l++) {
		layer_acts(m, l, &x);
		layer_forward(m, l, &x, hp, ap, 1);
	}
	if (!m->part.last || targets == NULL)
		m->train = m->train && !m->part.last;
	keep_slot(m, slot);
	if (!m->part.last)
		return 0;
	be->layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, x.res3,
	    w + m->t[GPT_LNFW].off, w + m->t[GPT_LNFB].off, BT, C, c->ln_eps);
	if (m->tp == NULL)
		be->lmhead_forward(a->logits, a->lnf, w + m->t[GPT_WTE].off, BT,
		    C, c->vocab);
	else if (m->vreal > 0)
		be->lmhead_forward(a->logits, a->lnf, w + m->t[GPT_WTE].off, BT,
		    C, m->vreal);
	if (targets == NULL)
		return 0;
	be->put(a->targets, targets, (size_t)BT * sizeof *targets);
	if (m->tp == NULL)
		be->crossentropy(a->losses, a->logits, a->targets, BT, c->vocab,
		    dloss);
	else
		crossentropy_parts(m, dloss);
	be->get(m->host_losses, a->losses, (size_t)BT * sizeof(float));
	for (l = 0; l < BT; l++)
		sum += m->host_losses[l];
	return (float)(sum / BT);
}

float
gpt_forward(struct gpt *m, const int32_t *inputs, const int32_t *targets,
    float dloss, uint64_t key, uint64_t s0)
{
	return gpt_forward_stage(m, 0, inputs, targets, dloss, key, s0);
}

float *
gpt_stage_input(struct gpt *m, int slot)
{
	return m->slot ? m->slot[slot].a.encoded : m->a.encoded;
}

const float *
gpt_stage_output(struct gpt *m, int slot)
{
	struct layer x;

	use_slot(m, slot);
	layer_acts(m, m->nl - 1, &x);
	return x.res3;
}

float *
gpt_stage_grad(struct gpt *m)
{
	return m->a.dres;
}

static float *
buffer(struct gpt *m, enum gpt_buffer which)
{
	float **p = which == GPT_PARAMS ? &m->params : which == GPT_GRADS ?
	    &m->grads : which == GPT_ADAM_M ? &m->m : &m->v;
	size_t n = which == GPT_GRADS ? m->ngrads : m->nparams;

	if (*p == NULL)
		*p = balloc(m, n ? n : 1, sizeof(float));
	return *p;
}

/*
 * The gradient of a residual branch's output: the residual gradient,
 * through the branch's dropout mask when there is one; l global.
 */
static const float *
dropout_grad(struct gpt *m, int l, int site)
{
	size_t n = (size_t)m->B * m->T * m->cfg.nembd;

	if (m->cfg.hidden_dropout == 0)
		return m->a.dres;
	m->be->dropout(m->a.tmp, m->a.dres, n, m->cfg.hidden_dropout,
	    site_key(m->key, l, site), hidden_i0(m));
	return m->a.tmp;
}

/*
 * The backward of linear layer k (its weight; the bias is k + 1) of
 * local layer l: din (BT, IC) from dout (BT, OC) and the layer's input
 * inp, the weight's and bias's gradients added to the slot's.
 */
static void
linear_backward(struct gpt *m, int k, int l, float *din, const float *dout,
    const float *inp, int IC, int OC)
{
	float *g = buffer(m, GPT_GRADS);
	const float *w = m->params;

	m->be->matmul_backward(din, P(g, k, l), P(g, k + 1, l), dout, inp,
	    P(w, k, l), m->B * m->T, IC, OC);
}

/*
 * a.dres += the backward of LayerNorm k (weight; bias k + 1) of local
 * layer l, whose input was inp, from a.dbtc summed over the
 * tensor-parallel ranks first (what names it in an error).
 */
static void
norm_backward(struct gpt *m, int k, int l, const float *inp,
    const float *mean, const float *rstd, const char *what)
{
	struct gpt_acts *a = &m->a;
	float *g = buffer(m, GPT_GRADS);
	const float *w = m->params;
	int C = m->cfg.nembd;

	tp_sum(m, a->dbtc, (size_t)m->B * m->T * C, what);
	m->be->layernorm_backward(a->dres, P(g, k, l), P(g, k + 1, l), a->dbtc,
	    inp, P(w, k, l), mean, rstd, m->B * m->T, C);
}

void
gpt_backward_stage(struct gpt *m, int slot)
{
	const struct gpt_backend *be = m->be;
	const struct gpt_config *c = &m->cfg;
	struct gpt_acts *a = &m->a;
	int L = c->nlayer, C = c->nembd, B = m->B, T = m->T, gl;
	int CL = C / m->part.tp, NHL = c->nhead / m->part.tp;
	int BT = B * T, l, k, s, e, live, nl = m->nl;
	size_t btc = (size_t)BT * C;
	float hp = c->hidden_dropout, ap = c->attn_dropout;
	const float *dproj, *w = m->params;
	float *g = buffer(m, GPT_GRADS);
	struct gpt_mask mk;
	struct layer x;

	use_slot(m, slot);
	if (!m->train)
		return;
	layer_acts(m, nl - 1, &x);
	if (m->part.last) {
		if (m->tp == NULL || m->vreal > 0)
			be->lmhead_backward(a->dbtc, g + m->head, a->logits,
			    a->lnf, w + m->t[GPT_WTE].off, BT, C,
			    m->tp ? m->vreal : c->vocab);
		else
			be->zero(a->dbtc, btc * sizeof(float));
		tp_sum(m, a->dbtc, btc, "output layer input gradients");
		be->zero(a->dres, btc * sizeof(float));
		be->layernorm_backward(a->dres, g + m->t[GPT_LNFW].off,
		    g + m->t[GPT_LNFB].off, a->dbtc, x.res3,
		    w + m->t[GPT_LNFW].off, a->lnf_mean, a->lnf_rstd, BT, C);
	}
	for (l = nl - 1; l >= 0; l--) {
		gl = m->part.l0 + l;
		/* full recomputation: the chunk's forward pass again, from its kept input */
		if (chunk_of(m, l, &s, &e, &live) && l == e - 1 && l != live)
			for (k = s; k < e; k++) {
				layer_acts(m, k, &x);
				layer_forward(m, k, &x, hp, ap, k < e - 1);
			}
		layer_acts(m, l, &x);
		/* res3 = res2 + dropout(fcproj(gelu(fc(ln2(res2))))) */
		dproj = dropout_grad(m, gl, 2);
		linear_backward(m, GPT_FCPROJW, l, a->dbt4c, dproj, x.fchg,
		    4 * CL, C);
		be->gelu_backward(a->dbt4c2, x.fch, a->dbt4c, (size_t)BT * 4 * CL);
		linear_backward(m, GPT_FCW, l, a->dbtc, a->dbt4c2, x.ln2, C,
		    4 * CL);
		norm_backward(m, GPT_LN2W, l, x.res2, x.ln2_mean, x.ln2_rstd,
		    "MLP input gradients");

		/* res2 = in + dropout(attproj(attention(qkv(ln1(in))))) */
		dproj = dropout_grad(m, gl, 1);
		linear_backward(m, GPT_ATTPROJW, l, a->dbtc, dproj, x.atty, CL, C);
		/* selective: the probabilities again, from the kept qkv */
		mk = att_mask(m, gl);
		if (m->rc.granularity == GPT_RECOMPUTE_SELECTIVE && l != nl - 1)
			be->attention_forward(NULL, x.att, x.qkv, B, T, CL, NHL,
			    ap, &mk);
		be->attention_backward(a->dbt4c, a->datt, a->dbtc, x.qkv, x.att,
		    B, T, CL, NHL, ap, &mk);
		linear_backward(m, GPT_QKVW, l, a->dbtc, a->dbt4c, x.ln1, C,
		    3 * CL);
		norm_backward(m, GPT_LN1W, l, x.in, x.ln1_mean, x.ln1_rstd,
		    "attention input gradients");
	}
	if (m->part.first) {
		if (hp > 0)
			be->dropout(a->dres, a->dres, btc, hp,
			    site_key(m->key, L, 0), hidden_i0(m));
		be->encoder_backward(g + m->t[GPT_WTE].off,
		    g + m->t[GPT_WPE].off, a->dres, a->inputs, B, T, C, m->v0,
		    m->vrows);
	}
	m->train = 0;
	keep_slot(m, slot);
}

void
gpt_backward(struct gpt *m)
{
	gpt_backward_stage(m, 0);
}

void
gpt_zero_grad(struct gpt *m)
{
	m->be->zero(buffer(m, GPT_GRADS), m->ngrads * sizeof(float));
}

void
gpt_grad_accumulate(struct gpt *m, int j, int n)
{
	float *t;

	if (n <= 1)
		return;
	if (m->acc == NULL)
		m->acc = balloc(m, m->ngrads ? m->ngrads : 1, sizeof(float));
	if (j == 0) {
		t = m->acc;
		m->acc = buffer(m, GPT_GRADS);
		m->grads = t;
	} else {
		m->be->add(m->acc, buffer(m, GPT_GRADS), m->ngrads);
	}
	if (j == n - 1) {
		t = m->acc;
		m->acc = m->grads;
		m->grads = t;
	}
}

void
gpt_grad_tie(struct gpt *m)
{
	float *g = buffer(m, GPT_GRADS);

	if (m->head > 0)
		m->be->add(g + m->t[GPT_WTE].off, g + m->head, m->t[GPT_WTE].n);
}

/*
 * The canonical norm's walk: for each (tensor k, layer l, piece r), the
 * number of chunks, and the piece's gradient when this part owns it
 * (NULL otherwise). Returns the chunks in all.
 */
static size_t
norm_walk(struct gpt *m, double *part)
{
	const struct gpt_config *c = &m->cfg;
	const struct gpt_part *p = &m->part;
	size_t idx = 0, pn, nch;
	int k, l, r, nl, np, own, d[2];

	for (k = 0; k < GPT_NPARAM; k++) {
		whole_shape(c, k, d);
		np = split_of(k) == WHOLE ? 1 : p->tp;
		pn = elems(d) / (size_t)np;
		nch = (pn + GPT_NORM_CHUNK - 1) / GPT_NORM_CHUNK;
		nl = pinfo[k].layered ? c->nlayer : 1;
		for (l = 0; l < nl; l++)
			for (r = 0; r < np; r++) {
				if (pinfo[k].layered)
					own = l >= p->l0 && l < p->l1;
				else if (k == GPT_WTE || k == GPT_WPE)
					own = p->first;
				else
					own = p->last;
				own = own && (np > 1 ? r == p->tp_rank :
				    p->tp_rank == 0);
				if (part != NULL && own)
					m->be->sumsq_chunks(part + idx,
					    m->grads + m->t[k].off +
					    (pinfo[k].layered ? (size_t)(l - p->l0) *
					    m->t[k].slice : 0), pn);
				else if (part != NULL)
					memset(part + idx, 0, nch * sizeof *part);
				idx += nch;
			}
	}
	return idx;
}

size_t
gpt_norm_nparts(const struct gpt *m)
{
	return norm_walk((struct gpt *)m, NULL);
}

void
gpt_norm_parts(struct gpt *m, double *part)
{
	buffer(m, GPT_GRADS);
	norm_walk(m, part);
}

double
gpt_norm_sum(const double *part, size_t n)
{
	double s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += part[i];
	return sqrt(s);
}

double
gpt_grad_norm(struct gpt *m)
{
	size_t n = gpt_norm_nparts(m);
	double *part = xmalloc((n ? n : 1) * sizeof *part), norm;

	gpt_norm_parts(m, part);
	norm = gpt_norm_sum(part, n);
	free(part);
	return norm;
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

		if (t->n > 0)
			m->be->adamw(m->params + t->off, g + t->off,
			    mm + t->off, vv + t->off, t->n, lr, o->beta1,
			    o->beta2, o->eps, t->decay ? o->wd : 0, bc1, bc2,
			    gscale);
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
