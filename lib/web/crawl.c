/*
 * crawl.c - fetch many URLs at once, politely and safely
 *
 * One libcurl multi handle drives up to o->connections transfers. URLs are
 * read a window ahead and queued per host (scheme, name and port); a host
 * starts a transfer only when it has fewer than o->per_host in flight and
 * its delay since the last start has passed. Before a host's first URL its
 * robots.txt is fetched, once. Every connection's address is checked before
 * connect (redirects included), bodies are capped after decompression, and
 * transient failures are retried with exponential backoff.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>

#include "web/crawl.h"
#include "web/robots.h"
#include "web/urlfilter.h"

static struct crawl_job later;
struct crawl_job *const CRAWL_LATER = &later;

const char *const crawl_outcome[CR_NOUTCOMES] = {
	"ok", "empty", "filtered", "http", "not-html", "too-large", "timeout",
	"robots", "private", "redirects", "scheme", "error", "bad-html"
};

/* Why a transfer was stopped from a callback. */
enum { A_NONE, A_SIZE, A_TYPE, A_STATUS, A_PRIVATE, A_RANGE, A_ENOUGH };

enum { R_NONE, R_FETCHING, R_READY, R_FAILED };

struct host {
	char *key;		/* "scheme://name:port" */
	struct host *hnext;	/* hash chain */
	struct host *wnext, *wprev;	/* list of hosts with queued jobs */
	int waiting;		/* on that list */
	struct crawl_job *q, *qlast;
	int active;
	double next_ok;		/* no start before this (owt_now) */
	double delay;
	int rstate;
	struct robots rules;
	long rstatus;		/* HTTP status of robots.txt */
	struct crawl_job *rjob;	/* the robots.txt fetch; kept when it failed */
};

struct crawl {
	struct crawl_opt o;
	CURLM *multi;
	CURL **free_h;
	int nfree, nh;
	struct host **tab;
	size_t tabsize, nhosts;
	struct host *wait;	/* circular list of hosts with queued jobs */
	size_t pending;		/* caller's jobs not yet handed back */
	int active;
	struct crawl_job *act;	/* the transfers in flight */
	int aborted;		/* crawl_abort: hand everything back, return */
	void (*done)(void *, struct crawl_job *);
	void *arg;
};

/* ---- addresses ---- */

static int
v4_private(uint32_t a)
{
	return (a >> 24) == 0 || (a >> 24) == 10 || (a >> 24) == 127 ||
	    (a & 0xffc00000) == 0x64400000 ||	/* 100.64/10 CGNAT */
	    (a & 0xffff0000) == 0xa9fe0000 ||	/* 169.254/16 */
	    (a & 0xfff00000) == 0xac100000 ||	/* 172.16/12 */
	    (a & 0xffffff00) == 0xc0000000 ||	/* 192.0.0/24 */
	    (a & 0xffff0000) == 0xc0a80000 ||	/* 192.168/16 */
	    (a & 0xfffe0000) == 0xc6120000 ||	/* 198.18/15 benchmarking */
	    (a >> 28) >= 14;			/* multicast, reserved, broadcast */
}

int
crawl_private_addr(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return v4_private(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family == AF_INET6) {
		const unsigned char *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		static const unsigned char mapped[12] = { 0,0,0,0,0,0,0,0,0,0,0xff,0xff };
		static const unsigned char zero[15];

		if (memcmp(b, mapped, 12) == 0 || memcmp(b, zero, 12) == 0)
			return v4_private((uint32_t)b[12] << 24 | b[13] << 16 |
			    b[14] << 8 | b[15]) || memcmp(b, zero, 15) == 0;
		return (b[0] & 0xfe) == 0xfc ||		/* fc00::/7 unique local */
		    (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) ||	/* fe80::/10 */
		    (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) ||	/* fec0::/10 site-local */
		    b[0] == 0xff;			/* multicast */
	}
	return 1;
}

static curl_socket_t
open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct crawl_job *j = arg;
	struct crawl *c = j->crawl;

	(void)purpose;
	if (!c->o.allow_private && crawl_private_addr(&a->addr)) {
		char ip[INET6_ADDRSTRLEN] = "?";

		if (a->family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)&a->addr)->sin_addr,
			    ip, sizeof ip);
		else if (a->family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&a->addr)->sin6_addr,
			    ip, sizeof ip);
		snprintf(j->refused, sizeof j->refused, "%s", ip);
		j->abort = A_PRIVATE;
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype, a->protocol);
}

/* ---- content ---- */

int
crawl_sniff_html(const char *p, size_t n)
{
	static const char *const tags[] = { "<!doctype html", "<html", "<head",
		"<body", "<title", "<p>", "<p ", "<div", "<br", "<h1", "<table",
		"<a ", "<meta", "<script", "<!--", NULL };
	size_t i = 0, k;

	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < n && isspace((unsigned char)p[i]))
		i++;
	for (k = 0; tags[k]; k++)
		if (n - i >= strlen(tags[k]) &&
		    strncasecmp(p + i, tags[k], strlen(tags[k])) == 0)
			return 1;
	return 0;
}

int
crawl_html_type(const char *ct, size_t len)
{
	size_t n;

	if (ct == NULL || len == 0)
		return -1;
	for (n = 0; n < len && ct[n] != ';' && ct[n] != ' ' && ct[n] != '\t';
	    n++)
		;
	if ((n == 9 && strncasecmp(ct, "text/html", 9) == 0) ||
	    (n == 21 && strncasecmp(ct, "application/xhtml+xml", 21) == 0))
		return 1;
	if (n == 10 && strncasecmp(ct, "text/plain", 10) == 0)
		return -1;
	return 0;
}

/*
 * A range's answer: 206 with "Content-Range: bytes START-END/LEN", START
 * the one asked for, END too when one was. 0, or -1 with j->error.
 */
static int
range_check(struct crawl_job *j, long status)
{
	struct curl_header *h;
	long long a, b;
	char tail[2];

	if (status != 206) {
		snprintf(j->error, sizeof j->error, "HTTP %ld to a Range request "
		    "(the server ignores Range)", status);
		return -1;
	}
	if (curl_easy_header(j->easy, "Content-Range", 0, CURLH_HEADER, -1,
	    &h) != CURLHE_OK) {
		snprintf(j->error, sizeof j->error, "HTTP 206 without Content-Range");
		return -1;
	}
	if (sscanf(h->value, "bytes %lld-%lld/%1s", &a, &b, tail) != 3 ||
	    a != j->range_start || b < a ||
	    (j->range_end >= 0 && b != j->range_end)) {
		snprintf(j->error, sizeof j->error, "wrong Content-Range '%.60s' "
		    "for bytes %lld-", h->value, j->range_start);
		if (j->range_end >= 0)
			snprintf(j->error + strlen(j->error), sizeof j->error -
			    strlen(j->error), "%lld", j->range_end);
		return -1;
	}
	return 0;
}

/*
 * The body, as libcurl decompresses it. The first call checks the status
 * and type of the final response; every call counts against the cap, so a
 * compression bomb stops at the cap, not at its compressed size.
 */
static size_t
on_write(char *p, size_t size, size_t nmemb, void *arg)
{
	struct crawl_job *j = arg;
	struct crawl *c = j->crawl;
	size_t n = size * nmemb, cap = j->robots ? ROBOTS_MAX : c->o.max_bytes;

	if (j->body.len == 0 && !j->robots) {
		long status = 0;
		char *ct = NULL;

		curl_easy_getinfo(j->easy, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_getinfo(j->easy, CURLINFO_CONTENT_TYPE, &ct);
		if (status < 200 || status > 299) {
			j->abort = A_STATUS;
			return 0;
		}
		if (j->ranged) {
			if (range_check(j, status) < 0) {
				j->abort = A_RANGE;
				return 0;
			}
		} else if (crawl_html_type(ct, ct ? strlen(ct) : 0) == 0) {
			j->abort = A_TYPE;
			return 0;
		}
	}
	if (j->body.len + n > cap) {
		j->abort = A_SIZE;
		return 0;
	}
	buf_add(&j->body, p, n);
	if (j->enough != NULL && j->enough(j)) {
		j->abort = A_ENOUGH;
		return 0;
	}
	return n;
}

/* o.warc: each response head as received, hop after hop. */
static size_t
on_header(char *p, size_t size, size_t nmemb, void *arg)
{
	struct crawl_job *j = arg;

	buf_add(&j->wresp, p, size * nmemb);
	return size * nmemb;
}

/* o.warc: each request head as sent. */
static int
on_debug(CURL *e, curl_infotype type, char *p, size_t n, void *arg)
{
	struct crawl_job *j = arg;

	(void)e;
	if (type == CURLINFO_HEADER_OUT)
		buf_add(&j->wreq, p, n);
	return 0;
}

/* ---- hosts ---- */

/* "scheme://name:port" of an absolute http(s) URL into key; 0 or -1. */
static int
host_key(const char *url, char *key, size_t size)
{
	char name[256];
	const char *s = strstr(url, "://"), *h, *e, *q;
	long port;

	if (s == NULL ||
	    urlfilter_host(url, strlen(url), name, sizeof name) < 0)
		return -1;
	port = s - url == 5 ? 443 : 80;
	h = s + 3;
	e = h + strcspn(h, "/?#");
	for (q = e; q > h && isdigit((unsigned char)q[-1]); q--)
		;
	if (q < e && q > h && q[-1] == ':' && (q - 1 == h || q[-2] != ':' || name[0] == '['))
		port = strtol(q, NULL, 10);
	snprintf(key, size, "%.*s://%s:%ld", (int)(s - url), url, name, port);
	for (s = key; *s != ':'; s++)
		key[s - key] = tolower((unsigned char)*s);
	return 0;
}

static uint64_t
strhash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return owt_mix64(h);
}

static void
wait_add(struct crawl *c, struct host *h)
{
	if (h->waiting)
		return;
	h->waiting = 1;
	if (c->wait == NULL) {
		h->wnext = h->wprev = h;
		c->wait = h;
	} else {
		h->wnext = c->wait;
		h->wprev = c->wait->wprev;
		h->wprev->wnext = h;
		c->wait->wprev = h;
	}
}

static void
wait_del(struct crawl *c, struct host *h)
{
	if (!h->waiting)
		return;
	h->waiting = 0;
	if (h->wnext == h) {
		c->wait = NULL;
	} else {
		h->wprev->wnext = h->wnext;
		h->wnext->wprev = h->wprev;
		if (c->wait == h)
			c->wait = h->wnext;
	}
	h->wnext = h->wprev = NULL;
}

static void
job_free(struct crawl_job *j)
{
	if (j == NULL)
		return;
	free(j->url);
	free(j->final_url);
	free(j->content_type);
	buf_free(&j->body);
	free(j);
}

static int
host_idle(const struct host *h)
{
	return h->q == NULL && h->active == 0 && h->rstate != R_FETCHING;
}

static void
host_free(struct host *h)
{
	robots_free(&h->rules);
	job_free(h->rjob);
	free(h->key);
	free(h);
}

/* Forget idle hosts (and their robots.txt) when the table grows large. */
static void
evict(struct crawl *c)
{
	size_t i;

	for (i = 0; i < c->tabsize; i++) {
		struct host **pp = &c->tab[i];

		while (*pp) {
			struct host *h = *pp;

			if (host_idle(h) && !h->waiting) {
				*pp = h->hnext;
				host_free(h);
				c->nhosts--;
			} else {
				pp = &h->hnext;
			}
		}
	}
}

static struct host *
host_get(struct crawl *c, const char *key)
{
	uint64_t hv = strhash(key);
	struct host *h;

	for (h = c->tab[hv & (c->tabsize - 1)]; h; h = h->hnext)
		if (strcmp(h->key, key) == 0)
			return h;
	if (c->nhosts >= 65536)
		evict(c);
	h = xcalloc(1, sizeof *h);
	h->key = xstrdup(key);
	h->delay = c->o.delay;
	h->rstate = c->o.ignore_robots ? R_READY : R_NONE;
	h->hnext = c->tab[hv & (c->tabsize - 1)];
	c->tab[hv & (c->tabsize - 1)] = h;
	c->nhosts++;
	return h;
}

static void
enqueue(struct crawl *c, struct host *h, struct crawl_job *j, int front)
{
	j->host = h;
	j->crawl = c;
	if (front) {
		j->next = h->q;
		h->q = j;
		if (h->qlast == NULL)
			h->qlast = j;
	} else {
		j->next = NULL;
		if (h->qlast)
			h->qlast->next = j;
		else
			h->q = j;
		h->qlast = j;
	}
	wait_add(c, h);
}

static struct crawl_job *
dequeue(struct host *h)
{
	struct crawl_job *j = h->q;

	if (j) {
		h->q = j->next;
		if (h->q == NULL)
			h->qlast = NULL;
		j->next = NULL;
	}
	return j;
}

/* ---- transfers ---- */

static void
set_error(struct crawl_job *j, int outcome, const char *fmt, const char *arg)
{
	j->outcome = outcome;
	snprintf(j->error, sizeof j->error, fmt, arg);
}

/* The path and query of url, for robots.txt: "/" when it has none. */
static void
url_path(const char *url, char *path, size_t size)
{
	const char *s = strstr(url, "://"), *p;
	size_t n;

	s = s ? s + 3 : url;
	p = s + strcspn(s, "/?#");
	n = strcspn(p, "#");
	if (n == 0 || *p != '/')
		snprintf(path, size, "/%.*s", (int)n, p);
	else
		snprintf(path, size, "%.*s", (int)n, p);
}

static void
hand_back(struct crawl *c, struct crawl_job *j)
{
	j->ms = (owt_now() - j->start) * 1e3;
	if (j->outcome != CR_OK)
		buf_free(&j->body);
	c->pending--;
	c->done(c->arg, j);
}

/*
 * Seconds left of j's deadline: o.timeout from the start of its first try
 * to the end of its last. A robots.txt fetch has a deadline of its own.
 */
static double
time_left(const struct crawl *c, const struct crawl_job *j)
{
	return j->tries == 0 ? c->o.timeout : j->start + c->o.timeout - owt_now();
}

/* No time left for another try: the outcome is a timeout, naming the last error. */
static void
out_of_time(struct crawl *c, struct crawl_job *j)
{
	char last[sizeof j->error];

	memcpy(last, j->error, sizeof last);
	snprintf(j->error, sizeof j->error, "no time left for a retry within "
	    "%g s (%d %s); last: %.180s", c->o.timeout, j->tries,
	    j->tries == 1 ? "try" : "tries", last[0] ? last : "?");
	j->outcome = CR_TIMEOUT;
}

static void robots_done(struct crawl *, struct crawl_job *);

static void
active_add(struct crawl *c, struct crawl_job *j)
{
	j->aprev = NULL;
	j->anext = c->act;
	if (c->act)
		c->act->aprev = j;
	c->act = j;
}

static void
active_del(struct crawl *c, struct crawl_job *j)
{
	if (j->aprev)
		j->aprev->anext = j->anext;
	else
		c->act = j->anext;
	if (j->anext)
		j->anext->aprev = j->aprev;
	j->aprev = j->anext = NULL;
}

/* Start a try of j; 0, or -1 when libcurl fails. */
static int
start(struct crawl *c, struct crawl_job *j)
{
	CURL *e;
	struct host *h = j->host;
	double left = time_left(c, j);

	/* A retry that waited (its host busy) past the deadline ends here. */
	if (left <= 0) {
		out_of_time(c, j);
		if (j->robots)
			robots_done(c, j);
		else
			hand_back(c, j);
		return 0;
	}
	if (c->nfree > 0) {
		e = c->free_h[--c->nfree];
		curl_easy_reset(e);
	} else if ((e = curl_easy_init()) == NULL) {
		return -1;
	}
	j->easy = e;
	j->abort = A_NONE;
	j->refused[0] = '\0';
	j->body.len = 0;
	if (j->tries++ == 0)
		j->start = owt_now();
	curl_easy_setopt(e, CURLOPT_URL, j->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, j);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, j);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, open_socket);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, j);
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(e, CURLOPT_MAXREDIRS, (long)CRAWL_MAX_REDIRS);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	/* Every content coding libcurl has, but not on a Range of a record. */
	if (!j->ranged || j->robots)
		curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	if (c->o.warc && !j->robots) {
		/*
		 * The archive holds the body as sent: the same content codings
		 * are asked for as without an archive (the same bytes cross the
		 * network, and deflate has a fifth of them to pack), but neither
		 * they nor the chunks are undone here; the worker undoes them
		 * for extraction (fetch_warc_build).
		 */
		j->wreq.len = j->wresp.len = 0;
		curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
		curl_easy_setopt(e, CURLOPT_HTTP_TRANSFER_DECODING, 0L);
		if (!j->ranged)
			curl_easy_setopt(e, CURLOPT_HTTP_CONTENT_DECODING, 0L);
		curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(e, CURLOPT_HEADERDATA, j);
		curl_easy_setopt(e, CURLOPT_DEBUGFUNCTION, on_debug);
		curl_easy_setopt(e, CURLOPT_DEBUGDATA, j);
		curl_easy_setopt(e, CURLOPT_VERBOSE, 1L);
	}
	if (j->ranged && !j->robots) {
		char r[48];

		if (j->range_end >= 0)
			snprintf(r, sizeof r, "%lld-%lld", j->range_start,
			    j->range_end);
		else
			snprintf(r, sizeof r, "%lld-", j->range_start);
		curl_easy_setopt(e, CURLOPT_RANGE, r);
	}
	curl_easy_setopt(e, CURLOPT_USERAGENT, c->o.agent);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->o.connect_timeout * 1e3));
	/* Only what is left of the deadline (0 would be none at all). */
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
	    left * 1e3 >= 1 ? (long)(left * 1e3) : 1L);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, c->o.low_speed);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, c->o.low_speed_time);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	if (c->o.resolve)
		curl_easy_setopt(e, CURLOPT_RESOLVE, c->o.resolve);
	if (curl_multi_add_handle(c->multi, e) != CURLM_OK)
		return -1;
	active_add(c, j);
	h->active++;
	c->active++;
	h->next_ok = owt_now() + h->delay;
	return 0;
}

/* Start (or retry) the robots.txt fetch of h. */
static int
start_robots(struct crawl *c, struct host *h)
{
	struct crawl_job *r = h->rjob;

	if (r == NULL) {
		size_t n = strlen(h->key);
		const char *port = strrchr(h->key, ':');

		/* key is scheme://name:port; a default port is left out. */
		r = h->rjob = xcalloc(1, sizeof *r);
		r->url = xmalloc(n + 16);
		if ((strncmp(h->key, "http:", 5) == 0 && strcmp(port, ":80") == 0) ||
		    (strncmp(h->key, "https:", 6) == 0 && strcmp(port, ":443") == 0))
			snprintf(r->url, n + 16, "%.*s/robots.txt",
			    (int)(port - h->key), h->key);
		else
			snprintf(r->url, n + 16, "%s/robots.txt", h->key);
		r->robots = 1;
		r->host = h;
		r->crawl = c;
	}
	h->rstate = R_FETCHING;
	return start(c, r);
}

/* Start what may start now; the seconds until the next host may, or 1. */
static double
start_ready(struct crawl *c)
{
	double now = owt_now(), wake = 1;
	struct host *h, *next;
	size_t n, i;

	if (c->wait == NULL)
		return wake;
	/* Visit each waiting host once, starting after the last one served. */
	for (n = 1, h = c->wait->wnext; h != c->wait; h = h->wnext)
		n++;
	for (i = 0, h = c->wait; i < n && c->active < c->o.connections; i++, h = next) {
		next = h->wnext;
		if (h->q == NULL) {
			wait_del(c, h);
			continue;
		}
		if (h->rstate == R_FETCHING)
			continue;
		if (h->active >= c->o.per_host)
			continue;
		if (h->next_ok > now) {
			if (h->next_ok - now < wake)
				wake = h->next_ok - now;
			continue;
		}
		if (h->rstate == R_NONE) {
			if (start_robots(c, h) < 0)
				return -1;
			continue;
		}
		{
			struct crawl_job *j = dequeue(h);
			char path[4096];

			url_path(j->url, path, sizeof path);
			if (h->rstate == R_FAILED) {
				struct crawl_job *r = h->rjob;

				j->outcome = r->outcome;
				j->status = r->status;
				snprintf(j->error, sizeof j->error, "robots.txt: %.200s", r->error);
				j->start = owt_now();
				hand_back(c, j);
			} else if (h->rules.deny_all) {
				snprintf(j->error, sizeof j->error, "robots.txt "
				    "unavailable (HTTP %ld): all disallowed", h->rstatus);
				j->outcome = CR_ROBOTS;
				j->start = owt_now();
				hand_back(c, j);
			} else if (!robots_allowed(&h->rules, path)) {
				set_error(j, CR_ROBOTS, "disallowed by %s/robots.txt", h->key);
				j->start = owt_now();
				hand_back(c, j);
			} else if (start(c, j) < 0) {
				return -1;
			}
			if (h->q == NULL)
				wait_del(c, h);
		}
		if (c->wait != NULL && next->waiting)
			c->wait = next;	/* round robin: the next host goes first */
	}
	return wake;
}

static int
retryable(CURLcode rc, long status)
{
	switch (rc) {
	case CURLE_OK:
	case CURLE_WRITE_ERROR:
		return status >= 500 || status == 429;
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_COULDNT_CONNECT:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SSL_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

/* Decide a finished transfer's outcome. */
static void
classify(struct crawl_job *j, CURLcode rc, const char *msg)
{
	char *u = NULL, *ct = NULL;
	char s[32];
	size_t cap = ((struct crawl *)j->crawl)->o.max_bytes;

	curl_easy_getinfo(j->easy, CURLINFO_RESPONSE_CODE, &j->status);
	curl_easy_getinfo(j->easy, CURLINFO_EFFECTIVE_URL, &u);
	curl_easy_getinfo(j->easy, CURLINFO_CONTENT_TYPE, &ct);
	free(j->final_url);
	free(j->content_type);
	j->final_url = xstrdup(u ? u : j->url);
	j->content_type = ct ? xstrdup(ct) : NULL;
	j->fetched_at = time(NULL);
	j->error[0] = '\0';
	j->outcome = CR_OK;
	if (j->abort == A_PRIVATE) {
		set_error(j, CR_PRIVATE, "refused to connect to private address %s",
		    j->refused);
	} else if (j->abort == A_SIZE && !j->robots) {
		snprintf(j->error, sizeof j->error, "body over %zu bytes", cap);
		j->outcome = CR_TOO_LARGE;
	} else if (j->abort == A_RANGE) {
		range_check(j, j->status);
		j->outcome = CR_ERROR;
	} else if (j->abort == A_ENOUGH) {
		;
	} else if (j->abort == A_TYPE) {
		set_error(j, CR_NOT_HTML, "content type %s", ct ? ct : "");
	} else if (j->abort == A_STATUS || (rc == CURLE_OK &&
	    (j->status < 200 || j->status > 299))) {
		snprintf(s, sizeof s, "%ld", j->status);
		set_error(j, CR_HTTP, "HTTP %s", s);
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		set_error(j, CR_TIMEOUT, "%s", msg);
	} else if (rc == CURLE_TOO_MANY_REDIRECTS) {
		set_error(j, CR_REDIRECTS, "more than %s redirects", "5");
	} else if (rc == CURLE_UNSUPPORTED_PROTOCOL) {
		set_error(j, CR_SCHEME, "%s", msg);
	} else if (rc != CURLE_OK && !(j->abort == A_SIZE && j->robots)) {
		set_error(j, CR_ERROR, "%s", msg);
	} else if (j->ranged && !j->robots) {
		if (range_check(j, j->status) < 0)
			;
		else if (j->range_end >= 0 && (long long)j->body.len !=
		    j->range_end - j->range_start + 1)
			snprintf(j->error, sizeof j->error, "short answer: %zu of "
			    "%lld bytes", j->body.len,
			    j->range_end - j->range_start + 1);
		else if (j->range_end < 0 && j->enough != NULL)
			snprintf(j->error, sizeof j->error, "the record ends past "
			    "the answer's %zu bytes", j->body.len);
		else
			return;
		j->outcome = CR_ERROR;
	} else if (!j->robots &&
	    crawl_html_type(ct, ct ? strlen(ct) : 0) < 0 &&
	    !crawl_sniff_html(j->body.p, j->body.len)) {
		set_error(j, CR_NOT_HTML, "content type %s, content not HTML",
		    ct ? ct : "missing");
	}
}

/* After a robots.txt fetch: set the host's rules, or fail its URLs. */
static void
robots_done(struct crawl *c, struct crawl_job *r)
{
	struct host *h = r->host;

	h->rstate = R_READY;
	h->rstatus = r->status;
	if (r->outcome == CR_OK) {
		robots_parse(&h->rules, r->body.p ? r->body.p : "", r->body.len,
		    c->o.robots_token);
		if (h->rules.delay > h->delay)
			h->delay = h->rules.delay < 60 ? h->rules.delay : 60;
	} else if (r->outcome == CR_HTTP) {
		/* RFC 9309: 4xx means no rules, 5xx (after retries) disallow all. */
		h->rules.deny_all = r->status >= 500;
	} else {
		h->rstate = R_FAILED;
		return;
	}
	job_free(r);
	h->rjob = NULL;
}

static void
finished(struct crawl *c, CURLMsg *m)
{
	struct crawl_job *j = NULL;
	struct host *h;
	CURL *e = m->easy_handle;
	CURLcode rc = m->data.result;
	curl_off_t retry_after = 0;
	double wait;

	curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&j);
	h = j->host;
	if (c->o.warc && !j->robots) {
		char *ip = NULL;

		curl_easy_getinfo(e, CURLINFO_PRIMARY_IP, &ip);
		snprintf(j->ip, sizeof j->ip, "%s", ip ? ip : "");
	}
	classify(j, rc, curl_easy_strerror(rc));
	curl_easy_getinfo(e, CURLINFO_RETRY_AFTER, &retry_after);
	curl_multi_remove_handle(c->multi, e);
	c->free_h[c->nfree++] = e;
	j->easy = NULL;
	active_del(c, j);
	h->active--;
	c->active--;
	if (j->outcome != CR_OK && j->abort != A_PRIVATE &&
	    retryable(j->abort == A_STATUS ? CURLE_OK : rc, j->status) &&
	    j->tries <= c->o.retries) {
		wait = c->o.backoff * pow(2, j->tries - 1);
		if (retry_after > 0 && retry_after <= 60 && retry_after > wait)
			wait = (double)retry_after;
		if (time_left(c, j) <= wait) {
			/* Waiting would use up the deadline: give up now. */
			out_of_time(c, j);
		} else {
			if (h->next_ok < owt_now() + wait)
				h->next_ok = owt_now() + wait;
			if (j->robots)
				h->rstate = R_NONE;
			else
				enqueue(c, h, j, 1);
			return;
		}
	}
	if (j->robots)
		robots_done(c, j);
	else
		hand_back(c, j);
}

struct crawl *
crawl_new(const struct crawl_opt *o)
{
	struct crawl *c = xcalloc(1, sizeof *c);

	c->o = *o;
	if (c->o.window < (size_t)c->o.connections)
		c->o.window = c->o.connections;
	c->tabsize = 1 << 12;
	c->tab = xcalloc(c->tabsize, sizeof *c->tab);
	c->free_h = xcalloc(o->connections, sizeof *c->free_h);
	return c;
}

void
crawl_free(struct crawl *c)
{
	size_t i;

	for (i = 0; i < c->tabsize; i++) {
		struct host *h, *next;

		for (h = c->tab[i]; h; h = next) {
			next = h->hnext;
			host_free(h);
		}
	}
	for (i = 0; i < (size_t)c->nfree; i++)
		curl_easy_cleanup(c->free_h[i]);
	free(c->free_h);
	free(c->tab);
	free(c);
}

/* Hand back every queued job unattempted (outcome -1). */
static void
cancel_queued(struct crawl *c)
{
	struct host *h;
	struct crawl_job *j;

	while ((h = c->wait) != NULL) {
		while ((j = dequeue(h)) != NULL) {
			j->outcome = -1;
			j->start = owt_now();
			hand_back(c, j);
		}
		wait_del(c, h);
	}
}

/*
 * Hand back every transfer in flight unfinished (outcome -1); a robots.txt
 * fetch stays its host's, freed with it.
 */
static void
cancel_active(struct crawl *c)
{
	struct crawl_job *j;

	while ((j = c->act) != NULL) {
		active_del(c, j);
		curl_multi_remove_handle(c->multi, j->easy);
		c->free_h[c->nfree++] = j->easy;
		j->easy = NULL;
		((struct host *)j->host)->active--;
		c->active--;
		if (j->robots) {
			((struct host *)j->host)->rstate = R_FAILED;
			continue;
		}
		j->outcome = -1;
		hand_back(c, j);
	}
}

void
crawl_abort(struct crawl *c)
{
	c->aborted = 1;
}

int
crawl_run(struct crawl *c, struct crawl_job *(*next)(void *),
    void (*done)(void *, struct crawl_job *), void (*tick)(void *), void *arg)
{
	int eof = 0, running, left;
	CURLMsg *m;
	double wake;

	if ((c->multi = curl_multi_init()) == NULL)
		return -1;
	c->done = done;
	c->arg = arg;
	while (!eof || c->pending > 0) {
		int stop = c->o.stop && *c->o.stop;

		if (c->aborted) {
			cancel_queued(c);
			cancel_active(c);
			break;
		}
		if (stop) {
			eof = 1;
			cancel_queued(c);
			if (c->active == 0)
				break;
		}
		while (!eof && c->pending < c->o.window) {
			struct crawl_job *j = next(arg);
			char key[512];

			if (j == CRAWL_LATER)
				break;
			if (j == NULL) {
				eof = 1;
				break;
			}
			c->pending++;
			j->crawl = c;
			if (host_key(j->url, key, sizeof key) < 0) {
				set_error(j, CR_ERROR, "no host in URL '%s'", j->url);
				j->start = owt_now();
				hand_back(c, j);
				continue;
			}
			enqueue(c, host_get(c, key), j, 0);
		}
		if (c->aborted)
			continue;
		if (stop)
			wake = 0.1;
		else if ((wake = start_ready(c)) < 0)
			return -1;
		if (c->active == 0 && c->pending == 0)
			continue;
		if (tick != NULL && wake > 1)
			wake = 1;
		curl_multi_poll(c->multi, NULL, 0, (int)(wake * 1e3) + 1, NULL);
		curl_multi_perform(c->multi, &running);
		while ((m = curl_multi_info_read(c->multi, &left)) != NULL)
			if (m->msg == CURLMSG_DONE)
				finished(c, m);
		if (tick != NULL)
			tick(arg);
	}
	curl_multi_cleanup(c->multi);
	c->multi = NULL;
	return 0;
}
