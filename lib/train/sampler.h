/* sampler.h - Megatron's GPT sample order: split, epochs, document, sample and shuffle indices, blending */
#ifndef OWT_SAMPLER_H
#define OWT_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

/*
 * Megatron-LM (megatron/data in v2.5, megatron/core/datasets since;
 * notes/megatron-compat.md §3) builds the training order with numpy's
 * RandomState(seed) (mt19937.h). This file does the same in C, so a run
 * sees the samples in exactly the order Megatron would. The test vectors
 * (t/data/megatron-order.txt) come from contrib/oracle/megatron-order.py, which
 * redoes Megatron's Python in numpy.
 */

/*
 * --split-rounding: whose arithmetic splits the datasets and sizes the
 * blends, Megatron-LM v2.5's (megatron/data, SAMPLER_LEGACY) or
 * Megatron-core's (megatron/core/datasets, SAMPLER_CORE). Everything else
 * here is the same in both.
 */
enum { SAMPLER_LEGACY, SAMPLER_CORE };
/* "legacy" or "core" as SAMPLER_*; -1 for anything else. */
int sampler_rounding(const char *s);

/*
 * --split "969, 30, 1": three weights, normalised to sum to 1.
 * Core takes the numbers in s (re.findall("[.0-9]+")), at most three,
 * padded with 0. v2.5 cuts s at every ',' (else at every '/'), reads each
 * piece as a number, pads with 0 and keeps the first three. 0, or -1
 * when s is not that or its weights sum to 0.
 */
int sampler_split_parse(const char *s, int rounding, double w[3]);
/*
 * The ranges of n sequences: split i is [begin[i], end[i]), both 0 when it
 * is empty. Core rounds the cumulative weights, rint(c_i * n) (half to
 * even); v2.5 rounds each part's size, rint(w_i * n), then shifts every
 * boundary but the first by what the last exceeds n. 0, or -1 when v2.5's
 * shift puts a non-empty range below sequence 0, which v2.5 fails on.
 */
int sampler_split_ranges(const double w[3], int rounding, uint64_t n,
    uint64_t begin[3], uint64_t end[3]);

/* The length of sequence seq of a dataset. */
typedef uint32_t seqlen_fn(void *arg, uint64_t seq);
/* n token ids of sequence seq from token off. */
typedef void seqread_fn(void *arg, uint64_t seq, uint64_t off, size_t n,
    uint32_t *out);

/* One split of one dataset, in Megatron's order. */
struct sampler_index {
	int L;			/* sequence length: a sample is L+1 tokens */
	uint64_t nsamples;	/* samples available (at least those asked for) */
	uint32_t *doc;		/* doc_idx: sequence ids, epoch after epoch, shuffled */
	uint64_t ndoc;
	uint64_t *pos;		/* sample_idx: (nsamples+1) positions in doc */
	uint32_t *off;		/* and token offsets in those sequences */
	uint64_t *shuffle;	/* shuffle_idx (nsamples) */
	int epochs;
	int separate_last;	/* the last epoch was shuffled on its own */
};

/*
 * The index of sequences [begin, end) for num_samples samples of L+1
 * tokens, seeded with seed; num_samples 0 asks for one epoch, as
 * Megatron-core's num_samples None. 0, or -1 with err and *code XDATA (the
 * split has no tokens, or too few for its samples: more than 2^32
 * document entries).
 */
int sampler_index_build(struct sampler_index *x, seqlen_fn *len, void *arg,
    uint64_t begin, uint64_t end, uint64_t num_samples, int L, uint32_t seed,
    char *err, size_t errsize, int *code);
/* Sample i < nsamples: L+1 token ids into out. */
void sampler_index_sample(const struct sampler_index *x, uint64_t i,
    seqlen_fn *len, seqread_fn *read, void *arg, uint32_t *out);
void sampler_index_free(struct sampler_index *x);

/*
 * Blending (--data-path 0.7 A 0.3 B). sampler_normalize divides the n
 * weights by their sum, numpy's np.sum (pairwise, 8 accumulators) with
 * numpy set, else Python's left-to-right sum; -1 when it is not above 0
 * or not finite.
 * sampler_blend_need is the samples a dataset of normalised weight w is
 * asked for in a blend of total: v2.5's ceil(total * w * 1.005), core's
 * ceil(ceil(total * w) * 1.005). sampler_blend_build is the blend: sample
 * i is sample sidx[i] of dataset didx[i], picked greedily by the largest
 * w[d] * max(i, 1) - used[d], the first on a tie.
 */
int sampler_normalize(double *w, int n, int numpy);
uint64_t sampler_blend_need(double w, uint64_t total, int rounding);
void sampler_blend_build(const double *w, int n, uint64_t total, uint16_t *didx,
    uint64_t *sidx);

#endif
