/*
 * fetch_item.c - owt-fetch's items: made in input order, kept in the run's
 * list of those alive, freed whole
 *
 * Apart from fetch.c, so that what makes items from input (fetch.c's
 * lines, fetch_warc.c's records) uses this file and neither the other.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "web/fetch.h"
#include "web/fetch_warc.h"

struct fetch_item *
fetch_item_new(struct fetch *f)
{
	struct fetch_item *it = xcalloc(1, sizeof *it);

	it->seq = f->nread++;
	it->next = f->live;
	if (f->live)
		f->live->prev = it;
	f->live = it;
	return it;
}

struct fetch_item *
fetch_item_bad(struct fetch *f, int reason, const char *fmt, ...)
{
	struct fetch_item *it = fetch_item_new(f);
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	it->bad = XDATA;
	it->reason = reason;
	it->msg = xstrdup(msg);
	return it;
}

/* A WARC record's part of an item (fetch_warc.h). */
static void
warc_part_free(struct fetch_warc_rec *w)
{
	if (w == NULL)
		return;
	free(w->id);
	free(w->ptype);
	free(w->ctype);
	free(w->own);
	free(w->where);
	if (w->end != NULL)
		warc_end_free(w->end);
	free(w->end);
	free(w);
}

void
fetch_item_free(struct fetch *f, struct fetch_item *it)
{
	if (it->prev)
		it->prev->next = it->next;
	else if (f->live == it)
		f->live = it->next;
	if (it->next)
		it->next->prev = it->prev;
	if (it->job.url != it->url)
		free(it->job.url);
	free(it->url);
	free(it->job.final_url);
	free(it->job.content_type);
	buf_free(&it->job.body);
	buf_free(&it->job.wreq);
	buf_free(&it->job.wresp);
	buf_free(&it->warc_gz);
	buf_free(&it->warc_cdx);
	free(it->line);
	free(it->ctype);
	free(it->file);
	free(it->msg);
	buf_free(&it->title);
	buf_free(&it->text);
	buf_free(&it->meta.date);
	buf_free(&it->meta.lang);
	buf_free(&it->out);
	warc_part_free(it->warc);
	free(it);
}
