/* owt-dedup - clean a JSONL corpus: fix text, keep one language, drop short and duplicate documents */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "decontam.h"
#include "dedup.h"
#include "input.h"
#include "jsonl.h"
#include "langid.h"
#include "par.h"
#include "progress.h"
#include "spill.h"
#include "textfix.h"
#include "util.h"
#include "words.h"

static const char usage_line[] =
    "usage: owt-dedup [-hkq] [--decontam file] [--drop file] "
    "[--json-keys key] [--keep-quotes] [--lang code] [--merge-file file] "
    "[--min-chars n] [--min-tokens n] [--near-threshold j] [--progress] "
    "[--report file] [--seed n] [--sign file] [--signed] [--stages list] "
    "[--tmpdir dir] [--version] [--vocab-file file] [--workers n] "
    "[file ...]\n";

static const char options_help[] =
    "  -h, --help             print this help and exit\n"
    "  -k, --keep-going       skip bad records (still exit 1)\n"
    "  -q, --quiet            no summary or progress on stderr\n"
    "      --decontam file    cut the n-grams of these task texts (JSONL)\n"
    "      --drop file        drop the documents a --report file drops\n"
    "      --json-keys key    the text field (text)\n"
    "      --keep-quotes      fix: leave curly quotes curly\n"
    "      --lang code        lang: the language to keep (en)\n"
    "      --merge-file file  length: the merges (vocab.bpe) of another vocabulary\n"
    "      --min-chars n      length: drop texts of fewer characters (0)\n"
    "      --min-tokens n     length: drop texts of fewer GPT-2 tokens and EOD (128)\n"
    "      --near-threshold j near: drop at this estimated similarity (0.7)\n"
    "      --progress         show progress even when stderr is not a terminal\n"
    "      --report file      one JSONL line per dropped or changed document\n"
    "      --seed n           seed of the MinHash functions (1234)\n"
    "      --sign file        write the signatures of the kept documents\n"
    "      --signed           the inputs are --sign files: exact, near only\n"
    "      --stages list      stages to run (fix,lang,length,exact,near)\n"
    "      --tmpdir dir       decontam's spool ($TMPDIR or /tmp)\n"
    "      --version          print the version and exit\n"
    "      --vocab-file file  length: the tokens (encoder.json) of another vocabulary\n"
    "      --workers n        worker threads (all processors)\n";

enum { S_FIX, S_LANG, S_LENGTH, S_EXACT, S_NEAR, S_DECONTAM, S_N, S_DROP = S_N };
static const char *const stage_name[S_N + 1] = {
	"fix", "lang", "length", "exact", "near", "decontam", "drop"
};

/* Why a document is dropped: counted in the summary, named in the report. */
enum {
	R_KEPT,
	/* 1 .. BAD_NREASONS - 1: bad records, named by input_bad_name[] */
	R_MISSING = BAD_NREASONS,
	R_BADSIG, R_LISTED,
	R_LANG, R_UNKNOWN, R_SHORT, R_EXACT, R_URL, R_NEAR, R_PIECES, R_EMPTY,
	R_N
};
static const struct {
	int stage;		/* -1: input */
	const char *name;
} reason[R_N] = {
	[R_MISSING] = { -1, "missing text field" },
	[R_BADSIG] = { -1, "bad signature" },
	[R_LISTED] = { S_DROP, "listed" },
	[R_LANG] = { S_LANG, "other language" },
	[R_UNKNOWN] = { S_LANG, "unknown language" },
	[R_SHORT] = { S_LENGTH, "too short" },
	[R_EXACT] = { S_EXACT, "exact duplicate" },
	[R_URL] = { S_EXACT, "duplicate url" },
	[R_NEAR] = { S_NEAR, "near duplicate" },
	[R_PIECES] = { S_DECONTAM, "more than 10 pieces" },
	[R_EMPTY] = { S_DECONTAM, "nothing left" },
};

static struct {
	int keep_going, quiet, progress, workers, signed_in;
	int stage[S_N];
	unsigned fixes;
	const char *text_key, *lang, *report, *tmpdir, *sign, *drop;
	const char *vocab, *merges;
	const char **tasks;
	size_t ntasks;
	size_t min_chars, min_tokens;
	double near;
	uint64_t seed;
} opt = {
	.fixes = TF_ALL, .text_key = "text", .lang = "en", .near = 0.7,
	.min_tokens = 128,
	.seed = 1234,
};

/* One input record and what the workers found out about it. */
struct rec {
	size_t line, len;		/* the input line in b->in */
	unsigned long lineno;
	int file;
	int drop;			/* R_*, 0 while kept */
	unsigned fixes;			/* TF_* bits of the fixes that changed it */
	struct langid lang;
	size_t chars, tokens;		/* tokens: 0 when not counted */
	struct dedup_sig sig;
	size_t out, outlen;		/* the output line in b->out */
	size_t who, wholen;		/* report fields naming it, in b->info */
	size_t ref, reflen;		/* its name as a "kept" value, in b->info */
	size_t found, nfound;		/* decontam n-grams, in b->found */
};

struct batch {
	struct buf in, out, info;
	struct rec *r;
	size_t n, cap;
	uint32_t *found;
	size_t nfound, foundcap;
};

struct worker {
	struct jsonl_rec jr;
	struct textfix tf;
	struct buf fixed, tmp;
	struct words words;
	struct decontam_work dw;
	struct bpe_state *bpe;
};

#define BATCH_RECS 512
#define BATCH_BYTES (4u << 20)

static const char **files;	/* input names, and the same as JSON strings */
static char **file_json;
static size_t nfiles;
static struct minhash mh;
static struct bpe *vocab;	/* GPT-2 BPE, for --min-tokens */
static struct dedup *index_;
static struct decontam *dc;
static struct spill refs, spool;
static uint64_t *ref_at;	/* kept document -> offset of its name in refs */
static size_t nref, refcap;
static uint64_t *kept_line;	/* kept document -> file << 40 | line (decontam) */
static size_t nkept_line, kept_line_cap;
static FILE *report, *sign;
static struct dedup *droplist;	/* names of documents to drop (--drop) */
static struct buf out, rep, tmp;
static struct tally count[R_N], fixcount[TF_NFIXES];
static unsigned long long nin, nout, nfixed, ncut, npieces, nmatches;
static uint64_t nbytes;
static int status = XOK;
static struct progress prog;

/* The workers (lib/par), and every batch there is, in flight or free. */
static struct par *par;
static struct batch **batches, **spare;
static size_t nbatches, nspare;
static const char *want[5];
static size_t nwant;

/* Write b to f once it holds 1 MB, or with force anything it holds. */
static void
flush(struct buf *b, FILE *f, const char *name, int force)
{
	if (b->len >= (1u << 20) || (force && b->len > 0)) {
		if (fwrite(b->p, 1, b->len, f) != b->len) {
			if (f == stdout)
				exit(owt_finish(XSYS));
			owt_die_errno(XSYS, "cannot write '%s'", name);
		}
		b->len = 0;
	}
}

static void
flush_out(int force)
{
	flush(&out, stdout, "standard output", force);
}

static void
flush_report(int force)
{
	if (report != NULL)
		flush(&rep, report, opt.report, force);
}

static void
add_info(struct batch *b, size_t *off, size_t *len, const char *s, size_t n)
{
	*off = b->info.len;
	buf_add(&b->info, s, n);
	*len = n;
}

/* A bad record: its message becomes its report "who" entry. */
static void
bad(struct batch *b, struct rec *r, int why, const char *fmt, const char *what)
{
	char msg[1024];
	int k;

	k = snprintf(msg, sizeof msg, fmt, files[r->file], r->lineno, what);
	if (k >= (int)sizeof msg)
		k = sizeof msg - 1;
	r->drop = why;
	add_info(b, &r->who, &r->wholen, msg, (size_t)k);
}

/* The fields that name a document, in order of preference. */
static const char *const name_keys[3] = { "id", "adlr_id", "url" };

/*
 * Append to dst the report fields that name a record ("file", "line",
 * and its "id", "adlr_id" and "url" as they are), *wholen bytes, then
 * maybe more: *ref, *reflen is where in dst its name as a "kept" value is
 * (the first of those three, else "FILE:LINE").
 */
static void
name_record(const struct jsonl_rec *jr, int file, unsigned long lineno,
    struct buf *dst, size_t *wholen, size_t *ref, size_t *reflen)
{
	const struct jsonl_field *f;
	char at[4096];
	size_t i, start = dst->len;
	int k;

	buf_printf(dst, "\"file\":%s,\"line\":%lu", file_json[file], lineno);
	*reflen = 0;
	for (i = 0; i < 3; i++) {
		if ((f = jsonl_get(jr, name_keys[i])) == NULL)
			continue;
		buf_printf(dst, ",\"%s\":", name_keys[i]);
		if (*reflen == 0) {
			*ref = dst->len;
			*reflen = f->vend - f->vstart;
		}
		buf_add(dst, jr->line + f->vstart, f->vend - f->vstart);
	}
	*wholen = dst->len - start;
	if (*reflen == 0) {
		k = snprintf(at, sizeof at, "%s:%lu", files[file], lineno);
		*ref = dst->len;
		json_string(dst, at, k < (int)sizeof at ? (size_t)k : sizeof at - 1);
		*reflen = dst->len - *ref;
	}
}

static size_t
utf8_chars(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

/* The hash of a record's name (its first id, adlr_id, url); 0: it has none. */
static int
name_hash(const struct jsonl_rec *jr, uint64_t h[2])
{
	const struct jsonl_field *f;
	size_t i;

	for (i = 0; i < 3; i++) {
		if ((f = jsonl_get(jr, name_keys[i])) == NULL)
			continue;
		h[0] = dedup_hash(jr->line + f->vstart, f->vend - f->vstart, 1);
		h[1] = dedup_hash(jr->line + f->vstart, f->vend - f->vstart, 2);
		return 1;
	}
	return 0;
}

/*
 * A signature record (--signed): the fields that name the document in the
 * report ("file", "line", "id", "adlr_id", "url") and its signature
 * (dedup_sig_write). Returns 0, or -1 if it is bad.
 */
static int
read_signature(struct worker *w, struct batch *b, struct rec *r)
{
	static const char *const keys[] = { "file", "line", "id", "adlr_id",
		"url" };
	const struct jsonl_field *f;
	const char *why, *file;
	size_t i, n, start = b->info.len;

	for (i = 0; i < 5; i++) {
		if ((f = jsonl_get(&w->jr, keys[i])) == NULL)
			continue;
		buf_printf(&b->info, "%s\"%s\":", b->info.len > start ? "," : "",
		    keys[i]);
		if (i >= 2 && r->reflen == 0) {
			r->ref = b->info.len;
			r->reflen = f->vend - f->vstart;
		}
		buf_add(&b->info, w->jr.line + f->vstart, f->vend - f->vstart);
	}
	r->who = start;
	r->wholen = b->info.len - start;
	if (r->reflen == 0) {
		if ((file = jsonl_str(&w->jr, "file", &n, &why)) == NULL ||
		    (f = jsonl_get(&w->jr, "line")) == NULL)
			return -1;
		w->tmp.len = 0;
		buf_add(&w->tmp, file, n);
		buf_addc(&w->tmp, ':');
		buf_add(&w->tmp, w->jr.line + f->vstart, f->vend - f->vstart);
		r->ref = b->info.len;
		json_string(&b->info, w->tmp.p, w->tmp.len);
		r->reflen = b->info.len - r->ref;
	}
	return dedup_sig_read(&w->jr, &r->sig);
}

/* The stages that look at one document alone; they run in the workers. */
static void
work(struct worker *w, struct batch *b, struct rec *r)
{
	const char *line = b->in.p + r->line, *text, *why, *url;
	char err[512];
	struct jsonl_edit ed;
	uint64_t nh[2];
	size_t n, un, hn;
	int e;

	if (r->drop)
		return;
	if ((e = jsonl_parse(&w->jr, line, r->len, err, sizeof err)) != 0) {
		bad(b, r, e, "%s:%lu: %s", err);
		return;
	}
	if (droplist != NULL && name_hash(&w->jr, nh) &&
	    dedup_find_text(droplist, nh) >= 0)
		r->drop = R_LISTED;
	if (opt.signed_in) {
		if (read_signature(w, b, r) < 0) {
			b->info.len = r->who;
			r->ref = r->reflen = 0;
			bad(b, r, R_BADSIG, "%s:%lu: %s", "bad signature record");
			return;
		}
		r->out = b->out.len;
		buf_add(&b->out, line, r->len);
		buf_addc(&b->out, '\n');
		r->outlen = b->out.len - r->out;
		return;
	}
	if ((text = jsonl_str(&w->jr, opt.text_key, &n, &why)) == NULL) {
		snprintf(err, sizeof err, "%s '%s' field",
		    strcmp(why, "missing") == 0 ? "missing" : "non-string",
		    opt.text_key);
		bad(b, r, R_MISSING, "%s:%lu: %s", err);
		return;
	}
	if (report != NULL || sign != NULL) {
		r->who = b->info.len;
		name_record(&w->jr, r->file, r->lineno, &b->info, &r->wholen,
		    &r->ref, &r->reflen);
	}
	if (r->drop)
		return;
	if (opt.stage[S_FIX] &&
	    (r->fixes = textfix(&w->tf, text, n, opt.fixes, &w->fixed)) != 0) {
		text = w->fixed.p;
		n = w->fixed.len;
	}
	if (opt.stage[S_LANG]) {
		const char *hint = jsonl_str(&w->jr, "lang_hint", &hn, &why);
		char h[16];

		/* owt-fetch's lang_hint: what the page declares (langid.h). */
		snprintf(h, sizeof h, "%.*s", hint && hn < sizeof h ? (int)hn : 0,
		    hint ? hint : "");
		langid_detect_hint(text, n, h[0] ? h : NULL, &r->lang);
		if (strcmp(r->lang.code, opt.lang) != 0) {
			r->drop = strcmp(r->lang.code, "un") == 0 ? R_UNKNOWN : R_LANG;
			return;
		}
	}
	if (opt.stage[S_LENGTH]) {
		r->chars = utf8_chars(text, n);
		if (vocab != NULL && r->chars < 8 * opt.min_tokens) {
			/* a 2 MB cache: owt-dedup(1), "Memory" */
			if (w->bpe == NULL)
				w->bpe = bpe_state_new(vocab, (size_t)2 << 20);
			r->tokens = bpe_count(w->bpe, text, n) + 1;
		}
		if (r->chars < opt.min_chars ||
		    (r->tokens > 0 && r->tokens < opt.min_tokens)) {
			r->drop = R_SHORT;
			return;
		}
	}
	if (opt.stage[S_EXACT] || opt.stage[S_NEAR] || sign != NULL) {
		url = jsonl_str(&w->jr, "url", &un, &why);
		dedup_sign(&mh, text, n, url, un, opt.stage[S_NEAR] ||
		    sign != NULL ? &w->words : NULL, &r->sig);
	}
	if (opt.stage[S_DECONTAM] && decontam_scan(dc, text, n, &w->dw) > 0) {
		r->found = b->nfound;
		r->nfound = w->dw.nfound;
		if (b->nfound + w->dw.nfound > b->foundcap)
			b->found = xgrow(b->found, &b->foundcap,
			    b->nfound + w->dw.nfound, sizeof *b->found);
		memcpy(b->found + b->nfound, w->dw.found,
		    w->dw.nfound * sizeof *b->found);
		b->nfound += w->dw.nfound;
	}
	r->out = b->out.len;
	if (r->fixes) {
		w->tmp.len = 0;
		json_string(&w->tmp, text, n);
		ed.key = opt.text_key;
		ed.json = w->tmp.p;
		ed.len = w->tmp.len;
		jsonl_write(&b->out, &w->jr, &ed, 1);
	} else {
		buf_add(&b->out, line, r->len);
		buf_addc(&b->out, '\n');
	}
	r->outlen = b->out.len - r->out;
}

static void
work_batch(struct worker *w, struct batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		work(w, b, &b->r[i]);
}

static void
work_job(void *job, void *state)
{
	work_batch(state, job);
}

static void *
worker_init(void *arg)
{
	struct worker *w = xcalloc(1, sizeof *w);

	jsonl_rec_init(&w->jr, want, nwant);
	return w;
}

static void
worker_fini(void *state)
{
	struct worker *w = state;

	jsonl_rec_free(&w->jr);
	textfix_free(&w->tf);
	buf_free(&w->fixed);
	buf_free(&w->tmp);
	words_free(&w->words);
	decontam_work_free(&w->dw);
	if (w->bpe != NULL)
		bpe_state_free(w->bpe);
	free(w);
}

static void
pool_start(void)
{
	want[0] = opt.text_key;
	want[1] = "url";
	want[2] = "lang_hint";
	nwant = 3;
	if (opt.signed_in) {
		want[0] = "file";
		want[2] = "text_hash";
		want[3] = "minhash";
		nwant = 4;
	}
	par = par_start(opt.workers, 2 * (size_t)opt.workers + 2, 0,work_job,
	    worker_init, worker_fini, NULL);
}

static void
pool_stop(void)
{
	struct batch *b;
	size_t i;

	par_stop(par);
	for (i = 0; i < nbatches; i++) {
		b = batches[i];
		buf_free(&b->in);
		buf_free(&b->out);
		buf_free(&b->info);
		free(b->r);
		free(b->found);
		free(b);
	}
	free(batches);
	free(spare);
}

/* Start a report line: {"file":...,"line":...,"id":...,"stage":...,"reason":... */
static void
report_start(const struct batch *b, const struct rec *r, const char *stage,
    const char *why)
{
	buf_addc(&rep, '{');
	if (r->wholen > 0)
		buf_add(&rep, b->info.p + r->who, r->wholen);
	buf_printf(&rep, "%s\"stage\":\"%s\",\"reason\":", r->wholen ? "," : "",
	    stage);
	json_string(&rep, why, strlen(why));
}

/* The "kept" name of kept document k. */
static void
report_kept(uint32_t k, double sim, int with_sim)
{
	uint64_t end = k + 1 < nref ? ref_at[k + 1] : spill_size(&refs);

	buf_adds(&rep, ",\"kept\":");
	if (spill_get(&refs, ref_at[k], (size_t)(end - ref_at[k]), &rep) < 0)
		owt_die(XSYS, "%s", refs.err);
	if (with_sim)
		buf_printf(&rep, ",\"similarity\":%.3f", sim);
}

static void
report_drop(const struct batch *b, const struct rec *r, long kept, double sim,
    int with_sim)
{
	const char *stage = reason[r->drop].stage < 0 ? "input" :
	    stage_name[reason[r->drop].stage];

	if (r->drop <= R_BADSIG) {
		buf_printf(&rep, "{\"file\":%s,\"line\":%lu,\"stage\":\"input\","
		    "\"reason\":\"%s\",\"error\":", file_json[r->file], r->lineno,
		    r->drop < BAD_NREASONS ? input_bad_name[r->drop] : reason[r->drop].name);
		json_string(&rep, b->info.p + r->who, r->wholen);
		buf_adds(&rep, "}\n");
		return;
	}
	report_start(b, r, stage, reason[r->drop].name);
	if (r->drop == R_LANG || r->drop == R_UNKNOWN)
		buf_printf(&rep, ",\"lang\":\"%s\",\"percent\":%d", r->lang.code,
		    r->lang.percent);
	else if (r->drop == R_SHORT && r->tokens > 0)
		buf_printf(&rep, ",\"chars\":%zu,\"tokens\":%zu", r->chars,
		    r->tokens);
	else if (r->drop == R_SHORT)
		buf_printf(&rep, ",\"chars\":%zu", r->chars);
	else if (kept >= 0)
		report_kept((uint32_t)kept, sim, with_sim);
	buf_adds(&rep, "}\n");
}

static void
report_fixed(const struct batch *b, const struct rec *r)
{
	int f, any = 0;

	report_start(b, r, "fix", "fixed");
	buf_adds(&rep, ",\"fixes\":[");
	for (f = 0; f < TF_NFIXES; f++) {
		if (!(r->fixes >> f & 1))
			continue;
		buf_printf(&rep, "%s\"%s\"", any ? "," : "", textfix_name[f]);
		any = 1;
	}
	buf_adds(&rep, "]}\n");
}

static void
remember_kept(const struct batch *b, const struct rec *r)
{
	int64_t off;

	if (report != NULL) {
		if ((off = spill_put(&refs, b->info.p + r->ref, r->reflen)) < 0)
			owt_die(XSYS, "%s", refs.err);
		if (nref == refcap)
			ref_at = xgrow(ref_at, &refcap, nref + 1, sizeof *ref_at);
		ref_at[nref++] = (uint64_t)off;
	}
	if (opt.stage[S_DECONTAM]) {
		decontam_count(dc, b->found + r->found, r->nfound);
		if (nkept_line == kept_line_cap)
			kept_line = xgrow(kept_line, &kept_line_cap,
			    nkept_line + 1, sizeof *kept_line);
		kept_line[nkept_line++] = (uint64_t)r->file << 40 | r->lineno;
	}
}

/* The signature of a kept document, for --signed (see read_signature). */
static void
write_signature(const struct batch *b, const struct rec *r)
{
	tmp.len = 0;
	buf_addc(&tmp, '{');
	buf_add(&tmp, b->info.p + r->who, r->wholen);
	dedup_sig_write(&tmp, &r->sig);
	buf_adds(&tmp, "}\n");
	if (fwrite(tmp.p, 1, tmp.len, sign) != tmp.len)
		owt_die_errno(XSYS, "cannot write '%s'", opt.sign);
}

/* The stages that compare documents: in input order, in the main thread. */
static void
sequence(struct batch *b)
{
	const uint8_t *ks;
	struct rec *r;
	long kept;
	double sim;
	size_t i;
	int f, with_sim;

	for (i = 0; i < b->n; i++) {
		r = &b->r[i];
		nin++;
		nbytes += r->len + 1;
		kept = -1;
		sim = 0;
		with_sim = 0;
		if (r->drop > R_KEPT && r->drop <= R_BADSIG) {
			owt_warn("%.*s", (int)r->wholen, b->info.p + r->who);
			status = XDATA;
			if (!opt.keep_going) {
				flush_out(1);
				flush_report(1);
				pool_stop();
				exit(owt_finish(XDATA));
			}
		}
		if (r->fixes) {
			nfixed++;
			for (f = 0; f < TF_NFIXES; f++)
				fixcount[f].n += r->fixes >> f & 1;
			if (report != NULL)
				report_fixed(b, r);
		}
		if (!r->drop && opt.stage[S_EXACT]) {
			if ((kept = dedup_find_text(index_, r->sig.text)) >= 0) {
				r->drop = R_EXACT;
				sim = 1;
				with_sim = 1;
			} else if (r->sig.has_url &&
			    (kept = dedup_find_url(index_, r->sig.url)) >= 0) {
				r->drop = R_URL;
				ks = dedup_sketch(index_, (uint32_t)kept);
				if ((with_sim = ks != NULL && r->sig.has_sketch))
					sim = minhash_similarity(ks, r->sig.sketch);
			}
		}
		if (!r->drop && opt.stage[S_NEAR] && r->sig.has_sketch &&
		    (kept = dedup_find_near(index_, r->sig.sketch, opt.near,
		    &sim)) >= 0) {
			r->drop = R_NEAR;
			with_sim = 1;
		}
		if (r->drop) {
			count[r->drop].n++;
			if (report != NULL)
				report_drop(b, r, kept, sim, with_sim);
			continue;
		}
		if (index_ != NULL)
			dedup_add(index_, &r->sig);
		remember_kept(b, r);
		if (sign != NULL)
			write_signature(b, r);
		nout++;
		if (opt.stage[S_DECONTAM]) {
			if (spill_put(&spool, b->out.p + r->out, r->outlen) < 0)
				owt_die(XSYS, "%s", spool.err);
		} else {
			buf_add(&out, b->out.p + r->out, r->outlen);
			flush_out(0);
		}
	}
	flush_report(0);
	progress_tick(&prog, nin, nbytes);
}

static struct batch *
new_batch(void)
{
	struct batch *b;

	if (nspare > 0) {
		b = spare[--nspare];
	} else {
		b = xcalloc(1, sizeof *b);
		batches = xrealloc(batches, (nbatches + 1) * sizeof *batches);
		batches[nbatches++] = b;
		spare = xrealloc(spare, nbatches * sizeof *spare);
	}
	b->n = b->nfound = 0;
	b->in.len = b->out.len = b->info.len = 0;
	return b;
}

/* Sequence a batch the workers are done with, and keep it for reuse. */
static void
finish(struct batch *b)
{
	sequence(b);
	spare[nspare++] = b;
}

static void
submit(struct batch *b)
{
	if ((b = par_put(par, b)) != NULL)
		finish(b);
}

static struct batch *cur;	/* the batch being filled */

static struct rec *
add_rec(int file, unsigned long lineno)
{
	struct rec *r;

	if (cur != NULL && (cur->n >= BATCH_RECS || cur->in.len >= BATCH_BYTES)) {
		submit(cur);
		cur = NULL;
	}
	if (cur == NULL)
		cur = new_batch();
	if (cur->n == cur->cap)
		cur->r = xgrow(cur->r, &cur->cap, cur->n + 1, sizeof *cur->r);
	r = &cur->r[cur->n++];
	memset(r, 0, sizeof *r);
	r->file = file;
	r->lineno = lineno;
	r->line = cur->in.len;
	return r;
}

/* A record that could not be read: its message stands for it. */
static void
add_unreadable(int file, unsigned long lineno, int why, const char *msg)
{
	struct rec *r = add_rec(file, lineno);

	r->drop = why;
	add_info(cur, &r->who, &r->wholen, msg, strlen(msg));
}

static void
read_file(int file)
{
	struct input in;
	struct rec *r;
	char *line;
	size_t len;
	int k;

	if (input_open(&in, strcmp(files[file], "<stdin>") == 0 ? "-" :
	    files[file]) < 0) {
		add_unreadable(file, 0, in.reason, in.err);
		return;
	}
	while ((k = input_line(&in, &line, &len)) != 0) {
		if (k < 0 && in.errcode == XSYS)
			owt_die(XSYS, "%s", in.err);
		if (k < 0) {
			add_unreadable(file, in.lineno, in.reason, in.err);
			if (in.reason == BAD_COMPRESSED)
				break;
			continue;
		}
		r = add_rec(file, in.lineno);
		buf_add(&cur->in, line, len);
		r->len = len;
	}
	input_close(&in);
}

static void
read_all(void)
{
	struct batch *b;
	size_t i;

	for (i = 0; i < nfiles; i++)
		read_file((int)i);
	if (cur != NULL)
		submit(cur);
	cur = NULL;
	while ((b = par_get(par)) != NULL)
		finish(b);
}

/* Read the task texts of --decontam files. */
static void
load_tasks(void)
{
	const char *want[1] = { opt.text_key };
	struct decontam_work w = { 0 };
	struct jsonl_rec *r;
	struct jsonl j;
	const char *text, *why;
	size_t i, n;
	int k;

	dc = decontam_new();
	for (i = 0; i < opt.ntasks; i++) {
		if (jsonl_open(&j, opt.tasks[i], want, 1) < 0)
			owt_die(XDATA, "%s", j.err);
		while ((k = jsonl_next(&j, &r)) != 0) {
			if (k < 0)
				owt_die(j.errcode, "%s", j.err);
			if ((text = jsonl_str(r, opt.text_key, &n, &why)) == NULL)
				owt_die(XDATA, "%s:%lu: %s '%s' field", j.in.name,
				    j.in.lineno, strcmp(why, "missing") == 0 ?
				    "missing" : "non-string", opt.text_key);
			decontam_add_task(dc, text, n, &w);
		}
		jsonl_close(&j);
	}
	decontam_work_free(&w);
}

/* The split_id prefix: the task file names without directory and extensions. */
static void
task_prefix(struct buf *b)
{
	const char *name, *dot;
	size_t i;

	for (i = 0; i < opt.ntasks; i++) {
		name = strrchr(opt.tasks[i], '/');
		name = name ? name + 1 : opt.tasks[i];
		dot = strchr(name, '.');
		if (i > 0)
			buf_addc(b, '-');
		buf_add(b, name, dot && dot > name ? (size_t)(dot - name) : strlen(name));
	}
}

/*
 * Decontam's second pass, over the kept documents spooled by the first:
 * cut the rare task n-grams out, write the pieces with a split_id.
 */
static void
decontam_pass2(void)
{
	const char *want[2] = { opt.text_key, "split_id" };
	struct decontam_work w = { 0 };
	struct jsonl_rec jr;
	struct jsonl_edit ed[2];
	struct buf prefix = { 0 }, piece = { 0 }, sid = { 0 }, who = { 0 };
	const char *text, *why, *old;
	char err[512], *line = NULL;
	size_t cap = 0, n, on, i, k, ref, reflen, wholen;
	ssize_t len;
	FILE *f;
	int drop;

	decontam_freeze(dc);
	task_prefix(&prefix);
	if (spill_flush(&spool) < 0)
		owt_die(XSYS, "%s", spool.err);
	if ((f = fdopen(dup(spool.fd), "r")) == NULL || fseek(f, 0, SEEK_SET) < 0)
		owt_die_errno(XSYS, "decontam spool");
	jsonl_rec_init(&jr, want, 2);
	nout = 0;
	for (k = 0; (len = getline(&line, &cap, f)) > 0; k++) {
		if (jsonl_parse(&jr, line, (size_t)len - 1, err, sizeof err) != 0 ||
		    (text = jsonl_str(&jr, opt.text_key, &n, &why)) == NULL)
			owt_die(XSYS, "decontam spool unreadable: %s", err);
		decontam_cut(dc, text, n, &w);
		drop = w.npiece == 0 ? R_EMPTY :
		    w.npiece > DECONTAM_MAX_PIECES ? R_PIECES : R_KEPT;
		nmatches += w.matches;
		if (report != NULL && (drop || w.matches)) {
			who.len = 0;
			name_record(&jr, (int)(kept_line[k] >> 40),
			    (unsigned long)(kept_line[k] & ((1ULL << 40) - 1)), &who,
			    &wholen, &ref, &reflen);
			buf_addc(&rep, '{');
			buf_add(&rep, who.p, wholen);
			buf_printf(&rep, ",\"stage\":\"decontam\",\"reason\":\"%s\","
			    "\"ngrams\":%lu,\"pieces\":%zu}\n",
			    drop ? reason[drop].name : "cut", w.matches, w.npiece);
			flush_report(0);
		}
		if (drop) {
			count[drop].n++;
			continue;
		}
		ncut += w.matches > 0;
		old = jsonl_str(&jr, "split_id", &on, &why);
		for (i = 0; i < w.npiece; i++) {
			piece.len = sid.len = 0;
			json_string(&piece, text + w.piece[i].start,
			    w.piece[i].end - w.piece[i].start);
			tmp.len = 0;
			if (old != NULL) {
				buf_add(&tmp, old, on);
				buf_addc(&tmp, '-');
			}
			buf_add(&tmp, prefix.p, prefix.len);
			buf_printf(&tmp, "-%010zu-%04zu", k + 1, i);
			json_string(&sid, tmp.p, tmp.len);
			ed[0].key = opt.text_key;
			ed[0].json = piece.p;
			ed[0].len = piece.len;
			ed[1].key = "split_id";
			ed[1].json = sid.p;
			ed[1].len = sid.len;
			jsonl_write(&out, &jr, ed, 2);
			npieces++;
			nout++;
			flush_out(0);
		}
	}
	if (ferror(f))
		owt_die_errno(XSYS, "decontam spool");
	fclose(f);
	free(line);
	jsonl_rec_free(&jr);
	decontam_work_free(&w);
	buf_free(&prefix);
	buf_free(&piece);
	buf_free(&sid);
	buf_free(&who);
}

static void
summary(double secs)
{
	char what[64];
	size_t i;

	for (i = 1; i < R_N; i++)
		count[i].name = i < BAD_NREASONS ? input_bad_name[i] :
		    reason[i].name;
	for (i = 0; i < TF_NFIXES; i++)
		fixcount[i].name = textfix_name[i];
	fprintf(stderr, "%s: %llu documents in, %llu out; %.1f MB in %.2f s, "
	    "%.1f MB/s with %d worker%s\n", owt_prog, nin, nout,
	    (double)nbytes / 1e6, secs, secs > 0 ? (double)nbytes / 1e6 / secs : 0,
	    opt.workers, opt.workers == 1 ? "" : "s");
	if (opt.stage[S_FIX]) {
		snprintf(what, sizeof what, "fixed %llu document%s", nfixed,
		    nfixed == 1 ? "" : "s");
		tally_print(what, fixcount, TF_NFIXES);
	}
	tally_print("dropped", count + 1, R_N - 1);
	if (opt.stage[S_DECONTAM])
		fprintf(stderr, "%s: decontam: %zu task n-grams; %llu n-grams cut "
		    "out of %llu documents, %llu pieces\n", owt_prog,
		    decontam_size(dc), nmatches, ncut, npieces);
	if (index_ != NULL && dedup_count(index_) > 0)
		fprintf(stderr, "%s: index: %zu documents, %.1f MB, %zu bytes "
		    "per document\n", owt_prog, dedup_count(index_),
		    (double)dedup_bytes(index_) / 1e6,
		    dedup_bytes(index_) / dedup_count(index_));
}

static void
parse_stages(const char *arg)
{
	const char *p = arg, *e;
	size_t n;
	int i;

	memset(opt.stage, 0, sizeof opt.stage);
	if (strcmp(arg, "none") == 0)
		return;
	while (*p) {
		e = strchr(p, ',');
		n = e ? (size_t)(e - p) : strlen(p);
		for (i = 0; i < S_N; i++)
			if (strlen(stage_name[i]) == n &&
			    strncmp(stage_name[i], p, n) == 0)
				break;
		if (i == S_N)
			owt_die(XUSAGE, "--stages: unknown stage '%.*s' in '%s'",
			    (int)n, p, arg);
		opt.stage[i] = 1;
		p += n + (e != NULL);
	}
	for (i = 0; i < S_N && !opt.stage[i]; i++)
		;
	if (i == S_N)
		owt_die(XUSAGE, "--stages: '%s' names no stage", arg);
}

/*
 * The names of the documents that a report (--report) drops: every line
 * but the fixes and the decontam cuts, by its first id, adlr_id or url.
 */
static void
load_drop(void)
{
	static const char *const want[] = { "stage", "reason" };
	struct jsonl_rec *r;
	struct jsonl j;
	const char *stage, *why, *reason;
	struct dedup_sig name = { { 0, 0 }, 0, 0, 0, { 0 } };
	size_t n, rn;
	int k;

	droplist = dedup_new(DEDUP_EXACT);
	if (jsonl_open(&j, opt.drop, want, 2) < 0)
		owt_die(XDATA, "%s", j.err);
	while ((k = jsonl_next(&j, &r)) != 0) {
		if (k < 0)
			owt_die(j.errcode, "%s", j.err);
		if ((stage = jsonl_str(r, "stage", &n, &why)) == NULL ||
		    (reason = jsonl_str(r, "reason", &rn, &why)) == NULL)
			owt_die(XDATA, "%s:%lu: not a report line (no stage or "
			    "reason)", j.in.name, j.in.lineno);
		if (strcmp(stage, "fix") == 0 || strcmp(reason, "cut") == 0)
			continue;
		if (name_hash(r, name.text))
			dedup_add(droplist, &name);
	}
	jsonl_close(&j);
}

int
main(int argc, char **argv)
{
	enum { O_DECON = 256, O_DROP, O_KEYS, O_QUOTES, O_LANG, O_MERGES,
		O_MINCH, O_MINTOK, O_NEAR, O_PROG, O_REPORT, O_SEED, O_SIGN,
		O_SIGNED, O_STAGES, O_TMP, O_VER, O_VOCAB, O_WORKERS };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "keep-going", no_argument, NULL, 'k' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "decontam", required_argument, NULL, O_DECON },
		{ "drop", required_argument, NULL, O_DROP },
		{ "json-keys", required_argument, NULL, O_KEYS },
		{ "keep-quotes", no_argument, NULL, O_QUOTES },
		{ "lang", required_argument, NULL, O_LANG },
		{ "merge-file", required_argument, NULL, O_MERGES },
		{ "min-chars", required_argument, NULL, O_MINCH },
		{ "min-tokens", required_argument, NULL, O_MINTOK },
		{ "near-threshold", required_argument, NULL, O_NEAR },
		{ "progress", no_argument, NULL, O_PROG },
		{ "report", required_argument, NULL, O_REPORT },
		{ "seed", required_argument, NULL, O_SEED },
		{ "sign", required_argument, NULL, O_SIGN },
		{ "signed", no_argument, NULL, O_SIGNED },
		{ "stages", required_argument, NULL, O_STAGES },
		{ "tmpdir", required_argument, NULL, O_TMP },
		{ "version", no_argument, NULL, O_VER },
		{ "vocab-file", required_argument, NULL, O_VOCAB },
		{ "workers", required_argument, NULL, O_WORKERS },
		{ NULL, 0, NULL, 0 }
	};
	const char *stages = NULL;
	char err[1024];
	size_t i;
	int c, code;

	owt_setprog(argv[0]);
	opt.workers = owt_ncpu();
	while ((c = getopt_long(argc, argv, "hkq", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			return owt_help(usage_line, options_help);
		case 'k': opt.keep_going = 1; break;
		case 'q': opt.quiet = 1; break;
		case O_DECON:
			opt.tasks = xrealloc(opt.tasks, (opt.ntasks + 1) *
			    sizeof *opt.tasks);
			opt.tasks[opt.ntasks++] = optarg;
			break;
		case O_DROP: opt.drop = optarg; break;
		case O_KEYS:
			if (*optarg == '\0' || strchr(optarg, ','))
				owt_die(XUSAGE, "--json-keys: '%s' is not one "
				    "field name", optarg);
			opt.text_key = optarg;
			break;
		case O_QUOTES: opt.fixes &= ~(1u << TF_QUOTES); break;
		case O_LANG:
			if (!langid_known(optarg))
				owt_die(XUSAGE, "--lang: '%s' is not a language "
				    "CLD2 detects", optarg);
			opt.lang = optarg;
			break;
		case O_MERGES: opt.merges = optarg; break;
		case O_MINTOK:
			opt.min_tokens = (size_t)opt_int("--min-tokens", optarg, 0,
			    1LL << 36);
			break;
		case O_VOCAB: opt.vocab = optarg; break;
		case O_MINCH:
			opt.min_chars = (size_t)opt_int("--min-chars", optarg, 0,
			    1LL << 40);
			break;
		case O_NEAR:
			opt.near = opt_double("--near-threshold", optarg, 0.05, 1);
			break;
		case O_PROG: opt.progress = 1; break;
		case O_REPORT: opt.report = optarg; break;
		case O_SEED:
			opt.seed = (uint64_t)opt_int("--seed", optarg, 0,
			    ((long long)1 << 62));
			break;
		case O_SIGN: opt.sign = optarg; break;
		case O_SIGNED: opt.signed_in = 1; break;
		case O_STAGES: stages = optarg; break;
		case O_TMP: opt.tmpdir = optarg; break;
		case O_VER:
			return owt_version();
		case O_WORKERS:
			opt.workers = (int)opt_int("--workers", optarg, 1, 1024);
			break;
		default:
			owt_usage(usage_line);
		}
	}
	if (stages != NULL) {
		parse_stages(stages);
	} else {
		for (i = 0; i < S_DECONTAM; i++)
			opt.stage[i] = !opt.signed_in || i == S_EXACT || i == S_NEAR;
		opt.stage[S_DECONTAM] = opt.ntasks > 0;
	}
	if (opt.signed_in && (opt.stage[S_FIX] || opt.stage[S_LANG] ||
	    opt.stage[S_LENGTH] || opt.stage[S_DECONTAM]))
		owt_die(XUSAGE, "--signed: only the exact and near stages run on "
		    "signatures");
	if (opt.signed_in && opt.sign != NULL)
		owt_die(XUSAGE, "--sign and --signed: the output of --signed is "
		    "signatures already");
	if (opt.stage[S_DECONTAM] && opt.ntasks == 0)
		owt_die(XUSAGE, "the decontam stage needs --decontam files");
	if (!opt.stage[S_DECONTAM] && opt.ntasks > 0)
		owt_die(XUSAGE, "--decontam given, but --stages leaves out decontam");
	if ((opt.vocab == NULL) != (opt.merges == NULL))
		owt_die(XUSAGE, "--vocab-file and --merge-file go together");
	if (opt.tmpdir == NULL && (opt.tmpdir = getenv("TMPDIR")) == NULL)
		opt.tmpdir = "/tmp";

	nfiles = optind < argc ? (size_t)(argc - optind) : 1;
	files = xcalloc(nfiles, sizeof *files);
	file_json = xcalloc(nfiles, sizeof *file_json);
	for (i = 0; i < nfiles; i++) {
		files[i] = optind < argc ? argv[optind + i] : "<stdin>";
		if (strcmp(files[i], "-") == 0)
			files[i] = "<stdin>";
		tmp.len = 0;
		json_string(&tmp, files[i], strlen(files[i]));
		file_json[i] = xstrndup(tmp.p, tmp.len);
	}

	if (opt.stage[S_FIX])
		textfix_init();
	if (opt.stage[S_LENGTH] && opt.min_tokens > 0 &&
	    (vocab = bpe_load(opt.vocab, opt.merges, &code, err, sizeof err)) == NULL)
		owt_die(code, "%s", err);
	words_init();
	minhash_init(&mh, opt.seed);
	if (opt.stage[S_EXACT] || opt.stage[S_NEAR])
		index_ = dedup_new((opt.stage[S_EXACT] ? DEDUP_EXACT : 0) |
		    (opt.stage[S_NEAR] ? DEDUP_NEAR : 0));
	if (opt.stage[S_DECONTAM]) {
		load_tasks();
		if (spill_open(&spool, opt.tmpdir) < 0)
			owt_die(XSYS, "%s", spool.err);
	}
	if (opt.drop != NULL)
		load_drop();
	if (opt.sign != NULL && (sign = fopen(opt.sign, "w")) == NULL)
		owt_die_errno(XSYS, "cannot create '%s'", opt.sign);
	if (opt.report != NULL) {
		if ((report = fopen(opt.report, "w")) == NULL)
			owt_die_errno(XSYS, "cannot create '%s'", opt.report);
		if (spill_open(&refs, opt.tmpdir) < 0)
			owt_die(XSYS, "%s", refs.err);
	}
	progress_init(&prog, opt.quiet ? -1 : opt.progress, "documents");
	pool_start();
	read_all();
	pool_stop();
	if (opt.stage[S_DECONTAM]) {
		decontam_pass2();
		spill_close(&spool);
	}
	flush_out(1);
	flush_report(1);
	progress_done(&prog);
	if (!opt.quiet)
		summary(progress_elapsed(&prog));
	if (report != NULL) {
		spill_close(&refs);
		if (fclose(report) != 0)
			owt_die_errno(XSYS, "cannot write '%s'", opt.report);
	}
	if (sign != NULL && fclose(sign) != 0)
		owt_die_errno(XSYS, "cannot write '%s'", opt.sign);
	for (i = 0; i < nfiles; i++)
		free(file_json[i]);
	free(file_json);
	free(files);
	free(opt.tasks);
	free(ref_at);
	free(kept_line);
	dedup_free(index_);
	dedup_free(droplist);
	if (vocab != NULL)
		bpe_free(vocab);
	decontam_free(dc);
	buf_free(&out);
	buf_free(&rep);
	buf_free(&tmp);
	return owt_finish(status);
}
