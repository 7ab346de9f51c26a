/* jsonl-merge - turn files and directories of text and JSONL into one JSONL stream */
#include <stdio.h>
#include <stdlib.h>

#include "core/opt.h"
#include "core/progress.h"
#include "core/tally.h"
#include "core/util.h"
#include "merge/merge.h"

static struct {
	int quiet, progress;
	struct merge_opts m;
} opt = { .m = { .text_key = "text", .seed = 1234, .memory = 1UL << 30 } };

static const struct opt opts[] = {
	OPT_ROW_HELP,
	OPT_ROW_KEEP_GOING(&opt.m.keep_going,
	    "skip bad records and files (still exit 1)"),
	OPT_ROW_QUIET(&opt.quiet,
	    "no summary or progress on stderr"),
	{ .name = "add-id", .arg = "prefix", .type = OPT_STR,
	    .p = &opt.m.id_prefix,
	    .help = "add adlr_id \"prefix-0000000001\", ... in output order" },
	{ .name = "json-keys", .arg = "key", .type = OPT_STR,
	    .p = &opt.m.text_key, .check = opt_check_field,
	    .help = "the text field of records made from .txt files (text)" },
	{ .name = "memory", .arg = "size", .type = OPT_SIZE, .p = &opt.m.memory,
	    .min = 1 << 20, .max = (double)((size_t)1 << 44),
	    .help = "memory for --shuffle before spilling to disk (1G)" },
	{ .name = "progress", .type = OPT_FLAG, .p = &opt.progress,
	    .help = "show progress even when stderr is not a terminal" },
	{ .name = "seed", .arg = "n", .type = OPT_U64, .p = &opt.m.seed,
	    .max = (double)(1LL << 62), .help = "seed of --shuffle (1234)" },
	{ .name = "shuffle", .type = OPT_FLAG, .p = &opt.m.shuffle,
	    .help = "write the records in a seeded random order" },
	{ .name = "tmpdir", .arg = "dir", .type = OPT_STR, .p = &opt.m.tmpdir,
	    .help = "where --shuffle spills ($TMPDIR or /tmp)" },
	OPT_ROW_VERSION,
};

static const struct opt_prog options = { "jsonl-merge", opts,
    sizeof opts / sizeof *opts, "[file | dir ...]", 23, NULL };

static struct merge m;
static struct progress prog;

/* The run stops: before a bad record (1), or at an error (-1). */
static void
stop(int r)
{
	if (ferror(stdout))
		exit(owt_finish(XSYS));
	if (r < 0)
		owt_die(m.errcode, "%s", m.err);
	fwrite(m.out.p, 1, m.out.len, stdout);
	exit(owt_finish(XDATA));
}

static void
summary(double secs)
{
	fprintf(stderr, "%s: %llu records from %llu files, %.1f MB in %.2f s",
	    owt_prog, m.nout, m.nfiles, (double)m.nbytes / 1e6, secs);
	if (m.nignored)
		fprintf(stderr, "; %llu files ignored (not .txt, .json or .jsonl)",
		    m.nignored);
	fputc('\n', stderr);
	tally_print("dropped", m.count + 1, MERGE_NCOUNT - 1);
}

int
main(int argc, char **argv)
{
	int i, first, r;

	owt_setprog(argv[0]);
	first = owt_options(&options, argc, argv, NULL);
	if (opt.m.tmpdir == NULL && (opt.m.tmpdir = getenv("TMPDIR")) == NULL)
		opt.m.tmpdir = "/tmp";
	progress_init(&prog, opt.quiet ? -1 : opt.progress, "records");
	merge_init(&m, &opt.m, &prog, stdout);
	if (first == argc && (r = merge_operand(&m, "-")) != 0)
		stop(r);
	for (i = first; i < argc; i++)
		if ((r = merge_operand(&m, argv[i])) != 0)
			stop(r);
	if (merge_finish(&m) < 0)
		stop(-1);
	progress_done(&prog);
	if (!opt.quiet)
		summary(progress_elapsed(&prog));
	r = m.status;
	merge_free(&m);
	return owt_finish(r);
}
