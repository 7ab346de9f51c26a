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

/* The least input a batch, where many workers make them smaller. */
#define BATCH_MIN ((size_t)64 << 10)

/*
 * The reading side: the batch being filled, and spares to reuse (fresh
 * pages cost the kernel time); the input bytes in batches in flight.
 */
struct reader {
	const struct batch_run *r;
	struct par *par;
	struct batch *cur, *spare;
	size_t size;		/* input a batch */
	size_t held;
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
	/* A batch grown by a long line would keep its memory to the end. */
	if (b->in.cap > 4 * rd->size)
		buf_free(&b->in);
	if (b->out.cap > 4 * rd->size)
		buf_free(&b->out);
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

/* A batch is back from the workers: hand it on, and keep it as a spare. */
static void
finish(struct reader *rd, struct batch *b)
{
	rd->r->done(b, rd->r->arg);
	rd->held -= b->in.len;
	batch_put(rd, b);
}

/*
 * Wait until len more bytes of input may be in flight: the oldest batches
 * are finished first while the input held would exceed r->held, so that
 * the memory of batches in flight grows neither with the number of
 * workers nor with the length of lines (a line longer than r->held waits
 * for all, and goes alone).
 */
static void
wait_room(struct reader *rd, size_t len)
{
	struct batch *done;

	while (rd->r->held > 0 && rd->held > 0 && rd->held + len > rd->r->held &&
	    (done = par_get(rd->par)) != NULL)
		finish(rd, done);
}

/* Queue the batch being filled. */
static void
submit(struct reader *rd, const char *name)
{
	struct batch *done;
	size_t len = rd->cur->in.len;

	wait_room(rd, len);
	rd->held += len;
	if ((done = par_put(rd->par, rd->cur)) != NULL)
		finish(rd, done);
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
	struct reader rd = { r, NULL, NULL, NULL, r->bytes, 0 };
	struct batch *b;
	struct input in;
	char *line;
	size_t len, depth = 2 * (size_t)r->nworkers + 2;
	int i, k;

	if (r->held > 0 && rd.size > r->held / depth)
		rd.size = r->held / depth > BATCH_MIN ? r->held / depth : BATCH_MIN;
	rd.par = par_start(r->nworkers, depth, 0, work, r->init, r->fini, r->arg);
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
			/*
			 * A long line is a batch of its own, copied only once
			 * there is room for it (until then it is held once, in
			 * the input's buffer).
			 */
			if (len >= rd.size) {
				if (rd.cur->nline > 0)
					submit(&rd, in.name);
				wait_room(&rd, len + 1);
			}
			add_line(rd.cur, line, len, in.lineno);
			input_trim(&in);
			if (rd.cur->in.len >= rd.size)
				submit(&rd, in.name);
		}
		if (rd.cur->nline > 0)
			submit(&rd, in.name);
		input_close(&in);
	}
	batch_free(rd.cur);
	while ((b = par_get(rd.par)) != NULL)
		finish(&rd, b);
	par_stop(rd.par);
	while ((b = rd.spare) != NULL) {
		rd.spare = b->next;
		batch_free(b);
	}
}
