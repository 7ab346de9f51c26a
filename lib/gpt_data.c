/* gpt_data.c - gpt-train's data: Megatron indexed datasets, split, blended and in Megatron's order, or mock data */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpt_data.h"
#include "mmidx.h"
#include "util.h"

static const char *const split_name[3] = { "train", "valid", "test" };

int
gpt_data_mock_get(void *arg, uint64_t i, uint32_t *tokens, char *err,
    size_t errsize, int *code)
{
	const struct gpt_data_mock *d = arg;
	uint64_t start = owt_mix64(d->seed ^ owt_mix64(i * 4 + (uint64_t)d->split));
	int t;

	for (t = 0; t <= d->T; t++)
		tokens[t] = (uint32_t)((start + (uint64_t)t) % d->vocab);
	return 0;
}

static int
open_mock(struct gpt_data *d, uint32_t seed, int L, uint32_t vocab,
    const uint64_t need[3])
{
	int s;

	for (s = 0; s < 3; s++) {
		d->mock[s] = (struct gpt_data_mock){ seed, s, L, vocab };
		d->src[s] = (struct sample_src){ gpt_data_mock_get,
		    &d->mock[s] };
		d->have[s] = 1;
	}
	snprintf(d->desc, sizeof d->desc, "data: mock counting sequences; "
	    "%llu train, %llu valid, %llu test samples of %d tokens",
	    (unsigned long long)need[0], (unsigned long long)need[1],
	    (unsigned long long)need[2], L + 1);
	return 0;
}

struct gpt_data_set {
	const char *prefix;
	struct mmidx idx;
	int open;
	struct sampler_index split[3];
	int have[3];
	uint64_t begin[3], end[3];
	uint32_t vocab;
};

static uint32_t
seq_len(void *arg, uint64_t seq)
{
	return mmidx_len(arg, seq);
}

static void
seq_read(void *arg, uint64_t seq, uint64_t off, size_t n, uint32_t *out)
{
	mmidx_read(arg, seq, off, n, out);
}

/* Sample i of split s of dataset ds, its token ids checked. */
static int
ds_sample(struct gpt_data_set *ds, int s, uint64_t i, uint32_t *tokens,
    char *err, size_t errsize, int *code)
{
	const struct sampler_index *x = &ds->split[s];
	int t;

	if (i >= x->nsamples) {
		snprintf(err, errsize, "%s: %s sample %llu is beyond the %llu "
		    "indexed", ds->prefix, split_name[s], (unsigned long long)i,
		    (unsigned long long)x->nsamples);
		*code = XSYS;
		return -1;
	}
	sampler_index_sample(x, i, seq_len, seq_read, &ds->idx, tokens);
	for (t = 0; t <= x->L; t++)
		if (tokens[t] >= ds->vocab) {
			snprintf(err, errsize, "%s.bin: token id %u is not below "
			    "the vocabulary size %u (--vocab-size)", ds->prefix,
			    tokens[t], ds->vocab);
			*code = XDATA;
			return -1;
		}
	return 0;
}

static int
blend_get(void *arg, uint64_t i, uint32_t *tokens, char *err, size_t errsize,
    int *code)
{
	const struct gpt_data_blend *b = arg;
	struct gpt_data *d = b->d;

	if (d->nds == 1)
		return ds_sample(&d->ds[0], b->split, i, tokens, err, errsize,
		    code);
	if (i >= b->n) {
		snprintf(err, errsize, "%s sample %llu is beyond the %llu "
		    "blended", split_name[b->split], (unsigned long long)i,
		    (unsigned long long)b->n);
		*code = XSYS;
		return -1;
	}
	return ds_sample(&d->ds[b->didx[i]], b->split, b->sidx[i], tokens, err,
	    errsize, code);
}

/* The --data-path words: prefixes, or weight prefix pairs. */
static int
parse_paths(struct gpt_data *d, char **args, int nargs, char *err,
    size_t errsize, int *code)
{
	char *end;
	int i, weighted;

	errno = 0;
	strtod(args[0], &end);
	weighted = nargs > 1 && *end == '\0' && end != args[0];
	if (weighted && nargs % 2 != 0) {
		snprintf(err, errsize, "--data-path: weights and prefixes must "
		    "pair up ('%s' has no prefix)", args[nargs - 1]);
		*code = XUSAGE;
		return -1;
	}
	d->nds = weighted ? nargs / 2 : nargs;
	if (d->nds > 65535) {
		snprintf(err, errsize, "--data-path: too many datasets");
		*code = XUSAGE;
		return -1;
	}
	d->ds = xcalloc((size_t)d->nds, sizeof *d->ds);
	d->w = xcalloc((size_t)d->nds, sizeof *d->w);
	for (i = 0; i < d->nds; i++) {
		d->ds[i].prefix = weighted ? args[2 * i + 1] : args[i];
		if (!weighted)
			continue;
		d->w[i] = strtod(args[2 * i], &end);
		if (*end != '\0' || end == args[2 * i] || !(d->w[i] > 0) ||
		    !isfinite(d->w[i])) {
			snprintf(err, errsize, "--data-path: '%s' is not a "
			    "positive weight", args[2 * i]);
			*code = XUSAGE;
			return -1;
		}
	}
	return 0;
}

static int
open_datasets(struct gpt_data *d, char **args, int nargs, const char *split,
    uint32_t seed, int L, uint32_t vocab, const uint64_t need[3], char *err,
    size_t errsize, int *code)
{
	char why[256];
	double sw[3], sum = 0;
	size_t n;
	int i, s;

	if (parse_paths(d, args, nargs, err, errsize, code) < 0)
		return -1;
	if (sampler_split_parse(split, sw) < 0) {
		snprintf(err, errsize, "--split: '%s' has no weights", split);
		*code = XUSAGE;
		return -1;
	}
	for (i = 0; i < d->nds; i++) {
		struct gpt_data_set *ds = &d->ds[i];

		if (mmidx_open(&ds->idx, ds->prefix, err, errsize, code) < 0)
			return -1;
		ds->open = 1;
		ds->vocab = vocab;
		if (nargs == d->nds)	/* no weights: by tokens */
			d->w[i] = (double)ds->idx.ntokens;
		sampler_split_ranges(sw, ds->idx.nseq, ds->begin, ds->end);
		sum += d->w[i];
	}
	if (!(sum > 0)) {
		snprintf(err, errsize, "%s: no tokens", d->ds[0].prefix);
		*code = XDATA;
		return -1;
	}
	for (i = 0; i < d->nds; i++)
		d->w[i] /= sum;
	n = (size_t)snprintf(d->desc, sizeof d->desc, "data:");
	for (i = 0; i < d->nds; i++)
		n += (size_t)snprintf(d->desc + n, sizeof d->desc - n > n ?
		    sizeof d->desc - n : 0, "%s %s (%.3g, %llu sequences, %llu "
		    "tokens)", i ? "," : "", d->ds[i].prefix, d->w[i],
		    (unsigned long long)d->ds[i].idx.nseq,
		    (unsigned long long)d->ds[i].idx.ntokens);
	for (s = 0; s < 3; s++) {
		int have = 0;

		for (i = 0; i < d->nds; i++)
			have += d->ds[i].end[s] > d->ds[i].begin[s];
		if (need[s] == 0 || have == 0) {
			if (s == 0) {
				snprintf(err, errsize, "%s: the train split of "
				    "--split '%s' is empty", d->ds[0].prefix,
				    split);
				*code = XDATA;
				return -1;
			}
			continue;
		}
		for (i = 0; i < d->nds; i++) {
			struct gpt_data_set *ds = &d->ds[i];
			uint64_t want = d->nds == 1 ? need[s] :
			    sampler_blend_need(d->w[i], need[s]);

			if (sampler_index_build(&ds->split[s], seq_len,
			    &ds->idx, ds->begin[s], ds->end[s], want, L, seed,
			    why, sizeof why) < 0) {
				snprintf(err, errsize, "%s: %s split (sequences "
				    "%llu..%llu): %s", ds->prefix, split_name[s],
				    (unsigned long long)ds->begin[s],
				    (unsigned long long)ds->end[s], why);
				*code = XDATA;
				return -1;
			}
			ds->have[s] = 1;
		}
		d->have[s] = 1;
		d->blend[s] = (struct gpt_data_blend){ need[s], NULL, NULL, d,
		    s };
		if (d->nds > 1) {
			d->blend[s].didx = xmalloc(need[s] * sizeof *d->blend[s].didx);
			d->blend[s].sidx = xmalloc(need[s] * sizeof *d->blend[s].sidx);
			sampler_blend_build(d->w, d->nds, need[s],
			    d->blend[s].didx, d->blend[s].sidx);
		}
		d->src[s] = (struct sample_src){ blend_get, &d->blend[s] };
		n += (size_t)snprintf(d->desc + n, sizeof d->desc - n > n ?
		    sizeof d->desc - n : 0, "; %s %llu samples of %d tokens, "
		    "%d epoch%s", split_name[s], (unsigned long long)need[s],
		    L + 1, d->ds[0].split[s].epochs,
		    d->ds[0].split[s].epochs == 1 ? "" : "s");
	}
	return 0;
}

int
gpt_data_open(struct gpt_data *d, char **args, int nargs, const char *split,
    uint32_t seed, int L, uint32_t vocab, uint64_t ntrain, uint64_t nvalid,
    uint64_t ntest, char *err, size_t errsize, int *code)
{
	const uint64_t need[3] = { ntrain, nvalid, ntest };

	memset(d, 0, sizeof *d);
	if (args == NULL)
		return open_mock(d, seed, L, vocab, need);
	if (open_datasets(d, args, nargs, split, seed, L, vocab, need, err,
	    errsize, code) == 0)
		return 0;
	gpt_data_close(d);
	return -1;
}

void
gpt_data_close(struct gpt_data *d)
{
	int i, s;

	for (i = 0; i < d->nds; i++) {
		for (s = 0; s < 3; s++)
			sampler_index_free(&d->ds[i].split[s]);
		if (d->ds[i].open)
			mmidx_close(&d->ds[i].idx);
	}
	for (s = 0; s < 3; s++) {
		free(d->blend[s].didx);
		free(d->blend[s].sidx);
	}
	free(d->ds);
	free(d->w);
	memset(d, 0, sizeof *d);
}
