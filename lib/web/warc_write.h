/* warc_write.h - WARC archives written: one gzip member a record, sha1 digests, rotation, wget's CDX, recovery after a kill */
#ifndef OWT_WARC_WRITE_H
#define OWT_WARC_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>

#include "core/buf.h"
#include "core/util.h"

/* The gzip level of the records (libdeflate's 1..12); see owt-fetch(1). */
#define WARC_GZIP_LEVEL 1

/*
 * The files of an archive: PREFIX.warc.gz, or PREFIX-NNNNN.warc.gz (seq
 * >= 0) with rotation or after a resume, each written as its name with
 * ".open" after it and renamed when closed. Records are written in groups
 * (an item's records, never split between files), kept in memory until
 * warc_writer_flush.
 */
struct warc_writer {
	char *prefix;
	char *path;		/* the file written: PREFIX[-NNNNN].warc.gz */
	char *open;		/* its name while written: path + ".open" */
	int fd;
	uint64_t off;		/* bytes of the file, those pending included */
	uint64_t max_size;	/* a new file once one passes it (0: never) */
	int seq;		/* the file's number, or -1 (PREFIX.warc.gz) */
	char *info;		/* the warcinfo block that starts each file */
	unsigned long long nrec, nfiles;
	struct buf gz;		/* a record made by warc_writer_put */
	struct buf pend;	/* bytes for fd, not yet written */
	int cdxfd;		/* PREFIX.cdx, or -1 */
	char *cdxpath;
	struct buf cdxpend;	/* its lines not yet written */
	int errcode;		/* XSYS after an error */
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
	/*
	 * The block is mostly a compressed payload (a content coding): its
	 * member stores it (deflate level 0) rather than deflating it again,
	 * which would cost as much CPU as a page's and save 1-2%.
	 */
	int stored;
};

/*
 * Start an archive: the file seq (-1: PREFIX.warc.gz) is created
 * (truncated) with its warcinfo record, whose block is info
 * (application/warc-fields); max_size as above. With cdx, PREFIX.cdx is
 * opened too: created with wget's header line when append is 0 or the
 * file is empty, else appended to. 0, or -1 with w->err (XSYS).
 */
int warc_writer_open(struct warc_writer *w, const char *prefix,
    const char *info, uint64_t max_size, int seq, int cdx, int append);
/*
 * Make one record as a gzip member of its own (libdeflate, level
 * WARC_GZIP_LEVEL),
 * appended to out, with WARC-Record-ID (new, into id[48] if id is not
 * NULL), WARC-Date, WARC-Block-Digest and Content-Length. No I/O, no
 * shared state: the extraction workers make records.
 */
void warc_record_gz(const struct warc_out *r, char *id, struct buf *out);
/*
 * Add a group of whole gzip members, parts[0..n) in turn, to the file:
 * first a new file if this one has passed max_size. cdx holds the CDX
 * lines of its responses (warc_cdx_line) without their last three
 * fields, each followed by "\t" OFFSET "\t" ID, OFFSET that of its
 * member in the group. Pending until warc_writer_flush (a new file
 * flushes the old one first). 0, or -1 with w->err.
 */
int warc_writer_group(struct warc_writer *w, const struct iovec *parts,
    int n, const char *cdx, size_t cdxlen);
/* Write what is pending, archive then CDX: 0, or -1 with w->err. */
int warc_writer_flush(struct warc_writer *w);
/* A record as warc_record_gz makes it, in a group of its own. */
int warc_writer_put(struct warc_writer *w, const struct warc_out *r, char *id);
/* Flush, sync, close, rename the file; close the CDX: 0, or -1 with w->err. */
int warc_writer_close(struct warc_writer *w);
void warc_writer_free(struct warc_writer *w);

/*
 * The first fields of a response's CDX line in wget's " CDX a b a m s k r
 * M V g u" (original URL, 14-digit date, URL, MIME type without
 * parameters, HTTP status, payload sha1 in base32, Location, "-"), from
 * the target URI, the WARC-Date (ISO 8601), the HTTP head at http[0..n)
 * and the WARC-Payload-Digest (or NULL); appended to out, no newline,
 * no trailing space. "-" for what is missing.
 */
void warc_cdx_line(const char *uri, const char *date, const char *http,
    size_t n, const char *pdigest, struct buf *out);

/*
 * --resume: what a killed run left of PREFIX. Every PREFIX.warc.gz.open
 * and PREFIX-NNNNN.warc.gz.open is cut back to its last whole item: the
 * gzip members from the start that are whole records (the member's CRC,
 * the record's Content-Length and WARC-Block-Digest right), through the
 * last metadata record; then renamed without ".open" (removed when not
 * even its warcinfo record is whole). url(arg, u, n) is called with the
 * URL of each metadata record kept (its "input-url" field, else its
 * WARC-Target-URI), and of each metadata record of PREFIX's closed files
 * (read through: a kill can come between the archive's write and the
 * log's, so a file may hold URLs the log lacks). With cdx, PREFIX.cdx
 * loses the lines of the files recovered and gains those of their
 * responses kept. *next: the number
 * of the file to go on in (one past the highest of PREFIX's files; 1
 * when PREFIX.warc.gz alone is there), *ncut: the bytes cut off. 0, or
 * -1 with err: XDATA for a .open file whose first gzip member is whole
 * but not a record (not ours: left alone), else XSYS.
 */
int warc_recover(const char *prefix, int cdx,
    void (*url)(void *arg, const char *u, size_t n), void *arg, int *next,
    uint64_t *ncut, char *err, size_t errsize, int *code);

/* "sha1:" and the base32 SHA-1 of the parts into out[38]. */
void warc_digest(const struct iovec *v, int n, char *out);
/* A new "<urn:uuid:...>" (version 4) into out[48]. */
void warc_uuid(char *out);

#endif
