/* ckpt_tok.h - the tokenizer a checkpoint keeps: its files copied, their sha256, type, BOS and EOS in config.json */
#ifndef OWT_CKPT_TOK_H
#define OWT_CKPT_TOK_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/json.h"
#include "tok/tokenizer.h"

/*
 * A checkpoint directory (iter_N/) of a run given a tokenizer keeps a copy
 * of its files under the names Hugging Face reads (GPT2BPETokenizer:
 * vocab.json and merges.txt; TikTokenizer: tokenizer.tiktoken; the
 * SentencePiece types: tokenizer.model; HuggingFaceTokenizer:
 * tokenizer.json and tokenizer_config.json, so that the checkpoint's
 * directory is its --tokenizer-model), and config.json says which:
 *
 *	"bos_token_id": 1, "eos_token_id": 2,
 *	"owt_tokenizer": {"type": "Llama2Tokenizer",
 *	    "files": {"tokenizer.model": "SHA256"}}
 *
 * ("pattern" too for TikTokenizer). The built-in GPT-2, named by no
 * option, is kept as before: no files, no "owt_tokenizer".
 */
#define CKPT_TOK_MAXFILES 2

struct ckpt_tok {
	char type[64];		/* Megatron's name */
	char pattern[64];	/* --tiktoken-pattern; "" none */
	int nfiles;
	struct {
		const char *name;	/* the copy's name in the checkpoint */
		char sha256[65];
		struct buf data;
	} file[CKPT_TOK_MAXFILES];
	uint32_t bos, eos;	/* BPE_NOID: none */
};

/*
 * The tokenizer t that the options o loaded, its files read and hashed.
 * 0 (nfiles 0 for the built-in GPT-2), or -1 with err and *code.
 */
int ckpt_tok_from(struct ckpt_tok *ct, const struct tokenizer_opts *o,
    const struct tokenizer *t, char *err, size_t errsize, int *code);
/*
 * The tokenizer the checkpoint directory dir keeps: 1 with ct filled and
 * its files read, 0 where config.json names none, -1 with err (XDATA: a
 * bad "owt_tokenizer", a missing copy or one whose sha256 differs).
 */
int ckpt_tok_read(struct ckpt_tok *ct, const char *dir, char *err,
    size_t errsize, int *code);
/*
 * The options that load the copies in dir of what ct names; paths holds
 * the file names (o points into it).
 */
void ckpt_tok_opts(const struct ckpt_tok *ct, const char *dir,
    struct tokenizer_opts *o, char paths[CKPT_TOK_MAXFILES][4200]);
/*
 * given (the options') against saved (the checkpoint's in dir): 0 where
 * they are the same tokenizer, else -1 with XUSAGE and err naming both
 * types or both sha256s.
 */
int ckpt_tok_check(const struct ckpt_tok *given, const struct ckpt_tok *saved,
    const char *dir, char *err, size_t errsize, int *code);
void ckpt_tok_free(struct ckpt_tok *ct);

/* The run's tokenizer, which every checkpoint saved after keeps (NULL: none). */
void ckpt_tok_set(const struct ckpt_tok *ct);
const struct ckpt_tok *ckpt_tok_get(void);

/* ct's "owt_tokenizer" member (after others) in w. */
void ckpt_tok_json(const struct ckpt_tok *ct, struct json_w *w);
/* ct's files into the directory dir. 0, or -1 with err (XSYS). */
int ckpt_tok_write(const struct ckpt_tok *ct, const char *dir, char *err,
    size_t errsize);

#endif
