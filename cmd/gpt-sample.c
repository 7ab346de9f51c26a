/* gpt-sample - generate text from GPT-2 checkpoints (owt or Hugging Face), or score texts */
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "model/blas.h"
#include "tok/tokenizer.h"
#include "gen/gen_queue.h"
#include "gen/sample.h"
#include "model/gpt.h"
#include "core/input.h"
#include "core/opt.h"
#include "core/util.h"

static struct sample_opts opt = {
	.batch = 4, .out_len = 1024, .temperature = 1.0, .parallel = 4,
	.queue = 64, .drain = 30,
	.seed = 1234, .prec = GPT_PREC_DEFAULT,
};
static struct sample run = { .o = &opt, .status = XOK };

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
	{ .name = "log-json", .arg = "file", .type = OPT_STR,
	    .p = &opt.log_json,
	    .help = "--listen: a JSON line per request to file, appended" },
	{ .name = "make-vocab-size-divisible-by", .arg = "n", .type = OPT_INT,
	    .p = &opt.vocab_div, .min = 1, .max = 1 << 16,
	    .help = "the model's vocabulary: the tokenizer's, padded to n's (128)" },
	{ .name = "max-position-embeddings", .arg = "n", .type = OPT_INT,
	    .p = &opt.shape[3], .min = 1, .max = 1 << 20,
	    .help = "check the model's n_positions" },
	{ .name = "merge-file", .arg = "file", .type = OPT_STR,
	    .p = &opt.tk.merges, .help = "GPT2BPETokenizer's merges" },
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
	TOKENIZER_OPT_ROWS(&opt.tk),
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
	{ .name = "vocab-file", .arg = "file", .type = OPT_STR,
	    .p = &opt.tk.vocab, .help = "the BPE vocabulary (GPT2BPETokenizer)" },
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
	    "served-model-name", "drain-timeout", "api-key-file", "log-json" };
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
	if ((opt.tk.vocab == NULL) != (opt.tk.merges == NULL))
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
		run.outname = opt.genfile;
		if (opt.output)
			say("--sample-output-file: not written: --num-samples "
			    "without --sample-input-file writes --genfile");
	} else if (opt.output) {
		qo->format = GEN_QUEUE_MEGATRON;
		run.outname = opt.output;
		if (opt.genfile)
			say("--genfile: not written: samples of prompts go to "
			    "--sample-output-file");
	} else {
		qo->format = opt.genfile ? GEN_QUEUE_JSONL : GEN_QUEUE_TEXT;
		run.outname = opt.genfile;
	}
	qo->nsamples = opt.nsamples;
	qo->ids = opt.ids;
	qo->key = opt.key;
	if (run.outname && strcmp(run.outname, "-") != 0 &&
	    freopen(run.outname, "w", stdout) == NULL)
		owt_die_errno(XSYS, "cannot create '%s'", run.outname);
}

int
main(int argc, char **argv)
{
	struct gen_queue_opts qo = { 0 };
	struct gpt model;
	struct input in;
	char err[OWT_ERRSIZE];
	int code, interactive, uncond, r;

	owt_setprog(argv[0]);
	parse(argc, argv);
	output(&qo);
	run.p = &options;
	run.given = given;
	uncond = qo.format == GEN_QUEUE_UNCOND;
	if (sample_tokenizer(&run, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	if (opt.workers == 0)
		opt.workers = owt_ncpu();
	omp_set_num_threads(opt.workers);
	blas_init(opt.workers);
	if (opt.listen) {
		if (sample_serve(&run, err, sizeof err, &code) < 0)
			owt_die(code, "%s", err);
		sample_tokenizer_free(&run);
		return owt_finish(run.status);
	}
	if (sample_load(&run, &model, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	say("%s%s", gpt_device_desc(&run.dev, opt.workers),
	    opt.int8 ? "; int8 weights" : "");
	if (!uncond && input_open(&in, opt.input) < 0)
		owt_die(in.errcode, "%s", in.err);
	interactive = opt.interactive || (opt.input == NULL && !opt.score &&
	    !uncond && isatty(0));
	if (interactive) {
		opt.batch = 1;
		qo.flush = 1;
		sample_catch_sigint();
	}
	gen_queue_init(&run.q, &qo, run.vocab, run.ts, stdout);
	if (opt.score)
		r = sample_score(&run, &model, &in, err, sizeof err, &code);
	else
		r = sample_generate(&run, &model, uncond ? NULL : &in,
		    interactive, err, sizeof err, &code);
	if (r < 0)
		owt_die(code, "%s", err);
	if (run.nbad)
		say("%llu bad records%s", run.nbad, opt.keep_going ?
		    " skipped" : "; stopped at the first");
	fflush(stdout);
	if (sample_out_check(&run, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	gen_queue_free(&run.q);
	if (!uncond)
		input_close(&in);
	gpt_free(&model);
	sample_tokenizer_free(&run);
	return owt_finish(run.status);
}
