/* gen_queue.h - gpt-sample's queue: prompts and samples in input order, and their records */
#ifndef OWT_GEN_QUEUE_H
#define OWT_GEN_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tok/bpe.h"
#include "tok/tokenizer.h"
#include "core/buf.h"
#include "gen/gen.h"
#include "model/gpt_infer.h"
#include "core/input.h"
#include "core/json.h"

/*
 * How samples are written. TEXT streams each sample's tokens as they
 * come, then '\n' (it turns to JSONL when the first input line is a JSON
 * record). JSONL writes the prompt's record (a text prompt becomes
 * {"prompt": ...}) with "text", "prompt_tokens", "tokens", "finished"
 * added, "sample" with more than one sample a prompt, "prompt_ids" and
 * "ids" with ids; invalid UTF-8 as U+FFFD.
 *
 * MEGATRON is the file mode of Megatron-LM v2.5's generate_samples_gpt.py:
 * each line is a prompt as it is (no JSON), encoded with its newline as
 * readlines keeps it, and a line holding "stop" ends the input; a sample
 * is written "\nContext:" LINE "\n" "\n\nMegatron-LM:" TEXT "\n", TEXT
 * ending in "<|endoftext|>" when the model ended it. UNCOND is its
 * unconditional mode: {"text": TEXT, "length": tokens of TEXT,
 * "finished": ended by <|endoftext|>} and '\n', as json.dumps writes it.
 * Both decode TEXT as Python does (gen_queue_py_text).
 */
enum { GEN_QUEUE_TEXT, GEN_QUEUE_JSONL, GEN_QUEUE_MEGATRON, GEN_QUEUE_UNCOND };

struct gen_queue_opts {
	int format;		/* GEN_QUEUE_* */
	int nsamples;		/* per prompt, at least 1 */
	int ids;		/* JSONL: add the token ids */
	int flush;		/* flush after each sample (one prompt at a time) */
	const char *key;	/* the prompt (or --score's text) field of records */
};

struct gen_queue_prompt;
struct gen_queue_sample;

/*
 * A queue of samples in input order over one struct gen: each prompt
 * read queues nsamples samples, which start as slots come free and are
 * written in input order as they end. Sample i of the n-th prompt (from
 * 0) draws from stream n * nsamples + i, so the text depends on the
 * input and the seed alone. A failed write is remembered in werrno (the
 * first one's errno) for the caller, who names the output.
 */
struct gen_queue {
	struct gen_queue_opts o;
	const struct tokenizer *vocab;
	struct tokenizer_state *bs;
	FILE *out;
	struct gen gen;
	int jsonl_in;		/* the first input line was a JSON record */
	int werrno;
	struct gen_queue_sample *head, *tail, *unstarted;
	struct json_rec rec;
	unsigned long long nprompts, nsamples, ntokens;
	/* gen_queue_score_rec's totals */
	unsigned long long nrec, nscored, nonfinite;
	double nll;
	struct bpe_ids sids;
	struct buf sbuf;
};

void gen_queue_init(struct gen_queue *q, const struct gen_queue_opts *o,
    const struct tokenizer *vocab, struct tokenizer_state *bs, FILE *out);
/* Generate with inf and o from now on (gen_init); before gen_queue_read. */
void gen_queue_model(struct gen_queue *q, struct gpt_infer *inf,
    const struct gen_opts *o);
/* Free what is left (samples not written are dropped) and gen's state. */
void gen_queue_free(struct gen_queue *q);

/*
 * Queue the samples of one input line (its newline cut; a text line's
 * '\r' too), the input's line lineno (1: it decides whether the input
 * is JSONL). 0; 1, queueing nothing, for MEGATRON's "stop" line, which
 * ends the input; or -1 with err (no location) for a bad record: invalid
 * JSON, a prompt field that is not a string, a prompt that leaves no
 * room in the context. An empty prompt is <|endoftext|> alone (not in
 * MEGATRON, where it is the newline).
 */
int gen_queue_add(struct gen_queue *q, const char *line, size_t len,
    unsigned long lineno, char *err, size_t errsize);
/*
 * Read a line of in and queue it: 1, 0 at the end (or a "stop" line),
 * -1 with err and
 * *code: XDATA for a bad record ("FILE:LINE: what"; call again to go on
 * past it), another class for a read error.
 */
int gen_queue_read(struct gen_queue *q, struct input *in, char *err,
    size_t errsize, int *code);
/* Whether every queued sample has started and a slot is free. */
int gen_queue_wants(const struct gen_queue *q);
/*
 * Start queued samples in the free slots, then one gen_step. 0 when
 * nothing was running or queued, else 1.
 */
int gen_queue_step(struct gen_queue *q);
/* End the running samples now (GEN_STOPPED); they are written so. */
void gen_queue_stop(struct gen_queue *q);

/*
 * --score: the record line (len bytes) with "nll", "ppl", "tokens" (and
 * with ids "ids") set, into out (emptied first), and the totals of q
 * updated. The text field is encoded, <|endoftext|> appended and scored
 * by gen_score in windows of T tokens stride apart (nll and ppl null
 * when there is nothing to score or the sum is not finite: nonfinite
 * counts those). 0, or -1 with err (no location) for a bad record.
 */
int gen_queue_score_rec(struct gen_queue *q, struct gpt_infer *inf, int T,
    int stride, const char *line, size_t len, struct buf *out, char *err,
    size_t errsize);

/*
 * Read a record of in and score it into out (gen_queue_score_rec): 1, 0
 * at the end, -1 with err and *code as gen_queue_read.
 */
int gen_queue_score_read(struct gen_queue *q, struct gpt_infer *inf, int T,
    int stride, struct input *in, struct buf *out, char *err,
    size_t errsize, int *code);

/*
 * s[0..n) as Python's bytes.decode("utf-8", "replace") reads it, the way
 * Megatron's detokenizer does: U+FFFD for each maximal invalid subpart
 * (a truncated sequence is one, each stray byte another), appended to b
 * in UTF-8. json.dumps of that str is the writer's JSON_ASCII (json.h).
 */
void gen_queue_py_text(struct buf *b, const char *s, size_t n);

#endif
