/* mmidx.c - Megatron indexed datasets (PREFIX.bin + PREFIX.idx, "MMIDIDX") */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tok/mmidx.h"
#include "core/outfile.h"
#include "core/util.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "owt assumes a little-endian host (the file formats are little-endian)"
#endif

#define LEGACY_MAGIC "TNTIDX\0\0"
#define BBUF (1u << 20)
#define LBUF (64u << 10)
#define DBUF (64u << 10)

static const char *const dtype_name[] = {
	"unknown", "uint8", "int8", "int16", "int32", "int64", "float64", "float32",
	"uint16"
};

const char *
mmidx_dtype_name(int dtype)
{
	return dtype >= 1 && dtype <= 8 ? dtype_name[dtype] : "unknown";
}

static uint64_t
le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static int32_t
le32(const unsigned char *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Check the index in d->idx against itself and the .bin size; set the counts. */
static int
validate(struct mmidx *d, const char *name, char *err, size_t errsize,
    int *code)
{
	const unsigned char *p = d->idx;
	size_t size = d->idxsize;
	uint64_t version, n, nd, avail, need, i, pos, ptr, doc, prev;
	int32_t len;

	if (size == 0)
		return owt_fail(err, errsize, code, XDATA,
		    "%s.idx: empty file", name);
	if (size >= 8 && memcmp(p, LEGACY_MAGIC, 8) == 0)
		return owt_fail(err, errsize, code, XDATA,
		    "%s.idx: a legacy lazy/cached (TNTIDX) "
		    "index, not MMIDIDX", name);
	if (size < MMIDX_MAGICSIZE || memcmp(p, MMIDX_MAGIC, MMIDX_MAGICSIZE))
		return owt_fail(err, errsize, code, XDATA,
		    "%s.idx: not a Megatron indexed "
		    "dataset (bad magic)", name);
	if (size < MMIDX_HDRSIZE)
		return owt_fail(err, errsize, code, XDATA,
		    "%s.idx: truncated header (%zu of %d "
		    "bytes)", name, size, MMIDX_HDRSIZE);
	version = le64(p + 9);
	if (version != 1)
		return owt_fail(err, errsize, code, XDATA,
		    "%s.idx: unsupported version %llu",
		    name, (unsigned long long)version);
	d->dtype = p[17];
	if (d->dtype != MMIDX_UINT16 && d->dtype != MMIDX_INT32)
		return owt_fail(err, errsize, code, XDATA,
		    "%s.idx: dtype code %d (%s) is not a "
		    "token dtype (8 uint16 or 4 int32)", name, d->dtype,
		    mmidx_dtype_name(d->dtype));
	d->itemsize = d->dtype == MMIDX_UINT16 ? 2 : 4;
	n = le64(p + 18);
	nd = le64(p + 26);
	avail = size - MMIDX_HDRSIZE;
	if (n > avail / 12 || nd > (avail - 12 * n) / 8)
		return owt_fail(err, errsize, code, XDATA,
		    "%s.idx: truncated: %zu bytes, too "
		    "few for the header's %llu sequences and %llu document "
		    "indices", name, size, (unsigned long long)n,
		    (unsigned long long)nd);
	need = MMIDX_HDRSIZE + 12 * n + 8 * nd;
	if (size != need)
		return owt_fail(err, errsize, code, XDATA,
		    "%s.idx: %zu bytes, the header's %llu "
		    "sequences and %llu document indices need %llu%s", name,
		    size, (unsigned long long)n, (unsigned long long)nd,
		    (unsigned long long)need, size - need == n ?
		    " (a multimodal index? not supported)" : "");
	if (nd == 0)
		return owt_fail(err, errsize, code, XDATA,
		    "%s.idx: empty document index (it "
		    "must start with 0)", name);
	d->nseq = n;
	d->ndocs = nd - 1;
	d->lens = p + MMIDX_HDRSIZE;
	d->ptrs = d->lens + 4 * n;
	d->docs = d->ptrs + 8 * n;

	pos = 0;
	for (i = 0; i < n; i++) {
		len = le32(d->lens + 4 * i);
		ptr = le64(d->ptrs + 8 * i);
		if (len < 0)
			return owt_fail(err, errsize, code, XDATA,
			    "%s.idx: sequence %llu has "
			    "negative length %d", name, (unsigned long long)i,
			    (int)len);
		if (ptr != pos)
			return owt_fail(err, errsize, code, XDATA,
			    "%s.idx: sequence %llu starts "
			    "at byte %lld, expected %llu (after the sequence "
			    "before it)", name, (unsigned long long)i,
			    (long long)ptr, (unsigned long long)pos);
		if ((uint64_t)len * d->itemsize > d->binsize - pos)
			return owt_fail(err, errsize, code, XDATA,
			    "%s.bin: truncated: %zu bytes, "
			    "sequence %llu ends at byte %llu", name, d->binsize,
			    (unsigned long long)i, (unsigned long long)(pos +
			    (uint64_t)len * d->itemsize));
		pos += (uint64_t)len * d->itemsize;
	}
	if (pos != d->binsize)
		return owt_fail(err, errsize, code, XDATA,
		    "%s.bin: %zu bytes, the index "
		    "describes %llu", name, d->binsize, (unsigned long long)pos);
	d->ntokens = pos / d->itemsize;

	prev = le64(d->docs);
	if (prev != 0)
		return owt_fail(err, errsize, code, XDATA,
		    "%s.idx: document index starts at "
		    "%lld, not 0", name, (long long)prev);
	for (i = 1; i < nd; i++) {
		doc = le64(d->docs + 8 * i);
		if (doc < prev || doc > n)
			return owt_fail(err, errsize, code, XDATA,
			    "%s.idx: document index %llu "
			    "is %lld, outside [%llu, %llu]", name,
			    (unsigned long long)i, (long long)doc,
			    (unsigned long long)prev, (unsigned long long)n);
		prev = doc;
	}
	if (prev != n)
		return owt_fail(err, errsize, code, XDATA,
		    "%s.idx: document index ends at %llu, "
		    "not at the %llu sequences", name, (unsigned long long)prev,
		    (unsigned long long)n);
	return 0;
}

int
mmidx_open_mem(struct mmidx *d, const char *name, const void *idx,
    size_t idxsize, const void *bin, size_t binsize, char *err,
    size_t errsize, int *code)
{
	memset(d, 0, sizeof *d);
	d->idx = idx;
	d->idxsize = idxsize;
	d->bin = bin;
	d->binsize = binsize;
	return validate(d, name, err, errsize, code);
}

/* Map path read-only; an empty file maps to NULL. 0 or -1. */
static int
map_file(const char *path, const unsigned char **p, size_t *size, char *err,
    size_t errsize, int *code)
{
	struct stat st;
	void *m;
	int fd;

	*p = NULL;
	*size = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return owt_fail_errno(err, errsize, code, errno == ENOENT ||
		    errno == EACCES || errno == ENOTDIR ? XDATA : XSYS,
		    "cannot open '%s'", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		owt_fail(err, errsize, code, S_ISDIR(st.st_mode) ? XDATA : XSYS,
		    "cannot read '%s': %s", path,
		    S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		close(fd);
		return -1;
	}
	if (st.st_size > 0) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			owt_fail_errno(err, errsize, code, XSYS,
			    "cannot map '%s'", path);
			close(fd);
			return -1;
		}
		*p = m;
		*size = (size_t)st.st_size;
	}
	close(fd);
	return 0;
}

int
mmidx_open(struct mmidx *d, const char *prefix, char *err, size_t errsize,
    int *code)
{
	const unsigned char *idx, *bin;
	size_t idxsize, binsize;
	char *path;
	int r;

	memset(d, 0, sizeof *d);
	path = xmalloc(strlen(prefix) + 5);
	sprintf(path, "%s.idx", prefix);
	r = map_file(path, &idx, &idxsize, err, errsize, code);
	if (r == 0) {
		sprintf(path, "%s.bin", prefix);
		r = map_file(path, &bin, &binsize, err, errsize, code);
		if (r < 0 && idx)
			munmap((void *)idx, idxsize);
	}
	free(path);
	if (r < 0)
		return -1;
	if (mmidx_open_mem(d, prefix, idx, idxsize, bin, binsize, err,
	    errsize, code) < 0) {
		d->mapped = 1;
		mmidx_close(d);
		return -1;
	}
	d->mapped = 1;
	return 0;
}

void
mmidx_close(struct mmidx *d)
{
	if (d->mapped) {
		if (d->idx)
			munmap((void *)d->idx, d->idxsize);
		if (d->bin)
			munmap((void *)d->bin, d->binsize);
	}
	memset(d, 0, sizeof *d);
}

uint32_t
mmidx_len(const struct mmidx *d, uint64_t seq)
{
	assert(seq < d->nseq);
	return (uint32_t)le32(d->lens + 4 * seq);
}

void
mmidx_read(const struct mmidx *d, uint64_t seq, uint64_t off, size_t n,
    uint32_t *out)
{
	const unsigned char *p;
	uint16_t s;
	size_t i;

	assert(off <= mmidx_len(d, seq) && n <= mmidx_len(d, seq) - off);
	p = d->bin + le64(d->ptrs + 8 * seq) + off * d->itemsize;
	if (d->itemsize == 4) {
		memcpy(out, p, n * 4);
		return;
	}
	for (i = 0; i < n; i++) {
		memcpy(&s, p + 2 * i, 2);
		out[i] = s;
	}
}

uint64_t
mmidx_doc(const struct mmidx *d, uint64_t k)
{
	assert(k <= d->ndocs);
	return le64(d->docs + 8 * k);
}

/* The smallest length with at least rank sequences at or below it. */
static uint32_t
quantile(const uint64_t *count, const uint32_t *longs, uint64_t rank)
{
	uint64_t c = 0;
	uint32_t v;

	for (v = 0; v < 65536; v++)
		if ((c += count[v]) >= rank)
			return v;
	return longs[rank - c - 1];
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

void
mmidx_stats(const struct mmidx *d, struct mmidx_stats *st)
{
	static const double q[3] = { 0.50, 0.90, 0.99 };
	uint32_t *longs = NULL, *qv[3] = { &st->p50, &st->p90, &st->p99 };
	uint64_t *count, i, rank;
	size_t nlong = 0, cap = 0;
	uint32_t len;
	int j;

	memset(st, 0, sizeof *st);
	if (d->nseq == 0)
		return;
	/* Exact counts for lengths under 2^16, a sorted list for the rest. */
	count = xcalloc(65536, sizeof *count);
	st->min = UINT32_MAX;
	for (i = 0; i < d->nseq; i++) {
		len = mmidx_len(d, i);
		st->empty += len == 0;
		st->min = len < st->min ? len : st->min;
		st->max = len > st->max ? len : st->max;
		if (len < 65536) {
			count[len]++;
		} else {
			longs = xgrow(longs, &cap, nlong + 1, sizeof *longs);
			longs[nlong++] = len;
		}
	}
	if (nlong > 0)
		qsort(longs, nlong, sizeof *longs, cmp_u32);
	for (j = 0; j < 3; j++) {
		rank = (uint64_t)(q[j] * (double)d->nseq);
		rank += (double)rank < q[j] * (double)d->nseq || rank == 0;
		*qv[j] = quantile(count, longs, rank);
	}
	st->mean = (double)d->ntokens / (double)d->nseq;
	for (i = 0; i < d->ndocs; i++)
		st->empty_docs += mmidx_doc(d, i) == mmidx_doc(d, i + 1);
	free(count);
	free(longs);
}

int
mmidx_check_tokens(const struct mmidx *d, const char *name, char *err,
    size_t errsize, int *code)
{
	uint64_t seq, k, len, pos = 0;
	int32_t v;

	if (d->dtype != MMIDX_INT32)
		return 0;
	for (seq = 0; seq < d->nseq; seq++) {
		len = mmidx_len(d, seq);
		for (k = 0; k < len; k++, pos += 4) {
			v = le32(d->bin + pos);
			if (v < 0)
				return owt_fail(err, errsize, code, XDATA,
				    "%s.bin: token %llu of "
				    "sequence %llu is negative (%d)", name,
				    (unsigned long long)k,
				    (unsigned long long)seq, (int)v);
		}
	}
	return 0;
}

/*
 * Writing, through outfile.h. PREFIX.bin.tmpXXXXXX gets the tokens;
 * PREFIX.idx.tmpXXXXXX gets a placeholder header and the lengths as they
 * come, then at the end the pointers (computed from the lengths read
 * back), the document index (from an unlinked spill file) and the real
 * header.
 */

/* Write all n bytes at offset off, or at the file offset when off < 0. */
static int
pwrite_all(int fd, const void *p, size_t n, off_t off)
{
	size_t chunk;
	ssize_t k;

	while (n > 0) {
		chunk = n < (1u << 30) ? n : (1u << 30);
		k = off < 0 ? write(fd, p, chunk) : pwrite(fd, p, chunk, off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p = (const char *)p + k;
		n -= (size_t)k;
		if (off >= 0)
			off += k;
	}
	return 0;
}

static int
wwrite(struct mmidx_writer *w, int fd, const void *p, size_t n,
    const char *path)
{
	if (pwrite_all(fd, p, n, -1) < 0)
		return owt_fail_errno(w->err, sizeof w->err, &w->errcode, XSYS,
		    "cannot write '%s'", path);
	return 0;
}

/* Write a buffer out and empty it. */
static int
flush(struct mmidx_writer *w, int fd, const unsigned char *p, size_t *len,
    const char *path)
{
	if (wwrite(w, fd, p, *len, path) < 0)
		return -1;
	*len = 0;
	return 0;
}

static int
flush_bin(struct mmidx_writer *w)
{
	return flush(w, w->bin.fd, w->bbuf, &w->blen, w->bin.tmp);
}

static int
flush_lens(struct mmidx_writer *w)
{
	return flush(w, w->idx.fd, w->lbuf, &w->llen, w->idx.tmp);
}

static int
flush_docs(struct mmidx_writer *w)
{
	return flush(w, w->docfd, w->dbuf, &w->dlen, "document index spill");
}

static int
put_doc(struct mmidx_writer *w, uint64_t v)
{
	if (w->dlen + 8 > DBUF && flush_docs(w) < 0)
		return -1;
	memcpy(w->dbuf + w->dlen, &v, 8);
	w->dlen += 8;
	return 0;
}

/*
 * The document index spill: a temporary beside the dataset, unlinked at
 * once (a run killed in between leaves PREFIX.doc.tmpXXXXXX, which the
 * next run's outfile_sweep removes). fd or -1.
 */
static int
open_spill(struct mmidx_writer *w, const char *path)
{
	char *tmp = xmalloc(strlen(path) + 11);
	int fd;

	sprintf(tmp, "%s.tmpXXXXXX", path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
		owt_fail_errno(w->err, sizeof w->err, &w->errcode, XSYS,
		    "cannot create a temporary file for '%s'",
		    path);
	else
		unlink(tmp);
	free(tmp);
	return fd;
}

static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* mmidx_abort, keeping the error for the caller. */
static void
abort_keep_err(struct mmidx_writer *w)
{
	char err[sizeof w->err];
	int code = w->errcode;

	memcpy(err, w->err, sizeof err);
	mmidx_abort(w);
	w->errcode = code;
	memcpy(w->err, err, sizeof err);
}

int
mmidx_create(struct mmidx_writer *w, const char *prefix, int dtype, int force)
{
	static const unsigned char zero[MMIDX_HDRSIZE];
	size_t n = strlen(prefix);
	char *bin, *idx, *doc;
	int r = -1;

	memset(w, 0, sizeof *w);
	w->bin.fd = w->idx.fd = w->docfd = -1;
	assert(dtype == MMIDX_UINT16 || dtype == MMIDX_INT32);
	w->dtype = dtype;
	w->itemsize = dtype == MMIDX_UINT16 ? 2 : 4;
	w->force = force;
	w->prefix = xstrdup(prefix);
	bin = xmalloc(n + 6);
	idx = xmalloc(n + 6);
	doc = xmalloc(n + 6);
	sprintf(bin, "%s.bin", prefix);
	sprintf(idx, "%s.idx", prefix);
	sprintf(doc, "%s.doc", prefix);
	if (!force && (exists(bin) || exists(idx))) {
		owt_fail(w->err, sizeof w->err, &w->errcode, XUSAGE,
		    "%s: already exists; -f overwrites it",
		    exists(idx) ? idx : bin);
		goto out;
	}
	if (outfile_mkdirs(bin, w->err, sizeof w->err, &w->errcode) < 0)
		goto out;
	/* What runs killed while writing here left behind. */
	outfile_sweep(bin);
	outfile_sweep(idx);
	outfile_sweep(doc);
	if (outfile_open(&w->bin, bin, w->err, sizeof w->err,
	    &w->errcode) < 0 ||
	    outfile_open(&w->idx, idx, w->err, sizeof w->err,
	    &w->errcode) < 0 ||
	    (w->docfd = open_spill(w, doc)) < 0)
		goto out;
	if (wwrite(w, w->idx.fd, zero, sizeof zero, w->idx.tmp) < 0)
		goto out;
	w->bbuf = xmalloc(BBUF);
	w->lbuf = xmalloc(LBUF);
	w->dbuf = xmalloc(DBUF);
	r = put_doc(w, 0);
out:
	free(bin);
	free(idx);
	free(doc);
	if (r < 0)
		abort_keep_err(w);
	return r;
}

/* Append k ids of width bytes to the .bin buffer, in the dataset's width. */
static void
put_ids(struct mmidx_writer *w, const unsigned char *p, unsigned width, size_t k)
{
	unsigned char *q = w->bbuf + w->blen;
	size_t i;

	if (width == w->itemsize) {
		memcpy(q, p, k * width);
	} else if (width == 2) {
		for (i = 0; i < k; i++) {
			uint16_t s;
			uint32_t v;

			memcpy(&s, p + 2 * i, 2);
			v = s;
			memcpy(q + 4 * i, &v, 4);
		}
	} else {
		for (i = 0; i < k; i++)
			memcpy(q + 2 * i, p + 4 * i, 2);	/* checked to fit */
	}
	w->blen += k * w->itemsize;
}

int
mmidx_add_le(struct mmidx_writer *w, const void *raw, unsigned width, size_t n)
{
	const unsigned char *p = raw;
	uint32_t all = 0, max = w->itemsize == 2 ? 0xffff : INT32_MAX, v;
	size_t i, k, room;
	int32_t len = (int32_t)n;

	if (w->errcode)
		return -1;
	if (n > INT32_MAX)
		return owt_fail(w->err, sizeof w->err, &w->errcode, XDATA,
		    "a sequence of %zu tokens is longer "
		    "than an index can describe", n);
	if (width == 4) {
		for (i = 0; i < n; i++) {
			memcpy(&v, p + 4 * i, 4);
			all |= v;
		}
		if (all > max) {
			for (i = 0;; i++) {
				memcpy(&v, p + 4 * i, 4);
				if (v > max)
					break;
			}
			return owt_fail(w->err, sizeof w->err, &w->errcode,
			    XDATA, "token %u does not fit %s dataset (at most "
			    "%u)", v, w->itemsize == 2 ?
			    "a uint16" : "an int32", max);
		}
	}
	while (n > 0) {
		room = (BBUF - w->blen) / w->itemsize;
		if (room == 0) {
			if (flush_bin(w) < 0)
				return -1;
			continue;
		}
		k = n < room ? n : room;
		put_ids(w, p, width, k);
		p += k * width;
		n -= k;
	}
	if (w->llen + 4 > LBUF && flush_lens(w) < 0)
		return -1;
	memcpy(w->lbuf + w->llen, &len, 4);
	w->llen += 4;
	w->nseq++;
	w->ntokens += (uint64_t)len;
	w->binbytes += (uint64_t)len * w->itemsize;
	return 0;
}

int
mmidx_add(struct mmidx_writer *w, const uint32_t *ids, size_t n)
{
	return mmidx_add_le(w, ids, 4, n);
}

int
mmidx_end_doc(struct mmidx_writer *w)
{
	if (w->errcode || put_doc(w, w->nseq) < 0)
		return -1;
	w->ndocs++;
	w->doc_start = w->nseq;
	return 0;
}

int
mmidx_add_dataset(struct mmidx_writer *w, const struct mmidx *d)
{
	uint64_t k;

	if (w->errcode)
		return -1;
	if (d->dtype != w->dtype)
		return owt_fail(w->err, sizeof w->err, &w->errcode, XDATA,
		    "dtype %s differs from the output's %s",
		    dtype_name[d->dtype], dtype_name[w->dtype]);
	if (w->nseq > w->doc_start && mmidx_end_doc(w) < 0)
		return -1;
	if (flush_bin(w) < 0 || flush_lens(w) < 0 ||
	    wwrite(w, w->bin.fd, d->bin, d->binsize, w->bin.tmp) < 0 ||
	    wwrite(w, w->idx.fd, d->lens, 4 * d->nseq, w->idx.tmp) < 0)
		return -1;
	for (k = 1; k <= d->ndocs; k++)
		if (put_doc(w, mmidx_doc(d, k) + w->nseq) < 0)
			return -1;
	w->nseq += d->nseq;
	w->ndocs += d->ndocs;
	w->ntokens += d->ntokens;
	w->binbytes += d->binsize;
	w->doc_start = w->nseq;
	return 0;
}

/* Append the pointers (from the lengths in the file) and the document index. */
static int
finish_idx(struct mmidx_writer *w)
{
	unsigned char hdr[MMIDX_HDRSIZE];
	uint64_t i, k, chunk, nd = w->ndocs + 1, ptr = 0;
	off_t in = MMIDX_HDRSIZE, out = MMIDX_HDRSIZE + 4 * (off_t)w->nseq;
	int64_t v;
	int32_t len;
	ssize_t got;

	for (i = 0; i < w->nseq; i += chunk) {
		chunk = w->nseq - i < LBUF / 4 ? w->nseq - i : LBUF / 4;
		got = pread(w->idx.fd, w->lbuf, chunk * 4, in);
		if (got != (ssize_t)(chunk * 4)) {
			if (got >= 0)
				errno = EIO;
			return owt_fail_errno(w->err, sizeof w->err,
			    &w->errcode, XSYS, "cannot read back '%s'",
			    w->idx.tmp);
		}
		for (k = 0; k < chunk; k++) {
			memcpy(&len, w->lbuf + 4 * k, 4);
			v = (int64_t)ptr;
			memcpy(w->bbuf + 8 * k, &v, 8);
			ptr += (uint64_t)len * w->itemsize;
		}
		if (pwrite_all(w->idx.fd, w->bbuf, chunk * 8, out) < 0)
			return owt_fail_errno(w->err, sizeof w->err,
			    &w->errcode, XSYS, "cannot write '%s'", w->idx.tmp);
		in += (off_t)chunk * 4;
		out += (off_t)chunk * 8;
	}
	for (i = 0; i < nd; i += chunk) {
		chunk = nd - i < BBUF / 8 ? nd - i : BBUF / 8;
		got = pread(w->docfd, w->bbuf, chunk * 8, (off_t)i * 8);
		if (got != (ssize_t)(chunk * 8)) {
			if (got >= 0)
				errno = EIO;
			return owt_fail_errno(w->err, sizeof w->err,
			    &w->errcode, XSYS,
			    "cannot read back the document index spill");
		}
		if (pwrite_all(w->idx.fd, w->bbuf, chunk * 8, out) < 0)
			return owt_fail_errno(w->err, sizeof w->err,
			    &w->errcode, XSYS, "cannot write '%s'", w->idx.tmp);
		out += (off_t)chunk * 8;
	}
	memcpy(hdr, MMIDX_MAGIC, MMIDX_MAGICSIZE);
	k = 1;
	memcpy(hdr + 9, &k, 8);
	hdr[17] = (unsigned char)w->dtype;
	memcpy(hdr + 18, &w->nseq, 8);
	memcpy(hdr + 26, &nd, 8);
	if (pwrite_all(w->idx.fd, hdr, sizeof hdr, 0) < 0)
		return owt_fail_errno(w->err, sizeof w->err, &w->errcode, XSYS,
		    "cannot write '%s'", w->idx.tmp);
	return 0;
}

/* Rename an outfile into place; without force, never over an existing file. */
static int
put_in_place(struct mmidx_writer *w, struct outfile *o, const char *path)
{
	if (outfile_commit(o, w->force ? 0 : OUTFILE_NOREPLACE, w->err,
	    sizeof w->err, &w->errcode) == 0)
		return 0;
	if (w->errcode == XUSAGE)
		owt_fail(w->err, sizeof w->err, &w->errcode, XUSAGE,
		    "%s: already exists; -f overwrites it", path);
	return -1;
}

int
mmidx_commit(struct mmidx_writer *w)
{
	size_t n;
	char *bin, *idx;
	int r = -1;

	if (w->prefix == NULL)	/* mmidx_create failed */
		return -1;
	n = strlen(w->prefix);
	bin = xmalloc(n + 5);
	idx = xmalloc(n + 5);
	sprintf(bin, "%s.bin", w->prefix);
	sprintf(idx, "%s.idx", w->prefix);
	if (w->errcode)
		goto out;
	if (w->nseq > w->doc_start && mmidx_end_doc(w) < 0)
		goto out;
	if (flush_bin(w) < 0 || flush_lens(w) < 0 || flush_docs(w) < 0 ||
	    finish_idx(w) < 0)
		goto out;
	/* Without the old index, a crash between the renames leaves no dataset. */
	if (w->force && unlink(idx) < 0 && errno != ENOENT) {
		owt_fail_errno(w->err, sizeof w->err, &w->errcode, XSYS,
		    "cannot remove '%s'", idx);
		goto out;
	}
	if (put_in_place(w, &w->bin, bin) < 0)
		goto out;
	if (put_in_place(w, &w->idx, idx) < 0) {
		unlink(bin);
		goto out;
	}
	r = 0;
out:
	free(bin);
	free(idx);
	if (r < 0) {
		abort_keep_err(w);
		return -1;
	}
	mmidx_abort(w);
	return 0;
}

void
mmidx_abort(struct mmidx_writer *w)
{
	outfile_abort(&w->bin);
	outfile_abort(&w->idx);
	if (w->docfd >= 0)
		close(w->docfd);
	free(w->prefix);
	free(w->bbuf);
	free(w->lbuf);
	free(w->dbuf);
	memset(w, 0, sizeof *w);
	w->bin.fd = w->idx.fd = w->docfd = -1;
}
