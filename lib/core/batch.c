/* batch.c - the ordered parallel record loop: read, work on N threads, write in input order */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/batch.h"
#include "core/input.h"
#include "core/par.h"

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
	n->reppos = b->rep.len;
	n->reason = reason;
	n->msg = xstrdup(msg);
}

/* The least input a batch, where many workers make them smaller. */
#define BATCH_MIN ((size_t)64 << 10)

/*
 * The calling thread's side: the batch being filled, and spares to reuse
 * (fresh pages cost the kernel time); the batches and input bytes in
 * flight; what the policy has seen.
 */
struct batch_loop {
	struct batch_opts o;
	struct par *par;
	struct batch *cur, *spare;
	size_t size;		/* input a batch */
	size_t depth;
	size_t held;		/* input bytes in flight */
	size_t nflight;		/* batches in flight */
	int status;		/* XOK, or XDATA after a note */
	int stopped;		/* nothing more is written */
	int code;		/* an error's class, or 0 */
	int errnum;
	char err[1024];
	double flushed;		/* when out and rep were last flushed */
	const struct input *in;	/* batch_run's input being read */
};

static struct batch *
batch_get(struct batch_loop *l)
{
	struct batch *b = l->spare;

	if (b != NULL)
		l->spare = b->next;
	else
		b = xcalloc(1, sizeof *b);
	b->name = NULL;
	b->opts = &l->o;
	return b;
}

static void
batch_put(struct batch_loop *l, struct batch *b)
{
	size_t i;

	for (i = 0; i < b->nnote; i++)
		free(b->note[i].msg);
	b->nline = b->nnote = 0;
	b->in.len = b->out.len = b->rep.len = 0;
	/* A batch grown by a long record would keep its memory to the end. */
	if (b->in.cap > 4 * l->size)
		buf_free(&b->in);
	if (b->out.cap > 4 * l->size)
		buf_free(&b->out);
	if (b->rep.cap > 4 * l->size)
		buf_free(&b->rep);
	memset(b->count, 0, sizeof b->count);
	b->next = l->spare;
	l->spare = b;
}

static void
batch_free(struct batch *b)
{
	size_t i;

	for (i = 0; i < b->nnote; i++)
		free(b->note[i].msg);
	free(b->note);
	free(b->off);
	free(b->lineno);
	free(b->user);
	buf_free(&b->in);
	buf_free(&b->out);
	buf_free(&b->rep);
	free(b);
}

static void
add_line(struct batch *b, const char *line, size_t len, unsigned long lineno,
    void *user)
{
	if (b->nline + 2 > b->linecap) {
		b->off = xgrow(b->off, &b->linecap, b->nline + 2, sizeof *b->off);
		b->lineno = xrealloc(b->lineno, b->linecap * sizeof *b->lineno);
		b->user = xrealloc(b->user, b->linecap * sizeof *b->user);
	}
	b->off[b->nline] = b->in.len;
	b->user[b->nline] = user;
	b->lineno[b->nline++] = lineno;
	buf_add(&b->in, line, len);
	buf_addc(&b->in, '\0');
	b->off[b->nline] = b->in.len;
}

/* The first error ends the loop; what it says is kept for batch_end. */
static void
fail(struct batch_loop *l, int code, const char *fmt, ...) OWT_PRINTF(3, 4);

static void
fail(struct batch_loop *l, int code, const char *fmt, ...)
{
	va_list ap;

	if (l->code == 0) {
		l->errnum = errno;
		va_start(ap, fmt);
		owt_vfail(l->err, sizeof l->err, &l->code, code, 0, fmt, ap);
		va_end(ap);
	}
	l->stopped = 1;
}

static void
write_error(struct batch_loop *l, const char *name)
{
	if (name == NULL)
		fail(l, XSYS, "write error on standard output: %s",
		    strerror(errno));
	else
		fail(l, XSYS, "%s: write error: %s", name, strerror(errno));
}

static void
put(struct batch_loop *l, FILE *f, const char *name, const char *p, size_t n)
{
	if (f != NULL && n > 0 && !l->stopped && fwrite(p, 1, n, f) != n)
		write_error(l, name);
}

static void
flush(struct batch_loop *l)
{
	if (l->stopped)
		return;
	if (l->o.out && fflush(l->o.out) != 0)
		write_error(l, l->o.outname);
	else if (l->o.rep && fflush(l->o.rep) != 0)
		write_error(l, l->o.repname);
	if (l->o.flush_secs > 0)
		l->flushed = owt_now();
}

/*
 * A batch's turn: the program's done hook, then its output and report up
 * to each note, the note's warning, and the rest, or the stop.
 */
static void
emit(struct batch_loop *l, struct batch *b)
{
	const struct batch_note *n;
	size_t i, op = 0, rp = 0;

	if (l->o.done)
		l->o.done(b, l->o.arg);
	for (i = 0; i < b->nnote && !l->stopped; i++) {
		n = &b->note[i];
		put(l, l->o.out, l->o.outname, b->out.p + op, n->outpos - op);
		put(l, l->o.rep, l->o.repname, b->rep.p + rp, n->reppos - rp);
		op = n->outpos;
		rp = n->reppos;
		owt_warn("%s", n->msg);
		if (l->o.bad)
			l->o.bad[n->reason].n++;
		l->status = XDATA;
		if (!l->o.keep_going)
			l->stopped = 1;
	}
	put(l, l->o.out, l->o.outname, b->out.p + op, b->out.len - op);
	put(l, l->o.rep, l->o.repname, b->rep.p + rp, b->rep.len - rp);
	if (l->o.flush_secs > 0 && owt_now() - l->flushed >= l->o.flush_secs)
		flush(l);
}

/* A batch is back from the workers: write it, and keep it as a spare. */
static void
finish(struct batch_loop *l, struct batch *b)
{
	if (!l->stopped)
		emit(l, b);
	l->held -= b->in.len;
	l->nflight--;
	batch_put(l, b);
}

/*
 * Wait until len more bytes of input (and, with slot, one more batch)
 * may be in flight: the oldest batches are finished first while the
 * input held would exceed o.held, so that the memory of batches in flight
 * grows neither with the number of workers nor with the length of
 * records (one longer than o.held waits for all, and goes alone).
 */
static void
wait_room(struct batch_loop *l, size_t len, int slot)
{
	struct batch *done;

	while (l->nflight > 0 && ((l->o.held > 0 && l->held + len > l->o.held) ||
	    (slot && l->nflight >= l->depth)) &&
	    (done = par_get(l->par)) != NULL)
		finish(l, done);
}

/* Queue the batch being filled. */
static void
submit(struct batch_loop *l)
{
	struct batch *done;
	size_t len = l->cur->in.len;

	wait_room(l, len, 0);
	l->held += len;
	l->nflight++;
	if ((done = par_put(l->par, l->cur)) != NULL)
		finish(l, done);
	l->cur = batch_get(l);
}

static void
work(void *job, void *state)
{
	struct batch *b = job;

	b->opts->work(b, state);
}

struct batch_loop *
batch_start(const struct batch_opts *o)
{
	struct batch_loop *l = xcalloc(1, sizeof *l);

	l->o = *o;
	l->depth = o->depth ? o->depth : 2 * (size_t)o->nworkers + 2;
	l->size = o->bytes ? o->bytes : BATCH_MIN;
	if (o->held > 0 && l->size > o->held / l->depth)
		l->size = o->held / l->depth > BATCH_MIN ? o->held / l->depth :
		    BATCH_MIN;
	l->par = par_start(o->nworkers, l->depth, o->stack, work, o->init,
	    o->fini, o->arg);
	l->cur = batch_get(l);
	l->flushed = o->flush_secs > 0 ? owt_now() : 0;
	return l;
}

int
batch_add(struct batch_loop *l, const char *name, unsigned long lineno,
    const void *p, size_t n, void *user)
{
	if (l->stopped)
		return 1;
	if (l->cur->nline > 0 && l->cur->name != name)
		submit(l);
	/*
	 * A long record is a batch of its own, copied only once there is
	 * room for it and a place in the queue (until then the caller holds
	 * it, once).
	 */
	if (n >= l->size) {
		if (l->cur->nline > 0)
			submit(l);
		wait_room(l, n + 1, 1);
	}
	l->cur->name = name;
	add_line(l->cur, p, n, lineno, user);
	if (l->cur->in.len >= l->size ||
	    (l->o.maxrecs > 0 && l->cur->nline >= l->o.maxrecs))
		submit(l);
	return l->stopped;
}

int
batch_bad(struct batch_loop *l, const char *name, int reason, const char *msg)
{
	if (l->stopped)
		return 1;
	if (l->cur->nline > 0)
		submit(l);
	l->cur->name = name;
	batch_note(l->cur, reason, "%s", msg);
	submit(l);
	return l->stopped;
}

int
batch_poll(struct batch_loop *l)
{
	struct batch *b;

	while ((b = par_poll(l->par)) != NULL)
		finish(l, b);
	return l->stopped;
}

/* Hand on the batch being filled; write every batch in flight. */
static void
drain(struct batch_loop *l)
{
	struct batch *b;

	if (!l->stopped && (l->cur->nline > 0 || l->cur->nnote > 0))
		submit(l);
	while ((b = par_get(l->par)) != NULL)
		finish(l, b);
}

int
batch_sync(struct batch_loop *l)
{
	drain(l);
	flush(l);
	return l->stopped;
}

size_t
batch_inflight(const struct batch_loop *l, size_t *bytes)
{
	*bytes = l->held;
	return l->nflight;
}

int
batch_halts(int status, int keep_going)
{
	return status == XDATA && !keep_going;
}

int
batch_end(struct batch_loop *l, char *err, size_t errsize, int *code)
{
	struct batch *b;
	int r;

	drain(l);
	par_stop(l->par);
	batch_free(l->cur);
	while ((b = l->spare) != NULL) {
		l->spare = b->next;
		batch_free(b);
	}
	if (l->code != 0) {
		owt_fail(err, errsize, code, l->code, "%s", l->err);
		errno = l->errnum;
		r = -1;
	} else {
		r = l->status;
	}
	free(l);
	return r;
}

/*
 * The input has nothing to read yet: what is read so far goes out before
 * the read waits. The batch being filled goes to the workers, and the
 * batches in flight are written as they finish, unless more input comes
 * meanwhile (a pipe's writer that was only slow): reading goes on then.
 */
static void
stalled(void *arg)
{
	struct batch_loop *l = arg;
	struct batch *b;

	if (!l->stopped && l->cur->nline > 0)
		submit(l);
	while ((b = par_get(l->par)) != NULL) {
		finish(l, b);
		if (input_ready(l->in))
			return;
	}
	flush(l);
}

int
batch_run(const struct batch_opts *o, char *const *paths, int npaths,
    char *err, size_t errsize, int *code)
{
	struct batch_loop *l = batch_start(o);
	struct input in;
	const char *path;
	char *line;
	size_t len;
	int i, k;

	for (i = 0; (i < npaths || (i == 0 && npaths == 0)) && !l->stopped; i++) {
		path = i < npaths ? paths[i] : "-";
		if (input_open(&in, path) < 0) {
			if (in.errcode != XDATA)
				fail(l, in.errcode, "%s", in.err);
			else
				batch_bad(l, in.name ? in.name : path, in.reason,
				    in.err);
			continue;
		}
		in.stall = stalled;
		in.stall_arg = l;
		l->in = &in;
		while (!l->stopped && (k = input_line(&in, &line, &len)) != 0) {
			if (k < 0) {
				if (in.errcode != XDATA) {
					fail(l, in.errcode, "%s", in.err);
					break;
				}
				batch_bad(l, in.name, in.reason, in.err);
				if (in.reason == BAD_COMPRESSED)
					break;
				continue;
			}
			batch_add(l, in.name, in.lineno, line, len, NULL);
			input_trim(&in);
		}
		if (!l->stopped && l->cur->nline > 0)
			submit(l);
		input_close(&in);
	}
	return batch_end(l, err, errsize, code);
}
