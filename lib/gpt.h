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
	size_t n;		/* elements, all layers */
	int layered;		/* one slice per layer */
	int rank, dim[2];	/* the shape of one slice */
	int decay;		/* weight decay applies (not biases, not LayerNorm) */
};

/*
 * The Hugging Face name of tensor k of layer l ("transformer.h.3.attn.c_attn.weight"),
 * with or without the "transformer." prefix.
 */
void gpt_param_name(char *buf, size_t size, int k, int l, int prefix);

/*
 * A backend: memory and one function per layer. The CPU functions in
 * gpt_cpu.c are one implementation; a CUDA one plugs in the same way and
 * must agree with it. Pointers are backend memory. Every function
 * overwrites its outputs, except those marked "+=", which accumulate
 * (parameter gradients, across micro-batches). Dropout masks are a
 * function of (key, element index) only (gpt_dropout_keep), so the
 * backward pass recomputes them and a resumed run draws the same ones.
 */
struct gpt_backend {
	const char *name;
	void *(*alloc)(size_t size);			/* zeroed; NULL when out of memory */
	void (*free)(void *p);
	void (*put)(void *dst, const void *src, size_t size);	/* host to backend */
	void (*get)(void *dst, const void *src, size_t size);	/* backend to host */
	void (*zero)(void *p, size_t size);

	/* out (B,T,C) = wte[inp] + wpe[t]; inp (B,T), wte (Vp,C), wpe (maxT,C) */
	void (*encoder_forward)(float *out, const int32_t *inp, const float *wte,
	    const float *wpe, int B, int T, int C);
	/* dwte (Vp,C) +=, dwpe (maxT,C) +=; dout (B,T,C), inp (B,T) */
	void (*encoder_backward)(float *dwte, float *dwpe, const float *dout,
	    const int32_t *inp, int B, int T, int C);
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
	 * only att (selective recomputation).
	 */
	void (*attention_forward)(float *out, float *att, const float *qkv,
	    int B, int T, int C, int NH, float p, uint64_t key);
	/* dqkv (B,T,3C) =, scratch (B,NH,T,T); dout (B,T,C), qkv (B,T,3C), att (B,NH,T,T) */
	void (*attention_backward)(float *dqkv, float *scratch, const float *dout,
	    const float *qkv, const float *att, int B, int T, int C, int NH,
	    float p, uint64_t key);
	/* out (N) = gelu(inp (N)), tanh form */
	void (*gelu_forward)(float *out, const float *inp, size_t N);
	/* dinp (N) = gelu'(inp) * dout */
	void (*gelu_backward)(float *dinp, const float *inp, const float *dout,
	    size_t N);
	/* out (N) = a + dropout(b); a may be out */
	void (*residual_forward)(float *out, const float *a, const float *b,
	    size_t N, float p, uint64_t key);
	/*
	 * out (N) = dropout(inp (N)): kept elements scaled by 1/(1-p); out
	 * may be inp. The backward pass is the same call on the gradient.
	 */
	void (*dropout)(float *out, const float *inp, size_t N, float p,
	    uint64_t key);
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
};

struct gpt {
	struct gpt_config cfg;
	const struct gpt_backend *be;
	struct gpt_tensor t[GPT_NPARAM];
	size_t nparams;		/* elements of each flat buffer, padding included */
	float *params, *grads;	/* backend memory */
	float *m, *v;		/* AdamW moments, allocated by the first update */
	uint64_t step;		/* AdamW steps taken */
	int B, T;		/* the size the activations were allocated for */
	struct gpt_recompute rc;	/* set by gpt_set_recompute */
	struct gpt_acts a;
	float *host_losses;	/* (B,T) */
	int train;		/* the last forward prepared a backward pass */
	uint64_t key;		/* dropout key of the last forward */
};

/*
 * 0, or -1 with err for a bad configuration. The parameters are 0;
 * gradients and moments are allocated when first used. Running out of
 * backend memory here or later exits with XSYS, as xmalloc does.
 */
int gpt_init(struct gpt *m, const struct gpt_config *c,
    const struct gpt_backend *be, char *err, size_t errsize);
/*
 * Only the checked configuration and the layout (m->cfg, m->t,
 * m->nparams), nothing allocated: to check a file against a model
 * before allocating it (nothing to gpt_free).
 */
int gpt_layout(struct gpt *m, const struct gpt_config *c, char *err,
    size_t errsize);
void gpt_free(struct gpt *m);
/* The number of parameters of the model without the vocabulary padding. */
size_t gpt_nparams(const struct gpt_config *c);

/*
 * Megatron's initialisation from a seed: N(0, 0.02) for the embeddings,
 * QKV and fc, N(0, 0.02 / sqrt(2L)) for the two output projections, zero
 * biases, LayerNorm weight 1 and bias 0, padded rows 0. The normal draws
 * come from splitmix64 and Box-Muller; elements 2j and 2j + 1 of tensor k
 * use the counter (k, j), so the weights do not depend on the thread count.
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
 * pass: dropout is on, drawn with key, and the gradient of
 * dloss * sum(losses) is ready for gpt_backward. Otherwise m->a.logits
 * holds the logits (B,T,V). Token ids must be < V.
 */
float gpt_forward(struct gpt *m, const int32_t *inputs, const int32_t *targets,
    float dloss, uint64_t key);
/* Accumulate the gradients of the last training forward into m->grads. */
void gpt_backward(struct gpt *m);
void gpt_zero_grad(struct gpt *m);
/* The global L2 norm of the gradients (the tied embedding counted once). */
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
