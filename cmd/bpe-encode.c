/* bpe-encode - turn JSONL text into GPT-2, tiktoken, Hugging Face or SentencePiece ids (owt-tok(5)), and back */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/batch.h"
#include "core/opt.h"
#include "core/outfile.h"
#include "core/util.h"
#include "tok/encode.h"
#include "tok/tok.h"
#include "tok/tokenizer.h"

static struct {
	int decode, keep_going, quiet, progress, append_eod, workers;
	int log_interval;	/* 0: none */
	const char *input, *prefix;
	struct tokenizer_opts tk;
	const char *keys[ENCODE_MAXKEYS];
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
			return owt_fail(err, errsize, NULL, XUSAGE,
			    "--json-keys: '%s' has an empty "
			    "field name", arg);
		}
		if (opt.nkeys == ENCODE_MAXKEYS) {
			return owt_fail(err, errsize, NULL, XUSAGE,
			    "--json-keys: more than %d fields",
			    ENCODE_MAXKEYS);
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
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--partitions: '%s': owt writes one "
		    "dataset in input order (1)", arg);
	}
	return 0;
}

/* Megatron's sentence splitting: documents would become other sequences. */
static int
refuse(const struct opt *o, const char *arg, char *err, size_t errsize)
{
	(void)arg;
	return owt_fail(err, errsize, NULL, XUSAGE,
	    "--%s: not supported: owt writes each document "
	    "as one sequence", o->name);
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
	{ .name = "tiktoken-num-special-tokens", .arg = "n", .type = OPT_INT,
	    .p = &opt.tk.num_special, .min = 1, .max = 1 << 24,
	    .help = "Megatron's JSON model: special tokens before the ranks (1000)" },
	{ .name = "tiktoken-pattern", .arg = "name", .type = OPT_STR,
	    .p = &opt.tk.pattern, .check = tiktoken_check_name,
	    .help = "TikTokenizer's encoding (by the rank file's size), v1 or v2" },
	{ .name = "tiktoken-special-tokens", .arg = "list", .type = OPT_STR,
	    .p = &opt.tk.special,
	    .help = "Megatron's JSON model: its special tokens (<unk> <s> </s>)" },
	{ .name = "tokenizer-model", .arg = "file", .type = OPT_STR,
	    .p = &opt.tk.model, .help = "TikTokenizer's .tiktoken rank file or "
	    "Megatron's JSON, HuggingFaceTokenizer's folder of tokenizer.json, "
	    "or the SentencePiece model" },
	{ .name = "tokenizer-type", .arg = "type", .type = OPT_STR,
	    .p = &opt.tk.type, .check = tokenizer_check_type,
	    .help = "GPT2BPETokenizer (the default), TikTokenizer, ..." },
	OPT_ROW_VERSION,
	{ .name = "vocab-file", .arg = "file", .type = OPT_STR, .p = &opt.tk.vocab,
	    .help = "the tokens (encoder.json) of another vocabulary" },
	{ .name = "vocab-size", .arg = "n", .type = OPT_INT,
	    .p = &opt.tk.vocab_size, .min = 2, .max = 1 << 24,
	    .help = "Megatron's JSON model: ids in all (131072)" },
	{ .name = "workers", .arg = "n", .type = OPT_INT, .p = &opt.workers,
	    .min = 1, .max = 1024, .help = "encoding threads (all cores)" },
};

static const struct opt_prog options = { "bpe-encode", opts,
    sizeof opts / sizeof *opts, "[file ...]", 25, &opt.quiet };

static struct tokenizer *vocab;
static struct encode run;
static int first;		/* argv[first]: the first operand */

static void
write_out(const char *p, size_t n)
{
	if (n > 0 && fwrite(p, 1, n, stdout) != n)
		exit(owt_finish(XSYS));
}

static void
finish(struct batch *b, void *arg)
{
	char err[OWT_ERRSIZE];
	int code;

	if (encode_done(arg, b, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
}

/* An exit before the datasets are committed: no part is left. */
static void
cleanup(void)
{
	outfile_signal_cleanup();
}

static void
encode(int argc, char **argv)
{
	struct batch_opts loop;
	struct buf head = { 0 };
	char *input[1] = { (char *)opt.input };
	char err[OWT_ERRSIZE];
	int code, k;

	if (opt.append_eod && run.hdr.eod == TOK_NOEOD)
		owt_die(XUSAGE, "--append-eod: the vocabulary has no <|endoftext|>");
	encode_batch_opts(&run, &loop);
	loop.out = opt.prefix ? NULL : stdout;
	loop.done = finish;
	if (opt.prefix) {
		atexit(cleanup);
		signal(SIGINT, outfile_signal_exit);
		signal(SIGTERM, outfile_signal_exit);
		signal(SIGHUP, outfile_signal_exit);
		if (encode_datasets_create(&run, err, sizeof err, &code) < 0)
			owt_die(code, "%s", err);
	} else {
		owt_no_tty_stdout();
		tok_put_hdr(&head, &run.hdr);
		write_out(head.p, head.len);
		head.len = 0;
	}
	if ((k = opt.input ? batch_run(&loop, input, 1, err, sizeof err, &code) :
	    batch_run(&loop, argv + first, argc - first, err, sizeof err,
	    &code)) < 0)
		owt_die(code, "%s", err);
	if (k == XDATA)
		run.status = XDATA;
	if (batch_halts(k, opt.keep_going))
		exit(owt_finish(XDATA));
	/* Every record was encoded, or skipped under -k: the output is whole. */
	if (opt.prefix) {
		if (encode_datasets_commit(&run, err, sizeof err, &code) < 0)
			owt_die(code, "%s", err);
	} else {
		tok_put_end(&head, &run.written);
		write_out(head.p, head.len);
	}
	buf_free(&head);
}

static void
summary(double secs)
{
	struct tally *count = run.count;
	size_t i;

	for (i = 1; i < ENCODE_NCOUNT; i++)
		count[i].name = i == BAD_FIELD ? "missing or non-string field" :
		    i < BAD_NREASONS ? input_bad_name[i] :
		    i == ENCODE_EMPTY ? "empty document" :
		    i == ENCODE_TRUNC ? "bad token stream" : "not UTF-8 text";
	if (opt.decode)
		fprintf(stderr, "%s: %llu documents, %llu tokens decoded, %.1f MB "
		    "of text in %.2f s\n", owt_prog, run.ndoc, run.ntok,
		    (double)run.nbytes / 1e6, secs);
	else
		fprintf(stderr, "%s: %llu records, %llu documents, %llu tokens "
		    "from %.1f MB of text in %.2f s (%.1f MB/s)\n", owt_prog,
		    run.nrec, run.ndoc, run.ntok, (double)run.nbytes / 1e6, secs,
		    secs > 0 ? (double)run.nbytes / 1e6 / secs : 0.0);
	tally_print("dropped", count + 1, ENCODE_NCOUNT - 1);
}

int
main(int argc, char **argv)
{
	char err[OWT_ERRSIZE];
	int code, k;

	owt_setprog(argv[0]);
#ifdef M_MMAP_THRESHOLD
	/*
	 * Blocks of 4 MB or more (a very long record's text, ids and merge
	 * state) go back to the system when freed. Without a fixed threshold
	 * glibc raises it after each such free, up to 32 MB. Below it memory
	 * is kept: at glibc's 128 KB trim threshold, a worker's arena gave
	 * its top back after every record longer than ENCODE_KEEP and every
	 * batch, and a 1 MB mmap threshold unmapped the buffers of each long
	 * record; the pages were then faulted in again, 3,600 of 10,000 page
	 * faults on 20 MB.
	 */
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 8 << 20);
#endif
	/*
	 * And the heap in 2 MB pages, 256 MB of it advised ahead (address
	 * space only): a 4 KB page's first touch cost 11 us on a virtual
	 * machine here, and the 41,000 of a Llama-3-style tokenizer.json's
	 * tree half its load (man bpe-encode, Memory).
	 */
	heap_huge((size_t)256 << 20);
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
	encode_init(&run, &(struct encode_opts){ opt.keys, opt.nkeys,
	    opt.append_eod, opt.keep_going, opt.quiet, opt.workers,
	    opt.log_interval, opt.prefix }, vocab);
	progress_init(&run.prog, opt.quiet ? -1 : opt.progress, "documents");
	if (!opt.decode)
		encode(argc, argv);
	else if ((k = encode_decode(&run, argv + first, argc - first, stdout,
	    err, sizeof err, &code)) < 0)
		owt_die(code, "%s", err);
	else if (run.stopped)
		exit(owt_finish(k));
	progress_done(&run.prog);
	if (!opt.quiet)
		summary(progress_elapsed(&run.prog));
	encode_free(&run);
	tokenizer_free(vocab);
	return owt_finish(run.status);
}
