/* gptdata.c - gpt-train's data: Megatron indexed datasets, split, blended and in Megatron's order, or mock data */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gptdata.h"
#include "util.h"

static const char *const split_name[3] = { "train", "valid", "test" };

static int
open_mock(struct gpt_data *d, uint32_t seed, int L, uint32_t vocab,
    const uint64_t need[3])
{
	int s;

	for (s = 0; s < 3; s++) {
		d->mock[s] = (struct mock_data){ seed, s, L, vocab };
		d->src[s] = (struct sample_src){ mock_get, &d->mock[s] };
		d->have[s] = 1;
	}
	snprintf(d->desc, sizeof d->desc, "data: mock counting sequences; "
	    "%llu train, %llu valid, %llu test samples of %d tokens",
	    (unsigned long long)need[0], (unsigned long long)need[1],
	    (unsigned long long)need[2], L + 1);
	return 0;
}

int
gpt_data_open(struct gpt_data *d, char **args, int nargs, const char *split,
    uint32_t seed, int L, uint32_t vocab, uint64_t ntrain, uint64_t nvalid,
    uint64_t ntest, char *err, size_t errsize, int *code)
{
	const uint64_t need[3] = { ntrain, nvalid, ntest };

	memset(d, 0, sizeof *d);
	(void)split_name;
	if (args == NULL)
		return open_mock(d, seed, L, vocab, need);
	snprintf(err, errsize, "--data-path: reading datasets needs idx-pack's "
	    "reader, which is not merged yet");
	*code = XUSAGE;
	return -1;
}

void
gpt_data_close(struct gpt_data *d)
{
	memset(d, 0, sizeof *d);
}
