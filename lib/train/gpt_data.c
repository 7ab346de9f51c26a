/* gpt_data.c - gpt-train's data: Megatron indexed datasets, split, blended and in Megatron's order, or mock data */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/gpt_data.h"
#include "tok/mmidx.h"
#include "core/util.h"

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

	if (i >= x->nsamples)
		return owt_fail(err, errsize, code, XSYS,
		    "%s: %s sample %llu is beyond the %llu indexed", ds->prefix,
		    split_name[s], (unsigned long long)i,
		    (unsigned long long)x->nsamples);
	sampler_index_sample(x, i, seq_len, seq_read, &ds->idx, tokens);
	for (t = 0; t <= x->L; t++)
		if (tokens[t] >= ds->vocab)
			return owt_fail(err, errsize, code, XDATA, "%s.bin: "
			    "token id %u is not below the vocabulary size %u "
			    "(--vocab-size)", ds->prefix, tokens[t], ds->vocab);
	return 0;
}

static int
blend_get(void *arg, uint64_t i, uint32_t *tokens, char *err, size_t errsize,
    int *code)
{
	const struct gpt_data_blend *b = arg;
	struct gpt_data *d = b->d;

	/* one dataset: the blend is the identity */
	if (d->nds == 1)
		return ds_sample(&d->ds[0], b->split, i, tokens, err, errsize,
		    code);
	if (i >= b->n)
		return owt_fail(err, errsize, code, XSYS,
		    "%s sample %llu is beyond the %llu blended",
		    split_name[b->split], (unsigned long long)i,
		    (unsigned long long)b->n);
	return ds_sample(&d->ds[b->didx[i]], b->split, b->sidx[i], tokens, err,
	    errsize, code);
}

/* The --data-path words: prefixes, or weight prefix pairs. */
static int
parse_paths(struct gpt_data *d, char **args, int nargs, char *err,
    size_t errsize, int *code)
{
	char *end;
	int i;

	errno = 0;
	strtod(args[0], &end);
	d->weighted = nargs > 1 && *end == '\0' && end != args[0];
	if (d->weighted && nargs % 2 != 0)
		return owt_fail(err, errsize, code, XUSAGE, "--data-path: "
		    "weights and prefixes must pair up ('%s' has no prefix)",
		    args[nargs - 1]);
	d->nds = d->weighted ? nargs / 2 : nargs;
	if (d->nds > 65535)
		return owt_fail(err, errsize, code, XUSAGE,
		    "--data-path: too many datasets");
	d->ds = xcalloc((size_t)d->nds, sizeof *d->ds);
	d->w = xcalloc((size_t)d->nds, sizeof *d->w);
	for (i = 0; i < d->nds; i++) {
		d->ds[i].prefix = d->weighted ? args[2 * i + 1] : args[i];
		if (!d->weighted)
			continue;
		d->w[i] = strtod(args[2 * i], &end);
		if (*end != '\0' || end == args[2 * i] || !(d->w[i] > 0) ||
		    !isfinite(d->w[i]))
			return owt_fail(err, errsize, code, XUSAGE,
			    "--data-path: '%s' is not a positive weight",
			    args[2 * i]);
	}
	/* v2.5 divides by Python's sum, core by numpy's */
	if (d->weighted && sampler_normalize(d->w, d->nds,
	    d->rounding == SAMPLER_CORE) < 0)
		return owt_fail(err, errsize, code, XUSAGE,
		    "--data-path: the weights sum to infinity");
	return 0;
}

/* Append to the description of the data. */
static void OWT_PRINTF(2, 3)
desc_add(struct gpt_data *d, const char *fmt, ...)
{
	size_t n = strlen(d->desc);
	va_list ap;

	if (n + 1 >= sizeof d->desc)
		return;
	va_start(ap, fmt);
	vsnprintf(d->desc + n, sizeof d->desc - n, fmt, ap);
	va_end(ap);
}

/* Split s of each dataset for need samples, and their blend. */
static int
open_split(struct gpt_data *d, int s, const char *split, uint32_t seed,
    int L, uint64_t need, char *err, size_t errsize, int *code)
{
	struct gpt_data_blend *b = &d->blend[s];
	uint64_t want, total = 0;
	char why[256];
	double *bw;
	int i;

	for (i = 0; i < d->nds; i++) {
		struct gpt_data_set *ds = &d->ds[i];

		if (ds->end[s] <= ds->begin[s])
			return owt_fail(err, errsize, code, XDATA,
			    "%s: the %s split of --split '%s' is empty",
			    ds->prefix, split_name[s], split);
		/* unweighted blends take one epoch of each (0) */
		want = d->weighted ? sampler_blend_need(d->w[i], need,
		    d->rounding) : d->nds == 1 ? need : 0;
		if (sampler_index_build(&ds->split[s], seq_len, &ds->idx,
		    ds->begin[s], ds->end[s], want, L, seed, why,
		    sizeof why, code) < 0)
			return owt_fail(err, errsize, code, XDATA,
			    "%s: %s split [%llu, %llu): %s", ds->prefix,
			    split_name[s], (unsigned long long)ds->begin[s],
			    (unsigned long long)ds->end[s], why);
		ds->have[s] = 1;
		total += ds->split[s].nsamples;
	}
	if (!d->weighted && d->nds > 1 && need > total)
		return owt_fail(err, errsize, code, XDATA, "--data-path: one "
		    "epoch of the unweighted blend holds %llu %s samples, the "
		    "run needs %llu; give weights", (unsigned long long)total,
		    split_name[s], (unsigned long long)need);
	*b = (struct gpt_data_blend){ need, NULL, NULL, d, s };
	if (d->nds > 1) {
		/* normalised (again) with numpy's sum, as the blend does */
		bw = xmalloc((size_t)d->nds * sizeof *bw);
		for (i = 0; i < d->nds; i++)
			bw[i] = d->weighted ? d->w[i] :
			    (double)d->ds[i].split[s].nsamples;
		sampler_normalize(bw, d->nds, 1);
		b->didx = xmalloc(need * sizeof *b->didx);
		b->sidx = xmalloc(need * sizeof *b->sidx);
		sampler_blend_build(bw, d->nds, need, b->didx, b->sidx);
		free(bw);
	}
	d->have[s] = 1;
	d->src[s] = (struct sample_src){ blend_get, b };
	desc_add(d, "; %s %llu samples of %d tokens", split_name[s],
	    (unsigned long long)need, L + 1);
	if (d->nds == 1 && !d->weighted) {
		desc_add(d, ", %d epoch%s", d->ds[0].split[s].epochs,
		    d->ds[0].split[s].epochs == 1 ? "" : "s");
		return 0;
	}
	for (i = 0; i < d->nds; i++) {
		const struct sampler_index *x = &d->ds[i].split[s];

		if (d->weighted)
			desc_add(d, "%s%s %d epoch%s", i ? ", " : " (",
			    d->ds[i].prefix, x->epochs, x->epochs == 1 ? "" :
			    "s");
		else
			desc_add(d, "%s%s %llu", i ? ", " : " (",
			    d->ds[i].prefix, (unsigned long long)x->nsamples);
	}
	desc_add(d, "%s)", d->weighted ? "" : ": one epoch of each");
	return 0;
}

static int
open_datasets(struct gpt_data *d, char **args, int nargs, const char *split,
    const char *rounding, uint32_t seed, int L, uint32_t vocab,
    const uint64_t need[3], char *err, size_t errsize, int *code)
{
	double sw[3];
	int i, s;

	if ((d->rounding = sampler_rounding(rounding)) < 0)
		return owt_fail(err, errsize, code, XUSAGE,
		    "--split-rounding: '%s' is not legacy or core", rounding);
	if (parse_paths(d, args, nargs, err, errsize, code) < 0)
		return -1;
	if (sampler_split_parse(split, d->rounding, sw) < 0) {
		if (d->rounding == SAMPLER_LEGACY)
			return owt_fail(err, errsize, code, XUSAGE,
			    "--split: '%s' is not numbers separated by ',' or "
			    "'/', not all 0, as Megatron v2.5 reads it", split);
		return owt_fail(err, errsize, code, XUSAGE,
		    "--split: '%s' has no weights", split);
	}
	snprintf(d->desc, sizeof d->desc, "data:");
	for (i = 0; i < d->nds; i++) {
		struct gpt_data_set *ds = &d->ds[i];

		if (mmidx_open(&ds->idx, ds->prefix, err, errsize, code) < 0)
			return -1;
		ds->open = 1;
		ds->vocab = vocab;
		if (sampler_split_ranges(sw, d->rounding, ds->idx.nseq,
		    ds->begin, ds->end) < 0)
			return owt_fail(err, errsize, code, XDATA, "%s: "
			    "--split '%s' of %llu sequences puts a range below "
			    "sequence 0 with v2.5's rounding (Megatron v2.5 "
			    "fails on it)", ds->prefix, split,
			    (unsigned long long)ds->idx.nseq);
		desc_add(d, "%s %s (", i ? "," : "", ds->prefix);
		if (d->weighted)
			desc_add(d, "%.3g, ", d->w[i]);
		desc_add(d, "%llu sequences, %llu tokens:",
		    (unsigned long long)ds->idx.nseq,
		    (unsigned long long)ds->idx.ntokens);
		for (s = 0; s < 3; s++)
			if (ds->end[s] > ds->begin[s])
				desc_add(d, "%s %s [%llu, %llu)", s ? "," : "",
				    split_name[s],
				    (unsigned long long)ds->begin[s],
				    (unsigned long long)ds->end[s]);
			else
				desc_add(d, "%s %s none", s ? "," : "",
				    split_name[s]);
		desc_add(d, ")");
	}
	desc_add(d, "; --split-rounding %s", rounding);
	for (s = 0; s < 3; s++) {
		int have = 0;

		for (i = 0; i < d->nds; i++)
			have += d->ds[i].end[s] > d->ds[i].begin[s];
		if (need[s] == 0 || have == 0) {
			if (s == 0)
				return owt_fail(err, errsize, code, XDATA,
				    "%s: the train split of --split '%s' is "
				    "empty", d->ds[0].prefix, split);
			continue;
		}
		if (open_split(d, s, split, seed, L, need[s], err, errsize,
		    code) < 0)
			return -1;
	}
	return 0;
}

int
gpt_data_open(struct gpt_data *d, char **args, int nargs, const char *split,
    const char *rounding, uint32_t seed, int L, uint32_t vocab,
    uint64_t ntrain, uint64_t nvalid, uint64_t ntest, char *err,
    size_t errsize, int *code)
{
	const uint64_t need[3] = { ntrain, nvalid, ntest };

	memset(d, 0, sizeof *d);
	if (args == NULL)
		return open_mock(d, seed, L, vocab, need);
	if (open_datasets(d, args, nargs, split, rounding, seed, L, vocab, need,
	    err, errsize, code) == 0)
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
