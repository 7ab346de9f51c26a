/* sample.h - gpt-sample's run: the model of --load opened, prompts generated or texts scored, --listen served */
#ifndef OWT_SAMPLE_H
#define OWT_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/input.h"
#include "core/opt.h"
#include "gen/gen_queue.h"
#include "model/gpt.h"
#include "model/gpt_device.h"
#include "tok/bpe.h"
#include "tok/tokenizer.h"

/* gpt-sample's options, as its table sets them. */
struct sample_opts {
	int keep_going, quiet, greedy, ids, int8, interactive, score, prec;
	int batch, nsamples, out_len, stride, top_k, workers, seq;
	int parallel, queue;
	int vocab_div;		/* --make-vocab-size-divisible-by; 0: not given */
	double drain;
	int shape[4];		/* --num-layers ...: ckpt_args_config checks them */
	double temperature, top_p;
	uint64_t seed;
	const char *device, *genfile, *key, *load, *input;
	struct tokenizer_opts tk;	/* --tokenizer-type ..., --vocab-file ... */
	const char *output, *listen, *name, *keyfile, *log_json;
};

/*
 * A run: the options and their table (p, given: the model's shape
 * options are checked against config.json), the tokenizer, the device,
 * the queue of prompts and samples writing to the output (outname, NULL
 * for standard output), and what the run found: status (XDATA after a
 * bad record or a non-finite nll, else XOK) and nbad.
 */
struct sample {
	struct sample_opts *o;
	const struct opt_prog *p;
	const char *given;
	struct tokenizer *vocab;	/* sample_tokenizer's */
	struct tokenizer_state *ts;
	struct gpt_device dev;
	struct gen_queue q;
	const char *outname;
	int status;
	unsigned long long nbad;
};

/*
 * The tokenizer: the options' (tokenizer.h), or without them the one the
 * checkpoint of o->load keeps (ckpt_tok.h), or else the built-in GPT-2.
 * Where the checkpoint keeps one, the options' must be it: else -1 with
 * XUSAGE and err naming both sha256s (or types). Only the checkpoint's
 * small files are read (config.json, the tokenizer's copy).
 * 0, or -1 with err and *code. sample_tokenizer_free frees it.
 */
int sample_tokenizer(struct sample *s, char *err, size_t errsize, int *code);
void sample_tokenizer_free(struct sample *s);

/*
 * The model of o->load into m on o->device (ckpt_args_open, then
 * --seq-length and the tokenizer's vocabulary against it), its log line
 * unless quiet. 0, or -1 with err and *code.
 */
int sample_load(struct sample *s, struct gpt *m, char *err, size_t errsize,
    int *code);

/* SIGINT ends the samples running, a second one the process. */
void sample_catch_sigint(void);

/*
 * Generate from each prompt of in (NULL: unconditional) until its end,
 * one prompt at a time with interactive (a "> " prompt on a terminal),
 * then the summary unless quiet. A bad record is reported and counted,
 * and stops the reading unless keep_going. 0, or -1 with err and *code
 * (a read or write error, naming the output).
 */
int sample_generate(struct sample *s, struct gpt *m, struct input *in,
    int interactive, char *err, size_t errsize, int *code);

/* --score: each record of in with nll, ppl and tokens; as sample_generate. */
int sample_score(struct sample *s, struct gpt *m, struct input *in,
    char *err, size_t errsize, int *code);

/*
 * --listen, with any tokenizer type: the port bound first (/health
 * answers 503), then the model loaded, then requests served until a signal stops the server. 0, or -1
 * with err and *code.
 */
int sample_serve(struct sample *s, char *err, size_t errsize, int *code);

/* A failed write on the output: -1 with err naming it and *code, else 0. */
int sample_out_check(struct sample *s, char *err, size_t errsize, int *code);

#endif
