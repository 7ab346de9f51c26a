/* input.c - input files: plain, gzip or zstd (by content), read whole or by line */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "core/input.h"

#define RAWSIZE (256u << 10)

const char *const input_bad_name[BAD_NREASONS] = {
	"", "unreadable file", "read error", "corrupt compressed data",
	"line too long", "empty line", "invalid UTF-8", "invalid JSON",
	"not an object", "missing text field"
};
#define CHUNK (1u << 20)

/*
 * A read error (XSYS) or bad compressed data (XDATA) at the next line:
 * "FILE:LINE: what", or "FILE:LINE: what: detail".
 */
static int
fail(struct input *in, int code, const char *what, const char *detail)
{
	in->reason = code == XSYS ? BAD_READ : BAD_COMPRESSED;
	return owt_fail(in->err, sizeof in->err, &in->errcode, code,
	    "%s:%lu: %s%s%s", in->name, in->lineno + 1, what,
	    detail ? ": " : "", detail ? detail : "");
}

static int
fail_errno(struct input *in)
{
	return fail(in, XSYS, strerror(errno), NULL);
}

int
input_maxline(size_t *max, char *err, size_t errsize, int *code)
{
	const char *s = getenv("OWT_MAX_LINE");
	char *end;
	unsigned long long v;

	*max = INPUT_MAX_LINE;
	if (s == NULL || *s == '\0')
		return 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0' || v < 1024 || v > (1ULL << 31))
		return owt_fail(err, errsize, code, XUSAGE, "OWT_MAX_LINE: "
		    "'%s' is out of range 1024..%llu", s, 1ULL << 31);
	*max = (size_t)v;
	return 0;
}

static int
maxline_check(char *err, size_t errsize, int *code)
{
	size_t max;

	return input_maxline(&max, err, errsize, code);
}

/*
 * OWT_MAX_LINE checked at start-up (owt_setprog), before any input is
 * opened, in the programs that link this file: registered from here,
 * so that util.c names nothing of input.c.
 */
static void __attribute__((constructor))
maxline_register(void)
{
	static struct owt_start_check c = { maxline_check, NULL };

	owt_start_check_add(&c);
}

int
input_ready(const struct input *in)
{
	struct pollfd p = { in->fd, POLLIN, 0 };

	return poll(&p, 1, 0) != 0;
}

/*
 * Before a read that would wait (a pipe or terminal with nothing to read
 * yet), tell the reader, so that it can pass on what it has.
 */
static void
before_read(struct input *in)
{
	if (in->stall != NULL && !input_ready(in))
		in->stall(in->stall_arg);
}

/* Read more compressed bytes into in->raw. 0, or -1 on a read error. */
static int
raw_fill(struct input *in)
{
	ssize_t r;

	if (in->rawpos > 0) {
		memmove(in->raw, in->raw + in->rawpos, in->rawlen - in->rawpos);
		in->rawlen -= in->rawpos;
		in->rawpos = 0;
	}
	while (in->rawlen < in->rawcap && !in->raweof) {
		before_read(in);
		r = read(in->fd, in->raw + in->rawlen, in->rawcap - in->rawlen);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return fail_errno(in);
		}
		if (r == 0)
			in->raweof = 1;
		in->rawlen += (size_t)r;
		in->nread += (uint64_t)r;
		if (r > 0)
			break;
	}
	return 0;
}

int
input_open(struct input *in, const char *path)
{
	static const unsigned char zstdmagic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	struct stat st;

	memset(in, 0, sizeof *in);
	if (input_maxline(&in->maxline, in->err, sizeof in->err,
	    &in->errcode) < 0) {
		in->fd = -1;
		return -1;
	}
	if (path == NULL || strcmp(path, "-") == 0) {
		in->name = "<stdin>";
		in->fd = STDIN_FILENO;
	} else {
		in->name = path;
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0) {
			in->reason = BAD_OPEN;
			return owt_fail_errno(in->err, sizeof in->err,
			    &in->errcode, XDATA, "cannot open '%s'", path);
		}
	}
	/* A directory opens, then fails to read: bad input, not a system error. */
	if (fstat(in->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		in->reason = BAD_OPEN;
		owt_fail(in->err, sizeof in->err, &in->errcode, XDATA,
		    "cannot read '%s': a directory", in->name);
		if (in->fd > STDIN_FILENO)
			close(in->fd);
		in->fd = -1;
		return -1;
	}
	in->rawcap = RAWSIZE;
	in->raw = xmalloc(in->rawcap);
	/* Sniff the format from the first bytes, whatever the name says. */
	while (in->rawlen < 4 && !in->raweof)
		if (raw_fill(in) < 0) {
			input_close(in);
			return -1;
		}
	if (in->rawlen >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b) {
		if (inflateInit2(&in->z, 15 + 32) != Z_OK) {
			owt_fail(in->err, sizeof in->err, &in->errcode, XSYS,
			    "%s: cannot initialise zlib", in->name);
			goto fail;
		}
		in->kind = IN_GZIP;
	} else if (in->rawlen >= 4 && memcmp(in->raw, zstdmagic, 4) == 0) {
		in->kind = IN_ZSTD;
		in->zs = ZSTD_createDStream();
		/*
		 * Frames of zstd --long=31 (the Reddit dumps) declare a 2 GiB
		 * window; the default limit is 128 MB. The memory is only
		 * taken when a frame declares it.
		 */
		if (in->zs == NULL || ZSTD_isError(ZSTD_initDStream(in->zs)) ||
		    ZSTD_isError(ZSTD_DCtx_setParameter(in->zs,
		    ZSTD_d_windowLogMax, INPUT_ZSTD_WINDOWLOG))) {
			owt_fail(in->err, sizeof in->err, &in->errcode, XSYS,
			    "%s: cannot initialise zstd", in->name);
			goto fail;
		}
	}
	return 0;
fail:
	in->errcode = XSYS;
	in->reason = BAD_READ;
	input_close(in);
	return -1;
}

void
input_close(struct input *in)
{
	if (in->kind == IN_GZIP)
		inflateEnd(&in->z);
	if (in->zs)
		ZSTD_freeDStream(in->zs);
	if (in->map != NULL)
		munmap((void *)in->map, in->mapsize);
	in->map = NULL;
	if (in->fd > STDIN_FILENO)
		close(in->fd);
	in->fd = -1;
	free(in->raw);
	free(in->buf);
	in->raw = NULL;
	in->buf = NULL;
	in->zs = NULL;
	in->fd = -1;
	in->kind = IN_PLAIN;
}

/*
 * Compressed bytes to decompress: 1 when some are buffered, 0 at the end
 * of a complete stream, -1 on a read error or when the stream stops in
 * the middle (truncated: the message).
 */
static int
more_raw(struct input *in, const char *truncated)
{
	while (in->rawpos == in->rawlen) {
		if (in->raweof) {
			if (in->zdone)
				return 0;
			return fail(in, XDATA, truncated, NULL);
		}
		if (raw_fill(in) < 0)
			return -1;
	}
	return 1;
}

static ssize_t
read_gzip(struct input *in, unsigned char *dst, size_t n)
{
	int r;

	for (;;) {
		if ((r = more_raw(in, "truncated gzip data")) <= 0)
			return r;
		if (in->zdone) {
			/* Another gzip member follows (concatenated .gz files). */
			if (inflateReset(&in->z) != Z_OK)
				owt_fatal("cannot reset zlib");
			in->zdone = 0;
		}
		in->z.next_in = in->raw + in->rawpos;
		in->z.avail_in = (uInt)(in->rawlen - in->rawpos);
		in->z.next_out = dst;
		in->z.avail_out = (uInt)(n > (1u << 30) ? (1u << 30) : n);
		r = inflate(&in->z, Z_NO_FLUSH);
		in->rawpos = in->rawlen - in->z.avail_in;
		if (r == Z_STREAM_END)
			in->zdone = 1;
		else if (r != Z_OK && r != Z_BUF_ERROR) {
			return fail(in, XDATA, "corrupt gzip data",
			    in->z.msg ? in->z.msg : "inflate failed");
		}
		if ((unsigned char *)in->z.next_out != dst)
			return (unsigned char *)in->z.next_out - dst;
	}
}

static ssize_t
read_zstd(struct input *in, unsigned char *dst, size_t n)
{
	ZSTD_inBuffer ib;
	ZSTD_outBuffer ob;
	size_t r;
	int k;

	for (;;) {
		if ((k = more_raw(in, "truncated zstd data")) <= 0)
			return k;
		ib.src = in->raw;
		ib.size = in->rawlen;
		ib.pos = in->rawpos;
		ob.dst = dst;
		ob.size = n;
		ob.pos = 0;
		r = ZSTD_decompressStream(in->zs, &ob, &ib);
		in->rawpos = ib.pos;
		if (ZSTD_isError(r)) {
			return fail(in, XDATA, "corrupt zstd data",
			    ZSTD_getErrorName(r));
		}
		in->zdone = r == 0;
		if (ob.pos > 0)
			return (ssize_t)ob.pos;
	}
}

ssize_t
input_read(struct input *in, void *dst, size_t n)
{
	ssize_t r;
	size_t k;
	int small;

	if (n == 0)
		return 0;
	switch (in->kind) {
	case IN_GZIP:
		return read_gzip(in, dst, n);
	case IN_ZSTD:
		return read_zstd(in, dst, n);
	}
	if (in->rawpos < in->rawlen) {
		k = in->rawlen - in->rawpos;
		if (k > n)
			k = n;
		memcpy(dst, in->raw + in->rawpos, k);
		in->rawpos += k;
		return (ssize_t)k;
	}
	if (in->raweof)
		return 0;
	/* Small reads (a token stream's counts) go through in->raw. */
	small = n < in->rawcap / 4;
	before_read(in);
	for (;;) {
		r = read(in->fd, small ? in->raw : dst, small ? in->rawcap : n);
		if (r >= 0)
			break;
		if (errno != EINTR) {
			fail_errno(in);
			return -1;
		}
	}
	if (r == 0)
		in->raweof = 1;
	in->nread += (uint64_t)r;
	if (small && r > 0) {
		in->rawlen = (size_t)r;
		in->rawpos = k = (size_t)r < n ? (size_t)r : n;
		memcpy(dst, in->raw, k);
		return (ssize_t)k;
	}
	return r;
}

/*
 * Make room for at least one more byte and a NUL after in->end.
 * 0, or -1 when the unread data is already longer than the line limit.
 */
static int
make_room(struct input *in)
{
	size_t have = in->end - in->start;

	if (in->start > 0 && (in->end + 1 >= in->cap || in->start >= in->cap / 2)) {
		memmove(in->buf, in->buf + in->start, have);
		in->scan -= in->start;
		in->end = have;
		in->start = 0;
	}
	if (in->end + 1 < in->cap)
		return 0;
	if (have > in->maxline)
		return -1;
	in->cap = in->cap ? in->cap * 2 : CHUNK;
	if (in->cap > in->maxline + 2)
		in->cap = in->maxline + 2;
	in->buf = xrealloc(in->buf, in->cap);
	return 0;
}

/*
 * Once a long line is consumed, its buffer goes back to about CHUNK, so
 * that a reader does not hold the memory of the longest line to the end.
 */
void
input_trim(struct input *in)
{
	size_t have = in->end - in->start, cap = CHUNK;

	if (in->cap <= 4 * CHUNK || have >= in->cap / 4)
		return;
	while (cap < 2 * (have + 1))
		cap *= 2;
	if (cap >= in->cap)
		return;
	memmove(in->buf, in->buf + in->start, have);
	in->scan -= in->start;
	in->end = have;
	in->start = 0;
	in->buf = xrealloc(in->buf, cap);
	in->cap = cap;
}

static int
toolong(struct input *in)
{
	in->reason = BAD_TOOLONG;
	return owt_fail(in->err, sizeof in->err, &in->errcode, XDATA,
	    "%s:%lu: line longer than %zu bytes", in->name, in->lineno,
	    in->maxline);
}

int
input_line(struct input *in, char **line, size_t *len)
{
	char *nl;
	ssize_t r;
	size_t n;

	input_trim(in);
	for (;;) {
		nl = in->end > in->scan ?
		    memchr(in->buf + in->scan, '\n', in->end - in->scan) : NULL;
		if (nl != NULL) {
			n = (size_t)(nl - (in->buf + in->start));
			in->start = in->scan = (size_t)(nl - in->buf) + 1;
			if (in->skipping) {
				in->skipping = 0;
				continue;
			}
			in->lineno++;
			if (n > in->maxline)
				return toolong(in);
			*line = nl - n;
			*nl = '\0';
			*len = n;
			return 1;
		}
		in->scan = in->end;
		if (in->skipping)
			in->start = in->end;
		if (in->eof) {
			n = in->end - in->start;
			in->start = in->scan = in->end;
			if (n == 0)
				return 0;
			in->lineno++;
			*line = in->buf + in->end - n;
			(*line)[n] = '\0';
			*len = n;
			return 1;
		}
		if (make_room(in) < 0) {
			/* Report the overlong line now; skip the rest of it later. */
			in->start = in->scan = in->end;
			in->skipping = 1;
			in->lineno++;
			return toolong(in);
		}
		/* A chunk at a time: past a long line, little is read ahead. */
		n = in->cap - in->end - 1;
		r = input_read(in, in->buf + in->end, n < CHUNK ? n : CHUNK);
		if (r < 0)
			return -1;
		if (r == 0)
			in->eof = 1;
		in->end += (size_t)r;
	}
}

#define MAP_RELEASE ((size_t)8 << 20)	/* a multiple of the page size */

/*
 * Map a plain regular file for input_bytes, from the first byte not yet
 * consumed: what is buffered is in the map too, at the same offsets.
 * 0, or -1 (not mapped: read as before). The file must not shrink while
 * mapped (a truncated file would fault, as for any reader that maps).
 */
static int
map_file(struct input *in)
{
	struct stat st;
	uint64_t pos, buffered;
	off_t cur;
	void *m;

	in->nomap = 1;
	if (in->kind != IN_PLAIN || in->fd < 0 || fstat(in->fd, &st) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size != (uint64_t)(size_t)st.st_size)
		return -1;
	/* the file offset (stdin may start anywhere), less what is buffered */
	buffered = (in->rawlen - in->rawpos) + (in->end - in->start);
	if ((cur = lseek(in->fd, 0, SEEK_CUR)) < 0 ||
	    (uint64_t)cur > (uint64_t)st.st_size || buffered > (uint64_t)cur)
		return -1;
	pos = (uint64_t)cur - buffered;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, in->fd, 0);
	if (m == MAP_FAILED)
		return -1;
	madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	madvise(m, (size_t)st.st_size, MADV_WILLNEED);
	in->map = m;
	in->mapsize = (size_t)st.st_size;
	in->mappos = (size_t)pos;
	in->start = in->end = in->scan = 0;
	in->rawpos = in->rawlen;
	in->raweof = 1;
	in->eof = 1;
	return 0;
}

ssize_t
input_bytes(struct input *in, size_t n, const char **p)
{
	size_t have, cap;
	ssize_t r;

	if (in->map == NULL && !in->nomap)
		map_file(in);
	if (in->map != NULL) {
		/*
		 * Give back the pages already read, 8 MB at a time, so that the
		 * resident size does not follow the file's (the previous
		 * pointer is no longer valid, as with the buffer).
		 */
		size_t done = in->mappos & ~(size_t)(MAP_RELEASE - 1);

		if (done - in->mapfreed >= MAP_RELEASE) {
			madvise((char *)in->map + in->mapfreed, done - in->mapfreed,
			    MADV_DONTNEED);
			in->mapfreed = done;
		}
		have = in->mapsize - in->mappos;
		if (have > n)
			have = n;
		*p = in->map + in->mappos;
		in->mappos += have;
		return (ssize_t)have;
	}

	while ((have = in->end - in->start) < n && !in->eof) {
		if (in->cap - in->start < n + 1 && in->start > 0) {
			memmove(in->buf, in->buf + in->start, have);
			in->end = have;
			in->start = in->scan = 0;
		}
		if (in->cap < n + 1 || in->end + 1 >= in->cap) {
			cap = in->cap ? in->cap * 2 : CHUNK;
			in->cap = cap > n + 1 ? cap : n + 1;
			in->buf = xrealloc(in->buf, in->cap);
		}
		r = input_read(in, in->buf + in->end, in->cap - in->end - 1);
		if (r < 0)
			return -1;
		if (r == 0)
			in->eof = 1;
		in->end += (size_t)r;
	}
	if (have > n)
		have = n;
	*p = in->buf + in->start;
	in->start += have;
	in->scan = in->start;
	return (ssize_t)have;
}

int
input_slurp(struct input *in, struct buf *b, size_t max)
{
	ssize_t r;

	/* Data already buffered by input_line comes first. */
	if (in->end > in->start) {
		buf_add(b, in->buf + in->start, in->end - in->start);
		in->start = in->scan = in->end;
	}
	for (;;) {
		buf_reserve(b, CHUNK);
		r = input_read(in, b->p + b->len, b->cap - b->len - 1);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		b->len += (size_t)r;
		if (b->len > max) {
			in->reason = BAD_TOOLONG;
			return owt_fail(in->err, sizeof in->err, &in->errcode,
			    XDATA, "%s: file larger than %zu bytes", in->name,
			    max);
		}
	}
	b->p[b->len] = '\0';
	return 0;
}

int
input_slurp_file(const char *path, struct buf *b, size_t max, char *err,
    size_t errsize, int *code)
{
	struct input in;
	struct stat st;
	int rc = 0;

	if (input_open(&in, path) < 0)
		return owt_fail(err, errsize, code, in.errcode, "%s", in.err);
	/* a plain file's room at once, not doubled up to it */
	if (in.kind == IN_PLAIN && fstat(in.fd, &st) == 0 &&
	    S_ISREG(st.st_mode) && (uint64_t)st.st_size <= max)
		buf_reserve(b, (size_t)st.st_size + CHUNK);
	if (input_slurp(&in, b, max) < 0)
		rc = owt_fail(err, errsize, code, in.errcode, "%s", in.err);
	input_close(&in);
	return rc;
}

int
input_read_file(const char *path, struct buf *b, char *err, size_t errsize,
    int *code)
{
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	b->len = 0;
	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		return owt_fail_errno(err, errsize, code, XSYS,
		    "%s: cannot open", path);
	}
	buf_reserve(b, 1);
	while ((n = read(fd, chunk, sizeof chunk)) > 0)
		buf_add(b, chunk, (size_t)n);
	if (n < 0) {
		owt_fail_errno(err, errsize, code, XSYS, "%s: read error",
		    path);
		close(fd);
		return -1;
	}
	close(fd);
	b->p[b->len] = '\0';
	return 0;
}
