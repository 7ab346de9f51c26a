/* sampler.h - Megatron's GPT sample order: split, epochs, document, sample and shuffle indices, blending */
#ifndef OWT_SAMPLER_H
#define OWT_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

/*
 * Megatron-LM (megatron/core/datasets, notes/megatron-compat.md §3)
 * builds the training order with numpy's RandomState(seed) (mt19937.h).
 * This file does the same in C, so a run sees the samples in exactly the
 * order Megatron would.
 */

/*
 * --split "969, 30, 1": the numbers in s, padded with 0 to three and
 * normalised. 0, or -1 when s has none or they sum to 0.
 */
int sampler_split_parse(const char *s, double w[3]);
/*
 * Megatron-core's ranges of n sequences: split i is [begin[i], end[i]),
 * rounding half to even, empty where its weight is 0.
 */
void sampler_split_ranges(const double w[3], uint64_t n, uint64_t begin[3],
    uint64_t end[3]);

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
 * tokens, seeded with seed. 0, or -1 with err (the split is empty or too
 * small for its samples: more than 2^32 document entries).
 */
int sampler_index_build(struct sampler_index *x, seqlen_fn *len, void *arg,
    uint64_t begin, uint64_t end, uint64_t num_samples, int L, uint32_t seed,
    char *err, size_t errsize);
/* Sample i < nsamples: L+1 token ids into out. */
void sampler_index_sample(const struct sampler_index *x, uint64_t i,
    seqlen_fn *len, seqread_fn *read, void *arg, uint32_t *out);
void sampler_index_free(struct sampler_index *x);

/*
 * Blending (--data-path 0.7 A 0.3 B): the samples each dataset must
 * provide for a blend of total samples, ceil(total * w * 1.005), and the
 * blend itself: sample i is sample sidx[i] of dataset didx[i], picked
 * greedily by the largest w[d] * max(i, 1) - used[d].
 */
uint64_t sampler_blend_need(double w, uint64_t total);
void sampler_blend_build(const double *w, int n, uint64_t total, uint16_t *didx,
    uint64_t *sidx);

#endif
