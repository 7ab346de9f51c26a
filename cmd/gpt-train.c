/* gpt-train - train GPT-2 on Megatron indexed datasets, saving Hugging Face checkpoints */
#include <errno.h>
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "model/blas.h"
#include "tok/bpe.h"
#include "tok/tokenizer.h"
#include "train/ckpt_args.h"
#include "model/gpt.h"
#include "train/gpt_data.h"
#include "model/gpt_device.h"
#include "core/opt.h"
#include "train/schedule.h"
#include "train/train.h"
#include "train/train_prep.h"
#include "train/train_run.h"
#include "core/util.h"

/* What a checkpoint does to an option: ckpt_args.h. */
enum { C_ARG = CKPT_ARGS_KEEP, C_SCHED = CKPT_ARGS_SCHED,
    C_MODEL = CKPT_ARGS_MODEL };

static struct train_opts o = {
	.prec = GPT_PREC_DEFAULT,
	.layers = 12, .hidden = 768, .heads = 12, .seq = 1024, .maxpos = 1024,
	.vocab = 50257, .vocab_div = 128, .init_std = 0.02, .micro = 4,
	.hidden_dropout = 0.1, .attn_dropout = 0.1, .lr = 6e-4,
	.decay_style = "linear", .wd = 0.01, .clip = 1.0, .beta1 = 0.9,
	.beta2 = 0.999, .eps = 1e-8, .split = "969, 30, 1",
	.split_rounding = "legacy",
	.initial_scale = 4294967296.0, .min_scale = 1, .scale_window = 1000,
	.hysteresis = 2,
	.seed = 1234, .eval_interval = 1000, .eval_iters = 100,
	.log_interval = 100, .tp = 1, .pp = 1, .dist_timeout = 10,
	.ranks_per_node = 8,
	.recompute_n = 1,
};

static int
check_style(const struct opt *d, const char *arg, char *err, size_t errsize)
{
	if (schedule_style(arg) >= 0)
		return 0;
	return owt_fail(err, errsize, NULL, XUSAGE,
	    "--%s: '%s' is not constant, linear, cosine or "
	    "inverse-square-root", d->name, arg);
}

/* A count of samples kept as a double (the warmup may be fractional). */
static int
check_whole(const struct opt *d, const char *arg, char *err, size_t errsize)
{
	char flag[64];
	long long v;

	snprintf(flag, sizeof flag, "--%s", d->name);
	return opt_scan_int(flag, arg, 0, (long long)d->max, &v, err, errsize);
}

static const struct opt opts[] = {
	OPT_ROW_HELP,
	OPT_ROW_QUIET(&o.quiet,
	    "no log lines, only warnings and errors"),
	{ .name = "DDP-impl", .arg = "impl", .type = OPT_NOTE,
	    .p = &o.ddp_impl, .check = opt_check_word, .words = "local torch",
	    .help = "no effect: PyTorch's data-parallel wrapper" },
	{ .name = "adam-beta1", .arg = "x", .type = OPT_DOUBLE, .p = &o.beta1,
	    .max = 0.999999, .tag = C_ARG, .help = "AdamW beta1 (0.9)" },
	{ .name = "adam-beta2", .arg = "x", .type = OPT_DOUBLE, .p = &o.beta2,
	    .max = 0.999999, .tag = C_ARG, .help = "AdamW beta2 (0.999)" },
	{ .name = "adam-eps", .arg = "x", .type = OPT_DOUBLE, .p = &o.eps,
	    .min = 1e-30, .max = 1, .tag = C_ARG,
	    .help = "AdamW epsilon (1e-8)" },
	{ .name = "attention-dropout", .arg = "p", .type = OPT_DOUBLE,
	    .p = &o.attn_dropout, .max = 0.99, .tag = C_ARG,
	    .help = "dropout on attention probabilities (0.1)" },
	{ .name = "checkpoint-activations", .type = OPT_FLAG, .p = &o.ckpt_act,
	    .help = "recompute every layer in the backward pass (Megatron "
	    "v2.5)" },
	{ .name = "checkpoint-num-layers", .arg = "n", .type = OPT_INT,
	    .p = &o.recompute_n, .min = 1, .max = 1 << 12,
	    .help = "layers per recomputed chunk (1)" },
	{ .name = "clip-grad", .arg = "x", .type = OPT_DOUBLE, .p = &o.clip,
	    .max = 1e30, .tag = C_ARG,
	    .help = "clip the global gradient norm to x; 0: off (1.0)" },
	{ .name = "data-impl", .arg = "impl", .type = OPT_NOTE,
	    .check = opt_check_word, .words = "mmap infer",
	    .why = " (owt reads Megatron's mmap datasets only)",
	    .help = "no effect: datasets are read as mmap" },
	{ .name = "data-path", .arg = "[weight] prefix ...", .type = OPT_STR,
	    .p = &o.data_paths, .flags = OPT_REPEAT,
	    .help = "datasets PREFIX.bin/.idx, blended by weight" },
	{ .name = "device", .arg = "dev", .type = OPT_STR, .p = &o.device,
	    .help = "auto, cpu or cuda ($OWT_DEVICE, else auto)" },
	{ .name = "distribute-checkpointed-activations", .type = OPT_NOTE,
	    .help = "no effect: tensor parallelism's memory split" },
	{ .name = "distributed-backend", .arg = "backend", .type = OPT_NOTE,
	    .p = &o.dist_backend, .check = opt_check_word, .words = "nccl gloo",
	    .help = "no effect: owt uses NCCL on GPUs, MPI on CPUs" },
	{ .name = "distributed-timeout-minutes", .arg = "x", .type = OPT_DOUBLE,
	    .p = &o.dist_timeout, .min = 1e-3, .max = 1e6,
	    .help = "a rank waiting longer in a collective ends the run (10)" },
	{ .name = "dry-run", .type = OPT_FLAG, .p = &o.dry_run,
	    .help = "print the layout's parameters, memory, communication, "
	    "bubble and FLOPs per rank, and exit" },
	{ .name = "eval-interval", .arg = "n", .type = OPT_U64,
	    .p = &o.eval_interval, .min = 1, .max = 1e15, .tag = C_ARG,
	    .help = "validation loss every n iterations (1000)" },
	{ .name = "eval-iters", .arg = "n", .type = OPT_U64,
	    .p = &o.eval_iters, .max = 1e15, .tag = C_ARG,
	    .help = "batches per evaluation; 0: none (100)" },
	{ .name = "exit-duration-in-mins", .arg = "x", .type = OPT_DOUBLE,
	    .p = &o.exit_mins, .min = 1e-9, .max = 1e9,
	    .help = "save and exit after x minutes of training" },
	{ .name = "exit-interval", .arg = "n", .type = OPT_U64,
	    .p = &o.exit_interval, .min = 1, .max = 1e15,
	    .help = "save and exit after iteration n, 2n, ..." },
	{ .name = "finetune", .type = OPT_FLAG, .p = &o.finetune,
	    .help = "load only the weights; iteration 0, new optimizer" },
	{ .name = "force", .type = OPT_FLAG, .p = &o.force,
	    .help = "a new run replaces the checkpoints in --save" },
	{ .name = "fp16", .type = OPT_MODE, .p = &o.prec, .value = GPT_FP16,
	    .help = "fp16 matrix products with dynamic loss scaling (cuda)" },
	/* After --fp16: "--fp16, --bf16 and --fp32 exclude each other" */
	{ .name = "bf16", .type = OPT_MODE, .p = &o.prec, .value = GPT_BF16,
	    .help = "bf16 matrix products (cuda; the default on sm_80 and "
	    "newer)" },
	{ .name = "fp32", .type = OPT_MODE, .p = &o.prec, .value = GPT_FP32,
	    .help = "fp32 throughout (the cpu backend's only mode)" },
	{ .name = "global-batch-size", .arg = "n", .type = OPT_INT,
	    .p = &o.global, .min = 1, .max = CKPT_MAX_BATCH, .tag = C_ARG,
	    .help = "sequences per iteration (the micro-batch size)" },
	{ .name = "hidden-dropout", .arg = "p", .type = OPT_DOUBLE,
	    .p = &o.hidden_dropout, .max = 0.99, .tag = C_ARG,
	    .help = "dropout after embeddings and residual branches (0.1)" },
	{ .name = "hidden-size", .arg = "n", .type = OPT_INT, .p = &o.hidden,
	    .min = 1, .max = 1 << 16, .tag = C_MODEL,
	    .help = "channels (768)" },
	{ .name = "hysteresis", .arg = "n", .type = OPT_U64,
	    .p = &o.hysteresis, .min = 1, .max = 1e15,
	    .help = "fp16: overflows before the loss scale halves (2)" },
	{ .name = "init-method-std", .arg = "x", .type = OPT_DOUBLE,
	    .p = &o.init_std, .max = 10,
	    .help = "standard deviation of the initial weights (0.02)" },
	{ .name = "initial-loss-scale", .arg = "x", .type = OPT_DOUBLE,
	    .p = &o.initial_scale, .min = 1, .max = 1e38,
	    .help = "fp16: the first loss scale (4294967296)" },
	{ .name = "load", .arg = "dir", .type = OPT_STR, .p = &o.load,
	    .help = "resume from a checkpoint, or start from HF weights" },
	{ .name = "local_rank", .arg = "n", .type = OPT_NOTE,
	    .help = "no effect: torch.distributed.launch's" },
	{ .name = "log-interval", .arg = "n", .type = OPT_U64,
	    .p = &o.log_interval, .min = 1, .max = 1e15,
	    .help = "log every n iterations (100)" },
	{ .name = "log-json", .arg = "file", .type = OPT_STR, .p = &o.log_json,
	    .help = "also write the log as JSON lines to file" },
	{ .name = "loss-scale-window", .arg = "n", .type = OPT_U64,
	    .p = &o.scale_window, .min = 1, .max = 1e15,
	    .help = "fp16: clean iterations before the scale doubles (1000)" },
	{ .name = "lr", .arg = "x", .type = OPT_DOUBLE, .p = &o.lr, .max = 1e6,
	    .tag = C_SCHED, .help = "peak learning rate (6e-4; Megatron has none)" },
	{ .name = "lr-decay-iters", .arg = "n", .type = OPT_U64,
	    .p = &o.decay_iters, .min = 1, .max = 1e15,
	    .help = "decay over n iterations (--train-iters)" },
	{ .name = "lr-decay-samples", .arg = "n", .type = OPT_U64,
	    .p = &o.decay_samples, .min = 1, .max = 1e15, .tag = C_SCHED,
	    .help = "decay over n samples" },
	{ .name = "lr-decay-style", .arg = "style", .type = OPT_STR,
	    .p = &o.decay_style, .tag = C_SCHED, .check = check_style,
	    .help = "constant, linear, cosine, inverse-square-root (linear)" },
	{ .name = "lr-warmup-fraction", .arg = "x", .type = OPT_DOUBLE,
	    .p = &o.warmup_fraction, .max = 1,
	    .help = "warm up over this fraction of the decay (none)" },
	{ .name = "lr-warmup-iters", .arg = "n", .type = OPT_U64,
	    .p = &o.warmup_iters, .max = 1e15,
	    .help = "warm up over n iterations" },
	{ .name = "lr-warmup-samples", .arg = "n", .type = OPT_DOUBLE,
	    .p = &o.warmup_samples, .max = 1e15, .tag = C_SCHED,
	    .check = check_whole, .help = "warm up over n samples" },
	{ .name = "make-vocab-size-divisible-by", .arg = "n", .type = OPT_INT,
	    .p = &o.vocab_div, .min = 1, .max = 1 << 16,
	    .help = "pad the vocabulary to a multiple of n (128)" },
	{ .name = "max-position-embeddings", .arg = "n", .type = OPT_INT,
	    .p = &o.maxpos, .min = 1, .max = 1 << 20, .tag = C_MODEL,
	    .help = "positions of the model (1024)" },
	{ .name = "merge-file", .arg = "file", .type = OPT_STR,
	    .p = &o.tk.merges, .help = "GPT-2's merges (vocab.bpe), read" },
	{ .name = "micro-batch-size", .arg = "n", .type = OPT_INT,
	    .p = &o.micro, .min = 1, .max = 1 << 16, .tag = C_ARG,
	    .help = "sequences per forward pass (4)" },
	{ .name = "min-loss-scale", .arg = "x", .type = OPT_DOUBLE,
	    .p = &o.min_scale, .min = 1e-30, .max = 1e38,
	    .help = "fp16: the smallest loss scale (1)" },
	{ .name = "min-lr", .arg = "x", .type = OPT_DOUBLE, .p = &o.min_lr,
	    .max = 1e6, .tag = C_SCHED,
	    .help = "learning rate at the end of the decay (0)" },
	{ .name = "mock-data", .type = OPT_FLAG, .p = &o.mock,
	    .help = "train on generated counting sequences" },
	{ .name = "no-bias-dropout-fusion", .type = OPT_NOTE,
	    .help = "no effect: a kernel choice, the same numbers" },
	{ .name = "no-gradient-accumulation-fusion", .type = OPT_NOTE,
	    .help = "no effect: an APEX kernel choice" },
	{ .name = "no-load-optim", .type = OPT_FLAG, .p = &o.no_load_optim,
	    .help = "resume with new AdamW moments, not the saved ones" },
	{ .name = "no-load-rng", .type = OPT_NOTE,
	    .help = "no effect: owt's random numbers follow from the seed" },
	{ .name = "no-masked-softmax-fusion", .type = OPT_NOTE,
	    .help = "no effect: a kernel choice, the same numbers" },
	{ .name = "num-attention-heads", .arg = "n", .type = OPT_INT,
	    .p = &o.heads, .min = 1, .max = 1 << 12, .tag = C_MODEL,
	    .help = "attention heads (12)" },
	{ .name = "num-layers", .arg = "n", .type = OPT_INT, .p = &o.layers,
	    .min = 1, .max = 1 << 12, .tag = C_MODEL,
	    .help = "transformer layers (12)" },
	{ .name = "num-workers", .arg = "n", .type = OPT_NOTE,
	    .help = "no effect: PyTorch's data-loader processes" },
	{ .name = "overlap-grad-reduce", .type = OPT_FLAG, .p = &o.overlap_grad,
	    .help = "data parallel: reduce gradients during the backward pass" },
	{ .name = "override-lr-scheduler", .type = OPT_FLAG,
	    .p = &o.override_sched,
	    .help = "the options' learning-rate schedule, not the "
	    "checkpoint's" },
	{ .name = "override-opt_param-scheduler", .flags = OPT_ALIAS,
	    .help = "the same, later Megatron's spelling" },
	{ .name = "pipeline-model-parallel-size", .arg = "n", .type = OPT_INT,
	    .p = &o.pp, .min = 1, .max = 1 << 16,
	    .help = "pipeline stages, of the ranks (1)" },
	{ .name = "ranks-per-node", .arg = "n", .type = OPT_INT,
	    .p = &o.ranks_per_node, .min = 1, .max = 1 << 16,
	    .help = "--dry-run: ranks a node (8)" },
	{ .name = "recompute-activations", .type = OPT_FLAG,
	    .p = &o.recompute_act,
	    .help = "recompute the attention probabilities (selective)" },
	{ .name = "recompute-granularity", .arg = "g", .type = OPT_STR,
	    .p = &o.recompute_gran, .help = "full or selective" },
	{ .name = "recompute-method", .arg = "m", .type = OPT_STR,
	    .p = &o.recompute_method,
	    .help = "full: uniform (chunks) or block (the first n layers)" },
	{ .name = "recompute-num-layers", .arg = "n", .type = OPT_INT,
	    .p = &o.recompute_n, .min = 1, .max = 1 << 12,
	    .help = "full: layers per chunk, or layers recomputed (1)" },
	{ .name = "save", .arg = "dir", .type = OPT_STR, .p = &o.save,
	    .help = "save checkpoints under dir" },
	{ .name = "save-interval", .arg = "n", .type = OPT_U64,
	    .p = &o.save_interval, .min = 1, .max = 1e15,
	    .help = "save every n iterations (at the end only)" },
	{ .name = "seed", .arg = "n", .type = OPT_U64, .p = &o.seed,
	    .max = 4294967295.0, .tag = C_ARG,
	    .help = "data order, initial weights, dropout (1234)" },
	{ .name = "seq-length", .arg = "n", .type = OPT_INT, .p = &o.seq,
	    .min = 1, .max = 1 << 20, .tag = C_ARG,
	    .help = "tokens per sequence (1024)" },
	{ .name = "split", .arg = "s", .type = OPT_STR, .p = &o.split,
	    .tag = C_ARG, .help = "train, valid, test weights (969, 30, 1)" },
	{ .name = "split-rounding", .arg = "how", .type = OPT_STR,
	    .p = &o.split_rounding, .tag = C_ARG,
	    .help = "legacy (Megatron v2.5's) or core (legacy)" },
	{ .name = "tensor-model-parallel-size", .arg = "n", .type = OPT_INT,
	    .p = &o.tp, .min = 1, .max = 1 << 16,
	    .help = "tensor-parallel ranks (1)" },
	{ .name = "tensorboard-dir", .arg = "dir", .type = OPT_NOTE,
	    .help = "no effect: --log-json writes the log as JSON lines" },
	TOKENIZER_OPT_ROWS(&o.tk),
	{ .name = "train-iters", .arg = "n", .type = OPT_U64,
	    .p = &o.train_iters, .min = 1, .max = 1e15, .tag = C_ARG,
	    .help = "iterations to train" },
	{ .name = "train-samples", .arg = "n", .type = OPT_U64,
	    .p = &o.train_samples, .min = 1, .max = 1e15, .tag = C_ARG,
	    .help = "samples to train (instead of --train-iters)" },
	{ .name = "use-checkpoint-lr-scheduler", .type = OPT_FLAG,
	    .p = &o.use_ckpt_sched,
	    .help = "the checkpoint's learning-rate schedule, not the "
	    "options'" },
	{ .name = "use-distributed-optimizer", .type = OPT_FLAG,
	    .p = &o.dist_opt,
	    .help = "data parallel: shard the optimizer state (ZeRO-1)" },
	OPT_ROW_VERSION,
	{ .name = "vocab-file", .arg = "file", .type = OPT_STR,
	    .p = &o.tk.vocab,
	    .help = "GPT-2's encoder.json: the vocabulary, read" },
	{ .name = "vocab-size", .arg = "n", .type = OPT_INT, .p = &o.vocab,
	    .min = 2, .max = 1 << 30, .tag = C_MODEL,
	    .help = "the tokenizer's vocabulary (50257)" },
	{ .name = "weight-decay", .arg = "x", .type = OPT_DOUBLE, .p = &o.wd,
	    .max = 1e6, .tag = C_ARG,
	    .help = "AdamW weight decay, not on biases and LayerNorm (0.01)" },
	{ .name = "workers", .arg = "n", .type = OPT_INT, .p = &o.workers,
	    .min = 1, .max = 1024, .help = "threads (all processors)" },
	{ .name = "world-size", .arg = "n", .type = OPT_INT,
	    .p = &o.world_size, .min = 1, .max = 1 << 24,
	    .help = "--dry-run: ranks (the launcher's, or TP x PP)" },
};
#define NOPTS (sizeof opts / sizeof *opts)

static const struct opt_prog options = { "gpt-train", opts, NOPTS, NULL, 35,
    &o.quiet };

static char given[NOPTS];
static volatile sig_atomic_t stop_signal;

#define GIVEN(name) given[opt_find(&options, name)]

/* --dry-run: the plan on stdout, and exit. */
static void
dry_run(void)
{
	struct buf out = { 0 };
	char err[OWT_ERRSIZE];
	int code;

	if (train_prep_dry_run(&o, &options, given, &out, err, sizeof err,
	    &code) < 0)
		owt_die(code, "%s", err);
	if (fwrite(out.p, 1, out.len, stdout) != out.len || fflush(stdout) != 0)
		owt_die(XSYS, "stdout: %s", strerror(errno));
	buf_free(&out);
	exit(0);
}

static void
parse(int argc, char **argv)
{
	int first = owt_options(&options, argc, argv, given);

	if (first < argc && o.data_paths.n == 0)
		owt_die(XUSAGE, "unexpected operand '%s'", argv[first]);
	/* Megatron's --data-path takes several words: "0.7 A 0.3 B" */
	o.data_paths.v = xrealloc(o.data_paths.v, (o.data_paths.n +
	    (size_t)(argc - first)) * sizeof *o.data_paths.v);
	while (first < argc)
		o.data_paths.v[o.data_paths.n++] = argv[first++];

	if ((o.pp != 1 || o.tp != 1) && o.dist_opt)
		owt_die(XUSAGE, "--use-distributed-optimizer with tensor or "
		    "pipeline parallelism: not implemented");
	if (o.dry_run)
		dry_run();
	if (o.mock == (o.data_paths.n > 0))
		owt_die(XUSAGE, "%s", o.mock ? "--mock-data and --data-path "
		    "exclude each other" : "no data: give --data-path or "
		    "--mock-data");
	if (o.finetune && !o.load)
		owt_die(XUSAGE, "--finetune needs --load");
	if (GIVEN("train-iters") && GIVEN("train-samples"))
		owt_die(XUSAGE, "--train-iters and --train-samples exclude "
		    "each other");
	if ((o.tk.vocab == NULL) != (o.tk.merges == NULL))
		owt_die(XUSAGE, "--vocab-file and --merge-file go together");
	if (o.override_sched && o.use_ckpt_sched)
		owt_die(XUSAGE, "--override-lr-scheduler and "
		    "--use-checkpoint-lr-scheduler exclude each other");
}

static void
on_signal(int sig)
{
	stop_signal = sig;
}

/* A step of the run that failed: its message, or SIGPIPE for the log's reader gone. */
static void
fail(const struct train_run *r, int code, const char *err)
{
	if (r->sigpipe)
		owt_die_sigpipe();
	owt_die(code, "%s", err);
}

int
main(int argc, char **argv)
{
	static char rank_prog[64], errbuf[8192];
	static struct gpt model;
	static struct trainer tr;
	static struct train_ranks ranks;
	static struct gpt_device dev;
	struct gpt_config cfg = { 0 };
	struct train_prep pr = { 0 };
	struct train_run r;
	struct schedule_run run;
	struct gpt_data data;
	char err[OWT_ERRSIZE], *args;
	const char *prog;
	int code;

	/* a message in one write: the lines of ranks that fail together stay whole */
	setvbuf(stderr, errbuf, _IOLBF, sizeof errbuf);
	owt_setprog(argv[0]);
	prog = owt_prog;	/* the log's lines name no rank */
	parse(argc, argv);
	/*
	 * Under a launcher, every rank's messages name it, and rank 0 alone
	 * logs and saves.
	 */
	if (train_ranks_open(&ranks, o.dist_timeout * 60, err, sizeof err,
	    &code) < 0)
		owt_die(code, "%s", err);
	if (ranks.world->size > 1) {
		snprintf(rank_prog, sizeof rank_prog, "%s: rank %d", owt_prog,
		    ranks.world->rank);
		owt_prog = rank_prog;
		if (ranks.world->rank != 0)
			o.quiet = 1;
	}
	if (train_prep(&pr, &o, &options, given, 0, err, sizeof err,
	    &code) < 0 || train_prep_schedule(&o, &options, given, &run, err,
	    sizeof err, &code) < 0 || ckpt_args_check(&pr.ld, &options, given,
	    pr.sched, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	o.workers = train_prep_workers(o.workers, ranks.world->local_size);
	omp_set_num_threads(o.workers);
	blas_init(o.workers);

	train_prep_trainer(&tr, &cfg, &o, &pr, &run);
	if (train_ranks_layout(&ranks, &tr, o.tp, o.pp, &cfg, o.vocab_div,
	    o.global, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	gpt_device_use(ranks.world->local_rank);	/* a GPU per rank */
	/* a GPU's --fp16 or --bf16 trains in fp32 on the cpu: a warning */
	if (gpt_device_open(&dev, o.device, o.prec, 1, err, sizeof err,
	    &code) < 0 || gpt_device_comm(&dev, ranks.world, err, sizeof err,
	    &code) < 0)
		owt_die(code, "%s", err);
	if (dev.warn[0] != '\0')
		owt_warn("%s", dev.warn);
	args = ckpt_args_json(&options);
	r = (struct train_run){ .tr = &tr, .ranks = &ranks, .dev = &dev,
	    .data = &data, .args_json = args, .memory = !GIVEN("quiet"),
	    .prog = prog, .signal = &stop_signal };
	train_prep_run(&r, &o, &pr);
	if (train_run_model(&r, &model, &cfg, &pr.rc, pr.ld.kind != CKPT_NONE ?
	    pr.ld.path : NULL, pr.ld.resume && !o.no_load_optim, o.seed,
	    o.init_std, o.initial_scale, err, sizeof err, &code) < 0 ||
	    train_prep_data(&data, &o, &run, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	if (train_run_describe(&r, &cfg, o.workers, o.overlap_grad, err,
	    sizeof err, &code) < 0)
		fail(&r, code, err);

	if (o.log_json && ranks.world->rank == 0 && (r.json = fopen(o.log_json,
	    pr.ld.resume ? "a" : "w")) == NULL)
		owt_die_errno(XSYS, "cannot create '%s'", o.log_json);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	if (train_run_loop(&r, err, sizeof err, &code) < 0)
		fail(&r, code, err);
	if (r.json && fclose(r.json) != 0)
		owt_die_errno(XSYS, "%s: write error", o.log_json);
	gpt_data_close(&data);
	ckpt_args_free(&pr.ld);
	ckpt_tok_set(NULL);
	ckpt_tok_free(&pr.tok);
	train_free(&tr);
	gpt_free(&model);
	free(args);
	free(o.data_paths.v);
	if (train_ranks_close(&ranks, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	return owt_finish(XOK);
}
