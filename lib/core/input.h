/* input.h - input files: plain, gzip or zstd (by content), read whole or by line */
#ifndef OWT_INPUT_H
#define OWT_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <zlib.h>

#include "core/util.h"

/*
 * The longest line any program accepts, unless the environment variable
 * OWT_MAX_LINE (bytes, 1024 .. 2^31) sets another. Documented in owt-jsonl(5).
 */
#define INPUT_MAX_LINE (256UL << 20)

/* The largest zstd window accepted: 2^31 bytes, what zstd --long=31 writes. */
#define INPUT_ZSTD_WINDOWLOG 31

enum { IN_PLAIN, IN_GZIP, IN_ZSTD };

/* Why a file, line or record was rejected; input_bad_name[] names them in summaries. */
enum {
	BAD_NONE,
	BAD_OPEN,		/* the file cannot be opened */
	BAD_READ,		/* a read failed (a system error) */
	BAD_COMPRESSED,		/* corrupt or truncated gzip/zstd data */
	BAD_TOOLONG,		/* a line over the limit */
	BAD_EMPTYLINE,		/* a blank line where a record belongs */
	BAD_UTF8,		/* invalid UTF-8 */
	BAD_JSON,		/* invalid JSON */
	BAD_NOTOBJECT,		/* valid JSON, but not an object */
	BAD_FIELD,		/* a field the program needs is missing or not
				   a string (json_rec_text's message) */
	BAD_NREASONS
};
extern const char *const input_bad_name[BAD_NREASONS];

struct input {
	const char *name;	/* path, or "<stdin>"; used in messages */
	int fd;
	int kind;		/* IN_PLAIN, IN_GZIP, IN_ZSTD */
	int eof;		/* no more decompressed data */
	int skipping;		/* discarding the rest of an overlong line */
	unsigned long lineno;	/* number of the line last returned */
	size_t maxline;
	uint64_t nread;		/* bytes read from the file itself */

	unsigned char *raw;	/* compressed bytes not yet decompressed */
	size_t rawpos, rawlen, rawcap;
	int raweof;
	z_stream z;
	void *zs;		/* ZSTD_DStream */
	int zdone;		/* a compressed frame ended exactly here */

	char *buf;		/* decompressed data: [start, end) unread */
	size_t start, end, cap, scan;

	/*
	 * input_bytes on a plain regular file maps it: [mappos, mapsize)
	 * unread, no copy. nomap: mapping failed or is not possible.
	 */
	const char *map;
	size_t mapsize, mappos;
	size_t mapfreed;	/* pages before this given back (madvise) */
	int nomap;

	/*
	 * Called, when set, before a read that would wait for more data
	 * (a pipe with nothing in it yet), so that a reader can pass on
	 * what it holds rather than keep it while the input is quiet.
	 */
	void (*stall)(void *arg);
	void *stall_arg;

	int errcode;		/* XDATA, XUSAGE or XSYS after an error */
	int reason;		/* BAD_* after an error */
	char err[OWT_ERRSIZE];		/* "FILE:LINE: what" after an error */
};

/*
 * Open path ("-" or NULL: standard input). Returns 0, or -1 with in->err
 * and in->errcode (XDATA: a missing or unreadable file, or a directory,
 * reason BAD_OPEN; XUSAGE: a bad OWT_MAX_LINE; XSYS otherwise).
 */
int input_open(struct input *in, const char *path);
void input_close(struct input *in);

/*
 * The next line, without its '\n' (a final line without one counts too).
 * Returns 1 and sets *line (NUL-terminated, valid until the next call) and
 * *len; 0 at the end; -1 on an error (in->err, in->errcode). After an
 * overlong line the next call resumes at the line after it.
 */
int input_line(struct input *in, char **line, size_t *len);
/*
 * Give back the memory of a long line (over 4 MB) now, not at the next
 * input_line; the line last returned is no longer valid.
 */
void input_trim(struct input *in);

/*
 * Point *p at the next n bytes and consume them: n, fewer at the end of
 * the input, or -1 on an error. The bytes stay valid until the next call
 * on in. Lets binary readers take data from the input's own buffer
 * without another copy.
 */
ssize_t input_bytes(struct input *in, size_t n, const char **p);

/*
 * Whether a read would return at once: data, the end or an error are
 * there (a regular file always is). It may still return less than asked.
 */
int input_ready(const struct input *in);

/* Append the whole remaining content to b, at most max bytes. 0 or -1. */
int input_slurp(struct input *in, struct buf *b, size_t max);
/*
 * File path whole into b (decompressed, as input_open reads it), at most
 * max bytes: 0, or -1 with input_open's or input_slurp's error in err
 * and *code ("cannot open 'PATH': why", XDATA, for a missing file).
 */
int input_slurp_file(const char *path, struct buf *b, size_t max, char *err,
    size_t errsize, int *code);
/*
 * A small file whole into b, as it is (not decompressed), NUL-terminated:
 * 0; 1 when it does not exist; -1 with "PATH: cannot open: why" or
 * "PATH: read error: why" (XSYS).
 */
int input_read_file(const char *path, struct buf *b, char *err,
    size_t errsize, int *code);

/* Read up to n decompressed bytes: the count, 0 at the end, -1 on error. */
ssize_t input_read(struct input *in, void *dst, size_t n);

/*
 * The line limit from OWT_MAX_LINE, or INPUT_MAX_LINE: 0, or -1 with
 * "OWT_MAX_LINE: 'V' is out of range 1024..2147483648" (XUSAGE). Every
 * program that reads input checks it once at start-up (owt_setprog, through
 * the start check this file registers).
 */
int input_maxline(size_t *max, char *err, size_t errsize, int *code);

#endif
