/* tokenizer.c - Megatron's --tokenizer-type by name: GPT-2's BPE, tiktoken's, Hugging Face's or SentencePiece's, one face */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/opt.h"
#include "core/util.h"
#include "tok/tokenizer.h"

/* Megatron-Core's SentencePiece types, as spmtok.h's SPMTOK_* kinds. */
static const char *const spm_types[] = {
	"SentencePieceTokenizer", "GPTSentencePieceTokenizer", "Llama2Tokenizer",
};

/* The SPMTOK_* kind of Megatron's type name, or -1. */
static int
spm_kind(const char *type)
{
	size_t i;

	for (i = 0; type != NULL && i < sizeof spm_types / sizeof *spm_types;
	    i++)
		if (strcmp(type, spm_types[i]) == 0)
			return (int)i;
	return -1;
}

#define BUILT "GPT2BPETokenizer, TikTokenizer, HuggingFaceTokenizer, " \
	"SentencePieceTokenizer, GPTSentencePieceTokenizer or Llama2Tokenizer"

int
tokenizer_check_type(const struct opt *o, const char *arg, char *err,
    size_t errsize)
{
	if (strcmp(arg, "GPT2BPETokenizer") == 0 ||
	    strcmp(arg, "TikTokenizer") == 0 ||
	    strcmp(arg, "HuggingFaceTokenizer") == 0 || spm_kind(arg) >= 0) {
		if (o->p)
			*(const char **)o->p = arg;
		return 0;
	}
	return owt_fail(err, errsize, NULL, XUSAGE, "--%s: '%s' is not " BUILT,
	    o->name, arg);
}

struct tokenizer *
tokenizer_load(const struct tokenizer_opts *o, char *err, size_t errsize,
    int *code)
{
	struct tokenizer *t = xcalloc(1, sizeof *t);
	int kind;

	if ((kind = spm_kind(o->type)) >= 0) {
		t->type = TOKENIZER_SPM;
		if (o->model == NULL) {
			owt_fail(err, errsize, code, XUSAGE, "--tokenizer-type %s "
			    "needs --tokenizer-model FILE (a SentencePiece model)",
			    o->type);
			goto fail;
		}
		if (o->vocab != NULL || o->merges != NULL || o->pattern != NULL ||
		    o->num_special || o->special != NULL || o->vocab_size) {
			owt_fail(err, errsize, code, XUSAGE, "--%s: not with %s "
			    "(its --tokenizer-model is the SentencePiece model)",
			    o->pattern ? "tiktoken-pattern" : o->vocab ?
			    "vocab-file" : o->merges ? "merge-file" :
			    o->num_special ? "tiktoken-num-special-tokens" :
			    o->special ? "tiktoken-special-tokens" : "vocab-size",
			    o->type);
			goto fail;
		}
		if ((t->sp = spmtok_load(o->model, kind, err, errsize, code)) ==
		    NULL)
			goto fail;
		return t;
	}
	if (o->type != NULL && strcmp(o->type, "TikTokenizer") == 0) {
		t->type = TOKENIZER_TIKTOKEN;
		if (o->model == NULL)
			goto usage_model;
		if (o->vocab != NULL || o->merges != NULL) {
			owt_fail(err, errsize, code, XUSAGE, "--vocab-file and "
			    "--merge-file: not with TikTokenizer (its "
			    "--tokenizer-model is the rank file)");
			goto fail;
		}
		struct tiktoken_opts to = { o->pattern, o->num_special,
		    o->special, o->vocab_size };

		if ((t->tt = tiktoken_load_with(o->model, &to, err, errsize,
		    code)) == NULL)
			goto fail;
		return t;
	}
	if (o->type != NULL && strcmp(o->type, "HuggingFaceTokenizer") == 0) {
		t->type = TOKENIZER_HF;
		if (o->model == NULL) {
			owt_fail(err, errsize, code, XUSAGE, "--tokenizer-type "
			    "HuggingFaceTokenizer needs --tokenizer-model DIR "
			    "(with tokenizer.json and tokenizer_config.json)");
			goto fail;
		}
		if (o->vocab != NULL || o->merges != NULL || o->pattern != NULL) {
			owt_fail(err, errsize, code, XUSAGE, "--vocab-file, "
			    "--merge-file and --tiktoken-pattern: not with "
			    "HuggingFaceTokenizer (its --tokenizer-model is the "
			    "directory of tokenizer.json)");
			goto fail;
		}
		if ((t->hf = hftok_load(o->model, err, errsize, code)) == NULL)
			goto fail;
		return t;
	}
	t->type = TOKENIZER_GPT2BPE;
	if (o->model != NULL) {
		owt_fail(err, errsize, code, XUSAGE, "--tokenizer-model: not "
		    "with GPT2BPETokenizer (--vocab-file and --merge-file)");
		goto fail;
	}
	if (o->pattern != NULL || o->num_special || o->special != NULL ||
	    o->vocab_size) {
		owt_fail(err, errsize, code, XUSAGE, "%s: only with "
		    "--tokenizer-type TikTokenizer", o->pattern != NULL ?
		    "--tiktoken-pattern" : o->num_special ?
		    "--tiktoken-num-special-tokens" : o->special != NULL ?
		    "--tiktoken-special-tokens" : "--vocab-size");
		goto fail;
	}
	if ((t->bpe = bpe_load(o->vocab, o->merges, err, errsize, code)) == NULL)
		goto fail;
	return t;
usage_model:
	owt_fail(err, errsize, code, XUSAGE, "--tokenizer-type TikTokenizer "
	    "needs --tokenizer-model FILE (a .tiktoken rank file)");
fail:
	free(t);
	return NULL;
}

void
tokenizer_free(struct tokenizer *t)
{
	if (t == NULL)
		return;
	bpe_free(t->bpe);
	tiktoken_free(t->tt);
	hftok_free(t->hf);
	spmtok_free(t->sp);
	free(t->tok);
	free(t->off);
	free(t);
}

uint32_t
tokenizer_nvocab(const struct tokenizer *t)
{
	if (t->hf)
		return hftok_nvocab(t->hf);
	if (t->sp)
		return t->sp->nvocab;
	return t->tt ? tiktoken_nvocab(t->tt) : bpe_nvocab(t->bpe);
}

uint32_t
tokenizer_eod(const struct tokenizer *t)
{
	if (t->hf)
		return hftok_eod(t->hf);
	if (t->sp)
		return t->sp->eod;
	return t->tt ? tiktoken_eod(t->tt) : bpe_eod(t->bpe);
}

uint32_t
tokenizer_bos(const struct tokenizer *t)
{
	return t->sp ? t->sp->bos : BPE_NOID;
}

uint32_t
tokenizer_eos(const struct tokenizer *t)
{
	return t->sp ? t->sp->eos : tokenizer_eod(t);
}

struct tokenizer_state *
tokenizer_state_new(const struct tokenizer *t, size_t cache)
{
	struct tokenizer_state *s = xcalloc(1, sizeof *s);

	s->t = t;
	if (t->hf)
		s->hf = hftok_state_new(t->hf);
	else if (t->tt)
		s->tt = tiktoken_state_new_cache(t->tt, cache);
	else if (t->bpe)
		s->bpe = bpe_state_new(t->bpe, cache);
	return s;
}

void
tokenizer_state_free(struct tokenizer_state *s)
{
	if (s == NULL)
		return;
	bpe_state_free(s->bpe);
	tiktoken_state_free(s->tt);
	hftok_state_free(s->hf);
	free(s);
}

size_t
tokenizer_encode(struct tokenizer_state *s, const char *text, size_t len,
    struct bpe_ids *out)
{
	if (s->hf)
		return hftok_encode(s->hf, text, len, out);
	if (s->bpe)
		return bpe_encode(s->bpe, text, len, out);
	if (s->t->sp)
		return spmtok_encode(s->t->sp, text, len, out);
	return tiktoken_encode(s->tt, text, len, out);
}

size_t
tokenizer_decode(const struct tokenizer *t, const uint32_t *ids, size_t n,
    struct buf *out)
{
	if (t->hf)
		return hftok_decode(t->hf, ids, n, out);
	if (t->sp)
		return spmtok_decode(t->sp, ids, n, out);
	return t->tt ? tiktoken_decode(t->tt, ids, n, out) :
	    bpe_decode(t->bpe, ids, n, out);
}

void
tokenizer_tokens(struct tokenizer *t)
{
	uint32_t n = tokenizer_nvocab(t), id;
	struct buf b = { 0 };

	if (t->bpe != NULL || t->off != NULL)
		return;
	t->off = xmalloc(((size_t)n + 1) * sizeof *t->off);
	for (id = 0; id < n; id++) {
		t->off[id] = (uint32_t)b.len;
		if (t->sp != NULL)
			spmtok_token(t->sp, id, &b);
		else if (tokenizer_decode(t, &id, 1, &b) == 0)
			t->off[id] |= 1u << 31;	/* no token */
	}
	t->off[n] = (uint32_t)b.len;
	t->tok = b.p != NULL ? b.p : xcalloc(1, 1);
}

const char *
tokenizer_token(const struct tokenizer *t, uint32_t id, size_t *len)
{
	uint32_t a;

	if (t->bpe != NULL)
		return bpe_token(t->bpe, id, len);
	if (t->off == NULL || id >= tokenizer_nvocab(t) ||
	    (t->off[id] & 1u << 31))
		return NULL;
	a = t->off[id];
	*len = (t->off[id + 1] & ~(1u << 31)) - a;
	return t->tok + a;
}
