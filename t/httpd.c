/*
 * httpd.c - a small HTTP/1.1 server for the owt-fetch tests and benchmark
 *
 * usage: httpd [-a addr] [-d dir] [-l log] [-p portfile] [-t secs] [-w ms]
 *
 * Serves dir (a page P.html may be stored as P.html.gz: sent gzip-encoded
 * to clients that accept it), dir/HOST/ first for requests to HOST, and the
 * misbehaviours under /__owt/ (see route()). Binds addr (127.0.0.1) on a
 * free port written to portfile; logs "HOST PATH" per request to log; exits
 * after secs (300) or when its parent dies, so a failed test leaves nothing.
 * With -w, every answer waits ms milliseconds first: the time a server on
 * the web takes to think and the network to carry the answer, which a
 * loopback server does not have (the crawl benchmark's latency).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static const char *docroot = ".";
static int logfd = -1;
static int wait_ms;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* Request counts for /__owt/flaky and /__owt/reset keys. */
static struct { char key[64]; int n; } counters[256];
static int ncounters;

static char *bomb;
static size_t bomb_len;

struct req {
	int fd;
	char method[16], path[2048], query[2048], host[256];
	int gzip_ok, keep;
	long long ra, rb;	/* Range: bytes=ra-rb (rb -1: open), ra -1: none */
};

static int
count(const char *key)
{
	int i, n;

	pthread_mutex_lock(&mu);
	for (i = 0; i < ncounters && strcmp(counters[i].key, key) != 0; i++)
		;
	if (i == ncounters && ncounters < 256)
		snprintf(counters[ncounters++].key, sizeof counters[0].key, "%s", key);
	n = i < 256 ? ++counters[i].n : 0;
	pthread_mutex_unlock(&mu);
	return n;
}

static int
send_all(int fd, const void *p, size_t n)
{
	const char *s = p;

	while (n > 0) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= w;
	}
	return 0;
}

static int
respond(struct req *r, int code, const char *ctype, const char *extra,
    const void *body, size_t n)
{
	char h[1024];
	int k;

	k = snprintf(h, sizeof h, "HTTP/1.1 %d X\r\nContent-Length: %zu\r\n"
	    "%s%s%s%s", code, n, ctype ? "Content-Type: " : "", ctype ? ctype : "",
	    ctype ? "\r\n" : "", extra ? extra : "");
	k += snprintf(h + k, sizeof h - k, "%s\r\n",
	    r->keep ? "" : "Connection: close\r\n");
	if (send_all(r->fd, h, k) < 0)
		return -1;
	return strcmp(r->method, "HEAD") == 0 ? 0 : send_all(r->fd, body, n);
}

static void
decode(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (*s == '%' && s[1] && s[2]) {
			char hx[3] = { s[1], s[2], 0 };

			*d++ = (char)strtol(hx, NULL, 16);
			s += 2;
		} else {
			*d++ = *s == '+' ? ' ' : *s;
		}
	}
	*d = '\0';
}

/* The value of name= in the query, decoded, or NULL. */
static const char *
qparam(const struct req *r, const char *name, char *v, size_t size)
{
	const char *s = r->query;
	size_t n = strlen(name);

	while (s && *s) {
		if (strncmp(s, name, n) == 0 && s[n] == '=') {
			snprintf(v, size, "%.*s", (int)strcspn(s + n + 1, "&"), s + n + 1);
			decode(v);
			return v;
		}
		s = strchr(s, '&');
		if (s)
			s++;
	}
	return NULL;
}

static char *
slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	long len;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (p = malloc(len + 1)) != NULL &&
	    fread(p, 1, len, f) == (size_t)len) {
		*n = len;
	} else {
		free(p);
		p = NULL;
	}
	fclose(f);
	return p;
}

static char *
gunzip(const char *p, size_t n, size_t *out)
{
	z_stream z;
	size_t cap = n * 4 + 1024, len = 0;
	char *o = malloc(cap);
	int rc;

	memset(&z, 0, sizeof z);
	inflateInit2(&z, 16 + MAX_WBITS);
	z.next_in = (Bytef *)p;
	z.avail_in = n;
	do {
		if (len == cap)
			o = realloc(o, cap *= 2);
		z.next_out = (Bytef *)o + len;
		z.avail_out = cap - len;
		rc = inflate(&z, Z_NO_FLUSH);
		len = cap - z.avail_out;
	} while (rc == Z_OK);
	inflateEnd(&z);
	*out = len;
	return o;
}

static const char *
type_of(const char *path)
{
	const char *e = strrchr(path, '.');

	if (e && (strcmp(e, ".html") == 0 || strcmp(e, ".htm") == 0))
		return "text/html";
	if (e && strcmp(e, ".txt") == 0)
		return "text/plain";
	if (e && strcmp(e, ".png") == 0)
		return "image/png";
	return "application/octet-stream";
}

static int
serve_file(struct req *r)
{
	char path[4096], ct[256];
	const char *type;
	char *body;
	size_t n;
	struct stat st;

	if (strstr(r->path, ".."))
		return respond(r, 403, "text/plain", NULL, "forbidden\n", 10);
	snprintf(path, sizeof path, "%s/%s%s", docroot, r->host, r->path);
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		snprintf(path, sizeof path, "%s%s", docroot, r->path);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		strncat(path, "index.html", sizeof path - strlen(path) - 1);
	type = qparam(r, "ct", ct, sizeof ct) ? ct : type_of(path);
	if ((body = slurp(path, &n)) != NULL) {
		int rc = respond(r, 200, type, NULL, body, n);

		free(body);
		return rc;
	}
	strncat(path, ".gz", sizeof path - strlen(path) - 1);
	if ((body = slurp(path, &n)) != NULL) {
		int rc;

		if (r->gzip_ok) {
			rc = respond(r, 200, type, "Content-Encoding: gzip\r\n", body, n);
		} else {
			size_t m;
			char *plain = gunzip(body, n, &m);

			rc = respond(r, 200, type, NULL, plain, m);
			free(plain);
		}
		free(body);
		return rc;
	}
	return respond(r, 404, "text/html", NULL, "<p>not found</p>\n", 17);
}

static const char page_fmt[] =
    "<!doctype html><html><head><title>Page %s</title></head><body>"
    "<nav><a href=\"/\">Home</a> <a href=\"/news\">News</a></nav>"
    "<article><h1>Page %s</h1><p>This is the article of page %s, long enough "
    "to be taken for the text of the page, with a comma, and another one.</p>"
    "<p>A second paragraph, so that the page has more than one, and more words "
    "in it.</p></article><footer>Copyright</footer></body></html>";

static int
page(struct req *r, const char *name)
{
	char b[2048];
	int n = snprintf(b, sizeof b, page_fmt, name, name, name);

	return respond(r, 200, "text/html; charset=utf-8", NULL, b, n);
}

static int
hard_reset(struct req *r)
{
	struct linger l = { 1, 0 };

	setsockopt(r->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
	return -1;
}

/*
 * /__owt/range/HOW/FILE: a Range request of FILE answered wrongly. HOW:
 * short (206 with the Content-Range and Content-Length asked for, half
 * the bytes, then the connection closed), wrong (a Content-Range one
 * byte later than asked), none (206 without Content-Range), ignore (200,
 * the whole file); any other HOW, the right 206.
 */
static int
bad_range(struct req *r, const char *how, const char *file)
{
	char path[4096], h[512];
	char *body;
	size_t n;
	long long a = r->ra, b = r->rb;
	int k;

	snprintf(path, sizeof path, "%s/%s", docroot, file);
	if ((body = slurp(path, &n)) == NULL)
		return respond(r, 404, "text/plain", NULL, "none\n", 5);
	if (strcmp(how, "ignore") == 0 || a < 0 || (size_t)a >= n) {
		k = respond(r, 200, "application/octet-stream", NULL, body, n);
		free(body);
		return k;
	}
	if (b < 0 || (size_t)b >= n)
		b = (long long)n - 1;
	if (strcmp(how, "none") == 0)
		h[0] = '\0';
	else
		snprintf(h, sizeof h, "Content-Range: bytes %lld-%lld/%zu\r\n",
		    a + (strcmp(how, "wrong") == 0), b, n);
	if (strcmp(how, "short") == 0) {
		char hd[1024];
		int m = snprintf(hd, sizeof hd, "HTTP/1.1 206 X\r\nContent-Length: "
		    "%lld\r\n%sConnection: close\r\n\r\n", b - a + 1, h);

		send_all(r->fd, hd, m);
		send_all(r->fd, body + a, (size_t)(b - a + 1) / 2);
		free(body);
		return -1;
	}
	k = respond(r, 206, "application/octet-stream", h, body + a,
	    (size_t)(b - a + 1));
	free(body);
	return k;
}

/*
 * The /__owt/ misbehaviours; -1 closes the connection. The robots.txt of a
 * host named r503.* answers 503, of rslow.* 404 after a second.
 */
static int
route(struct req *r)
{
	char v[2048], key[64], hdr[2200];
	const char *p = r->path + 7;
	int a, b;

	if (strncmp(r->path, "/robots.txt", 11) == 0 && strncmp(r->host, "r503.", 5) == 0)
		return respond(r, 503, "text/plain", NULL, "busy\n", 5);
	if (strncmp(r->path, "/robots.txt", 11) == 0 && strncmp(r->host, "rslow.", 6) == 0) {
		usleep(1000000);
		return respond(r, 404, "text/plain", NULL, "none\n", 5);
	}
	if (strncmp(r->path, "/__owt/", 7) != 0)
		return serve_file(r);
	if (strcmp(p, "redirect") == 0 && qparam(r, "to", v, sizeof v)) {
		snprintf(hdr, sizeof hdr, "Location: %s\r\n", v);
		return respond(r, 302, "text/html", hdr, "<p>moved</p>", 12);
	}
	if (strcmp(p, "loop") == 0 || strcmp(p, "loop2") == 0) {
		snprintf(hdr, sizeof hdr, "Location: /__owt/%s\r\n",
		    strcmp(p, "loop") == 0 ? "loop2" : "loop");
		return respond(r, 301, "text/html", hdr, "", 0);
	}
	if (sscanf(p, "chain/%d", &a) == 1) {
		if (a <= 0)
			return page(r, "chain");
		snprintf(hdr, sizeof hdr, "Location: /__owt/chain/%d\r\n", a - 1);
		return respond(r, 302, "text/html", hdr, "", 0);
	}
	if (strncmp(p, "page/", 5) == 0)
		return page(r, p + 5);
	if (sscanf(p, "status/%d", &a) == 1)
		return respond(r, a, "text/html", NULL, "<p>status</p>", 13);
	if (sscanf(p, "slow/%d/%d", &a, &b) == 2) {
		usleep(a * 1000);
		if (b == 200)
			return page(r, "slow");
		return respond(r, b, "text/html", NULL, "<p>slow</p>", 11);
	}
	if (sscanf(p, "flaky/%63[^/]/%d/%d", key, &a, &b) == 3) {
		if (count(key) <= a)
			return respond(r, b, "text/html", b == 503 ?
			    "Retry-After: 1\r\n" : NULL, "<p>busy</p>", 11);
		return page(r, key);
	}
	if (sscanf(p, "reset/%63[^/]/%d", key, &a) == 2) {
		if (count(key) <= a)
			return hard_reset(r);
		return page(r, key);
	}
	if (strcmp(p, "drip") == 0) {
		static const char h[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
		    "Content-Length: 100000\r\n\r\n<html><body><p>";
		int i;

		if (send_all(r->fd, h, sizeof h - 1) < 0)
			return -1;
		for (i = 0; i < 100000; i++) {
			usleep(200000);
			if (send_all(r->fd, "a", 1) < 0)
				return -1;
		}
		return -1;
	}
	if (strcmp(p, "endless") == 0) {
		static const char h[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
		    "Connection: close\r\n\r\n<html><body>";
		char chunk[8192];

		memset(chunk, 'a', sizeof chunk);
		if (send_all(r->fd, h, sizeof h - 1) < 0)
			return -1;
		while (send_all(r->fd, chunk, sizeof chunk) == 0)
			;
		return -1;
	}
	if (strcmp(p, "bomb") == 0)
		return respond(r, 200, "text/html", "Content-Encoding: gzip\r\n",
		    bomb, bomb_len);
	if (strcmp(p, "chunked") == 0) {
		/* A page in three chunks (Transfer-Encoding: chunked). */
		static const char m[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n"
		    "2f\r\n<html><head><title>Chunked</title></head><body>\r\n"
		    "75\r\n<p>This page came in chunks, three of them, as HTTP/1.1 "
		    "allows when a server does not know the length in advance.</p>\r\n"
		    "e\r\n</body></html>\r\n0\r\n\r\n";

		return send_all(r->fd, m, sizeof m - 1);
	}
	if (sscanf(p, "range/%63[^/]/", key) == 1)
		return bad_range(r, key, p + 7 + strlen(key));
	return respond(r, 404, "text/html", NULL, "<p>no such case</p>", 19);
}

/* Read one request's head; 0, or -1 when the connection is done. */
static int
read_request(struct req *r, char *buf, size_t size, size_t *have)
{
	char *end, *line, *target;

	for (;;) {
		ssize_t k;

		buf[*have] = '\0';
		if ((end = strstr(buf, "\r\n\r\n")) != NULL)
			break;
		if (*have >= size - 1)
			return -1;
		k = recv(r->fd, buf + *have, size - 1 - *have, 0);
		if (k <= 0)
			return -1;
		*have += k;
	}
	*end = '\0';
	r->host[0] = r->query[0] = '\0';
	r->gzip_ok = 0;
	r->keep = 1;
	r->ra = r->rb = -1;
	target = malloc(4096);
	if (sscanf(buf, "%15s %4095s", r->method, target) != 2) {
		free(target);
		return -1;
	}
	snprintf(r->path, sizeof r->path, "%.*s", (int)strcspn(target, "?"), target);
	if (strchr(target, '?'))
		snprintf(r->query, sizeof r->query, "%s", strchr(target, '?') + 1);
	free(target);
	for (line = strstr(buf, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
		char *s = line + 2;

		if (strncasecmp(s, "Host:", 5) == 0)
			sscanf(s + 5, " %255[^:\r]", r->host);
		else if (strncasecmp(s, "Accept-Encoding:", 16) == 0)
			r->gzip_ok = strstr(s, "gzip") != NULL;
		else if (strncasecmp(s, "Range:", 6) == 0 &&
		    sscanf(s + 6, " bytes=%lld-", &r->ra) == 1 &&
		    sscanf(strchr(s, '-') + 1, "%lld", &r->rb) != 1)
			r->rb = -1;
		else if (strncasecmp(s, "Connection:", 11) == 0)
			r->keep = strstr(s, "close") == NULL && strstr(s, "Close") == NULL;
	}
	/* Keep what follows the head (a pipelined request). */
	*have -= end + 4 - buf;
	memmove(buf, end + 4, *have);
	return 0;
}

static void *
client(void *arg)
{
	struct req r;
	char *buf = malloc(65536);
	size_t have = 0;

	memset(&r, 0, sizeof r);
	r.fd = (int)(long)arg;
	while (read_request(&r, buf, 65536, &have) == 0) {
		if (logfd >= 0) {
			char l[2400];
			int n = snprintf(l, sizeof l, "%s %s%s%s\n", r.host, r.path,
			    r.query[0] ? "?" : "", r.query);

			if (write(logfd, l, n) < 0)
				break;
		}
		if (wait_ms > 0)
			usleep((useconds_t)wait_ms * 1000);
		if (route(&r) < 0 || !r.keep)
			break;
	}
	close(r.fd);
	free(buf);
	return NULL;
}

/* 64 MiB of 'a', gzip-compressed (about 64 KB): a compression bomb. */
static void
make_bomb(void)
{
	size_t cap = 1 << 20;
	char *chunk = malloc(1 << 20);
	z_stream z;
	int i, rc = Z_OK;

	memset(chunk, 'a', 1 << 20);
	memset(&z, 0, sizeof z);
	deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
	bomb = malloc(cap);
	for (i = 0; i <= 64 && rc != Z_STREAM_END; i++) {
		z.next_in = (Bytef *)chunk;
		z.avail_in = i < 64 ? 1 << 20 : 0;
		do {
			if (cap - bomb_len < 65536)
				bomb = realloc(bomb, cap *= 2);
			z.next_out = (Bytef *)bomb + bomb_len;
			z.avail_out = cap - bomb_len;
			rc = deflate(&z, i < 64 ? Z_NO_FLUSH : Z_FINISH);
			bomb_len = cap - z.avail_out;
		} while (z.avail_in > 0 || (i == 64 && rc != Z_STREAM_END));
	}
	deflateEnd(&z);
	free(chunk);
}

int
main(int argc, char **argv)
{
	const char *addr = "127.0.0.1", *portfile = NULL;
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;
	int c, s, one = 1, secs = 300;
	pthread_attr_t at;

	while ((c = getopt(argc, argv, "a:d:l:p:t:w:")) != -1) {
		switch (c) {
		case 'a': addr = optarg; break;
		case 'd': docroot = optarg; break;
		case 'l':
			logfd = open(optarg, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0666);
			break;
		case 'p': portfile = optarg; break;
		case 't': secs = atoi(optarg); break;
		case 'w': wait_ms = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: httpd [-a addr] [-d dir] [-l log] "
			    "[-p portfile] [-t secs] [-w ms]\n");
			return 2;
		}
	}
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	signal(SIGPIPE, SIG_IGN);
	alarm(secs);
	make_bomb();
	s = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	inet_pton(AF_INET, addr, &sa.sin_addr);
	if (bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 1024) < 0) {
		perror("httpd: bind");
		return 3;
	}
	getsockname(s, (struct sockaddr *)&sa, &sl);
	if (portfile) {
		char tmp[4096];
		FILE *f;

		snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
		if ((f = fopen(tmp, "w")) == NULL)
			return 3;
		fprintf(f, "%d\n", ntohs(sa.sin_port));
		fclose(f);
		rename(tmp, portfile);
	}
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 << 10);
	for (;;) {
		int fd = accept(s, NULL, NULL);
		pthread_t t;

		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (pthread_create(&t, &at, client, (void *)(long)fd) != 0)
			close(fd);
	}
}
