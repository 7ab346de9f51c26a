/* serve.h - gpt-sample --listen: Megatron's /api and OpenAI's /v1/completions on one port, continuously batched */
#ifndef OWT_SERVE_H
#define OWT_SERVE_H

#include <stddef.h>
#include <stdio.h>

#include "tok/tokenizer.h"
#include "model/gpt_infer.h"

struct serve_opts {
	const char *listen;	/* [ADDR:]PORT, [V6ADDR]:PORT; no ADDR: loopback */
	const char *name;	/* the model's name in /v1/models and answers */
	int parallel;		/* samples decoded together (slots) */
	int queue;		/* requests waiting at most; past it 429 */
	int ctx;		/* prompt and text at most this many tokens */
	double drain;		/* SIGTERM: seconds running requests may take */
	const char *key;	/* Bearer key every path but /health needs, or
				   NULL: none (Authorization is ignored) */
	int quiet;		/* no line per request on stderr */
	FILE *log;		/* a JSON line per request answered, or NULL */
};

struct serve;

/*
 * Bind the port and answer /health (503) at once, before the model is
 * loaded. NULL with err: XUSAGE for an address that is not one, XSYS when
 * the port cannot be bound.
 */
struct serve *serve_open(const struct serve_opts *o, const struct tokenizer *vocab,
    char *err, size_t errsize, int *code);
/* The address bound, as "127.0.0.1:8080" or "[::1]:8080". */
const char *serve_addr(const struct serve *sv);
/*
 * Serve with the model of inf (inf->S slots, prompts of inf->N tokens in
 * one step) until SIGTERM or SIGINT: then stop accepting, answer queued
 * requests 503, let running ones finish within o->drain seconds, and
 * return 0.
 */
int serve_run(struct serve *sv, struct gpt_infer *inf);
void serve_close(struct serve *sv);

#endif
