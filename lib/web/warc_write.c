/*
 * warc_write.c - WARC archives written: one gzip member a record, sha1 digests, PREFIX.warc.gz.open renamed when closed
 *
 * A record is made whole in memory, compressed as one gzip member and
 * written with one write(2) loop, so that after a kill at most the last
 * record of the .open file is partial.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zlib.h>

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
wfail(struct warc_writer *w)
{
	snprintf(w->err, sizeof w->err, "cannot write '%s': %s", w->open,
	    strerror(errno));
	return -1;
}

void
warc_record_gz(const struct warc_out *r, char *id, struct buf *out)
{
	char uuid[48], dg[40], date[32];
	struct buf rec = { 0 };
	struct tm tm;
	z_stream z;
	size_t len = 0;
	int i;

	for (i = 0; i < r->nblock; i++)
		len += r->block[i].iov_len;
	warc_uuid(uuid);
	if (id != NULL)
		memcpy(id, uuid, sizeof uuid);
	warc_digest(r->block, r->nblock, dg);
	gmtime_r(&r->date, &tm);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
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

	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		owt_fatal("cannot initialise zlib");
	out->len = 0;
	buf_reserve(out, deflateBound(&z, rec.len));
	z.next_in = (unsigned char *)rec.p;
	z.avail_in = (uInt)rec.len;
	z.next_out = (unsigned char *)out->p;
	z.avail_out = (uInt)(out->cap - 1);
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		owt_fatal("deflate did not finish a record");
	out->len = z.total_out;
	deflateEnd(&z);
	buf_free(&rec);
}

int
warc_writer_write(struct warc_writer *w, const void *p, size_t n)
{
	size_t off;
	ssize_t k;

	for (off = 0; off < n; off += (size_t)k) {
		k = write(w->fd, (const char *)p + off, n - off);
		if (k < 0 && errno == EINTR)
			k = 0;
		else if (k <= 0)
			return wfail(w);
	}
	w->off += n;
	return 0;
}

int
warc_writer_put(struct warc_writer *w, const struct warc_out *r, char *id)
{
	warc_record_gz(r, id, &w->gz);
	w->nrec++;
	return warc_writer_write(w, w->gz.p, w->gz.len);
}

int
warc_writer_open(struct warc_writer *w, const char *prefix, const char *info)
{
	struct iovec v = { (void *)info, strlen(info) };
	struct warc_out r = { "warcinfo", NULL, time(NULL),
		"application/warc-fields", NULL, &v, 1 };
	size_t n = strlen(prefix);

	memset(w, 0, sizeof *w);
	w->fd = -1;
	w->path = xmalloc(n + 9);
	snprintf(w->path, n + 9, "%s.warc.gz", prefix);
	w->open = xmalloc(n + 14);
	snprintf(w->open, n + 14, "%s.warc.gz.open", prefix);
	if ((w->fd = open(w->open, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0666)) < 0) {
		snprintf(w->err, sizeof w->err, "cannot create '%s': %s", w->open,
		    strerror(errno));
		return -1;
	}
	return warc_writer_put(w, &r, NULL);
}

int
warc_writer_close(struct warc_writer *w)
{
	int fd = w->fd;

	if (fd < 0)
		return 0;
	w->fd = -1;
	if (fsync(fd) != 0 || close(fd) != 0) {
		errno = errno ? errno : EIO;
		return wfail(w);
	}
	if (rename(w->open, w->path) != 0) {
		snprintf(w->err, sizeof w->err, "cannot rename '%s': %s", w->open,
		    strerror(errno));
		return -1;
	}
	return 0;
}

void
warc_writer_free(struct warc_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	free(w->path);
	free(w->open);
	buf_free(&w->gz);
	w->path = w->open = NULL;
}
