/* gen_queue.c - prompts and samples in input order; their records and --score's */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_queue.h"
#include "core/json.h"
#include "core/util.h"

/* One input record and the samples drawn from it. */
struct gen_queue_prompt {
	char *line;		/* the JSONL record, or NULL for a text line */
	size_t len;
	char *text;		/* the text line, or the record's prompt */
	size_t tlen;
	int empty;		/* no prompt: the context is EOD */
	struct bpe_ids ids;
	int refs;		/* samples not yet written */
};

struct gen_queue_sample {
	struct gen_seq seq;	/* first: gen's callback gets it */
	struct gen_queue_prompt *p;
	int index;		/* among the prompt's samples */
	int ended;
	struct bpe_ids out;	/* the tokens generated */
	size_t shown;		/* tokens written so far (text, streaming) */
	size_t shown_bytes;	/* and the bytes of their text */
	struct gen_queue_sample *next;
};

#define PY_BAD 0x110000	/* not a code point: an invalid subpart */

/*
 * The code point that starts s[0..n) (n > 0) as Python's UTF-8 decoder
 * with errors="replace", Megatron's detokenizer, reads it: U+FFFD for
 * each maximal invalid subpart (a truncated sequence is one, a stray
 * byte another), returned as PY_BAD. *used gets the bytes read.
 */
static uint32_t
py_next(const unsigned char *s, size_t n, size_t *used)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf, need, k;
	uint32_t cp;

	*used = 1;
	if (c < 0x80)
		return c;
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		cp = c & 0x0f;
		lo = c == 0xe0 ? 0xa0 : 0x80;
		hi = c == 0xed ? 0x9f : 0xbf;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		cp = c & 0x07;
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf;
	} else {
		return PY_BAD;
	}
	for (k = 1; k <= need; k++) {
		if (k >= n || s[k] < lo || s[k] > hi)
			return PY_BAD;
		cp = cp << 6 | (s[k] & 0x3f);
		*used = k + 1;
		lo = 0x80;
		hi = 0xbf;
	}
	return cp;
}

void
gen_queue_py_text(struct buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k;

	while (i < n) {
		if (py_next(u + i, n - i, &k) == PY_BAD)
			buf_adds(b, "\357\277\275");
		else
			buf_add(b, s + i, k);
		i += k;
	}
}

void
gen_queue_init(struct gen_queue *q, const struct gen_queue_opts *o,
    const struct tokenizer *vocab, struct tokenizer_state *bs, FILE *out)
{
	memset(q, 0, sizeof *q);
	q->o = *o;
	if (q->o.nsamples < 1)
		q->o.nsamples = 1;
	q->vocab = vocab;
	q->bs = bs;
	q->out = out;
	json_rec_init(&q->rec, &q->o.key, 1);
}

/* Write n bytes, remembering the first error. */
static void
put(struct gen_queue *q, const void *p, size_t n, int flush)
{
	if (n > 0)
		fwrite(p, 1, n, q->out);
	if (flush)
		fflush(q->out);
	if (ferror(q->out) && q->werrno == 0)
		q->werrno = errno ? errno : EIO;
}

/*
 * Write the text of s not yet written (text mode), and flush. The text
 * of all its tokens, less what was written: a SentencePiece token's text
 * depends on what comes before it (the first one's space is dropped).
 */
static void
stream(struct gen_queue *q, struct gen_queue_sample *s)
{
	struct buf b = { 0 };

	if (s->shown == s->out.n)
		return;
	tokenizer_decode(q->vocab, s->out.v, s->out.n, &b);
	if (b.len > s->shown_bytes) {
		put(q, b.p + s->shown_bytes, b.len - s->shown_bytes, 1);
		s->shown_bytes = b.len;
	}
	buf_free(&b);
	s->shown = s->out.n;
}

/* s's JSONL record into b: the prompt's record with the sample's fields. */
static void
jsonl_sample(struct gen_queue *q, struct gen_queue_sample *s, struct buf *b)
{
	struct buf raw = { 0 }, v = { 0 };
	struct json_w w;
	struct json_edit ed[7];
	const char *key[7];
	char err[256];
	size_t at[8], ned = 0, k;

	/* the values one after another in v, key[k]'s from at[k] */
	tokenizer_decode(q->vocab, s->out.v, s->out.n, &raw);
	json_w_init(&w, &v, JSON_COMPACT | JSON_LOSSY);
	key[ned] = "text";
	at[ned++] = v.len;
	json_w_str(&w, raw.p ? raw.p : "", raw.len);
	key[ned] = "prompt_tokens";
	at[ned++] = v.len;
	json_w_u64(&w, s->p->empty ? 0 : s->p->ids.n);
	key[ned] = "tokens";
	at[ned++] = v.len;
	json_w_int(&w, s->seq.ngen);
	key[ned] = "finished";
	at[ned++] = v.len;
	json_w_bool(&w, s->seq.end == GEN_EOD);
	if (q->o.nsamples > 1) {
		key[ned] = "sample";
		at[ned++] = v.len;
		json_w_int(&w, s->index);
	}
	if (q->o.ids) {
		key[ned] = "prompt_ids";
		at[ned++] = v.len;
		json_ids(&v, s->p->ids.v, s->p->ids.n);
		key[ned] = "ids";
		at[ned++] = v.len;
		json_ids(&v, s->out.v, s->out.n);
	}
	at[ned] = v.len;
	for (k = 0; k < ned; k++)
		ed[k] = (struct json_edit){ key[k], v.p + at[k],
		    at[k + 1] - at[k] };
	if (s->p->line) {	/* the record, its fields edited */
		if (json_rec_parse(&q->rec, s->p->line, s->p->len, err,
		    sizeof err) != 0)
			owt_fatal("gen_queue: a record parsed when read: %s",
			    err);
		json_rec_write(b, &q->rec, ed, ned);
	} else {		/* a text prompt: a record of its own */
		json_w_init(&w, b, JSON_COMPACT | JSON_LOSSY);
		json_w_obj(&w);
		json_w_key(&w, "prompt");
		json_w_str(&w, s->p->text, s->p->tlen);
		for (k = 0; k < ned; k++) {
			json_w_key(&w, ed[k].key);
			json_w_raw(&w, ed[k].json, ed[k].len);
		}
		json_w_end(&w);
		buf_addc(b, '\n');
	}
	buf_free(&raw);
	buf_free(&v);
}

/* Write a finished sample in q's format. */
static void
write_sample(struct gen_queue *q, struct gen_queue_sample *s)
{
	struct buf b = { 0 }, raw = { 0 }, text = { 0 };
	struct json_w w;
	uint32_t eod = tokenizer_eod(q->vocab);
	int ended = s->seq.end == GEN_EOD;

	switch (q->o.format) {
	case GEN_QUEUE_TEXT:
		stream(q, s);
		put(q, "\n", 1, 1);
		return;
	case GEN_QUEUE_JSONL:
		jsonl_sample(q, s, &b);
		break;
	case GEN_QUEUE_MEGATRON:
		tokenizer_decode(q->vocab, s->out.v, s->out.n, &raw);
		if (ended)
			tokenizer_decode(q->vocab, &eod, 1, &raw);
		buf_adds(&b, "\nContext:");
		buf_add(&b, s->p->text, s->p->tlen);
		buf_adds(&b, "\n\n\nMegatron-LM:");
		gen_queue_py_text(&b, raw.p ? raw.p : "", raw.len);
		buf_addc(&b, '\n');
		break;
	case GEN_QUEUE_UNCOND:
		tokenizer_decode(q->vocab, s->out.v, s->out.n, &raw);
		json_w_init(&w, &b, JSON_SPACED | JSON_ASCII);
		json_w_obj(&w);
		json_w_key(&w, "text");
		gen_queue_py_text(&text, raw.p ? raw.p : "", raw.len);
		json_w_str(&w, text.p, text.len);
		json_w_kint(&w, "length", s->seq.ngen);
		json_w_key(&w, "finished");
		json_w_bool(&w, ended);
		json_w_end(&w);
		buf_addc(&b, '\n');
		break;
	}
	put(q, b.p, b.len, q->o.flush);
	buf_free(&b);
	buf_free(&raw);
	buf_free(&text);
}

static void
free_sample(struct gen_queue_sample *s)
{
	if (--s->p->refs == 0) {
		free(s->p->line);
		free(s->p->text);
		free(s->p->ids.v);
		free(s->p);
	}
	free(s->out.v);
	free(s);
}

/* Write the finished samples at the head of the queue, in input order. */
static void
write_ready(struct gen_queue *q)
{
	while (q->head && q->head->ended) {
		struct gen_queue_sample *s = q->head;

		write_sample(q, s);
		q->head = s->next;
		if (q->head == NULL)
			q->tail = NULL;
		free_sample(s);
	}
	if (q->head && q->o.format == GEN_QUEUE_TEXT)
		stream(q, q->head);
}

static void
on_token(void *arg, struct gen_seq *seq, int32_t tok)
{
	struct gen_queue *q = arg;
	struct gen_queue_sample *s = (struct gen_queue_sample *)seq;

	if (tok >= 0) {
		if (s->out.n == s->out.cap)
			s->out.v = xgrow(s->out.v, &s->out.cap, s->out.n + 1,
			    sizeof *s->out.v);
		s->out.v[s->out.n++] = (uint32_t)tok;
		q->ntokens++;
		if (s == q->head && q->o.format == GEN_QUEUE_TEXT)
			stream(q, s);
		return;
	}
	s->ended = 1;
	if (s == q->head)
		write_ready(q);
}

void
gen_queue_model(struct gen_queue *q, struct gpt_infer *inf,
    const struct gen_opts *o)
{
	gen_init(&q->gen, inf, o, on_token, q);
}

void
gen_queue_free(struct gen_queue *q)
{
	struct gen_queue_sample *s, *next;

	for (s = q->head; s; s = next) {
		next = s->next;
		free_sample(s);
	}
	q->head = q->tail = q->unstarted = NULL;
	if (q->gen.inf)
		gen_free(&q->gen);
	json_rec_free(&q->rec);
	free(q->sids.v);
	buf_free(&q->sbuf);
}

int
gen_queue_add(struct gen_queue *q, const char *line, size_t len,
    unsigned long lineno, char *err, size_t errsize)
{
	const char *text = line, *why;
	size_t tlen, n;
	struct gen_queue_prompt *p;
	int i, T = q->gen.inf ? q->gen.o.ctx : 0;

	if (q->o.format == GEN_QUEUE_MEGATRON) {
		if (memmem(line, len, "stop", 4) != NULL)
			return 1;
	} else if (lineno == 1) {
		q->jsonl_in = len > 0 && line[0] == '{';
		if (q->jsonl_in && q->o.format == GEN_QUEUE_TEXT)
			q->o.format = GEN_QUEUE_JSONL;
	}
	if (len > 0 && line[len - 1] == '\r' && !q->jsonl_in)
		len--;
	tlen = len;
	if (q->jsonl_in) {
		if (json_rec_parse(&q->rec, line, len, err, errsize) != 0)
			return -1;
		if ((text = json_rec_str(&q->rec, q->o.key, &tlen, &why)) == NULL) {
			return owt_fail(err, errsize, NULL, XDATA,
			    "'%s' is %s", q->o.key, why);
		}
	}
	p = xcalloc(1, sizeof *p);
	if ((p->empty = tlen == 0 && q->o.format != GEN_QUEUE_MEGATRON)) {
		p->ids.v = xmalloc(sizeof *p->ids.v);
		p->ids.v[p->ids.n++] = tokenizer_eod(q->vocab);
	} else if (q->o.format == GEN_QUEUE_MEGATRON) {
		char *nl = xmalloc(tlen + 1);	/* readlines keeps it */

		memcpy(nl, text, tlen);
		nl[tlen] = '\n';
		tokenizer_encode(q->bs, nl, tlen + 1, &p->ids);
		free(nl);
	} else {
		tokenizer_encode(q->bs, text, tlen, &p->ids);
	}
	if (T > 0 && (n = p->ids.n) >= (size_t)T) {
		free(p->ids.v);
		free(p);
		return owt_fail(err, errsize, NULL, XDATA,
		    "a prompt of %zu tokens leaves no room "
		    "in a context of %d", n, T);
	}
	p->text = xstrndup(text, tlen);
	p->tlen = tlen;
	if (q->jsonl_in) {
		p->line = xstrndup(line, len);
		p->len = len;
	}
	q->nprompts++;
	for (i = 0; i < q->o.nsamples; i++) {
		struct gen_queue_sample *s = xcalloc(1, sizeof *s);

		s->p = p;
		s->index = i;
		s->seq.stream = (q->nprompts - 1) * (uint64_t)q->o.nsamples + i;
		p->refs++;
		q->nsamples++;
		if (q->tail)
			q->tail->next = s;
		else
			q->head = s;
		q->tail = s;
		if (q->unstarted == NULL)
			q->unstarted = s;
	}
	return 0;
}

/* The arguments of a line scored, not generated (read_line). */
struct score_to {
	struct gpt_infer *inf;
	int T, stride;
	struct buf *out;
};

/*
 * The next line of in, added to q's samples (sc NULL; 1 when it was
 * queued) or scored into sc->out (1): 0 at the end; -1 with err and
 * *code on a read error, or "FILE:LINE: why" (XDATA) for a bad line.
 */
static int
read_line(struct gen_queue *q, struct input *in, const struct score_to *sc,
    char *err, size_t errsize, int *code)
{
	char *line, why[512];
	size_t len;
	int r = input_line(in, &line, &len);

	if (r < 0)
		return owt_fail(err, errsize, code, in->errcode, "%s", in->err);
	if (r == 0)
		return 0;
	r = sc == NULL ? gen_queue_add(q, line, len, in->lineno, why,
	    sizeof why) : gen_queue_score_rec(q, sc->inf, sc->T, sc->stride,
	    line, len, sc->out, why, sizeof why);
	if (r < 0)
		return owt_fail(err, errsize, code, XDATA, "%s:%lu: %s",
		    in->name, in->lineno, why);
	return sc != NULL || r == 0;
}

int
gen_queue_read(struct gen_queue *q, struct input *in, char *err,
    size_t errsize, int *code)
{
	return read_line(q, in, NULL, err, errsize, code);
}

int
gen_queue_wants(const struct gen_queue *q)
{
	return q->unstarted == NULL && gen_has_room(&q->gen);
}

int
gen_queue_step(struct gen_queue *q)
{
	char err[OWT_ERRSIZE];
	int code;

	while (q->unstarted && gen_has_room(&q->gen)) {
		struct gen_queue_sample *s = q->unstarted;

		q->unstarted = s->next;
		if (gen_start(&q->gen, &s->seq, (const int32_t *)s->p->ids.v,
		    (int)s->p->ids.n, err, sizeof err, &code) < 0)
			owt_fatal("gen_queue: a prompt checked when read: %s",
			    err);
	}
	if (q->gen.running == 0 && q->unstarted == NULL)
		return 0;
	gen_step(&q->gen);
	return 1;
}

void
gen_queue_stop(struct gen_queue *q)
{
	int k;

	for (k = 0; k < q->gen.inf->S; k++)
		if (q->gen.slot[k])
			gen_stop(&q->gen, q->gen.slot[k]);
}

int
gen_queue_score_rec(struct gen_queue *q, struct gpt_infer *inf, int T,
    int stride, const char *line, size_t len, struct buf *out, char *err,
    size_t errsize)
{
	struct bpe_ids *ids = &q->sids;
	struct json_edit ed[4];
	struct json_w w;
	const char *text, *why;
	size_t tlen, at[3];
	double nll;
	int count;

	if (json_rec_parse(&q->rec, line, len, err, errsize) != 0)
		return -1;
	if ((text = json_rec_str(&q->rec, q->o.key, &tlen, &why)) == NULL) {
		return owt_fail(err, errsize, NULL, XDATA,
		    "'%s' is %s", q->o.key, why);
	}
	ids->n = 0;
	tokenizer_encode(q->bs, text, tlen, ids);
	ids->v = xgrow(ids->v, &ids->cap, ids->n + 1, sizeof *ids->v);
	ids->v[ids->n++] = tokenizer_eod(q->vocab);
	gen_score(inf, (const int32_t *)ids->v, (int)ids->n, T, stride, &nll,
	    &count);
	/* null: no tokens (0 / 0), or NaN and inf, which JSON lacks */
	q->sbuf.len = 0;
	json_w_init(&w, &q->sbuf, JSON_COMPACT);
	json_w_num(&w, "%.9g", count > 0 ? nll / count : NAN);
	at[0] = q->sbuf.len;
	json_w_num(&w, "%.9g", count > 0 ? exp(nll / count) : NAN);
	at[1] = q->sbuf.len;
	json_w_int(&w, count);
	at[2] = q->sbuf.len;
	if (q->o.ids)
		json_ids(&q->sbuf, ids->v, ids->n);
	ed[0] = (struct json_edit){ "nll", q->sbuf.p, at[0] };
	ed[1] = (struct json_edit){ "ppl", q->sbuf.p + at[0], at[1] - at[0] };
	ed[2] = (struct json_edit){ "tokens", q->sbuf.p + at[1], at[2] - at[1] };
	ed[3] = (struct json_edit){ "ids", q->sbuf.p + at[2],
	    q->sbuf.len - at[2] };
	out->len = 0;
	json_rec_write(out, &q->rec, ed, q->o.ids ? 4 : 3);
	q->nrec++;
	if (count > 0 && !isfinite(nll)) {
		q->nonfinite++;
	} else {
		q->nscored += (unsigned long long)count;
		q->nll += nll;
	}
	return 0;
}

int
gen_queue_score_read(struct gen_queue *q, struct gpt_infer *inf, int T,
    int stride, struct input *in, struct buf *out, char *err,
    size_t errsize, int *code)
{
	return read_line(q, in, &(struct score_to){ inf, T, stride, out }, err,
	    errsize, code);
}
