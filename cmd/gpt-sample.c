/* gpt-sample - generate text from GPT-2 checkpoints (owt or Hugging Face), or score texts */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/blas.h"
#include "core/buf.h"
#include "tok/bpe.h"
#include "model/ckpt.h"
#include "train/ckpt_args.h"
#include "gen/gen.h"
#include "gen/gen_queue.h"
#include "model/gpt.h"
#include "model/gpt_device.h"
#include "model/gpt_infer.h"
#include "core/input.h"
#include "core/opt.h"
#include "gen/serve.h"
#include "core/util.h"

static struct {
	int keep_going, quiet, greedy, ids, int8, interactive, score, prec;
	int batch, nsamples, out_len, stride, top_k, workers, seq;
	int parallel, queue;
	double drain;
	int shape[4];		/* --num-layers ...: ckpt_args_config checks them */
	double temperature, top_p;
	uint64_t seed;
	const char *device, *genfile, *key, *load, *merges, *vocab, *input;
	const char *output, *listen, *name, *keyfile;
} opt = {
	.batch = 4, .out_len = 1024, .temperature = 1.0, .parallel = 4,
	.queue = 64, .drain = 30,
	.seed = 1234, .prec = GPT_PREC_DEFAULT,
};

static struct bpe *vocab;
static struct gpt_device dev;
static struct gen_queue q;
static int status = XOK;
static unsigned long long nbad;
static volatile sig_atomic_t interrupted;
static const char *outname;	/* the output's name, NULL: standard output */

/* A log line, unless -q. */
#define say(...) do { if (!opt.quiet) owt_warn(__VA_ARGS__); } while (0)

static const struct opt opts[] = {
	OPT_ROW_HELP,
	OPT_ROW_KEEP_GOING(&opt.keep_going,
	    "skip bad records (still exit 1)"),
	OPT_ROW_QUIET(&opt.quiet,
	    "no log or summary on stderr"),
	{ .name = "api-key-file", .arg = "file", .type = OPT_STR,
	    .p = &opt.keyfile,
	    .help = "--listen: requests need Authorization: Bearer (file)" },
	{ .name = "device", .arg = "dev", .type = OPT_STR, .p = &opt.device,
	    .help = "auto, cpu or cuda ($OWT_DEVICE, else auto)" },
	{ .name = "drain-timeout", .arg = "s", .type = OPT_DOUBLE,
	    .p = &opt.drain, .max = 1e6,
	    .help = "--listen: SIGTERM lets requests run s seconds (30)" },
	{ .name = "fp16", .type = OPT_MODE, .p = &opt.prec, .value = GPT_FP16,
	    .help = "fp16 matrix products (cuda; on the cpu fp32)" },
	/* After --fp16: "--fp16, --bf16 and --fp32 exclude each other" */
	{ .name = "bf16", .type = OPT_MODE, .p = &opt.prec, .value = GPT_BF16,
	    .help = "bf16 matrix products (cuda; on the cpu fp32)" },
	{ .name = "fp32", .type = OPT_MODE, .p = &opt.prec, .value = GPT_FP32,
	    .help = "fp32 throughout (the default)" },
	{ .name = "genfile", .arg = "file", .type = OPT_STR, .p = &opt.genfile,
	    .help = "write JSONL records to file (standard output)" },
	{ .name = "greedy", .type = OPT_FLAG, .p = &opt.greedy,
	    .help = "always the most likely token" },
	{ .name = "hidden-size", .arg = "n", .type = OPT_INT,
	    .p = &opt.shape[1], .min = 1, .max = 1 << 20,
	    .help = "check the model's n_embd" },
	{ .name = "ids", .type = OPT_FLAG, .p = &opt.ids,
	    .help = "add the token ids to JSONL records" },
	{ .name = "int8", .type = OPT_FLAG, .p = &opt.int8,
	    .help = "int8 weight matrices" },
	{ .name = "interactive", .type = OPT_FLAG, .p = &opt.interactive,
	    .help = "one prompt at a time (implied on a terminal)" },
	{ .name = "json-keys", .arg = "key", .type = OPT_STR, .p = &opt.key,
	    .help = "the prompt field (prompt), with --score the text field "
	    "(text)" },
	{ .name = "listen", .arg = "[addr:]port", .type = OPT_STR,
	    .p = &opt.listen,
	    .help = "serve HTTP (loopback unless addr); see SERVING" },
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
	{ .name = "num-layers", .arg = "n", .type = OPT_INT,
	    .p = &opt.shape[0], .min = 1, .max = 1 << 20,
	    .help = "check the model's n_layer" },
	{ .name = "num-samples", .arg = "n", .type = OPT_INT, .p = &opt.nsamples,
	    .max = 1 << 20, .help = "samples per prompt (1; 0 is 1, as in "
	    "Megatron); without --sample-input-file, n unconditional ones" },
	{ .name = "out-seq-length", .arg = "n", .type = OPT_INT,
	    .p = &opt.out_len, .max = 1 << 30,
	    .help = "tokens to generate at most (1024)" },
	{ .name = "parallel", .arg = "n", .type = OPT_INT, .p = &opt.parallel,
	    .min = 1, .max = 64,
	    .help = "--listen: samples decoded together (4)" },
	{ .name = "pipeline-model-parallel-size", .arg = "n", .type = OPT_NOTE,
	    .help = "accepted for Megatron's scripts; no effect" },
	{ .name = "queue", .arg = "n", .type = OPT_INT, .p = &opt.queue,
	    .max = 1 << 20,
	    .help = "--listen: requests waiting at most, then 429 (64)" },
	{ .name = "recompute", .type = OPT_NOTE,
	    .help = "accepted for Megatron's scripts; no effect" },
	{ .name = "sample-input-file", .arg = "file", .type = OPT_STR,
	    .p = &opt.input,
	    .help = "read prompts or records from file (standard input)" },
	{ .name = "sample-output-file", .arg = "file", .type = OPT_STR,
	    .p = &opt.output,
	    .help = "write Megatron-LM's Context/Megatron-LM text to file" },
	{ .name = "score", .type = OPT_FLAG, .p = &opt.score,
	    .help = "write each record's nll, ppl and tokens" },
	{ .name = "score-stride", .arg = "n", .type = OPT_INT, .p = &opt.stride,
	    .min = 1, .max = 1 << 30,
	    .help = "--score: windows start n tokens apart (half the context)" },
	{ .name = "served-model-name", .arg = "name", .type = OPT_STR,
	    .p = &opt.name,
	    .help = "--listen: the model's name (--load's last component)" },
	{ .name = "seed", .arg = "n", .type = OPT_U64, .p = &opt.seed,
	    .max = 4294967295.0, .help = "seed of the draws (1234)" },
	{ .name = "seq-length", .arg = "n", .type = OPT_INT, .p = &opt.seq,
	    .min = 2, .max = 1 << 20,
	    .help = "prompt and text at most n tokens (the model's positions)" },
	{ .name = "temperature", .arg = "x", .type = OPT_DOUBLE,
	    .p = &opt.temperature, .max = 1e6,
	    .help = "divide the logits by x; 0: greedy (1.0)" },
	{ .name = "tensor-model-parallel-size", .arg = "n", .type = OPT_NOTE,
	    .help = "accepted for Megatron's scripts; no effect" },
	{ .name = "tokenizer-type", .arg = "GPT2BPETokenizer", .type = OPT_STR,
	    .check = bpe_check_tokenizer, .help = "the only one" },
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
	OPT_ROW_VERSION,
	{ .name = "vocab-file", .arg = "file", .type = OPT_STR, .p = &opt.vocab,
	    .help = "the BPE vocabulary (the shipped GPT-2 encoder.json)" },
	{ .name = "workers", .arg = "n", .type = OPT_INT, .p = &opt.workers,
	    .min = 1, .max = 1024, .help = "threads (all processors)" },
};

#define NOPTS (sizeof opts / sizeof *opts)

static const struct opt_prog options = { "gpt-sample", opts, NOPTS, NULL, 30,
    &opt.quiet };
static char given[NOPTS];

/*
 * --listen: each protocol's fields choose the sampling, so the options
 * that would are refused; the serving options need it.
 */
static void
serving(void)
{
	static const char *const sampling[] = { "temperature", "top-k",
	    "top-p", "out-seq-length", "seed", "genfile", "sample-input-file",
	    "sample-output-file", "score", "interactive", "greedy",
	    "num-samples", "ids", "json-keys", "score-stride", "keep-going" };
	static const char *const server[] = { "parallel", "queue",
	    "served-model-name", "drain-timeout", "api-key-file" };
	size_t i;
	int k;

	for (i = 0; i < sizeof sampling / sizeof *sampling; i++)
		if (opt.listen && given[k = opt_find(&options, sampling[i])])
			owt_die(XUSAGE, "--%s and --listen exclude each other: "
			    "requests choose", opts[k].name);
	for (i = 0; i < sizeof server / sizeof *server; i++)
		if (!opt.listen && given[k = opt_find(&options, server[i])])
			owt_die(XUSAGE, "--%s needs --listen", opts[k].name);
	if (opt.listen && given[opt_find(&options, "micro-batch-size")] &&
	    !given[opt_find(&options, "parallel")]) {
		if (opt.batch > 64)
			owt_die(XUSAGE, "--micro-batch-size %d: --listen takes "
			    "at most 64", opt.batch);
		opt.parallel = opt.batch;	/* Megatron's scripts' name */
	}
}

static void
parse(int argc, char **argv)
{
	int first = owt_options(&options, argc, argv, given);

	if (first < argc)
		owt_die(XUSAGE, "unexpected operand '%s'", argv[first]);
	if (opt.load == NULL)
		owt_die(XUSAGE, "no model: give --load dir");
	if ((opt.vocab == NULL) != (opt.merges == NULL))
		owt_die(XUSAGE, "--vocab-file and --merge-file go together");
	if (opt.score && opt.interactive)
		owt_die(XUSAGE, "--score and --interactive exclude each other");
	if (opt.score && opt.output)
		owt_die(XUSAGE, "--score and --sample-output-file exclude each "
		    "other");
	if (opt.key == NULL)
		opt.key = opt.score ? "text" : "prompt";
	serving();
}

/*
 * The output and its format. Megatron's file mode and unconditional mode
 * write its own formats, where --sample-output-file or, without prompts,
 * --num-samples ask for them; otherwise text, or JSONL with --genfile.
 */
static void
output(struct gen_queue_opts *qo)
{
	if (opt.nsamples > 0 && opt.input == NULL && !opt.interactive &&
	    !opt.score) {
		qo->format = GEN_QUEUE_UNCOND;
		outname = opt.genfile;
		if (opt.output)
			say("--sample-output-file: not written: --num-samples "
			    "without --sample-input-file writes --genfile");
	} else if (opt.output) {
		qo->format = GEN_QUEUE_MEGATRON;
		outname = opt.output;
		if (opt.genfile)
			say("--genfile: not written: samples of prompts go to "
			    "--sample-output-file");
	} else {
		qo->format = opt.genfile ? GEN_QUEUE_JSONL : GEN_QUEUE_TEXT;
		outname = opt.genfile;
	}
	qo->nsamples = opt.nsamples;
	qo->ids = opt.ids;
	qo->key = opt.key;
	if (outname && strcmp(outname, "-") != 0 &&
	    freopen(outname, "w", stdout) == NULL)
		owt_die_errno(XSYS, "cannot create '%s'", outname);
}

/* A failed write stops the run, naming the output. */
static void
out_check(void)
{
	if (!q.werrno && !ferror(stdout))
		return;
	errno = q.werrno ? q.werrno : errno ? errno : EIO;
	if (outname && strcmp(outname, "-") != 0)
		owt_die_errno(XSYS, "%s: write error", outname);
	owt_die_errno(XSYS, "write error on standard output");
}

/*
 * A failed read: a bad record is reported and counted, and stops the
 * run unless -k (-1); others exit.
 */
static int
bad(int code, const char *err)
{
	if (code != XDATA)
		owt_die(code, "%s", err);
	owt_warn("%s", err);
	nbad++;
	status = XDATA;
	return opt.keep_going ? 0 : -1;
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

/* The inference state: S slots, N rows a step, NL of them with logits. */
static void
infer_init(struct gpt_infer *inf, struct gpt *m, int S, int N, int NL)
{
	char err[OWT_ERRSIZE];
	int code;

	if (gpt_infer_init(inf, m, S, N, NL, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	if (opt.int8)
		gpt_infer_quantize(inf);
}

/* Generate from each prompt of in (none: unconditional) until its end. */
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
	int more = in != NULL, tty = interactive && isatty(0), r, code;
	char err[1024];
	double t0;

	infer_init(&inf, m, opt.batch, o.ctx - 1 > opt.batch ? o.ctx - 1 :
	    opt.batch, opt.batch);
	gen_queue_model(&q, &inf, &o);
	if (in == NULL && gen_queue_add(&q, "", 0, 1, err, sizeof err) < 0)
		owt_die(XUSAGE, "%s", err);
	t0 = owt_now();
	for (;;) {
		while (more && gen_queue_wants(&q) && !(interactive && q.head)) {
			if (tty) {
				fputs("> ", stderr);
				fflush(stderr);
				interrupted = 1;	/* ^C at the prompt exits */
			}
			while ((r = gen_queue_read(&q, in, err, sizeof err,
			    &code)) < 0 && bad(code, err) == 0)
				;
			more = r > 0;
			interrupted = 0;
			out_check();
		}
		if (gen_queue_step(&q) == 0 && !more)
			break;
		out_check();
		if (interrupted) {
			gen_queue_stop(&q);
			interrupted = 0;
		}
	}
	say("%llu prompts, %llu samples, %llu tokens in %.1f s, %.1f tokens/s",
	    q.nprompts, q.nsamples, q.ntokens, owt_now() - t0,
	    q.ntokens / fmax(owt_now() - t0, 1e-9));
	if (gpt_device_peak_bytes(&dev) > 0)
		say("peak GPU memory %.2f GB", gpt_device_peak_bytes(&dev) / 1e9);
	gpt_infer_free(&inf);
}

/* Score each record of in: nll, ppl and tokens added. */
static void
score(struct gpt *m, struct input *in)
{
	struct gpt_infer inf;
	struct buf out = { 0 };
	char err[1024];
	int T = opt.seq ? opt.seq : m->cfg.maxpos, r, code;
	int stride = opt.stride ? opt.stride : T / 2;
	double t0 = owt_now();

	if (stride >= T || stride < 1)
		owt_die(XUSAGE, "--score-stride %d: must be below the window "
		    "of %d tokens", stride, T);
	infer_init(&inf, m, 1, T, T);
	while ((r = gen_queue_score_read(&q, &inf, T, stride, in, &out, err,
	    sizeof err, &code)) != 0) {
		if (r < 0) {
			if (bad(code, err) < 0)
				break;
			continue;
		}
		fwrite(out.p, 1, out.len, stdout);
		out_check();
	}
	if (q.nscored > 0)
		say("%llu records, %llu tokens in %.1f s: nll %.6f, ppl %.4f",
		    q.nrec, q.nscored, owt_now() - t0, q.nll / q.nscored,
		    exp(q.nll / q.nscored));
	else
		say("%llu records, no tokens", q.nrec);
	if (q.nonfinite) {
		owt_warn("%llu record%s a non-finite nll, written as null",
		    q.nonfinite, q.nonfinite == 1 ? " has" : "s have");
		status = XDATA;
	}
	buf_free(&out);
	gpt_infer_free(&inf);
}

/* The model in opt.load. */
static void
load(struct gpt *m)
{
	struct gpt_config cfg = { 0 };
	char err[1024], path[4096], cfgpath[4200];
	int code, kind;

	if (ckpt_resolve(opt.load, path, sizeof path, &kind, err, sizeof err,
	    &code) < 0 || kind == CKPT_NONE ||
	    ckpt_complete(path, 0, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	snprintf(cfgpath, sizeof cfgpath, "%s/config.json", path);
	if (ckpt_read_config(cfgpath, &cfg, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	cfg.vocab_pad = gpt_pad_vocab(cfg.vocab, 128);
	if (ckpt_args_config(&options, given, path, &cfg, err, sizeof err,
	    &code) < 0)
		owt_die(code, "%s", err);
	if (opt.seq > cfg.maxpos)
		owt_die(XUSAGE, "--seq-length %d is beyond the %d positions of "
		    "the model", opt.seq, cfg.maxpos);
	if ((uint32_t)cfg.vocab < bpe_nvocab(vocab))
		owt_die(XDATA, "%s: vocab_size %d is smaller than the "
		    "tokenizer's %u tokens", cfgpath, cfg.vocab,
		    bpe_nvocab(vocab));
	if (ckpt_check_model(path, &cfg, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	/* a Megatron script's --fp16 runs on the cpu too: in fp32, a warning */
	if (gpt_device_open(&dev, opt.device, opt.prec, 0, err, sizeof err,
	    &code) < 0)
		owt_die(code, "%s", err);
	if (dev.warn[0] != '\0')
		owt_warn("%s", dev.warn);
	if (gpt_init(m, &cfg, dev.be, err, sizeof err) < 0)
		owt_die(XDATA, "%s: %s", cfgpath, err);
	if (ckpt_load_model(path, m, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	say("GPT-2 from %s: %d layers, %d hidden, %d heads, %d positions, "
	    "vocabulary %d: %zu parameters", path, cfg.nlayer, cfg.nembd,
	    cfg.nhead, cfg.maxpos, cfg.vocab, gpt_nparams(&cfg));
}

/* --served-model-name, else the last component of --load as given. */
static const char *
model_name(void)
{
	static char name[256];
	size_t n = strlen(opt.load), e;

	if (opt.name != NULL)
		return opt.name;
	while (n > 1 && opt.load[n - 1] == '/')
		n--;
	e = n;
	while (n > 0 && opt.load[n - 1] != '/')
		n--;
	snprintf(name, sizeof name, "%.*s", (int)(e - n), opt.load + n);
	return name;
}

/* The key of --api-key-file: its first line. */
static char *
api_key(void)
{
	struct buf b = { 0 };
	char chunk[512];
	size_t n;
	FILE *f;

	if (opt.keyfile == NULL)
		return NULL;
	if ((f = fopen(opt.keyfile, "r")) == NULL)
		owt_die_errno(XSYS, "cannot open '%s'", opt.keyfile);
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_add(&b, chunk, n);
	if (ferror(f))
		owt_die_errno(XSYS, "%s: read error", opt.keyfile);
	fclose(f);
	b.len = strcspn(b.p ? b.p : "", "\r\n");
	if (b.len == 0)
		owt_die(XDATA, "%s: no key on its first line", opt.keyfile);
	b.p[b.len] = '\0';
	return b.p;
}

/* --listen: the port bound first (/health answers 503), then the model. */
static void
serve_model(void)
{
	struct serve_opts so = {
		.listen = opt.listen, .name = model_name(),
		.parallel = opt.parallel, .queue = opt.queue, .ctx = opt.seq,
		.drain = opt.drain, .quiet = opt.quiet, .key = api_key(),
	};
	struct serve *sv;
	struct gpt m;
	struct gpt_infer inf;
	char err[1024];
	int code, T, NL;

	if ((sv = serve_open(&so, vocab, err, sizeof err, &code)) == NULL)
		owt_die(code, "%s", err);
	say("listening on http://%s", serve_addr(sv));
	load(&m);
	say("%s%s", gpt_device_desc(&dev, opt.workers),
	    opt.int8 ? "; int8 weights" : "");
	T = opt.seq ? opt.seq : m.cfg.maxpos;
	NL = opt.parallel > 64 ? opt.parallel : 64;
	infer_init(&inf, &m, opt.parallel, T - 1 > opt.parallel ? T - 1 :
	    opt.parallel, NL < T - 1 ? NL : T - 1 > opt.parallel ? T - 1 :
	    opt.parallel);
	say("%d slots of %d positions, %.1f MB of key/value cache each; "
	    "ready as '%s'", opt.parallel, m.cfg.maxpos, 2.0 * m.cfg.nlayer *
	    m.cfg.maxpos * m.cfg.nembd * sizeof(float) / 1e6, so.name);
	serve_run(sv, &inf);
	say("stopped");
	serve_close(sv);
	free((char *)so.key);
	gpt_infer_free(&inf);
	gpt_free(&m);
}

int
main(int argc, char **argv)
{
	struct gen_queue_opts qo = { 0 };
	struct gpt model;
	struct input in;
	struct bpe_state *bs;
	char err[1024];
	int code, interactive, uncond;

	owt_setprog(argv[0]);
	parse(argc, argv);
	output(&qo);
	uncond = qo.format == GEN_QUEUE_UNCOND;
	if ((vocab = bpe_load(opt.vocab, opt.merges, err,
	    sizeof err, &code)) == NULL)
		owt_die(code, "%s", err);
	bs = bpe_state_new(vocab, 0);
	if (opt.workers == 0)
		opt.workers = owt_ncpu();
	omp_set_num_threads(opt.workers);
	blas_init(opt.workers);
	if (opt.listen) {
		serve_model();
		bpe_state_free(bs);
		bpe_free(vocab);
		return owt_finish(status);
	}
	load(&model);
	say("%s%s", gpt_device_desc(&dev, opt.workers),
	    opt.int8 ? "; int8 weights" : "");
	if (!uncond && input_open(&in, opt.input) < 0)
		owt_die(in.errcode, "%s", in.err);
	interactive = opt.interactive || (opt.input == NULL && !opt.score &&
	    !uncond && isatty(0));
	if (interactive) {
		opt.batch = 1;
		qo.flush = 1;
		signal(SIGINT, on_sigint);
	}
	gen_queue_init(&q, &qo, vocab, bs, stdout);
	if (opt.score)
		score(&model, &in);
	else
		generate(&model, uncond ? NULL : &in, interactive);
	if (nbad)
		say("%llu bad records%s", nbad, opt.keep_going ? " skipped" :
		    "; stopped at the first");
	fflush(stdout);
	out_check();
	gen_queue_free(&q);
	if (!uncond)
		input_close(&in);
	gpt_free(&model);
	bpe_state_free(bs);
	bpe_free(vocab);
	return owt_finish(status);
}
