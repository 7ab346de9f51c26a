/* gen.h - text generation and scoring with GPT-2: Megatron's sampling, a batched decoding loop, perplexity in windows */
#ifndef OWT_GEN_H
#define OWT_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "model/gpt.h"
#include "model/gpt_infer.h"

/*
 * Sampling as Megatron-LM v2.5's generate_samples_gpt.py does it: the
 * logits divided by the temperature; with top_k > 0 every logit below
 * the k-th largest removed (ties with it kept); with top_p > 0 the tokens
 * sorted by probability and removed after the first whose cumulative
 * probability exceeds top_p (that one kept, and any tied with it, so the
 * set does not depend on how ties are ordered); then a draw from the
 * softmax of what remains. Greedy (the first largest logit) when greedy
 * is set, at temperature 0 or with top_k 1. Only the real vocabulary is
 * ever drawn: the logits have V entries, of which the first nvocab are
 * drawn from.
 */
struct gen_opts {
	double temperature;
	int top_k;
	double top_p;
	int greedy;
	int max_new;		/* tokens to generate at most */
	uint64_t seed;
	int32_t eod;		/* the token that ends a text, or -1 */
	int nvocab;		/* draw only ids below this (the tokenizer's); 0: all */
	int ctx;		/* prompt and text at most this many tokens, at most
				   the model's positions; 0: the model's positions */
	double top_p_decay;	/* > 0: top_p times this after each token, */
	double top_p_bound;	/* but not below this (Megatron's server) */
	int ban;		/* set: ban_tok is never drawn right after */
	int32_t ban_after, ban_tok;	/* ban_after was fed */
	int chunk;		/* the loop's: > 0, prompts are fed in chunks of
				   this many tokens by gen_step (chunked
				   prefill); 0: whole, by gen_start */
};

/* Scratch space for gen_pick, V entries. */
struct gen_pick_buf {
	float *z;
	double *w;
	int32_t *id;
	int V;
};
void gen_pick_init(struct gen_pick_buf *b, int V);
void gen_pick_free(struct gen_pick_buf *b);

/*
 * The token chosen from logits (V) with the uniform draw u in [0, 1):
 * for a fixed u the choice is a function of the logits alone.
 */
int32_t gen_pick(const struct gen_opts *o, const float *logits, int V,
    double u, struct gen_pick_buf *b);

/*
 * The uniform draw of step k of stream s under seed: splitmix64 of a
 * counter, so each sample's draws are its own, whatever else is batched
 * with it.
 */
double gen_uniform(uint64_t seed, uint64_t s, uint64_t k);

/* Why a sample ended. */
enum { GEN_RUNNING, GEN_EOD, GEN_LENGTH, GEN_CONTEXT, GEN_STOPPED };

/* One sample being generated, owned by the caller until it ends. */
struct gen_seq {
	void *user;		/* the caller's */
	uint64_t stream;	/* its random draws (gen_uniform) */
	int nprompt;		/* prompt tokens */
	int ngen;		/* tokens generated so far (EOD not counted) */
	int end;		/* GEN_* */
	int slot;
	int32_t last;		/* the token to feed next */
	const struct gen_opts *o;	/* its own options (the loop's ctx
					   still applies); NULL: the loop's */
	const float *logits;	/* (V) during fn: the row tok was drawn from */
	float *prompt_lp;	/* (nprompt - 1) or NULL: gen_start writes the
				   log-probabilities of prompt[1..] there */
	const int32_t *prompt;	/* chunked prefill: the prompt, the caller's
				   until the sample ends */
	int fed;		/* prompt tokens fed so far */
	uint64_t order;		/* chunked prefill: started before higher */
};

/*
 * Called for each token generated (tok >= 0), and once more with tok -1
 * when the sample has ended (s->end says why); after that the slot is
 * free and s is the caller's again. fn may end the sample it is called
 * for with gen_stop (a stop token or string).
 */
typedef void gen_token_fn(void *arg, struct gen_seq *s, int32_t tok);

/*
 * The decoding loop: up to S samples at once, one per slot of the key/
 * value cache. gen_start feeds a prompt to a free slot and draws the
 * first token; each gen_step feeds every running sample its last token
 * and draws the next. A sample's tokens depend only on its prompt, its
 * stream and the options, not on what runs beside it: a step feeds the
 * samples' last tokens in products of at most GEMV_MAXN rows (the CPU's
 * row-wise kernels, gemv.h, whose rows do not depend on the row count; the
 * same kernel whatever the batch), and a prompt in calls of its own.
 *
 * With o->chunk > 0 (chunked prefill), gen_start only takes the slot
 * (a sample with prompt_lp is still fed whole there);
 * each gen_step then, after the running samples' tokens, feeds prompt
 * chunks of o->chunk tokens (a prompt's chunk k is its tokens
 * [k chunk, (k + 1) chunk), whatever runs beside it), the oldest
 * prompt's first, until o->chunk prompt tokens were fed in the step or
 * none is left; a prompt's last chunk draws its first token. A long
 * prompt so delays the running samples by one chunk a step, not by its
 * whole length. With inf->rowwise the step is one call: the chunks'
 * rows and the running samples' (rows independent of their number), so
 * the weights are read once a step.
 */
struct gen {
	struct gpt_infer *inf;
	struct gen_opts o;
	gen_token_fn *fn;
	void *arg;
	struct gen_seq **slot;	/* (S) running samples, NULL when free */
	int running;
	float *logits;		/* (N,V) host */
	int32_t *ids, *seq;	/* (S) */
	int32_t *cseq;		/* (chunk) */
	uint64_t nstarted;
	struct gen_pick_buf pick;
};

/* inf needs N and NL >= S rows per step. */
void gen_init(struct gen *g, struct gpt_infer *inf, const struct gen_opts *o,
    gen_token_fn *fn, void *arg);
void gen_free(struct gen *g);
/* Whether a slot is free for gen_start. */
int gen_has_room(const struct gen *g);
/*
 * Start sample s on prompt (n tokens, 1 <= n < the context, at most the
 * rows of a step unless chunked): feeds it and draws the first token (fn
 * is called), or with o->chunk only takes a slot for gen_step to feed
 * it (prompt must then live until s ends). 0, or -1 with err when the
 * prompt does not fit (XDATA).
 */
int gen_start(struct gen *g, struct gen_seq *s, const int32_t *prompt, int n,
    char *err, size_t errsize, int *code);
/* One token for every running sample. Returns the number still running. */
int gen_step(struct gen *g);
/* End sample s now (GEN_STOPPED), as if it had reached its end. */
void gen_stop(struct gen *g, struct gen_seq *s);

/*
 * The mean negative log-likelihood of tok (n tokens; the caller appends
 * EOD): each token after the first predicted from the ones before it. A
 * sequence longer than T tokens (at most the model's positions) is scored
 * in windows of T tokens starting stride tokens apart (1 <= stride <=
 * T - 1): each token
 * is predicted once, in the first window that holds it past its first
 * position, so with at least T - stride tokens of context after the
 * first window. *nll gets the sum of the losses and *count their number
 * (n - 1). The infer state needs slot 0 and T rows per step.
 */
void gen_score(struct gpt_infer *g, const int32_t *tok, int n, int T,
    int stride, double *nll, int *count);

#endif
