/* gpt.h - GPT-2: configuration, parameters, the backend interface, forward, backward, AdamW */
#ifndef OWT_GPT_H
#define OWT_GPT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The model (DESIGN.md, "The model"): learned positions, pre-LayerNorm
 * blocks, tanh GELU, causal self-attention, the output layer tied to the
 * token embedding, no output bias. Shapes below use
 *	L layers, C channels, NH heads of HS = C/NH channels,
 *	V vocabulary, Vp = V padded, maxT positions, B batch, T sequence.
 */
struct gpt_config {
	int nlayer;		/* L */
	int nhead;		/* NH */
	int nembd;		/* C */
	int maxpos;		/* maxT */
	int vocab;		/* V, the real vocabulary (50257 for GPT-2) */
	int vocab_pad;		/* Vp: V rounded up to a multiple of 128 */
	float ln_eps;		/* LayerNorm epsilon, 1e-5 */
	float hidden_dropout;	/* after the embedding and each residual branch */
	float attn_dropout;	/* on the attention probabilities */
};

/* V rounded up to a multiple of div (Megatron's make_vocab_size_divisible_by). */
int gpt_pad_vocab(int vocab, int div);
/* NULL, or what is wrong with the configuration ("nembd 100 is not ..."). */
const char *gpt_config_check(const struct gpt_config *c);

/*
 * The parameter tensors, in the order they lie in one flat buffer. Every
 * shape is the Hugging Face GPT-2 one, so that a checkpoint is a copy:
 * linear layers are Conv1D (in, out), y = x @ W + b. Per-layer tensors
 * are stacked, layer l at offset l * (size of one layer's tensor).
 */
enum gpt_param {
	GPT_WTE,	/* (Vp, C) token embedding and output layer; rows >= V stay 0 */
	GPT_WPE,	/* (maxT, C) */
	GPT_LN1W,	/* (L, C) */
	GPT_LN1B,	/* (L, C) */
	GPT_QKVW,	/* (L, C, 3C): q, k, v each C wide, heads contiguous */
	GPT_QKVB,	/* (L, 3C) */
	GPT_ATTPROJW,	/* (L, C, C) */
	GPT_ATTPROJB,	/* (L, C) */
	GPT_LN2W,	/* (L, C) */
	GPT_LN2B,	/* (L, C) */
	GPT_FCW,	/* (L, C, 4C) */
	GPT_FCB,	/* (L, 4C) */
	GPT_FCPROJW,	/* (L, 4C, C) */
	GPT_FCPROJB,	/* (L, C) */
	GPT_LNFW,	/* (C) */
	GPT_LNFB,	/* (C) */
	GPT_NPARAM
};

struct gpt_tensor {
	size_t off;		/* first element in the flat buffers */
	size_t n;		/* elements, all layers (held); 0: not held */
	size_t slice;		/* elements of one layer's slice, as held */
	int layered;		/* one slice per layer */
	int rank, dim[2];	/* the shape of one slice, as held */
	int decay;		/* weight decay applies (not biases, not LayerNorm) */
};

/*
 * The Hugging Face name of tensor k of layer l ("transformer.h.3.attn.c_attn.weight"),
 * with or without the "transformer." prefix.
 */
void gpt_param_name(char *buf, size_t size, int k, int l, int prefix);

/*
 * Where an attention call's probabilities lie in the run: the mask of
 * probability (b, h, t, t2) of a call is element
 *	(((s0 + b) * nh + h0 + h) * T + t) * T + t2
 * under key, (s0 + b) the global sample, h0 + h the global head of nh.
 * A call over heads [h0, h0 + NH) of nh (tensor parallelism) therefore
 * draws the masks the whole model draws for those heads, and a
 * micro-batch those of its samples, whatever the layout.
 */
/* The chunks of the canonical gradient norm (gpt_norm_parts), in elements. */
#define GPT_NORM_CHUNK 16384

struct gpt_mask {
	uint64_t key;		/* the site's key */
	uint64_t s0;		/* the global sample of b = 0 */
	int h0, nh;		/* the first head, and the heads of the model */
};

/*
 * A backend: memory and one function per layer. The CPU functions in
 * gpt_cpu.c are one implementation; a CUDA one plugs in the same way and
 * must agree with it. Pointers are backend memory. Every function
 * overwrites its outputs, except those marked "+=", which accumulate
 * (parameter gradients, across micro-batches). Dropout masks are a
 * function of (key, global element index) only (gpt_dropout_keep), so
 * the backward pass recomputes them, a resumed run draws the same ones,
 * and so does every parallel layout (struct gpt_mask).
 */
struct gpt_backend {
	const char *name;
	void *(*alloc)(size_t size);			/* zeroed; NULL when out of memory */
	void (*free)(void *p);
	void (*put)(void *dst, const void *src, size_t size);	/* host to backend */
	void (*get)(void *dst, const void *src, size_t size);	/* backend to host */
	void (*zero)(void *p, size_t size);

	/*
	 * out (B,T,C) = wte[inp - v0] + wpe[t] for the tokens in [v0, v0 +
	 * nrows), the rows wte holds, and 0 for the others (a
	 * vocabulary-parallel part: the owner adds, the others give zeros);
	 * inp (B,T), wte (nrows,C), wpe (maxT,C). The whole table: 0, Vp.
	 */
	void (*encoder_forward)(float *out, const int32_t *inp, const float *wte,
	    const float *wpe, int B, int T, int C, int v0, int nrows);
	/*
	 * dwte (nrows,C) += for the tokens in [v0, v0 + nrows) only, dwpe
	 * (maxT,C) += for all; dout (B,T,C), inp (B,T)
	 */
	void (*encoder_backward)(float *dwte, float *dwpe, const float *dout,
	    const int32_t *inp, int B, int T, int C, int v0, int nrows);
	/* out (N,C), mean (N), rstd (N); inp (N,C), w (C), b (C) */
	void (*layernorm_forward)(float *out, float *mean, float *rstd,
	    const float *inp, const float *w, const float *b, int N, int C,
	    float eps);
	/* dinp (N,C) +=, dw (C) +=, db (C) +=; dout (N,C), inp (N,C), w (C), mean, rstd (N) */
	void (*layernorm_backward)(float *dinp, float *dw, float *db,
	    const float *dout, const float *inp, const float *w,
	    const float *mean, const float *rstd, int N, int C);
	/* out (N,OC) = inp (N,C) @ w (C,OC) + bias (OC) */
	void (*matmul_forward)(float *out, const float *inp, const float *w,
	    const float *bias, int N, int C, int OC);
	/* dinp (N,C) =, dw (C,OC) +=, dbias (OC) +=; dout (N,OC), inp (N,C), w (C,OC) */
	void (*matmul_backward)(float *dinp, float *dw, float *dbias,
	    const float *dout, const float *inp, const float *w, int N, int C,
	    int OC);
	/*
	 * out (B,T,C), att (B,NH,T,T) the softmax probabilities before
	 * dropout (zero above the diagonal); qkv (B,T,3C). With out NULL,
	 * only att (selective recomputation). mk places the dropout mask
	 * (unused when p is 0: it may be NULL then).
	 */
	void (*attention_forward)(float *out, float *att, const float *qkv,
	    int B, int T, int C, int NH, float p, const struct gpt_mask *mk);
	/* dqkv (B,T,3C) =, scratch (B,NH,T,T); dout (B,T,C), qkv (B,T,3C), att (B,NH,T,T) */
	void (*attention_backward)(float *dqkv, float *scratch, const float *dout,
	    const float *qkv, const float *att, int B, int T, int C, int NH,
	    float p, const struct gpt_mask *mk);
	/* out (N) = gelu(inp (N)), tanh form */
	void (*gelu_forward)(float *out, const float *inp, size_t N);
	/* dinp (N) = gelu'(inp) * dout */
	void (*gelu_backward)(float *dinp, const float *inp, const float *dout,
	    size_t N);
	/*
	 * out (N) = a + dropout(b); a may be out. Element i's mask is
	 * element i0 + i's under key: i0 places the call in the tensor of
	 * the whole run (sample s0's first element: s0 * T * C).
	 */
	void (*residual_forward)(float *out, const float *a, const float *b,
	    size_t N, float p, uint64_t key, uint64_t i0);
	/*
	 * out (N) = dropout(inp (N)): kept elements scaled by 1/(1-p); out
	 * may be inp; masks as residual_forward's. The backward pass is the
	 * same call on the gradient.
	 */
	void (*dropout)(float *out, const float *inp, size_t N, float p,
	    uint64_t key, uint64_t i0);
	/* out (N) += a (N), element by element (gradient accumulation) */
	void (*add)(float *out, const float *a, size_t N);
	/* logits (N,V) = inp (N,C) @ wte[:V]^T; wte (Vp,C) */
	void (*lmhead_forward)(float *logits, const float *inp, const float *wte,
	    int N, int C, int V);
	/* dinp (N,C) =, dwte (Vp,C) +=; dlogits (N,V), inp (N,C), wte (Vp,C) */
	void (*lmhead_backward)(float *dinp, float *dwte, const float *dlogits,
	    const float *inp, const float *wte, int N, int C, int V);
	/*
	 * losses (N) = cross-entropy of softmax(logits (N,V)) at targets (N).
	 * With dloss != 0, logits is replaced by its gradient
	 * (softmax - onehot(target)) * dloss.
	 */
	void (*crossentropy)(float *losses, float *logits, const int32_t *targets,
	    int N, int V, float dloss);
	/*
	 * The cross-entropy over a vocabulary split in parts (tensor
	 * parallelism), in three calls with a reduction over the parts after
	 * each of the first two, so that no part holds all the logits.
	 * logits (N,V) are this part's columns, vocabulary [v0, v0 + V).
	 * ce_rowmax: mx (N) = each row's max (-inf with V 0); then the max
	 * over the parts. ce_rowsum: sx (2N) = each row's sum of exp(x - mx)
	 * in double, then the logit at the target where the part holds it,
	 * else 0; then the sum over the parts. ce_grad: losses (N) = log(sum)
	 * - (xt - mx); with dloss != 0, the logits replaced by their
	 * gradient, as crossentropy's.
	 */
	void (*ce_rowmax)(float *mx, const float *logits, int N, int V);
	void (*ce_rowsum)(double *sx, const float *logits, const int32_t *targets,
	    const float *mx, int N, int V, int v0);
	void (*ce_grad)(float *losses, float *logits, const int32_t *targets,
	    const float *mx, const double *sx, int N, int V, int v0,
	    float dloss);
	/*
	 * AdamW on n elements: g' = g * gscale; m, v updated; p -=
	 * lr * (m / bc1 / (sqrt(v / bc2) + eps) + wd * p), where bc1, bc2 are
	 * the bias corrections 1 - beta^step.
	 */
	void (*adamw)(float *p, const float *g, float *m, float *v, size_t n,
	    float lr, float beta1, float beta2, float eps, float wd,
	    float bc1, float bc2, float gscale);
	/* The sum of squares of x (n), in a fixed order (NaN and inf propagate). */
	double (*sumsq)(const float *x, size_t n);
	/*
	 * part (host, ceil(n / GPT_NORM_CHUNK)) = the sums of squares of x's
	 * chunks of GPT_NORM_CHUNK elements, each in a fixed order.
	 */
	void (*sumsq_chunks)(double *part, const float *x, size_t n);

	/*
	 * Inference with a key/value cache (gpt_infer.h). Tokens come
	 * as N rows, row i at position pos[i] of cache slot seq[i]; the
	 * slots are S sequences of up to maxT positions, so rows of
	 * several sequences and several rows of one sequence can share a
	 * call. The caches are (S,NH,maxT,HS) per layer: head-major, one
	 * position's HS channels contiguous.
	 */
	/* out (N,C) = wte[inp[i]] + wpe[pos[i]]; inp (N), pos (N), wte (Vp,C), wpe (maxT,C) */
	void (*encoder_forward_pos)(float *out, const int32_t *inp,
	    const int32_t *pos, const float *wte, const float *wpe, int N,
	    int C);
	/*
	 * out (N,C), kcache (S,NH,maxT,HS), vcache (S,NH,maxT,HS); qkv (N,3C),
	 * seq (N) slots, pos (N) positions. First the key and value of every
	 * row are stored at [seq[i], h, pos[i]]; then out row i is its
	 * query's causal attention (softmax(q k / sqrt(HS)) v) over
	 * positions 0..pos[i] of slot seq[i], which must all be stored by
	 * then, in this call or an earlier one. No two rows share a
	 * (slot, position).
	 */
	void (*attention_forward_kv)(float *out, float *kcache, float *vcache,
	    const float *qkv, const int32_t *seq, const int32_t *pos, int N,
	    int C, int NH, int maxT);
	/*
	 * out (N,OC) = inp (N,C) @ (w (OC,C) * scale (OC))^T + bias (OC):
	 * int8 weights, output row o scaled by scale[o]; bias may be NULL.
	 * Weight-only quantisation: inputs and sums stay fp32.
	 */
	void (*matmul_forward_q8)(float *out, const float *inp, const int8_t *w,
	    const float *scale, const float *bias, int N, int C, int OC);
	/*
	 * Row-wise forms of matmul_forward, lmhead_forward and
	 * matmul_forward_q8 for inference (struct gpt_infer's rowwise): each
	 * output row summed in an order fixed by the shapes, whatever N
	 * and the other rows, and without a parallel region a call. NULL
	 * where a backend has none (the others are used).
	 */
	void (*matmul_forward_rows)(float *out, const float *inp, const float *w,
	    const float *bias, int N, int C, int OC);
	void (*lmhead_forward_rows)(float *logits, const float *inp,
	    const float *wte, int N, int C, int V);
	void (*matmul_forward_q8_rows)(float *out, const float *inp,
	    const int8_t *w, const float *scale, const float *bias, int N, int C,
	    int OC);
};

extern const struct gpt_backend gpt_cpu;

/* The CUDA kernels compile the mask's definition too (kernels/gpt_cuda.cu). */
#ifdef __CUDACC__
#define GPT_HD __host__ __device__
#else
#define GPT_HD
#endif

/* Keep element i under dropout with probability 1 - p: the mask's definition. */
static inline GPT_HD int
gpt_dropout_keep(uint64_t key, uint64_t i, float p)
{
	uint64_t x = key + 0x9e3779b97f4a7c15ULL * (i + 1);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (float)(x >> 40) * (1.0f / 16777216.0f) >= p;
}

/* AdamW on one element, as struct gpt_backend's adamw defines it. */
static inline GPT_HD void
gpt_adamw_elem(float *p, float g, float *m, float *v, float lr, float beta1,
    float beta2, float eps, float wd, float bc1, float bc2, float gscale)
{
	float gi = g * gscale;
	float mi = beta1 * *m + (1.0f - beta1) * gi;
	float vi = beta2 * *v + (1.0f - beta2) * gi * gi;

	*m = mi;
	*v = vi;
	*p -= lr * ((mi / bc1) / (sqrtf(vi / bc2) + eps) + wd * *p);
}

/*
 * Activation recomputation, Megatron's: what the forward pass keeps for
 * the backward pass and what the backward pass computes again. Nothing
 * is approximated: a recomputed layer replays the same backend calls on
 * the same inputs into buffers of the same alignment, with the same
 * dropout masks (a function of the key and the element), so gradients,
 * losses and weights are bit-identical to a run that keeps everything.
 *
 * NONE keeps every layer's activations. SELECTIVE (Megatron's
 * --recompute-activations) keeps all but the attention probabilities
 * (B,NH,T,T) per layer, which the backward pass recomputes from the kept
 * qkv. FULL keeps only the input of each chunk of layers and reruns the
 * chunk's forward pass before its backward pass: UNIFORM cuts the L
 * layers into chunks of nlayers (v2.5's --checkpoint-activations with
 * --checkpoint-num-layers); BLOCK recomputes the first nlayers layers one
 * by one and keeps the rest. nlayers above L counts as L. The chunk the
 * forward pass ends with is still in memory and is not recomputed.
 */
enum { GPT_RECOMPUTE_NONE, GPT_RECOMPUTE_SELECTIVE, GPT_RECOMPUTE_FULL };
enum { GPT_RECOMPUTE_UNIFORM, GPT_RECOMPUTE_BLOCK };

struct gpt_recompute {
	int granularity;	/* GPT_RECOMPUTE_NONE, _SELECTIVE or _FULL */
	int method;		/* FULL: GPT_RECOMPUTE_UNIFORM or _BLOCK */
	int nlayers;		/* FULL: layers per chunk, or layers recomputed */
};

/*
 * Megatron's options to a struct gpt_recompute: --checkpoint-activations
 * (v2.5: full, uniform), --recompute-activations (later Megatron:
 * selective), --recompute-granularity and --recompute-method (NULL when
 * not given), --recompute-num-layers or v2.5's --checkpoint-num-layers.
 * 0, or -1 with err (a usage error: options that contradict each other,
 * or full granularity without a method, which Megatron refuses too).
 */
int gpt_recompute_parse(struct gpt_recompute *r, int checkpoint_activations,
    int recompute_activations, const char *granularity, const char *method,
    int nlayers, char *err, size_t errsize);

/*
 * The activations kept for the backward pass, for (B,T). The per-layer
 * arrays hold S slices, one per layer or fewer under recomputation; each
 * slice is padded to a multiple of 256 bytes, so that a layer's buffers
 * have the same alignment in every mode.
 */
struct gpt_acts {
	float *encoded;		/* (B,T,C) */
	float *ln1;		/* (S,B,T,C) */
	float *ln1_mean;	/* (S,B,T) */
	float *ln1_rstd;	/* (S,B,T) */
	float *qkv;		/* (S,B,T,3C) */
	float *atty;		/* (S,B,T,C) */
	float *att;		/* (S,B,NH,T,T) */
	float *res2;		/* (S,B,T,C) the residual after attention */
	float *ln2;		/* (S,B,T,C) */
	float *ln2_mean;	/* (S,B,T) */
	float *ln2_rstd;	/* (S,B,T) */
	float *fch;		/* (S,B,T,4C) before GELU */
	float *fch_gelu;	/* (S,B,T,4C) */
	float *res3;		/* (S,B,T,C) the residual after the MLP */
	float *lnf;		/* (B,T,C) */
	float *lnf_mean;	/* (B,T) */
	float *lnf_rstd;	/* (B,T) */
	float *logits;		/* (B,T,V), or their gradient after a training forward */
	float *losses;		/* (B,T) */
	/* scratch for the backward pass, one layer at a time */
	float *dres;		/* (B,T,C) gradient of the residual stream */
	float *dbt4c;		/* (B,T,4C) */
	float *dbt4c2;		/* (B,T,4C) */
	float *dbtc;		/* (B,T,C) */
	float *datt;		/* (B,NH,T,T) */
	float *tmp;		/* (B,T,C) */
	int32_t *inputs;	/* (B,T) */
	int32_t *targets;	/* (B,T) */
	float *ce_mx;		/* (B,T) tp > 1: the rows' max over the vocabulary */
	double *ce_sx;		/* (2,B,T) tp > 1: sums of exponentials, target logits */
};

struct comm;

/*
 * Distributed training: the contract with lib/train/train.c and lib/dist/pipeline.c.
 *
 * - Layout: dist_init (lib/dist/dist.h) gives each rank its part; the model is
 *   gpt_init_part(m, cfg, &(struct gpt_part){ d.l0, d.l1, d.pp_rank == 0,
 *   d.pp_rank == d.pp - 1, d.tp, d.tp_rank }, tp_group, be, ...) with
 *   cfg.vocab_pad = d.vocab_pad (the same on every rank, and for the
 *   single process the layout is compared against). Flat buffers hold
 *   the part only (m->t[k]: the rank's shapes; n 0 for a tensor the
 *   stage does not hold); dist_runs maps them to checkpoint tensors.
 * - Dropout: the run's key owt_mix64(seed) and, per micro-batch, the
 *   global index of its first sample (dist_sample) as s0: masks are the
 *   same in every layout.
 * - Tensor parallelism is inside gpt_forward/gpt_backward and the stage
 *   functions: every rank of the tp group calls them together. The loss
 *   they return is identical on every rank of the group.
 * - Pipeline: gpt_set_slots, then gpt_forward_stage / gpt_backward_stage
 *   with the sends and receives around them (below). Only the last stage
 *   returns a loss.
 * - Accumulation, sums, norm, update: gpt_grad_accumulate's comment. The
 *   data-parallel sum covers m->grads' ngrads elements (ordered sum:
 *   single-process bits when each rank has one micro-batch); the
 *   embedding group sums m->t[GPT_WTE] after gpt_grad_tie; the norm is
 *   gpt_norm_parts, a sum over a replica's ranks, gpt_norm_sum.
 *   t/unit-gpt.c's part_iteration is a working example of all of it
 *   (GPipe order, ordered DP sum), checked bit for bit against the whole
 *   model by t/6008-gpt-parts.t.
 * - A failed collective inside the model ends the process (exit 3 with
 *   comm's message); the caller's own collectives report as comm.h says.
 */

/* A pipeline slot: one micro-batch's activations between its passes. */
struct gpt_slot {
	struct gpt_acts a;	/* the per-micro-batch arrays (no scratch) */
	uint64_t key, s0;
	int train;
};

/*
 * A model's part under model parallelism (lib/dist/dist.h's layout, which
 * gives the numbers): the layers [l0, l1) of a pipeline stage, whether
 * the stage is the first (token and position embeddings) or the last
 * (final LayerNorm, output layer, loss; a copy of the token embedding),
 * and the tensor-parallel size and rank. Within a stage, tensors are
 * split as lib/dist/dist.h says (QKV and fc by columns, the projections by
 * rows, the token embedding by vocabulary rows), each rank's part stored
 * row-major in the split shape. The whole model: { 0, L, 1, 1, 1, 0 }.
 */
struct gpt_part {
	int l0, l1;
	int first, last;
	int tp, tp_rank;
};

struct gpt {
	struct gpt_config cfg;	/* the whole model's, also in a part */
	const struct gpt_backend *be;
	struct gpt_tensor t[GPT_NPARAM];	/* as held (a part's shapes) */
	size_t nparams;		/* elements of each flat buffer, padding included */
	float *params, *grads;	/* backend memory; grads has ngrads elements */
	struct gpt_part part;
	struct comm *tp;	/* the tensor-parallel group (NULL: tp 1) */
	int nl;			/* layers held, l1 - l0 */
	int v0, vrows, vreal;	/* token rows held [v0, v0 + vrows), vreal < V */
	size_t ngrads;		/* nparams, + the output layer's gradient (last stage) */
	size_t head;		/* where that gradient starts in grads (0: none) */
	float *acc;		/* gpt_grad_accumulate's second buffer (ngrads) */
	double *host_ce;	/* (3 B T) the cross-entropy's reductions, tp > 1 */
	int nslot;		/* gpt_set_slots; 0 or 1: m->a is the one set */
	struct gpt_slot *slot;	/* nslot > 1: the sets; m->a points at one */
	float *m, *v;		/* AdamW moments, allocated by the first update */
	uint64_t step;		/* AdamW steps taken */
	int B, T;		/* the size the activations were allocated for */
	struct gpt_recompute rc;	/* set by gpt_set_recompute */
	struct gpt_acts a;
	float *host_losses;	/* (B,T) */
	int train;		/* the last forward prepared a backward pass */
	uint64_t key, s0;	/* dropout key and first sample of the last forward */
};

/*
 * 0, or -1 with err for a bad configuration. The parameters are 0;
 * gradients and moments are allocated when first used. Running out of
 * backend memory here or later exits with XSYS, as xmalloc does.
 */
int gpt_init(struct gpt *m, const struct gpt_config *c,
    const struct gpt_backend *be, char *err, size_t errsize);
/*
 * A part of the model (struct gpt_part), its tensor-parallel group tp
 * (tp->size == p->tp; NULL when p->tp is 1). c is the whole model's,
 * with vocab_pad a multiple of p->tp (dist_init's). Every rank of the
 * group makes the same calls in the same order: gpt_forward, gpt_backward
 * and the stage functions make collectives over tp at Megatron's points
 * (after the row-parallel products, the embedding and the input
 * gradients of the column-parallel ones), and a collective that fails
 * ends the process (owt_fatal, exit 3, with comm's message naming the
 * rank). The row-parallel biases are added by tp rank 0 only.
 */
int gpt_init_part(struct gpt *m, const struct gpt_config *c,
    const struct gpt_part *p, struct comm *tp, const struct gpt_backend *be,
    char *err, size_t errsize);
/*
 * Only the checked configuration and the layout (m->cfg, m->t,
 * m->nparams), nothing allocated: to check a file against a model
 * before allocating it (nothing to gpt_free).
 */
int gpt_layout(struct gpt *m, const struct gpt_config *c, char *err,
    size_t errsize);
/* The same for a part (p NULL: the whole model). */
int gpt_layout_part(struct gpt *m, const struct gpt_config *c,
    const struct gpt_part *p, char *err, size_t errsize);
void gpt_free(struct gpt *m);
/*
 * The bytes of backend memory the models of this process have allocated
 * so far (freed memory still counted): what gpt-train --dry-run predicts.
 */
size_t gpt_alloc_bytes(void);
/* The number of parameters of the model without the vocabulary padding. */
size_t gpt_nparams(const struct gpt_config *c);

/*
 * Megatron's initialisation from a seed: N(0, 0.02) for the embeddings,
 * QKV and fc, N(0, 0.02 / sqrt(2L)) for the two output projections, zero
 * biases, LayerNorm weight 1 and bias 0, padded rows 0. The normal draws
 * come from splitmix64 and Box-Muller; elements 2j and 2j + 1 of tensor k
 * use the counter (k, j), so the weights do not depend on the thread
 * count, and a part's are its slice of the whole model's.
 */
void gpt_init_weights(struct gpt *m, uint64_t seed, float std);

/*
 * Allocate the activations for batches of B sequences of T tokens.
 * 0, or -1 with err when T is beyond the position table.
 */
int gpt_set_batch(struct gpt *m, int B, int T, char *err, size_t errsize);
/*
 * Recompute activations as r says (NONE after gpt_init). The activations
 * are freed: call it before gpt_set_batch, which allocates for the mode.
 */
void gpt_set_recompute(struct gpt *m, const struct gpt_recompute *r);
/*
 * The bytes of backend memory gpt_set_batch allocates for (B,T) under m's
 * configuration and recomputation, exactly: the activations, logits,
 * backward scratch and token ids (m needs only gpt_layout).
 */
size_t gpt_acts_bytes(const struct gpt *m, int B, int T);
/*
 * m's recomputation in words: "none", "selective (attention
 * probabilities)", "full, uniform, 2 layers per chunk", "full, block, the
 * first 4 of 12 layers".
 */
void gpt_recompute_desc(const struct gpt *m, char *buf, size_t size);

/*
 * The forward pass on inputs (B,T) with targets (B,T) or NULL; returns
 * the mean loss (0 without targets). With dloss != 0 it is a training
 * pass: dropout is on, and the gradient of dloss * sum(losses) is ready
 * for gpt_backward. Otherwise m->a.logits holds the logits (B,T,V)
 * (a tensor-parallel part: (B,T,vreal), its vocabulary rows' columns).
 * Token ids must be < V. Dropout masks are a function of the run's key
 * (owt_mix64(seed), the same all run) and the global position of each
 * element: s0 is the global index of the batch's first sample (samples
 * consumed before it), so a sample's masks do not depend on the
 * micro-batch, data-parallel rank or layout that computes it:
 *	hidden state (s, t, c) of layer l (L: the embedding), site 1
 *	(attention) or 2 (MLP): element (s * T + t) * C + c under
 *	owt_mix64(key + 4 l + site); attention as struct gpt_mask says,
 *	site 0.
 */
float gpt_forward(struct gpt *m, const int32_t *inputs, const int32_t *targets,
    float dloss, uint64_t key, uint64_t s0);
/*
 * Accumulate the gradients of the last training forward into m->grads.
 * The tied token embedding's two uses keep two gradients: the
 * embedding's in its place in grads, the output layer's at grads +
 * m->head (last stage), until gpt_grad_tie adds them.
 */
void gpt_backward(struct gpt *m);
/*
 * Pipeline parallelism (the schedule is lib/dist/pipeline.c's): a stage keeps
 * the activations of up to n micro-batches between their forward and
 * backward passes, one slot each (1F1B: min(PP - stage, micro-batches)).
 * Call before gpt_set_batch, which allocates n sets of the per-micro-batch
 * arrays and one of the backward scratch (gpt_acts_bytes counts them).
 *
 * gpt_forward_stage runs micro-batch s0's forward pass through the
 * stage's layers in slot: the first stage from inputs, the others from
 * what the caller received into gpt_stage_input(m, slot) (B,T,C); the
 * last stage on to the loss (returned; targets as gpt_forward's), the
 * others leave their output in gpt_stage_output(m, slot) (B,T,C) to send.
 * gpt_backward_stage runs slot's backward pass: the last stage from its
 * loss, the others from the gradient of their output, received into
 * gpt_stage_grad(m) (B,T,C; shared by the slots) before the call; after
 * it, gpt_stage_grad(m) holds the gradient of the stage's input, for
 * the previous stage (the first stage goes on into the embeddings).
 * Forward passes do not touch gpt_stage_grad(m), so 1F1B may receive a
 * gradient, run a forward pass and then the backward pass.
 * Each stage's backward passes in micro-batch order make the gradients of
 * the whole model's order, and the masks depend on s0 only: a pipeline's
 * losses, gradients and weights are the single process's, bit for bit.
 * Buffers are backend memory; slot 0 with one slot is gpt_forward's.
 */
void gpt_set_slots(struct gpt *m, int n);
float gpt_forward_stage(struct gpt *m, int slot, const int32_t *inputs,
    const int32_t *targets, float dloss, uint64_t key, uint64_t s0);
void gpt_backward_stage(struct gpt *m, int slot);
float *gpt_stage_input(struct gpt *m, int slot);
const float *gpt_stage_output(struct gpt *m, int slot);
float *gpt_stage_grad(struct gpt *m);

/* Zero m->grads (all ngrads elements). */
void gpt_zero_grad(struct gpt *m);

/*
 * Gradient accumulation that data parallelism can reproduce. Adding each
 * micro-batch's backward pass into the same buffer makes g0 + (stream of
 * g1), which no split of the micro-batches over ranks can repeat; instead
 * each micro-batch starts from zero and the sums are made per element,
 * ((g0 + g1) + g2) + ..., the association an ordered sum over ranks
 * (comm_sum_ordered) makes too. The iteration, single process:
 *
 *	for j in 0 .. n-1:
 *		gpt_zero_grad; gpt_forward(.., s0 of micro-batch j); gpt_backward;
 *		gpt_grad_accumulate(m, j, n);
 *	(data parallelism: comm_sum_ordered over the dp group of m->grads,
 *	 m->ngrads elements, both embedding gradients included)
 *	gpt_grad_tie(m);
 *	(pipeline parallelism: comm_sum_ordered of the token embedding's
 *	 gradient, m->t[GPT_WTE], over the embedding group: first stage
 *	 encoder's, last stage the output layer's)
 *	norm = gpt_grad_norm(m), or gpt_norm_parts + comm + gpt_norm_sum;
 *	gpt_update(m, ..).
 *
 * gpt_grad_accumulate after micro-batch j of n: the sum so far is kept
 * in m->acc (allocated here, ngrads more elements, when n > 1), and after
 * the last one it is in m->grads again. Nothing happens when n is 1.
 */
void gpt_grad_accumulate(struct gpt *m, int j, int n);
/*
 * The token embedding's gradient = the encoder's + the output layer's
 * (a sum of two terms: the same in any order); once per iteration, after
 * accumulation and any data-parallel sum. No-op without the output layer.
 */
void gpt_grad_tie(struct gpt *m);

/*
 * The canonical gradient norm: the sum of squares of every chunk of
 * GPT_NORM_CHUNK elements of each tensor's slice, in double, the chunks
 * taken in (tensor k, layer l, tensor-parallel piece r, chunk) order and
 * added in that order; the square root. A piece is a rank's part of a
 * split tensor (lib/dist/dist.h), the whole slice otherwise, so with one
 * tensor-parallel rank the order is (k, l, chunk). The vector of chunk
 * sums has gpt_norm_nparts entries, the same on every rank of a layout;
 * gpt_norm_parts fills those a rank owns (its layers and pieces; a
 * tensor every TP rank holds whole counts on tp rank 0; the tied
 * embedding on the first stage) and zeros the others, so a sum over the
 * ranks of one model replica (comm_ctl_allreduce, x + 0 exact; over the
 * world with the vector zeroed on data-parallel ranks but 0, whose
 * replicas are the same) gives every rank the vector of the whole model,
 * and gpt_norm_sum the norm: the single process's, bit for bit, but for
 * tensor parallelism, whose gradients differ in the last bits. Call after
 * gpt_grad_tie (and after the data-parallel sum). ZeRO shards cut at
 * chunk boundaries keep the chunks whole.
 */
size_t gpt_norm_nparts(const struct gpt *m);
void gpt_norm_parts(struct gpt *m, double *part);
double gpt_norm_sum(const double *part, size_t n);
/* gpt_norm_parts and gpt_norm_sum on this process's part alone. */
double gpt_grad_norm(struct gpt *m);

struct adamw {
	float beta1, beta2, eps, wd;
};
/*
 * One AdamW step at learning rate lr with the gradients scaled by gscale
 * (the clipping coefficient); no decay on biases and LayerNorm.
 */
void gpt_update(struct gpt *m, const struct adamw *o, float lr, float gscale);

/* The flat buffers, nparams floats each. */
enum gpt_buffer { GPT_PARAMS, GPT_GRADS, GPT_ADAM_M, GPT_ADAM_V };
/* Copy a buffer to the host (zeros for one not yet allocated), or from it. */
void gpt_get(struct gpt *m, enum gpt_buffer which, float *host);
void gpt_put(struct gpt *m, enum gpt_buffer which, const float *host);

#endif
