/*
 * fetch_index.c - owt-fetch --warc-prefix: index rows to Range fetches of single records, each record to its page
 *
 * A row becomes a crawl job for PREFIX/FILENAME with a byte range: the
 * crawler fetches it as any URL (politeness, retries, limits), and a
 * worker reads the one record the bytes hold, as --extract reads a
 * record of a whole archive, with the same output fields.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web/fetch_index.h"
#include "web/fetch_warc.h"
#include "web/warc_index.h"

struct fetch_index {
	struct warc_index x;
	int cur;		/* the operand whose header x holds */
};

static struct fetch_index *
state(struct fetch *f)
{
	if (f->index == NULL) {
		f->index = xcalloc(1, sizeof *f->index);
		warc_index_init(&f->index->x);
		f->index->cur = -1;
	}
	/* A header line is its own file's. */
	if (f->index->cur != f->cur) {
		warc_index_reset(&f->index->x);
		f->index->cur = f->cur;
	}
	return f->index;
}

int
fetch_index_header(struct fetch *f, const char *line, size_t len,
    struct fetch_item **bad)
{
	struct fetch_index *s = state(f);
	char err[256];
	int k;

	if ((k = warc_index_header(&s->x, line, len, err, sizeof err)) < 0)
		*bad = fetch_item_bad(f, FETCH_BAD_INDEX, "%s:%lu: %s", f->in.name,
		    f->in.lineno, err);
	return k;
}

/*
 * The crawler's enough(): has the open range reached the end of the
 * first record? A stream that is no record ends the transfer too: the
 * worker reports what is wrong with it.
 */
static int
record_ended(struct crawl_job *j)
{
	struct fetch_item *it = (struct fetch_item *)j;
	struct fetch_warc_rec *w = it->warc;
	char err[256];

	if (w->end == NULL) {
		w->end = xmalloc(sizeof *w->end);
		warc_end_init(w->end);
	}
	return warc_end_feed(w->end, (const unsigned char *)j->body.p,
	    j->body.len, err, sizeof err) != 0;
}

struct fetch_item *
fetch_index_item(struct fetch *f, char *line, size_t len)
{
	struct fetch_index *s = state(f);
	struct warc_index_row r;
	struct fetch_warc_rec *w;
	struct fetch_item *it;
	const char *pre = f->o->warc_prefix;
	char err[256], where[256];
	size_t n;

	if (warc_index_row(&s->x, line, len, &r, err, sizeof err) < 0)
		return fetch_item_bad(f, FETCH_BAD_INDEX, "%s:%lu: %s", f->in.name,
		    f->in.lineno, err);
	if (f->o->resume && r.url[0] && urlset_has(&f->done, r.url,
	    strlen(r.url))) {
		f->nresumed++;
		return NULL;
	}
	it = fetch_item_new(f);
	it->url = xstrdup(r.url);
	n = strlen(pre) + strlen(r.file) + 2;
	it->job.url = xmalloc(n);
	snprintf(it->job.url, n, "%s%s%s", pre, pre[0] && pre[strlen(pre) - 1] ==
	    '/' ? "" : "/", r.file);
	it->job.ranged = 1;
	it->job.range_start = r.offset;
	it->job.range_end = r.length > 0 ? r.offset + r.length - 1 : -1;
	if (r.length < 0)
		it->job.enough = record_ended;
	it->warc = w = xcalloc(1, sizeof *w);
	w->own = xstrdup(r.file);
	w->file = w->own;
	w->offset = (uint64_t)r.offset;
	snprintf(where, sizeof where, "%s:%lu", f->in.name, f->in.lineno);
	w->where = xstrdup(where);
	return it;
}

static void
bad_record(struct fetch_item *it, const char *what)
{
	struct crawl_job *j = &it->job;

	snprintf(j->error, sizeof j->error, "%.80s: %.170s", it->warc->where,
	    what);
	j->outcome = CR_ERROR;
	it->bad = XDATA;
	it->reason = FETCH_BAD_WARC;
	buf_free(&j->body);
}

void
fetch_index_record(const struct fetch_opts *o, struct fetch_item *it)
{
	struct crawl_job *j = &it->job;
	struct fetch_warc_rec *w = it->warc;
	struct warc_reader r;
	struct warc_rec rec = { 0 };
	struct warc_head *h = &rec.h;
	int k;

	if (w->end != NULL) {
		warc_end_free(w->end);
		free(w->end);
		w->end = NULL;
	}
	if (warc_open(&r, NULL, j->body.p, j->body.len, w->file) < 0) {
		bad_record(it, r.err);
		return;
	}
	/* The bytes are the archive's from the row's offset. */
	r.rawoff = r.dpos = w->offset;
	if ((k = warc_next(&r, &rec)) <= 0 ||
	    warc_block(&r, &rec, o->c.max_bytes + (h->type == WARC_RESPONSE ?
	    WARC_HTTP_SLACK : 0)) < 0) {
		char e[OWT_ERRSIZE];

		snprintf(e, sizeof e, "%.200s:%llu: %.200s", w->file,
		    (unsigned long long)w->offset, k == 0 ? "no record" : r.err);
		bad_record(it, k == 0 ? e : r.err);
		warc_close(&r);
		warc_rec_free(&rec);
		return;
	}
	warc_close(&r);
	buf_free(&j->body);
	j->body = rec.block;
	memset(&rec.block, 0, sizeof rec.block);
	free(j->content_type);
	j->content_type = NULL;
	j->status = 0;
	j->fetched_at = warc_date(h->date);
	if (h->target != NULL && strcmp(h->target, it->url) != 0) {
		free(it->url);
		it->url = xstrdup(h->target);
	}
	w->type = h->type;
	w->toolarge = rec.toolarge;
	w->id = h->id ? xstrdup(h->id) : NULL;
	w->ptype = h->ptype ? xstrdup(h->ptype) : NULL;
	w->ctype = h->ctype ? xstrdup(h->ctype) : NULL;
	warc_rec_free(&rec);
	if (h->type != WARC_RESPONSE && h->type != WARC_RESOURCE &&
	    h->type != WARC_CONVERSION) {
		j->outcome = CR_NOT_HTML;
		snprintf(j->error, sizeof j->error, "a %s record",
		    warc_type_name[h->type]);
		buf_free(&j->body);
		return;
	}
	fetch_warc_payload(o, it);
}

void
fetch_index_free(struct fetch *f)
{
	if (f->index == NULL)
		return;
	warc_index_free(&f->index->x);
	free(f->index);
	f->index = NULL;
}
