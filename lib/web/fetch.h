/* fetch.h - owt-fetch's pipeline: input lines to URL items, filter, crawl, extract, records and log lines */
#ifndef OWT_FETCH_H
#define OWT_FETCH_H

#include <signal.h>
#include <stdio.h>

#include "web/crawl.h"
#include "web/extract.h"
#include "core/input.h"
#include "core/jsonl.h"
#include "core/progress.h"
#include "web/urlfilter.h"
#include "web/urlset.h"
#include "core/util.h"

/*
 * Why an input line was bad, past input_bad_name[]: a missing or
 * non-string field; a corrupt or truncated WARC record; a bad index row
 * (--warc-prefix).
 */
#define FETCH_BAD_WARC BAD_NREASONS
#define FETCH_BAD_INDEX (BAD_NREASONS + 1)
#define FETCH_NBAD (BAD_NREASONS + 2)

struct batch_loop;
struct fetch_warc;
struct fetch_index;
struct fetch_warc_rec;
struct warc_writer;

struct fetch_opts {
	int extract;		/* read saved pages (lines name files), not URLs */
	int filter_only;	/* only filter: write the URLs kept */
	int ordered;		/* crawl: write records in input order */
	int keep_going, quiet, progress;
	int workers;		/* extraction threads (0: inline) */
	const char *html_dir;	/* keep each fetched page there, or NULL */
	const char *warc_file;	/* archive every exchange in PREFIX.warc.gz, or NULL */
	uint64_t warc_max_size;	/* --warc-max-size: a new file past it (0: never) */
	int warc_cdx;		/* --warc-cdx: PREFIX.cdx beside the archive */
	const char *warc_prefix;	/* lines are index rows of records under it, or NULL */
	const char *blacklist;	/* more blacklisted domains, or NULL */
	const char *log;	/* every URL's outcome as JSONL, or NULL */
	const char *resume;	/* skip the URLs this log has, or NULL */
	const char *text_key;	/* the output field of the text */
	unsigned long shard[2];	/* take input lines k, k+n, ...: { k, n } */
	struct crawl_opt c;	/* the crawler's; c.max_bytes caps --extract reads */
};

/*
 * One input line: a URL (or a saved page with --extract) and its record,
 * or a bad line (url NULL, msg says why). url is the URL as given, which
 * the output and the log name; job.url is what is fetched, its normal
 * form (urlfilter_normalize), the same string when equal.
 */
struct fetch_item {
	struct crawl_job job;	/* first: the crawler hands back &job */
	char *url;
	char *line;		/* the JSONL record, or NULL for a plain line */
	size_t len;
	char *ctype;		/* --extract: the record's content_type */
	char *file;		/* the saved page */
	struct buf title, text;
	struct extract_meta meta;
	const char *enc;
	size_t bytes;
	struct fetch_warc_rec *warc;	/* a WARC record's (fetch_warc.h), or NULL */
	char warc_id[48];	/* --warc-file: its response record's id */
	struct buf warc_gz;	/* --warc-file: its records, made on a worker */
	struct buf warc_cdx;	/* --warc-cdx: its responses' lines (warc_writer_group) */
	struct buf out;		/* its page record, made on a worker */
	int kept;		/* --filter-only: kept, its line is written */
	int bad;		/* 0, XDATA (a bad line or unreadable page) or XSYS */
	int reason;		/* BAD_* or FETCH_BAD_WARC of a bad line or page */
	char *msg;		/* a bad line's or a system error's message */
	unsigned long long seq;	/* its place among the items read */
	struct fetch_item *prev, *next;	/* the items alive */
};

/* A run: the options, what it reads and writes, and its counts. */
struct fetch {
	const struct fetch_opts *o;
	volatile sig_atomic_t *stop;	/* set (a signal): read no more, finish */
	struct urlfilter filter;
	int filter_on;			/* filter is set up (not --extract) */
	struct buf norm;		/* the normal form of the URL filtered last */
	struct urlset done;		/* --resume: URLs the log has */
	FILE *out;			/* the records */
	int logfd;			/* the log, or -1 */
	struct buf logbuf;		/* log lines of records written, not yet flushed */
	double flushed;
	struct progress prog;
	struct json_rec rec;		/* input lines, parsed */

	/* the input: the operands in turn, line by line */
	char *const *paths;
	int npaths, cur, in_open;
	struct input in;
	unsigned long long lineno;	/* lines of all operands, for --shard */
	struct fetch_warc *warc;	/* --extract: WARC archives read (fetch_warc.c) */
	struct warc_writer *ww;		/* --warc-file (fetch_warc.c) */
	struct fetch_index *index;	/* --warc-prefix: the rows' columns (fetch_index.c) */
	unsigned long long nread;	/* items read */

	/* counts for the summary */
	struct tally count[CR_NOUTCOMES], reasons[URL_NREASONS], bad[FETCH_NBAD];
	unsigned long long nresumed, ncancelled, nfinished;
	unsigned long long nunwritten;	/* --ordered: fetched after one cancelled */
	uint64_t nbytes;

	/* the run's private state */
	struct fetch_item *live;	/* every item not yet freed */
	struct batch_loop *loop;
	int nworkers;			/* the loop's (0: inline) */
	struct crawl *crawl;
	unsigned long long incrawl;	/* items handed to the crawler, not yet back */
	struct fetch_item **held;	/* --ordered: done items waiting, by seq */
	size_t heldcap;
	unsigned long long released;	/* --ordered: items written, in seq order */
	int stopping;			/* no more items: the loop stopped, or an error */
	int halted;			/* a note without keep_going: finish no more */
	int cut;			/* --ordered: an item was cancelled; write no more */
	int failed;			/* an error: nothing more is written */
	int errcode, errnum;
	char err[OWT_ERRSIZE];
};

/*
 * Set up a run of o (which must outlive it) on the operands paths (none:
 * standard input), writing records to out: the URL filter (unless
 * --extract), --html-dir (made, temporaries of killed runs swept),
 * --resume's log read (a torn last line cut off) and --log opened
 * (appended to when it is the --resume log). stop is the signal flag.
 * 0, or -1 with err and *code; fetch_free frees what was set up.
 */
int fetch_open(struct fetch *f, const struct fetch_opts *o, char *const *paths,
    int npaths, FILE *out, volatile sig_atomic_t *stop, char *err,
    size_t errsize, int *code);
/*
 * Read, filter, crawl (or read the saved pages), extract on o->workers
 * threads and write every record and log line, output before the log
 * and flushed at least every second. Bad lines and unreadable pages are
 * warned and counted (FILE:LINE: what); without keep_going the first
 * ends the run. Returns XOK, XDATA (a bad line or page), or -1 with err,
 * *code and errno (EPIPE: the reader of out went away).
 */
int fetch_run(struct fetch *f, char *err, size_t errsize, int *code);
/* Close the log: 0, or -1 with "cannot write 'LOG': ..." (XSYS). */
int fetch_close(struct fetch *f, char *err, size_t errsize, int *code);
void fetch_free(struct fetch *f);
/* Bad lines and pages counted. */
unsigned long long fetch_nbad(const struct fetch *f);

/*
 * The next item of the input: lines of other shards, blank lines and
 * URLs the --resume log has are skipped; a line is trimmed of blanks, and
 * is a JSON object with a "url" ("file" with --extract) string, or the URL
 * itself; with --warc-prefix, an index row (fetch_index.h), a CDX header
 * line seen by every shard. A bad line (or file) is an item with url NULL, bad XDATA and
 * msg. NULL at the end, at the stop signal, or on a read error (f->failed,
 * f->err).
 */
struct fetch_item *fetch_item_next(struct fetch *f);
void fetch_item_free(struct fetch *f, struct fetch_item *it);
/* A new item of the input; a bad one, with reason and msg (fetch_item.c). */
struct fetch_item *fetch_item_new(struct fetch *f);
struct fetch_item *fetch_item_bad(struct fetch *f, int reason, const char *fmt,
    ...) OWT_PRINTF(3, 4);
/* Filter an item: 0 to fetch it (job.url its normal form), else 1 (filtered). */
int fetch_filter(struct fetch *f, struct fetch_item *it);

/*
 * On a worker: read the page (--extract), save it (--html-dir), extract it
 * and write its record into it->out. rec is the worker's own. A page that
 * cannot be read is outcome CR_ERROR and bad XDATA (or XSYS); a page that
 * cannot be saved is bad XSYS, with msg.
 */
void fetch_extract(const struct fetch_opts *o, struct fetch_item *it,
    struct json_rec *rec);
/* The record of a page: its input record (or {"url":...}) with the page's fields. */
void fetch_write_page(const struct fetch_opts *o, const struct fetch_item *it,
    struct json_rec *rec, struct buf *out);
/* The log line of an item with its outcome. */
void fetch_write_log(const struct fetch_opts *o, const struct fetch_item *it,
    int outcome, struct buf *out);
/*
 * Save the body of it as DIR/HASH.html.gz (HASH of the URL as given), and
 * name it in it->file: 0, or -1 with err and *code.
 */
int fetch_save_html(const char *dir, struct fetch_item *it, char *err,
    size_t errsize, int *code);
/*
 * Add the URLs of a log to set; a last line without '\n' (a killed run)
 * is cut off the file first. 0, or -1 with err and *code.
 */
int fetch_resume_load(struct urlset *set, const char *path, char *err,
    size_t errsize, int *code);

#endif
