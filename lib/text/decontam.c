/* decontam.c - remove downstream-task n-grams from training text, as filter_ngrams.py */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text/decontam.h"

struct ngram {
	uint64_t hash;
	uint32_t len;		/* words */
	uint32_t docs;		/* training documents that hold it (pass 1) */
};

struct decontam {
	struct ngram *g;
	size_t n, cap;
	uint32_t *slot;		/* open addressing: index + 1 */
	size_t size;
	unsigned lens;		/* bit L: some n-gram of L words is searched for */
	int frozen;		/* pass 2: only n-grams in < DECONTAM_FREQ docs */
};

struct decontam *
decontam_new(void)
{
	return xcalloc(1, sizeof(struct decontam));
}

void
decontam_free(struct decontam *dc)
{
	if (dc == NULL)
		return;
	free(dc->g);
	free(dc->slot);
	free(dc);
}

size_t
decontam_size(const struct decontam *dc)
{
	return dc->n;
}

static size_t
home(const struct decontam *dc, uint64_t h)
{
	return (size_t)(((unsigned __int128)h * dc->size) >> 64);
}

/* The n-gram with this hash and length, or -1. */
static long
lookup(const struct decontam *dc, uint64_t h, uint32_t len)
{
	size_t i;
	const struct ngram *g;

	if (dc->size == 0)
		return -1;
	for (i = home(dc, h); dc->slot[i]; i = i + 1 == dc->size ? 0 : i + 1) {
		g = &dc->g[dc->slot[i] - 1];
		if (g->hash == h && g->len == len)
			return dc->frozen && g->docs >= DECONTAM_FREQ ? -1 :
			    (long)(dc->slot[i] - 1);
	}
	return -1;
}

static void
insert(struct decontam *dc, uint64_t h, uint32_t len)
{
	size_t i, k;

	if (lookup(dc, h, len) >= 0)
		return;
	if ((dc->n + 1) * 2 > dc->size) {
		free(dc->slot);
		dc->size = dc->size ? 2 * dc->size : 1024;
		dc->slot = xcalloc(dc->size, sizeof *dc->slot);
		for (k = 0; k < dc->n; k++) {
			for (i = home(dc, dc->g[k].hash); dc->slot[i];
			    i = i + 1 == dc->size ? 0 : i + 1)
				;
			dc->slot[i] = (uint32_t)k + 1;
		}
	}
	if (dc->n == dc->cap)
		dc->g = xgrow(dc->g, &dc->cap, dc->n + 1, sizeof *dc->g);
	dc->g[dc->n].hash = h;
	dc->g[dc->n].len = len;
	dc->g[dc->n].docs = 0;
	for (i = home(dc, h); dc->slot[i]; i = i + 1 == dc->size ? 0 : i + 1)
		;
	dc->slot[i] = (uint32_t)++dc->n;
	dc->lens |= 1u << len;
}

/* Valid UTF-8 to code points, with the byte offset of each in off. */
static void
decode(const char *s, size_t n, struct u32v *t, struct u32v *off)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, len;
	uint32_t c;

	t->n = off->n = 0;
	if (t->cap < n + 1)
		t->p = xgrow(t->p, &t->cap, n + 1, sizeof *t->p);
	if (off->cap < n + 1)
		off->p = xgrow(off->p, &off->cap, n + 1, sizeof *off->p);
	while (i < n) {
		c = p[i];
		len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
		if (len == 2)
			c = (c & 0x1f) << 6 | (p[i + 1] & 0x3f);
		else if (len == 3)
			c = (c & 0x0f) << 12 | (p[i + 1] & 0x3fu) << 6 | (p[i + 2] & 0x3f);
		else if (len == 4)
			c = (c & 0x07) << 18 | (p[i + 1] & 0x3fu) << 12 |
			    (p[i + 2] & 0x3fu) << 6 | (p[i + 3] & 0x3f);
		off->p[off->n++] = (uint32_t)i;
		t->p[t->n++] = c;
		i += len;
	}
	off->p[off->n] = (uint32_t)n;
}

void
decontam_add_task(struct decontam *dc, const char *s, size_t n,
    struct decontam_work *w)
{
	struct words *ws = &w->words;
	size_t i;

	words_split(s, n, ws);
	if (ws->n < DECONTAM_MIN_N)
		return;
	if (ws->n < DECONTAM_MAX_N)
		insert(dc, words_seq_hash(ws->w, ws->n), (uint32_t)ws->n);
	for (i = 0; i + DECONTAM_MAX_N <= ws->n; i++)
		insert(dc, words_seq_hash(ws->w + i, DECONTAM_MAX_N), DECONTAM_MAX_N);
}

/* The characters of the joined n-gram "w1 w2 ... wL". */
static size_t
seq_len(const struct word *w, size_t len)
{
	size_t i, k = len - 1;

	for (i = 0; i < len; i++)
		k += w[i].clen;
	return k;
}

static int
stop(uint32_t c)
{
	return c == '.' || c == '!' || c == '?';
}

static void
v_put32(struct u32v *v, uint32_t x)
{
	if (v->n == v->cap)
		v->p = xgrow(v->p, &v->cap, v->n + 1, sizeof *v->p);
	v->p[v->n++] = x;
}

static void
add_piece(struct decontam_work *w, size_t a, size_t b)
{
	if (w->npiece == w->piececap)
		w->piece = xgrow(w->piece, &w->piececap, w->npiece + 1,
		    sizeof *w->piece);
	w->piece[w->npiece].start = a;
	w->piece[w->npiece++].end = b;
}

/*
 * A match of an n-gram of len words at word i of the text t[base..):
 * pass 1 records it and goes on after it; pass 2 cuts it out.
 */
static void
matched(struct decontam_work *w, int pass2, long id, size_t base, size_t i,
    size_t len)
{
	const struct word *wd = &w->words.w[i];
	size_t n = w->text.n - base, start = wd->cstart, sl = seq_len(wd, len);
	long pos;
	size_t k;

	if (!pass2) {
		for (k = 0; k < w->nfound && w->found[k] != (uint32_t)id; k++)
			;
		if (k == w->nfound) {
			if (w->nfound == w->foundcap)
				w->found = xgrow(w->found, &w->foundcap,
				    w->nfound + 1, sizeof *w->found);
			w->found[w->nfound++] = (uint32_t)id;
		}
		if (start + sl + 1 < n)
			v_put32(&w->queue, (uint32_t)(base + start + sl + 1));
		return;
	}
	w->matches++;
	pos = (long)start - DECONTAM_MARGIN;
	while (pos > 0 && !stop(w->text.p[base + pos]))
		pos--;
	if (pos > 0 && pos + 1 > DECONTAM_MIN_PIECE)
		add_piece(w, base, base + pos + 1);
	pos = (long)(start + sl + DECONTAM_MARGIN);
	while ((size_t)pos < n && !stop(w->text.p[base + pos]))
		pos++;
	if ((size_t)pos + 1 < n && n - pos - 1 > DECONTAM_MIN_PIECE)
		v_put32(&w->queue, (uint32_t)(base + pos + 1));
}

/* Look for the n-grams of word i, lengths in lens; the number or -1. */
static long
find_at(const struct decontam *dc, const struct words *ws, size_t i,
    unsigned lens, size_t *len)
{
	uint64_t h = WORDS_SEQ_START;
	size_t L;
	long id;

	for (L = 1; L <= DECONTAM_MAX_N && i + L <= ws->n && lens >> L; L++) {
		h = owt_mix64(h ^ ws->w[i + L - 1].hash);
		if ((lens >> L & 1) && (id = lookup(dc, h, (uint32_t)L)) >= 0) {
			*len = L;
			return id;
		}
	}
	return -1;
}

/* filter_ngrams.py's free_ngram on the document in w->text. */
static void
scan(const struct decontam *dc, int pass2, struct decontam_work *w)
{
	struct words *ws = &w->words;
	size_t q, base, i = 0, len = 0, last, L;
	long id;

	w->queue.n = 0;
	v_put32(&w->queue, 0);
	for (q = 0; q < w->queue.n; q++) {
		base = w->queue.p[q];
		words_split32(w->text.p + base, w->text.n - base, ws);
		id = -1;
		/* at each start: the 13-gram, then every length, shortest first */
		for (i = 0; i + DECONTAM_MAX_N <= ws->n; i++) {
			id = find_at(dc, ws, i, 1u << DECONTAM_MAX_N, &len);
			if (id < 0)
				id = find_at(dc, ws, i, dc->lens, &len);
			if (id >= 0)
				break;
		}
		/* then the shorter lengths inside the last 13 words */
		if (id < 0 && ws->n > DECONTAM_MAX_N) {
			last = ws->n - DECONTAM_MAX_N;
			for (L = 1; id < 0 && L < DECONTAM_MAX_N; L++) {
				if (!(dc->lens >> L & 1))
					continue;
				for (i = last; i + L <= ws->n; i++)
					if ((id = find_at(dc, ws, i, 1u << L, &len)) >= 0)
						break;
			}
		}
		if (id >= 0)
			matched(w, pass2, id, base, i, len);
		else if (pass2)
			add_piece(w, base, w->text.n);
	}
}

size_t
decontam_scan(const struct decontam *dc, const char *s, size_t n,
    struct decontam_work *w)
{
	w->nfound = 0;
	if (dc->n == 0)
		return 0;
	decode(s, n, &w->text, &w->off);
	scan(dc, 0, w);
	return w->nfound;
}

void
decontam_count(struct decontam *dc, const uint32_t *found, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dc->g[found[i]].docs++;
}

size_t
decontam_freeze(struct decontam *dc)
{
	size_t i, rare = 0;

	dc->frozen = 1;
	dc->lens = 0;
	for (i = 0; i < dc->n; i++) {
		if (dc->g[i].docs < DECONTAM_FREQ) {
			dc->lens |= 1u << dc->g[i].len;
			rare++;
		}
	}
	return rare;
}

void
decontam_cut(const struct decontam *dc, const char *s, size_t n,
    struct decontam_work *w)
{
	size_t i;

	w->npiece = 0;
	w->matches = 0;
	if (dc->lens == 0) {
		add_piece(w, 0, n);
		return;
	}
	decode(s, n, &w->text, &w->off);
	scan(dc, 1, w);
	for (i = 0; i < w->npiece; i++) {
		w->piece[i].start = w->off.p[w->piece[i].start];
		w->piece[i].end = w->off.p[w->piece[i].end];
	}
}

void
decontam_work_free(struct decontam_work *w)
{
	free(w->text.p);
	free(w->off.p);
	words_free(&w->words);
	free(w->found);
	free(w->piece);
	free(w->queue.p);
	buf_free(&w->ptext);
	buf_free(&w->sid);
	buf_free(&w->tmp);
	memset(w, 0, sizeof *w);
}

int
decontam_load_tasks(struct decontam *dc, char *const *files, size_t n,
    const char *key, char *err, size_t errsize, int *code)
{
	const char *want[1] = { key };
	struct decontam_work w = { 0 };
	struct json_rec *r;
	struct jsonl j;
	const char *text;
	char msg[OWT_ERRSIZE];
	size_t i, len;
	int k, ret = -1;

	for (i = 0; i < n; i++) {
		if (jsonl_open(&j, files[i], want, 1) < 0) {
			owt_fail(err, errsize, code, XDATA, "%s", j.err);
			goto out;
		}
		while ((k = jsonl_next(&j, &r)) != 0) {
			if (k < 0) {
				owt_fail(err, errsize, code, j.errcode,
				    "%s", j.err);
				jsonl_close(&j);
				goto out;
			}
			if ((text = json_rec_text(r, key, &len, msg,
			    sizeof msg)) == NULL) {
				owt_fail(err, errsize, code, XDATA, "%s:%lu: %s",
				    j.in.name, j.in.lineno, msg);
				jsonl_close(&j);
				goto out;
			}
			decontam_add_task(dc, text, len, &w);
		}
		jsonl_close(&j);
	}
	ret = 0;
out:
	decontam_work_free(&w);
	return ret;
}

void
decontam_prefix(char *const *files, size_t n, struct buf *b)
{
	const char *name, *dot;
	size_t i;

	for (i = 0; i < n; i++) {
		name = strrchr(files[i], '/');
		name = name ? name + 1 : files[i];
		dot = strchr(name, '.');
		if (i > 0)
			buf_addc(b, '-');
		buf_add(b, name, dot && dot > name ? (size_t)(dot - name) : strlen(name));
	}
}

int
decontam_verdict(const struct decontam_work *w)
{
	return w->npiece == 0 ? DECONTAM_EMPTY :
	    w->npiece > DECONTAM_MAX_PIECES ? DECONTAM_TOOMANY : DECONTAM_KEEP;
}

void
decontam_rewrite(const struct json_rec *jr, const char *key,
    const char *text, const char *prefix, size_t k, struct decontam_work *w,
    struct buf *out)
{
	struct json_edit ed[2];
	const char *old, *why;
	size_t i, on;

	old = json_rec_str(jr, "split_id", &on, &why);
	for (i = 0; i < w->npiece; i++) {
		w->ptext.len = w->sid.len = 0;
		json_string(&w->ptext, text + w->piece[i].start,
		    w->piece[i].end - w->piece[i].start);
		w->tmp.len = 0;
		if (old != NULL) {
			buf_add(&w->tmp, old, on);
			buf_addc(&w->tmp, '-');
		}
		buf_adds(&w->tmp, prefix);
		buf_printf(&w->tmp, "-%010zu-%04zu", k + 1, i);
		json_string(&w->sid, w->tmp.p, w->tmp.len);
		ed[0].key = key;
		ed[0].json = w->ptext.p;
		ed[0].len = w->ptext.len;
		ed[1].key = "split_id";
		ed[1].json = w->sid.p;
		ed[1].len = w->sid.len;
		json_rec_write(out, jr, ed, 2);
	}
}

/* Write out's bytes to p->out; 0, or -1 with err and *code. */
static int
put(struct decontam_pass *p, struct buf *out, char *err, size_t errsize,
    int *code)
{
	if (out->len > 0 && fwrite(out->p, 1, out->len, p->out) != out->len) {
		if (p->outname == NULL)
			return owt_fail_errno(err, errsize, code, XSYS,
			    "write error on standard output");
		return owt_fail_errno(err, errsize, code, XSYS,
		    "cannot write '%s'", p->outname);
	}
	out->len = 0;
	return 0;
}

int
decontam_pass2(struct decontam *dc, struct spill *spool,
    struct decontam_pass *p, char *err, size_t errsize, int *code)
{
	const char *want[2] = { p->key, "split_id" };
	struct decontam_work w = { 0 };
	struct json_rec jr;
	struct buf out = { 0 };
	const char *text, *why;
	char perr[512], *line = NULL;
	size_t cap = 0, n, k;
	ssize_t len;
	FILE *f;
	int v, ret = -1;

	decontam_freeze(dc);
	*code = XSYS;
	if (spill_flush(spool) < 0) {
		return owt_fail(err, errsize, NULL, XDATA, "%s", spool->err);
	}
	if ((f = fdopen(dup(spool->fd), "r")) == NULL || fseek(f, 0, SEEK_SET) < 0) {
		owt_fail_errno(err, errsize, NULL, XDATA, "decontam spool");
		if (f != NULL)
			fclose(f);
		return -1;
	}
	json_rec_init(&jr, want, 2);
	for (k = 0; (len = getline(&line, &cap, f)) > 0; k++) {
		perr[0] = '\0';
		if (json_rec_parse(&jr, line, (size_t)len - 1, perr, sizeof perr) != 0 ||
		    (text = json_rec_str(&jr, p->key, &n, &why)) == NULL) {
			owt_fail(err, errsize, NULL, XDATA,
			    "decontam spool unreadable: %s", perr);
			goto out;
		}
		decontam_cut(dc, text, n, &w);
		v = decontam_verdict(&w);
		p->nmatches += w.matches;
		if (p->each && p->each(p->arg, k, &jr, v, &w, err, errsize,
		    code) < 0)
			goto out;
		p->ndrop[v]++;
		if (v != DECONTAM_KEEP)
			continue;
		p->ncut += w.matches > 0;
		p->npieces += w.npiece;
		decontam_rewrite(&jr, p->key, text, p->prefix, k, &w, &out);
		if (out.len >= (1u << 20) && put(p, &out, err, errsize, code) < 0)
			goto out;
	}
	if (ferror(f)) {
		owt_fail_errno(err, errsize, code, XSYS, "decontam spool");
		goto out;
	}
	ret = put(p, &out, err, errsize, code);
out:
	fclose(f);
	free(line);
	json_rec_free(&jr);
	decontam_work_free(&w);
	buf_free(&out);
	return ret;
}
