/* batch.c - input lines in batches for worker threads, results in input order */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "input.h"
#include "par.h"

void
batch_note(struct batch *b, int reason, const char *fmt, ...)
{
	struct batch_note *n;
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	b->note = xgrow(b->note, &b->notecap, b->nnote + 1, sizeof *b->note);
	n = &b->note[b->nnote++];
	n->outpos = b->out.len;
	n->reason = reason;
	n->msg = xstrdup(msg);
}

/*
 * The reading side: the batch being filled, and spares to reuse (fresh
 * pages cost the kernel time).
 */
struct reader {
	const struct batch_run *r;
	struct par *par;
	struct batch *cur, *spare;
};

static struct batch *
batch_get(struct reader *rd, const char *name)
{
	struct batch *b = rd->spare;

	if (b != NULL)
		rd->spare = b->next;
	else
		b = xcalloc(1, sizeof *b);
	b->name = name;
	b->run = rd->r;
	return b;
}

static void
batch_put(struct reader *rd, struct batch *b)
{
	size_t i;

	for (i = 0; i < b->nnote; i++)
		free(b->note[i].msg);
	b->nline = b->nnote = 0;
	b->in.len = b->out.len = 0;
	memset(b->count, 0, sizeof b->count);
	b->next = rd->spare;
	rd->spare = b;
}

static void
batch_free(struct batch *b)
{
	free(b->note);
	free(b->off);
	free(b->lineno);
	buf_free(&b->in);
	buf_free(&b->out);
	free(b);
}

static void
add_line(struct batch *b, const char *line, size_t len, unsigned long lineno)
{
	if (b->nline + 2 > b->linecap) {
		b->off = xgrow(b->off, &b->linecap, b->nline + 2, sizeof *b->off);
		b->lineno = xrealloc(b->lineno, b->linecap * sizeof *b->lineno);
	}
	b->off[b->nline] = b->in.len;
	b->lineno[b->nline++] = lineno;
	buf_add(&b->in, line, len);
	buf_addc(&b->in, '\0');
	b->off[b->nline] = b->in.len;
}

static void
submit(struct reader *rd, const char *name)
{
	struct batch *done;

	if ((done = par_put(rd->par, rd->cur)) != NULL) {
		rd->r->done(done, rd->r->arg);
		batch_put(rd, done);
	}
	rd->cur = batch_get(rd, name);
}

/* A bad file or line: a batch of its own keeps it in order. */
static void
fault(struct reader *rd, const struct input *in)
{
	if (in->errcode == XSYS)
		owt_die(XSYS, "%s", in->err);
	if (rd->cur->nline > 0)
		submit(rd, in->name);
	batch_note(rd->cur, in->reason, "%s", in->err);
	submit(rd, in->name);
}

static void
work(void *job, void *state)
{
	struct batch *b = job;

	b->run->work(b, state);
}

void
batch_run(const struct batch_run *r, char *const *paths, int npaths)
{
	struct reader rd = { r, NULL, NULL, NULL };
	struct batch *b;
	struct input in;
	char *line;
	size_t len;
	int i, k;

	rd.par = par_start(r->nworkers, 2 * (size_t)r->nworkers + 2, 0,work,
	    r->init, r->fini, r->arg);
	rd.cur = batch_get(&rd, "<stdin>");
	for (i = 0; i < npaths || (i == 0 && npaths == 0); i++) {
		if (input_open(&in, i < npaths ? paths[i] : "-") < 0) {
			fault(&rd, &in);
			continue;
		}
		rd.cur->name = in.name;
		while ((k = input_line(&in, &line, &len)) != 0) {
			if (k < 0) {
				fault(&rd, &in);
				if (in.reason == BAD_COMPRESSED)
					break;
				continue;
			}
			add_line(rd.cur, line, len, in.lineno);
			if (rd.cur->in.len >= r->bytes)
				submit(&rd, in.name);
		}
		if (rd.cur->nline > 0)
			submit(&rd, in.name);
		input_close(&in);
	}
	batch_free(rd.cur);
	while ((b = par_get(rd.par)) != NULL) {
		r->done(b, r->arg);
		batch_put(&rd, b);
	}
	par_stop(rd.par);
	while ((b = rd.spare) != NULL) {
		rd.spare = b->next;
		batch_free(b);
	}
}
