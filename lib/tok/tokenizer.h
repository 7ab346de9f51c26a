/* tokenizer.h - Megatron's --tokenizer-type by name: GPT-2's BPE, tiktoken's or Hugging Face's, one face */
#ifndef OWT_TOKENIZER_H
#define OWT_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "tok/bpe.h"
#include "tok/hftok.h"
#include "tok/spmtok.h"
#include "tok/tiktoken.h"

/*
 * Megatron-Core's names: GPT2BPETokenizer (bpe.h: --vocab-file and
 * --merge-file, or the built-in GPT-2) and TikTokenizer (tiktoken.h: a
 * .tiktoken rank file, --tokenizer-model, and --tiktoken-pattern),
 * HuggingFaceTokenizer (hftok.h: --tokenizer-model, a directory with
 * tokenizer.json), and SentencePieceTokenizer, GPTSentencePieceTokenizer
 * and Llama2Tokenizer (spmtok.h: a SentencePiece model, --tokenizer-model).
 */
enum { TOKENIZER_GPT2BPE, TOKENIZER_TIKTOKEN, TOKENIZER_HF, TOKENIZER_SPM };

struct tokenizer_opts {
	const char *type;	/* NULL: GPT2BPETokenizer */
	const char *model;	/* --tokenizer-model */
	const char *vocab, *merges;	/* --vocab-file, --merge-file */
	const char *pattern;	/* --tiktoken-pattern */
	/* Megatron's JSON TikTokenizer model (tiktoken.h); 0, NULL: not given */
	int num_special;	/* --tiktoken-num-special-tokens */
	const char *special;	/* --tiktoken-special-tokens */
	int vocab_size;		/* --vocab-size */
};

struct tokenizer {
	int type;
	struct bpe *bpe;
	struct tiktoken *tt;
	struct hftok *hf;
	struct spmtok *sp;
	/* tokenizer_tokens' table: id's bytes at tok[off[id]..off[id + 1]) */
	char *tok;
	uint32_t *off;
};

struct tokenizer_state {
	const struct tokenizer *t;
	struct bpe_state *bpe;
	struct tiktoken_state *tt;
	struct hftok_state *hf;
};

/*
 * The option rows of --tiktoken-pattern, --tokenizer-model and
 * --tokenizer-type (neighbours in a table in the order of names) that set
 * *tk, a struct tokenizer_opts: gpt-train's and gpt-sample's, which take
 * bpe-encode's flags.
 */
#define TOKENIZER_OPT_ROWS(tk) \
	{ .name = "tiktoken-pattern", .arg = "name", .type = OPT_STR, \
	    .p = &(tk)->pattern, .check = tiktoken_check_name, \
	    .help = "TikTokenizer's encoding, as bpe-encode's" }, \
	{ .name = "tokenizer-model", .arg = "file", .type = OPT_STR, \
	    .p = &(tk)->model, \
	    .help = "the .tiktoken or SentencePiece model, as bpe-encode's" }, \
	{ .name = "tokenizer-type", .arg = "type", .type = OPT_STR, \
	    .p = &(tk)->type, .check = tokenizer_check_type, \
	    .help = "GPT2BPETokenizer, TikTokenizer, ..., as bpe-encode's" }

/*
 * An opt.h check for --tokenizer-type: 0 for a type that is built, or -1
 * with "--NAME: 'ARG' is not built yet ..." for Megatron's others, and
 * "--NAME: 'ARG' is not GPT2BPETokenizer, TikTokenizer, ..." for the rest.
 */
struct opt;
int tokenizer_check_type(const struct opt *o, const char *arg, char *err,
    size_t errsize);

/*
 * Load the tokenizer that o names. NULL with *code and err: XUSAGE for
 * options that do not go with the type (--tokenizer-model, --vocab-file,
 * --tiktoken-pattern), else as bpe_load and tiktoken_load.
 */
struct tokenizer *tokenizer_load(const struct tokenizer_opts *o, char *err,
    size_t errsize, int *code);
void tokenizer_free(struct tokenizer *t);

/* The number of ids (all below it), and the EOD id (BPE_NOID: none). */
uint32_t tokenizer_nvocab(const struct tokenizer *t);
uint32_t tokenizer_eod(const struct tokenizer *t);
/*
 * Megatron's bos and eos (BPE_NOID: none): the SentencePiece types' (a
 * Llama2Tokenizer text's first id is its bos); the others have no bos,
 * and their eos is the EOD.
 */
uint32_t tokenizer_bos(const struct tokenizer *t);
uint32_t tokenizer_eos(const struct tokenizer *t);

/* Per thread; cache is the bytes of its caches (bpe_state_new's, tiktoken_state_new_cache's). */
struct tokenizer_state *tokenizer_state_new(const struct tokenizer *t,
    size_t cache);
void tokenizer_state_free(struct tokenizer_state *s);

/* Append the ids of text[0..len) to out; returns how many. */
size_t tokenizer_encode(struct tokenizer_state *s, const char *text,
    size_t len, struct bpe_ids *out);
/* Append the bytes of ids[0..n); n, or the index of the first no token. */
size_t tokenizer_decode(const struct tokenizer *t, const uint32_t *ids,
    size_t n, struct buf *out);

/*
 * The bytes of token id as a stream of generated text shows them one
 * token at a time (not NUL-terminated), or NULL for an id that is no
 * token: GPT-2's, tiktoken's and a byte-level tokenizer.json's own bytes;
 * a SentencePiece piece with its meta space U+2581 as a space, a byte
 * piece <0xNN> as that byte, BOS, EOS and padding as nothing, the
 * unknown piece as decoding gives it (" \u2047 "), an added token as its
 * text. Decoding a whole text (tokenizer_decode) differs only in
 * SentencePiece's first token, whose dummy-prefix space it drops. Types
 * other than GPT2BPETokenizer need tokenizer_tokens first.
 */
const char *tokenizer_token(const struct tokenizer *t, uint32_t id,
    size_t *len);
/* Make tokenizer_token's table (once, before threads share t). */
void tokenizer_tokens(struct tokenizer *t);

#endif
