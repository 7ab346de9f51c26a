/* bpe-encode - turn JSONL text into GPT-2 or tiktoken ids (owt-tok(5)), and back */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/batch.h"
#include "core/input.h"
#include "core/json.h"
#include "tok/mmidx.h"
#include "core/opt.h"
#include "core/outfile.h"
#include "core/progress.h"
#include "tok/tok.h"
#include "tok/tokenizer.h"
#include "core/utf8.h"
#include "core/util.h"

/*
 * Memory that does not grow with the number of workers (man bpe-encode,
 * MEMORY): input read per batch of work (a batch holds at least one line;
 * with many workers batches are smaller), the input in all batches in
 * flight, and the piece caches of all workers together (16 MB each for one
 * or two, smaller for more: each worker sees a share of the input, and a
 * cache serves the pieces that repeat most, which a small one holds too).
 * Per-record scratch a worker keeps for the next record is at most KEEP;
 * a longer record's is freed after it. Batches are small so that the few
 * in flight are reused while hot: fresh pages cost the kernel more than
 * the handing over of batches costs.
 */
#define BATCH_BYTES ((size_t)256 << 10)
#define HELD_BYTES ((size_t)8 << 20)
#define CACHE_BYTES ((size_t)32 << 20)
#define KEEP ((size_t)64 << 10)
#define MAXKEYS 64

/* Counters for the summary; the first BAD_NREASONS are input_bad_name[]. */
enum {
	C_FIELD = BAD_NREASONS,	/* a key missing, or not a string */
	C_EMPTY,		/* an empty document, without --append-eod */
	C_TRUNC,		/* -d: a corrupt or truncated token stream */
	C_DECODE,		/* -d: tokens that are not UTF-8 text */
	C_NCOUNT
};

static struct {
	int decode, keep_going, quiet, progress, append_eod, workers;
	int log_interval;	/* 0: none */
	const char *input, *prefix;
	struct tokenizer_opts tk;
	const char *keys[MAXKEYS];
	size_t nkeys;
} opt;

/* --json-keys a,b,c: each a field name. */
static int
add_keys(const struct opt *o, const char *arg, char *err, size_t errsize)
{
	const char *p = arg, *comma;

	(void)o;
	do {
		comma = strchr(p, ',');
		if (comma == p || *p == '\0') {
			snprintf(err, errsize, "--json-keys: '%s' has an empty "
			    "field name", arg);
			return -1;
		}
		if (opt.nkeys == MAXKEYS) {
			snprintf(err, errsize, "--json-keys: more than %d fields",
			    MAXKEYS);
			return -1;
		}
		opt.keys[opt.nkeys++] = comma ? xstrndup(p, (size_t)(comma - p)) :
		    p;
		p = comma + 1;
	} while (comma != NULL);
	return 0;
}

/* --partitions: one dataset in input order is what owt writes. */
static int
check_partitions(const struct opt *o, const char *arg, char *err,
    size_t errsize)
{
	(void)o;
	if (strcmp(arg, "1") != 0) {
		snprintf(err, errsize, "--partitions: '%s': owt writes one "
		    "dataset in input order (1)", arg);
		return -1;
	}
	return 0;
}

/* Megatron's sentence splitting: documents would become other sequences. */
static int
refuse(const struct opt *o, const char *arg, char *err, size_t errsize)
{
	(void)arg;
	snprintf(err, errsize, "--%s: not supported: owt writes each document "
	    "as one sequence", o->name);
	return -1;
}

static const struct opt opts[] = {
	{ .name = "decode", .key = 'd', .type = OPT_FLAG, .p = &opt.decode,
	    .help = "turn a token stream back into JSONL" },
	OPT_ROW_HELP,
	OPT_ROW_KEEP_GOING(&opt.keep_going,
	    "skip bad records (still exit 1)"),
	OPT_ROW_QUIET(&opt.quiet,
	    "no summary or progress on stderr"),
	{ .name = "append-eod", .type = OPT_FLAG, .p = &opt.append_eod,
	    .help = "end every document with <|endoftext|>" },
	{ .name = "chunk-size", .arg = "n", .type = OPT_NOTE,
	    .help = "Megatron's: accepted, no effect" },
	{ .name = "dataset-impl", .arg = "mmap", .type = OPT_STR,
	    .check = opt_check_word, .words = "mmap",
	    .why = ", the only format owt writes",
	    .help = "the only format written" },
	{ .name = "input", .arg = "file", .type = OPT_STR, .p = &opt.input,
	    .help = "the input, as an operand; operands are then more keys" },
	{ .name = "json-keys", .arg = "keys", .type = OPT_FUNC,
	    .check = add_keys,
	    .help = "the fields to encode, comma-separated (text)" },
	{ .name = "keep-newlines", .type = OPT_FUNC, .check = refuse,
	    .help = "Megatron's: refused (sentences)" },
	{ .name = "keep-sequential-samples", .type = OPT_NOTE,
	    .help = "Megatron's: accepted, no effect (input order is kept)" },
	{ .name = "log-interval", .arg = "n", .type = OPT_INT,
	    .p = &opt.log_interval, .min = 1, .max = 1 << 30,
	    .help = "say how far every n records, as Megatron does" },
	{ .name = "merge-file", .arg = "file", .type = OPT_STR, .p = &opt.tk.merges,
	    .help = "the merges (vocab.bpe) of another vocabulary" },
	{ .name = "output-prefix", .arg = "prefix", .type = OPT_STR,
	    .p = &opt.prefix,
	    .help = "write prefix_KEY_document.bin/.idx, not a stream" },
	{ .name = "partitions", .arg = "1", .type = OPT_NOTE,
	    .check = check_partitions, .help = "Megatron's: 1 accepted, no effect" },
	{ .name = "progress", .type = OPT_FLAG, .p = &opt.progress,
	    .help = "show progress even when stderr is not a terminal" },
	{ .name = "split-sentences", .type = OPT_FUNC, .check = refuse,
	    .help = "Megatron's: refused (sentences)" },
	{ .name = "tiktoken-pattern", .arg = "name", .type = OPT_STR,
	    .p = &opt.tk.pattern, .check = tiktoken_check_name,
	    .help = "TikTokenizer's encoding (by the rank file's size)" },
	{ .name = "tokenizer-model", .arg = "file", .type = OPT_STR,
	    .p = &opt.tk.model, .help = "TikTokenizer's .tiktoken rank file" },
	{ .name = "tokenizer-type", .arg = "type", .type = OPT_STR,
	    .p = &opt.tk.type, .check = tokenizer_check_type,
	    .help = "GPT2BPETokenizer (the default) or TikTokenizer" },
	OPT_ROW_VERSION,
	{ .name = "vocab-file", .arg = "file", .type = OPT_STR, .p = &opt.tk.vocab,
	    .help = "the tokens (encoder.json) of another vocabulary" },
	{ .name = "workers", .arg = "n", .type = OPT_INT, .p = &opt.workers,
	    .min = 1, .max = 1024, .help = "encoding threads (all cores)" },
};

static const struct opt_prog options = { "bpe-encode", opts,
    sizeof opts / sizeof *opts, "[file ...]", 25, &opt.quiet };

static struct tokenizer *vocab;
/* --output-prefix: a dataset a key. */
static struct mmidx_writer *dset;
static char **dname;		/* their prefixes */

static struct tok_hdr hdr;
static struct tally count[C_NCOUNT];
static struct tok_count written;	/* the documents of the stream written */
static unsigned long long nrec, ndoc, ntok, nin;
static uint64_t nbytes;
static int status = XOK;
static struct progress prog;
static int first;		/* argv[first]: the first operand */

/* A batch's counters (struct batch's count[]): a struct tok_count, then ours. */
enum { B_DOC, B_TOK, B_SUM, B_EMPTY, B_BYTES };

/* A worker's own state. */
struct worker {
	struct tokenizer_state *tk;
	struct json_rec rec;
	struct bpe_ids ids;
	struct tok_count c;	/* the documents of the batch being encoded */
};

static void *
worker_init(void *arg)
{
	struct worker *w = xcalloc(1, sizeof *w);

	(void)arg;
	w->tk = tokenizer_state_new(vocab, CACHE_BYTES / (size_t)opt.workers);
	json_rec_init(&w->rec, opt.keys, opt.nkeys);
	return w;
}

static void
worker_fini(void *state)
{
	struct worker *w = state;

	tokenizer_state_free(w->tk);
	json_rec_free(&w->rec);
	free(w->ids.v);
	free(w);
}

/*
 * --output-prefix: a worker's documents, for finish to add to the
 * datasets: the key's index and the number of ids (uint32 each), then the
 * ids, in host order.
 */
static void
put_doc(struct buf *out, struct tok_count *c, size_t key, const uint32_t *ids,
    size_t n)
{
	uint32_t h[2] = { (uint32_t)key, (uint32_t)n };

	buf_add(out, (const char *)h, sizeof h);
	buf_add(out, (const char *)ids, n * sizeof *ids);
	c->docs++;
	c->tokens += n;
}

/* One record: every key's text becomes a document, or the record is bad. */
static void
encode_line(struct batch *b, struct worker *w, size_t i)
{
	const char *line = b->in.p + b->off[i], *text[MAXKEYS], *why;
	size_t len = b->off[i + 1] - b->off[i] - 1, tlen[MAXKEYS], k;
	char err[512];
	int r;

	if ((r = json_rec_parse(&w->rec, line, len, err, sizeof err)) != 0) {
		batch_note(b, r, "%s:%lu: %s", b->name, b->lineno[i], err);
		return;
	}
	for (k = 0; k < opt.nkeys; k++)
		if ((text[k] = json_rec_str(&w->rec, opt.keys[k], &tlen[k], &why)) == NULL) {
			batch_note(b, C_FIELD, "%s:%lu: %s '%s' field", b->name,
			    b->lineno[i], strcmp(why, "missing") == 0 ? "missing" :
			    "non-string", opt.keys[k]);
			return;
		}
	for (k = 0; k < opt.nkeys; k++) {
		w->ids.n = 0;
		tokenizer_encode(w->tk, text[k], tlen[k], &w->ids);
		b->count[B_BYTES] += tlen[k];
		/* Megatron-LM v2.5: an empty text is no document, EOD or not. */
		if (w->ids.n == 0) {
			b->count[B_EMPTY]++;
			continue;
		}
		if (opt.append_eod) {
			w->ids.v = xgrow(w->ids.v, &w->ids.cap, w->ids.n + 1,
			    sizeof *w->ids.v);
			w->ids.v[w->ids.n++] = hdr.eod;
		}
		if (w->ids.n > TOK_MAXDOC) {
			batch_note(b, BAD_TOOLONG, "%s:%lu: document of %zu tokens "
			    "(the most is %u)", b->name, b->lineno[i], w->ids.n,
			    TOK_MAXDOC);
			continue;
		}
		if (opt.prefix)
			put_doc(&b->out, &w->c, k, w->ids.v, w->ids.n);
		else
			tok_put_doc(&b->out, &hdr, &w->c, w->ids.v, w->ids.n);
	}
}

static void
encode_batch(struct batch *b, void *state)
{
	struct worker *w = state;
	size_t i;

	memset(&w->c, 0, sizeof w->c);
	for (i = 0; i < b->nline; i++) {
		encode_line(b, w, i);
		/* A long record's text and ids are not kept for the next. */
		if (w->ids.cap * sizeof *w->ids.v > KEEP) {
			free(w->ids.v);
			memset(&w->ids, 0, sizeof w->ids);
		}
		if (w->rec.arena.cap > KEEP) {
			json_rec_free(&w->rec);
			json_rec_init(&w->rec, opt.keys, opt.nkeys);
		}
	}
	b->count[B_DOC] = w->c.docs;
	b->count[B_TOK] = w->c.tokens;
	b->count[B_SUM] = w->c.sum;
}

static void
write_out(const char *p, size_t n)
{
	if (n > 0 && fwrite(p, 1, n, stdout) != n)
		exit(owt_finish(XSYS));
}

/*
 * A batch is done, about to be written (its bad records reported by the
 * loop): count. A bad record without -k ends the stream there, with no
 * trailer: the reader must not take it for a whole one.
 */
static void
finish(struct batch *b, void *arg)
{
	struct tok_count c = { b->count[B_DOC], b->count[B_TOK], b->count[B_SUM] };
	uint32_t h[2];
	size_t i, at;
	double secs;

	(void)arg;
	/* --output-prefix: each document into its key's dataset, in order. */
	for (at = 0; dset != NULL && at < b->out.len; at += h[1] * sizeof h[0]) {
		memcpy(h, b->out.p + at, sizeof h);
		at += sizeof h;
		if (mmidx_add(&dset[h[0]], (const uint32_t *)(b->out.p + at),
		    h[1]) < 0 || mmidx_end_doc(&dset[h[0]]) < 0)
			owt_die(dset[h[0]].errcode, "%s", dset[h[0]].err);
	}
	if (dset != NULL)
		b->out.len = 0;
	tok_count_add(&written, &c);
	ndoc += b->count[B_DOC];
	ntok += b->count[B_TOK];
	nbytes += b->count[B_BYTES];
	count[C_EMPTY].n += b->count[B_EMPTY];
	for (i = 0; i < b->nline; i++) {
		progress_tick(&prog, ndoc, nbytes);
		/* Megatron's line; its "bytes" are those of the JSON lines. */
		nrec++;
		if (opt.log_interval > 0 && nrec % (unsigned)opt.log_interval == 0 &&
		    !opt.quiet) {
			secs = progress_elapsed(&prog);
			fprintf(stderr, "Processed %llu documents (%.1f docs/s, "
			    "%.1f MB/s).\n", nrec, secs > 0 ? nrec / secs : 0.0,
			    secs > 0 ? (double)(nin + b->off[i + 1]) / 1e6 / secs :
			    0.0);
		}
	}
	if (b->nline > 0)	/* a batch of notes alone has no offsets */
		nin += b->off[b->nline];
}

/* An exit before the datasets are committed: no part is left. */
static void
cleanup(void)
{
	outfile_signal_cleanup();
}

/*
 * --output-prefix P: for each key a dataset P_KEY_document, each document
 * a sequence, as idx-pack packs a stream of that key's documents; written
 * over any there (as preprocess_data.py does), published at the end.
 */
static void
datasets_create(void)
{
	char *name;
	size_t k, n;

	dset = xcalloc(opt.nkeys, sizeof *dset);
	dname = xcalloc(opt.nkeys, sizeof *dname);
	atexit(cleanup);
	signal(SIGINT, outfile_signal_exit);
	signal(SIGTERM, outfile_signal_exit);
	signal(SIGHUP, outfile_signal_exit);
	for (k = 0; k < opt.nkeys; k++) {
		n = strlen(opt.prefix) + strlen(opt.keys[k]) + 11;
		dname[k] = name = xmalloc(n);
		snprintf(name, n, "%s_%s_document", opt.prefix, opt.keys[k]);
		if (mmidx_create(&dset[k], name, MMIDX_DTYPE(hdr.vocab), 1) < 0)
			owt_die(dset[k].errcode, "%s", dset[k].err);
	}
}

static void
datasets_commit(void)
{
	struct mmidx_writer done;
	size_t k;

	for (k = 0; k < opt.nkeys; k++) {
		done = dset[k];
		if (mmidx_commit(&dset[k]) < 0)
			owt_die(dset[k].errcode, "%s", dset[k].err);
		if (!opt.quiet)
			fprintf(stderr, "%s: %s: %llu documents, %llu tokens (%s), "
			    "%.1f MB\n", owt_prog, dname[k],
			    (unsigned long long)done.ndocs,
			    (unsigned long long)done.ntokens,
			    mmidx_dtype_name(done.dtype), (double)done.binbytes / 1e6);
		free(dname[k]);
	}
	free(dset);
	free(dname);
	dset = NULL;
}

static void
encode(int argc, char **argv)
{
	struct batch_opts run = {
		.nworkers = opt.workers, .bytes = BATCH_BYTES, .held = HELD_BYTES,
		.keep_going = opt.keep_going, .bad = count,
		.out = opt.prefix ? NULL : stdout,
		.init = worker_init, .work = encode_batch, .fini = worker_fini,
		.done = finish,
	};
	struct buf head = { 0 };
	char *input[1] = { (char *)opt.input };
	char err[1024];
	int code, k;

	tok_hdr_init(&hdr, tokenizer_nvocab(vocab), tokenizer_eod(vocab));
	if (opt.append_eod && hdr.eod == TOK_NOEOD)
		owt_die(XUSAGE, "--append-eod: the vocabulary has no <|endoftext|>");
	if (opt.prefix) {
		datasets_create();
	} else {
		owt_no_tty_stdout();
		tok_put_hdr(&head, &hdr);
		write_out(head.p, head.len);
		head.len = 0;
	}
	if ((k = opt.input ? batch_run(&run, input, 1, err, sizeof err, &code) :
	    batch_run(&run, argv + first, argc - first, err, sizeof err,
	    &code)) < 0)
		owt_die(code, "%s", err);
	if (k == XDATA) {
		status = XDATA;
		if (!opt.keep_going)
			exit(owt_finish(XDATA));
	}
	/* Every record was encoded, or skipped under -k: the output is whole. */
	if (opt.prefix) {
		datasets_commit();
	} else {
		tok_put_end(&head, &written);
		write_out(head.p, head.len);
	}
	buf_free(&head);
}

/* -d: token streams back to JSONL, one record a document. */
static void
decode(int argc, char **argv)
{
	struct tok_reader r;
	struct buf text = { 0 }, out = { 0 };
	struct json_w w;
	const uint32_t *ids;
	size_t n, bad = 0, none;
	int i, k;

	for (i = first; i < argc || (i == first && argc == first); i++) {
		if (tok_open(&r, i < argc ? argv[i] : "-") < 0)
			goto fault;
		if (r.h.vocab != tokenizer_nvocab(vocab)) {
			owt_warn("%s: the stream's vocabulary has %u tokens, the "
			    "loaded one %u", r.in.name, r.h.vocab,
			    tokenizer_nvocab(vocab));
			count[C_TRUNC].n++;
			goto next;
		}
		while ((k = tok_next(&r, &ids, &n)) > 0) {
			ntok += n;
			if (n > 0 && r.h.eod != TOK_NOEOD && ids[n - 1] == r.h.eod)
				n--;
			text.len = 0;
			/* tiktoken's ids between its ranks and specials: none */
			if ((none = tokenizer_decode(vocab, ids, n, &text)) != n)
				owt_warn("%s: document %llu: id %u is no token",
				    r.in.name, (unsigned long long)r.ndocs,
				    ids[none]);
			else if ((bad = utf8_valid(text.p, text.len)) != text.len)
				owt_warn("%s: document %llu: the tokens are not UTF-8 "
				    "text (byte %zu)", r.in.name,
				    (unsigned long long)r.ndocs, bad + 1);
			if (none != n || bad != text.len) {
				count[C_DECODE].n++;
				status = XDATA;
				if (!opt.keep_going) {
					write_out(out.p, out.len);
					exit(owt_finish(XDATA));
				}
				continue;
			}
			json_w_init(&w, &out, JSON_COMPACT);
			json_w_obj(&w);
			json_w_key(&w, opt.keys[0]);
			json_w_str(&w, text.p, text.len);
			json_w_end(&w);
			buf_addc(&out, '\n');
			ndoc++;
			nbytes += text.len;
			if (out.len >= BATCH_BYTES) {
				write_out(out.p, out.len);
				out.len = 0;
			}
			progress_tick(&prog, ndoc, nbytes);
		}
		if (k == 0) {
			if (r.nv1 > 0)
				owt_warn("%s: a version 1 token stream: whether it "
				    "is whole cannot be checked", r.in.name);
			goto next;
		}
fault:
		if (r.errcode == XSYS)
			owt_die(XSYS, "%s", r.err);
		owt_warn("%s", r.err);
		count[C_TRUNC].n++;
next:
		status = count[C_TRUNC].n ? XDATA : status;
		if (status != XOK && !opt.keep_going) {
			write_out(out.p, out.len);
			exit(owt_finish(XDATA));
		}
		tok_close(&r);
	}
	write_out(out.p, out.len);
	buf_free(&out);
	buf_free(&text);
}

static void
summary(double secs)
{
	size_t i;

	for (i = 1; i < C_NCOUNT; i++)
		count[i].name = i < BAD_NREASONS ? input_bad_name[i] :
		    i == C_FIELD ? "missing or non-string field" :
		    i == C_EMPTY ? "empty document" :
		    i == C_TRUNC ? "bad token stream" : "not UTF-8 text";
	if (opt.decode)
		fprintf(stderr, "%s: %llu documents, %llu tokens decoded, %.1f MB "
		    "of text in %.2f s\n", owt_prog, ndoc, ntok,
		    (double)nbytes / 1e6, secs);
	else
		fprintf(stderr, "%s: %llu records, %llu documents, %llu tokens "
		    "from %.1f MB of text in %.2f s (%.1f MB/s)\n", owt_prog,
		    nrec, ndoc, ntok, (double)nbytes / 1e6, secs,
		    secs > 0 ? (double)nbytes / 1e6 / secs : 0.0);
	tally_print("dropped", count + 1, C_NCOUNT - 1);
}

int
main(int argc, char **argv)
{
	char err[1024];
	int code;

	owt_setprog(argv[0]);
#ifdef M_MMAP_THRESHOLD
	/*
	 * Blocks of a megabyte or more (a long record's text, ids and merge
	 * state) go back to the system when freed. Without this glibc raises
	 * the threshold after each such free, up to 32 MB, and each worker's
	 * arena may then keep up to twice that.
	 */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
	opt.workers = owt_ncpu();
	first = owt_options(&options, argc, argv, NULL);
	if ((opt.tk.vocab == NULL) != (opt.tk.merges == NULL))
		owt_die(XUSAGE, "--vocab-file and --merge-file go together");
	/* preprocess_data.py's "--json-keys text title": operands are keys. */
	if (opt.input != NULL && first < argc) {
		if (opt.nkeys == 0)
			owt_die(XUSAGE, "--input: unexpected operand '%s'",
			    argv[first]);
		while (first < argc)
			if (add_keys(NULL, argv[first++], err, sizeof err) < 0)
				owt_die(XUSAGE, "%s", err);
	}
	if (opt.nkeys == 0)
		opt.keys[opt.nkeys++] = "text";
	if (opt.prefix != NULL && opt.decode)
		owt_die(XUSAGE, "--output-prefix: not with -d");
	if (opt.input != NULL && opt.decode)
		owt_die(XUSAGE, "--input: not with -d");
	if ((vocab = tokenizer_load(&opt.tk, err, sizeof err, &code)) == NULL)
		owt_die(code, "%s", err);
	progress_init(&prog, opt.quiet ? -1 : opt.progress, "documents");
	if (opt.decode)
		decode(argc, argv);
	else
		encode(argc, argv);
	progress_done(&prog);
	if (!opt.quiet)
		summary(progress_elapsed(&prog));
	tokenizer_free(vocab);
	return owt_finish(status);
}
