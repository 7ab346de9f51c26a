/* owt-dedup - clean a JSONL corpus: fix text, keep one language, drop short and duplicate documents */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/batch.h"
#include "tok/bpe.h"
#include "text/clean.h"
#include "text/langid.h"
#include "core/opt.h"
#include "core/progress.h"
#include "core/util.h"

static struct {
	int keep_going, quiet, progress, workers, signed_in, keep_quotes;
	const char *text_key, *lang, *report, *tmpdir, *sign, *drop, *stages;
	const char *vocab, *merges;
	struct opt_list tasks;
	uint64_t min_chars, min_tokens, seed;
	double near;
} opt = {
	.text_key = "text", .lang = "en", .near = 0.7, .min_tokens = 128,
	.seed = 1234,
};

static int
check_lang(const struct opt *o, const char *arg, char *err, size_t errsize)
{
	if (langid_known(arg))
		return 0;
	return owt_fail(err, errsize, NULL, XUSAGE,
	    "--lang: '%s' is not a language CLD2 detects",
	    arg);
}

static const struct opt opts[] = {
	OPT_ROW_HELP,
	OPT_ROW_KEEP_GOING(&opt.keep_going,
	    "skip bad records (still exit 1)"),
	OPT_ROW_QUIET(&opt.quiet,
	    "no summary or progress on stderr"),
	{ .name = "decontam", .arg = "file", .type = OPT_STR, .p = &opt.tasks,
	    .flags = OPT_REPEAT,
	    .help = "cut the n-grams of these task texts (JSONL)" },
	{ .name = "drop", .arg = "file", .type = OPT_STR, .p = &opt.drop,
	    .help = "drop the documents a --report file drops" },
	{ .name = "json-keys", .arg = "key", .type = OPT_STR,
	    .p = &opt.text_key, .check = opt_check_field,
	    .help = "the text field (text)" },
	{ .name = "keep-quotes", .type = OPT_FLAG, .p = &opt.keep_quotes,
	    .help = "fix: leave curly quotes curly" },
	{ .name = "lang", .arg = "code", .type = OPT_STR, .p = &opt.lang,
	    .check = check_lang, .help = "lang: the language to keep (en)" },
	{ .name = "merge-file", .arg = "file", .type = OPT_STR,
	    .p = &opt.merges,
	    .help = "length: the merges (vocab.bpe) of another vocabulary" },
	{ .name = "min-chars", .arg = "n", .type = OPT_U64, .p = &opt.min_chars,
	    .max = 1LL << 40,
	    .help = "length: drop texts of fewer characters (0)" },
	{ .name = "min-tokens", .arg = "n", .type = OPT_U64,
	    .p = &opt.min_tokens, .max = 1LL << 36,
	    .help = "length: drop texts of fewer GPT-2 tokens and EOD (128)" },
	{ .name = "near-threshold", .arg = "j", .type = OPT_DOUBLE,
	    .p = &opt.near, .min = 0.05, .max = 1,
	    .help = "near: drop at this estimated similarity (0.7)" },
	{ .name = "progress", .type = OPT_FLAG, .p = &opt.progress,
	    .help = "show progress even when stderr is not a terminal" },
	{ .name = "report", .arg = "file", .type = OPT_STR, .p = &opt.report,
	    .help = "one JSONL line per dropped or changed document" },
	{ .name = "seed", .arg = "n", .type = OPT_U64, .p = &opt.seed,
	    .max = 1LL << 62, .help = "seed of the MinHash functions (1234)" },
	{ .name = "sign", .arg = "file", .type = OPT_STR, .p = &opt.sign,
	    .help = "write the signatures of the kept documents" },
	{ .name = "signed", .type = OPT_FLAG, .p = &opt.signed_in,
	    .help = "the inputs are --sign files: exact, near only" },
	{ .name = "stages", .arg = "list", .type = OPT_STR, .p = &opt.stages,
	    .help = "stages to run (fix,lang,length,exact,near)" },
	{ .name = "tmpdir", .arg = "dir", .type = OPT_STR, .p = &opt.tmpdir,
	    .help = "decontam's spool ($TMPDIR or /tmp)" },
	OPT_ROW_VERSION,
	{ .name = "vocab-file", .arg = "file", .type = OPT_STR, .p = &opt.vocab,
	    .help = "length: the tokens (encoder.json) of another vocabulary" },
	{ .name = "workers", .arg = "n", .type = OPT_INT, .p = &opt.workers,
	    .min = 1, .max = 1024, .help = "worker threads (all processors)" },
};
#define NOPTS (sizeof opts / sizeof *opts)

static const struct opt_prog options = { "owt-dedup", opts, NOPTS,
    "[file ...]", 25, NULL };

static struct clean c;

/* The stages --stages names, or the default ones; what goes together. */
static void
set_stages(void)
{
	char err[1024];
	int i;

	if (opt.stages != NULL) {
		if (clean_parse_stages(opt.stages, c.stage, err, sizeof err) < 0)
			owt_die(XUSAGE, "%s", err);
	} else {
		for (i = 0; i < CLEAN_DECONTAM; i++)
			c.stage[i] = !opt.signed_in || i == CLEAN_EXACT ||
			    i == CLEAN_NEAR;
		c.stage[CLEAN_DECONTAM] = opt.tasks.n > 0;
	}
	if (opt.signed_in && (c.stage[CLEAN_FIX] || c.stage[CLEAN_LANG] ||
	    c.stage[CLEAN_LENGTH] || c.stage[CLEAN_DECONTAM]))
		owt_die(XUSAGE, "--signed: only the exact and near stages run on "
		    "signatures");
	if (opt.signed_in && opt.sign != NULL)
		owt_die(XUSAGE, "--sign and --signed: the output of --signed is "
		    "signatures already");
	if (c.stage[CLEAN_DECONTAM] && opt.tasks.n == 0)
		owt_die(XUSAGE, "the decontam stage needs --decontam files");
	if (!c.stage[CLEAN_DECONTAM] && opt.tasks.n > 0)
		owt_die(XUSAGE, "--decontam given, but --stages leaves out decontam");
	if ((opt.vocab == NULL) != (opt.merges == NULL))
		owt_die(XUSAGE, "--vocab-file and --merge-file go together");
}

static void
summary(double secs)
{
	char what[64];
	size_t i;

	for (i = 1; i < CLEAN_NREASONS; i++)
		c.count[i].name = clean_reason_name((int)i);
	for (i = 0; i < TF_NFIXES; i++)
		c.fixcount[i].name = textfix_name[i];
	fprintf(stderr, "%s: %llu documents in, %llu out; %.1f MB in %.2f s, "
	    "%.1f MB/s with %d worker%s\n", owt_prog, c.nin, c.nout,
	    (double)c.nbytes / 1e6, secs, secs > 0 ?
	    (double)c.nbytes / 1e6 / secs : 0, opt.workers,
	    opt.workers == 1 ? "" : "s");
	if (c.stage[CLEAN_FIX]) {
		snprintf(what, sizeof what, "fixed %llu document%s", c.nfixed,
		    c.nfixed == 1 ? "" : "s");
		tally_print(what, c.fixcount, TF_NFIXES);
	}
	tally_print("dropped", c.count + 1, CLEAN_NREASONS - 1);
	if (c.stage[CLEAN_DECONTAM])
		fprintf(stderr, "%s: decontam: %zu task n-grams; %llu n-grams cut "
		    "out of %llu documents, %llu pieces\n", owt_prog,
		    decontam_size(c.dc), c.pass2.nmatches, c.pass2.ncut,
		    c.pass2.npieces);
	if (c.index != NULL && dedup_count(c.index) > 0)
		fprintf(stderr, "%s: index: %zu documents, %.1f MB, %zu bytes "
		    "per document\n", owt_prog, dedup_count(c.index),
		    (double)dedup_bytes(c.index) / 1e6,
		    dedup_bytes(c.index) / dedup_count(c.index));
}

/* Close the report or the signatures: a write error shows here at last. */
static void
close_out(FILE *f, const char *name)
{
	if (f != NULL && fclose(f) != 0)
		owt_die_errno(XSYS, "cannot write '%s'", name);
}

int
main(int argc, char **argv)
{
	struct batch_opts run = {
		.bytes = 4u << 20, .maxrecs = 512, .out = stdout,
		.init = clean_batch_init, .work = clean_batch_work,
		.fini = clean_batch_fini, .done = clean_batch_done, .arg = &c,
	};
	struct batch_loop *l;
	struct progress prog;
	struct bpe *vocab = NULL;
	char err[1024], **files;
	size_t i;
	int first, code, k = 0, status;

	owt_setprog(argv[0]);
	opt.workers = owt_ncpu();
	first = owt_options(&options, argc, argv, NULL);
	set_stages();
	if (opt.tmpdir == NULL && (opt.tmpdir = getenv("TMPDIR")) == NULL)
		opt.tmpdir = "/tmp";

	c.nfiles = first < argc ? (size_t)(argc - first) : 1;
	files = xcalloc(c.nfiles, sizeof *files);
	for (i = 0; i < c.nfiles; i++)
		files[i] = first < argc && strcmp(argv[first + i], "-") != 0 ?
		    argv[first + i] : (char *)"<stdin>";
	c.files = files;
	c.signed_in = opt.signed_in;
	c.fixes = opt.keep_quotes ? TF_ALL & ~(1u << TF_QUOTES) : TF_ALL;
	c.text_key = opt.text_key;
	c.lang = opt.lang;
	c.min_chars = opt.min_chars;
	c.min_tokens = opt.min_tokens;
	c.seed = opt.seed;
	c.near = opt.near;
	c.tasks = opt.tasks.v;
	c.ntasks = opt.tasks.n;
	c.tmpdir = opt.tmpdir;
	if (c.stage[CLEAN_LENGTH] && opt.min_tokens > 0 &&
	    (vocab = bpe_load(opt.vocab, opt.merges, err,
	    sizeof err, &code)) == NULL)
		owt_die(code, "%s", err);
	c.vocab = vocab;
	if (clean_start(&c, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	if (opt.drop != NULL && (c.droplist = dedup_report_load_drop(opt.drop,
	    err, sizeof err, &code)) == NULL)
		owt_die(code, "%s", err);
	if (opt.sign != NULL && (c.sign = fopen(opt.sign, "w")) == NULL)
		owt_die_errno(XSYS, "cannot create '%s'", opt.sign);
	c.signname = opt.sign;
	if (opt.report != NULL) {
		if ((c.rep = fopen(opt.report, "w")) == NULL)
			owt_die_errno(XSYS, "cannot create '%s'", opt.report);
		if (dedup_report_open(&c.report, opt.tmpdir, err, sizeof err,
		    &code) < 0)
			owt_die(code, "%s", err);
	}
	c.repname = opt.report;
	progress_init(&prog, opt.quiet ? -1 : opt.progress, "documents");
	c.prog = &prog;

	run.nworkers = opt.workers;
	run.keep_going = opt.keep_going;
	run.rep = c.rep;
	run.repname = opt.report;
	l = batch_start(&run);
	for (i = 0; i < c.nfiles && k == 0; i++)
		if ((k = clean_read(&c, l, (int)i, err, sizeof err, &code)) < 0)
			owt_die(code, "%s", err);
	if ((status = batch_end(l, err, sizeof err, &code)) < 0) {
		if (c.rep != NULL && ferror(c.rep))
			owt_die_errno(XSYS, "cannot write '%s'", opt.report);
		owt_die(code, "%s", err);
	}
	if (c.errcode != 0)
		owt_die(c.errcode, "%s", c.err);
	if (batch_halts(status, opt.keep_going))
		exit(owt_finish(status));
	if (clean_finish(&c, stdout, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	progress_done(&prog);
	if (!opt.quiet)
		summary(progress_elapsed(&prog));
	close_out(c.rep, opt.report);
	close_out(c.sign, opt.sign);
	dedup_free((struct dedup *)c.droplist);
	free(files);
	free(opt.tasks.v);
	if (vocab != NULL)
		bpe_free(vocab);
	clean_end(&c);
	return owt_finish(status);
}
