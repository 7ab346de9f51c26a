/* idx-pack - pack token streams into Megatron indexed datasets, merge, inspect and check them */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json.h"
#include "tok/mmidx.h"
#include "core/opt.h"
#include "core/outfile.h"
#include "core/progress.h"
#include "tok/tok.h"
#include "core/util.h"

enum { M_PACK, M_MERGE, M_INFO, M_CAT, M_CHECK };

static struct {
	int mode, force, quiet, progress, keep_empty, have_eod;
	const char *output;
	uint64_t first, last;	/* --docs: [first, last) */
	uint32_t vocab, eod;
} opt = { .vocab = 50257, .last = UINT64_MAX };

static struct mmidx_writer w;
static struct progress prog;
static struct tally skipped[1] = { { "empty documents", 0 } };

/* Stop: remove the dataset being written, report, exit. */
static void
die(int code, const char *msg)
{
	owt_warn("%s", msg);
	mmidx_abort(&w);
	exit(code);
}

/* A dataset operand: PREFIX, or PREFIX.idx / PREFIX.bin as a glob gives them. */
static char *
prefix_of(const char *arg)
{
	size_t n = strlen(arg);
	char *p = xstrdup(arg), *idx;
	struct stat st;

	if (n > 4 && (strcmp(arg + n - 4, ".idx") == 0 ||
	    strcmp(arg + n - 4, ".bin") == 0) && stat(arg, &st) == 0) {
		idx = xmalloc(n + 5);
		sprintf(idx, "%s.idx", arg);
		if (stat(idx, &st) != 0)
			p[n - 4] = '\0';
		free(idx);
	}
	return p;
}

/* A document the dataset cannot take (bad data: named) or a failed write. */
static void
die_at(const struct tok_reader *r, int code, const char *err)
{
	char msg[2048];

	if (code != XDATA)
		die(code, err);
	snprintf(msg, sizeof msg, "%s: document %llu: %s", r->in.name,
	    (unsigned long long)r->ndocs, err);
	die(code, msg);
}

static void
open_dataset(struct mmidx *d, const char *prefix)
{
	char err[1024];
	int code;

	if (mmidx_open(d, prefix, err, sizeof err, &code) < 0)
		die(code, err);
}

/* Pack token streams: one sequence per document. */
static void
pack(char **files, int nfiles)
{
	struct tok_reader r;
	struct tok_hdr first = { 0 };
	const char *first_name = NULL;
	const unsigned char *raw;
	size_t n;
	int i, k;

	for (i = 0; i < (nfiles ? nfiles : 1); i++) {
		if (tok_open(&r, nfiles ? files[i] : "-") < 0)
			die(r.errcode, r.err);
		if (first_name == NULL) {
			first = r.h;
			first_name = xstrdup(r.in.name);
			if (mmidx_create(&w, opt.output, MMIDX_DTYPE(first.vocab),
			    opt.force) < 0)
				owt_die(w.errcode, "%s", w.err);
		} else if (r.h.vocab != first.vocab || r.h.eod != first.eod) {
			char msg[2048];

			snprintf(msg, sizeof msg, "%s: vocabulary %u, EOD %d "
			    "differ from %s's (vocabulary %u, EOD %d)", r.in.name,
			    r.h.vocab, (int)r.h.eod, first_name, first.vocab,
			    (int)first.eod);
			die(XDATA, msg);
		}
		while ((k = tok_next_raw(&r, &raw, &n)) > 0) {
			if (n == 0 && !opt.keep_empty) {
				skipped[0].n++;
				continue;
			}
			if ((n > 0 && mmidx_add_le(&w, raw, r.h.width, n) < 0) ||
			    mmidx_end_doc(&w) < 0)
				die_at(&r, w.errcode, w.err);
			progress_tick(&prog, w.ndocs, w.binbytes);
		}
		if (k < 0)
			die(r.errcode, r.err);
		if (r.nv1 > 0)
			owt_warn("%s: a version 1 token stream: whether it is whole "
			    "cannot be checked", r.in.name);
		tok_close(&r);
	}
	free((void *)first_name);
}

/* Megatron's merge: tokens concatenated, document indices shifted. */
static void
merge(char **prefixes, int n)
{
	struct mmidx d;
	char msg[2048];
	char *p;
	int i;

	for (i = 0; i < n; i++) {
		p = prefix_of(prefixes[i]);
		open_dataset(&d, p);
		if (i == 0 && mmidx_create(&w, opt.output, d.dtype, opt.force) < 0)
			owt_die(w.errcode, "%s", w.err);
		if (mmidx_add_dataset(&w, &d) < 0) {
			/* A dtype that differs is the input's; a write error names its file. */
			if (w.errcode != XDATA)
				die(w.errcode, w.err);
			snprintf(msg, sizeof msg, "%s.idx: %s", p, w.err);
			die(w.errcode, msg);
		}
		progress_tick(&prog, w.ndocs, w.binbytes);
		mmidx_close(&d);
		free(p);
	}
}

/* Put the dataset in place, then say what it holds. */
static void
commit(int ndatasets)
{
	struct mmidx_writer done = w;

	if (mmidx_commit(&w) < 0)
		owt_die(w.errcode, "%s", w.err);
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

static void
info(const char *prefix)
{
	struct mmidx_stats st;
	struct mmidx d;
	struct buf b = { 0 };

	open_dataset(&d, prefix);
	mmidx_stats(&d, &st);
	json_string(&b, prefix, strlen(prefix));
	printf("{\"prefix\":%s,\"dtype\":\"%s\",\"dtype_code\":%d,"
	    "\"sequences\":%llu,\"documents\":%llu,\"tokens\":%llu,"
	    "\"bin_bytes\":%llu,\"idx_bytes\":%llu,\"empty_sequences\":%llu,"
	    "\"empty_documents\":%llu,\"length\":{\"min\":%u,\"max\":%u,"
	    "\"mean\":%.2f,\"p50\":%u,\"p90\":%u,\"p99\":%u}}\n",
	    b.p, mmidx_dtype_name(d.dtype), d.dtype,
	    (unsigned long long)d.nseq, (unsigned long long)d.ndocs,
	    (unsigned long long)d.ntokens,
	    (unsigned long long)(d.ntokens * d.itemsize),
	    (unsigned long long)(MMIDX_HDRSIZE + 12 * d.nseq + 8 * (d.ndocs + 1)),
	    (unsigned long long)st.empty, (unsigned long long)st.empty_docs,
	    st.min, st.max, st.mean, st.p50, st.p90, st.p99);
	mmidx_close(&d);
	buf_free(&b);
}

/*
 * Documents [first, last) as a token stream member: a document's sequences
 * joined. A fault stops before the member's trailer.
 */
static void
cat(const char *prefix, struct buf *out)
{
	struct tok_count c = { 0 };
	struct tok_hdr h;
	struct mmidx d;
	uint32_t *ids = NULL;
	size_t cap = 0, n, len, i;
	uint64_t k, s, last;
	char msg[1024];

	open_dataset(&d, prefix);
	tok_hdr_init(&h, opt.vocab, opt.eod);
	tok_put_hdr(out, &h);
	last = opt.last < d.ndocs ? opt.last : d.ndocs;
	for (k = opt.first; k < last; k++) {
		n = 0;
		for (s = mmidx_doc(&d, k); s < mmidx_doc(&d, k + 1); s++) {
			len = mmidx_len(&d, s);
			if (len > TOK_MAXDOC - n) {
				snprintf(msg, sizeof msg, "%s.idx: document %llu "
				    "is too long for a token stream", prefix,
				    (unsigned long long)k);
				free(ids);
				die(XDATA, msg);
			}
			ids = xgrow(ids, &cap, n + len, sizeof *ids);
			mmidx_read(&d, s, 0, len, ids + n);
			n += len;
		}
		for (i = 0; i < n; i++) {
			if (ids[i] >= opt.vocab) {
				snprintf(msg, sizeof msg, "%s.bin: token %u in "
				    "document %llu is outside the vocabulary "
				    "(%u); --vocab sets it", prefix, ids[i],
				    (unsigned long long)k, opt.vocab);
				fwrite(out->p, 1, out->len, stdout);
				free(ids);
				die(XDATA, msg);
			}
		}
		tok_put_doc(out, &h, &c, ids, n);
		if (out->len >= (1u << 20)) {
			if (fwrite(out->p, 1, out->len, stdout) != out->len)
				exit(owt_finish(XSYS));
			out->len = 0;
		}
	}
	tok_put_end(out, &c);
	free(ids);
	mmidx_close(&d);
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
		opt.first = (uint64_t)v;
		opt.last = opt.first + 1;
		return 0;
	}
	k = xstrndup(arg, (size_t)(colon - arg));
	if (*k && (r = opt_scan_int("--docs", k, 0, INT64_MAX, &v, err,
	    errsize)) == 0)
		opt.first = (uint64_t)v;
	if (r == 0 && colon[1] && (r = opt_scan_int("--docs", colon + 1, 0,
	    INT64_MAX, &v, err, errsize)) == 0)
		opt.last = (uint64_t)v;
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
	{ .name = "eod", .arg = "id", .type = OPT_U32, .p = &opt.eod,
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
	{ .name = "vocab", .arg = "n", .type = OPT_U32, .p = &opt.vocab,
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
		opt.eod = 50256 < opt.vocab ? 50256 : TOK_NOEOD;
	else if (opt.eod >= opt.vocab)
		owt_die(XUSAGE, "--eod: %u is not below the vocabulary (%u)",
		    opt.eod, opt.vocab);
	signal(SIGINT, outfile_signal_exit);
	signal(SIGTERM, outfile_signal_exit);
	signal(SIGHUP, outfile_signal_exit);
	signal(SIGPIPE, outfile_signal_exit);
	progress_init(&prog, opt.quiet ? -1 : opt.progress, "documents");

	switch (opt.mode) {
	case M_PACK:
		pack(argv, argc);
		break;
	case M_MERGE:
		merge(argv, argc);
		break;
	case M_CAT:
		owt_no_tty_stdout();
		for (i = 0; i < argc; i++) {
			p = prefix_of(argv[i]);
			cat(p, &out);
			free(p);
		}
		if (fwrite(out.p, 1, out.len, stdout) != out.len)
			return owt_finish(XSYS);
		buf_free(&out);
		break;
	default:
		for (i = 0; i < argc; i++) {
			p = prefix_of(argv[i]);
			if (opt.mode == M_INFO)
				info(p);
			else if ((c = check(p)) > status)
				status = c;
			free(p);
		}
		break;
	}
	if (opt.mode == M_PACK || opt.mode == M_MERGE)
		commit(argc);
	return owt_finish(status);
}
