/* gpt_infer.h - GPT-2 inference with a key/value cache over a backend, fp32 or int8 weights */
#ifndef OWT_GPT_INFER_H
#define OWT_GPT_INFER_H

#include <stddef.h>
#include <stdint.h>

#include "model/gpt.h"

/*
 * Inference with a key/value cache: S slots, each a token
 * sequence of up to maxT positions whose keys and values stay in the
 * cache, fed any number of tokens at a time. Generation feeds a prompt
 * to a free slot in one step, then one token per slot and step; scoring
 * feeds a whole window. Each row's numbers depend only on its own slot's
 * tokens, not on the other rows of a step.
 *
 * With int8 the weight matrices (QKV, the two projections, fc and the
 * output layer) are used as int8 with a scale per output channel
 * (symmetric, absmax / 127, round to nearest); embeddings, LayerNorm and
 * biases stay fp32.
 */
struct gpt_infer {
	struct gpt *m;
	int S;			/* slots */
	int N;			/* most rows per step */
	int NL;			/* most rows of logits per step */
	int *len;		/* (S) host: positions filled in each slot */
	float *kcache, *vcache;	/* (L,S,NH,maxT,HS) */
	float *x, *ln, *qkv, *atty, *tmp, *fch, *fchg;	/* (N,C), (N,3C), (N,4C) */
	float *mean, *rstd;	/* (N) */
	float *logits;		/* (NL,V) of the last step's output rows */
	float *losses;		/* (NL) */
	int32_t *ids, *seq, *pos;	/* (N) */
	int32_t *targets;	/* (NL) */
	int32_t *hpos;		/* (N) host: positions of a step's rows */
	int rowwise;		/* set: the backend's row-wise products
				   (matmul_forward_rows...) for any number of
				   rows, so a row's numbers do not depend on
				   how many share its step; 0 (gpt_infer_init):
				   its fastest for the rows (on the CPU,
				   row-wise up to GEMV_MAXN rows, sgemm above) */
	int8_t *q8;		/* int8 matrices (gpt_infer_quantize), or NULL */
	float *q8scale;
	size_t q8off[GPT_NPARAM], q8soff[GPT_NPARAM];	/* per tensor, layer 0 */
};

/*
 * S slots, steps of up to N rows of which up to NL give logits. 0, or -1
 * with err when the cache does not fit the backend's memory (XSYS).
 */
int gpt_infer_init(struct gpt_infer *g, struct gpt *m, int S, int N, int NL,
    char *err, size_t errsize, int *code);
void gpt_infer_free(struct gpt_infer *g);
/* Use int8 weight matrices from now on, quantised from m's fp32 weights. */
void gpt_infer_quantize(struct gpt_infer *g);
/* Empty slot s. */
void gpt_infer_reset(struct gpt_infer *g, int s);

/*
 * Feed n tokens (1 <= n <= N): ids[i] goes to slot seq[i] at its next
 * position, a slot's rows in order. Then g->logits (nout,V) holds the
 * logits of the last nout rows (0 <= nout <= NL; 0: none). 0, or -1
 * with err when a slot would grow beyond maxT positions (XDATA; nothing
 * is fed then).
 */
int gpt_infer_step(struct gpt_infer *g, int n, const int32_t *ids,
    const int32_t *seq, int nout, char *err, size_t errsize, int *code);
/* The logits (nout,V) of the last step on the host. */
void gpt_infer_logits(struct gpt_infer *g, int nout, float *host);
/*
 * The cross-entropy (nats) of targets (nout) under the last step's
 * logits, into host (nout). g->logits may be overwritten.
 */
void gpt_infer_losses(struct gpt_infer *g, int nout, const int32_t *targets,
    float *host);

#endif
