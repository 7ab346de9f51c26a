/* spm.h - a SentencePiece model through Debian's libsentencepiece, loaded as a plugin: a C face over its C++ */
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

/*
 * The library is C++, and so heavy to load (its own and libstdc++'s
 * relocations: 4 ms of CPU at each start of a program that links it) that
 * no program links it: the functions above (spm.c) load the plugin
 * lib/owt/spm.so (spm_plugin.cc, built where libsentencepiece is found)
 * when a model is first loaded, and call it through struct spm_ops. The
 * plugin uses nothing of the program's (-z defs): it reports with codes,
 * and hands ids and text back through the callers' functions.
 */
#define SPM_ABI 1
/* why a load failed: SPM_NOFILE with fopen's errno kept */
enum { SPM_NOFILE = 1, SPM_NOTMODEL, SPM_NOMEM };
struct spm_ops {
	int abi;		/* SPM_ABI */
	struct spm *(*load)(const char *path, int *why);
	void (*free)(struct spm *m);
	uint32_t (*npieces)(const struct spm *m);
	int32_t (*bos)(const struct spm *m);
	int32_t (*eos)(const struct spm *m);
	int32_t (*pad)(const struct spm *m);
	int32_t (*unk)(const struct spm *m);
	const char *(*piece)(const struct spm *m, uint32_t id);
	int32_t (*piece_id)(const struct spm *m, const char *p, size_t n);
	/* the ids of text given to put(arg, ids, n) at once; -1: refused */
	int (*encode)(const struct spm *m, const char *text, size_t len,
	    void (*put)(void *arg, const int *ids, size_t n), void *arg);
	/* ids (each below npieces) decoded, to put(arg, s, n); -1: refused */
	int (*decode)(const struct spm *m, const int *ids, size_t n,
	    void (*put)(void *arg, const char *s, size_t n), void *arg);
};
typedef const struct spm_ops *spm_ops_fn(void);

#ifdef __cplusplus
}
#endif

#endif
