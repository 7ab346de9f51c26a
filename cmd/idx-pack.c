/* idx-pack - pack token streams into Megatron indexed datasets, merge, inspect and check them */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "core/opt.h"
#include "core/outfile.h"
#include "core/progress.h"
#include "core/util.h"
#include "tok/mmidx.h"
#include "tok/pack.h"
#include "tok/tok.h"

enum { M_PACK, M_MERGE, M_INFO, M_CAT, M_CHECK };

static struct {
	int mode, force, quiet, progress, keep_empty, have_eod;
	const char *output;
	struct pack_cat cat;	/* --docs, --vocab, --eod */
} opt = { .cat = { .vocab = 50257, .last = UINT64_MAX } };

static struct pack pk;
static struct progress prog;
static struct tally skipped[1] = { { "empty documents", 0 } };

/* Stop: remove the dataset being written, report, exit. */
static void
die(int code, const char *msg)
{
	owt_warn("%s", msg);
	mmidx_abort(&pk.w);
	exit(code);
}

/* Pack token streams: one sequence per document. */
static void
pack(char **files, int nfiles)
{
	char err[2 * OWT_ERRSIZE];	/* a message may name two files */
	int i, code;

	for (i = 0; i < (nfiles ? nfiles : 1); i++) {
		if (pack_stream(&pk, nfiles ? files[i] : "-", err, sizeof err,
		    &code) < 0)
			die(code, err);
		if (pk.v1)
			owt_warn("%s: a version 1 token stream: whether it is whole "
			    "cannot be checked", pk.v1);
	}
	skipped[0].n = pk.nempty;
	pack_free(&pk);
}

/* Put the dataset in place, then say what it holds. */
static void
commit(int ndatasets)
{
	struct mmidx_writer done = pk.w;

	if (mmidx_commit(&pk.w) < 0)
		owt_die(pk.w.errcode, "%s", pk.w.err);
	if (opt.quiet)
		return;
	progress_done(&prog);
	fprintf(stderr, "%s: %s: ", owt_prog, opt.output);
	if (opt.mode == M_MERGE)
		fprintf(stderr, "%d datasets, ", ndatasets);
	fprintf(stderr, "%llu documents, %llu tokens (%s), %.1f MB in %.2f s\n",
	    (unsigned long long)done.ndocs, (unsigned long long)done.ntokens,
	    mmidx_dtype_name(done.dtype),
	    (double)done.binbytes / 1e6, progress_elapsed(&prog));
	if (opt.mode == M_PACK)
		tally_print("skipped", skipped, 1);
}

static int
check(const char *prefix)
{
	char err[OWT_ERRSIZE];
	struct mmidx d;
	int code = XDATA;

	if (mmidx_open(&d, prefix, err, sizeof err, &code) < 0 ||
	    mmidx_check_tokens(&d, prefix, err, sizeof err, &code) < 0) {
		owt_warn("%s", err);
		mmidx_close(&d);
		return code == XSYS ? XSYS : XDATA;
	}
	printf("%s: ok: %llu sequences, %llu documents, %llu tokens (%s)\n",
	    prefix, (unsigned long long)d.nseq, (unsigned long long)d.ndocs,
	    (unsigned long long)d.ntokens,
	    mmidx_dtype_name(d.dtype));
	mmidx_close(&d);
	return XOK;
}

/* One operand of --merge, --cat, --info or --check: its status. */
static int
dataset(const char *prefix, struct buf *out)
{
	char err[2 * OWT_ERRSIZE];	/* --merge's: the writer's, then the prefix */
	int code;

	switch (opt.mode) {
	case M_MERGE:
		if (pack_dataset(&pk, prefix, err, sizeof err, &code) < 0)
			die(code, err);
		return XOK;
	case M_CAT:
		if (pack_cat(&opt.cat, prefix, out, stdout, err, OWT_ERRSIZE,
		    &code) < 0) {
			if (ferror(stdout))
				exit(owt_finish(XSYS));
			if (out->len > 0)	/* none yet: no buffer either */
				fwrite(out->p, 1, out->len, stdout);
			die(code, err);
		}
		return XOK;
	case M_INFO:
		if (pack_info(prefix, out, err, OWT_ERRSIZE, &code) < 0)
			die(code, err);
		if (out->len > 0)
			fwrite(out->p, 1, out->len, stdout);
		out->len = 0;
		return XOK;
	default:
		return check(prefix);
	}
}

/* "K:M", "K:", ":M" or "K": documents [K, M), M excluded, or K alone. */
static int
parse_docs(const struct opt *o, const char *arg, char *err, size_t errsize)
{
	const char *colon = strchr(arg, ':');
	long long v;
	char *k;
	int r = 0;

	(void)o;
	if (colon == NULL) {
		if (opt_scan_int("--docs", arg, 0, INT64_MAX, &v, err,
		    errsize) < 0)
			return -1;
		opt.cat.first = (uint64_t)v;
		opt.cat.last = opt.cat.first + 1;
		return 0;
	}
	k = xstrndup(arg, (size_t)(colon - arg));
	if (*k && (r = opt_scan_int("--docs", k, 0, INT64_MAX, &v, err,
	    errsize)) == 0)
		opt.cat.first = (uint64_t)v;
	if (r == 0 && colon[1] && (r = opt_scan_int("--docs", colon + 1, 0,
	    INT64_MAX, &v, err, errsize)) == 0)
		opt.cat.last = (uint64_t)v;
	free(k);
	return r;
}

static const struct opt opts[] = {
	{ .name = "force", .key = 'f', .type = OPT_FLAG, .p = &opt.force,
	    .help = "overwrite an existing dataset" },
	OPT_ROW_HELP,
	{ .name = "output", .key = 'o', .arg = "prefix", .type = OPT_STR,
	    .p = &opt.output, .help = "write prefix.bin and prefix.idx" },
	OPT_ROW_QUIET(&opt.quiet,
	    "no summary or progress on stderr"),
	{ .name = "cat", .type = OPT_MODE, .p = &opt.mode, .value = M_CAT,
	    .help = "write the datasets' documents as a token stream" },
	{ .name = "check", .type = OPT_MODE, .p = &opt.mode,
	    .value = M_CHECK,
	    .help = "verify every invariant of the datasets" },
	{ .name = "docs", .arg = "range", .type = OPT_FUNC, .check = parse_docs,
	    .help = "--cat only documents K:M (from 0, M excluded)" },
	{ .name = "eod", .arg = "id", .type = OPT_U32, .p = &opt.cat.eod,
	    .max = UINT32_MAX - 1,
	    .help = "--cat: the stream header's EOD id (50256)" },
	{ .name = "info", .type = OPT_MODE, .p = &opt.mode, .value = M_INFO,
	    .help = "describe the datasets in JSON, one line each" },
	{ .name = "keep-empty", .type = OPT_FLAG, .p = &opt.keep_empty,
	    .help = "keep empty documents as documents of no sequence" },
	{ .name = "merge", .type = OPT_MODE, .p = &opt.mode,
	    .value = M_MERGE,
	    .help = "-o: concatenate the datasets named as operands" },
	{ .name = "progress", .type = OPT_FLAG, .p = &opt.progress,
	    .help = "show progress even when stderr is not a terminal" },
	OPT_ROW_VERSION,
	{ .name = "vocab", .arg = "n", .type = OPT_U32, .p = &opt.cat.vocab,
	    .min = 1, .max = UINT32_MAX,
	    .help = "--cat: the stream header's vocabulary size (50257)" },
};
#define NOPTS (sizeof opts / sizeof *opts)

static const struct opt_prog options = { "idx-pack", opts, NOPTS,
    "[file | prefix ...]", 23, NULL };

int
main(int argc, char **argv)
{
	struct buf out = { 0 };
	char given[NOPTS] = { 0 };
	int c, i, status = XOK, cat_opts, first;
	char *p;

	owt_setprog(argv[0]);
	first = owt_options(&options, argc, argv, given);
	opt.have_eod = given[opt_find(&options, "eod")];
	cat_opts = opt.have_eod || given[opt_find(&options, "docs")] ||
	    given[opt_find(&options, "vocab")];
	argc -= first;
	argv += first;
	if ((opt.mode == M_PACK || opt.mode == M_MERGE) != (opt.output != NULL))
		owt_die(XUSAGE, opt.output ? "-o writes a dataset; --cat, "
		    "--check and --info read one" : "-o prefix is missing");
	if (opt.mode != M_PACK && opt.mode != M_MERGE && opt.force)
		owt_die(XUSAGE, "-f goes with -o");
	if (opt.mode != M_PACK && opt.keep_empty)
		owt_die(XUSAGE, "--keep-empty goes with packing token streams");
	if (opt.mode != M_CAT && cat_opts)
		owt_die(XUSAGE, "--docs, --eod and --vocab go with --cat");
	if (opt.mode != M_PACK && argc == 0)
		owt_die(XUSAGE, "no dataset prefix given");
	if (!opt.have_eod)
		opt.cat.eod = 50256 < opt.cat.vocab ? 50256 : TOK_NOEOD;
	else if (opt.cat.eod >= opt.cat.vocab)
		owt_die(XUSAGE, "--eod: %u is not below the vocabulary (%u)",
		    opt.cat.eod, opt.cat.vocab);
	signal(SIGINT, outfile_signal_exit);
	signal(SIGTERM, outfile_signal_exit);
	signal(SIGHUP, outfile_signal_exit);
	signal(SIGPIPE, outfile_signal_exit);
	progress_init(&prog, opt.quiet ? -1 : opt.progress, "documents");
	pack_init(&pk, opt.output, opt.force, opt.keep_empty, &prog);

	switch (opt.mode) {
	case M_PACK:
		pack(argv, argc);
		break;
	case M_CAT:
		owt_no_tty_stdout();
		/* falls through */
	default:
		for (i = 0; i < argc; i++) {
			p = pack_prefix(argv[i]);
			if ((c = dataset(p, &out)) > status)
				status = c;
			free(p);
		}
		/* nothing to write (--check, --merge): no buffer either */
		if (out.len > 0 && fwrite(out.p, 1, out.len, stdout) != out.len)
			return owt_finish(XSYS);
		buf_free(&out);
		break;
	}
	if (opt.mode == M_PACK || opt.mode == M_MERGE)
		commit(argc);
	return owt_finish(status);
}
