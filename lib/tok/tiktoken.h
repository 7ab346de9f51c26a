/* tiktoken.h - tiktoken's BPE over a .tiktoken rank file: the public encodings, encode, decode */
#ifndef OWT_TIKTOKEN_H
#define OWT_TIKTOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "tok/bpe.h"
#include "core/util.h"

/*
 * A .tiktoken rank file is one token a line, "BASE64 RANK": the token's
 * bytes in base64 and its rank, which is its id. An encoding names the
 * split pattern (tiktoken's own regex, compiled by pretok.h) and the
 * special tokens that rank files leave out:
 *
 *	name         ranks    n_vocab  EOD (--append-eod)
 *	r50k_base    50256    50257    <|endoftext|> 50256   (gpt2: the same)
 *	p50k_base    50280    50281    <|endoftext|> 50256
 *	cl100k_base  100256   100277   <|endoftext|> 100257
 *	o200k_base   199998   200019   <|endoftext|> 199999
 *	llama3       128000   128256   <|end_of_text|> 128001
 *
 * Encoding is tiktoken's encode_ordinary: the text is cut into pieces by
 * the pattern, and each piece is the token whose bytes it is, or else the
 * result of merging its bytes, always the adjacent pair whose
 * concatenation is the token of lowest rank, leftmost first. A special
 * token's text inside the text is ordinary text. Time is O(n log n) in
 * the length of a piece.
 *
 * Threads: a struct tiktoken is read-only once loaded and may be shared;
 * each thread encodes through its own struct tiktoken_state.
 */

struct tiktoken;
struct tiktoken_state;

/*
 * The encodings' names, "gpt2 r50k_base ..." (for opt_check_word), and
 * an opt.h check for --tiktoken-pattern that takes one of them, or
 * Megatron's v1 and v2 (for its JSON model, below).
 */
extern const char tiktoken_names[];
struct opt;
int tiktoken_check_name(const struct opt *o, const char *arg, char *err,
    size_t errsize);

/*
 * Load the rank file at path for the encoding named (NULL: the one whose
 * number of ranks the file has). Returns the vocabulary, or NULL with
 * *code (XDATA: a malformed file, "FILE:LINE: what", or one whose ranks
 * are not the encoding's; XSYS: cannot read it; XUSAGE: no encoding
 * has its number of ranks) and err.
 */
struct tiktoken *tiktoken_load(const char *path, const char *encoding,
    char *err, size_t errsize, int *code);

/*
 * Megatron-Core's JSON model (its CustomTikTokenizer): a list of objects
 * {"rank": I, "token_bytes": BASE64, "token_str": S}, the I-th of rank I,
 * the first 256 the single bytes, with the pattern "v1" or "v2"
 * (Megatron's PATTERN_TIKTOKEN and PATTERN_TIKTOKEN_V2). Ids: the special
 * tokens first (special, white-space separated, must hold <unk> <s> </s>;
 * NULL: those three), then "<SPECIAL_N>" up to num_special; then the first
 * vocab_size - num_special ranks, each rank + num_special. n_vocab is
 * vocab_size, EOD </s>. Encoding is encode_ordinary, as above.
 * tiktoken_load_with reads either form, told by its content (a JSON
 * list, or "BASE64 RANK" lines); the Megatron options (0 or NULL: not
 * given; then 1000, "<unk> <s> </s>" and 131072) go with a JSON model
 * only (XUSAGE). A JSON model is XDATA "FILE: entry N: what" where it is
 * not one, or has fewer than vocab_size - num_special ranks.
 */
struct tiktoken_opts {
	const char *pattern;	/* --tiktoken-pattern: an encoding, v1, v2 */
	long num_special;	/* --tiktoken-num-special-tokens */
	const char *special;	/* --tiktoken-special-tokens */
	long vocab_size;	/* --vocab-size */
};
struct tiktoken *tiktoken_load_with(const char *path,
    const struct tiktoken_opts *o, char *err, size_t errsize, int *code);
void tiktoken_free(struct tiktoken *t);

/* The encoding's name, n_vocab (ids are below it) and EOD id. */
const char *tiktoken_name(const struct tiktoken *t);
uint32_t tiktoken_nvocab(const struct tiktoken *t);
uint32_t tiktoken_eod(const struct tiktoken *t);

struct tiktoken_state *tiktoken_state_new(const struct tiktoken *t);
/*
 * The same with its caches (merged pieces, short and long, ranks of
 * joins) within about cache bytes (0: their most, 5 MB; at least about
 * 50 KB).
 */
struct tiktoken_state *tiktoken_state_new_cache(const struct tiktoken *t,
    size_t cache);
void tiktoken_state_free(struct tiktoken_state *s);

/* Append the ids of text[0..len) to out; returns how many. */
size_t tiktoken_encode(struct tiktoken_state *s, const char *text, size_t len,
    struct bpe_ids *out);

/*
 * The bytes of token id (a rank's or a special token's), or NULL where
 * id is none (out of range, or a gap between ranks and specials).
 */
const char *tiktoken_token(const struct tiktoken *t, uint32_t id, size_t *len);
/*
 * Append the bytes of ids[0..n) to out. Returns n, or the index of the
 * first id that is no token (nothing of it or after it is appended).
 */
size_t tiktoken_decode(const struct tiktoken *t, const uint32_t *ids, size_t n,
    struct buf *out);

#endif
