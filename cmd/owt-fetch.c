/* owt-fetch - filter URLs, crawl them politely, write their article text as JSONL */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "web/fetch.h"
#include "web/fetch_warc.h"
#include "core/batch.h"
#include "core/opt.h"
#include "core/outfile.h"
#include "core/util.h"

static struct fetch_opts opt = {
	.text_key = "text", .shard = { 0, 1 },
	.c = { .connections = 64, .per_host = 2, .delay = 1, .retries = 2,
	    .backoff = 1, .timeout = 30, .connect_timeout = 10, .low_speed = 1024,
	    .low_speed_time = 10, .max_bytes = 10 << 20, .window = 16384,
	    .robots_token = "owt-fetch" },
};
static size_t low_speed = 1024;
static int window = 16384;
static size_t warc_max_size;
static struct opt_list resolve;

/* --resolve host:port:addr, after it is stored. */
static int
host_port_addr(const struct opt *o, const char *arg, char *err, size_t errsize)
{
	(void)o;
	if (strchr(arg, ':') == NULL) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--resolve: '%s' is not host:port:address",
		    arg);
	}
	return 0;
}

static const struct opt opts[] = {
	OPT_ROW_HELP,
	OPT_ROW_KEEP_GOING(&opt.keep_going,
	    "skip bad input records (still exit 1)"),
	OPT_ROW_QUIET(&opt.quiet,
	    "no summary, progress or per-URL warnings"),
	{ .name = "allow-private", .type = OPT_FLAG, .p = &opt.c.allow_private,
	    .help = "allow private, loopback and link-local addresses" },
	{ .name = "backoff", .arg = "secs", .type = OPT_DOUBLE,
	    .p = &opt.c.backoff, .min = 0, .max = 86400,
	    .help = "wait before the first retry, doubling (1)" },
	{ .name = "blacklist", .arg = "file", .type = OPT_STR,
	    .p = &opt.blacklist, .help = "more blacklisted domains, one a line" },
	{ .name = "connect-timeout", .arg = "secs", .type = OPT_DOUBLE,
	    .p = &opt.c.connect_timeout, .min = 0.001, .max = 86400,
	    .help = "connect deadline per try (10)" },
	{ .name = "connections", .arg = "n", .type = OPT_INT,
	    .p = &opt.c.connections, .min = 1, .max = 4096,
	    .help = "transfers in flight (64)" },
	{ .name = "delay", .arg = "secs", .type = OPT_DOUBLE, .p = &opt.c.delay,
	    .min = 0, .max = 86400,
	    .help = "between request starts on one host (1)" },
	{ .name = "extract", .type = OPT_FLAG, .p = &opt.extract,
	    .help = "read saved HTML files instead of fetching URLs" },
	{ .name = "filter-only", .type = OPT_FLAG, .p = &opt.filter_only,
	    .help = "only filter the URLs; write the ones kept" },
	{ .name = "html-dir", .arg = "dir", .type = OPT_STR, .p = &opt.html_dir,
	    .help = "keep every fetched page as dir/HASH.html.gz" },
	{ .name = "ignore-robots", .type = OPT_FLAG, .p = &opt.c.ignore_robots,
	    .help = "do not fetch or honour robots.txt" },
	{ .name = "json-keys", .arg = "key", .type = OPT_STR,
	    .p = &opt.text_key, .check = opt_check_field,
	    .help = "the output field of the text (text)" },
	{ .name = "log", .arg = "file", .type = OPT_STR, .p = &opt.log,
	    .help = "every URL's outcome as JSONL" },
	{ .name = "low-speed", .arg = "bytes", .type = OPT_SIZE, .p = &low_speed,
	    .min = 0, .max = (double)(1ULL << 40),
	    .help = "abort a transfer slower than this per second over 10 s (1K)" },
	{ .name = "max-bytes", .arg = "size", .type = OPT_SIZE,
	    .p = &opt.c.max_bytes, .min = 1024, .max = (double)(1ULL << 32),
	    .help = "body cap after decompression (10M)" },
	{ .name = "ordered", .type = OPT_FLAG, .p = &opt.ordered,
	    .help = "write the records in the order of the input" },
	{ .name = "per-host", .arg = "n", .type = OPT_INT, .p = &opt.c.per_host,
	    .min = 1, .max = 4096, .help = "transfers in flight per host (2)" },
	{ .name = "progress", .type = OPT_FLAG, .p = &opt.progress,
	    .help = "show progress even when stderr is not a terminal" },
	{ .name = "resolve", .arg = "host:port:addr", .type = OPT_STR,
	    .p = &resolve, .flags = OPT_REPEAT, .check = host_port_addr,
	    .help = "use addr for host:port (as curl --resolve)" },
	{ .name = "resume", .arg = "log", .type = OPT_STR, .p = &opt.resume,
	    .help = "skip the URLs a log already has" },
	{ .name = "retries", .arg = "n", .type = OPT_INT, .p = &opt.c.retries,
	    .min = 0, .max = 100,
	    .help = "retries after timeouts, resets, 5xx and 429 (2)" },
	{ .name = "shard", .arg = "k/n", .type = OPT_SHARD, .p = opt.shard,
	    .help = "take every n-th input line, from the k-th (0-based)" },
	{ .name = "timeout", .arg = "secs", .type = OPT_DOUBLE,
	    .p = &opt.c.timeout, .min = 0.001, .max = 86400,
	    .help = "deadline per URL, retries included (30)" },
	{ .name = "user-agent", .arg = "string", .type = OPT_STR,
	    .p = &opt.c.agent,
	    .help = "the User-Agent header (owt-fetch/VERSION)" },
	OPT_ROW_VERSION,
	{ .name = "warc-cdx", .type = OPT_FLAG, .p = &opt.warc_cdx,
	    .help = "index the responses in prefix.cdx, as wget does" },
	{ .name = "warc-file", .arg = "prefix", .type = OPT_STR,
	    .p = &opt.warc_file,
	    .help = "archive every exchange in prefix.warc.gz" },
	{ .name = "warc-max-size", .arg = "size", .type = OPT_SIZE,
	    .p = &warc_max_size, .min = 1024, .max = (double)(1ULL << 62),
	    .help = "a new prefix-NNNNN.warc.gz once one passes size" },
	{ .name = "warc-prefix", .arg = "url", .type = OPT_STR,
	    .p = &opt.warc_prefix,
	    .help = "lines are index rows: fetch each record from url/file" },
	{ .name = "window", .arg = "n", .type = OPT_INT, .p = &window,
	    .min = 1, .max = 1 << 24,
	    .help = "URLs read and not yet written, at most (16384)" },
	{ .name = "workers", .arg = "n", .type = OPT_INT, .p = &opt.workers,
	    .min = 0, .max = 1024,
	    .help = "extraction threads (the number of CPUs)" },
};

static const struct opt_prog options = { "owt-fetch", opts,
    sizeof opts / sizeof *opts, "[file ...]", 26, NULL };

static volatile sig_atomic_t stop, stop_sig;

static void
on_signal(int sig)
{
	stop = 1;
	stop_sig = sig;
}

static void
summary(struct fetch *f, double secs)
{
	unsigned long long nbad = fetch_nbad(f);
	size_t i;

	for (i = 0; i < CR_NOUTCOMES; i++)
		f->count[i].name = crawl_outcome[i];
	for (i = 0; i < URL_NREASONS; i++)
		f->reasons[i].name = urlfilter_reason[i];
	fprintf(stderr, "%s: %llu URLs in %.1f s (%.1f/s), %.1f MB of pages",
	    owt_prog, f->nfinished, secs, secs > 0 ? f->nfinished / secs : 0,
	    f->nbytes / 1e6);
	if (f->nresumed)
		fprintf(stderr, "; %llu already in the log", f->nresumed);
	if (f->ncancelled)
		fprintf(stderr, "; %llu not started (interrupted)", f->ncancelled);
	if (f->nunwritten)
		fprintf(stderr, "; %llu fetched after those, not written",
		    f->nunwritten);
	if (nbad)
		fprintf(stderr, "; %llu bad input lines", nbad);
	fputc('\n', stderr);
	tally_print("outcomes", f->count, CR_NOUTCOMES);
	if (f->count[CR_FILTERED].n)
		tally_print("filtered", f->reasons + 1, URL_NREASONS - 1);
	fetch_warc_summary(f);
}

int
main(int argc, char **argv)
{
	struct curl_slist *rs = NULL;
	struct fetch f;
	struct sigaction sa;
	char agent[64], err[1024];
	int first, code, status;
	size_t i;

	owt_setprog(argv[0]);
	opt.workers = owt_ncpu();
	first = owt_options(&options, argc, argv, NULL);
	if (opt.extract + opt.filter_only > 1)
		owt_die(XUSAGE, "--extract and --filter-only exclude each other");
	if (opt.warc_file && opt.extract + opt.filter_only > 0)
		owt_die(XUSAGE, "--warc-file archives a crawl: not with %s",
		    opt.extract ? "--extract" : "--filter-only");
	if (opt.warc_prefix && (opt.extract || opt.filter_only || opt.warc_file))
		owt_die(XUSAGE, "--warc-prefix fetches records: not with %s",
		    opt.extract ? "--extract" : opt.filter_only ? "--filter-only" :
		    "--warc-file");
	if (opt.c.agent == NULL) {
		snprintf(agent, sizeof agent, "owt-fetch/%s", OWT_VERSION);
		opt.c.agent = agent;
	}
	opt.c.low_speed = (long)low_speed;
	opt.c.warc = opt.warc_file != NULL;
	opt.warc_max_size = warc_max_size;
	if ((opt.warc_cdx || warc_max_size) && opt.warc_file == NULL)
		owt_die(XUSAGE, "%s needs --warc-file", opt.warc_cdx ?
		    "--warc-cdx" : "--warc-max-size");
	opt.c.window = (size_t)window;
	if (opt.c.low_speed_time > opt.c.timeout)
		opt.c.low_speed_time = opt.c.timeout < 1 ? 1 : (long)opt.c.timeout;
	for (i = 0; i < resolve.n; i++)
		rs = curl_slist_append(rs, resolve.v[i]);
	opt.c.resolve = rs;
	opt.c.stop = &stop;

	if (fetch_open(&f, &opt, argv + first, argc - first, stdout, &stop, err,
	    sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* For libcurl's sockets; a closed stdout is EPIPE, then SIGPIPE below. */
	signal(SIGPIPE, SIG_IGN);
	if ((status = fetch_run(&f, err, sizeof err, &code)) < 0) {
		if (errno == EPIPE) {
			outfile_signal_cleanup();
			owt_die_sigpipe();
		}
		owt_die(code, "%s", err);
	}
	progress_done(&f.prog);
	/* A bad line without -k ends the run at once, without a summary. */
	if (batch_halts(status, opt.keep_going)) {
		if (fetch_close(&f, err, sizeof err, &code) < 0)
			owt_die(code, "%s", err);
		exit(owt_finish(XDATA));
	}
	if (!opt.quiet)
		summary(&f, progress_elapsed(&f.prog));
	if (fetch_close(&f, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	fetch_free(&f);
	curl_slist_free_all(rs);
	free(resolve.v);
	if (stop) {
		owt_close_stdout();
		signal(stop_sig, SIG_DFL);
		raise(stop_sig);
	}
	return owt_finish(status);
}
