/*
 * warc_write.c - WARC archives written: one gzip member a record, sha1 digests, rotation, wget's CDX, recovery after a kill
 *
 * A record is compressed as one gzip member (libdeflate) on a worker;
 * the records of an item are added as a group, kept in memory and
 * written when the run flushes its output (one write(2) loop for all
 * that is pending), so that after a kill at most the last group of the
 * .open file is partial, and warc_recover cuts it off.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <unistd.h>

#include <libdeflate.h>
#include <openssl/evp.h>
#include <zlib.h>

#include "web/warc.h"
#include "web/warc_write.h"

void
warc_digest(const struct iovec *v, int n, char *out)
{
	static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i, bits = 0, acc = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int k;

	if (c == NULL || !EVP_DigestInit_ex(c, EVP_sha1(), NULL))
		owt_fatal("cannot initialise SHA-1");
	for (k = 0; k < n; k++)
		EVP_DigestUpdate(c, v[k].iov_base, v[k].iov_len);
	EVP_DigestFinal_ex(c, md, &len);
	EVP_MD_CTX_free(c);
	memcpy(out, "sha1:", 5);
	out += 5;
	/* 160 bits: 32 characters of 5 bits, no padding. */
	for (i = 0; i < len; i++) {
		acc = acc << 8 | md[i];
		bits += 8;
		while (bits >= 5) {
			*out++ = b32[(acc >> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	*out = '\0';
}

void
warc_uuid(char *out)
{
	unsigned char u[16];
	size_t got = 0;
	ssize_t k;

	while (got < sizeof u) {
		k = getrandom(u + got, sizeof u - got, 0);
		if (k < 0 && errno != EINTR)
			owt_fatal("getrandom: %s", strerror(errno));
		if (k > 0)
			got += (size_t)k;
	}
	u[6] = (u[6] & 0x0f) | 0x40;
	u[8] = (u[8] & 0x3f) | 0x80;
	snprintf(out, 48, "<urn:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x>", u[0], u[1], u[2], u[3], u[4], u[5], u[6],
	    u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static int
wfail(struct warc_writer *w, const char *what, const char *path)
{
	if (errno == 0)
		errno = EIO;
	return owt_fail_errno(w->err, sizeof w->err, &w->errcode, XSYS,
	    "cannot %s '%s'", what, path);
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t k;

	while (n > 0) {
		k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

void
warc_record_gz(const struct warc_out *r, char *id, struct buf *out)
{
	char uuid[48], dg[40], date[32];
	struct libdeflate_compressor *c;
	struct buf rec = { 0 };
	struct tm tm;
	size_t len = 0, bound, n;
	int i;

	for (i = 0; i < r->nblock; i++)
		len += r->block[i].iov_len;
	warc_uuid(uuid);
	if (id != NULL)
		memcpy(id, uuid, sizeof uuid);
	warc_digest(r->block, r->nblock, dg);
	gmtime_r(&r->date, &tm);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	buf_reserve(&rec, len + 1024);
	buf_printf(&rec, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: %s\r\n"
	    "WARC-Date: %s\r\n", r->type, uuid, date);
	if (r->uri != NULL)
		buf_printf(&rec, "WARC-Target-URI: %s\r\n", r->uri);
	if (r->fields != NULL)
		buf_adds(&rec, r->fields);
	if (r->ctype != NULL)
		buf_printf(&rec, "Content-Type: %s\r\n", r->ctype);
	buf_printf(&rec, "WARC-Block-Digest: %s\r\nContent-Length: %zu\r\n\r\n",
	    dg, len);
	for (i = 0; i < r->nblock; i++)
		buf_add(&rec, r->block[i].iov_base, r->block[i].iov_len);
	buf_add(&rec, "\r\n\r\n", 4);

	/*
	 * libdeflate, whole-buffer: at level 1 about 3 times as fast as
	 * zlib's level 1 on web pages, and smaller (contrib/bench/RESULTS.md).
	 */
	if ((c = libdeflate_alloc_compressor(r->stored ? 0 :
	    WARC_GZIP_LEVEL)) == NULL)
		owt_fatal("cannot allocate a deflate compressor");
	bound = libdeflate_gzip_compress_bound(c, rec.len);
	buf_reserve(out, bound);
	n = libdeflate_gzip_compress(c, rec.p, rec.len, out->p + out->len, bound);
	if (n == 0)
		owt_fatal("deflate did not take a record");
	out->len += n;
	out->p[out->len] = '\0';
	libdeflate_free_compressor(c);
	buf_free(&rec);
}

static char *
file_name(const char *prefix, int seq, const char *sfx)
{
	size_t n = strlen(prefix) + 40;
	char *p = xmalloc(n);

	if (seq < 0)
		snprintf(p, n, "%s.warc.gz%s", prefix, sfx);
	else
		snprintf(p, n, "%s-%05d.warc.gz%s", prefix, seq, sfx);
	return p;
}

/* Create the file w->seq and add its warcinfo record. */
static int
start_file(struct warc_writer *w)
{
	struct iovec v = { w->info, strlen(w->info) };
	struct warc_out r = { "warcinfo", NULL, time(NULL),
		"application/warc-fields", NULL, &v, 1, 0 };
	const char *base;
	char fields[512];

	free(w->path);
	free(w->open);
	w->path = file_name(w->prefix, w->seq, "");
	w->open = file_name(w->prefix, w->seq, ".open");
	if ((w->fd = open(w->open, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0666)) < 0)
		return wfail(w, "create", w->open);
	base = strrchr(w->path, '/');
	snprintf(fields, sizeof fields, "WARC-Filename: %s\r\n",
	    base ? base + 1 : w->path);
	r.fields = fields;
	w->off = 0;
	w->nfiles++;
	w->gz.len = 0;
	warc_record_gz(&r, NULL, &w->gz);
	buf_add(&w->pend, w->gz.p, w->gz.len);
	w->off += w->gz.len;
	w->nrec++;
	return 0;
}

int
warc_writer_flush(struct warc_writer *w)
{
	if (w->fd >= 0 && w->pend.len > 0) {
		if (write_all(w->fd, w->pend.p, w->pend.len) < 0)
			return wfail(w, "write", w->open);
		w->pend.len = 0;
	}
	if (w->cdxfd >= 0 && w->cdxpend.len > 0) {
		if (write_all(w->cdxfd, w->cdxpend.p, w->cdxpend.len) < 0)
			return wfail(w, "write", w->cdxpath);
		w->cdxpend.len = 0;
	}
	return 0;
}

/* Flush, sync, close and rename the file written. */
static int
end_file(struct warc_writer *w)
{
	int fd = w->fd;

	if (fd < 0)
		return 0;
	if (warc_writer_flush(w) < 0)
		return -1;
	w->fd = -1;
	errno = 0;
	if (fsync(fd) != 0 || close(fd) != 0)
		return wfail(w, "write", w->open);
	if (rename(w->open, w->path) != 0)
		return wfail(w, "rename", w->open);
	return 0;
}

int
warc_writer_open(struct warc_writer *w, const char *prefix,
    const char *info, uint64_t max_size, int seq, int cdx, int append)
{
	struct stat st;
	size_t n = strlen(prefix);

	memset(w, 0, sizeof *w);
	w->fd = w->cdxfd = -1;
	w->prefix = xstrdup(prefix);
	w->info = xstrdup(info);
	w->max_size = max_size;
	w->seq = seq;
	if (cdx) {
		w->cdxpath = xmalloc(n + 5);
		snprintf(w->cdxpath, n + 5, "%s.cdx", prefix);
		if ((w->cdxfd = open(w->cdxpath, O_WRONLY | O_CREAT | O_CLOEXEC |
		    (append ? O_APPEND : O_TRUNC), 0666)) < 0)
			return wfail(w, "create", w->cdxpath);
		if (fstat(w->cdxfd, &st) == 0 && st.st_size == 0)
			buf_adds(&w->cdxpend, " CDX a b a m s k r M V g u\n");
	}
	return start_file(w);
}

int
warc_writer_group(struct warc_writer *w, const struct iovec *parts, int n,
    const char *cdx, size_t cdxlen)
{
	const char *p = cdx, *e = cdx + cdxlen, *t1, *t2, *nl;
	uint64_t base;
	int i;

	if (w->fd < 0)
		return owt_fail(w->err, sizeof w->err, &w->errcode, XSYS,
		    "'%s' is closed", w->path);
	if (w->max_size > 0 && w->off >= w->max_size) {
		if (end_file(w) < 0)
			return -1;
		w->seq++;
		if (start_file(w) < 0)
			return -1;
	}
	base = w->off;
	for (i = 0; i < n; i++) {
		buf_add(&w->pend, parts[i].iov_base, parts[i].iov_len);
		w->off += parts[i].iov_len;
	}
	while (w->cdxfd >= 0 && p < e) {
		nl = memchr(p, '\n', (size_t)(e - p));
		nl = nl ? nl : e;
		t1 = memchr(p, '\t', (size_t)(nl - p));
		t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(nl - t1 - 1)) : NULL;
		if (t2 != NULL)
			buf_printf(&w->cdxpend, "%.*s %llu %s %.*s\n", (int)(t1 - p),
			    p, (unsigned long long)(base + strtoull(t1 + 1, NULL, 10)),
			    w->path, (int)(nl - t2 - 1), t2 + 1);
		p = nl + 1;
	}
	return 0;
}

int
warc_writer_put(struct warc_writer *w, const struct warc_out *r, char *id)
{
	struct iovec v;

	w->gz.len = 0;
	warc_record_gz(r, id, &w->gz);
	w->nrec++;
	v.iov_base = w->gz.p;
	v.iov_len = w->gz.len;
	return warc_writer_group(w, &v, 1, NULL, 0);
}

int
warc_writer_close(struct warc_writer *w)
{
	int fd;

	if (end_file(w) < 0)
		return -1;
	if ((fd = w->cdxfd) >= 0) {
		w->cdxfd = -1;
		if (close(fd) != 0)
			return wfail(w, "write", w->cdxpath);
	}
	return 0;
}

void
warc_writer_free(struct warc_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	if (w->cdxfd >= 0)
		close(w->cdxfd);
	w->fd = w->cdxfd = -1;
	free(w->prefix);
	free(w->path);
	free(w->open);
	free(w->info);
	free(w->cdxpath);
	buf_free(&w->gz);
	buf_free(&w->pend);
	buf_free(&w->cdxpend);
	w->prefix = w->path = w->open = w->info = w->cdxpath = NULL;
}

/* ---- CDX ---- */

/*
 * The value of header field name in the head h[0..n) (up to its empty
 * line), spaces trimmed: *v and *vn, 1; 0 when absent.
 */
static int
hfield(const char *h, size_t n, const char *name, const char **v, size_t *vn)
{
	size_t nl = strlen(name), i = 0, k;
	const char *e, *s, *t;

	while (i < n) {
		e = memchr(h + i, '\n', n - i);
		k = e ? (size_t)(e - (h + i)) : n - i;
		if (k == 0 || (k == 1 && h[i] == '\r'))
			break;
		if (k > nl && h[i + nl] == ':' && strncasecmp(h + i, name, nl) == 0) {
			s = h + i + nl + 1;
			t = h + i + k;
			while (s < t && (*s == ' ' || *s == '\t'))
				s++;
			while (t > s && (t[-1] == '\r' || t[-1] == ' ' || t[-1] == '\t'))
				t--;
			*v = s;
			*vn = (size_t)(t - s);
			return 1;
		}
		i += k + 1;
	}
	return 0;
}

void
warc_cdx_line(const char *uri, const char *date, const char *http,
    size_t n, const char *pdigest, struct buf *out)
{
	char ts[15], err[128], code[16];
	struct warc_http h;
	const char *v = NULL, *m = NULL;
	size_t vn = 0, mn = 0, k = 0;

	for (; date != NULL && *date && k < 14; date++)
		if (*date >= '0' && *date <= '9')
			ts[k++] = *date;
	ts[k] = '\0';
	snprintf(code, sizeof code, "-");
	if (warc_http_parse(http, n, &h, err, sizeof err) == 0) {
		snprintf(code, sizeof code, "%ld", h.status);
		if (h.ctype != NULL) {
			m = h.ctype;
			for (mn = 0; mn < h.ctype_len && m[mn] != ';' && m[mn] != ' ' &&
			    m[mn] != '\t'; mn++)
				;
		}
	}
	hfield(http, n, "Location", &v, &vn);
	buf_printf(out, "%s %s %s %.*s %s %s %.*s -", uri, k ? ts : "-", uri,
	    (int)(mn ? mn : 1), mn ? m : "-", code,
	    pdigest && strncmp(pdigest, "sha1:", 5) == 0 && pdigest[5] ?
	    pdigest + 5 : "-", (int)(vn ? vn : 1), vn ? v : "-");
}

/* ---- recovery ---- */

/* A record over this (decompressed) is not one of ours: the scan stops. */
#define RECOVER_MAX ((size_t)1 << 31)

/* The scan of one .open file. */
struct scan {
	const char *name;	/* the file's name when closed, CDX's g */
	void (*url)(void *, const char *, size_t);
	void *arg;
	struct buf *cdx;	/* lines kept, or NULL */
	struct buf cdxtmp;	/* lines of responses after the last metadata */
	uint64_t cut;		/* the end of the last warcinfo or metadata record */
	uint64_t bad;		/* the offset of a member not ours, or UINT64_MAX */
};

/*
 * Check the record rec[0..n) that the gzip member at off held: 1 when it
 * is whole and right (its URL and CDX line taken), 0 when not.
 */
static int
scan_record(struct scan *s, char *rec, size_t n, uint64_t off, uint64_t end)
{
	char dg[40], have[64], pd[64], err[128];
	struct warc_head h;
	struct iovec v;
	const char *f;
	size_t hl, fn;

	if ((hl = warc_head_end(rec, n)) == 0)
		return 0;
	have[0] = pd[0] = '\0';
	if (hfield(rec, hl, "WARC-Block-Digest", &f, &fn) && fn < sizeof have)
		snprintf(have, sizeof have, "%.*s", (int)fn, f);
	if (hfield(rec, hl, "WARC-Payload-Digest", &f, &fn) && fn < sizeof pd)
		snprintf(pd, sizeof pd, "%.*s", (int)fn, f);
	if (warc_head_parse(rec, hl, &h, err, sizeof err) < 0 ||
	    h.length != n - hl - 4 || memcmp(rec + n - 4, "\r\n\r\n", 4) != 0)
		return 0;
	v.iov_base = rec + hl;
	v.iov_len = (size_t)h.length;
	warc_digest(&v, 1, dg);
	if (strcmp(dg, have) != 0)
		return 0;
	if (h.type == WARC_RESPONSE && s->cdx != NULL && h.target != NULL) {
		warc_cdx_line(h.target, h.date, rec + hl, (size_t)h.length,
		    pd[0] ? pd : NULL, &s->cdxtmp);
		buf_printf(&s->cdxtmp, " %llu %s %s\n", (unsigned long long)off,
		    s->name, h.id ? h.id : "-");
	}
	if (h.type == WARC_METADATA) {
		if (hfield(rec + hl, (size_t)h.length, "input-url", &f, &fn))
			s->url(s->arg, f, fn);
		else if (h.target != NULL)
			s->url(s->arg, h.target, strlen(h.target));
	}
	if (h.type == WARC_METADATA || h.type == WARC_WARCINFO) {
		s->cut = end;
		if (s->cdx != NULL)
			buf_add(s->cdx, s->cdxtmp.p, s->cdxtmp.len);
		s->cdxtmp.len = 0;
	}
	return 1;
}

/* Scan the gzip members of fd from the start; s->cut is what to keep. */
static int
scan_file(struct scan *s, int fd, const char *path, char *err,
    size_t errsize, int *code)
{
	unsigned char *in = xmalloc(1 << 16);
	struct buf rec = { 0 };
	uint64_t off = 0, mstart = 0;	/* file offset of in[0], of the member */
	z_stream z;
	ssize_t k;
	int r = 0, zr;

	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		owt_fatal("cannot initialise zlib");
	for (;;) {
		if (z.avail_in == 0) {
			off += (uint64_t)(z.next_in ? z.next_in - in : 0);
			if ((k = read(fd, in, 1 << 16)) < 0) {
				if (errno == EINTR)
					continue;
				r = owt_fail_errno(err, errsize, code, XSYS,
				    "cannot read '%s'", path);
				break;
			}
			if (k == 0)
				break;
			z.next_in = in;
			z.avail_in = (uInt)k;
		}
		buf_reserve(&rec, 1 << 16);
		z.next_out = (unsigned char *)rec.p + rec.len;
		z.avail_out = (uInt)(rec.cap - rec.len - 1);
		zr = inflate(&z, Z_NO_FLUSH);
		rec.len = rec.cap - 1 - z.avail_out;
		if (zr == Z_STREAM_END) {
			uint64_t end = off + (uint64_t)(z.next_in - in);

			if (!scan_record(s, rec.p, rec.len, mstart, end)) {
				s->bad = mstart;
				break;
			}
			mstart = end;
			rec.len = 0;
			inflateReset(&z);
		} else if ((zr != Z_OK && zr != Z_BUF_ERROR) || rec.len > RECOVER_MAX) {
			s->bad = mstart;
			break;
		}
	}
	inflateEnd(&z);
	free(in);
	buf_free(&rec);
	return r;
}

/* Recover one .open file into name (see warc_recover). */
static int
recover_file(struct scan *s, const char *path, uint64_t *ncut, char *err,
    size_t errsize, int *code)
{
	struct stat st;
	int fd;

	if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		return owt_fail_errno(err, errsize, code, XSYS, "cannot open '%s'",
		    path);
	}
	s->cut = 0;
	s->bad = UINT64_MAX;
	s->cdxtmp.len = 0;
	if (scan_file(s, fd, path, err, errsize, code) < 0) {
		close(fd);
		return -1;
	}
	/* Not even a first record cut short: not what a run of ours left. */
	if (s->cut == 0 && s->bad == 0) {
		close(fd);
		return owt_fail(err, errsize, code, XDATA, "%s:0: not a WARC file "
		    "of owt-fetch: remove it, or give another prefix", path);
	}
	*ncut += (uint64_t)st.st_size - s->cut;
	if (s->cut == 0) {
		close(fd);
		if (unlink(path) != 0)
			return owt_fail_errno(err, errsize, code, XSYS,
			    "cannot remove '%s'", path);
		return 0;
	}
	if ((s->cut < (uint64_t)st.st_size && ftruncate(fd, (off_t)s->cut) != 0) ||
	    fsync(fd) != 0) {
		close(fd);
		return owt_fail_errno(err, errsize, code, XSYS,
		    "cannot truncate '%s'", path);
	}
	close(fd);
	if (rename(path, s->name) != 0)
		return owt_fail_errno(err, errsize, code, XSYS,
		    "cannot rename '%s'", path);
	return 0;
}

/* Is the CDX line l[0..n) of one of the files named in names[0..nn)? */
static int
cdx_of(const char *l, size_t n, char **names, size_t nn)
{
	const char *g, *e = l + n;
	size_t i;

	/* g is the field before the last. */
	while (e > l && e[-1] != ' ')
		e--;
	if (e == l)
		return 0;
	g = --e;
	while (g > l && g[-1] != ' ')
		g--;
	for (i = 0; i < nn; i++)
		if (strlen(names[i]) == (size_t)(e - g) &&
		    memcmp(names[i], g, (size_t)(e - g)) == 0)
			return 1;
	return 0;
}

/* PREFIX.cdx without the lines of names[0..nn), with lines added. */
static int
rewrite_cdx(const char *prefix, char **names, size_t nn,
    const struct buf *add, char *err, size_t errsize, int *code)
{
	char *path = file_name(prefix, -1, ""), *tmp;
	struct buf b = { 0 }, out = { 0 };
	size_t n = strlen(prefix), i = 0, k;
	const char *nl;
	FILE *fp;
	int fd, r = 0;

	snprintf(path, n + 40, "%s.cdx", prefix);
	tmp = file_name(prefix, -1, "");
	snprintf(tmp, n + 40, "%s.cdx.tmp", prefix);
	if ((fp = fopen(path, "r")) != NULL) {
		char chunk[8192];

		while ((k = fread(chunk, 1, sizeof chunk, fp)) > 0)
			buf_add(&b, chunk, k);
		fclose(fp);
	}
	if (b.len == 0)
		buf_adds(&out, " CDX a b a m s k r M V g u\n");
	while (i < b.len) {
		nl = memchr(b.p + i, '\n', b.len - i);
		k = nl ? (size_t)(nl - (b.p + i)) : b.len - i;
		/* A line cut by the kill has no newline: it goes. */
		if (nl != NULL && (b.p[i] == ' ' || !cdx_of(b.p + i, k, names, nn)))
			buf_add(&out, b.p + i, k + 1);
		i += k + 1;
	}
	buf_add(&out, add->p, add->len);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0 ||
	    write_all(fd, out.p, out.len) < 0 || fsync(fd) != 0 ||
	    close(fd) != 0 || rename(tmp, path) != 0)
		r = owt_fail_errno(err, errsize, code, XSYS, "cannot write '%s'",
		    path);
	buf_free(&b);
	buf_free(&out);
	free(path);
	free(tmp);
	return r;
}

int
warc_recover(const char *prefix, int cdx,
    void (*url)(void *arg, const char *u, size_t n), void *arg, int *next,
    uint64_t *ncut, char *err, size_t errsize, int *code)
{
	const char *slash = strrchr(prefix, '/');
	char *dir = slash ? xstrndup(prefix, (size_t)(slash - prefix + 1)) :
	    xstrdup("./");
	const char *base = slash ? slash + 1 : prefix, *p;
	size_t bl = strlen(base), nn = 0, cap = 0, i;
	char **names = NULL, **opens = NULL, **closed = NULL;
	size_t nc = 0, ccap = 0;
	int *oseq = NULL;
	struct scan s = { 0 };
	struct buf lines = { 0 };
	struct dirent *de;
	int max = -2, seq, r = 0;
	DIR *d;

	*ncut = 0;
	if ((d = opendir(dir)) == NULL) {
		r = owt_fail_errno(err, errsize, code, XSYS, "cannot read '%s'", dir);
		free(dir);
		return r;
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, base, bl) != 0)
			continue;
		p = de->d_name + bl;
		seq = -1;
		if (*p == '-' && p[1] >= '0' && p[1] <= '9') {
			seq = (int)strtol(p + 1, (char **)&p, 10);
		}
		if (strcmp(p, ".warc.gz") != 0 && strcmp(p, ".warc.gz.open") != 0)
			continue;
		if (strcmp(p, ".warc.gz.open") == 0) {
			names = xgrow(names, &cap, nn + 1, sizeof *names);
			opens = xrealloc(opens, cap * sizeof *opens);
			oseq = xrealloc(oseq, cap * sizeof *oseq);
			oseq[nn] = seq;
			opens[nn] = file_name(prefix, seq, ".open");
			names[nn++] = file_name(prefix, seq, "");
		} else {
			if (seq > max || (seq == -1 && max < -1))
				max = seq;
			closed = xgrow(closed, &ccap, nc + 1, sizeof *closed);
			closed[nc++] = file_name(prefix, seq, "");
		}
	}
	closedir(d);
	free(dir);
	s.url = url;
	s.arg = arg;
	s.cdx = cdx ? &lines : NULL;
	for (i = 0; i < nn && r == 0; i++) {
		s.name = names[i];
		r = recover_file(&s, opens[i], ncut, err, errsize, code);
	}
	if (r == 0 && cdx && nn > 0)
		r = rewrite_cdx(prefix, names, nn, &lines, err, errsize, code);
	/* The next number: past the files there are now (one removed is not). */
	for (i = 0; i < nn; i++)
		if ((oseq[i] > max || (oseq[i] == -1 && max < -1)) &&
		    access(names[i], F_OK) == 0)
			max = oseq[i];
	*next = max == -2 ? -1 : max == -1 ? 1 : max + 1;
	/* The files closed before: their URLs only (the log may lag them). */
	s.cdx = NULL;
	for (i = 0; i < nc && r == 0; i++) {
		int fd;

		s.name = closed[i];
		s.bad = UINT64_MAX;
		if ((fd = open(closed[i], O_RDONLY | O_CLOEXEC)) < 0)
			r = owt_fail_errno(err, errsize, code, XSYS,
			    "cannot open '%s'", closed[i]);
		else {
			r = scan_file(&s, fd, closed[i], err, errsize, code);
			close(fd);
		}
	}
	for (i = 0; i < nc; i++)
		free(closed[i]);
	free(closed);
	for (i = 0; i < nn; i++) {
		free(names[i]);
		free(opens[i]);
	}
	free(names);
	free(opens);
	free(oseq);
	buf_free(&lines);
	buf_free(&s.cdxtmp);
	return r;
}
