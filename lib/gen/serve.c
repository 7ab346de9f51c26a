/* serve.c - gpt-sample --listen: Megatron's /api and OpenAI's /v1/completions on one port, continuously batched */
#include <errno.h>
#include <arpa/inet.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gen/gen.h"
#include "core/json.h"
#include "gen/serve.h"
#include "gen/serve_api.h"
#include "core/util.h"

#ifdef OWT_NO_MHD
/* A build without libmicrohttpd (the Makefile's GPU_ONLY without it). */
struct serve *
serve_open(const struct serve_opts *o, const struct tokenizer *vocab, char *err,
    size_t errsize, int *code)
{
	(void)o;
	(void)vocab;
	return owt_fail(err, errsize, code, XUSAGE, "--listen: this "
	    "gpt-sample was built without libmicrohttpd"), NULL;
}

const char *
serve_addr(const struct serve *sv)
{
	(void)sv;
	return "";
}

int
serve_run(struct serve *sv, struct gpt_infer *inf)
{
	(void)sv;
	(void)inf;
	return -1;
}

void
serve_close(struct serve *sv)
{
	(void)sv;
}
#else
#include <microhttpd.h>

#define SERVE_MAX_BODY (1 << 20)	/* bytes of a request body */
#define SERVE_TIMEOUT 60		/* seconds a connection may idle */
#define SERVE_CHUNK 64			/* prompt tokens fed a step (gen.h) */

/* The paths /metrics counts requests by. */
enum { SERVE_EP_COMPLETIONS, SERVE_EP_API, SERVE_EP_MODELS, SERVE_EP_HEALTH,
	SERVE_EP_METRICS, SERVE_EP_TOKENIZE, SERVE_EP_DETOKENIZE, SERVE_EP_OTHER,
	SERVE_EP_V2, SERVE_NEP = SERVE_EP_V2 + SERVE_V2_INFER };
static const char *const serve_ep[SERVE_NEP] = { "/v1/completions", "/api",
	"/v1/models", "/health", "/metrics", "/tokenize", "/detokenize",
	"other", "/v2", "/v2/health/live", "/v2/health/ready",
	"/v2/models/{name}", "/v2/models/{name}/ready",
	"/v2/models/{name}/generate", "/v2/models/{name}/generate_stream",
	"/v2/models/{name}/infer" };
/* KServe v2's (SERVE_V2_SERVER to SERVE_V2_INFER) follow "other" in order. */

/* A Prometheus histogram of seconds. */
#define SERVE_NB 12
static const double serve_bounds[SERVE_NB] = { 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30 };
struct serve_hist {
	unsigned long long n[SERVE_NB + 1];	/* the last: above all */
	unsigned long long count;
	double sum;
};

static void
hist_add(struct serve_hist *h, double v)
{
	int i = 0;

	while (i < SERVE_NB && v > serve_bounds[i])
		i++;
	h->n[i]++;
	h->count++;
	h->sum += v;
}

/*
 * Two threads: libmicrohttpd's, which reads requests, parses them
 * (serve_api_parse, its own BPE state) and queues them, and the
 * caller's, which runs the decoding loop (gen.h) and writes answers.
 * They share the queue and each request's out, done, gone and
 * suspended, under lock. A connection waits suspended while its answer
 * is made, or between a stream's events; libmicrohttpd does not watch a
 * suspended socket, so the loop polls them each step for a client that
 * hung up.
 */
struct serve {
	struct serve_opts o;
	const struct tokenizer *vocab;
	struct tokenizer_state *bs;	/* libmicrohttpd's thread's */
	struct MHD_Daemon *d;
	int fd;			/* the listening socket */
	char addr[80];
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int ready, draining;
	struct serve_req *qhead, *qtail;	/* waiting to start */
	int nqueue;
	struct serve_api_ctx api;
	int V, ctx;
	uint64_t nreq;
	struct gen gen;		/* the loop's, its thread's */
	struct serve_req **run;	/* requests with samples to run */
	int nrun, caprun;
	/* /metrics, under lock */
	struct { int ep, status; unsigned long long n; } byst[64];
	int nbyst;
	unsigned long long ptokens, gtokens;
	int busy, kv;		/* slots running, positions they hold */
	struct serve_hist ttft, tbt, total;
	double *tlast;		/* (S) a slot's last token's time */
};

/* A connection's state. */
struct conn {
	struct buf body;
	int toobig;
	int ep;			/* SERVE_EP_* */
	int v2;			/* SERVE_V2_* */
	struct serve_req *req;	/* a reference */
	double t0;		/* --log-json: when it came, what it asked */
	char what[160];
};

static volatile sig_atomic_t serve_signal;

static void
on_signal(int sig)
{
	serve_signal = sig;
}

/* Split "[ADDR]:PORT", "ADDR:PORT" or "PORT"; 0 or -1. */
static int
split_addr(const char *s, char *host, size_t hsize, char *port, size_t psize)
{
	const char *colon;

	if (s[0] == '[') {
		const char *e = strchr(s, ']');

		if (e == NULL || e[1] != ':' || (size_t)(e - s - 1) >= hsize)
			return -1;
		memcpy(host, s + 1, (size_t)(e - s - 1));
		host[e - s - 1] = '\0';
		colon = e + 1;
	} else if ((colon = strrchr(s, ':')) != NULL) {
		if ((size_t)(colon - s) >= hsize || strchr(s, ':') != colon)
			return -1;
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = '\0';
	} else {
		snprintf(host, hsize, "127.0.0.1");
		colon = s - 1;
	}
	if (strlen(colon + 1) >= psize || colon[1] == '\0' ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    atol(colon + 1) > 65535)
		return -1;
	snprintf(port, psize, "%s", colon + 1);
	return 0;
}

/* The socket listening on o->listen. */
static int
bind_addr(struct serve *sv, char *err, size_t errsize, int *code)
{
	struct addrinfo hints = { 0 }, *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char host[64], port[8], h[64];
	int fd, one = 1, e;

	if (split_addr(sv->o.listen, host, sizeof host, port, sizeof port) < 0)
		return owt_fail(err, errsize, code, XUSAGE, "--listen: '%s' is "
		    "not [ADDR:]PORT", sv->o.listen);
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((e = getaddrinfo(host, port, &hints, &ai)) != 0)
		return owt_fail(err, errsize, code, XUSAGE, "--listen: '%s': %s",
		    sv->o.listen, gai_strerror(e));
	if ((fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		e = errno;
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		errno = e;
		return owt_fail_errno(err, errsize, code, XSYS, "cannot listen "
		    "on '%s'", sv->o.listen);
	}
	freeaddrinfo(ai);
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a->sin6_addr, h, sizeof h);
		snprintf(sv->addr, sizeof sv->addr, "[%s]:%u", h,
		    ntohs(a->sin6_port));
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a->sin_addr, h, sizeof h);
		snprintf(sv->addr, sizeof sv->addr, "%s:%u", h,
		    ntohs(a->sin_port));
	}
	return fd;
}

/* Drop a reference to r (under lock). */
static void
unref(struct serve_req *r)
{
	if (--r->refs == 0)
		serve_api_free(r);
}

static enum MHD_Result
reply(struct MHD_Connection *c, int status, const char *body, size_t len,
    const char *type, int retry)
{
	struct MHD_Response *rs = MHD_create_response_from_buffer(len,
	    (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (rs == NULL)
		return MHD_NO;
	MHD_add_response_header(rs, "Content-Type", type);
	if (retry)
		MHD_add_response_header(rs, "Retry-After", "1");
	ret = MHD_queue_response(c, (unsigned)status, rs);
	MHD_destroy_response(rs);
	return ret;
}

static enum MHD_Result
reply_json(struct MHD_Connection *c, int status, const struct buf *b)
{
	return reply(c, status, b->p, b->len, "application/json", 0);
}

/* An error answer of kind. */
static enum MHD_Result
reply_error(struct serve *sv, struct MHD_Connection *c, int kind, int status,
    const char *what, const char *msg)
{
	struct buf b = { 0 };
	enum MHD_Result ret;

	serve_api_error(&b, kind, status, msg);
	ret = reply(c, status, b.p, b.len, "application/json",
	    status == 429 || status == 503);
	if (!sv->o.quiet)
		owt_warn("%s %d: %s", what, status, msg);
	buf_free(&b);
	return ret;
}

/* A stream's events as they come (libmicrohttpd's thread). */
static ssize_t
stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct serve_req *r = cls;
	struct serve *sv = r->sv;
	ssize_t n;

	(void)pos;
	pthread_mutex_lock(&sv->lock);
	if (r->outsent < r->out.len) {
		n = (ssize_t)(r->out.len - r->outsent < max ? r->out.len -
		    r->outsent : max);
		memcpy(out, r->out.p + r->outsent, (size_t)n);
		r->outsent += (size_t)n;
	} else if (r->done) {
		n = MHD_CONTENT_READER_END_OF_STREAM;
	} else if (r->gone) {
		n = MHD_CONTENT_READER_END_WITH_ERROR;
	} else {
		r->suspended = 1;
		MHD_suspend_connection(r->conn);
		n = 0;
	}
	pthread_mutex_unlock(&sv->lock);
	return n;
}

/* The answer of r, made by the loop, to its resumed connection. */
static enum MHD_Result
reply_done(struct serve *sv, struct MHD_Connection *c, struct serve_req *r)
{
	enum MHD_Result ret;
	struct buf b = { 0 };
	int status;

	pthread_mutex_lock(&sv->lock);
	buf_add(&b, r->out.p, r->out.len);
	status = r->status;
	pthread_mutex_unlock(&sv->lock);
	ret = reply(c, status, b.p, b.len, "application/json", status == 503);
	buf_free(&b);
	return ret;
}

/* Queue a generation request (kind) of body. */
static enum MHD_Result
generate(struct serve *sv, struct MHD_Connection *c, struct conn *cs,
    int kind, const char *what)
{
	struct serve_req *r;
	struct buf err = { 0 };
	enum MHD_Result ret;
	int status;

	if (cs->toobig)
		return reply_error(sv, c, kind, 413, what, "the request body "
		    "is over 1 MiB");
	if (!sv->ready || sv->draining)
		return reply_error(sv, c, kind, 503, what, sv->draining ?
		    "the server is shutting down" : "the model is loading");
	sv->api.seed = owt_mix64(++sv->nreq ^ (uint64_t)time(NULL));
	r = serve_api_parse(kind, cs->body.p ? cs->body.p : "", cs->body.len,
	    &sv->api, &status, &err);
	if (r == NULL) {
		ret = reply(c, status, err.p, err.len, "application/json", 0);
		if (!sv->o.quiet && err.len > 0) {
			err.p[err.len - 1] = '\0';
			owt_warn("%s %d: %s", what, status, err.p);
		}
		buf_free(&err);
		return ret;
	}
	buf_free(&err);
	r->what = what;
	r->t0 = owt_now();
	r->conn = c;
	r->sv = sv;
	pthread_mutex_lock(&sv->lock);
	if (sv->nqueue >= sv->o.queue) {
		pthread_mutex_unlock(&sv->lock);
		serve_api_free(r);
		return reply_error(sv, c, kind, 429, what, "the queue is full: "
		    "try again later");
	}
	r->refs = 2;		/* the connection's and the loop's */
	r->status = 200;
	cs->req = r;
	if (sv->qtail)
		sv->qtail->qnext = r;
	else
		sv->qhead = r;
	sv->qtail = r;
	sv->nqueue++;
	pthread_cond_signal(&sv->wake);
	if (r->stream) {
		struct MHD_Response *rs = MHD_create_response_from_callback(
		    MHD_SIZE_UNKNOWN, 4096, stream_read, r, NULL);

		pthread_mutex_unlock(&sv->lock);
		if (rs == NULL)
			return MHD_NO;
		MHD_add_response_header(rs, "Content-Type",
		    "text/event-stream");
		MHD_add_response_header(rs, "Cache-Control", "no-cache");
		/* nginx: each event on at once, whatever proxy_buffering */
		MHD_add_response_header(rs, "X-Accel-Buffering", "no");
		ret = MHD_queue_response(c, 200, rs);
		MHD_destroy_response(rs);
		return ret;
	}
	r->suspended = 1;
	MHD_suspend_connection(c);
	pthread_mutex_unlock(&sv->lock);
	return MHD_YES;
}

static void
models(struct serve *sv, struct buf *b)
{
	struct json_w w;

	json_w_init(&w, b, JSON_COMPACT);
	json_w_obj(&w);
	json_w_kstr(&w, "object", "list");
	json_w_key(&w, "data");
	json_w_arr(&w);
	json_w_obj(&w);
	json_w_kstr(&w, "id", sv->o.name);
	json_w_kstr(&w, "object", "model");
	json_w_kint(&w, "created", 0);
	json_w_kstr(&w, "owned_by", "owt");
	json_w_kint(&w, "max_model_len", sv->ctx);
	json_w_end(&w);
	json_w_end(&w);
	json_w_end(&w);
	buf_add(b, "\n", 1);
}

static void
hist_write(struct buf *b, const char *name, const char *help,
    const struct serve_hist *h)
{
	unsigned long long n = 0;
	char line[160];
	int i;

	snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s histogram\n",
	    name, help, name);
	buf_adds(b, line);
	for (i = 0; i <= SERVE_NB; i++) {
		n += h->n[i];
		if (i < SERVE_NB)
			snprintf(line, sizeof line, "%s_bucket{le=\"%g\"} %llu\n",
			    name, serve_bounds[i], n);
		else
			snprintf(line, sizeof line, "%s_bucket{le=\"+Inf\"} "
			    "%llu\n", name, n);
		buf_adds(b, line);
	}
	snprintf(line, sizeof line, "%s_sum %.6f\n%s_count %llu\n", name,
	    h->sum, name, h->count);
	buf_adds(b, line);
}

/* One metric of Prometheus' text format: its HELP, TYPE and value lines. */
static void
metric(struct buf *b, const char *name, const char *help, const char *type,
    unsigned long long v)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name,
	    type, name, v);
}

/* Prometheus' text format. */
static void
metrics(struct serve *sv, struct buf *b)
{
	char line[200];
	int i;

	pthread_mutex_lock(&sv->lock);
	buf_adds(b, "# HELP owt_requests_total HTTP requests answered, by "
	    "path and status (0: no answer sent).\n"
	    "# TYPE owt_requests_total counter\n");
	for (i = 0; i < sv->nbyst; i++) {
		snprintf(line, sizeof line, "owt_requests_total{path=\"%s\","
		    "status=\"%d\"} %llu\n", serve_ep[sv->byst[i].ep],
		    sv->byst[i].status, sv->byst[i].n);
		buf_adds(b, line);
	}
	metric(b, "owt_prompt_tokens_total", "Prompt tokens fed.", "counter",
	    sv->ptokens);
	metric(b, "owt_generated_tokens_total", "Tokens generated.", "counter",
	    sv->gtokens);
	metric(b, "owt_queue_length", "Requests waiting for a slot.", "gauge",
	    (unsigned long long)sv->nqueue);
	metric(b, "owt_slots_busy", "Slots running a sample.", "gauge",
	    (unsigned long long)sv->busy);
	metric(b, "owt_slots", "Slots (--parallel).", "gauge",
	    (unsigned long long)sv->o.parallel);
	metric(b, "owt_kv_cache_positions", "Key/value cache positions in "
	    "use, of slots times the context.", "gauge",
	    (unsigned long long)sv->kv);
	hist_write(b, "owt_time_to_first_token_seconds", "From a request's "
	    "arrival to a sample's first token.", &sv->ttft);
	hist_write(b, "owt_time_per_output_token_seconds", "Between a "
	    "sample's tokens.", &sv->tbt);
	hist_write(b, "owt_request_duration_seconds", "From a request's "
	    "arrival to its end.", &sv->total);
	pthread_mutex_unlock(&sv->lock);
}

/*
 * vLLM's POST /tokenize ({"prompt": text} -> tokens, count,
 * max_model_len) and /detokenize ({"tokens": ids} -> prompt), answered
 * on libmicrohttpd's thread.
 */
static enum MHD_Result
tokenize(struct serve *sv, struct MHD_Connection *c, struct conn *cs,
    int de)
{
	const char *what = de ? "POST /detokenize" : "POST /tokenize";
	struct json_val *doc, *v;
	struct bpe_ids ids = { 0 };
	struct buf b = { 0 };
	struct json_w w;
	enum MHD_Result ret;
	char why[256];
	size_t i;

	if (cs->toobig)
		return reply_error(sv, c, SERVE_OPENAI, 413, what, "the request "
		    "body is over 1 MiB");
	if ((doc = json_doc_parse(cs->body.p ? cs->body.p : "", cs->body.len,
	    why, sizeof why, NULL)) == NULL || doc->type != JV_MAP) {
		json_doc_free(doc);
		return reply_error(sv, c, SERVE_OPENAI, 400, what, "the request "
		    "body must be a JSON object");
	}
	v = (struct json_val *)json_doc_get(doc, de ? "tokens" : "prompt");
	if (!de && (v == NULL || v->type != JV_STRING)) {
		json_doc_free(doc);
		return reply_error(sv, c, SERVE_OPENAI, 400, what, "prompt: "
		    "must be a string");
	}
	if (de && (v == NULL || v->type != JV_ARRAY)) {
		json_doc_free(doc);
		return reply_error(sv, c, SERVE_OPENAI, 400, what, "tokens: "
		    "must be a list of token ids");
	}
	json_w_init(&w, &b, JSON_COMPACT);
	json_w_obj(&w);
	if (de) {
		struct buf text = { 0 }, lossy = { 0 };
		uint32_t id;

		for (i = 0; i < v->nkids; i++) {
			if (v->kids[i].type != JV_NUMBER || v->kids[i].num < 0 ||
			    v->kids[i].num >= tokenizer_nvocab(sv->vocab) ||
			    v->kids[i].num != floor(v->kids[i].num)) {
				buf_free(&text);
				buf_free(&b);
				json_doc_free(doc);
				return reply_error(sv, c, SERVE_OPENAI, 400, what,
				    "tokens: must be a list of token ids");
			}
			id = (uint32_t)v->kids[i].num;
			tokenizer_decode(sv->vocab, &id, 1, &text);
		}
		json_w_key(&w, "prompt");
		lossy.len = 0;
		json_string_lossy(&lossy, text.p ? text.p : "", text.len);
		json_w_raw(&w, lossy.p, lossy.len);
		json_w_end(&w);
		buf_free(&lossy);
		buf_free(&text);
	} else {
		tokenizer_encode(sv->bs, v->str, strlen(v->str), &ids);
		json_w_ku64(&w, "count", ids.n);
		json_w_kint(&w, "max_model_len", sv->ctx);
		json_w_key(&w, "tokens");
		json_w_arr(&w);
		for (i = 0; i < ids.n; i++)
			json_w_u64(&w, ids.v[i]);
		json_w_end(&w);
		json_w_end(&w);
		free(ids.v);
	}
	buf_add(&b, "\n", 1);
	json_doc_free(doc);
	ret = reply_json(c, 200, &b);
	buf_free(&b);
	return ret;
}

/* KServe v2's paths (Triton's protocol). */
static enum MHD_Result
v2(struct serve *sv, struct MHD_Connection *c, struct conn *cs,
    const char *method)
{
	static const char *const what[] = { "POST /v2/models/{name}/generate",
	    "POST /v2/models/{name}/generate_stream",
	    "POST /v2/models/{name}/infer" };
	struct buf b = { 0 };
	struct json_w w;
	enum MHD_Result ret;
	int get = strcmp(method, "GET") == 0, ok;

	if (cs->v2 == SERVE_V2_NOMODEL || cs->v2 == SERVE_V2_UNKNOWN) {
		const char *url = cs->what + strlen(method) + 1;
		char msg[300];

		if (cs->v2 == SERVE_V2_NOMODEL)	/* Triton's words */
			snprintf(msg, sizeof msg, "Request for unknown model: "
			    "'%.*s' is not found", (int)strcspn(url + 11, "/"),
			    url + 11);
		else
			snprintf(msg, sizeof msg, "no such path: %.200s", url);
		return reply_error(sv, c, SERVE_GENERATE, 404, method, msg);
	}
	if (cs->v2 >= SERVE_V2_GENERATE) {
		if (strcmp(method, "POST") != 0)
			return reply_error(sv, c, SERVE_GENERATE, 405, method,
			    "the method is not allowed here");
		return generate(sv, c, cs, SERVE_GENERATE + cs->v2 -
		    SERVE_V2_GENERATE, what[cs->v2 - SERVE_V2_GENERATE]);
	}
	if (!get)
		return reply_error(sv, c, SERVE_GENERATE, 405, method,
		    "the method is not allowed here");
	pthread_mutex_lock(&sv->lock);
	ok = sv->ready && !sv->draining;
	pthread_mutex_unlock(&sv->lock);
	if (cs->v2 == SERVE_V2_SERVER || cs->v2 == SERVE_V2_MODEL) {
		serve_api_v2_meta(&b, cs->v2, sv->o.name, sv->ctx);
		ret = reply_json(c, 200, &b);
	} else {		/* KServe's {"live": true}, {"ready": ok} */
		json_w_init(&w, &b, JSON_COMPACT);
		json_w_obj(&w);
		json_w_key(&w, cs->v2 == SERVE_V2_LIVE ? "live" : "ready");
		json_w_bool(&w, cs->v2 == SERVE_V2_LIVE || ok);
		json_w_end(&w);
		buf_add(&b, "\n", 1);
		ok = ok || cs->v2 == SERVE_V2_LIVE;
		ret = reply(c, ok ? 200 : 503, b.p, b.len, "application/json",
		    !ok);
	}
	buf_free(&b);
	return ret;
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *data, size_t *size,
    void **ptr)
{
	struct serve *sv = cls;
	struct conn *cs = *ptr;
	struct buf b = { 0 };
	struct json_w w;
	enum MHD_Result ret;
	int get = strcmp(method, "GET") == 0;

	(void)version;
	if (cs == NULL) {
		*ptr = cs = xcalloc(1, sizeof *cs);
		for (cs->ep = 0; cs->ep < SERVE_EP_OTHER &&
		    strcmp(url, serve_ep[cs->ep]) != 0; cs->ep++)
			;
		cs->v2 = serve_api_v2_path(url, sv->o.name);
		if (cs->v2 >= SERVE_V2_SERVER && cs->v2 <= SERVE_V2_INFER)
			cs->ep = SERVE_EP_V2 + cs->v2 - SERVE_V2_SERVER;
		cs->t0 = owt_now();
		snprintf(cs->what, sizeof cs->what, "%s %s", method, url);
		return MHD_YES;
	}
	if (*size > 0) {
		if (cs->body.len + *size > SERVE_MAX_BODY)
			cs->toobig = 1;
		else
			buf_add(&cs->body, data, *size);
		*size = 0;
		return MHD_YES;
	}
	if (cs->req != NULL)	/* resumed with its answer */
		return reply_done(sv, c, cs->req);
	if (sv->o.key != NULL && cs->ep != SERVE_EP_HEALTH && cs->v2 !=
	    SERVE_V2_LIVE && cs->v2 != SERVE_V2_READY) {
		const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		    "Authorization");

		if (a == NULL || strncmp(a, "Bearer ", 7) != 0 ||
		    strcmp(a + 7, sv->o.key) != 0)
			return reply_error(sv, c, cs->ep == SERVE_EP_API ?
			    SERVE_MEGATRON : cs->v2 ? SERVE_GENERATE :
			    SERVE_OPENAI, 401, method,
			    a == NULL ? "no API key: send Authorization: "
			    "Bearer KEY" : "Incorrect API key provided");
	}
	if (strcmp(url, "/health") == 0 && get) {
		json_w_init(&w, &b, JSON_COMPACT);
		json_w_obj(&w);
		json_w_kstr(&w, "status",
		    sv->draining ? "shutting down" : sv->ready ?
		    "ok" : "loading");
		json_w_end(&w);
		buf_add(&b, "\n", 1);
		ret = reply(c, sv->ready && !sv->draining ? 200 : 503, b.p,
		    b.len, "application/json", !sv->ready || sv->draining);
	} else if (strcmp(url, "/v1/models") == 0 && get) {
		models(sv, &b);
		ret = reply_json(c, 200, &b);
	} else if (strcmp(url, "/metrics") == 0 && get) {
		metrics(sv, &b);
		ret = reply(c, 200, b.p, b.len, "text/plain; version=0.0.4", 0);
	} else if (strcmp(url, "/v1/completions") == 0 &&
	    strcmp(method, "POST") == 0) {
		ret = generate(sv, c, cs, SERVE_OPENAI, "POST /v1/completions");
	} else if (strcmp(url, "/api") == 0 && strcmp(method, "PUT") == 0) {
		ret = generate(sv, c, cs, SERVE_MEGATRON, "PUT /api");
	} else if ((cs->ep == SERVE_EP_TOKENIZE || cs->ep ==
	    SERVE_EP_DETOKENIZE) && strcmp(method, "POST") == 0) {
		ret = tokenize(sv, c, cs, cs->ep == SERVE_EP_DETOKENIZE);
	} else if (cs->v2 != SERVE_V2_NONE) {
		ret = v2(sv, c, cs, method);
	} else if (cs->ep != SERVE_EP_OTHER) {
		ret = reply_error(sv, c, strcmp(url, "/api") == 0 ?
		    SERVE_MEGATRON : SERVE_OPENAI, 405, method,
		    "the method is not allowed here");
	} else {
		char msg[300];

		snprintf(msg, sizeof msg, "no such path: %.200s", url);
		ret = reply_error(sv, c, SERVE_OPENAI, 404, method, msg);
	}
	buf_free(&b);
	return ret;
}

/*
 * --log-json: the line of a request answered (under lock): when it came
 * (seconds since the epoch), what it asked, its status (0: none sent),
 * its seconds, and for a generation its samples and tokens.
 */
static void
log_json(struct serve *sv, const struct conn *cs, int status)
{
	const struct serve_req *r = cs->req;
	struct buf b = { 0 };
	struct json_w w;
	long long gen = 0;
	double now = owt_now();
	struct timespec ts;
	int i;

	clock_gettime(CLOCK_REALTIME, &ts);
	json_w_init(&w, &b, JSON_SPACED | JSON_LOSSY);
	json_w_obj(&w);
	json_w_key(&w, "time");
	json_w_num(&w, "%.3f", (double)ts.tv_sec + ts.tv_nsec / 1e9 -
	    (now - cs->t0));
	json_w_kstr(&w, "request", cs->what);
	json_w_kint(&w, "status", status);
	json_w_key(&w, "seconds");
	json_w_num(&w, "%.6f", now - cs->t0);
	if (r != NULL) {
		for (i = 0; i < r->nseq; i++)
			gen += (long long)r->seq[i].ids.n;
		json_w_kint(&w, "samples", r->nseq);
		json_w_kint(&w, "prompt_tokens", r->ptokens);
		json_w_kint(&w, "generated_tokens", gen);
		json_w_key(&w, "client_gone");
		json_w_bool(&w, r->gone);
	}
	json_w_end(&w);
	buf_add(&b, "\n", 1);
	fwrite(b.p, 1, b.len, sv->o.log);	/* sample_serve checks it */
	fflush(sv->o.log);
	buf_free(&b);
}

static void
completed(void *cls, struct MHD_Connection *c, void **ptr,
    enum MHD_RequestTerminationCode why)
{
	struct serve *sv = cls;
	struct conn *cs = *ptr;

	const union MHD_ConnectionInfo *ci;
	int status, i;

	(void)why;
	if (cs == NULL)
		return;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
	status = ci != NULL ? (int)ci->http_status : 0;
	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < sv->nbyst && (sv->byst[i].ep != cs->ep ||
	    sv->byst[i].status != status); i++)
		;
	if (i < (int)(sizeof sv->byst / sizeof *sv->byst)) {
		if (i == sv->nbyst) {
			sv->byst[i].ep = cs->ep;
			sv->byst[i].status = status;
			sv->nbyst++;
		}
		sv->byst[i].n++;
	}
	if (sv->o.log != NULL && (cs->req == NULL || !cs->req->no_log))
		log_json(sv, cs, status);
	if (cs->req != NULL) {
		cs->req->gone = 1;
		cs->req->conn = NULL;
		unref(cs->req);
	}
	pthread_mutex_unlock(&sv->lock);
	buf_free(&cs->body);
	free(cs);
	*ptr = NULL;
}

struct serve *
serve_open(const struct serve_opts *o, const struct tokenizer *vocab, char *err,
    size_t errsize, int *code)
{
	struct serve *sv = xcalloc(1, sizeof *sv);

	sv->o = *o;
	sv->vocab = vocab;
	sv->bs = tokenizer_state_new(vocab, 0);
	pthread_mutex_init(&sv->lock, NULL);
	pthread_cond_init(&sv->wake, NULL);
	if ((sv->fd = bind_addr(sv, err, errsize, code)) < 0)
		goto fail;
	sv->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD |
	    MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, handle, sv,
	    MHD_OPTION_LISTEN_SOCKET, sv->fd,
	    MHD_OPTION_NOTIFY_COMPLETED, completed, sv,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_TIMEOUT,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)(o->queue + o->parallel +
	    64), MHD_OPTION_END);
	if (sv->d == NULL) {
		close(sv->fd);
		owt_fail(err, errsize, code, XSYS, "cannot start the HTTP "
		    "server on '%s'", sv->addr);
		goto fail;
	}
	return sv;
fail:
	tokenizer_state_free(sv->bs);
	pthread_mutex_destroy(&sv->lock);
	pthread_cond_destroy(&sv->wake);
	free(sv);
	return NULL;
}

const char *
serve_addr(const struct serve *sv)
{
	return sv->addr;
}

/*
 * Let r's connection go on: a stream's events, or the answer (which a
 * resumed connection's handler sends at once).
 */
static void
resume(struct serve_req *r)
{
	if (r->suspended && r->conn != NULL && (r->stream || r->done)) {
		r->suspended = 0;
		MHD_resume_connection(r->conn);
	}
}

/* Whether the client of r has hung up (r suspended, under lock). */
static int
hung_up(struct serve_req *r)
{
	const union MHD_ConnectionInfo *ci;
	struct pollfd p;
	char c;

	if (r->gone)
		return 1;
	if (!r->suspended || r->conn == NULL || (ci = MHD_get_connection_info(
	    r->conn, MHD_CONNECTION_INFO_CONNECTION_FD)) == NULL)
		return 0;
	p.fd = ci->connect_fd;
	p.events = POLLIN | POLLRDHUP;
	p.revents = 0;
	if (poll(&p, 1, 0) <= 0)
		return 0;
	if (p.revents & (POLLHUP | POLLERR | POLLRDHUP))
		return 1;
	return (p.revents & POLLIN) && recv(p.fd, &c, 1, MSG_PEEK |
	    MSG_DONTWAIT) == 0;
}

/* The log line of a request answered. */
static void
log_req(struct serve *sv, const struct serve_req *r)
{
	long long gen = 0;
	int i;

	if (sv->o.quiet || r->no_log)
		return;
	for (i = 0; i < r->nseq; i++)
		gen += (long long)r->seq[i].ids.n;
	owt_warn("%s %d%s: %d sample%s, %lld prompt and %lld generated "
	    "tokens in %.3f s", r->what, r->status, r->gone ? " (client gone)"
	    : "", r->nseq, r->nseq == 1 ? "" : "s", r->ptokens, gen,
	    owt_now() - r->t0);
}

/*
 * r is over: its answer, its connection resumed (under lock). The loop's
 * reference goes with r off the queue or the running list.
 */
static void
over(struct serve *sv, struct serve_req *r)
{
	if (!r->gone && r->status == 200)
		serve_api_answer(r);
	r->done = 1;
	log_req(sv, r);
	hist_add(&sv->total, owt_now() - r->t0);
	resume(r);
}

/* gen's callback: a token of a sample, or its end. */
static void
on_token(void *arg, struct gen_seq *g, int32_t tok)
{
	struct serve *sv = arg;
	struct serve_seq *s = (struct serve_seq *)g;
	struct serve_req *r = s->req;
	int stop = 0;

	pthread_mutex_lock(&sv->lock);
	if (tok >= 0) {
		double now = owt_now();

		sv->gtokens++;
		if (g->ngen == 1)
			hist_add(&sv->ttft, now - r->t0);
		else
			hist_add(&sv->tbt, now - sv->tlast[g->slot]);
		sv->tlast[g->slot] = now;
		if (!r->gone)
			stop = serve_api_token(s, tok, g->logits);
		resume(r);
	} else {
		s->started = 0;
		if (!r->gone)
			serve_api_end(s);
		resume(r);
		if (++r->ndone == r->nseq)
			over(sv, r);
	}
	pthread_mutex_unlock(&sv->lock);
	if (stop)
		gen_stop(&sv->gen, g);
}

/* Take r off the running list. */
static void
run_remove(struct serve *sv, int i)
{
	memmove(sv->run + i, sv->run + i + 1, (size_t)(sv->nrun - i - 1) *
	    sizeof *sv->run);
	sv->nrun--;
}

/*
 * Requests whose clients hung up: queued ones dropped, running ones'
 * samples stopped. Those to stop go to stop[] (under lock; the caller
 * stops them after).
 */
static int
reap(struct serve *sv, struct gen_seq **stop, int max)
{
	struct serve_req **pp = &sv->qhead, *r, *last = NULL;
	int n = 0, i, k;

	while ((r = *pp) != NULL) {
		if (hung_up(r)) {
			r->gone = 1;
			*pp = r->qnext;
			sv->nqueue--;
			r->ndone = r->nseq;
			over(sv, r);
			unref(r);
			continue;
		}
		last = r;
		pp = &r->qnext;
	}
	sv->qtail = last;
	for (i = 0; i < sv->nrun; i++) {
		r = sv->run[i];
		if (!hung_up(r))
			continue;
		r->gone = 1;
		r->ndone += r->nseq - r->next;	/* never started */
		r->next = r->nseq;
		for (k = 0; k < r->nseq && n < max; k++)
			if (r->seq[k].started)
				stop[n++] = &r->seq[k].g;
		if (r->ndone == r->nseq) {
			over(sv, r);
			run_remove(sv, i--);
			unref(r);
		}
	}
	return n;
}

/* Start samples in free slots: the running requests' first, then the queue's. */
static void
admit(struct serve *sv)
{
	char err[OWT_ERRSIZE];
	struct serve_seq *s;
	struct serve_req *r;
	int i;

	for (i = 0; gen_has_room(&sv->gen); ) {
		pthread_mutex_lock(&sv->lock);
		while (i < sv->nrun && sv->run[i]->next == sv->run[i]->nseq)
			i++;
		if (i == sv->nrun) {
			if ((r = sv->qhead) == NULL) {
				pthread_mutex_unlock(&sv->lock);
				return;
			}
			if ((sv->qhead = r->qnext) == NULL)
				sv->qtail = NULL;
			sv->nqueue--;
			if (sv->nrun == sv->caprun) {
				sv->caprun = sv->caprun ? 2 * sv->caprun : 16;
				sv->run = xrealloc(sv->run, (size_t)sv->caprun *
				    sizeof *sv->run);
			}
			sv->run[sv->nrun++] = r;
		}
		r = sv->run[i];
		s = &r->seq[r->next++];
		s->started = 1;
		sv->ptokens += (unsigned long long)s->nprompt;
		serve_api_begin(s);
		resume(r);
		pthread_mutex_unlock(&sv->lock);
		if (gen_start(&sv->gen, &s->g, s->prompt, s->nprompt, err,
		    sizeof err, NULL) < 0) {
			owt_warn("%s: %s", r->what, err);	/* checked */
			pthread_mutex_lock(&sv->lock);
			s->started = 0;
			if (++r->ndone == r->nseq)
				over(sv, r);
			pthread_mutex_unlock(&sv->lock);
		}
	}
}

/* Drop the requests that have ended from the running list. */
static void
prune(struct serve *sv)
{
	int i;

	pthread_mutex_lock(&sv->lock);
	sv->busy = sv->gen.running;
	for (i = sv->kv = 0; i < sv->gen.inf->S; i++)
		if (sv->gen.slot[i] != NULL)
			sv->kv += sv->gen.inf->len[i];
	for (i = 0; i < sv->nrun; i++)
		if (sv->run[i]->ndone == sv->run[i]->nseq) {
			unref(sv->run[i]);
			run_remove(sv, i--);
		}
	pthread_mutex_unlock(&sv->lock);
}

/* SIGTERM: queued requests answered 503. */
static void
drain_queue(struct serve *sv)
{
	struct serve_req *r;

	pthread_mutex_lock(&sv->lock);
	while ((r = sv->qhead) != NULL) {
		sv->qhead = r->qnext;
		sv->nqueue--;
		r->status = 503;
		serve_api_error(&r->out, r->kind, 503, "the server is shutting "
		    "down");
		r->ndone = r->nseq;
		over(sv, r);
		unref(r);
	}
	sv->qtail = NULL;
	pthread_mutex_unlock(&sv->lock);
}

int
serve_run(struct serve *sv, struct gpt_infer *inf)
{
	struct gen_opts go = { .temperature = 1, .eod = -1 };
	struct gen_seq *stop[SERVE_MAX_SAMPLES];
	struct sigaction sa = { 0 };
	double t_drain = 0;
	int n, i;

	sv->V = inf->m->cfg.vocab;
	sv->ctx = sv->o.ctx > 0 && sv->o.ctx < inf->m->cfg.maxpos ? sv->o.ctx :
	    inf->m->cfg.maxpos;
	if (sv->ctx - 1 > inf->N)
		sv->ctx = inf->N + 1;
	go.ctx = sv->ctx;
	/* a step's rows: at most S - 1 running while a prompt waits, so
	   its chunk always fits beside them */
	go.chunk = SERVE_CHUNK < inf->N - inf->S + 1 ? SERVE_CHUNK :
	    inf->N - inf->S + 1;
	inf->rowwise = 1;	/* a step's rows in one call, each its own */
	gen_init(&sv->gen, inf, &go, on_token, sv);
	sv->tlast = xcalloc((size_t)inf->S, sizeof *sv->tlast);
	sv->api.vocab = sv->vocab;
	sv->api.bs = sv->bs;
	sv->api.nl = serve_api_token_id(sv->vocab, "\n");
	sv->api.nlnl = serve_api_token_id(sv->vocab, "\n\n");
	sv->api.colon = serve_api_token_id(sv->vocab, ":");
	sv->api.model = sv->o.name;
	sv->api.ctx = sv->ctx;
	sv->api.V = sv->V;
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	pthread_mutex_lock(&sv->lock);
	sv->ready = 1;
	pthread_mutex_unlock(&sv->lock);
	for (;;) {
		if (serve_signal && !sv->draining) {
			pthread_mutex_lock(&sv->lock);
			sv->draining = 1;
			pthread_mutex_unlock(&sv->lock);
			if (!sv->o.quiet)
				owt_warn("%s: draining: %d running", strsignal(
				    serve_signal), sv->gen.running);
			if (MHD_quiesce_daemon(sv->d) == sv->fd) {
				close(sv->fd);	/* no new connections */
				sv->fd = -1;
			}
			drain_queue(sv);
			t_drain = owt_now();
		}
		pthread_mutex_lock(&sv->lock);
		n = reap(sv, stop, SERVE_MAX_SAMPLES);
		pthread_mutex_unlock(&sv->lock);
		for (i = 0; i < n; i++)
			gen_stop(&sv->gen, stop[i]);
		if (sv->draining && owt_now() - t_drain > sv->o.drain)
			for (i = 0; i < inf->S; i++)
				if (sv->gen.slot[i] != NULL)
					gen_stop(&sv->gen, sv->gen.slot[i]);
		if (!sv->draining)
			admit(sv);
		if (sv->gen.running > 0) {
			gen_step(&sv->gen);
			prune(sv);
			continue;
		}
		prune(sv);
		if (sv->draining && sv->nrun == 0)
			break;
		pthread_mutex_lock(&sv->lock);
		if (sv->qhead == NULL && !serve_signal) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 20 * 1000000;	/* the hang-up poll */
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&sv->wake, &sv->lock, &ts);
		}
		pthread_mutex_unlock(&sv->lock);
	}
	/* let the last answers go out before the daemon closes */
	for (i = 0; i < 100; i++) {
		struct timespec ts = { 0, 10 * 1000000 };
		int left;

		pthread_mutex_lock(&sv->lock);
		left = MHD_get_daemon_info(sv->d,
		    MHD_DAEMON_INFO_CURRENT_CONNECTIONS)->num_connections;
		pthread_mutex_unlock(&sv->lock);
		if (left == 0)
			break;
		nanosleep(&ts, NULL);
	}
	gen_free(&sv->gen);
	free(sv->tlast);
	sv->tlast = NULL;
	return 0;
}

void
serve_close(struct serve *sv)
{
	if (sv == NULL)
		return;
	MHD_stop_daemon(sv->d);
	if (sv->fd >= 0)
		close(sv->fd);
	tokenizer_state_free(sv->bs);
	free(sv->run);
	pthread_mutex_destroy(&sv->lock);
	pthread_cond_destroy(&sv->wake);
	free(sv);
}
#endif
