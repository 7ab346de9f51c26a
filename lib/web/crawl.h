/* crawl.h - fetch many URLs at once, politely and safely (libcurl multi interface) */
#ifndef OWT_CRAWL_H
#define OWT_CRAWL_H

#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <time.h>

#include "core/util.h"

/* A URL's outcome; crawl_outcome[] names them (in --log and the summary). */
enum {
	CR_OK,			/* fetched, text extracted and written */
	CR_EMPTY,		/* fetched, but no article text found */
	CR_FILTERED,		/* dropped by the URL filter, not fetched */
	CR_HTTP,		/* final status not 2xx */
	CR_NOT_HTML,		/* content type or content not HTML */
	CR_TOO_LARGE,		/* over --max-bytes, decompressed */
	CR_TIMEOUT,		/* connect, total or low-speed deadline */
	CR_ROBOTS,		/* disallowed by robots.txt */
	CR_PRIVATE,		/* a private, loopback or link-local address */
	CR_REDIRECTS,		/* more than CRAWL_MAX_REDIRS redirects */
	CR_SCHEME,		/* redirected to a scheme other than http(s) */
	CR_ERROR,		/* any other network error */
	CR_BAD_HTML,		/* not parsed: nested too deep, over the work budget */
	CR_NOUTCOMES
};
extern const char *const crawl_outcome[CR_NOUTCOMES];

#define CRAWL_MAX_REDIRS 5

struct crawl_opt {
	int connections;	/* transfers in flight */
	int per_host;		/* transfers in flight per host */
	double delay;		/* seconds between request starts on one host */
	int retries;		/* extra tries after timeouts, resets, 5xx, 429 */
	double backoff;		/* seconds before the first retry; doubles */
	double timeout;		/* seconds per URL, first try to last (robots.txt: its own) */
	double connect_timeout;	/* seconds per connect */
	long low_speed;		/* abort below this many bytes/s ... */
	long low_speed_time;	/* ... for this many seconds */
	size_t max_bytes;	/* body cap, decompressed */
	size_t window;		/* URLs read ahead of the transfers */
	int allow_private;
	int ignore_robots;
	/*
	 * Keep each exchange for a WARC archive (job.wreq, wresp, ip): HTTP/1.1,
	 * the body as received (content coding and chunked framing kept).
	 */
	int warc;
	const char *agent;	/* User-Agent header */
	const char *robots_token;	/* the name robots.txt groups are matched on */
	void *resolve;		/* struct curl_slist of "host:port:address" */
	volatile sig_atomic_t *stop;	/* set: finish what is in flight, read no more */
};

/* One URL. The caller allocates it; the crawler fills in the results. */
struct crawl_job {
	char *url;
	void *user;		/* the caller's, untouched */

	int outcome;		/* CR_* */
	long status;		/* last HTTP status, 0 if none */
	char error[256];	/* why, for every outcome but CR_OK */
	char *final_url;	/* after redirects (malloc'd) */
	char *content_type;	/* as sent (malloc'd), or NULL */
	struct buf body;	/* decompressed body of a CR_OK page */
	double ms;		/* milliseconds from the first try to the end */
	time_t fetched_at;
	int tries;
	/* o.warc: the last try's request and response heads, each hop's in turn */
	struct buf wreq, wresp;
	char ip[64];		/* the last connection's address */
	/*
	 * A byte range of url (ranged set): asked with Range, taken
	 * only from a 206 answer whose Content-Range starts at range_start
	 * (and ends at range_end, when >= 0: then the body must be that long);
	 * a 200 is an error (the server ignores Range). The body is the bytes
	 * as sent (no content coding asked), whatever their type. With no
	 * end, enough(), when set, sees the body as it grows and returns 1
	 * when it holds all that is wanted: the transfer ends there, CR_OK.
	 */
	int ranged;
	long long range_start, range_end;
	int (*enough)(struct crawl_job *j);

	/* the crawler's */
	struct crawl_job *next;
	struct crawl_job *aprev, *anext;	/* the transfers in flight */
	void *host, *easy, *crawl;
	int robots, abort;
	double start;
	char refused[64];
};

struct crawl;

/*
 * What next() returns for "no job now, more later": the crawler asks
 * again after its next wait. Only while jobs are in flight (not yet
 * handed back), else the crawler would spin.
 */
extern struct crawl_job *const CRAWL_LATER;

struct crawl *crawl_new(const struct crawl_opt *o);
void crawl_free(struct crawl *c);

/*
 * Fetch the jobs next() returns (NULL at the end) and hand each back to
 * done() exactly once, on the calling thread, with its outcome; CR_OK
 * jobs carry the body. Jobs still queued when *o->stop is set are handed
 * back with outcome -1 (not attempted). tick(), when not NULL, is called
 * after every wait, and no wait is longer than a second then, so the
 * caller can write what is done while slow transfers run. Returns 0, or
 * -1 when libcurl cannot be set up.
 */
int crawl_run(struct crawl *c, struct crawl_job *(*next)(void *arg),
    void (*done)(void *arg, struct crawl_job *job), void (*tick)(void *arg),
    void *arg);
/*
 * From next() or done(): end crawl_run now. Every job not yet handed
 * back, queued or in flight, is handed back with outcome -1, and
 * crawl_run returns 0.
 */
void crawl_abort(struct crawl *c);

/* Is the address private, loopback, link-local, CGNAT, multicast or unspecified? */
int crawl_private_addr(const struct sockaddr *sa);

/* Does the start of p[0..n) look like HTML? For content types that do not say. */
int crawl_sniff_html(const char *p, size_t n);
/*
 * A Content-Type's first len bytes: 1 for text/html and
 * application/xhtml+xml, -1 for none or text/plain (sniff the body), else 0.
 */
int crawl_html_type(const char *ct, size_t len);

#endif
