/* hftok.h - a Hugging Face tokenizer.json (byte-level BPE): encode as `tokenizers` does, decode */
#ifndef OWT_HFTOK_H
#define OWT_HFTOK_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "tok/bpe.h"

/*
 * A directory as Megatron's HuggingFaceTokenizer takes it: tokenizer.json
 * (the pipeline) and tokenizer_config.json (its eos_token is the EOD of
 * --append-eod). Only byte-level BPE models are taken (GPT-2, GPT-NeoX,
 * Llama 3, Qwen2); each part of tokenizer.json is read as follows, and
 * anything else is refused by the name of its part:
 *
 *   normalizer     null, NFC, or a Sequence of those (NFC: libunistring's
 *                  tables, Unicode 14; a text whose bytes are all below
 *                  0xCC, that is below U+0300, is left as it is)
 *   pre_tokenizer  ByteLevel (add_prefix_space, use_regex: GPT-2's
 *                  pattern), or a Sequence of Split (a Regex pattern,
 *                  behavior Isolated, not inverted) ending in ByteLevel;
 *                  the patterns are compiled by pretok.h (PCRE2, Unicode
 *                  16 classes)
 *   model          BPE: vocab and merges ("A B" strings or [A, B] pairs),
 *                  ignore_merges; no dropout, no subword prefix or suffix
 *   added_tokens   matched in the text before the pre-tokenizer, leftmost
 *                  longest, those not normalized in the raw text and the
 *                  normalized ones in the normalized text; single_word,
 *                  lstrip and rstrip as `tokenizers` applies them
 *   post_processor null, ByteLevel, TemplateProcessing (its single
 *                  template), RobertaProcessing, BertProcessing, or a
 *                  Sequence of those: ids before and after each document
 *   decoder        null or ByteLevel (-d)
 *   truncation, padding  null
 *
 * Threads: a struct hftok is read-only once loaded; each thread encodes
 * through its own struct hftok_state.
 */

struct hftok;
struct hftok_state;

/*
 * Load DIR/tokenizer.json and DIR/tokenizer_config.json. NULL with *code
 * and err: XDATA for a file that cannot be opened ("cannot open 'F':
 * why", as a missing input) or for bad JSON
 * ("FILE: byte N: what") or a malformed part ("FILE: model.merges[N]:
 * what"), XSYS for a read error, XUSAGE for a part that is not
 * supported ("FILE: model: type 'WordPiece' is not supported (byte-level
 * BPE only)"). The document is parsed whole (json.h's tree): about 190 MB
 * at the peak for an 8.8 MB tokenizer.json of 100k tokens, freed once read.
 */
struct hftok *hftok_load(const char *dir, char *err, size_t errsize,
    int *code);
void hftok_free(struct hftok *h);

/* Ids are below nvocab; EOD: eos_token's id, or BPE_NOID. */
uint32_t hftok_nvocab(const struct hftok *h);
uint32_t hftok_eod(const struct hftok *h);

struct hftok_state *hftok_state_new(const struct hftok *h);
void hftok_state_free(struct hftok_state *s);

/*
 * Append the ids of text[0..len), with the post-processor's ids around
 * them (add_special_tokens, as Megatron calls the tokenizer), to out.
 */
size_t hftok_encode(struct hftok_state *s, const char *text, size_t len,
    struct bpe_ids *out);

/*
 * Append the bytes of ids[0..n) to out (ByteLevel's decoder: a token's
 * characters mapped back to bytes; an added token's text as it is).
 * Returns n, or the index of the first id that is no token.
 */
size_t hftok_decode(const struct hftok *h, const uint32_t *ids, size_t n,
    struct buf *out);

#endif
