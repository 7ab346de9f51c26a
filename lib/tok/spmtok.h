/* spmtok.h - Megatron's SentencePiece tokenizers over spm.h: SentencePieceTokenizer, GPTSentencePieceTokenizer, Llama2Tokenizer */
#ifndef OWT_SPMTOK_H
#define OWT_SPMTOK_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "tok/bpe.h"
#include "tok/spm.h"

/*
 * Megatron-LM's three wrappers of one SentencePiece model
 * (megatron/training/tokenizer/tokenizer.py), ids as they give them:
 *
 * GPTSentencePieceTokenizer  the model's ids (spm_encode's); EOD its
 *     </s> (eos_id); vocabulary its pieces.
 * Llama2Tokenizer  the same, each text's ids after the model's BOS
 *     (bos_id), as Megatron's tokenize(bos=True) gives them; a model
 *     without BOS is refused.
 * SentencePieceTokenizer  NeMo's: <CLS> <SEP> <EOD> <MASK>, then the
 *     pad, BOS and EOS pieces (<PAD> <BOS> <EOS> where the model has
 *     none), each added after the pieces where the model lacks it; EOD is
 *     <EOD>. A text is cut at each of these as text (the earliest, the
 *     first in that order on a tie), each part encoded apart. Decoding
 *     writes each of them as " TOKEN " between the parts' texts.
 *
 * Decoding is the model's (spm_decode's): control pieces (BOS, EOS) give
 * no text. Read-only once loaded: threads may share one.
 */
enum { SPMTOK_SP, SPMTOK_GPT, SPMTOK_LLAMA2 };

#define SPMTOK_MAXSPECIAL 7

struct spmtok {
	struct spm *m;
	int kind;
	uint32_t nvocab;	/* the pieces and the added tokens */
	uint32_t bos, eos, eod;	/* BPE_NOID: none */
	/* SentencePieceTokenizer's tokens found as text, in Megatron's order */
	struct {
		char *text;
		size_t len;
		uint32_t id;
	} special[SPMTOK_MAXSPECIAL];
	size_t nspecial;
};

/*
 * Load the model at path as Megatron's type kind. NULL with *code and
 * err as spm_load; XDATA for a Llama2Tokenizer model without BOS.
 */
struct spmtok *spmtok_load(const char *path, int kind, char *err,
    size_t errsize, int *code);
void spmtok_free(struct spmtok *t);

/* Append the ids of text[0..len) to out; returns how many. */
size_t spmtok_encode(const struct spmtok *t, const char *text, size_t len,
    struct bpe_ids *out);
/* Append the text of ids[0..n); n, or the index of the first no token. */
size_t spmtok_decode(const struct spmtok *t, const uint32_t *ids, size_t n,
    struct buf *out);
/*
 * Append the bytes of id as a stream of text shows it one token at a time
 * (tokenizer_token's): its meta space U+2581 a space, a byte piece <0xNN>
 * that byte, BOS, EOS and padding nothing, the unknown piece " \u2047 ",
 * an added token its text.
 */
void spmtok_token(const struct spmtok *t, uint32_t id, struct buf *out);

#endif
