/* jsonl-merge - turn files and directories of text and JSONL into one JSONL stream */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "input.h"
#include "jsonl.h"
#include "progress.h"
#include "shuffle.h"
#include "utf8.h"
#include "util.h"
#include "walk.h"

static const char usage_line[] =
    "usage: jsonl-merge [-hkq] [--add-id prefix] [--json-keys key] "
    "[--memory size] [--progress] [--seed n] [--shuffle] [--tmpdir dir] "
    "[--version] [file | dir ...]\n";

static const char options_help[] =
    "  -h, --help           print this help and exit\n"
    "  -k, --keep-going     skip bad records and files (still exit 1)\n"
    "  -q, --quiet          no summary or progress on stderr\n"
    "      --add-id prefix  add adlr_id \"prefix-0000000001\", ... in output order\n"
    "      --json-keys key  the text field of records made from .txt files (text)\n"
    "      --memory size    memory for --shuffle before spilling to disk (1G)\n"
    "      --progress       show progress even when stderr is not a terminal\n"
    "      --seed n         seed of --shuffle (1234)\n"
    "      --shuffle        write the records in a seeded random order\n"
    "      --tmpdir dir     where --shuffle spills ($TMPDIR or /tmp)\n"
    "      --version        print the version and exit\n";

/* Counters for the summary; the first BAD_NREASONS are input_bad_name[]. */
enum {
	C_MISSING = BAD_NREASONS,	/* JSONL record without the text field */
	C_EMPTYFILE,
	C_NCOUNT
};

static struct {
	int keep_going, quiet, progress, shuffle;
	const char *text_key, *id_prefix, *tmpdir;
	uint64_t seed;
	size_t memory;
} opt = { .text_key = "text", .seed = 1234, .memory = 1UL << 30 };

static struct tally count[C_NCOUNT];
static unsigned long long nin, nout, nfiles, nignored;
static uint64_t nbytes;
static int status = XOK;
static struct shuffle shuf;
static struct progress prog;
static struct buf out, tmp;
static struct jsonl_rec outrec;

/* A bad record or file: report it, count it, and stop unless -k. */
static void
bad(int reason, const char *msg)
{
	owt_warn("%s", msg);
	count[reason].n++;
	status = XDATA;
	if (!opt.keep_going) {
		fwrite(out.p, 1, out.len, stdout);
		exit(owt_finish(XDATA));
	}
}

static void
flush_out(int force)
{
	if (out.len >= (1u << 20) || (force && out.len > 0)) {
		if (fwrite(out.p, 1, out.len, stdout) != out.len)
			exit(owt_finish(XSYS));
		out.len = 0;
	}
}

/* Write one validated record (a JSONL line without '\n'), adding the id. */
static int
emit(void *arg, const char *line, size_t len)
{
	struct jsonl_edit ed;
	char id[64], err[256];
	const struct jsonl_rec *r = arg;

	nout++;
	if (opt.id_prefix == NULL) {
		buf_add(&out, line, len);
		buf_addc(&out, '\n');
	} else {
		if (r == NULL) {
			if (jsonl_parse(&outrec, line, len, err, sizeof err) != 0)
				owt_die(XSYS, "shuffled record unreadable: %s", err);
			r = &outrec;
		}
		tmp.len = 0;
		snprintf(id, sizeof id, "-%010llu", nout);
		buf_addc(&tmp, '"');
		buf_add(&tmp, opt.id_prefix, strlen(opt.id_prefix));
		buf_add(&tmp, id, strlen(id));
		buf_addc(&tmp, '"');
		ed.key = "adlr_id";
		ed.json = tmp.p;
		ed.len = tmp.len;
		jsonl_write(&out, r, &ed, 1);
	}
	flush_out(0);
	return 0;
}

static void
record(const struct jsonl_rec *r)
{
	nin++;
	if (opt.shuffle) {
		if (shuffle_add(&shuf, r->line, r->len) < 0)
			owt_die(XSYS, "%s", shuf.err);
	} else {
		emit((void *)r, r->line, r->len);
	}
}

static void
do_jsonl(const char *path)
{
	static const char *const want[] = { NULL };
	const struct jsonl_field *f;
	struct jsonl_rec *r;
	struct jsonl j;
	char msg[1024];
	int k;

	if (jsonl_open(&j, path, want, 0) < 0) {
		bad(j.reason, j.err);
		return;
	}
	nfiles++;
	for (;;) {
		k = jsonl_next(&j, &r);
		if (k == 0)
			break;
		if (k < 0) {
			if (j.errcode == XSYS)
				owt_die(XSYS, "%s", j.err);
			bad(j.reason, j.err);
			if (j.reason == BAD_COMPRESSED)
				break;
			continue;
		}
		nbytes += r->len + 1;
		f = jsonl_get(r, opt.text_key);
		if (f == NULL || f->type != JV_STRING) {
			snprintf(msg, sizeof msg, "%s:%lu: %s '%s' field",
			    j.in.name, j.in.lineno,
			    f == NULL ? "missing" : "non-string", opt.text_key);
			bad(C_MISSING, msg);
			continue;
		}
		record(r);
		progress_tick(&prog, nin, nbytes);
	}
	if (j.in.lineno == 0) {
		snprintf(msg, sizeof msg, "%s: empty file", j.in.name);
		bad(C_EMPTYFILE, msg);
	}
	jsonl_close(&j);
}

/* A .txt file becomes one record: {"text": content, "src": path}. */
static void
do_text(const char *path)
{
	static const char *const want[] = { NULL };
	struct input in;
	struct buf text = { 0 }, line = { 0 };
	struct jsonl_rec r;
	char msg[1024], err[256];
	size_t badat, i;
	unsigned long lineno = 1;

	if (input_open(&in, path) < 0) {
		bad(in.reason, in.err);
		return;
	}
	nfiles++;
	if (input_slurp(&in, &text, in.maxline) < 0) {
		if (in.errcode == XSYS)
			owt_die(XSYS, "%s", in.err);
		bad(in.reason, in.err);
		goto done;
	}
	if (text.len == 0) {
		snprintf(msg, sizeof msg, "%s: empty file", in.name);
		bad(C_EMPTYFILE, msg);
		goto done;
	}
	if ((badat = utf8_valid(text.p, text.len)) != text.len) {
		for (i = 0; i < badat; i++)
			lineno += text.p[i] == '\n';
		snprintf(msg, sizeof msg, "%s:%lu: invalid UTF-8 at byte %zu",
		    in.name, lineno, badat + 1);
		bad(BAD_UTF8, msg);
		goto done;
	}
	nbytes += text.len;
	buf_addc(&line, '{');
	json_string(&line, opt.text_key, strlen(opt.text_key));
	buf_addc(&line, ':');
	json_string(&line, text.p, text.len);
	buf_add(&line, ",\"src\":", 7);
	json_string(&line, path, strlen(path));
	buf_addc(&line, '}');
	jsonl_rec_init(&r, want, 0);
	if (jsonl_parse(&r, line.p, line.len, err, sizeof err) != 0)
		owt_die(XSYS, "%s: cannot make a record: %s", path, err);
	record(&r);
	jsonl_rec_free(&r);
	progress_tick(&prog, nin, nbytes);
done:
	input_close(&in);
	buf_free(&text);
	buf_free(&line);
}

/* The file name without .gz or .zst ends with ext. */
static int
has_ext(const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(ext);

	if (n > 3 && strcmp(path + n - 3, ".gz") == 0)
		n -= 3;
	else if (n > 4 && strcmp(path + n - 4, ".zst") == 0)
		n -= 4;
	return n > e && strncmp(path + n - e, ext, e) == 0;
}

static int
visit(void *arg, const char *path, int errnum)
{
	char msg[1024];

	(void)arg;
	if (errnum != 0) {
		snprintf(msg, sizeof msg, "cannot read '%s': %s", path,
		    strerror(errnum));
		bad(BAD_OPEN, msg);
	} else if (has_ext(path, ".txt")) {
		do_text(path);
	} else if (has_ext(path, ".jsonl") || has_ext(path, ".json")) {
		do_jsonl(path);
	} else {
		nignored++;
	}
	return 0;
}

static void
operand(const char *path)
{
	struct stat st;

	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		walk_dir(path, visit, NULL);
	else if (has_ext(path, ".txt"))
		do_text(path);
	else
		do_jsonl(path);
}

static void
summary(double secs)
{
	size_t i;

	for (i = 1; i < C_NCOUNT; i++)
		count[i].name = i < BAD_NREASONS ? input_bad_name[i] :
		    i == C_MISSING ? "missing text field" : "empty file";
	fprintf(stderr, "%s: %llu records from %llu files, %.1f MB in %.2f s",
	    owt_prog, nout, nfiles, (double)nbytes / 1e6, secs);
	if (nignored)
		fprintf(stderr, "; %llu files ignored (not .txt, .json or .jsonl)",
		    nignored);
	fputc('\n', stderr);
	tally_print("dropped", count + 1, C_NCOUNT - 1);
}

int
main(int argc, char **argv)
{
	enum { O_ADDID = 256, O_KEYS, O_MEM, O_PROG, O_SEED, O_SHUF, O_TMP, O_VER };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "keep-going", no_argument, NULL, 'k' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "add-id", required_argument, NULL, O_ADDID },
		{ "json-keys", required_argument, NULL, O_KEYS },
		{ "memory", required_argument, NULL, O_MEM },
		{ "progress", no_argument, NULL, O_PROG },
		{ "seed", required_argument, NULL, O_SEED },
		{ "shuffle", no_argument, NULL, O_SHUF },
		{ "tmpdir", required_argument, NULL, O_TMP },
		{ "version", no_argument, NULL, O_VER },
		{ NULL, 0, NULL, 0 }
	};
	int c, i;

	owt_setprog(argv[0]);
	while ((c = getopt_long(argc, argv, "hkq", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			return owt_help(usage_line, options_help);
		case 'k': opt.keep_going = 1; break;
		case 'q': opt.quiet = 1; break;
		case O_ADDID: opt.id_prefix = optarg; break;
		case O_KEYS:
			if (*optarg == '\0' || strchr(optarg, ','))
				owt_die(XUSAGE, "--json-keys: '%s' is not one "
				    "field name", optarg);
			opt.text_key = optarg;
			break;
		case O_MEM:
			opt.memory = opt_size("--memory", optarg, 1UL << 20,
			    (size_t)1 << 44);
			break;
		case O_PROG: opt.progress = 1; break;
		case O_SEED:
			opt.seed = (uint64_t)opt_int("--seed", optarg, 0,
			    ((long long)1 << 62));
			break;
		case O_SHUF: opt.shuffle = 1; break;
		case O_TMP: opt.tmpdir = optarg; break;
		case O_VER:
			return owt_version();
		default:
			owt_usage(usage_line);
		}
	}
	if (opt.tmpdir == NULL && (opt.tmpdir = getenv("TMPDIR")) == NULL)
		opt.tmpdir = "/tmp";
	progress_init(&prog, opt.quiet ? -1 : opt.progress, "records");
	jsonl_rec_init(&outrec, NULL, 0);
	if (opt.shuffle)
		shuffle_init(&shuf, opt.seed, opt.memory, opt.tmpdir);
	if (optind == argc)
		operand("-");
	for (i = optind; i < argc; i++)
		operand(argv[i]);
	if (opt.shuffle) {
		if (shuffle_finish(&shuf, emit, NULL) < 0)
			owt_die(XSYS, "%s", shuf.err);
		shuffle_free(&shuf);
	}
	flush_out(1);
	progress_done(&prog);
	if (!opt.quiet)
		summary(progress_elapsed(&prog));
	jsonl_rec_free(&outrec);
	buf_free(&out);
	buf_free(&tmp);
	return owt_finish(status);
}
