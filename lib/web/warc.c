/*
 * warc.c - WARC archives (ISO 28500): records from plain, gzip or zstd files, their HTTP payloads
 *
 * The reader decodes one gzip member or zstd frame at a time and never
 * past its end in one call, so that a record which starts a member is
 * seen at the member's file offset (the offset CDX indexes give). It
 * holds the decoded bytes not yet parsed, a header block (at most
 * WARC_MAX_HEAD) and the block the caller keeps; a longer block is read
 * through and dropped.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <brotli/decode.h>
#include <zstd.h>

#include "web/warc.h"

#define RAWSIZE ((size_t)256 << 10)
#define DSIZE ((size_t)256 << 10)
/* The warc-zstd dictionary frame (a skippable frame) and its size limit. */
#define DICT_MAGIC 0x184D2A5DU
#define DICT_MAX ((size_t)64 << 20)

const char *const warc_type_name[WARC_NTYPES] = {
	"warcinfo", "response", "resource", "request", "metadata", "revisit",
	"conversion", "continuation", "other"
};

static const unsigned char zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
static const unsigned char dict_magic[4] = { 0x5d, 0x2a, 0x4d, 0x18 };

/* ---- header blocks ---- */

size_t
warc_head_end(const char *p, size_t n)
{
	const char *nl;
	size_t i = 0;

	/* Line by line: an empty line ("\r\n" or "\n") ends the block. */
	while (i < n && (nl = memchr(p + i, '\n', n - i)) != NULL) {
		size_t len = (size_t)(nl - (p + i));

		if (len == 0 || (len == 1 && p[i] == '\r'))
			return (size_t)(nl - p) + 1;
		i = (size_t)(nl - p) + 1;
	}
	return 0;
}

static int
name_is(const char *name, size_t n, const char *want)
{
	return strlen(want) == n && strncasecmp(name, want, n) == 0;
}

int
warc_head_parse(char *p, size_t n, struct warc_head *h, char *err,
    size_t errsize)
{
	char *line, *end = p + n, *nl, *colon, *v, *e;
	int havelen = 0, i;

	memset(h, 0, sizeof *h);
	h->type = -1;
	if (n < 7 || memcmp(p, "WARC/", 5) != 0 ||
	    !isdigit((unsigned char)p[5]))
		return owt_fail(err, errsize, NULL, XDATA,
		    "no WARC record here");
	if ((nl = memchr(p, '\n', n)) == NULL)
		return owt_fail(err, errsize, NULL, XDATA,
		    "WARC header not ended");
	for (line = nl + 1; line < end; line = nl + 1) {
		if ((nl = memchr(line, '\n', (size_t)(end - line))) == NULL)
			nl = end - 1;
		e = nl;
		if (e > line && e[-1] == '\r')
			e--;
		if (e == line)
			break;
		/* A continuation line belongs to a field none of ours uses. */
		if (*line == ' ' || *line == '\t')
			continue;
		if ((colon = memchr(line, ':', (size_t)(e - line))) == NULL)
			return owt_fail(err, errsize, NULL, XDATA,
			    "WARC header line without ':'");
		v = colon + 1;
		while (v < e && (*v == ' ' || *v == '\t'))
			v++;
		while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		*e = '\0';
		if (name_is(line, (size_t)(colon - line), "WARC-Type")) {
			for (i = 0; i < WARC_OTHER; i++)
				if (strcasecmp(v, warc_type_name[i]) == 0)
					break;
			h->type = i;
		} else if (name_is(line, (size_t)(colon - line),
		    "Content-Length")) {
			char *q;
			unsigned long long len;

			errno = 0;
			len = strtoull(v, &q, 10);
			if (!isdigit((unsigned char)*v) || *q != '\0' ||
			    errno != 0 || len > ((uint64_t)1 << 62))
				return owt_fail(err, errsize, NULL, XDATA,
				    "bad Content-Length '%.40s'", v);
			h->length = len;
			havelen = 1;
		} else if (name_is(line, (size_t)(colon - line),
		    "WARC-Target-URI")) {
			if (*v == '<' && e > v + 1 && e[-1] == '>') {
				e[-1] = '\0';
				v++;
			}
			h->target = v;
		} else if (name_is(line, (size_t)(colon - line), "WARC-Date")) {
			h->date = v;
		} else if (name_is(line, (size_t)(colon - line),
		    "WARC-Record-ID")) {
			h->id = v;
		} else if (name_is(line, (size_t)(colon - line),
		    "WARC-Identified-Payload-Type")) {
			h->ptype = v;
		} else if (name_is(line, (size_t)(colon - line),
		    "Content-Type")) {
			h->ctype = v;
		}
	}
	if (!havelen)
		return owt_fail(err, errsize, NULL, XDATA,
		    "WARC header without Content-Length");
	if (h->type < 0)
		return owt_fail(err, errsize, NULL, XDATA,
		    "WARC header without WARC-Type");
	return 0;
}

/* ---- sniffing ---- */

int
warc_sniff(const void *data, size_t n)
{
	const unsigned char *p = data;
	unsigned char out[5];
	int ok = 0;

	if (n >= 5 && memcmp(p, "WARC/", 5) == 0)
		return 1;
	if (n >= 4 && memcmp(p, dict_magic, 4) == 0)
		return 1;
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
		z_stream z;

		memset(&z, 0, sizeof z);
		if (inflateInit2(&z, 15 + 16) != Z_OK)
			return 0;
		z.next_in = (unsigned char *)p;
		z.avail_in = (uInt)n;
		z.next_out = out;
		z.avail_out = sizeof out;
		inflate(&z, Z_SYNC_FLUSH);
		ok = z.avail_out == 0 && memcmp(out, "WARC/", 5) == 0;
		inflateEnd(&z);
	} else if (n >= 4 && memcmp(p, zstd_magic, 4) == 0) {
		ZSTD_DStream *zs = ZSTD_createDStream();
		ZSTD_inBuffer ib = { p, n, 0 };
		ZSTD_outBuffer ob = { out, sizeof out, 0 };

		if (zs == NULL)
			return 0;
		ZSTD_DCtx_setParameter(zs, ZSTD_d_windowLogMax, 31);
		while (ob.pos < ob.size && ib.pos < ib.size &&
		    !ZSTD_isError(ZSTD_decompressStream(zs, &ob, &ib)))
			;
		ok = ob.pos == 5 && memcmp(out, "WARC/", 5) == 0;
		ZSTD_freeDStream(zs);
	}
	return ok;
}

int
warc_sniff_file(const char *path)
{
	unsigned char b[4096];
	size_t n = 0;
	ssize_t k;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	while (n < sizeof b && ((k = read(fd, b + n, sizeof b - n)) > 0 ||
	    (k < 0 && errno == EINTR)))
		if (k > 0)
			n += (size_t)k;
	close(fd);
	return warc_sniff(b, n);
}

/* ---- the reader ---- */

static int
rfail(struct warc_reader *r, int code, const char *fmt, ...) OWT_PRINTF(3, 4);

/* "NAME:OFFSET: what", at the current record. */
static int
rfail(struct warc_reader *r, int code, const char *fmt, ...)
{
	char what[OWT_ERRSIZE / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return owt_fail(r->err, sizeof r->err, &r->errcode, code, "%s:%llu: %s",
	    r->name, (unsigned long long)r->recoff, what);
}

/* More file bytes into raw: 0 (raweof set at the end), or -1. */
static int
raw_fill(struct warc_reader *r)
{
	ssize_t k;

	if (r->raweof)
		return 0;
	if (r->rawpos > 0) {
		memmove(r->raw, r->raw + r->rawpos, r->rawlen - r->rawpos);
		r->rawoff += r->rawpos;
		r->rawlen -= r->rawpos;
		r->rawpos = 0;
	}
	if (r->rawlen == r->rawcap)
		r->raw = xgrow(r->raw, &r->rawcap, r->rawcap + 1, 1);
	for (;;) {
		k = read(r->fd, r->raw + r->rawlen, r->rawcap - r->rawlen);
		if (k >= 0)
			break;
		if (errno != EINTR)
			return rfail(r, XSYS, "read error: %s", strerror(errno));
	}
	if (k == 0)
		r->raweof = 1;
	r->rawlen += (size_t)k;
	return 0;
}

/* The warc-zstd dictionary frame at the start: load it. 0 or -1. */
static int
load_dict(struct warc_reader *r)
{
	size_t size;
	unsigned char *dict;
	unsigned long long n;
	int rc = 0;

	while (r->rawlen < 8 && !r->raweof)
		if (raw_fill(r) < 0)
			return -1;
	if (r->rawlen < 8)
		return rfail(r, XDATA, "truncated zstd dictionary frame");
	size = (size_t)r->raw[4] | (size_t)r->raw[5] << 8 |
	    (size_t)r->raw[6] << 16 | (size_t)r->raw[7] << 24;
	if (size > DICT_MAX)
		return rfail(r, XDATA, "zstd dictionary of %zu bytes, over %zu",
		    size, DICT_MAX);
	while (r->rawlen < 8 + size && !r->raweof)
		if (raw_fill(r) < 0)
			return -1;
	if (r->rawlen < 8 + size)
		return rfail(r, XDATA, "truncated zstd dictionary frame");
	dict = r->raw + 8;
	/* The dictionary may itself be a zstd frame. */
	if (size >= 4 && memcmp(dict, zstd_magic, 4) == 0) {
		n = ZSTD_getFrameContentSize(dict, size);
		if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN ||
		    n > DICT_MAX)
			return rfail(r, XDATA, "bad compressed zstd dictionary");
		dict = xmalloc(n ? n : 1);
		if (ZSTD_isError(ZSTD_decompress(dict, n, r->raw + 8, size)) ||
		    ZSTD_isError(ZSTD_DCtx_loadDictionary(r->zs, dict, n)))
			rc = rfail(r, XDATA, "bad compressed zstd dictionary");
		free(dict);
	} else if (ZSTD_isError(ZSTD_DCtx_loadDictionary(r->zs, dict, size))) {
		rc = rfail(r, XDATA, "bad zstd dictionary");
	}
	r->rawpos = 8 + size;
	r->zend = 1;
	return rc;
}

int
warc_open(struct warc_reader *r, const char *path, const void *mem, size_t n,
    const char *name)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
	r->name = name;
	if (path != NULL) {
		if ((r->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return owt_fail_errno(r->err, sizeof r->err,
			    &r->errcode, XDATA, "cannot open '%s'", path);
		r->rawcap = RAWSIZE;
		r->raw = xmalloc(r->rawcap);
		while (r->rawlen < 4 && !r->raweof)
			if (raw_fill(r) < 0)
				goto fail;
	} else {
		r->mem = mem;
		r->raw = (unsigned char *)mem;
		r->rawlen = r->rawcap = n;
		r->raweof = 1;
	}
	r->dcap = DSIZE;
	r->d = xmalloc(r->dcap);
	if (r->rawlen >= 2 && r->raw[0] == 0x1f && r->raw[1] == 0x8b) {
		r->kind = WARC_GZIP;
		if (inflateInit2(&r->z, 15 + 16) != Z_OK)
			owt_fatal("cannot initialise zlib");
		r->zinit = 1;
	} else if (r->rawlen >= 4 && (memcmp(r->raw, zstd_magic, 4) == 0 ||
	    memcmp(r->raw, dict_magic, 4) == 0)) {
		r->kind = WARC_ZSTD;
		if ((r->zs = ZSTD_createDStream()) == NULL ||
		    ZSTD_isError(ZSTD_DCtx_setParameter(r->zs,
		    ZSTD_d_windowLogMax, 31)))
			owt_fatal("cannot initialise zstd");
		if (memcmp(r->raw, dict_magic, 4) == 0 && load_dict(r) < 0)
			goto fail;
	}
	return 0;
fail:
	warc_close(r);
	return -1;
}

void
warc_close(struct warc_reader *r)
{
	if (r->zinit)
		inflateEnd(&r->z);
	r->zinit = 0;
	if (r->zs)
		ZSTD_freeDStream(r->zs);
	r->zs = NULL;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	if (r->mem == NULL)
		free(r->raw);
	r->raw = NULL;
	free(r->d);
	r->d = NULL;
}

/*
 * Decode more bytes into d[dend...]: 1, 0 at the end of the input (after
 * a whole member or frame), -1 on an error. A call decodes from one gzip
 * member or zstd frame only.
 */
static int
dfill(struct warc_reader *r)
{
	size_t room;
	int k;

	if (r->dstart == r->dend)
		r->dstart = r->dend = 0;
	else if (r->dstart > 0 && r->dend == r->dcap) {
		memmove(r->d, r->d + r->dstart, r->dend - r->dstart);
		r->dend -= r->dstart;
		r->dstart = 0;
	}
	if (r->dend == r->dcap)
		r->d = xgrow(r->d, &r->dcap, r->dcap + 1, 1);
	room = r->dcap - r->dend;
	for (;;) {
		if (r->rawpos == r->rawlen) {
			if (r->raweof) {
				if (r->kind == WARC_PLAIN || !r->started || r->zend)
					return 0;
				return rfail(r, XDATA, "truncated %s data",
				    r->kind == WARC_GZIP ? "gzip" : "zstd");
			}
			if (raw_fill(r) < 0)
				return -1;
			continue;
		}
		if (r->kind == WARC_PLAIN) {
			size_t k2 = r->rawlen - r->rawpos;

			if (k2 > room)
				k2 = room;
			memcpy(r->d + r->dend, r->raw + r->rawpos, k2);
			r->rawpos += k2;
			r->dend += k2;
			return 1;
		}
		if (r->kind == WARC_GZIP) {
			uInt in, out;

			if (r->zend && inflateReset(&r->z) != Z_OK)
				owt_fatal("cannot reset zlib");
			r->zend = 0;
			r->started = 1;
			r->z.next_in = r->raw + r->rawpos;
			in = r->z.avail_in = (uInt)(r->rawlen - r->rawpos);
			r->z.next_out = (unsigned char *)r->d + r->dend;
			out = r->z.avail_out = (uInt)(room > (1u << 30) ?
			    (1u << 30) : room);
			k = inflate(&r->z, Z_NO_FLUSH);
			r->rawpos += in - r->z.avail_in;
			r->dend += out - r->z.avail_out;
			if (k == Z_STREAM_END)
				r->zend = 1;
			else if (k != Z_OK && k != Z_BUF_ERROR)
				return rfail(r, XDATA, "corrupt gzip data: %s",
				    r->z.msg ? r->z.msg : "inflate failed");
			if (out != r->z.avail_out)
				return 1;
		} else {
			ZSTD_inBuffer ib = { r->raw, r->rawlen, r->rawpos };
			ZSTD_outBuffer ob = { r->d + r->dend, room, 0 };
			size_t z;

			r->zend = 0;
			r->started = 1;
			z = ZSTD_decompressStream(r->zs, &ob, &ib);
			r->rawpos = ib.pos;
			r->dend += ob.pos;
			if (ZSTD_isError(z))
				return rfail(r, XDATA, "corrupt zstd data: %s",
				    ZSTD_getErrorName(z));
			r->zend = z == 0;
			if (ob.pos > 0)
				return 1;
		}
	}
}

/* Consume n decoded bytes (all in the buffer). */
static void
eat(struct warc_reader *r, size_t n)
{
	r->dstart += n;
	r->dpos += n;
}

/* Read through the block's bytes left, keeping them in keep (or not). */
static int
read_block(struct warc_reader *r, struct buf *keep)
{
	size_t k, n;
	int f;

	while (r->left > 0) {
		if (r->dstart == r->dend) {
			if ((f = dfill(r)) < 0)
				return -1;
			if (f == 0)
				return rfail(r, XDATA, "truncated record: "
				    "%llu bytes of the block missing",
				    (unsigned long long)r->left);
		}
		k = r->dend - r->dstart;
		if (k > r->left)
			k = (size_t)r->left;
		if (keep != NULL)
			buf_add(keep, r->d + r->dstart, k);
		eat(r, k);
		r->left -= k;
	}
	/* The record ends with CRLF CRLF. */
	while (r->dend - r->dstart < 4) {
		if ((f = dfill(r)) < 0)
			return -1;
		if (f == 0)
			break;
	}
	n = r->dend - r->dstart < 4 ? r->dend - r->dstart : 4;
	if (memcmp(r->d + r->dstart, "\r\n\r\n", n) != 0)
		return rfail(r, XDATA, "no CRLF CRLF after the block (a wrong "
		    "Content-Length?)");
	if (n < 4)
		return rfail(r, XDATA, "truncated record: no CRLF CRLF after "
		    "the block");
	eat(r, 4);
	r->inblock = 0;
	return 0;
}

int
warc_next(struct warc_reader *r, struct warc_rec *rec)
{
	size_t e, n;
	int f, member;
	uint64_t off;
	char err[256];

	if (r->inblock && read_block(r, NULL) < 0)
		return -1;
	/*
	 * A record at the start of a gzip member or zstd frame is found at
	 * the member's file offset; one in the middle of one, at its offset
	 * in the decoded data.
	 */
	member = r->dstart == r->dend && r->kind != WARC_PLAIN &&
	    (r->zend || !r->started);
	off = member ? r->rawoff + r->rawpos : r->dpos;
	r->recoff = off;
	for (;;) {
		if (r->dstart == r->dend) {
			if ((f = dfill(r)) < 0)
				return -1;
			if (f == 0)
				return 0;
		}
		/* Blank lines between records are passed over. */
		if (r->d[r->dstart] != '\r' && r->d[r->dstart] != '\n')
			break;
		eat(r, 1);
		member = 0;
		r->recoff = r->dpos;
	}
	if (!member)
		r->recoff = r->dpos;
	for (;;) {
		n = r->dend - r->dstart;
		if (n >= 5 && memcmp(r->d + r->dstart, "WARC/", 5) != 0)
			return rfail(r, XDATA, "no WARC record here");
		if ((e = warc_head_end(r->d + r->dstart, n)) > 0)
			break;
		if (n >= WARC_MAX_HEAD)
			return rfail(r, XDATA, "WARC header longer than %zu bytes",
			    WARC_MAX_HEAD);
		if ((f = dfill(r)) < 0)
			return -1;
		if (f == 0)
			return rfail(r, XDATA, "truncated record header");
	}
	rec->head.len = 0;
	buf_add(&rec->head, r->d + r->dstart, e);
	eat(r, e);
	if (warc_head_parse(rec->head.p, e, &rec->h, err, sizeof err) < 0)
		return rfail(r, XDATA, "%s", err);
	rec->offset = r->recoff;
	rec->member = member;
	rec->block.len = 0;
	rec->toolarge = 0;
	r->left = rec->h.length;
	r->inblock = 1;
	r->nrec++;
	return 1;
}

int
warc_block(struct warc_reader *r, struct warc_rec *rec, size_t max)
{
	rec->block.len = 0;
	rec->toolarge = rec->h.length > max;
	if (!r->inblock)
		return 0;
	if (!rec->toolarge)
		buf_reserve(&rec->block, (size_t)rec->h.length);
	return read_block(r, rec->toolarge ? NULL : &rec->block);
}

void
warc_rec_free(struct warc_rec *rec)
{
	buf_free(&rec->head);
	buf_free(&rec->block);
}

time_t
warc_date(const char *s)
{
	struct tm tm;
	int n = 0;

	if (s == NULL)
		return 0;
	memset(&tm, 0, sizeof tm);
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
	    &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    n < 19)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return timegm(&tm);
}

void
warc_malloc_tune(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 8 << 20);
}

/* ---- the end of one record ---- */

void
warc_end_init(struct warc_end *e)
{
	memset(e, 0, sizeof *e);
}

void
warc_end_free(struct warc_end *e)
{
	if (e->zinit)
		inflateEnd(&e->z);
	e->zinit = 0;
}

int
warc_end_feed(struct warc_end *e, const unsigned char *p, size_t n, char *err,
    size_t errsize)
{
	char head[WARC_MAX_HEAD];
	struct warc_head h;
	size_t hn;
	int k;

	if (n < e->fed) {
		warc_end_free(e);
		e->fed = 0;
	}
	if (n < 5)
		return 0;
	if (p[0] == 0x1f && p[1] == 0x8b) {
		if (!e->zinit) {
			memset(&e->z, 0, sizeof e->z);
			if (inflateInit2(&e->z, 15 + 16) != Z_OK)
				owt_fatal("cannot initialise zlib");
			e->zinit = 1;
			e->fed = 0;
		}
		e->z.next_in = (unsigned char *)p + e->fed;
		e->z.avail_in = (uInt)(n - e->fed);
		do {
			e->z.next_out = e->out;
			e->z.avail_out = sizeof e->out;
			k = inflate(&e->z, Z_NO_FLUSH);
			if (k == Z_STREAM_END)
				return 1;
			if (k != Z_OK && k != Z_BUF_ERROR)
				return owt_fail(err, errsize, NULL, XDATA,
				    "corrupt gzip data: %s", e->z.msg ? e->z.msg :
				    "inflate failed");
		} while (e->z.avail_in > 0 && e->z.avail_out == 0);
		e->fed = n - e->z.avail_in;
		return 0;
	}
	if (memcmp(p, "WARC/", 5) != 0)
		return owt_fail(err, errsize, NULL, XDATA, "%s",
		    memcmp(p, zstd_magic, 4) == 0 || memcmp(p, dict_magic, 4) == 0 ?
		    "a zstd record needs its length" : "no WARC record here");
	e->fed = n;
	if ((hn = warc_head_end((const char *)p, n < WARC_MAX_HEAD ? n :
	    WARC_MAX_HEAD)) == 0) {
		if (n >= WARC_MAX_HEAD)
			return owt_fail(err, errsize, NULL, XDATA,
			    "WARC header longer than %zu bytes", WARC_MAX_HEAD);
		return 0;
	}
	memcpy(head, p, hn);
	if (warc_head_parse(head, hn, &h, err, errsize) < 0)
		return -1;
	return h.length <= n - hn && n - hn - h.length >= 4;
}

/* ---- HTTP payloads ---- */

/* The value of a header line's field, trimmed: its length, with *v set. */
static size_t
field_value(const char *line, const char *e, const char *colon, const char **v)
{
	const char *s = colon + 1;

	(void)line;
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	*v = s;
	return (size_t)(e - s);
}

static int
coding_of(const char *v, size_t n)
{
	if (n == 0 || (n == 8 && strncasecmp(v, "identity", 8) == 0))
		return WARC_CE_IDENTITY;
	if ((n == 4 && strncasecmp(v, "gzip", 4) == 0) ||
	    (n == 6 && strncasecmp(v, "x-gzip", 6) == 0))
		return WARC_CE_GZIP;
	if (n == 7 && strncasecmp(v, "deflate", 7) == 0)
		return WARC_CE_DEFLATE;
	if (n == 2 && strncasecmp(v, "br", 2) == 0)
		return WARC_CE_BR;
	if (n == 4 && strncasecmp(v, "zstd", 4) == 0)
		return WARC_CE_ZSTD;
	return WARC_CE_OTHER;
}

int
warc_http_parse(const char *p, size_t n, struct warc_http *h, char *err,
    size_t errsize)
{
	const char *line, *nl, *e, *colon, *v, *end = p + n;
	size_t vn, i;

	memset(h, 0, sizeof *h);
	h->clen = -1;
	if (n < 12 || memcmp(p, "HTTP/", 5) != 0 ||
	    (nl = memchr(p, '\n', n)) == NULL)
		return owt_fail(err, errsize, NULL, XDATA,
		    "no HTTP status line");
	for (i = 5; p + i < nl && p[i] != ' '; i++)
		;
	while (p + i < nl && p[i] == ' ')
		i++;
	if (p + i + 3 > nl || !isdigit((unsigned char)p[i]) ||
	    !isdigit((unsigned char)p[i + 1]) || !isdigit((unsigned char)p[i + 2]))
		return owt_fail(err, errsize, NULL, XDATA, "bad HTTP status line");
	h->status = (p[i] - '0') * 100 + (p[i + 1] - '0') * 10 + (p[i + 2] - '0');
	for (line = nl + 1;; line = nl + 1) {
		if (line >= end || (nl = memchr(line, '\n',
		    (size_t)(end - line))) == NULL)
			return owt_fail(err, errsize, NULL, XDATA,
			    "HTTP header not ended");
		e = nl;
		if (e > line && e[-1] == '\r')
			e--;
		if (e == line)
			break;
		if ((colon = memchr(line, ':', (size_t)(e - line))) == NULL)
			continue;
		vn = field_value(line, e, colon, &v);
		if (name_is(line, (size_t)(colon - line), "Content-Type")) {
			h->ctype = v;
			h->ctype_len = vn;
		} else if (name_is(line, (size_t)(colon - line),
		    "Transfer-Encoding")) {
			for (i = 0; i + 7 <= vn; i++)
				if (strncasecmp(v + i, "chunked", 7) == 0)
					h->chunked = 1;
		} else if (name_is(line, (size_t)(colon - line),
		    "Content-Encoding")) {
			h->coding = coding_of(v, vn);
		} else if (name_is(line, (size_t)(colon - line),
		    "Content-Length")) {
			long long c = 0;

			for (i = 0; i < vn && i < 18 && isdigit((unsigned char)v[i]);
			    i++)
				c = c * 10 + (v[i] - '0');
			if (i == vn && vn > 0)
				h->clen = c;
		}
	}
	h->body = (size_t)(nl + 1 - p);
	/* Common Crawl, August 2018: an extra CRLF the Content-Length does not count. */
	if (h->clen >= 0 && n - h->body == (size_t)h->clen + 2 &&
	    p[h->body] == '\r' && p[h->body + 1] == '\n')
		h->body += 2;
	return 0;
}

int
warc_dechunk(char *p, size_t *n, char *err, size_t errsize)
{
	size_t i = 0, o = 0, len = *n, size, d;
	char *nl;

	for (;;) {
		size = 0;
		for (d = 0; i < len && isxdigit((unsigned char)p[i]); i++, d++) {
			if (d >= 15)
				return owt_fail(err, errsize, NULL, XDATA,
				    "bad chunk size");
			size = size * 16 + (size_t)(isdigit((unsigned char)p[i]) ?
			    p[i] - '0' : (tolower((unsigned char)p[i]) - 'a' + 10));
		}
		if (d == 0 || (nl = memchr(p + i, '\n', len - i)) == NULL)
			return owt_fail(err, errsize, NULL, XDATA,
			    "bad chunk size");
		i = (size_t)(nl - p) + 1;
		if (size == 0)
			break;
		if (size > len - i)
			return owt_fail(err, errsize, NULL, XDATA,
			    "chunk of %zu bytes past the end", size);
		memmove(p + o, p + i, size);
		o += size;
		i += size;
		if (i < len && p[i] == '\r')
			i++;
		if (i < len && p[i] == '\n')
			i++;
	}
	*n = o;
	return 0;
}

/*
 * The room for the next piece of a decoded payload in out: up to 1 MB,
 * reserved, or 0 when out holds max bytes already (the payload is cut).
 */
static size_t
room(struct buf *out, size_t max)
{
	size_t have;

	if (out->len >= max)
		return 0;
	have = max - out->len;
	if (have > 1 << 20)
		have = 1 << 20;
	buf_reserve(out, have);
	return have;
}

static int
decode_zlib(int raw, const char *p, size_t n, size_t max, struct buf *out,
    char *err, size_t errsize)
{
	z_stream z;
	int k;
	size_t have;

	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, raw ? -15 : 15 + 32) != Z_OK)
		owt_fatal("cannot initialise zlib");
	z.next_in = (unsigned char *)p;
	z.avail_in = (uInt)n;
	do {
		if ((have = room(out, max)) == 0) {
			inflateEnd(&z);
			return 1;
		}
		z.next_out = (unsigned char *)out->p + out->len;
		z.avail_out = (uInt)have;
		k = inflate(&z, Z_NO_FLUSH);
		out->len += have - z.avail_out;
		out->p[out->len] = '\0';
		if (k != Z_OK && k != Z_STREAM_END && !(k == Z_BUF_ERROR &&
		    z.avail_out == 0)) {
			inflateEnd(&z);
			return owt_fail(err, errsize, NULL, XDATA,
			    "corrupt %s payload: %s", raw ? "deflate" : "gzip",
			    k == Z_BUF_ERROR ? "truncated" : z.msg ? z.msg :
			    "inflate failed");
		}
	} while (k != Z_STREAM_END);
	inflateEnd(&z);
	return 0;
}

static int
decode_br(const char *p, size_t n, size_t max, struct buf *out, char *err,
    size_t errsize)
{
	BrotliDecoderState *s = BrotliDecoderCreateInstance(NULL, NULL, NULL);
	BrotliDecoderResult k;
	const uint8_t *in = (const uint8_t *)p;
	size_t avail_in = n, have, avail_out;
	uint8_t *o;

	if (s == NULL)
		owt_fatal("cannot initialise brotli");
	do {
		if ((have = room(out, max)) == 0) {
			BrotliDecoderDestroyInstance(s);
			return 1;
		}
		o = (uint8_t *)out->p + out->len;
		avail_out = have;
		k = BrotliDecoderDecompressStream(s, &avail_in, &in, &avail_out,
		    &o, NULL);
		out->len += have - avail_out;
		out->p[out->len] = '\0';
		if (k == BROTLI_DECODER_RESULT_ERROR ||
		    (k == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT)) {
			/* the message before the state it is read from goes */
			owt_fail(err, errsize, NULL, XDATA,
			    "corrupt br payload: %s", k == BROTLI_DECODER_RESULT_ERROR ?
			    BrotliDecoderErrorString(BrotliDecoderGetErrorCode(s)) :
			    "truncated");
			BrotliDecoderDestroyInstance(s);
			return -1;
		}
	} while (k != BROTLI_DECODER_RESULT_SUCCESS);
	BrotliDecoderDestroyInstance(s);
	return 0;
}

static int
decode_zstd(const char *p, size_t n, size_t max, struct buf *out, char *err,
    size_t errsize)
{
	ZSTD_DStream *zs = ZSTD_createDStream();
	ZSTD_inBuffer ib = { p, n, 0 };
	ZSTD_outBuffer ob;
	size_t have, z = 1;

	if (zs == NULL)
		owt_fatal("cannot initialise zstd");
	while (z != 0 || ib.pos < ib.size) {
		if ((have = room(out, max)) == 0) {
			ZSTD_freeDStream(zs);
			return 1;
		}
		ob.dst = out->p + out->len;
		ob.size = have;
		ob.pos = 0;
		z = ZSTD_decompressStream(zs, &ob, &ib);
		out->len += ob.pos;
		out->p[out->len] = '\0';
		if (ZSTD_isError(z) || (ob.pos < have && ib.pos == ib.size &&
		    z != 0)) {
			ZSTD_freeDStream(zs);
			return owt_fail(err, errsize, NULL, XDATA,
			    "corrupt zstd payload: %s", ZSTD_isError(z) ?
			    ZSTD_getErrorName(z) : "truncated");
		}
	}
	ZSTD_freeDStream(zs);
	return 0;
}

int
warc_decode(int coding, const char *p, size_t n, size_t max, struct buf *out,
    char *err, size_t errsize)
{
	int k;

	out->len = 0;
	/* Payloads stored decoded under their original header are common. */
	if (coding == WARC_CE_GZIP && !(n >= 2 && (unsigned char)p[0] == 0x1f &&
	    (unsigned char)p[1] == 0x8b))
		coding = WARC_CE_IDENTITY;
	switch (coding) {
	case WARC_CE_IDENTITY:
		buf_add(out, p, n > max ? max : n);
		return n > max;
	case WARC_CE_GZIP:
		return decode_zlib(0, p, n, max, out, err, errsize);
	case WARC_CE_DEFLATE:
		/* zlib-wrapped as RFC 9110 says, or raw as some servers send it. */
		if ((k = decode_zlib(0, p, n, max, out, err, errsize)) >= 0)
			return k;
		out->len = 0;
		return decode_zlib(1, p, n, max, out, err, errsize);
	case WARC_CE_BR:
		return decode_br(p, n, max, out, err, errsize);
	case WARC_CE_ZSTD:
		return decode_zstd(p, n, max, out, err, errsize);
	}
	return owt_fail(err, errsize, NULL, XDATA, "unknown content coding");
}
