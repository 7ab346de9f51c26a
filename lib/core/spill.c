/* spill.c - an append-only temporary file of byte strings, read back by offset */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/spill.h"

#define SPILL_BUF (4u << 20)

int
spill_open(struct spill *s, const char *dir)
{
	char path[4096];

	memset(s, 0, sizeof *s);
	snprintf(path, sizeof path, "%s/owt-spill.XXXXXX", dir);
	if ((s->fd = mkstemp(path)) < 0) {
		owt_fail_errno(s->err, sizeof s->err, &s->errcode, XSYS,
		    "cannot create a file in '%s'", dir);
		return -1;
	}
	unlink(path);
	return 0;
}

int
spill_flush(struct spill *s)
{
	size_t done = 0;
	ssize_t k;

	while (done < s->pending.len) {
		k = pwrite(s->fd, s->pending.p + done, s->pending.len - done,
		    (off_t)(s->flushed + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			owt_fail(s->err, sizeof s->err, &s->errcode, XSYS,
			    "temporary file: %s", k < 0 ? strerror(errno) :
			    "short write");
			return -1;
		}
		done += (size_t)k;
	}
	s->flushed += done;
	s->pending.len = 0;
	return 0;
}

int64_t
spill_put(struct spill *s, const void *p, size_t n)
{
	int64_t off = (int64_t)(s->flushed + s->pending.len);

	buf_add(&s->pending, p, n);
	if (s->pending.len >= SPILL_BUF && spill_flush(s) < 0)
		return -1;
	return off;
}

int
spill_get(struct spill *s, uint64_t off, size_t n, struct buf *b)
{
	size_t done = 0, part;
	ssize_t k;

	buf_reserve(b, n);
	while (done < n && off + done < s->flushed) {
		part = n - done;
		if (off + done + part > s->flushed)
			part = (size_t)(s->flushed - off - done);
		k = pread(s->fd, b->p + b->len, part, (off_t)(off + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			owt_fail(s->err, sizeof s->err, &s->errcode, XSYS,
			    "temporary file: %s", k < 0 ? strerror(errno) :
			    "short read");
			return -1;
		}
		b->len += (size_t)k;
		done += (size_t)k;
	}
	if (done < n) {
		memcpy(b->p + b->len, s->pending.p + (off + done - s->flushed),
		    n - done);
		b->len += n - done;
	}
	return 0;
}

uint64_t
spill_size(const struct spill *s)
{
	return s->flushed + s->pending.len;
}

void
spill_close(struct spill *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	buf_free(&s->pending);
}
