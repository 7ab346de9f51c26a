/* spm.h - a SentencePiece model through Debian's libsentencepiece: a C face over its C++ */
#ifndef OWT_SPM_H
#define OWT_SPM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A model file as spm_train writes it (a serialized ModelProto: BPE or
 * unigram, with its normalizer). Encoding and decoding are the library's
 * own, as spm_encode --output_format=id and spm_decode --input_format=id
 * do them: the normalizer, the dummy prefix, unknown characters as the
 * unk id (or as bytes, where the model was trained with byte fallback).
 *
 * Threads: a struct spm is read-only once loaded (the library's Encode
 * and Decode are const) and may be shared between threads.
 */
struct spm;

/*
 * Load the model at path. NULL with *code XDATA and err: "cannot open
 * 'FILE': why", or "FILE: not a SentencePiece model".
 */
struct spm *spm_load(const char *path, char *err, size_t errsize, int *code);
void spm_free(struct spm *m);

/* The number of pieces (ids are below it); bos, eos, pad, unk: -1 none. */
uint32_t spm_npieces(const struct spm *m);
int32_t spm_bos(const struct spm *m);
int32_t spm_eos(const struct spm *m);
int32_t spm_pad(const struct spm *m);
int32_t spm_unk(const struct spm *m);

/* The piece of id (below spm_npieces), NUL-terminated. */
const char *spm_piece(const struct spm *m, uint32_t id);
/* The id of the piece p[0..n) exactly, or -1 where there is none. */
int32_t spm_piece_id(const struct spm *m, const char *p, size_t n);

/*
 * Append the ids of text[0..len) (UTF-8) to *ids (grown with xrealloc;
 * *cap its room); returns how many. 0 also where the library fails, which
 * it does not for valid UTF-8.
 */
size_t spm_encode(const struct spm *m, const char *text, size_t len,
    uint32_t **ids, size_t *n, size_t *cap);

/*
 * Append the text of ids[0..n) as spm_decode gives it to out. Returns n,
 * or the index of the first id not below spm_npieces (nothing is
 * appended then).
 */
struct buf;
size_t spm_decode(const struct spm *m, const uint32_t *ids, size_t n,
    struct buf *out);

#ifdef __cplusplus
}
#endif

#endif
