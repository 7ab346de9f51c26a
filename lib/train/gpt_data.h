/* gpt_data.h - gpt-train's data: Megatron indexed datasets, split, blended and in Megatron's order, or mock data */
#ifndef OWT_GPT_DATA_H
#define OWT_GPT_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "train/sampler.h"
#include "train/train.h"

/*
 * --mock-data: sample i of split s is T+1 consecutive ids counting up from
 * a seeded start, modulo the vocabulary, so a model can learn it. Not
 * Megatron's mock dataset.
 */
struct gpt_data_mock {
	uint64_t seed;
	int split;		/* 0 train, 1 valid, 2 test */
	int T;
	uint32_t vocab;
};
int gpt_data_mock_get(void *arg, uint64_t i, uint32_t *tokens, char *err,
    size_t errsize, int *code);

struct gpt_data_set;

struct gpt_data {
	struct sample_src src[3];	/* train, valid, test */
	int have[3];			/* the split has samples */
	char desc[4096];		/* what was opened, for the log */
	/* private */
	struct gpt_data_mock mock[3];
	struct gpt_data_set *ds;
	int nds;
	int weighted;			/* --data-path gave weights */
	int rounding;			/* SAMPLER_LEGACY or SAMPLER_CORE */
	double *w;			/* the weights, normalised */
	struct gpt_data_blend {
		uint64_t n;
		uint16_t *didx;
		uint64_t *sidx;
		struct gpt_data *d;
		int split;
	} blend[3];
};

/*
 * Open the datasets of --data-path (args: "PREFIX", "W1 P1 W2 P2 ...", or
 * "P1 P2 ..."), split them by split ("969, 30, 1") with rounding ("legacy"
 * or "core", sampler.h), and build each split's order for ntrain, nvalid
 * and ntest samples of L+1 tokens, as Megatron does with seed:
 *  - one prefix without a weight: exactly the samples asked for;
 *  - weights (one prefix or more): each dataset asked for its share and
 *    0.5% more (sampler_blend_need), blended by the weights, normalised
 *    once v2.5's way (Python's sum) or core's (numpy's) and once more
 *    with numpy's for the interleave;
 *  - several prefixes without weights (core's rule; v2.5 refuses them):
 *    one epoch of each dataset's split, blended by their samples, which
 *    must hold the samples asked for.
 * Token ids must be below vocab. With args NULL, mock data (struct
 * gpt_data_mock). 0, or -1 with err ("PREFIX.idx: what") and *code XDATA,
 * XSYS or XUSAGE.
 */
int gpt_data_open(struct gpt_data *d, char **args, int nargs, const char *split,
    const char *rounding, uint32_t seed, int L, uint32_t vocab,
    uint64_t ntrain, uint64_t nvalid, uint64_t ntest, char *err,
    size_t errsize, int *code);
void gpt_data_close(struct gpt_data *d);

#endif
