/* gpt-sample - generate text from GPT-2 checkpoints (owt or Hugging Face), or score texts */
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blas.h"
#include "bpe.h"
#include "ckpt.h"
#include "gen.h"
#include "gpt.h"
#include "gpt_device.h"
#include "gpt_infer.h"
#include "input.h"
#include "jsonl.h"
#include "opt.h"
#include "utf8.h"
#include "util.h"

static struct {
	int keep_going, quiet, greedy, ids, int8, interactive, score, prec;
	int batch, nsamples, out_len, stride, top_k, workers, seq;
	int shape[4];		/* --num-layers ... as given, or 0 */
	double temperature, top_p;
	uint64_t seed;
	const char *device, *genfile, *key, *load, *merges, *vocab, *input;
} opt = {
	.batch = 4, .nsamples = 1, .out_len = 1024, .temperature = 1.0,
	.seed = 1234, .prec = GPT_PREC_DEFAULT,
};

/* One input record and the samples drawn from it. */
struct prompt {
	char *line;		/* the JSONL record, or NULL for a text line */
	size_t len;
	char *text;		/* the text line */
	int empty;		/* no prompt: the context is EOD */
	unsigned long lineno;
	struct bpe_ids ids;
	int refs;		/* samples not yet written */
};

struct sample {
	struct gen_seq seq;
	struct prompt *p;
	int index;		/* among the prompt's samples */
	int ended;
	struct bpe_ids out;	/* the tokens generated */
	size_t shown;		/* tokens written so far (text, streaming) */
	struct sample *next;
};

static struct bpe *vocab;
static struct bpe_state *bs;
static struct gen gen;
static struct gpt_device dev;
static struct sample *head, *tail, *unstarted;
static int status = XOK, jsonl_out, jsonl_in;
static unsigned long long nprompts, nsamples, ntokens, nbad;
static volatile sig_atomic_t interrupted;
static const char *const *keys;
static struct jsonl_rec rec;

/* A log line, unless -q. */
#define say(...) do { if (!opt.quiet) owt_warn(__VA_ARGS__); } while (0)

/* The model options Megatron's scripts pass, checked against config.json. */
static const struct { const char *flag, *key; } shape_opts[4] = {
	{ "--num-layers", "n_layer" },
	{ "--hidden-size", "n_embd" },
	{ "--num-attention-heads", "n_head" },
	{ "--max-position-embeddings", "n_positions" },
};

/* --fp16, --bf16, --fp32: the precision, in the option's tag. */
static int
set_prec(const struct opt *o, const char *arg, char *err, size_t errsize)
{
	(void)arg;
	if (opt.prec != GPT_PREC_DEFAULT && opt.prec != o->tag) {
		snprintf(err, errsize, "--fp16, --bf16 and --fp32 exclude each "
		    "other");
		return -1;
	}
	opt.prec = o->tag;
	return 0;
}

static int
check_tokenizer(const struct opt *o, const char *arg, char *err,
    size_t errsize)
{
	(void)o;
	if (strcmp(arg, "GPT2BPETokenizer") != 0) {
		snprintf(err, errsize, "--tokenizer-type: '%s' is not "
		    "GPT2BPETokenizer", arg);
		return -1;
	}
	return 0;
}

static const struct opt opts[] = {
	{ .name = "help", .key = 'h', .type = OPT_HELP,
	    .help = "print this help and exit" },
	{ .name = "keep-going", .key = 'k', .type = OPT_FLAG,
	    .p = &opt.keep_going, .help = "skip bad records (still exit 1)" },
	{ .name = "quiet", .key = 'q', .type = OPT_FLAG, .p = &opt.quiet,
	    .help = "no log or summary on stderr" },
	{ .name = "bf16", .type = OPT_FUNC, .check = set_prec, .tag = GPT_BF16,
	    .help = "bf16 matrix products (cuda)" },
	{ .name = "device", .arg = "dev", .type = OPT_STR, .p = &opt.device,
	    .help = "auto, cpu or cuda ($OWT_DEVICE, else auto)" },
	{ .name = "fp16", .type = OPT_FUNC, .check = set_prec, .tag = GPT_FP16,
	    .help = "fp16 matrix products (cuda)" },
	{ .name = "fp32", .type = OPT_FUNC, .check = set_prec, .tag = GPT_FP32,
	    .help = "fp32 throughout (the default)" },
	{ .name = "genfile", .arg = "file", .type = OPT_STR, .p = &opt.genfile,
	    .help = "write JSONL records to file (standard output)" },
	{ .name = "greedy", .type = OPT_FLAG, .p = &opt.greedy,
	    .help = "always the most likely token" },
	{ .name = "hidden-size", .arg = "n", .type = OPT_INT, .p = &opt.shape[1],
	    .min = 1, .max = 1 << 20, .help = "check the model's n_embd" },
	{ .name = "ids", .type = OPT_FLAG, .p = &opt.ids,
	    .help = "add the token ids to JSONL records" },
	{ .name = "int8", .type = OPT_FLAG, .p = &opt.int8,
	    .help = "int8 weight matrices" },
	{ .name = "interactive", .type = OPT_FLAG, .p = &opt.interactive,
	    .help = "one prompt at a time (implied on a terminal)" },
	{ .name = "json-keys", .arg = "key", .type = OPT_STR, .p = &opt.key,
	    .help = "the prompt field (prompt), with --score the text field "
	    "(text)" },
	{ .name = "load", .arg = "dir", .type = OPT_STR, .p = &opt.load,
	    .flags = OPT_REQUIRED,
	    .help = "an owt checkpoint or a Hugging Face GPT-2 directory" },
	{ .name = "max-position-embeddings", .arg = "n", .type = OPT_INT,
	    .p = &opt.shape[3], .min = 1, .max = 1 << 20,
	    .help = "check the model's n_positions" },
	{ .name = "merge-file", .arg = "file", .type = OPT_STR, .p = &opt.merges,
	    .help = "the BPE merges (the shipped GPT-2 vocab.bpe)" },
	{ .name = "micro-batch-size", .arg = "n", .type = OPT_INT,
	    .p = &opt.batch, .min = 1, .max = 1024,
	    .help = "samples generated together (4)" },
	{ .name = "num-attention-heads", .arg = "n", .type = OPT_INT,
	    .p = &opt.shape[2], .min = 1, .max = 1 << 20,
	    .help = "check the model's n_head" },
	{ .name = "num-layers", .arg = "n", .type = OPT_INT, .p = &opt.shape[0],
	    .min = 1, .max = 1 << 20, .help = "check the model's n_layer" },
	{ .name = "num-samples", .arg = "n", .type = OPT_INT, .p = &opt.nsamples,
	    .min = 1, .max = 1 << 20, .help = "samples per prompt (1)" },
	{ .name = "out-seq-length", .arg = "n", .type = OPT_INT,
	    .p = &opt.out_len, .max = 1 << 30,
	    .help = "tokens to generate at most (1024)" },
	{ .name = "recompute", .type = OPT_FLAG,
	    .help = "accepted for Megatron's scripts; no effect" },
	{ .name = "sample-input-file", .arg = "file", .type = OPT_STR,
	    .p = &opt.input,
	    .help = "read prompts or records from file (standard input)" },
	{ .name = "score", .type = OPT_FLAG, .p = &opt.score,
	    .help = "write each record's nll, ppl and tokens" },
	{ .name = "score-stride", .arg = "n", .type = OPT_INT, .p = &opt.stride,
	    .min = 1, .max = 1 << 30,
	    .help = "--score: windows start n tokens apart (half the context)" },
	{ .name = "seed", .arg = "n", .type = OPT_U64, .p = &opt.seed,
	    .max = 4294967295.0, .help = "seed of the draws (1234)" },
	{ .name = "seq-length", .arg = "n", .type = OPT_INT, .p = &opt.seq,
	    .min = 2, .max = 1 << 20,
	    .help = "prompt and text at most n tokens (the model's positions)" },
	{ .name = "temperature", .arg = "x", .type = OPT_DOUBLE,
	    .p = &opt.temperature, .max = 1e6,
	    .help = "divide the logits by x; 0: greedy (1.0)" },
	{ .name = "tokenizer-type", .arg = "GPT2BPETokenizer", .type = OPT_STR,
	    .check = check_tokenizer, .help = "the only one" },
	{ .name = "top-k", .arg = "n", .type = OPT_INT, .p = &opt.top_k,
	    .max = 1 << 30,
	    .help = "draw from the n most likely tokens; 0: all (0)" },
	{ .name = "top_k", .arg = "n", .flags = OPT_ALIAS,
	    .help = "the same, Megatron's spelling" },
	{ .name = "top-p", .arg = "x", .type = OPT_DOUBLE, .p = &opt.top_p,
	    .max = 1,
	    .help = "draw from the most likely tokens holding p; 0: all (0)" },
	{ .name = "top_p", .arg = "x", .flags = OPT_ALIAS,
	    .help = "the same, Megatron's spelling" },
	{ .name = "version", .type = OPT_VERSION,
	    .help = "print the version and exit" },
	{ .name = "vocab-file", .arg = "file", .type = OPT_STR, .p = &opt.vocab,
	    .help = "the BPE vocabulary (the shipped GPT-2 encoder.json)" },
	{ .name = "workers", .arg = "n", .type = OPT_INT, .p = &opt.workers,
	    .min = 1, .max = 1024, .help = "threads (all processors)" },
};

static const struct opt_prog options = { "gpt-sample", opts,
    sizeof opts / sizeof *opts, NULL, 30, NULL };

static void
parse(int argc, char **argv)
{
	int first = owt_options(&options, argc, argv, NULL);

	if (first < argc)
		owt_die(XUSAGE, "unexpected operand '%s'", argv[first]);
	if (opt.load == NULL)
		owt_die(XUSAGE, "no model: give --load dir");
	if ((opt.vocab == NULL) != (opt.merges == NULL))
		owt_die(XUSAGE, "--vocab-file and --merge-file go together");
	if (opt.score && opt.interactive)
		owt_die(XUSAGE, "--score and --interactive exclude each other");
	if (opt.key == NULL)
		opt.key = opt.score ? "text" : "prompt";
}

/* A failed write stops the run, naming the output. */
static void
out_check(void)
{
	if (!ferror(stdout))
		return;
	if (opt.genfile && strcmp(opt.genfile, "-") != 0)
		owt_die_errno(XSYS, "%s: write error", opt.genfile);
	owt_die_errno(XSYS, "write error on standard output");
}

/* A bad record: report it, count it, and stop reading unless -k. */
#define bad(...) (owt_warn(__VA_ARGS__), nbad++, status = XDATA, \
    opt.keep_going ? 0 : -1)

/* s[0..n) as a JSON string, invalid UTF-8 sequences as U+FFFD. */
static void
json_text(struct buf *b, const char *s, size_t n)
{
	struct buf t = { 0 };
	size_t i = 0, k;

	while (i < n) {
		k = utf8_valid(s + i, n - i);
		buf_add(&t, s + i, k);
		if ((i += k) < n) {
			buf_adds(&t, "\357\277\275");
			while (++i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
				;
		}
	}
	json_string(b, t.p ? t.p : "", t.len);
	buf_free(&t);
}

/* Write the tokens of s not yet written (text mode), and flush. */
static void
stream(struct sample *s)
{
	struct buf b = { 0 };

	if (s->shown == s->out.n)
		return;
	bpe_decode(vocab, s->out.v + s->shown, s->out.n - s->shown, &b);
	fwrite(b.p, 1, b.len, stdout);
	fflush(stdout);
	out_check();
	buf_free(&b);
	s->shown = s->out.n;
}

/* Write a finished sample: the rest of its text, or its JSONL record. */
static void
write_sample(struct sample *s)
{
	struct buf line = { 0 }, text = { 0 }, raw = { 0 }, ids = { 0 };
	struct buf pids = { 0 };
	struct jsonl_edit ed[7];
	char num[3][24], err[256];
	size_t ned = 0;

	if (!jsonl_out) {
		stream(s);
		fputc('\n', stdout);
		fflush(stdout);
		out_check();
		return;
	}
	if (s->p->line) {
		buf_add(&line, s->p->line, s->p->len);
	} else {		/* a text prompt: a record of its own */
		buf_adds(&line, "{\"prompt\":");
		json_text(&line, s->p->text, strlen(s->p->text));
		buf_addc(&line, '}');
	}
	if (jsonl_parse(&rec, line.p, line.len, err, sizeof err) != 0)
		abort();	/* parsed when read */
	bpe_decode(vocab, s->out.v, s->out.n, &raw);
	json_text(&text, raw.p ? raw.p : "", raw.len);
	snprintf(num[0], sizeof num[0], "%zu", s->p->empty ? 0 : s->p->ids.n);
	snprintf(num[1], sizeof num[1], "%d", s->seq.ngen);
	snprintf(num[2], sizeof num[2], "%d", s->index);
	ed[ned++] = (struct jsonl_edit){ "text", text.p, text.len };
	ed[ned++] = (struct jsonl_edit){ "prompt_tokens", num[0], strlen(num[0]) };
	ed[ned++] = (struct jsonl_edit){ "tokens", num[1], strlen(num[1]) };
	ed[ned++] = (struct jsonl_edit){ "finished",
	    s->seq.end == GEN_EOD ? "true" : "false",
	    s->seq.end == GEN_EOD ? 4 : 5 };
	if (opt.nsamples > 1)
		ed[ned++] = (struct jsonl_edit){ "sample", num[2], strlen(num[2]) };
	if (opt.ids) {
		json_ids(&pids, s->p->ids.v, s->p->ids.n);
		json_ids(&ids, s->out.v, s->out.n);
		ed[ned++] = (struct jsonl_edit){ "prompt_ids", pids.p, pids.len };
		ed[ned++] = (struct jsonl_edit){ "ids", ids.p, ids.len };
	}
	buf_free(&raw);
	jsonl_write(&raw, &rec, ed, ned);
	fwrite(raw.p, 1, raw.len, stdout);
	if (opt.interactive)
		fflush(stdout);
	out_check();
	buf_free(&raw);
	buf_free(&line);
	buf_free(&text);
	buf_free(&ids);
	buf_free(&pids);
}

static void
free_sample(struct sample *s)
{
	if (--s->p->refs == 0) {
		free(s->p->line);
		free(s->p->text);
		free(s->p->ids.v);
		free(s->p);
	}
	free(s->out.v);
	free(s);
}

/* Write the finished samples at the head of the queue, in input order. */
static void
write_ready(void)
{
	while (head && head->ended) {
		struct sample *s = head;

		write_sample(s);
		head = s->next;
		if (head == NULL)
			tail = NULL;
		free_sample(s);
	}
	if (head && !jsonl_out)
		stream(head);
}

static void
on_token(void *arg, struct gen_seq *seq, int32_t tok)
{
	struct sample *s = (struct sample *)seq;

	if (tok >= 0) {
		if (s->out.n == s->out.cap)
			s->out.v = xgrow(s->out.v, &s->out.cap, s->out.n + 1,
			    sizeof *s->out.v);
		s->out.v[s->out.n++] = (uint32_t)tok;
		ntokens++;
		if (s == head && !jsonl_out)
			stream(s);
		return;
	}
	s->ended = 1;
	if (s == head)
		write_ready();
}

/* Start the queued samples while there are free slots. */
static void
start_samples(void)
{
	char err[256];

	while (unstarted && gen_has_room(&gen)) {
		struct sample *s = unstarted;
		struct prompt *p = s->p;

		unstarted = s->next;
		if (gen_start(&gen, &s->seq, (const int32_t *)p->ids.v,
		    (int)p->ids.n, err, sizeof err) < 0)
			abort();	/* checked when read */
	}
}

/*
 * Read the next prompt and queue its samples: 1, 0 at the end, -1 to
 * stop (a bad record without -k).
 */
static int
read_prompt(struct input *in)
{
	char *line, err[512];
	const char *text, *why;
	size_t len, tlen, n;
	struct prompt *p;
	int r, i, T = gen.o.ctx;

	for (;;) {
		if ((r = input_line(in, &line, &len)) < 0) {
			if (in->errcode != XDATA)
				owt_die(in->errcode, "%s", in->err);
			if (bad("%s", in->err) < 0)
				return -1;
			continue;
		}
		if (r == 0)
			return 0;
		if (in->lineno == 1)
			jsonl_in = len > 0 && line[0] == '{';
		if (len > 0 && line[len - 1] == '\r' && !jsonl_in)
			len--;
		text = line;
		tlen = len;
		if (jsonl_in) {
			if (jsonl_parse(&rec, line, len, err, sizeof err) != 0) {
				if (bad("%s:%lu: %s", in->name, in->lineno, err) < 0)
					return -1;
				continue;
			}
			if ((text = jsonl_str(&rec, opt.key, &tlen, &why)) == NULL) {
				if (bad("%s:%lu: '%s' is %s", in->name, in->lineno,
				    opt.key, why) < 0)
					return -1;
				continue;
			}
		}
		p = xcalloc(1, sizeof *p);
		p->lineno = in->lineno;
		if ((p->empty = tlen == 0)) {
			p->ids.v = xmalloc(sizeof *p->ids.v);
			p->ids.v[p->ids.n++] = bpe_eod(vocab);
		} else {
			bpe_encode(bs, text, tlen, &p->ids);
		}
		if ((n = p->ids.n) >= (size_t)T) {
			free(p->ids.v);
			free(p);
			if (bad("%s:%lu: a prompt of %zu tokens leaves no room "
			    "in a context of %d", in->name, in->lineno, n, T) < 0)
				return -1;
			continue;
		}
		break;
	}
	if (jsonl_in) {
		p->line = xstrndup(line, len);
		p->len = len;
	} else {
		p->text = xstrndup(line, len);
	}
	nprompts++;
	for (i = 0; i < opt.nsamples; i++) {
		struct sample *s = xcalloc(1, sizeof *s);

		s->p = p;
		s->index = i;
		s->seq.stream = (nprompts - 1) * (uint64_t)opt.nsamples + i;
		p->refs++;
		nsamples++;
		if (tail)
			tail->next = s;
		else
			head = s;
		tail = s;
		if (unstarted == NULL)
			unstarted = s;
	}
	return 1;
}

static void
on_sigint(int sig)
{
	if (!interrupted) {
		interrupted = 1;
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Generate from each prompt of in until its end. */
static void
generate(struct gpt *m, struct input *in, int interactive)
{
	struct gpt_infer inf;
	struct gen_opts o = {
		.temperature = opt.temperature, .top_k = opt.top_k,
		.top_p = opt.top_p, .greedy = opt.greedy, .max_new = opt.out_len,
		.seed = opt.seed, .eod = (int32_t)bpe_eod(vocab),
		.nvocab = (int)bpe_nvocab(vocab),
		.ctx = opt.seq ? opt.seq : m->cfg.maxpos,
	};
	int T = o.ctx, more = 1, tty = interactive && isatty(0), k;
	char err[512];
	double t0;

	if (gpt_infer_init(&inf, m, opt.batch, T - 1 > opt.batch ? T - 1 :
	    opt.batch, opt.batch, err, sizeof err) < 0)
		owt_die(XSYS, "%s", err);
	if (opt.int8)
		gpt_infer_quantize(&inf);
	gen_init(&gen, &inf, &o, on_token, NULL);
	jsonl_out = opt.genfile != NULL;
	t0 = owt_now();
	for (;;) {
		while (more && unstarted == NULL && gen_has_room(&gen) &&
		    !(interactive && head)) {
			if (tty) {
				fputs("> ", stderr);
				fflush(stderr);
				interrupted = 1;	/* ^C at the prompt exits */
			}
			if ((k = read_prompt(in)) <= 0)
				more = 0;
			interrupted = 0;
			jsonl_out |= jsonl_in;
		}
		start_samples();
		if (gen.running == 0 && unstarted == NULL && !more)
			break;
		gen_step(&gen);
		if (interrupted) {
			for (k = 0; k < inf.S; k++)
				if (gen.slot[k])
					gen_stop(&gen, gen.slot[k]);
			interrupted = 0;
		}
	}
	say("%llu prompts, %llu samples, %llu tokens in %.1f s, %.1f tokens/s",
	    nprompts, nsamples, ntokens, owt_now() - t0,
	    ntokens / fmax(owt_now() - t0, 1e-9));
	if (gpt_device_peak_bytes(&dev) > 0)
		say("peak GPU memory %.2f GB", gpt_device_peak_bytes(&dev) / 1e9);
	gen_free(&gen);
	gpt_infer_free(&inf);
}

/* Score each record of in: nll, ppl and tokens added. */
static void
score(struct gpt *m, struct input *in)
{
	struct gpt_infer inf;
	struct bpe_ids ids = { 0 };
	struct buf out = { 0 };
	struct jsonl_edit ed[4];
	struct buf idb = { 0 };
	char *line, err[512], v[3][32];
	const char *text, *why;
	size_t len, tlen;
	int T = opt.seq ? opt.seq : m->cfg.maxpos, r;
	int stride = opt.stride ? opt.stride : T / 2;
	int count;
	unsigned long long nrec = 0, ntok = 0, nonfinite = 0;
	double nll, total = 0, t0 = owt_now();

	if (stride >= T || stride < 1)
		owt_die(XUSAGE, "--score-stride %d: must be below the window "
		    "of %d tokens", stride, T);
	if (gpt_infer_init(&inf, m, 1, T, T, err, sizeof err) < 0)
		owt_die(XSYS, "%s", err);
	if (opt.int8)
		gpt_infer_quantize(&inf);
	while ((r = input_line(in, &line, &len)) != 0) {
		if (r < 0) {
			if (in->errcode != XDATA)
				owt_die(in->errcode, "%s", in->err);
			if (bad("%s", in->err) < 0)
				break;
			continue;
		}
		if (jsonl_parse(&rec, line, len, err, sizeof err) != 0) {
			if (bad("%s:%lu: %s", in->name, in->lineno, err) < 0)
				break;
			continue;
		}
		if ((text = jsonl_str(&rec, opt.key, &tlen, &why)) == NULL) {
			if (bad("%s:%lu: '%s' is %s", in->name, in->lineno,
			    opt.key, why) < 0)
				break;
			continue;
		}
		ids.n = 0;
		bpe_encode(bs, text, tlen, &ids);
		ids.v = xgrow(ids.v, &ids.cap, ids.n + 1, sizeof *ids.v);
		ids.v[ids.n++] = bpe_eod(vocab);
		gen_score(&inf, (const int32_t *)ids.v, (int)ids.n, T, stride,
		    &nll, &count);
		if (count > 0 && isfinite(nll)) {
			snprintf(v[0], sizeof v[0], "%.9g", nll / count);
			snprintf(v[1], sizeof v[1], "%.9g", exp(nll / count));
		} else {	/* no tokens, or NaN and inf, which JSON lacks */
			strcpy(v[0], "null");
			strcpy(v[1], "null");
		}
		snprintf(v[2], sizeof v[2], "%d", count);
		ed[0] = (struct jsonl_edit){ "nll", v[0], strlen(v[0]) };
		ed[1] = (struct jsonl_edit){ "ppl", v[1], strlen(v[1]) };
		ed[2] = (struct jsonl_edit){ "tokens", v[2], strlen(v[2]) };
		if (opt.ids) {
			idb.len = 0;
			json_ids(&idb, ids.v, ids.n);
			ed[3] = (struct jsonl_edit){ "ids", idb.p, idb.len };
		}
		out.len = 0;
		jsonl_write(&out, &rec, ed, opt.ids ? 4 : 3);
		fwrite(out.p, 1, out.len, stdout);
		out_check();
		nrec++;
		if (count > 0 && !isfinite(nll)) {
			nonfinite++;
			continue;
		}
		ntok += (unsigned long long)count;
		total += nll;
	}
	if (ntok > 0)
		say("%llu records, %llu tokens in %.1f s: nll %.6f, ppl %.4f",
		    nrec, ntok, owt_now() - t0, total / ntok, exp(total / ntok));
	else
		say("%llu records, no tokens", nrec);
	if (nonfinite) {
		owt_warn("%llu record%s a non-finite nll, written as null",
		    nonfinite, nonfinite == 1 ? " has" : "s have");
		status = XDATA;
	}
	free(ids.v);
	buf_free(&out);
	buf_free(&idb);
	gpt_infer_free(&inf);
}

/* The model in opt.load. */
static void
load(struct gpt *m)
{
	struct gpt_config cfg = { 0 };
	char err[1024], path[4096], cfgpath[4200];
	int code, k, kind;

	if (ckpt_resolve(opt.load, path, sizeof path, &kind, err, sizeof err,
	    &code) < 0 || kind == CKPT_NONE ||
	    ckpt_complete(path, 0, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	snprintf(cfgpath, sizeof cfgpath, "%s/config.json", path);
	if (ckpt_read_config(cfgpath, &cfg, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	cfg.vocab_pad = gpt_pad_vocab(cfg.vocab, 128);
	for (k = 0; k < 4; k++) {
		int v = k == 0 ? cfg.nlayer : k == 1 ? cfg.nembd : k == 2 ?
		    cfg.nhead : cfg.maxpos;

		if (opt.shape[k] && opt.shape[k] != v)
			owt_die(XDATA, "%s: %s is %d, but %s is %d", cfgpath,
			    shape_opts[k].key, v, shape_opts[k].flag,
			    opt.shape[k]);
	}
	if (opt.seq > cfg.maxpos)
		owt_die(XUSAGE, "--seq-length %d is beyond the %d positions of "
		    "the model", opt.seq, cfg.maxpos);
	if ((uint32_t)cfg.vocab < bpe_nvocab(vocab))
		owt_die(XDATA, "%s: vocab_size %d is smaller than the "
		    "tokenizer's %u tokens", cfgpath, cfg.vocab,
		    bpe_nvocab(vocab));
	if (ckpt_check_model(path, &cfg, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	if (gpt_device_open(&dev, opt.device, opt.prec, 0, err, sizeof err) < 0)
		owt_die(XUSAGE, "%s", err);
	if (gpt_init(m, &cfg, dev.be, err, sizeof err) < 0)
		owt_die(XDATA, "%s: %s", cfgpath, err);
	if (ckpt_load_model(path, m, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	say("GPT-2 from %s: %d layers, %d hidden, %d heads, %d positions, "
	    "vocabulary %d: %zu parameters", path, cfg.nlayer, cfg.nembd,
	    cfg.nhead, cfg.maxpos, cfg.vocab, gpt_nparams(&cfg));
}

int
main(int argc, char **argv)
{
	struct gpt model;
	struct input in;
	char err[1024];
	int code, interactive;

	owt_setprog(argv[0]);
	parse(argc, argv);
	if (opt.genfile && strcmp(opt.genfile, "-") != 0 &&
	    freopen(opt.genfile, "w", stdout) == NULL)
		owt_die_errno(XSYS, "cannot create '%s'", opt.genfile);
	if ((vocab = bpe_load(opt.vocab, opt.merges, &code, err,
	    sizeof err)) == NULL)
		owt_die(code, "%s", err);
	bs = bpe_state_new(vocab, 0);
	if (opt.workers == 0)
		opt.workers = owt_ncpu();
	omp_set_num_threads(opt.workers);
	blas_init(opt.workers);
	load(&model);
	say("%s%s", gpt_device_desc(&dev, opt.workers),
	    opt.int8 ? "; int8 weights" : "");
	if (input_open(&in, opt.input) < 0)
		owt_die(in.errcode, "%s", in.err);
	interactive = opt.interactive || (opt.input == NULL && !opt.score &&
	    isatty(0));
	if (interactive) {
		opt.batch = 1;
		opt.interactive = 1;
		signal(SIGINT, on_sigint);
	}
	keys = (const char *const[]){ opt.key };
	jsonl_rec_init(&rec, keys, 1);
	if (opt.score)
		score(&model, &in);
	else
		generate(&model, &in, interactive);
	if (nbad)
		say("%llu bad records%s", nbad, opt.keep_going ? " skipped" :
		    "; stopped at the first");
	fflush(stdout);
	out_check();
	jsonl_rec_free(&rec);
	input_close(&in);
	gpt_free(&model);
	bpe_state_free(bs);
	bpe_free(vocab);
	return owt_finish(status);
}
