/* bpe-encode - turn JSONL text into GPT-2 token ids (owt-tok(5)), and back */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "bpe.h"
#include "input.h"
#include "jsonl.h"
#include "opt.h"
#include "progress.h"
#include "tok.h"
#include "utf8.h"
#include "util.h"

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
	const char *vocab, *merges;
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

static const struct opt opts[] = {
	{ .name = "decode", .key = 'd', .type = OPT_FLAG, .p = &opt.decode,
	    .help = "turn a token stream back into JSONL" },
	{ .name = "help", .key = 'h', .type = OPT_HELP,
	    .help = "print this help and exit" },
	{ .name = "keep-going", .key = 'k', .type = OPT_FLAG,
	    .p = &opt.keep_going, .help = "skip bad records (still exit 1)" },
	{ .name = "quiet", .key = 'q', .type = OPT_FLAG, .p = &opt.quiet,
	    .help = "no summary or progress on stderr" },
	{ .name = "append-eod", .type = OPT_FLAG, .p = &opt.append_eod,
	    .help = "end every document with <|endoftext|>" },
	{ .name = "json-keys", .arg = "keys", .type = OPT_FUNC,
	    .check = add_keys,
	    .help = "the fields to encode, comma-separated (text)" },
	{ .name = "merge-file", .arg = "file", .type = OPT_STR, .p = &opt.merges,
	    .help = "the merges (vocab.bpe) of another vocabulary" },
	{ .name = "progress", .type = OPT_FLAG, .p = &opt.progress,
	    .help = "show progress even when stderr is not a terminal" },
	{ .name = "version", .type = OPT_VERSION,
	    .help = "print the version and exit" },
	{ .name = "vocab-file", .arg = "file", .type = OPT_STR, .p = &opt.vocab,
	    .help = "the tokens (encoder.json) of another vocabulary" },
	{ .name = "workers", .arg = "n", .type = OPT_INT, .p = &opt.workers,
	    .min = 1, .max = 1024, .help = "encoding threads (all cores)" },
};

static const struct opt_prog options = { "bpe-encode", opts,
    sizeof opts / sizeof *opts, "[file ...]", 25, &opt.quiet };

static struct bpe *vocab;
static struct tok_hdr hdr;
static struct tally count[C_NCOUNT];
static struct tok_count written;	/* the documents of the stream written */
static unsigned long long nrec, ndoc, ntok;
static uint64_t nbytes;
static int status = XOK;
static struct progress prog;
static int first;		/* argv[first]: the first operand */

/* A batch's counters (struct batch's count[]): a struct tok_count, then ours. */
enum { B_DOC, B_TOK, B_SUM, B_EMPTY, B_BYTES };

/* A worker's own state. */
struct worker {
	struct bpe_state *bpe;
	struct jsonl_rec rec;
	struct bpe_ids ids;
	struct tok_count c;	/* the documents of the batch being encoded */
};

static void *
worker_init(void *arg)
{
	struct worker *w = xcalloc(1, sizeof *w);

	(void)arg;
	w->bpe = bpe_state_new(vocab, CACHE_BYTES / (size_t)opt.workers);
	jsonl_rec_init(&w->rec, opt.keys, opt.nkeys);
	return w;
}

static void
worker_fini(void *state)
{
	struct worker *w = state;

	bpe_state_free(w->bpe);
	jsonl_rec_free(&w->rec);
	free(w->ids.v);
	free(w);
}

/* One record: every key's text becomes a document, or the record is bad. */
static void
encode_line(struct batch *b, struct worker *w, size_t i)
{
	const char *line = b->in.p + b->off[i], *text[MAXKEYS], *why;
	size_t len = b->off[i + 1] - b->off[i] - 1, tlen[MAXKEYS], k;
	char err[512];
	int r;

	if ((r = jsonl_parse(&w->rec, line, len, err, sizeof err)) != 0) {
		batch_note(b, r, "%s:%lu: %s", b->name, b->lineno[i], err);
		return;
	}
	for (k = 0; k < opt.nkeys; k++)
		if ((text[k] = jsonl_str(&w->rec, opt.keys[k], &tlen[k], &why)) == NULL) {
			batch_note(b, C_FIELD, "%s:%lu: %s '%s' field", b->name,
			    b->lineno[i], strcmp(why, "missing") == 0 ? "missing" :
			    "non-string", opt.keys[k]);
			return;
		}
	for (k = 0; k < opt.nkeys; k++) {
		w->ids.n = 0;
		bpe_encode(w->bpe, text[k], tlen[k], &w->ids);
		if (opt.append_eod) {
			w->ids.v = xgrow(w->ids.v, &w->ids.cap, w->ids.n + 1,
			    sizeof *w->ids.v);
			w->ids.v[w->ids.n++] = hdr.eod;
		}
		b->count[B_BYTES] += tlen[k];
		if (w->ids.n == 0) {
			b->count[B_EMPTY]++;
			continue;
		}
		if (w->ids.n > TOK_MAXDOC) {
			batch_note(b, BAD_TOOLONG, "%s:%lu: document of %zu tokens "
			    "(the most is %u)", b->name, b->lineno[i], w->ids.n,
			    TOK_MAXDOC);
			continue;
		}
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
			jsonl_rec_free(&w->rec);
			jsonl_rec_init(&w->rec, opt.keys, opt.nkeys);
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
	size_t i;

	(void)arg;
	tok_count_add(&written, &c);
	nrec += b->nline;
	ndoc += b->count[B_DOC];
	ntok += b->count[B_TOK];
	nbytes += b->count[B_BYTES];
	count[C_EMPTY].n += b->count[B_EMPTY];
	for (i = 0; i < b->nline; i++)
		progress_tick(&prog, ndoc, nbytes);
}

static void
encode(int argc, char **argv)
{
	struct batch_opts run = {
		.nworkers = opt.workers, .bytes = BATCH_BYTES, .held = HELD_BYTES,
		.keep_going = opt.keep_going, .bad = count, .out = stdout,
		.init = worker_init, .work = encode_batch, .fini = worker_fini,
		.done = finish,
	};
	struct buf head = { 0 };
	char err[1024];
	int code, k;

	owt_no_tty_stdout();
	tok_hdr_init(&hdr, bpe_nvocab(vocab), bpe_eod(vocab));
	if (opt.append_eod && hdr.eod == TOK_NOEOD)
		owt_die(XUSAGE, "--append-eod: the vocabulary has no <|endoftext|>");
	tok_put_hdr(&head, &hdr);
	write_out(head.p, head.len);
	head.len = 0;
	if ((k = batch_run(&run, argv + first, argc - first, err, sizeof err,
	    &code)) < 0)
		owt_die(code, "%s", err);
	if (k == XDATA) {
		status = XDATA;
		if (!opt.keep_going)
			exit(owt_finish(XDATA));
	}
	/* Every record was encoded, or skipped under -k: the stream is whole. */
	tok_put_end(&head, &written);
	write_out(head.p, head.len);
	buf_free(&head);
}

/* -d: token streams back to JSONL, one record a document. */
static void
decode(int argc, char **argv)
{
	struct tok_reader r;
	struct buf text = { 0 }, out = { 0 };
	const uint32_t *ids;
	size_t n, bad;
	int i, k;

	for (i = first; i < argc || (i == first && argc == first); i++) {
		if (tok_open(&r, i < argc ? argv[i] : "-") < 0)
			goto fault;
		if (r.h.vocab != bpe_nvocab(vocab)) {
			owt_warn("%s: the stream's vocabulary has %u tokens, the "
			    "loaded one %u", r.in.name, r.h.vocab, bpe_nvocab(vocab));
			count[C_TRUNC].n++;
			goto next;
		}
		while ((k = tok_next(&r, &ids, &n)) > 0) {
			ntok += n;
			if (n > 0 && r.h.eod != TOK_NOEOD && ids[n - 1] == r.h.eod)
				n--;
			text.len = 0;
			bpe_decode(vocab, ids, n, &text);
			if ((bad = utf8_valid(text.p, text.len)) != text.len) {
				owt_warn("%s: document %llu: the tokens are not UTF-8 "
				    "text (byte %zu)", r.in.name,
				    (unsigned long long)r.ndocs, bad + 1);
				count[C_DECODE].n++;
				status = XDATA;
				if (!opt.keep_going) {
					write_out(out.p, out.len);
					exit(owt_finish(XDATA));
				}
				continue;
			}
			buf_addc(&out, '{');
			json_string(&out, opt.keys[0], strlen(opt.keys[0]));
			buf_addc(&out, ':');
			json_string(&out, text.p, text.len);
			buf_add(&out, "}\n", 2);
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
	if ((opt.vocab == NULL) != (opt.merges == NULL))
		owt_die(XUSAGE, "--vocab-file and --merge-file go together");
	if (opt.nkeys == 0)
		opt.keys[opt.nkeys++] = "text";
	if ((vocab = bpe_load(opt.vocab, opt.merges, &code, err, sizeof err)) == NULL)
		owt_die(code, "%s", err);
	progress_init(&prog, opt.quiet ? -1 : opt.progress, "documents");
	if (opt.decode)
		decode(argc, argv);
	else
		encode(argc, argv);
	progress_done(&prog);
	if (!opt.quiet)
		summary(progress_elapsed(&prog));
	bpe_free(vocab);
	return owt_finish(status);
}
