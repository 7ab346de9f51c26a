/* sampler.c - Megatron's GPT sample order: split, epochs, document, sample and shuffle indices, blending */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/mt19937.h"
#include "train/sampler.h"
#include "core/util.h"

int
sampler_rounding(const char *s)
{
	if (strcmp(s, "legacy") == 0)
		return SAMPLER_LEGACY;
	if (strcmp(s, "core") == 0)
		return SAMPLER_CORE;
	return -1;
}

/* core: every run of digits and dots, as re.findall("[.0-9]+") */
static int
split_numbers_core(const char *s, double w[3])
{
	int n = 0;
	char *end;

	while (*s) {
		if ((*s >= '0' && *s <= '9') || *s == '.') {
			if (n == 3)
				return -1;
			w[n++] = strtod(s, &end);
			if (end == s)
				return -1;
			while ((*s >= '0' && *s <= '9') || *s == '.')
				s++;
		} else {
			s++;
		}
	}
	return n > 0 ? 0 : -1;
}

/*
 * v2.5: s.split(',') (else '/'), float() of each piece, the first three
 * kept. float() takes what strtod takes in decimal, spaces around; a
 * weight below 0, or not finite, is refused here (v2.5 would go wrong).
 */
static int
split_numbers_legacy(const char *s, double w[3])
{
	char sep = strchr(s, ',') ? ',' : strchr(s, '/') ? '/' : '\0';
	const char *p = s, *q;
	char piece[64], *end;
	size_t len;
	double v;
	int n = 0;

	for (;;) {
		q = sep ? strchr(p, sep) : NULL;
		len = q ? (size_t)(q - p) : strlen(p);
		if (len >= sizeof piece)
			return -1;
		memcpy(piece, p, len);
		piece[len] = '\0';
		if (strpbrk(piece, "xX") != NULL)	/* strtod reads hex, float() not */
			return -1;
		v = strtod(piece, &end);
		while (*end == ' ' || (*end >= '\t' && *end <= '\r'))
			end++;
		if (end == piece || *end != '\0' || !(v >= 0) || !isfinite(v))
			return -1;
		if (n < 3)
			w[n] = v;
		n++;
		if (q == NULL)
			break;
		p = q + 1;
	}
	return 0;
}

int
sampler_split_parse(const char *s, int rounding, double w[3])
{
	double sum = 0;
	int i;

	w[0] = w[1] = w[2] = 0;
	if ((rounding == SAMPLER_LEGACY ? split_numbers_legacy(s, w) :
	    split_numbers_core(s, w)) < 0)
		return -1;
	/* Python's sum, numpy's for core: the same for three */
	for (i = 0; i < 3; i++)
		sum += w[i];
	if (!(sum > 0) || !isfinite(sum))
		return -1;
	for (i = 0; i < 3; i++)
		w[i] /= sum;
	return 0;
}

int
sampler_split_ranges(const double w[3], int rounding, uint64_t n,
    uint64_t begin[3], uint64_t end[3])
{
	int64_t b[4], diff;
	double c[4] = { 0 };
	int i;

	if (rounding == SAMPLER_LEGACY) {
		b[0] = 0;
		for (i = 0; i < 3; i++)
			b[i + 1] = b[i] + (int64_t)rint(w[i] * (double)n);
		diff = b[3] - (int64_t)n;
		for (i = 1; i < 4; i++)
			b[i] -= diff;
	} else {
		for (i = 0; i < 3; i++)
			c[i + 1] = c[i] + w[i];
		for (i = 0; i < 4; i++)
			b[i] = (int64_t)rint(c[i] * (double)n);
	}
	for (i = 0; i < 3; i++) {
		begin[i] = end[i] = 0;
		if (b[i + 1] <= b[i] || (rounding == SAMPLER_CORE &&
		    c[i + 1] <= c[i]))
			continue;
		if (b[i] < 0)
			return -1;
		begin[i] = (uint64_t)b[i];
		end[i] = (uint64_t)b[i + 1];
	}
	return 0;
}

/* doc_idx: the sequences of [begin, end) epochs times, shuffled as one. */
static void
doc_epochs(uint32_t *doc, uint64_t begin, uint64_t end, int epochs,
    struct mt19937 *r)
{
	uint64_t n = end - begin, i;
	int e;

	for (e = 0; e < epochs; e++)
		for (i = 0; i < n; i++)
			doc[(uint64_t)e * n + i] = (uint32_t)(begin + i);
	mt19937_shuffle(r, doc, (size_t)n * epochs, sizeof *doc);
}

int
sampler_index_build(struct sampler_index *x, seqlen_fn *len, void *arg,
    uint64_t begin, uint64_t end, uint64_t num_samples, int L, uint32_t seed,
    char *err, size_t errsize, int *code)
{
	struct mt19937 r;
	uint64_t T = 0, seq, i, E, ns, p, off, A = 0, per_epoch, last;
	int64_t need;

	memset(x, 0, sizeof *x);
	x->L = L;
	for (seq = begin; seq < end; seq++)
		T += len(arg, seq);
	if (T <= 1)
		return owt_fail(err, errsize, code, XDATA, "no tokens");
	if (num_samples == 0 && (T - 1) / (uint64_t)L == 0)
		return owt_fail(err, errsize, code, XDATA,
		    "its %llu tokens hold no sample of %d",
		    (unsigned long long)T, L + 1);
	/* the fewest epochs E with (E * T - 1) / L >= num_samples */
	E = (num_samples * (uint64_t)L + 1 + T - 1) / T;
	if (E < 1)
		E = 1;
	if (E * (end - begin) > 0xffffffffu || E > 1000000)
		return owt_fail(err, errsize, code, XDATA, "%llu tokens are too "
		    "few for %llu samples of %d (%llu epochs)",
		    (unsigned long long)T, (unsigned long long)num_samples,
		    L + 1, (unsigned long long)E);
	x->epochs = (int)E;
	if (E > 1) {
		A = ((E - 1) * T - 1) / L;
		last = num_samples - A;
		per_epoch = (T - 1) / L;
		x->separate_last = last < (uint64_t)(0.80 * (double)per_epoch);
	}
	mt19937_seed(&r, seed);
	x->ndoc = E * (end - begin);
	x->doc = xmalloc(x->ndoc * sizeof *x->doc);
	if (x->separate_last) {
		doc_epochs(x->doc, begin, end, (int)E - 1, &r);
		doc_epochs(x->doc + (E - 1) * (end - begin), begin, end, 1, &r);
	} else {
		doc_epochs(x->doc, begin, end, (int)E, &r);
	}

	ns = (E * T - 1) / (uint64_t)L;
	x->nsamples = ns;
	x->pos = xmalloc((ns + 1) * sizeof *x->pos);
	x->off = xmalloc((ns + 1) * sizeof *x->off);
	x->pos[0] = x->off[0] = 0;
	p = off = 0;
	for (i = 1; i <= ns; i++) {
		need = L + 1;
		for (;;) {
			int64_t avail = (int64_t)len(arg, x->doc[p]) - (int64_t)off;

			need -= avail;
			if (need <= 0) {
				off += (uint64_t)(avail + need - 1);
				break;
			}
			if (++p >= x->ndoc)
				owt_fatal("sample index overrun (a bug)");
			off = 0;
		}
		x->pos[i] = p;
		x->off[i] = (uint32_t)off;
	}

	x->shuffle = xmalloc(ns * sizeof *x->shuffle);
	for (i = 0; i < ns; i++)
		x->shuffle[i] = i;
	if (x->separate_last) {
		mt19937_shuffle(&r, x->shuffle, A, sizeof *x->shuffle);
		mt19937_shuffle(&r, x->shuffle + A, ns - A, sizeof *x->shuffle);
	} else {
		mt19937_shuffle(&r, x->shuffle, ns, sizeof *x->shuffle);
	}
	return 0;
}

void
sampler_index_sample(const struct sampler_index *x, uint64_t i, seqlen_fn *len,
    seqread_fn *read, void *arg, uint32_t *out)
{
	uint64_t j = x->shuffle[i], p0 = x->pos[j], p1 = x->pos[j + 1], p;
	uint32_t o0 = x->off[j], o1 = x->off[j + 1], n;

	if (p0 == p1) {
		read(arg, x->doc[p0], o0, (size_t)(o1 - o0 + 1), out);
		return;
	}
	n = len(arg, x->doc[p0]) - o0;
	read(arg, x->doc[p0], o0, n, out);
	out += n;
	for (p = p0 + 1; p < p1; p++) {
		n = len(arg, x->doc[p]);
		read(arg, x->doc[p], 0, n, out);
		out += n;
	}
	read(arg, x->doc[p1], 0, (size_t)o1 + 1, out);
}

void
sampler_index_free(struct sampler_index *x)
{
	free(x->doc);
	free(x->pos);
	free(x->off);
	free(x->shuffle);
	memset(x, 0, sizeof *x);
}

/* numpy's pairwise_sum for float64, as np.sum adds a 1-d array from 0 */
static double
pairwise_sum(const double *a, size_t n)
{
	double r[8], res = 0;
	size_t i, j, n2;

	if (n < 8) {
		for (i = 0; i < n; i++)
			res += a[i];
		return res;
	}
	if (n <= 128) {
		for (j = 0; j < 8; j++)
			r[j] = a[j];
		for (i = 8; i < n - n % 8; i += 8)
			for (j = 0; j < 8; j++)
				r[j] += a[i + j];
		res = ((r[0] + r[1]) + (r[2] + r[3])) +
		    ((r[4] + r[5]) + (r[6] + r[7]));
		for (; i < n; i++)
			res += a[i];
		return res;
	}
	n2 = n / 2;
	n2 -= n2 % 8;
	return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

int
sampler_normalize(double *w, int n, int numpy)
{
	double sum = 0;
	int i;

	if (numpy)
		sum = pairwise_sum(w, (size_t)n);
	else
		for (i = 0; i < n; i++)
			sum += w[i];
	if (!(sum > 0) || !isfinite(sum))
		return -1;
	for (i = 0; i < n; i++)
		w[i] /= sum;
	return 0;
}

uint64_t
sampler_blend_need(double w, uint64_t total, int rounding)
{
	if (rounding == SAMPLER_LEGACY)
		return (uint64_t)ceil((double)total * w * 1.005);
	return (uint64_t)ceil(ceil((double)total * w) * (1 + 0.005));
}

/*
 * a * b rounded once, never fused into a multiply-add with what follows
 * (Megatron's helpers.cpp, built for x86-64, has no fused multiply-add).
 */
static __attribute__((noinline)) double
product(double a, double b)
{
	return a * b;
}

void
sampler_blend_build(const double *w, int n, uint64_t total, uint16_t *didx,
    uint64_t *sidx)
{
	uint64_t *used = xcalloc((size_t)n, sizeof *used), i;
	double x, err, best;
	int d, pick;

	for (i = 0; i < total; i++) {
		x = i > 1 ? (double)i : 1.0;
		pick = 0;
		best = product(w[0], x) - (double)used[0];
		for (d = 1; d < n; d++) {
			err = product(w[d], x) - (double)used[d];
			if (err > best) {
				best = err;
				pick = d;
			}
		}
		didx[i] = (uint16_t)pick;
		sidx[i] = used[pick]++;
	}
	free(used);
}
