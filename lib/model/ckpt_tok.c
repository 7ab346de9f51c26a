/* ckpt_tok.c - the tokenizer a checkpoint keeps: its files copied, their sha256, type, BOS and EOS in config.json */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/input.h"
#include "core/outfile.h"
#include "core/sha256.h"
#include "core/util.h"
#include "model/ckpt_tok.h"

static const struct ckpt_tok *current;

/* The whole file at path into b; one that does not exist is bad input. */
static int
read_all(const char *path, struct buf *b, char *err, size_t errsize,
    int *code)
{
	int r = input_read_file(path, b, err, errsize, code);

	if (r == 1) {
		errno = ENOENT;
		return owt_fail_errno(err, errsize, code, XDATA,
		    "cannot open '%s'", path);
	}
	return r;
}

/* The copies' names of a type's files, NULL-ended; NULL: none known. */
static const char *const *
names_of(const char *type)
{
	static const char *const gpt2[] = { "vocab.json", "merges.txt", NULL };
	static const char *const tt[] = { "tokenizer.tiktoken", NULL };
	static const char *const sp[] = { "tokenizer.model", NULL };
	static const char *const hf[] = { "tokenizer.json",
		"tokenizer_config.json", NULL };

	if (strcmp(type, "GPT2BPETokenizer") == 0)
		return gpt2;
	if (strcmp(type, "TikTokenizer") == 0)
		return tt;
	if (strcmp(type, "SentencePieceTokenizer") == 0 ||
	    strcmp(type, "GPTSentencePieceTokenizer") == 0 ||
	    strcmp(type, "Llama2Tokenizer") == 0)
		return sp;
	if (strcmp(type, "HuggingFaceTokenizer") == 0)
		return hf;
	return NULL;
}

/* ct's file k from path: read and hashed. */
static int
add_file(struct ckpt_tok *ct, int k, const char *name, const char *path,
    char *err, size_t errsize, int *code)
{
	ct->file[k].name = name;
	if (read_all(path, &ct->file[k].data, err, errsize, code) < 0)
		return -1;
	sha256_hex(ct->file[k].data.p, ct->file[k].data.len,
	    ct->file[k].sha256);
	ct->nfiles = k + 1;
	return 0;
}

int
ckpt_tok_from(struct ckpt_tok *ct, const struct tokenizer_opts *o,
    const struct tokenizer *t, char *err, size_t errsize, int *code)
{
	const char *type = o->type ? o->type : "GPT2BPETokenizer";
	const char *const *names = names_of(type);

	memset(ct, 0, sizeof *ct);
	snprintf(ct->type, sizeof ct->type, "%s", type);
	if (o->pattern)
		snprintf(ct->pattern, sizeof ct->pattern, "%s", o->pattern);
	ct->bos = tokenizer_bos(t);
	ct->eos = tokenizer_eos(t);
	/* Hugging Face's GPT-2 config: <|endoftext|> begins texts too */
	if (strcmp(type, "GPT2BPETokenizer") == 0)
		ct->bos = ct->eos;
	if (names == NULL)
		return owt_fail(err, errsize, code, XUSAGE, "--tokenizer-type "
		    "%s: checkpoints cannot keep it yet", type);
	if (o->model && names[1] != NULL) {
		/* a directory of them, as Hugging Face's */
		char path[4200];
		int k;

		for (k = 0; names[k] != NULL; k++) {
			snprintf(path, sizeof path, "%s/%s", o->model, names[k]);
			if (add_file(ct, k, names[k], path, err, errsize, code) < 0)
				return -1;
		}
		return 0;
	}
	if (o->model)
		return add_file(ct, 0, names[0], o->model, err, errsize, code);
	if (o->vocab && (add_file(ct, 0, names[0], o->vocab, err, errsize,
	    code) < 0 || add_file(ct, 1, names[1], o->merges, err, errsize,
	    code) < 0))
		return -1;
	return 0;
}

int
ckpt_tok_read(struct ckpt_tok *ct, const char *dir, char *err,
    size_t errsize, int *code)
{
	const struct json_val *tk, *v, *files;
	const char *const *names;
	struct json_val *doc;
	char path[4200];
	size_t i;
	int k, r = -1;

	memset(ct, 0, sizeof *ct);
	snprintf(path, sizeof path, "%s/config.json", dir);
	if ((doc = json_doc_load(path, err, errsize, code)) == NULL)
		return -1;
	if ((tk = json_doc_get(doc, "owt_tokenizer")) == NULL) {
		json_doc_free(doc);
		return 0;
	}
	if (tk->type != JV_MAP || (v = json_doc_get(tk, "type")) == NULL ||
	    v->type != JV_STRING || (names = names_of(v->str)) == NULL ||
	    (files = json_doc_get(tk, "files")) == NULL ||
	    files->type != JV_MAP || files->nkids > CKPT_TOK_MAXFILES) {
		owt_fail(err, errsize, code, XDATA, "%s: owt_tokenizer: not a "
		    "type and its files", path);
		goto out;
	}
	snprintf(ct->type, sizeof ct->type, "%s", v->str);
	if ((v = json_doc_get(tk, "pattern")) != NULL && v->type == JV_STRING)
		snprintf(ct->pattern, sizeof ct->pattern, "%s", v->str);
	ct->bos = ct->eos = BPE_NOID;
	if ((v = json_doc_get(doc, "bos_token_id")) != NULL &&
	    v->type == JV_NUMBER)
		ct->bos = (uint32_t)v->num;
	if ((v = json_doc_get(doc, "eos_token_id")) != NULL &&
	    v->type == JV_NUMBER)
		ct->eos = (uint32_t)v->num;
	for (i = 0; i < files->nkids; i++) {
		for (k = 0; names[k] && strcmp(names[k], files->kids[i].key);
		    k++)
			;
		if (names[k] == NULL || files->kids[i].type != JV_STRING) {
			owt_fail(err, errsize, code, XDATA, "%s: owt_tokenizer: "
			    "'%s' is not a file of %s", path, files->kids[i].key,
			    ct->type);
			goto out;
		}
		snprintf(path, sizeof path, "%s/%s", dir, names[k]);
		if (add_file(ct, (int)i, names[k], path, err, errsize, code) < 0)
			goto out;
		if (strcmp(ct->file[i].sha256, files->kids[i].str) != 0) {
			owt_fail(err, errsize, code, XDATA, "%s: sha256 %s, where "
			    "config.json has %s", path, ct->file[i].sha256,
			    files->kids[i].str);
			goto out;
		}
	}
	r = 1;
out:
	json_doc_free(doc);
	if (r < 0)
		ckpt_tok_free(ct);
	return r;
}

void
ckpt_tok_opts(const struct ckpt_tok *ct, const char *dir,
    struct tokenizer_opts *o, char paths[CKPT_TOK_MAXFILES][4200])
{
	int k;

	memset(o, 0, sizeof *o);
	o->type = ct->type;
	o->pattern = ct->pattern[0] ? ct->pattern : NULL;
	for (k = 0; k < ct->nfiles; k++)
		snprintf(paths[k], 4200, "%s/%s", dir, ct->file[k].name);
	if (strcmp(ct->type, "HuggingFaceTokenizer") == 0) {
		/* the checkpoint's directory holds both, as the model's did */
		snprintf(paths[0], 4200, "%s", dir);
		o->model = paths[0];
	} else if (ct->nfiles == 2) {
		o->vocab = paths[0];
		o->merges = paths[1];
	} else if (ct->nfiles == 1) {
		o->model = paths[0];
	}
}

int
ckpt_tok_check(const struct ckpt_tok *given, const struct ckpt_tok *saved,
    const char *dir, char *err, size_t errsize, int *code)
{
	int k;

	if (strcmp(given->type, saved->type) != 0 ||
	    strcmp(given->pattern, saved->pattern) != 0)
		return owt_fail(err, errsize, code, XUSAGE, "the tokenizer is "
		    "%s%s%s, where the checkpoint %s has %s%s%s", given->type,
		    *given->pattern ? " " : "", given->pattern, dir, saved->type,
		    *saved->pattern ? " " : "", saved->pattern);
	for (k = 0; k < saved->nfiles; k++)
		if (k >= given->nfiles || strcmp(given->file[k].sha256,
		    saved->file[k].sha256) != 0)
			return owt_fail(err, errsize, code, XUSAGE, "the "
			    "tokenizer's %s has sha256 %s, where the checkpoint "
			    "%s has %s", saved->file[k].name, k < given->nfiles ?
			    given->file[k].sha256 : "(none: the built-in GPT-2)",
			    dir, saved->file[k].sha256);
	return 0;
}

void
ckpt_tok_free(struct ckpt_tok *ct)
{
	int k;

	for (k = 0; k < CKPT_TOK_MAXFILES; k++)
		buf_free(&ct->file[k].data);
	ct->nfiles = 0;
}

void
ckpt_tok_set(const struct ckpt_tok *ct)
{
	current = ct;
}

const struct ckpt_tok *
ckpt_tok_get(void)
{
	return current;
}

void
ckpt_tok_json(const struct ckpt_tok *ct, struct json_w *w)
{
	int k;

	json_w_key(w, "owt_tokenizer");
	json_w_obj(w);
	json_w_key(w, "files");
	json_w_obj(w);
	for (k = 0; k < ct->nfiles; k++) {
		json_w_kstr(w, ct->file[k].name, ct->file[k].sha256);
	}
	json_w_end(w);
	if (ct->pattern[0]) {
		json_w_kstr(w, "pattern", ct->pattern);
	}
	json_w_kstr(w, "type", ct->type);
	json_w_end(w);
}

int
ckpt_tok_write(const struct ckpt_tok *ct, const char *dir, char *err,
    size_t errsize)
{
	char path[4200];
	int k, fd;

	for (k = 0; k < ct->nfiles; k++) {
		snprintf(path, sizeof path, "%s/%s", dir, ct->file[k].name);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0)
			return owt_fail_errno(err, errsize, NULL, XSYS,
			    "%s: cannot create", path);
		if (outfile_write_all(fd, ct->file[k].data.p,
		    ct->file[k].data.len) < 0 || close(fd) < 0) {
			owt_fail_errno(err, errsize, NULL, XSYS, "%s: write "
			    "error", path);
			close(fd);
			return -1;
		}
	}
	return 0;
}
