/* safetensors.c - the safetensors format: a checked reader (mapped) and an F32 writer */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/json.h"
#include "core/outfile.h"
#include "model/safetensors.h"
#include "core/utf8.h"
#include "core/util.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors are little-endian; this code assumes a little-endian host"
#endif

/* Every dtype of the safetensors format; only F32, F16 and BF16 are read. */
static const struct {
	const char *name;
	int dtype;
	size_t size;
} dtypes[] = {
	{ "F32", SAFETENSORS_F32, 4 }, { "F16", SAFETENSORS_F16, 2 },
	{ "BF16", SAFETENSORS_BF16, 2 },
	{ "BOOL", -1, 1 }, { "U8", -1, 1 }, { "I8", -1, 1 },
	{ "F8_E5M2", -1, 1 }, { "F8_E4M3", -1, 1 }, { "F8_E8M0", -1, 1 },
	{ "I16", -1, 2 }, { "U16", -1, 2 }, { "I32", -1, 4 }, { "U32", -1, 4 },
	{ "F64", -1, 8 }, { "I64", -1, 8 }, { "U64", -1, 8 },
};

/* The safetensors library's limit on the header. */
#define MAX_HEADER 100000000

static int
by_offset(const void *a, const void *b)
{
	const struct safetensors_tensor *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp((*(struct safetensors_tensor *const *)a)->name,
	    (*(struct safetensors_tensor *const *)b)->name);
}

/* One header entry into t; 0, or -1 with err. */
static int
parse_entry(const struct json_val *v, struct safetensors_tensor *t,
    size_t dsize, const char *path, char *err, size_t errsize, int *code)
{
	const struct json_val *dt, *sh, *off;
	size_t j, k, elsize = 0, nbytes;
	double b, e;

	dt = json_doc_get(v, "dtype");
	sh = json_doc_get(v, "shape");
	off = json_doc_get(v, "data_offsets");
	if (dt == NULL || dt->type != JV_STRING || sh == NULL ||
	    sh->type != JV_ARRAY || off == NULL || off->type != JV_ARRAY ||
	    off->nkids != 2)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: bad safetensors entry '%s'", path, v->key);
	t->name = v->key;
	t->dtype = -1;
	for (k = 0; k < sizeof dtypes / sizeof *dtypes; k++)
		if (strcmp(dt->str, dtypes[k].name) == 0) {
			t->dtype = dtypes[k].dtype;
			elsize = dtypes[k].size;
		}
	if (elsize == 0)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: tensor '%s' has an unknown dtype '%s'", path, v->key,
		    dt->str);
	if (sh->nkids > SAFETENSORS_MAXRANK)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: tensor '%s' has rank %zu, more than %d", path, v->key,
		    sh->nkids, SAFETENSORS_MAXRANK);
	t->rank = (int)sh->nkids;
	t->nelem = 1;
	for (j = 0; j < sh->nkids; j++) {
		double d = sh->kids[j].num;

		if (sh->kids[j].type != JV_NUMBER || d < 0 || d >= 0x1p53 ||
		    d != floor(d))
			return owt_fail(err, errsize, code, XDATA,
			    "%s: bad shape of '%s'", path, v->key);
		t->shape[j] = (int64_t)d;
		if (__builtin_mul_overflow(t->nelem, (size_t)d, &t->nelem))
			return owt_fail(err, errsize, code, XDATA,
			    "%s: the shape of '%s' overflows", path, v->key);
	}
	if (__builtin_mul_overflow(t->nelem, elsize, &nbytes))
		return owt_fail(err, errsize, code, XDATA,
		    "%s: the shape of '%s' overflows", path, v->key);
	b = off->kids[0].num;
	e = off->kids[1].num;
	if (off->kids[0].type != JV_NUMBER || off->kids[1].type != JV_NUMBER ||
	    b < 0 || e < b || b != floor(b) || e != floor(e) || e >= 0x1p53)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: bad data_offsets of '%s'", path, v->key);
	if (e > (double)dsize)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: data of '%s' is outside the file (truncated?)", path,
		    v->key);
	t->begin = (size_t)b;
	t->end = (size_t)e;
	if (t->end - t->begin != nbytes)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: data of '%s' does not match its shape", path, v->key);
	return 0;
}

/*
 * The safetensors library's rules: the header at most MAX_HEADER bytes
 * of UTF-8 JSON; every dtype known; each tensor's bytes its shape times
 * its dtype's size; sorted by offset, the tensors' data follows one
 * another with no gap and no overlap and ends where the file ends.
 */
static int
parse_header(struct safetensors_file *f, const char *path, char *err,
    size_t errsize, int *code)
{
	uint64_t hlen = 0;
	const unsigned char *data;
	struct safetensors_tensor *sorted = NULL, **names = NULL;
	size_t dsize, i, nt = 0, at;
	char jerr[128];
	int r = -1;

	if (f->size < 8)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: not a safetensors file (%zu bytes)", path, f->size);
	for (i = 0; i < 8; i++)
		hlen |= (uint64_t)f->map[i] << (8 * i);
	if (hlen > MAX_HEADER)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: not a safetensors file (header size %" PRIu64 ")",
		    path, hlen);
	if (hlen > f->size - 8)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: truncated: the header needs %" PRIu64
		    " bytes, the file has %zu", path, hlen + 8, f->size);
	if (utf8_valid((const char *)f->map + 8, hlen) != hlen)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: bad safetensors header: not UTF-8", path);
	f->hdr = json_doc_parse((const char *)f->map + 8, hlen, jerr,
	    sizeof jerr, code);
	if (f->hdr == NULL || f->hdr->type != JV_MAP)
		return owt_fail(err, errsize, code, XDATA,
		    "%s: bad safetensors header: %s", path,
		    f->hdr ? "not an object" : jerr);
	data = f->map + 8 + hlen;
	dsize = f->size - 8 - hlen;
	f->t = xcalloc(f->hdr->nkids + 1, sizeof *f->t);
	for (i = 0; i < f->hdr->nkids; i++) {
		const struct json_val *v = &f->hdr->kids[i];

		if (strcmp(v->key, "__metadata__") == 0)
			continue;
		if (parse_entry(v, &f->t[nt], dsize, path, err, errsize, code) < 0)
			return -1;
		f->t[nt].data = data + f->t[nt].begin;
		nt++;
	}
	f->n = nt;
	sorted = xcalloc(nt + 1, sizeof *sorted);
	names = xcalloc(nt + 1, sizeof *names);
	memcpy(sorted, f->t, nt * sizeof *sorted);
	qsort(sorted, nt, sizeof *sorted, by_offset);
	for (at = 0, i = 0; i < nt; i++) {
		if (sorted[i].begin < at) {
			owt_fail(err, errsize, code, XDATA,
			    "%s: data of '%s' overlaps that of '%s'", path,
			    sorted[i].name, sorted[i - 1].name);
			goto out;
		}
		if (sorted[i].begin > at) {
			owt_fail(err, errsize, code, XDATA, "%s: a gap in the "
			    "data: bytes %zu to %zu before '%s' belong to no "
			    "tensor", path, at, sorted[i].begin,
			    sorted[i].name);
			goto out;
		}
		at = sorted[i].end;
	}
	if (at != dsize) {
		owt_fail(err, errsize, code, XDATA,
		    "%s: %zu bytes after the last tensor's data", path,
		    dsize - at);
		goto out;
	}
	for (i = 0; i < nt; i++)
		names[i] = &f->t[i];
	qsort(names, nt, sizeof *names, by_name);
	for (i = 1; i < nt; i++)
		if (strcmp(names[i]->name, names[i - 1]->name) == 0) {
			owt_fail(err, errsize, code, XDATA,
			    "%s: tensor '%s' appears twice", path,
			    names[i]->name);
			goto out;
		}
	r = 0;
out:
	free(sorted);
	free(names);
	return r;
}

int
safetensors_open(struct safetensors_file *f, const char *path, char *err,
    size_t errsize, int *code)
{
	struct stat st;
	int fd;

	memset(f, 0, sizeof *f);
	if ((fd = open(path, O_RDONLY)) < 0) {
		if (errno == ENOENT)
			return owt_fail(err, errsize, code, XDATA,
			    "%s: no such file", path);
		return owt_fail_errno(err, errsize, code, XSYS,
		    "%s: cannot open", path);
	}
	if (fstat(fd, &st) < 0) {
		owt_fail_errno(err, errsize, code, XSYS, "%s: cannot stat",
		    path);
		close(fd);
		return -1;
	}
	f->size = (size_t)st.st_size;
	if (f->size > 0) {
		f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f->map == MAP_FAILED) {
			f->map = NULL;
			owt_fail_errno(err, errsize, code, XSYS,
			    "%s: cannot map", path);
			close(fd);
			return -1;
		}
	}
	close(fd);
	if (parse_header(f, path, err, errsize, code) < 0) {
		safetensors_close(f);
		return -1;
	}
	return 0;
}

const struct safetensors_tensor *
safetensors_find(const struct safetensors_file *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (strcmp(f->t[i].name, name) == 0)
			return &f->t[i];
	return NULL;
}

static float
half_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, e = h >> 10 & 0x1f;
	uint32_t mant = h & 0x3ff, bits;
	float f;

	if (e == 0x1f) {
		bits = sign | 0x7f800000 | mant << 13;
	} else if (e != 0) {
		bits = sign | (e + 112) << 23 | mant << 13;
	} else {
		f = ldexpf((float)mant, -24);
		return sign ? -f : f;
	}
	memcpy(&f, &bits, 4);
	return f;
}

void
safetensors_to_f32(const struct safetensors_tensor *t, float *out)
{
	size_t i;
	uint16_t h;
	uint32_t u;

	if (t->dtype == SAFETENSORS_F32) {
		memcpy(out, t->data, t->nelem * sizeof *out);
		return;
	}
	for (i = 0; i < t->nelem; i++) {
		memcpy(&h, t->data + 2 * i, 2);
		if (t->dtype == SAFETENSORS_F16) {
			out[i] = half_to_f32(h);
		} else {
			u = (uint32_t)h << 16;
			memcpy(&out[i], &u, 4);
		}
	}
}

void
safetensors_close(struct safetensors_file *f)
{
	if (f->map)
		munmap(f->map, f->size);
	free(f->t);
	json_doc_free(f->hdr);
	memset(f, 0, sizeof *f);
}

int
safetensors_write(const char *path, const char *meta,
    const struct safetensors_out *t, size_t n, char *err, size_t errsize)
{
	struct buf h = { 0 };
	struct json_w w;
	size_t i, off = 0, nelem, pad;
	unsigned char len[8];
	int fd, r = -1;

	json_w_init(&w, &h, JSON_COMPACT);
	json_w_obj(&w);
	json_w_key(&w, "__metadata__");
	json_w_obj(&w);
	json_w_kstr(&w, "format", "pt");
	if (meta != NULL)
		json_w_raw_members(&w, meta, strlen(meta));
	json_w_end(&w);
	for (i = 0; i < n; i++) {
		nelem = (size_t)t[i].shape[0] * (t[i].rank > 1 ? (size_t)t[i].shape[1] : 1);
		json_w_key(&w, t[i].name);
		json_w_obj(&w);
		json_w_kstr(&w, "dtype", "F32");
		json_w_key(&w, "shape");
		json_w_arr(&w);
		json_w_int(&w, t[i].shape[0]);
		if (t[i].rank > 1)
			json_w_int(&w, t[i].shape[1]);
		json_w_end(&w);
		json_w_key(&w, "data_offsets");
		json_w_arr(&w);
		json_w_u64(&w, off);
		json_w_u64(&w, off + nelem * 4);
		json_w_end(&w);
		json_w_end(&w);
		off += nelem * 4;
	}
	json_w_end(&w);
	for (pad = (8 - h.len % 8) % 8; pad > 0; pad--)
		buf_addc(&h, ' ');
	for (i = 0; i < 8; i++)
		len[i] = (unsigned char)((uint64_t)h.len >> (8 * i));
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0666)) < 0) {
		owt_fail_errno(err, errsize, NULL, XSYS, "%s: cannot create",
		    path);
		goto out;
	}
	if (outfile_write_all(fd, len, 8) < 0 ||
	    outfile_write_all(fd, h.p, h.len) < 0)
		goto werr;
	for (i = 0; i < n; i++) {
		nelem = (size_t)t[i].shape[0] * (t[i].rank > 1 ? (size_t)t[i].shape[1] : 1);
		if (outfile_write_all(fd, t[i].data, nelem * 4) < 0)
			goto werr;
	}
	if (close(fd) < 0) {
		fd = -1;
		goto werr;
	}
	r = 0;
	goto out;
werr:
	owt_fail_errno(err, errsize, NULL, XSYS, "%s: write error", path);
	if (fd >= 0)
		close(fd);
out:
	buf_free(&h);
	return r;
}
