/* jsonl-merge - turn files and directories of text and JSONL into one JSONL stream */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/input.h"
#include "core/jsonl.h"
#include "core/opt.h"
#include "core/progress.h"
#include "merge/shuffle.h"
#include "core/utf8.h"
#include "core/util.h"
#include "merge/walk.h"

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

static const struct opt opts[] = {
	OPT_ROW_HELP,
	OPT_ROW_KEEP_GOING(&opt.keep_going,
	    "skip bad records and files (still exit 1)"),
	OPT_ROW_QUIET(&opt.quiet,
	    "no summary or progress on stderr"),
	{ .name = "add-id", .arg = "prefix", .type = OPT_STR,
	    .p = &opt.id_prefix,
	    .help = "add adlr_id \"prefix-0000000001\", ... in output order" },
	{ .name = "json-keys", .arg = "key", .type = OPT_STR,
	    .p = &opt.text_key, .check = opt_check_field,
	    .help = "the text field of records made from .txt files (text)" },
	{ .name = "memory", .arg = "size", .type = OPT_SIZE, .p = &opt.memory,
	    .min = 1 << 20, .max = (double)((size_t)1 << 44),
	    .help = "memory for --shuffle before spilling to disk (1G)" },
	{ .name = "progress", .type = OPT_FLAG, .p = &opt.progress,
	    .help = "show progress even when stderr is not a terminal" },
	{ .name = "seed", .arg = "n", .type = OPT_U64, .p = &opt.seed,
	    .max = (double)(1LL << 62), .help = "seed of --shuffle (1234)" },
	{ .name = "shuffle", .type = OPT_FLAG, .p = &opt.shuffle,
	    .help = "write the records in a seeded random order" },
	{ .name = "tmpdir", .arg = "dir", .type = OPT_STR, .p = &opt.tmpdir,
	    .help = "where --shuffle spills ($TMPDIR or /tmp)" },
	OPT_ROW_VERSION,
};

static const struct opt_prog options = { "jsonl-merge", opts,
    sizeof opts / sizeof *opts, "[file | dir ...]", 23, NULL };

static struct tally count[C_NCOUNT];
static unsigned long long nin, nout, nfiles, nignored;
static uint64_t nbytes;
static int status = XOK;
static struct shuffle shuf;
static struct progress prog;
static struct buf out, tmp;
static struct json_rec outrec;

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
	struct json_edit ed;
	char id[64], err[256];
	const struct json_rec *r = arg;

	nout++;
	if (opt.id_prefix == NULL) {
		buf_add(&out, line, len);
		buf_addc(&out, '\n');
	} else {
		if (r == NULL) {
			if (json_rec_parse(&outrec, line, len, err, sizeof err) != 0)
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
		json_rec_write(&out, r, &ed, 1);
	}
	flush_out(0);
	return 0;
}

static void
record(const struct json_rec *r)
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
	const struct json_field *f;
	struct json_rec *r;
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
		f = json_rec_get(r, opt.text_key);
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
	struct json_rec r;
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
	json_rec_init(&r, want, 0);
	if (json_rec_parse(&r, line.p, line.len, err, sizeof err) != 0)
		owt_die(XSYS, "%s: cannot make a record: %s", path, err);
	record(&r);
	json_rec_free(&r);
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
	int i, first;

	owt_setprog(argv[0]);
	first = owt_options(&options, argc, argv, NULL);
	if (opt.tmpdir == NULL && (opt.tmpdir = getenv("TMPDIR")) == NULL)
		opt.tmpdir = "/tmp";
	progress_init(&prog, opt.quiet ? -1 : opt.progress, "records");
	json_rec_init(&outrec, NULL, 0);
	if (opt.shuffle)
		shuffle_init(&shuf, opt.seed, opt.memory, opt.tmpdir);
	if (first == argc)
		operand("-");
	for (i = first; i < argc; i++)
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
	json_rec_free(&outrec);
	buf_free(&out);
	buf_free(&tmp);
	return owt_finish(status);
}
