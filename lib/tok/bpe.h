/* bpe.h - GPT-2 byte-level BPE: load a vocabulary, encode text as tiktoken's gpt2, decode */
#ifndef OWT_BPE_H
#define OWT_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "core/util.h"

/*
 * Encoding is exactly tiktoken's gpt2 encode_ordinary: the text is cut into
 * pieces by GPT-2's pre-tokenizer,
 *	'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * (Unicode 16.0.0 classes, see uniclass.h), and each piece is the token whose
 * bytes it is, or else the result of merging its bytes, always the adjacent
 * pair whose concatenation is the token of lowest rank, leftmost first.
 * A literal "<|endoftext|>" in the text is ordinary text. Time is linear
 * in the length of a piece (O(n log n) for a vocabulary whose merges make
 * a token of lower rank than its parts), never quadratic.
 *
 * Threads: a struct bpe is read-only once loaded and may be shared by any
 * number of threads; each thread encodes through its own struct bpe_state.
 */

#define BPE_NOID 0xffffffffu

struct bpe;		/* a vocabulary (opaque, read-only after bpe_load) */
struct bpe_state;	/* one thread's scratch space and piece cache */

/* A growable array of token ids. Start it zeroed; free v when done. */
struct bpe_ids {
	uint32_t *v;
	size_t n, cap;
};

/*
 * Load a GPT-2-format vocabulary: encoder.json (token -> id, tokens
 * written in GPT-2's byte-to-unicode alphabet, ids 0..N-1) and vocab.bpe
 * (an optional "#version" line, then one merge "A B" a line, highest
 * priority first). The 256 single bytes rank first, in the alphabet's
 * order, then the merge results in file order; a token that is neither
 * (<|endoftext|>) is never produced by bpe_encode.
 *
 * With both paths NULL, the default vocabulary: GPT-2's, from the image
 * that the build made of data/gpt2 and linked in (bpe_image_write), ready
 * at once and read in place.
 * Returns the vocabulary, or NULL with *code (XDATA: a missing or malformed
 * file; XSYS: a read error, or the program has no image) and err
 * ("FILE: what", "FILE:LINE: what").
 */
struct bpe *bpe_load(const char *encoder_json, const char *vocab_bpe,
    char *err, size_t errsize, int *code);
void bpe_free(struct bpe *v);

/*
 * An opt.h check for --tokenizer-type (Megatron's option): GPT-2's BPE is
 * the one there is. 0, or -1 with "--NAME: 'ARG' is not GPT2BPETokenizer".
 */
struct opt;
int bpe_check_tokenizer(const struct opt *o, const char *arg, char *err,
    size_t errsize);

/*
 * Append the image of v to out: its tables as they are in memory, which
 * bpe_load uses in place when it is linked in (the Makefile has
 * contrib/build/mkimage.c write it). It is for the program that wrote it,
 * on the same host.
 */
void bpe_image_write(const struct bpe *v, struct buf *out);

/* The number of ids (they are 0 .. bpe_nvocab() - 1). */
uint32_t bpe_nvocab(const struct bpe *v);
/* The id of <|endoftext|>, or BPE_NOID when the vocabulary has none. */
uint32_t bpe_eod(const struct bpe *v);

/*
 * Per-thread state: a cache of merged pieces of about cache bytes (a power
 * of two of 64-byte entries, 64 KB to 16 MB; 0 for 16 MB). A piece of n
 * bytes over 4 KB needs n/8 bytes while it is merged (4.7n for a
 * vocabulary as above), freed after it.
 */
struct bpe_state *bpe_state_new(const struct bpe *v, size_t cache);
void bpe_state_free(struct bpe_state *s);

/*
 * Append the ids of text[0..len) to out; returns how many. The text should
 * be valid UTF-8 (exactness with tiktoken is defined for it); an invalid
 * byte is taken as one character of no class, so any bytes encode and
 * decode back to themselves.
 */
size_t bpe_encode(struct bpe_state *s, const char *text, size_t len,
    struct bpe_ids *out);
/* The number of ids bpe_encode would append. */
size_t bpe_count(struct bpe_state *s, const char *text, size_t len);

/* The length of the first pre-tokenizer piece of text (len > 0). */
size_t bpe_piece(const char *text, size_t len);

/* The bytes of token id (not NUL-terminated), or NULL when out of range. */
const char *bpe_token(const struct bpe *v, uint32_t id, size_t *len);
/*
 * Append the bytes of ids[0..n) to out. Returns n, or the index of the
 * first id out of range (nothing of it or after it is appended).
 */
size_t bpe_decode(const struct bpe *v, const uint32_t *ids, size_t n,
    struct buf *out);

#endif
