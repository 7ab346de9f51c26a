/* spmtok.c - Megatron's SentencePiece tokenizers over spm.h: SentencePieceTokenizer, GPTSentencePieceTokenizer, Llama2Tokenizer */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "tok/spmtok.h"

/* The piece of id, or dflt where the model has none (id -1). */
static const char *
piece_or(const struct spmtok *t, int32_t id, const char *dflt)
{
	return id >= 0 && (uint32_t)id < spm_npieces(t->m) ?
	    spm_piece(t->m, (uint32_t)id) : dflt;
}

/*
 * Megatron's _add_special_token: text's id among the pieces, or a new one
 * after them; registered once as a special token (a dict's keys).
 */
static uint32_t
add_special(struct spmtok *t, const char *text)
{
	size_t i, len = strlen(text);
	int32_t id;

	for (i = 0; i < t->nspecial; i++)
		if (strcmp(t->special[i].text, text) == 0)
			return t->special[i].id;
	if ((id = spm_piece_id(t->m, text, len)) < 0)
		id = (int32_t)t->nvocab++;
	t->special[t->nspecial].text = xstrdup(text);
	t->special[t->nspecial].len = len;
	t->special[t->nspecial++].id = (uint32_t)id;
	return (uint32_t)id;
}

/* A piece id of the model, or BPE_NOID for -1. */
static uint32_t
model_id(int32_t id)
{
	return id < 0 ? BPE_NOID : (uint32_t)id;
}

struct spmtok *
spmtok_load(const char *path, int kind, char *err, size_t errsize, int *code)
{
	struct spmtok *t;
	struct spm *m;

	if ((m = spm_load(path, err, errsize, code)) == NULL)
		return NULL;
	t = xcalloc(1, sizeof *t);
	t->m = m;
	t->kind = kind;
	t->nvocab = spm_npieces(m);
	t->bos = model_id(spm_bos(m));
	t->eos = t->eod = model_id(spm_eos(m));
	if (kind == SPMTOK_LLAMA2 && t->bos == BPE_NOID) {
		owt_fail(err, errsize, code, XDATA, "%s: the model has no BOS "
		    "piece, which Llama2Tokenizer puts first", path);
		spmtok_free(t);
		return NULL;
	}
	if (kind != SPMTOK_SP)
		return t;
	add_special(t, "<CLS>");
	add_special(t, "<SEP>");
	t->eod = add_special(t, "<EOD>");
	add_special(t, "<MASK>");
	add_special(t, piece_or(t, spm_pad(m), "<PAD>"));
	t->bos = add_special(t, piece_or(t, spm_bos(m), "<BOS>"));
	t->eos = add_special(t, piece_or(t, spm_eos(m), "<EOS>"));
	return t;
}

void
spmtok_free(struct spmtok *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nspecial; i++)
		free(t->special[i].text);
	spm_free(t->m);
	free(t);
}

static void
put_id(struct bpe_ids *out, uint32_t id)
{
	if (out->n == out->cap) {
		out->cap = out->cap ? out->cap * 2 : 64;
		out->v = xrealloc(out->v, out->cap * sizeof *out->v);
	}
	out->v[out->n++] = id;
}

/* The first special token in s[0..len): its index, *at its offset; -1 none. */
static int
find_special(const struct spmtok *t, const char *s, size_t len, size_t *at)
{
	const char *p, *best = NULL;
	size_t i, lim;
	int k = -1;

	for (i = 0; i < t->nspecial; i++) {
		/* a match that starts before the best so far */
		lim = best ? (size_t)(best - s) + t->special[i].len - 1 : len;
		p = memmem(s, lim < len ? lim : len, t->special[i].text,
		    t->special[i].len);
		if (p != NULL && (best == NULL || p < best)) {
			best = p;
			k = (int)i;
		}
	}
	if (k >= 0)
		*at = (size_t)(best - s);
	return k;
}

size_t
spmtok_encode(const struct spmtok *t, const char *text, size_t len,
    struct bpe_ids *out)
{
	size_t n0 = out->n, at;
	int k;

	if (t->kind == SPMTOK_LLAMA2)
		put_id(out, t->bos);
	if (t->kind == SPMTOK_SP)
		while ((k = find_special(t, text, len, &at)) >= 0) {
			spm_encode(t->m, text, at, &out->v, &out->n, &out->cap);
			put_id(out, t->special[k].id);
			text += at + t->special[k].len;
			len -= at + t->special[k].len;
		}
	spm_encode(t->m, text, len, &out->v, &out->n, &out->cap);
	return out->n - n0;
}

/* SentencePieceTokenizer's special token of id, or -1. */
static int
special_of(const struct spmtok *t, uint32_t id)
{
	size_t i;

	for (i = 0; i < t->nspecial; i++)
		if (t->special[i].id == id)
			return (int)i;
	return -1;
}

size_t
spmtok_decode(const struct spmtok *t, const uint32_t *ids, size_t n,
    struct buf *out)
{
	size_t i, last = 0, len0 = out->len, bad;
	int k;

	for (i = 0; i < n; i++)
		if (ids[i] >= t->nvocab)
			return i;
	if (t->kind != SPMTOK_SP)
		return spm_decode(t->m, ids, n, out);
	for (i = 0; i < n; i++) {
		if ((k = special_of(t, ids[i])) < 0)
			continue;
		if ((bad = spm_decode(t->m, ids + last, i - last, out)) !=
		    i - last) {
			out->len = len0;
			if (out->p)
				out->p[len0] = '\0';
			return last + bad;
		}
		buf_addc(out, ' ');
		buf_add(out, t->special[k].text, t->special[k].len);
		buf_addc(out, ' ');
		last = i + 1;
	}
	if ((bad = spm_decode(t->m, ids + last, n - last, out)) != n - last) {
		out->len = len0;
		if (out->p)
			out->p[len0] = '\0';
		return last + bad;
	}
	return n;
}

void
spmtok_token(const struct spmtok *t, uint32_t id, struct buf *out)
{
	const char *p;
	unsigned v;
	size_t i;
	char c;

	if (id >= spm_npieces(t->m)) {
		for (i = 0; i < t->nspecial; i++)
			if (t->special[i].id == id)
				buf_add(out, t->special[i].text, t->special[i].len);
		return;
	}
	if ((int32_t)id == spm_bos(t->m) || (int32_t)id == spm_eos(t->m) ||
	    (int32_t)id == spm_pad(t->m))
		return;
	if ((int32_t)id == spm_unk(t->m)) {
		buf_adds(out, " \xe2\x81\x87 ");
		return;
	}
	p = spm_piece(t->m, id);
	if (strlen(p) == 6 && sscanf(p, "<0x%2x%c", &v, &c) == 2 && c == '>') {
		c = (char)v;
		buf_add(out, &c, 1);
		return;
	}
	for (; *p; p++) {
		if (strncmp(p, "\xe2\x96\x81", 3) == 0) {
			buf_add(out, " ", 1);
			p += 2;
		} else {
			buf_add(out, p, 1);
		}
	}
}
