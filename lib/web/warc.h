/* warc.h - WARC archives (ISO 28500): records from plain, gzip or zstd files, their HTTP payloads */
#ifndef OWT_WARC_H
#define OWT_WARC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <zlib.h>

#include "core/buf.h"
#include "core/util.h"

/* Record types; warc_type_name[] spells them as WARC-Type does. */
enum {
	WARC_WARCINFO, WARC_RESPONSE, WARC_RESOURCE, WARC_REQUEST,
	WARC_METADATA, WARC_REVISIT, WARC_CONVERSION, WARC_CONTINUATION,
	WARC_OTHER, WARC_NTYPES
};
extern const char *const warc_type_name[WARC_NTYPES];

/* A record's header block, at most (an endless header line is an error). */
#define WARC_MAX_HEAD ((size_t)64 << 10)

/*
 * A header block parsed in place: the values point into it, each
 * NUL-terminated, NULL when the field is absent. target has its angle
 * brackets (WARC 1.0's <uri>) removed.
 */
struct warc_head {
	int type;
	uint64_t length;	/* Content-Length of the block */
	char *target;		/* WARC-Target-URI */
	char *date;		/* WARC-Date */
	char *id;		/* WARC-Record-ID */
	char *ptype;		/* WARC-Identified-Payload-Type */
	char *ctype;		/* Content-Type (of the block) */
};

/*
 * Parse the header block p[0..n), "WARC/1.x" line to the empty line
 * included (CRLF line ends; a bare LF is taken too), writing NULs into
 * it. 0, or -1 with err: not a WARC header, no or a bad Content-Length, no
 * WARC-Type. Pure: no I/O, no allocation.
 */
int warc_head_parse(char *p, size_t n, struct warc_head *h, char *err,
    size_t errsize);
/*
 * The length of the header block at p[0..n) through its empty line, 0
 * when n bytes hold no empty line yet.
 */
size_t warc_head_end(const char *p, size_t n);

/* A record as the reader hands it on: its header and, once read, its block. */
struct warc_rec {
	struct warc_head h;
	uint64_t offset;	/* see warc_reader.offset */
	int member;		/* offset is that of a gzip member or zstd frame */
	struct buf head;	/* the header block, h points into it */
	struct buf block;	/* warc_block: the block, or empty when skipped */
	int toolarge;		/* warc_block: the block was over max, skipped */
};

enum { WARC_PLAIN, WARC_GZIP, WARC_ZSTD };

/*
 * Records from a file or a memory buffer, plain, gzip (one member a
 * record, or the whole file; any mix) or zstd (likewise; the IIPC
 * warc-zstd dictionary frame first is loaded). Memory: the header block,
 * the block asked for and 512 KB of buffers; a block over the caller's
 * cap is read through, not kept.
 */
struct warc_reader {
	const char *name;	/* in messages */
	int fd;			/* or -1: mem */
	const unsigned char *mem;
	size_t memlen;
	int kind;		/* WARC_PLAIN, WARC_GZIP, WARC_ZSTD */
	unsigned char *raw;	/* file bytes [rawpos, rawlen) not yet decoded */
	size_t rawpos, rawlen, rawcap;
	uint64_t rawoff;	/* file offset of raw[0] */
	int raweof;
	z_stream z;
	void *zs;		/* ZSTD_DStream */
	int zinit;		/* z is set up */
	int zend;		/* a gzip member or zstd frame ended at rawpos */
	int started;		/* some member or frame was begun */
	char *d;		/* decoded bytes [dstart, dend) unread */
	size_t dstart, dend, dcap;
	uint64_t dpos;		/* decoded offset of d[dstart] */
	int inblock;		/* a record's block (and end) not yet consumed */
	uint64_t left;		/* its bytes left */
	uint64_t recoff;	/* the current record's offset */
	unsigned long long nrec;	/* records read */
	int errcode;		/* XDATA or XSYS after an error */
	char err[OWT_ERRSIZE];	/* "FILE:OFFSET: what" */
};

/*
 * Does p[0..n), the start of a file, hold a WARC archive: "WARC/" first,
 * after gzip or zstd, or the warc-zstd dictionary frame? 1 or 0.
 */
int warc_sniff(const void *p, size_t n);
/* warc_sniff on the first 4 KB of a regular file: 1, 0 (not one, or unreadable). */
int warc_sniff_file(const char *path);

/*
 * For a process that reads archives: glibc's mmap threshold 4 MB and trim
 * threshold 8 MB, once. glibc raises its own (from 128 KB) only when a
 * mapped chunk is freed, which reading saved pages does at every file's
 * close and reading an archive, whose buffers live as long as it, does
 * not: the heap was then trimmed after every page and each page's
 * extraction buffers faulted in afresh (44,000 page faults for 700 pages
 * against 1,800 from the files, 0.76 of their speed).
 */
void warc_malloc_tune(void);

/* Open path, or read the n bytes at mem (path NULL). 0, or -1 with r->err. */
int warc_open(struct warc_reader *r, const char *path, const void *mem,
    size_t n, const char *name);
void warc_close(struct warc_reader *r);
/*
 * The next record's header into rec (the block of the record before, if
 * not read, is skipped first). rec->offset is the file offset of the gzip
 * member or zstd frame that starts with the record (rec->member set: per
 * record compression, as CDX indexes count), else the record's offset in
 * the decompressed data. 1, 0 at the end, -1 with r->err
 * ("NAME:OFFSET: what"; XDATA, or XSYS for a read error).
 */
int warc_next(struct warc_reader *r, struct warc_rec *rec);
/*
 * Read the block of the record last returned into rec->block, or skip it
 * (rec->toolarge) when it is over max bytes; then its ending CRLF CRLF.
 * 0, or -1 with r->err.
 */
int warc_block(struct warc_reader *r, struct warc_rec *rec, size_t max);
void warc_rec_free(struct warc_rec *rec);

/*
 * Where the first record of a byte stream ends, found as the stream
 * arrives: the end of its gzip member, or (plain) of its block and CRLF
 * CRLF. For reading one record from an offset when its length is not
 * known (wget's CDX gives none).
 */
struct warc_end {
	z_stream z;
	int zinit;
	size_t fed;		/* bytes of the stream looked at */
	unsigned char out[16384];	/* inflated bytes, dropped */
};

void warc_end_init(struct warc_end *e);
/*
 * p[0..n) is the stream so far (it grows between calls; a shorter one is
 * a new try, looked at from its start). 1: the first record ends within
 * it; 0: not yet; -1 with err: neither gzip nor a WARC record (zstd has
 * no end to find here), or corrupt.
 */
int warc_end_feed(struct warc_end *e, const unsigned char *p, size_t n,
    char *err, size_t errsize);
void warc_end_free(struct warc_end *e);

/* A WARC-Date (ISO 8601, UTC, seconds or finer) as a time, or 0. */
time_t warc_date(const char *s);

/* Room for an HTTP head in a response block, beyond a cap on its payload. */
#define WARC_HTTP_SLACK ((size_t)256 << 10)

/* Content codings of an HTTP payload. */
enum { WARC_CE_IDENTITY, WARC_CE_GZIP, WARC_CE_DEFLATE, WARC_CE_BR,
	WARC_CE_ZSTD, WARC_CE_OTHER };

/* An HTTP response head, parsed from a response record's block. */
struct warc_http {
	long status;
	const char *ctype;	/* Content-Type value, not NUL-terminated */
	size_t ctype_len;
	int chunked;		/* Transfer-Encoding: chunked */
	int coding;		/* WARC_CE_*, from Content-Encoding */
	long long clen;		/* Content-Length, or -1 */
	size_t body;		/* offset of the payload in the block */
};

/*
 * Parse the HTTP response at p[0..n): status line, header fields, the
 * empty line. Common Crawl's August 2018 records (an extra CRLF before
 * the payload that the HTTP Content-Length does not count) have the CRLF
 * skipped. 0, or -1 with err. Pure.
 */
int warc_http_parse(const char *p, size_t n, struct warc_http *h, char *err,
    size_t errsize);
/*
 * Undo chunked transfer coding of p[0..*n) in place (*n becomes the
 * payload's length; trailer fields are dropped). 0, or -1 with err (a bad
 * chunk size, a chunk past the end). Pure.
 */
int warc_dechunk(char *p, size_t *n, char *err, size_t errsize);
/*
 * Decode content coding (gzip, deflate as zlib or raw, br, zstd) of
 * p[0..n) into out, at most max bytes: 0, 1 when over max (out holds
 * max), -1 with err (corrupt or truncated data, an unknown coding).
 */
int warc_decode(int coding, const char *p, size_t n, size_t max,
    struct buf *out, char *err, size_t errsize);

#endif
