/* unit-serve - lib/serve_api.c: OpenAI streams that hold back half characters and possible stop strings, and the answer they add up to */
#include <stdlib.h>
#include <string.h>

#include "tok/tokenizer.h"
#include "core/buf.h"
#include "gen/serve_api.h"
#include "core/util.h"
#include "unit.h"

#define V 50257

static struct tokenizer *vocab;
static struct tokenizer_state *bs;
static float logits[V];

static struct serve_req *
req(const char *json)
{
	struct serve_api_ctx c = { vocab, bs, "m", 64, V, 1, 198, 628, 25 };
	struct buf err = { 0 };
	struct serve_req *r;
	int status = 0;

	r = serve_api_parse(SERVE_OPENAI, json, strlen(json), &c, &status,
	    &err);
	if (r == NULL)
		owt_fatal("unit-serve: %s: %d %s", json, status, err.p);
	buf_free(&err);
	return r;
}

/* The stream's events so far, the texts of their chunks joined by '|'. */
static char *
pieces(struct serve_req *r)
{
	static char out[4096];
	const char *p = r->out.p ? r->out.p : "", *t, *e;
	size_t n = 0;

	out[0] = '\0';
	while ((t = strstr(p, "\"text\":\"")) != NULL) {
		t += 8;
		e = strstr(t, "\",\"index\"");
		if (n > 0)
			out[n++] = '|';
		memcpy(out + n, t, (size_t)(e - t));
		n += (size_t)(e - t);
		out[n] = '\0';
		p = e;
	}
	return out;
}

static void
feed(struct serve_req *r, const int32_t *tok, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (serve_api_token(&r->seq[0], tok[i], logits))
			break;
}

int
main(void)
{
	char err[OWT_ERRSIZE];
	struct serve_req *r;
	int code;
	/* "And", 0xC3, 0xA9 ("é" in two byte tokens), " the" */
	static const int32_t split[] = { 1870, 127, 102, 262 };
	/* "And", " the", " LORD", " said" */
	static const int32_t words[] = { 1870, 262, 35750, 531 };

	struct tokenizer_opts o = { 0 };

	if ((vocab = tokenizer_load(&o, err, sizeof err, &code)) == NULL)
		owt_fatal("%s", err);
	bs = tokenizer_state_new(vocab, 0);
	OK(serve_api_token_id(vocab, "\n") == 198 &&
	    serve_api_token_id(vocab, "\n\n") == 628 &&
	    serve_api_token_id(vocab, ":") == 25,
	    "the tokens \"\\n\", \"\\n\\n\" and \":\" are Megatron's GPT-2 ids 198, 628, 25");
	OK(serve_api_token_id(vocab, "no such token here") == -1,
	    "a text that is no token: -1");

	r = req("{\"prompt\":\"x\",\"stream\":true}");
	feed(r, split, 2);
	SAMES(pieces(r), "And", "a lead byte is held back");
	feed(r, split + 2, 2);
	SAMES(pieces(r), "And|\xc3\xa9| the", "then sent with its continuation");
	serve_api_end(&r->seq[0]);
	SAMES(pieces(r), "And|\xc3\xa9| the|", "the end: an empty chunk");
	OK(strstr(r->out.p, "\"finish_reason\":\"length\"") != NULL,
	    "the last chunk has the finish_reason");
	serve_api_free(r);

	r = req("{\"prompt\":\"x\",\"stream\":true}");
	feed(r, split, 2);
	serve_api_end(&r->seq[0]);
	SAMES(pieces(r), "And|\xef\xbf\xbd", "a half character at the end: U+FFFD");
	serve_api_free(r);

	r = req("{\"prompt\":\"x\",\"stream\":true,\"stop\":[\" LORD s\"]}");
	feed(r, words, 2);
	SAMES(pieces(r), "And| the", "\" the\" cannot begin \" LORD s\": sent");
	feed(r, words + 2, 1);
	SAMES(pieces(r), "And| the", "\" LORD\" may: held back");
	OK(!r->seq[0].stopped, "not stopped yet");
	feed(r, words + 3, 1);
	OK(r->seq[0].stopped, "\" said\" completes the stop string: stopped");
	serve_api_end(&r->seq[0]);
	SAMES(pieces(r), "And| the|", "the text before the stop string, no more");
	serve_api_free(r);

	r = req("{\"prompt\":\"x\",\"stream\":true,\"stop\":\"LORDS\"}");
	feed(r, words, 3);
	SAMES(pieces(r), "And| the| ", "\"LORD\" held back for \"LORDS\", not the space");
	feed(r, words + 3, 1);
	SAMES(pieces(r), "And| the| |LORD said",
	    "released once it cannot be the stop string");
	serve_api_free(r);

	r = req("{\"prompt\":\"x\",\"stop\":[\"the\"]}");
	feed(r, words, 4);
	OK(r->seq[0].stopped && r->seq[0].text.len == 4 &&
	    memcmp(r->seq[0].text.p, "And ", 4) == 0,
	    "unstreamed: the text cut before the stop string");
	serve_api_free(r);

	tokenizer_state_free(bs);
	tokenizer_free(vocab);
	return unit_done();
}
