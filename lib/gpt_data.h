/* gpt_data.h - gpt-train's data: Megatron indexed datasets, split, blended and in Megatron's order, or mock data */
#ifndef OWT_GPT_DATA_H
#define OWT_GPT_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "sampler.h"
#include "train.h"

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
	char desc[1024];		/* what was opened, for the log */
	/* private */
	struct gpt_data_mock mock[3];
	struct gpt_data_set *ds;
	int nds;
	double *w;			/* blending weights */
	struct gpt_data_blend {
		uint64_t n;
		uint16_t *didx;
		uint64_t *sidx;
		struct gpt_data *d;
		int split;
	} blend[3];
};

/*
 * Open the datasets of --data-path (args: "PREFIX", or "W1 P1 W2 P2 ...",
 * or several prefixes weighted by their tokens), split them by split
 * ("969, 30, 1"), and build each split's order for ntrain, nvalid and
 * ntest samples of L+1 tokens, as Megatron does with seed. Token ids must
 * be below vocab. With args NULL, mock data (struct gpt_data_mock). 0, or -1
 * with err ("PREFIX.idx: what") and *code XDATA, XSYS or XUSAGE.
 */
int gpt_data_open(struct gpt_data *d, char **args, int nargs, const char *split,
    uint32_t seed, int L, uint32_t vocab, uint64_t ntrain, uint64_t nvalid,
    uint64_t ntest, char *err, size_t errsize, int *code);
void gpt_data_close(struct gpt_data *d);

#endif
