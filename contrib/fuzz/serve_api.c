/* serve_api.c - libFuzzer target: gpt-sample --listen's request parser and answers on arbitrary bodies */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tok/bpe.h"
#include "gen/serve_api.h"

#define V 50257

/*
 * Input: a byte choosing the protocol (its value mod 5: OpenAI,
 * Megatron, Triton's generate, generate_stream, infer), then the request
 * body. Whatever serve_api_parse accepts gets, in each sample, tokens
 * taken from the body's bytes and an end, then its answer (ASan and
 * UBSan check every path; an error answer is checked too). The body is
 * also a URL for the /v2 router, and a path it names gets its metadata.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct bpe *vocab;
	static struct bpe_state *bs;
	static float logits[V];
	struct serve_api_ctx c;
	struct serve_req *r;
	struct buf err = { 0 };
	char *body;
	char e[OWT_ERRSIZE];
	static const int kinds[] = { SERVE_OPENAI, SERVE_MEGATRON,
	    SERVE_GENERATE, SERVE_GENERATE_STREAM, SERVE_INFER };
	struct buf meta = { 0 };
	char *url;
	int status, code, i, k, path;

	if (vocab == NULL) {
		vocab = bpe_load("data/gpt2/encoder.json", "data/gpt2/vocab.bpe",
		    e, sizeof e, &code);
		if (vocab == NULL)
			abort();
		bs = bpe_state_new(vocab, 0);
	}
	if (size < 1)
		return 0;
	body = malloc(size - 1 ? size - 1 : 1);	/* ASan sees the end */
	memcpy(body, data + 1, size - 1);
	c = (struct serve_api_ctx){ vocab, bs, "m", 64, V, 1 };
	url = malloc(size);	/* the body as a NUL-terminated URL */
	memcpy(url, data + 1, size - 1);
	url[size - 1] = '\0';
	path = serve_api_v2_path(url, "m");
	if (path < SERVE_V2_NONE || path > SERVE_V2_UNKNOWN)
		abort();
	if (path == SERVE_V2_SERVER || path == SERVE_V2_MODEL)
		serve_api_v2_meta(&meta, path, "m", 64);
	buf_free(&meta);
	free(url);
	r = serve_api_parse(kinds[data[0] % 5], body, size - 1, &c, &status,
	    &err);
	if (r != NULL) {
		for (i = 0; i < r->nseq; i++) {
			if (r->seq[i].plp != NULL)	/* gen_start's */
				memset(r->seq[i].plp, 0, (size_t)(r->seq[i].nprompt
				    - 1) * sizeof *r->seq[i].plp);
			serve_api_begin(&r->seq[i]);
			for (k = 0; k < 8 && (size_t)k + 1 < size; k++)
				if (serve_api_token(&r->seq[i], (int32_t)(
				    data[k + 1] * 197u % V), logits))
					break;
			serve_api_end(&r->seq[i]);
		}
		serve_api_answer(r);
		serve_api_free(r);
	} else if (status < 400 || status > 499 || err.len == 0) {
		abort();	/* a refusal is a 4xx with its answer */
	}
	buf_free(&err);
	free(body);
	return 0;
}
