/* warc_write.h - WARC archives written: one gzip member a record, sha1 digests, PREFIX.warc.gz.open renamed when closed */
#ifndef OWT_WARC_WRITE_H
#define OWT_WARC_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>

#include "core/buf.h"
#include "core/util.h"

struct warc_writer {
	char *path;		/* PREFIX.warc.gz */
	char *open;		/* PREFIX.warc.gz.open, while written */
	int fd;
	uint64_t off;		/* bytes written */
	unsigned long long nrec;
	struct buf gz;
	char err[OWT_ERRSIZE];
};

/* A record's parts: fields are "Name: value\r\n" lines (or NULL). */
struct warc_out {
	const char *type;	/* WARC-Type */
	const char *uri;	/* WARC-Target-URI, or NULL */
	time_t date;
	const char *ctype;	/* Content-Type of the block, or NULL */
	const char *fields;	/* more header lines, or NULL */
	const struct iovec *block;	/* the block, in parts */
	int nblock;
};

/*
 * Create PREFIX.warc.gz.open (truncated) and write the warcinfo record,
 * whose block is info (application/warc-fields). 0, or -1 with w->err
 * (XSYS).
 */
int warc_writer_open(struct warc_writer *w, const char *prefix,
    const char *info);
/*
 * Write one record, a gzip member of its own, with WARC-Record-ID (new,
 * into id[48] if id is not NULL), WARC-Date, WARC-Block-Digest and
 * Content-Length. 0, or -1 with w->err.
 */
int warc_writer_put(struct warc_writer *w, const struct warc_out *r, char *id);
/*
 * Make one record as warc_writer_put does, as a gzip member into out (its
 * content replaced); id[48] gets its id when not NULL. No I/O, no shared
 * state: the extraction workers make records.
 */
void warc_record_gz(const struct warc_out *r, char *id, struct buf *out);
/* Append whole gzip members to the archive: 0, or -1 with w->err. */
int warc_writer_write(struct warc_writer *w, const void *p, size_t n);
/* Sync, close and rename to PREFIX.warc.gz: 0, or -1 with w->err. */
int warc_writer_close(struct warc_writer *w);
void warc_writer_free(struct warc_writer *w);

/* "sha1:" and the base32 SHA-1 of the parts into out[38]. */
void warc_digest(const struct iovec *v, int n, char *out);
/* A new "<urn:uuid:...>" (version 4) into out[48]. */
void warc_uuid(char *out);

#endif
