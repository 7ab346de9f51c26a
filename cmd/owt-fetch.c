/* owt-fetch - filter URLs, crawl them politely, write their article text as JSONL */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <zlib.h>

#include "crawl.h"
#include "extract.h"
#include "input.h"
#include "jsonl.h"
#include "outfile.h"
#include "par.h"
#include "progress.h"
#include "urlfilter.h"
#include "urlset.h"
#include "util.h"

static const char usage_line[] =
    "usage: owt-fetch [-hkq] [--allow-private] [--backoff secs] "
    "[--blacklist file] [--connect-timeout secs] [--connections n] "
    "[--delay secs] [--extract] [--filter-only] [--html-dir dir] "
    "[--ignore-robots] [--json-keys key] [--log file] [--low-speed bytes] "
    "[--max-bytes size] [--per-host n] [--progress] [--resolve host:port:addr] "
    "[--resume log] [--retries n] [--shard k/n] [--timeout secs] "
    "[--user-agent string] [--version] [--workers n] [file ...]\n";

static const char options_help[] =
    "  -h, --help              print this help and exit\n"
    "  -k, --keep-going        skip bad input records (still exit 1)\n"
    "  -q, --quiet             no summary, progress or per-URL warnings\n"
    "      --allow-private     allow private, loopback and link-local addresses\n"
    "      --backoff secs      wait before the first retry, doubling (1)\n"
    "      --blacklist file    more blacklisted domains, one a line\n"
    "      --connect-timeout secs  connect deadline per try (10)\n"
    "      --connections n     transfers in flight (64)\n"
    "      --delay secs        between request starts on one host (1)\n"
    "      --extract           read saved HTML files instead of fetching URLs\n"
    "      --filter-only       only filter the URLs; write the ones kept\n"
    "      --html-dir dir      keep every fetched page as dir/HASH.html.gz\n"
    "      --ignore-robots     do not fetch or honour robots.txt\n"
    "      --json-keys key     the output field of the text (text)\n"
    "      --log file          every URL's outcome as JSONL\n"
    "      --low-speed bytes   abort a transfer slower than this per second over 10 s (1K)\n"
    "      --max-bytes size    body cap after decompression (10M)\n"
    "      --per-host n        transfers in flight per host (2)\n"
    "      --progress          show progress even when stderr is not a terminal\n"
    "      --resolve host:port:addr  use addr for host:port (as curl --resolve)\n"
    "      --resume log        skip the URLs a log already has\n"
    "      --retries n         retries after timeouts, resets, 5xx and 429 (2)\n"
    "      --shard k/n         take every n-th input line, from the k-th (0-based)\n"
    "      --timeout secs      deadline per URL, retries included (30)\n"
    "      --user-agent string the User-Agent header (owt-fetch/VERSION)\n"
    "      --version           print the version and exit\n"
    "      --workers n         extraction threads (the number of CPUs)\n";

/*
 * One input line: a URL (or a file with --extract) and its record. url is
 * the URL as given, which the output and the log name; job.url is what is
 * fetched, its normal form (urlfilter_normalize), the same string when equal.
 */
struct item {
	struct crawl_job job;
	char *url;
	char *line;		/* the JSONL record, or NULL for a plain line */
	size_t len;
	char *ctype;		/* --extract: the record's content_type */
	char *file;		/* the saved page */
	struct buf title, text;
	struct extract_meta meta;
	const char *enc;
	size_t bytes;
	int bad;		/* --extract: the file could not be read */
};

static struct {
	int keep_going, quiet, progress, extract, filter_only, workers;
	const char *blacklist, *html_dir, *log, *resume, *text_key;
	unsigned long shard_k, shard_n;
	struct crawl_opt c;
} opt = {
	.text_key = "text", .shard_n = 1,
	.c = { .connections = 64, .per_host = 2, .delay = 1, .retries = 2,
	    .backoff = 1, .timeout = 30, .connect_timeout = 10, .low_speed = 1024,
	    .low_speed_time = 10, .max_bytes = 10 << 20, .window = 16384,
	    .robots_token = "owt-fetch" },
};

static volatile sig_atomic_t stop, stop_sig;
static int status = XOK;
static struct urlfilter filter;
static struct buf norm;		/* the normal form of the URL filtered last */
static struct urlset done_set;
static struct tally count[CR_NOUTCOMES], reasons[URL_NREASONS];
static unsigned long long nresumed, ncancelled, nfinished, nbad;
static uint64_t nbytes;
static struct progress prog;
static struct par *par;
static struct buf out, logbuf;
static int logfd = -1;
static double last_flush;
static struct jsonl_rec rec, orec;

/* Input: the operands in turn, line by line. */
static char **operands;
static int noperands, cur = -1;
static struct input in;
static int in_open;
static unsigned long long lineno_all;

static void
on_signal(int sig)
{
	stop = 1;
	stop_sig = sig;
}

/* Output first, then the log: a log line never names a page not yet written. */
static void
flush_all(void)
{
	if (out.len > 0) {
		if (fwrite(out.p, 1, out.len, stdout) != out.len ||
		    fflush(stdout) != 0) {
			/* SIGPIPE is ignored for libcurl's sockets, not for us. */
			if (errno == EPIPE) {
				outfile_signal_cleanup();
				owt_die_sigpipe();
			}
			exit(owt_finish(XSYS));
		}
		out.len = 0;
	}
	if (logbuf.len > 0) {
		size_t off = 0;

		while (off < logbuf.len) {
			ssize_t w = write(logfd, logbuf.p + off, logbuf.len - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				owt_die_errno(XSYS, "cannot write '%s'", opt.log);
			off += w;
		}
		logbuf.len = 0;
	}
	last_flush = owt_now();
}

static void
bad_input(const char *msg)
{
	owt_warn("%s", msg);
	nbad++;
	status = XDATA;
	if (!opt.keep_going) {
		flush_all();
		exit(owt_finish(XDATA));
	}
}

/* The next input line (without '\n'), over all operands; 0 at the end. */
static int
next_line(char **line, size_t *len)
{
	int k;

	for (;;) {
		if (!in_open) {
			if (++cur >= noperands)
				return 0;
			if (input_open(&in, operands[cur]) < 0) {
				if (in.errcode == XSYS)
					owt_die(XSYS, "%s", in.err);
				bad_input(in.err);
				continue;
			}
			in_open = 1;
		}
		if ((k = input_line(&in, line, len)) > 0)
			return 1;
		if (k < 0) {
			if (in.errcode == XSYS)
				owt_die(XSYS, "%s", in.err);
			bad_input(in.err);
			if (in.reason != BAD_COMPRESSED && in.reason != BAD_TOOLONG)
				continue;
			if (in.reason == BAD_TOOLONG)
				continue;
		}
		input_close(&in);
		in_open = 0;
	}
}

static void
item_free(struct item *it)
{
	if (it->job.url != it->url)
		free(it->job.url);
	free(it->url);
	free(it->job.final_url);
	free(it->job.content_type);
	buf_free(&it->job.body);
	free(it->line);
	free(it->ctype);
	free(it->file);
	buf_free(&it->title);
	buf_free(&it->text);
	buf_free(&it->meta.date);
	buf_free(&it->meta.lang);
	free(it);
}

/*
 * The next input line as an item, or NULL at the end. *url_out is the URL
 * (or file) it names; lines of other shards and resumed URLs are skipped.
 */
static struct item *
next_item(void)
{
	char *line, msg[1024], err[512];
	size_t len;

	while (!stop && next_line(&line, &len)) {
		struct item *it;
		const char *u, *why, *key = opt.extract ? "file" : "url";
		size_t ulen;

		if (lineno_all++ % opt.shard_n != opt.shard_k)
			continue;
		while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		while (len > 0 && (*line == ' ' || *line == '\t'))
			line++, len--;
		if (len == 0)
			continue;
		it = xcalloc(1, sizeof *it);
		if (*line == '{') {
			int r;

			if ((r = jsonl_parse(&rec, line, len, err, sizeof err)) != 0 ||
			    (u = jsonl_str(&rec, key, &ulen, &why)) == NULL) {
				if (r == 0)
					snprintf(err, sizeof err, "%s '%s' field", why, key);
				snprintf(msg, sizeof msg, "%s:%lu: %s", in.name,
				    in.lineno, err);
				free(it);
				bad_input(msg);
				continue;
			}
			it->line = xstrndup(line, len);
			it->len = len;
			it->url = xstrndup(u, ulen);
			if (opt.extract && (u = jsonl_str(&rec, "content_type", &ulen,
			    &why)) != NULL)
				it->ctype = xstrndup(u, ulen);
		} else {
			it->url = xstrndup(line, len);
		}
		it->job.url = it->url;
		if (opt.resume && urlset_has(&done_set, it->url, strlen(it->url))) {
			nresumed++;
			item_free(it);
			continue;
		}
		return it;
	}
	return NULL;
}

/* ---- writing ---- */

static void
add_field(struct jsonl_edit *ed, size_t *n, struct buf *b, const char *key,
    size_t start)
{
	ed[*n].key = key;
	ed[*n].json = (const char *)start;	/* an offset until b stops growing */
	ed[*n].len = b->len - start;
	++*n;
}

static void
add_str(struct jsonl_edit *ed, size_t *n, struct buf *b, const char *key,
    const char *s, size_t len)
{
	size_t start = b->len;

	if (s == NULL)
		buf_adds(b, "null");
	else
		json_string(b, s, len);
	add_field(ed, n, b, key, start);
}

static void
add_num(struct jsonl_edit *ed, size_t *n, struct buf *b, const char *key,
    double v)
{
	size_t start = b->len;

	buf_printf(b, "%.0f", v);
	add_field(ed, n, b, key, start);
}

static void
add_time(struct jsonl_edit *ed, size_t *n, struct buf *b, const char *key,
    time_t t)
{
	char s[32];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	add_str(ed, n, b, key, s, strlen(s));
}

/* Write a record: base (a JSONL line, or NULL for {}) with the edits applied. */
static void
write_rec(struct buf *dst, const char *base, size_t blen, struct jsonl_edit *ed,
    size_t ned, struct buf *vals)
{
	char err[256];
	size_t i;

	for (i = 0; i < ned; i++)
		ed[i].json = vals->p + (size_t)ed[i].json;
	if (base == NULL) {
		base = "{}";
		blen = 2;
	}
	if (jsonl_parse(&orec, base, blen, err, sizeof err) != 0)
		owt_die(XSYS, "cannot re-read a record: %s", err);
	jsonl_write(dst, &orec, ed, ned);
}

static void
write_page(struct item *it)
{
	struct jsonl_edit ed[12];
	struct buf vals = { 0 };
	size_t n = 0;
	struct crawl_job *j = &it->job;

	if (it->line == NULL)
		add_str(ed, &n, &vals, "url", it->url, strlen(it->url));
	add_str(ed, &n, &vals, "title", it->title.p ? it->title.p : "", it->title.len);
	add_str(ed, &n, &vals, opt.text_key, it->text.p, it->text.len);
	if (it->meta.date.len > 0)
		add_str(ed, &n, &vals, "date", it->meta.date.p, it->meta.date.len);
	if (it->meta.lang.len > 0)
		add_str(ed, &n, &vals, "lang_hint", it->meta.lang.p, it->meta.lang.len);
	if (!opt.extract) {
		add_str(ed, &n, &vals, "final_url", j->final_url, strlen(j->final_url));
		add_num(ed, &n, &vals, "http_status", j->status);
		add_time(ed, &n, &vals, "fetched_at", j->fetched_at);
	}
	add_str(ed, &n, &vals, "charset", it->enc, strlen(it->enc));
	add_num(ed, &n, &vals, "bytes", it->bytes);
	if (it->file && !opt.extract)
		add_str(ed, &n, &vals, "file", it->file, strlen(it->file));
	write_rec(&out, it->line, it->len, ed, n, &vals);
	buf_free(&vals);
}

static void
write_log(struct item *it, int outcome)
{
	struct jsonl_edit ed[12];
	struct buf vals = { 0 };
	size_t n = 0;
	struct crawl_job *j = &it->job;
	const char *o = crawl_outcome[outcome];

	add_str(ed, &n, &vals, "url", it->url, strlen(it->url));
	add_str(ed, &n, &vals, "outcome", o, strlen(o));
	add_num(ed, &n, &vals, "http_status", j->status);
	add_str(ed, &n, &vals, "error", outcome == CR_OK ? NULL : j->error,
	    strlen(j->error));
	add_num(ed, &n, &vals, "bytes", it->bytes);
	add_num(ed, &n, &vals, "ms", j->ms);
	if (j->final_url)
		add_str(ed, &n, &vals, "final_url", j->final_url, strlen(j->final_url));
	if (j->content_type)
		add_str(ed, &n, &vals, "content_type", j->content_type,
		    strlen(j->content_type));
	if (j->fetched_at)
		add_time(ed, &n, &vals, "fetched_at", j->fetched_at);
	if (it->file && !opt.extract)
		add_str(ed, &n, &vals, "file", it->file, strlen(it->file));
	write_rec(&logbuf, NULL, 0, ed, n, &vals);
	buf_free(&vals);
}

/* ---- the work on each item ---- */

/*
 * Published as outfile does, without its fsyncs (OUTFILE_NOSYNC): a page
 * is a cache of what was fetched, and two fsyncs a page would cost more
 * than fetching, writing and extracting it.
 */
static void
save_html(struct item *it)
{
	char name[64], err[512];
	struct outfile o;
	gzFile g;
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *s;
	size_t n;
	int fd, code;

	for (s = it->url; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	snprintf(name, sizeof name, "/%016llx.html.gz",
	    (unsigned long long)owt_mix64(h));
	n = strlen(opt.html_dir) + strlen(name) + 1;
	it->file = xmalloc(n);
	snprintf(it->file, n, "%s%s", opt.html_dir, name);
	if (outfile_open(&o, it->file, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	if ((fd = dup(o.fd)) < 0 || (g = gzdopen(fd, "wb6")) == NULL ||
	    (it->job.body.len > 0 && gzwrite(g, it->job.body.p,
	    it->job.body.len) <= 0) || gzclose(g) != Z_OK) {
		owt_warn_errno("cannot write '%s'", it->file);
		outfile_abort(&o);
		exit(XSYS);
	}
	if (outfile_commit(&o, OUTFILE_NOSYNC, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
}

/* On a worker: read (--extract), save (--html-dir) and extract a page. */
static void
work(void *arg, void *unused)
{
	struct item *it = arg;
	struct crawl_job *j = &it->job;
	char err[128];
	double t0 = owt_now();

	(void)unused;
	if (opt.extract) {
		struct input fin;
		struct stat st;

		j->start = t0;
		j->outcome = CR_OK;
		/* input_open takes a directory for a file, read fails: XSYS. */
		if (stat(j->url, &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(j->error, sizeof j->error, "cannot open "
			    "'%.200s': %s", j->url, strerror(EISDIR));
			j->outcome = CR_ERROR;
			it->bad = XDATA;
			return;
		}
		if (input_open(&fin, j->url) < 0) {
			snprintf(j->error, sizeof j->error, "%.250s", fin.err);
			j->outcome = CR_ERROR;
			it->bad = fin.errcode;
			return;
		}
		if (input_slurp(&fin, &j->body, opt.c.max_bytes) < 0) {
			snprintf(j->error, sizeof j->error, "%.250s", fin.err);
			j->outcome = CR_ERROR;
			it->bad = fin.errcode;
		}
		input_close(&fin);
		if (it->bad)
			return;
		j->content_type = it->ctype ? xstrdup(it->ctype) : NULL;
	}
	if (j->outcome != CR_OK)
		return;
	it->bytes = j->body.len;
	if (opt.html_dir && !opt.extract)
		save_html(it);
	if (extract_page(j->body.p ? j->body.p : "", j->body.len, j->content_type,
	    &it->title, &it->text, &it->meta, &it->enc, err, sizeof err) < 0) {
		j->outcome = CR_BAD_HTML;
		snprintf(j->error, sizeof j->error, "%s", err);
	} else if (it->text.len == 0) {
		j->outcome = CR_EMPTY;
		snprintf(j->error, sizeof j->error, "no article text");
	}
	buf_free(&j->body);
	if (opt.extract)
		j->ms = (owt_now() - t0) * 1e3;
}

/* In input order, on the main thread: write the page and the log line. */
static void
finish(struct item *it)
{
	struct crawl_job *j = &it->job;
	int o = j->outcome;

	if (it->bad == XSYS)
		owt_die(XSYS, "%s", j->error);
	count[o].n++;
	nfinished++;
	nbytes += it->bytes;
	if (o == CR_OK)
		write_page(it);
	if (logfd >= 0)
		write_log(it, o);
	else if (o != CR_OK && !opt.quiet && !it->bad)
		owt_warn("%s: %s: %s", it->url, crawl_outcome[o], j->error);
	if (it->bad == XDATA)
		bad_input(j->error);
	if (out.len > (1u << 20) || logbuf.len > (1u << 20) ||
	    owt_now() - last_flush > 1)
		flush_all();
	progress_tick(&prog, nfinished, nbytes);
	item_free(it);
}

/* Hand an item to the workers; finish those done, in order. */
static void
put(struct item *it)
{
	void *done = par_put(par, it);

	if (done != NULL)
		finish(done);
	while ((done = par_poll(par)) != NULL)
		finish(done);
}

/* Finish every item still in flight. */
static void
drain(void)
{
	void *done;

	while ((done = par_get(par)) != NULL)
		finish(done);
}

/* ---- the modes ---- */

/* Filter an item: 0 to fetch it, else it is finished as filtered. */
static int
filtered(struct item *it)
{
	int r = urlfilter_check(&filter, it->url, strlen(it->url), &norm);

	if (r == URL_OK) {
		if (norm.len != strlen(it->url) || memcmp(norm.p, it->url, norm.len) != 0)
			it->job.url = xstrndup(norm.p, norm.len);
		return 0;
	}
	reasons[r].n++;
	it->job.outcome = CR_FILTERED;
	snprintf(it->job.error, sizeof it->job.error, "%s",
	    urlfilter_reason[r]);
	put(it);
	return 1;
}

static struct crawl_job *
crawl_next(void *arg)
{
	struct item *it;

	(void)arg;
	while ((it = next_item()) != NULL)
		if (!filtered(it))
			return &it->job;
	return NULL;
}

static void
crawl_done(void *arg, struct crawl_job *j)
{
	struct item *it = (struct item *)j;

	(void)arg;
	if (j->outcome < 0) {
		ncancelled++;
		item_free(it);
		return;
	}
	put(it);
}

static void
filter_only(void)
{
	struct item *it;

	while ((it = next_item()) != NULL) {
		if (filtered(it))
			continue;
		if (it->line)
			buf_add(&out, it->line, it->len);
		else
			buf_adds(&out, it->url);
		buf_addc(&out, '\n');
		count[CR_OK].n++;
		nfinished++;
		if (out.len > (1u << 20))
			flush_all();
		item_free(it);
	}
}

/* The URLs of a log; a last line without '\n' (a killed run) is cut off. */
static void
read_resume(const char *path)
{
	static const char *const want[] = { "url" };
	struct jsonl j;
	struct jsonl_rec *r;
	int k, fd;
	struct stat st;

	if ((fd = open(path, O_RDWR)) >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
		off_t end = st.st_size;
		char c;

		while (end > 0 && pread(fd, &c, 1, end - 1) == 1 && c != '\n')
			end--;
		if (end != st.st_size && ftruncate(fd, end) != 0)
			owt_die_errno(XSYS, "cannot truncate '%s'", path);
	}
	if (fd >= 0)
		close(fd);
	if (jsonl_open(&j, path, want, 1) < 0)
		owt_die(j.errcode == XSYS ? XSYS : XDATA, "%s", j.err);
	while ((k = jsonl_next(&j, &r)) != 0) {
		const char *u, *why;
		size_t n;

		if (k < 0)
			owt_die(j.errcode, "%s", j.err);
		if ((u = jsonl_str(r, "url", &n, &why)) != NULL)
			urlset_add(&done_set, u, n);
	}
	jsonl_close(&j);
}

static void
summary(double secs)
{
	size_t i;

	for (i = 0; i < CR_NOUTCOMES; i++)
		count[i].name = crawl_outcome[i];
	for (i = 0; i < URL_NREASONS; i++)
		reasons[i].name = urlfilter_reason[i];
	fprintf(stderr, "%s: %llu URLs in %.1f s (%.1f/s), %.1f MB of pages",
	    owt_prog, nfinished, secs, secs > 0 ? nfinished / secs : 0,
	    nbytes / 1e6);
	if (nresumed)
		fprintf(stderr, "; %llu already in the log", nresumed);
	if (ncancelled)
		fprintf(stderr, "; %llu not started (interrupted)", ncancelled);
	if (nbad)
		fprintf(stderr, "; %llu bad input lines", nbad);
	fputc('\n', stderr);
	tally_print("outcomes", count, CR_NOUTCOMES);
	if (count[CR_FILTERED].n)
		tally_print("filtered", reasons + 1, URL_NREASONS - 1);
}

static double
opt_secs(const char *o, const char *arg)
{
	return opt_double(o, arg, 0, 86400);
}

int
main(int argc, char **argv)
{
	enum { O_PRIV = 256, O_BACKOFF, O_BLACK, O_CTO, O_CONN, O_DELAY, O_EXTRACT,
		O_FILTER, O_HTMLDIR, O_NOROBOTS, O_KEYS, O_LOG, O_LOWSPEED,
		O_MAXBYTES, O_PERHOST, O_PROG, O_RESOLVE, O_RESUME, O_RETRIES,
		O_SHARD, O_TIMEOUT, O_AGENT, O_VER, O_WORKERS };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "keep-going", no_argument, NULL, 'k' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "allow-private", no_argument, NULL, O_PRIV },
		{ "backoff", required_argument, NULL, O_BACKOFF },
		{ "blacklist", required_argument, NULL, O_BLACK },
		{ "connect-timeout", required_argument, NULL, O_CTO },
		{ "connections", required_argument, NULL, O_CONN },
		{ "delay", required_argument, NULL, O_DELAY },
		{ "extract", no_argument, NULL, O_EXTRACT },
		{ "filter-only", no_argument, NULL, O_FILTER },
		{ "html-dir", required_argument, NULL, O_HTMLDIR },
		{ "ignore-robots", no_argument, NULL, O_NOROBOTS },
		{ "json-keys", required_argument, NULL, O_KEYS },
		{ "log", required_argument, NULL, O_LOG },
		{ "low-speed", required_argument, NULL, O_LOWSPEED },
		{ "max-bytes", required_argument, NULL, O_MAXBYTES },
		{ "per-host", required_argument, NULL, O_PERHOST },
		{ "progress", no_argument, NULL, O_PROG },
		{ "resolve", required_argument, NULL, O_RESOLVE },
		{ "resume", required_argument, NULL, O_RESUME },
		{ "retries", required_argument, NULL, O_RETRIES },
		{ "shard", required_argument, NULL, O_SHARD },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "user-agent", required_argument, NULL, O_AGENT },
		{ "version", no_argument, NULL, O_VER },
		{ "workers", required_argument, NULL, O_WORKERS },
		{ NULL, 0, NULL, 0 }
	};
	static char *stdin_only[] = { "-" };
	static const char *const want_url[] = { "url" };
	static const char *const want_file[] = { "file", "url", "content_type" };
	struct curl_slist *resolve = NULL;
	char agent[64], err[512];
	struct sigaction sa;
	int c, flags;

	owt_setprog(argv[0]);
	opt.workers = owt_ncpu();
	while ((c = getopt_long(argc, argv, "hkq", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			return owt_help(usage_line, options_help);
		case 'k': opt.keep_going = 1; break;
		case 'q': opt.quiet = 1; break;
		case O_PRIV: opt.c.allow_private = 1; break;
		case O_BACKOFF: opt.c.backoff = opt_secs("--backoff", optarg); break;
		case O_BLACK: opt.blacklist = optarg; break;
		case O_CTO:
			opt.c.connect_timeout = opt_double("--connect-timeout",
			    optarg, 0.001, 86400);
			break;
		case O_CONN:
			opt.c.connections = opt_int("--connections", optarg, 1, 4096);
			break;
		case O_DELAY: opt.c.delay = opt_secs("--delay", optarg); break;
		case O_EXTRACT: opt.extract = 1; break;
		case O_FILTER: opt.filter_only = 1; break;
		case O_HTMLDIR: opt.html_dir = optarg; break;
		case O_NOROBOTS: opt.c.ignore_robots = 1; break;
		case O_KEYS:
			if (*optarg == '\0' || strchr(optarg, ','))
				owt_die(XUSAGE, "--json-keys: '%s' is not one "
				    "field name", optarg);
			opt.text_key = optarg;
			break;
		case O_LOG: opt.log = optarg; break;
		case O_LOWSPEED:
			opt.c.low_speed = opt_size("--low-speed", optarg, 0, 1UL << 40);
			break;
		case O_MAXBYTES:
			opt.c.max_bytes = opt_size("--max-bytes", optarg, 1024,
			    (size_t)1 << 32);
			break;
		case O_PERHOST:
			opt.c.per_host = opt_int("--per-host", optarg, 1, 4096);
			break;
		case O_PROG: opt.progress = 1; break;
		case O_RESOLVE:
			if (strchr(optarg, ':') == NULL)
				owt_die(XUSAGE, "--resolve: '%s' is not "
				    "host:port:address", optarg);
			resolve = curl_slist_append(resolve, optarg);
			break;
		case O_RESUME: opt.resume = optarg; break;
		case O_RETRIES: opt.c.retries = opt_int("--retries", optarg, 0, 100); break;
		case O_SHARD: opt_shard("--shard", optarg, &opt.shard_k, &opt.shard_n); break;
		case O_TIMEOUT:
			opt.c.timeout = opt_double("--timeout", optarg, 0.001, 86400);
			break;
		case O_AGENT: opt.c.agent = optarg; break;
		case O_VER:
			return owt_version();
		case O_WORKERS: opt.workers = opt_int("--workers", optarg, 0, 1024); break;
		default:
			owt_usage(usage_line);
		}
	}
	if (opt.extract + opt.filter_only > 1)
		owt_die(XUSAGE, "--extract and --filter-only exclude each other");
	if (opt.c.agent == NULL) {
		snprintf(agent, sizeof agent, "owt-fetch/%s", OWT_VERSION);
		opt.c.agent = agent;
	}
	if (opt.c.low_speed_time > opt.c.timeout)
		opt.c.low_speed_time = opt.c.timeout < 1 ? 1 : (long)opt.c.timeout;
	opt.c.resolve = resolve;
	opt.c.stop = &stop;
	operands = optind < argc ? argv + optind : stdin_only;
	noperands = optind < argc ? argc - optind : 1;

	if (!opt.extract && urlfilter_init(&filter, opt.blacklist, err, sizeof err) < 0)
		owt_die(XDATA, "%s", err);
	if (opt.html_dir) {
		char *pat = xmalloc(strlen(opt.html_dir) + 12);

		if (mkdir(opt.html_dir, 0777) < 0 && errno != EEXIST)
			owt_die_errno(XSYS, "cannot create '%s'", opt.html_dir);
		sprintf(pat, "%s/*.html.gz", opt.html_dir);
		outfile_sweep(pat);
		free(pat);
	}
	if (opt.resume)
		read_resume(opt.resume);
	if (opt.log) {
		flags = O_WRONLY | O_CREAT;
		flags |= opt.resume && strcmp(opt.resume, opt.log) == 0 ?
		    O_APPEND : O_TRUNC;
		if ((logfd = open(opt.log, flags, 0666)) < 0)
			owt_die_errno(XSYS, "cannot open '%s'", opt.log);
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (opt.extract)
		jsonl_rec_init(&rec, want_file, 3);
	else
		jsonl_rec_init(&rec, want_url, 1);
	jsonl_rec_init(&orec, NULL, 0);
	progress_init(&prog, opt.quiet ? -1 : opt.progress, "URLs");
	last_flush = owt_now();
	par = par_start(opt.filter_only ? 0 : opt.workers,
	    4 * (size_t)opt.workers + 16, EXTRACT_STACK, work, NULL, NULL, NULL);

	if (opt.filter_only) {
		filter_only();
	} else if (opt.extract) {
		struct item *it;

		while ((it = next_item()) != NULL)
			put(it);
	} else {
		struct crawl *cr;

		if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
			owt_die(XSYS, "cannot initialise libcurl");
		cr = crawl_new(&opt.c);
		if (crawl_run(cr, crawl_next, crawl_done, NULL) < 0)
			owt_die(XSYS, "libcurl failed");
		crawl_free(cr);
	}
	drain();
	par_stop(par);
	flush_all();
	if (in_open)
		input_close(&in);
	progress_done(&prog);
	if (!opt.quiet)
		summary(progress_elapsed(&prog));
	if (logfd >= 0 && close(logfd) != 0)
		owt_die_errno(XSYS, "cannot write '%s'", opt.log);
	if (!opt.extract) {
		urlfilter_free(&filter);
		buf_free(&norm);
		curl_slist_free_all(resolve);
		curl_global_cleanup();
	}
	urlset_free(&done_set);
	jsonl_rec_free(&rec);
	jsonl_rec_free(&orec);
	buf_free(&out);
	buf_free(&logbuf);
	if (stop) {
		owt_close_stdout();
		signal(stop_sig, SIG_DFL);
		raise(stop_sig);
	}
	return owt_finish(status);
}
