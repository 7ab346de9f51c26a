/* encode.c - bpe-encode's jobs: JSONL records to token ids (a stream or datasets), streams back to JSONL */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/utf8.h"
#include "core/util.h"
#include "tok/encode.h"

/* A batch's counters (struct batch's count[]): a struct tok_count, then ours. */
enum { B_DOC, B_TOK, B_SUM, B_EMPTY, B_BYTES };

/* A worker's own state. */
struct worker {
	/* copies: the main thread writes the counters beside e's */
	struct encode_opts o;
	struct tok_hdr hdr;
	struct tokenizer_state *tk;
	struct json_rec rec;
	struct bpe_ids ids;
	struct tok_count c;	/* the documents of the batch being encoded */
};

void
encode_init(struct encode *e, const struct encode_opts *o,
    struct tokenizer *vocab)
{
	memset(e, 0, sizeof *e);
	e->o = *o;
	e->vocab = vocab;
	e->status = XOK;
	tok_hdr_init(&e->hdr, tokenizer_nvocab(vocab), tokenizer_eod(vocab));
}

static void *
worker_init(void *arg)
{
	const struct encode *e = arg;
	struct worker *w = xcalloc(1, sizeof *w);

	w->o = e->o;
	w->hdr = e->hdr;
	w->tk = tokenizer_state_new(e->vocab,
	    ENCODE_CACHE_BYTES / (size_t)e->o.workers);
	json_rec_init(&w->rec, e->o.keys, e->o.nkeys);
	return w;
}

static void
worker_fini(void *state)
{
	struct worker *w = state;

	tokenizer_state_free(w->tk);
	json_rec_free(&w->rec);
	free(w->ids.v);
	free(w);
}

/*
 * --output-prefix: a worker's documents, for encode_done to add to the
 * datasets: the key's index and the number of ids (uint32 each), then the
 * ids, in host order.
 */
static void
put_doc(struct buf *out, struct tok_count *c, size_t key, const uint32_t *ids,
    size_t n)
{
	uint32_t h[2] = { (uint32_t)key, (uint32_t)n };

	buf_add(out, (const char *)h, sizeof h);
	buf_add(out, (const char *)ids, n * sizeof *ids);
	c->docs++;
	c->tokens += n;
}

/* One record: every key's text becomes a document, or the record is bad. */
static void
encode_line(struct batch *b, struct worker *w, size_t i)
{
	const char *line = b->in.p + b->off[i], *text[ENCODE_MAXKEYS];
	size_t len = b->off[i + 1] - b->off[i] - 1, tlen[ENCODE_MAXKEYS], k;
	char err[512];
	int r;

	if ((r = json_rec_parse(&w->rec, line, len, err, sizeof err)) != 0) {
		batch_note(b, r, "%s:%lu: %s", b->name, b->lineno[i], err);
		return;
	}
	for (k = 0; k < w->o.nkeys; k++)
		if ((text[k] = json_rec_text(&w->rec, w->o.keys[k], &tlen[k],
		    err, sizeof err)) == NULL) {
			batch_note(b, BAD_FIELD, "%s:%lu: %s", b->name,
			    b->lineno[i], err);
			return;
		}
	for (k = 0; k < w->o.nkeys; k++) {
		w->ids.n = 0;
		tokenizer_encode(w->tk, text[k], tlen[k], &w->ids);
		b->count[B_BYTES] += tlen[k];
		/* Megatron-LM v2.5: an empty text is no document, EOD or not. */
		if (w->ids.n == 0) {
			b->count[B_EMPTY]++;
			continue;
		}
		if (w->o.append_eod) {
			w->ids.v = xgrow(w->ids.v, &w->ids.cap, w->ids.n + 1,
			    sizeof *w->ids.v);
			w->ids.v[w->ids.n++] = w->hdr.eod;
		}
		if (w->ids.n > TOK_MAXDOC) {
			batch_note(b, BAD_TOOLONG, "%s:%lu: document of %zu tokens "
			    "(the most is %u)", b->name, b->lineno[i], w->ids.n,
			    TOK_MAXDOC);
			continue;
		}
		if (w->o.prefix)
			put_doc(&b->out, &w->c, k, w->ids.v, w->ids.n);
		else
			tok_put_doc(&b->out, &w->hdr, &w->c, w->ids.v, w->ids.n);
	}
}

static void
encode_batch(struct batch *b, void *state)
{
	struct worker *w = state;
	size_t i;

	memset(&w->c, 0, sizeof w->c);
	for (i = 0; i < b->nline; i++) {
		encode_line(b, w, i);
		/* A long record's text and ids are not kept for the next. */
		if (w->ids.cap * sizeof *w->ids.v > ENCODE_KEEP) {
			free(w->ids.v);
			memset(&w->ids, 0, sizeof w->ids);
		}
		if (w->rec.arena.cap > ENCODE_KEEP) {
			json_rec_free(&w->rec);
			json_rec_init(&w->rec, w->o.keys, w->o.nkeys);
		}
	}
	b->count[B_DOC] = w->c.docs;
	b->count[B_TOK] = w->c.tokens;
	b->count[B_SUM] = w->c.sum;
}

void
encode_batch_opts(struct encode *e, struct batch_opts *run)
{
	memset(run, 0, sizeof *run);
	run->nworkers = e->o.workers;
	run->bytes = ENCODE_BATCH_BYTES;
	run->held = ENCODE_HELD_BYTES;
	run->keep_going = e->o.keep_going;
	run->bad = e->count;
	run->init = worker_init;
	run->work = encode_batch;
	run->fini = worker_fini;
	run->arg = e;
}

/* A bad record without -k ends the stream there, with no trailer. */
int
encode_done(struct encode *e, struct batch *b, char *err, size_t errsize,
    int *code)
{
	struct tok_count c = { b->count[B_DOC], b->count[B_TOK], b->count[B_SUM] };
	struct mmidx_writer *d;
	uint32_t h[2];
	size_t i, at;
	double secs;

	/* --output-prefix: each document into its key's dataset, in order. */
	for (at = 0; e->dset != NULL && at < b->out.len;
	    at += h[1] * sizeof h[0]) {
		memcpy(h, b->out.p + at, sizeof h);
		at += sizeof h;
		d = &e->dset[h[0]];
		if (mmidx_add(d, (const uint32_t *)(b->out.p + at), h[1]) < 0 ||
		    mmidx_end_doc(d) < 0)
			return owt_fail(err, errsize, code, d->errcode, "%s",
			    d->err);
	}
	if (e->dset != NULL)
		b->out.len = 0;
	tok_count_add(&e->written, &c);
	e->ndoc += b->count[B_DOC];
	e->ntok += b->count[B_TOK];
	e->nbytes += b->count[B_BYTES];
	e->count[ENCODE_EMPTY].n += b->count[B_EMPTY];
	for (i = 0; i < b->nline; i++) {
		progress_tick(&e->prog, e->ndoc, e->nbytes);
		/* Megatron's line; its "bytes" are those of the JSON lines. */
		e->nrec++;
		if (e->o.log_interval > 0 &&
		    e->nrec % (unsigned)e->o.log_interval == 0 && !e->o.quiet) {
			secs = progress_elapsed(&e->prog);
			fprintf(stderr, "Processed %llu documents (%.1f docs/s, "
			    "%.1f MB/s).\n", e->nrec, secs > 0 ? e->nrec / secs :
			    0.0, secs > 0 ? (double)(e->nin + b->off[i + 1]) /
			    1e6 / secs : 0.0);
		}
	}
	if (b->nline > 0)	/* a batch of notes alone has no offsets */
		e->nin += b->off[b->nline];
	return 0;
}

int
encode_datasets_create(struct encode *e, char *err, size_t errsize, int *code)
{
	char *name;
	size_t k, n;

	e->dset = xcalloc(e->o.nkeys, sizeof *e->dset);
	e->dname = xcalloc(e->o.nkeys, sizeof *e->dname);
	for (k = 0; k < e->o.nkeys; k++) {
		n = strlen(e->o.prefix) + strlen(e->o.keys[k]) + 11;
		e->dname[k] = name = xmalloc(n);
		snprintf(name, n, "%s_%s_document", e->o.prefix, e->o.keys[k]);
		if (mmidx_create(&e->dset[k], name, MMIDX_DTYPE(e->hdr.vocab),
		    1) < 0)
			return owt_fail(err, errsize, code, e->dset[k].errcode,
			    "%s", e->dset[k].err);
	}
	return 0;
}

int
encode_datasets_commit(struct encode *e, char *err, size_t errsize, int *code)
{
	struct mmidx_writer done;
	size_t k;

	for (k = 0; k < e->o.nkeys; k++) {
		done = e->dset[k];
		if (mmidx_commit(&e->dset[k]) < 0)
			return owt_fail(err, errsize, code, e->dset[k].errcode,
			    "%s", e->dset[k].err);
		if (!e->o.quiet)
			fprintf(stderr, "%s: %s: %llu documents, %llu tokens (%s), "
			    "%.1f MB\n", owt_prog, e->dname[k],
			    (unsigned long long)done.ndocs,
			    (unsigned long long)done.ntokens,
			    mmidx_dtype_name(done.dtype), (double)done.binbytes / 1e6);
		free(e->dname[k]);
	}
	free(e->dset);
	free(e->dname);
	e->dset = NULL;
	e->dname = NULL;
	return 0;
}

/* Write p[0..n) on f: 0, or -1 (a write error, for owt_finish to report). */
static int
put(FILE *f, const char *p, size_t n)
{
	return n > 0 && fwrite(p, 1, n, f) != n ? -1 : 0;
}

/* The end of encode_decode, with e->stopped: status after out is written. */
static int
stop(struct encode *e, struct buf *out, FILE *f, int status)
{
	e->stopped = 1;
	return put(f, out->p, out->len) < 0 ? XSYS : status;
}

int
encode_decode(struct encode *e, char *const *paths, int npaths, FILE *f,
    char *err, size_t errsize, int *code)
{
	struct tok_reader r;
	struct buf text = { 0 }, out = { 0 };
	struct json_w w;
	const uint32_t *ids;
	size_t n, bad = 0, none;
	int i, k, ret = -2;

	for (i = 0; ret == -2 && (i < npaths || (i == 0 && npaths == 0)); i++) {
		if (tok_open(&r, i < npaths ? paths[i] : "-") < 0)
			goto fault;
		if (r.h.vocab != tokenizer_nvocab(e->vocab)) {
			owt_warn("%s: the stream's vocabulary has %u tokens, the "
			    "loaded one %u", r.in.name, r.h.vocab,
			    tokenizer_nvocab(e->vocab));
			e->count[ENCODE_TRUNC].n++;
			goto next;
		}
		while ((k = tok_next(&r, &ids, &n)) > 0) {
			e->ntok += n;
			if (n > 0 && r.h.eod != TOK_NOEOD && ids[n - 1] == r.h.eod)
				n--;
			text.len = 0;
			/* tiktoken's ids between its ranks and specials: none */
			if ((none = tokenizer_decode(e->vocab, ids, n, &text)) != n)
				owt_warn("%s: document %llu: id %u is no token",
				    r.in.name, (unsigned long long)r.ndocs,
				    ids[none]);
			else if ((bad = utf8_valid(text.p, text.len)) != text.len)
				owt_warn("%s: document %llu: the tokens are not UTF-8 "
				    "text (byte %zu)", r.in.name,
				    (unsigned long long)r.ndocs, bad + 1);
			if (none != n || bad != text.len) {
				e->count[ENCODE_DECODE].n++;
				e->status = XDATA;
				if (!e->o.keep_going) {
					ret = stop(e, &out, f, XDATA);
					break;
				}
				continue;
			}
			json_w_init(&w, &out, JSON_COMPACT);
			json_w_obj(&w);
			json_w_key(&w, e->o.keys[0]);
			json_w_str(&w, text.p, text.len);
			json_w_end(&w);
			buf_addc(&out, '\n');
			e->ndoc++;
			e->nbytes += text.len;
			if (out.len >= ENCODE_BATCH_BYTES) {
				if (put(f, out.p, out.len) < 0) {
					e->stopped = 1;
					ret = XSYS;
					break;
				}
				out.len = 0;
			}
			progress_tick(&e->prog, e->ndoc, e->nbytes);
		}
		if (ret != -2)
			break;
		if (k == 0) {
			if (r.nv1 > 0)
				owt_warn("%s: a version 1 token stream: whether it "
				    "is whole cannot be checked", r.in.name);
			goto next;
		}
fault:
		if (r.errcode == XSYS) {
			ret = owt_fail(err, errsize, code, XSYS, "%s", r.err);
			break;
		}
		owt_warn("%s", r.err);
		e->count[ENCODE_TRUNC].n++;
next:
		e->status = e->count[ENCODE_TRUNC].n ? XDATA : e->status;
		if (e->status != XOK && !e->o.keep_going)
			ret = stop(e, &out, f, XDATA);
		tok_close(&r);
	}
	if (ret == -2)
		ret = put(f, out.p, out.len) < 0 ? (e->stopped = 1, XSYS) :
		    e->status;
	buf_free(&out);
	buf_free(&text);
	return ret;
}

void
encode_free(struct encode *e)
{
	size_t k;

	for (k = 0; e->dset != NULL && k < e->o.nkeys; k++)
		free(e->dname[k]);
	free(e->dset);
	free(e->dname);
	e->dset = NULL;
	e->dname = NULL;
}
