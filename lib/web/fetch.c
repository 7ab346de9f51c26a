/*
 * fetch.c - owt-fetch's pipeline: input lines to URL items, filter, crawl, extract, records and log lines
 *
 * Items are read on the calling thread, filtered, handed to the crawler
 * (or, with --extract, straight on) and, as they come back, to the
 * ordered record loop of batch.h: one item a batch, extracted on the
 * workers, written in the order they were added (crawl completion
 * order; input order with --ordered). The loop's done hook counts each
 * item, writes its record into the output channel and its log line into
 * logbuf, which is written only after the output is flushed: a log line
 * never names a page not yet written, so --resume loses nothing. With
 * --warc-file the archive's records are written between the two.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <zlib.h>

#include "core/batch.h"
#include "web/fetch.h"
#include "web/fetch_index.h"
#include "web/fetch_warc.h"
#include "web/warc_write.h"
#include "core/outfile.h"

/* Log lines held before they are written, at most, and the seconds between flushes. */
#define FLUSH_BYTES ((size_t)1 << 20)
#define FLUSH_SECS 1.0

static void
fail(struct fetch *f, int code, const char *fmt, ...) OWT_PRINTF(3, 4);

/* The first error ends the run: nothing more is written, its message is kept. */
static void
fail(struct fetch *f, int code, const char *fmt, ...)
{
	va_list ap;

	if (!f->failed) {
		f->errnum = errno;
		va_start(ap, fmt);
		owt_vfail(f->err, sizeof f->err, &f->errcode, code, 0, fmt, ap);
		va_end(ap);
	}
	f->failed = f->stopping = 1;
}

/* ---- items: fetch_item.c ---- */

/*
 * The next input line (without '\n'), over all operands: 1; 0 at the end
 * or on a read error (f->failed); -1 with *bad, a bad file or line; 2, a
 * WARC archive opened (fetch_warc_item reads it).
 */
static int
next_line(struct fetch *f, char **line, size_t *len, struct fetch_item **bad)
{
	struct input *in = &f->in;
	int k;

	for (;;) {
		if (!f->in_open) {
			if (f->cur + 1 >= (f->npaths > 0 ? f->npaths : 1))
				return 0;
			f->cur++;
			/* --extract: an archive operand gives records, not lines. */
			if (f->o->extract && f->npaths > 0 && (k = fetch_warc_open(f,
			    f->paths[f->cur], 1, bad)) != 0)
				return k < 0 ? -1 : 2;
			if (input_open(in, f->npaths > 0 ? f->paths[f->cur] : "-") < 0) {
				if (in->errcode == XSYS) {
					fail(f, XSYS, "%s", in->err);
					return 0;
				}
				*bad = fetch_item_bad(f, in->reason, "%s", in->err);
				return -1;
			}
			f->in_open = 1;
		}
		if ((k = input_line(in, line, len)) > 0)
			return 1;
		if (k < 0) {
			if (in->errcode == XSYS) {
				fail(f, XSYS, "%s", in->err);
				return 0;
			}
			*bad = fetch_item_bad(f, in->reason, "%s", in->err);
			/* The rest of corrupt compressed data cannot be read. */
			if (in->reason == BAD_COMPRESSED) {
				input_close(in);
				f->in_open = 0;
			}
			return -1;
		}
		input_close(in);
		f->in_open = 0;
	}
}

struct fetch_item *
fetch_item_next(struct fetch *f)
{
	const char *key = f->o->extract ? "file" : "url";
	struct fetch_item *it, *bad;
	char *line, err[512];
	size_t len;
	int k;

	while (!(f->stop && *f->stop) && !f->failed) {
		const char *u, *why;
		size_t ulen;
		int r;

		if (fetch_warc_active(f) && (it = fetch_warc_item(f)) != NULL)
			return it;
		if ((k = next_line(f, &line, &len, &it)) == 0)
			break;
		if (k < 0)
			return it;
		if (k == 2)
			continue;
		if (f->o->warc_prefix && (r = fetch_index_header(f, line, len,
		    &it)) != 0) {
			if (r < 0)
				return it;
			continue;
		}
		if (f->lineno++ % f->o->shard[1] != f->o->shard[0])
			continue;
		while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		while (len > 0 && (*line == ' ' || *line == '\t'))
			line++, len--;
		if (len == 0)
			continue;
		if (f->o->warc_prefix) {
			if ((it = fetch_index_item(f, line, len)) != NULL)
				return it;
			continue;
		}
		if (*line == '{') {
			if ((r = json_rec_parse(&f->rec, line, len, err, sizeof err)) != 0)
				return fetch_item_bad(f, r, "%s:%lu: %s", f->in.name,
				    f->in.lineno, err);
			if ((u = json_rec_text(&f->rec, key, &ulen, err,
			    sizeof err)) == NULL)
				return fetch_item_bad(f, BAD_FIELD, "%s:%lu: %s",
				    f->in.name, f->in.lineno, err);
			if (f->o->resume && urlset_has(&f->done, u,
			    strnlen(u, ulen))) {
				f->nresumed++;
				continue;
			}
			it = fetch_item_new(f);
			it->line = xstrndup(line, len);
			it->len = len;
			it->url = xstrndup(u, ulen);
			if (f->o->extract && (u = json_rec_str(&f->rec, "content_type",
			    &ulen, &why)) != NULL)
				it->ctype = xstrndup(u, ulen);
		} else {
			if (f->o->resume && urlset_has(&f->done, line, len)) {
				f->nresumed++;
				continue;
			}
			it = fetch_item_new(f);
			it->url = xstrndup(line, len);
		}
		it->job.url = it->url;
		/* A line naming an archive: its records, in place of the line. */
		if (f->o->extract && (r = fetch_warc_open(f, it->url, 0,
		    &bad)) != 0) {
			fetch_item_free(f, it);
			if (r < 0)
				return bad;
			continue;
		}
		return it;
	}
	return NULL;
}

int
fetch_filter(struct fetch *f, struct fetch_item *it)
{
	size_t n = strlen(it->url);
	int r = urlfilter_check(&f->filter, it->url, n, &f->norm);

	if (r == URL_OK) {
		if (f->norm.len != n || memcmp(f->norm.p, it->url, n) != 0)
			it->job.url = xstrndup(f->norm.p, f->norm.len);
		return 0;
	}
	f->reasons[r].n++;
	it->job.outcome = CR_FILTERED;
	snprintf(it->job.error, sizeof it->job.error, "%s", urlfilter_reason[r]);
	return 1;
}

/* ---- records and log lines ---- */

/*
 * Members to set: keys in ed, their values written side by side in vals
 * by the JSON writer (each a top-level value of its own).
 */
struct fields {
	struct json_edit ed[16];
	size_t n;
	struct buf vals;
	struct json_w w;
};

static void
fields_init(struct fields *fl)
{
	fl->n = 0;
	memset(&fl->vals, 0, sizeof fl->vals);
	json_w_init(&fl->w, &fl->vals, JSON_COMPACT);
}

/* The value of key is what vals gained since start. */
static void
add_field(struct fields *fl, const char *key, size_t start)
{
	fl->ed[fl->n].key = key;
	fl->ed[fl->n].json = (const char *)start;	/* an offset until vals stops growing */
	fl->ed[fl->n].len = fl->vals.len - start;
	fl->n++;
}

static void
add_str(struct fields *fl, const char *key, const char *s, size_t len)
{
	size_t start = fl->vals.len;

	if (s == NULL)
		json_w_null(&fl->w);
	else
		json_w_str(&fl->w, s, len);
	add_field(fl, key, start);
}

static void
add_num(struct fields *fl, const char *key, double v)
{
	size_t start = fl->vals.len;

	json_w_num(&fl->w, "%.0f", v);
	add_field(fl, key, start);
}

static void
add_time(struct fields *fl, const char *key, time_t t)
{
	char s[32];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	add_str(fl, key, s, strlen(s));
}

/*
 * The record and '\n': base (a JSONL line) with the members set in place
 * or added at the end (json_rec_write), or, with base NULL, an object of the
 * members alone.
 */
static void
put_fields(struct fields *fl, struct json_rec *rec, const char *base,
    size_t blen, struct buf *dst)
{
	struct json_w w;
	char err[256];
	size_t i;

	for (i = 0; i < fl->n; i++)
		fl->ed[i].json = fl->vals.p + (size_t)fl->ed[i].json;
	if (base != NULL) {
		if (json_rec_parse(rec, base, blen, err, sizeof err) != 0)
			owt_fatal("cannot re-read a record: %s", err);
		json_rec_write(dst, rec, fl->ed, fl->n);
	} else {
		json_w_init(&w, dst, JSON_COMPACT);
		json_w_obj(&w);
		for (i = 0; i < fl->n; i++) {
			json_w_key(&w, fl->ed[i].key);
			json_w_raw(&w, fl->ed[i].json, fl->ed[i].len);
		}
		json_w_end(&w);
		buf_addc(dst, '\n');
	}
	buf_free(&fl->vals);
}

void
fetch_write_page(const struct fetch_opts *o, const struct fetch_item *it,
    struct json_rec *rec, struct buf *out)
{
	struct fields fl;
	const struct crawl_job *j = &it->job;

	fields_init(&fl);
	if (it->line == NULL)
		add_str(&fl, "url", it->url, strlen(it->url));
	add_str(&fl, "title", it->title.p ? it->title.p : "", it->title.len);
	add_str(&fl, o->text_key, it->text.p, it->text.len);
	if (it->meta.date.len > 0)
		add_str(&fl, "date", it->meta.date.p, it->meta.date.len);
	if (it->meta.lang.len > 0)
		add_str(&fl, "lang_hint", it->meta.lang.p, it->meta.lang.len);
	if (!o->extract && it->warc == NULL) {
		add_str(&fl, "final_url", j->final_url, strlen(j->final_url));
		add_num(&fl, "http_status", j->status);
		add_time(&fl, "fetched_at", j->fetched_at);
	}
	add_str(&fl, "charset", it->enc, strlen(it->enc));
	add_num(&fl, "bytes", it->bytes);
	if (it->file && !o->extract)
		add_str(&fl, "file", it->file, strlen(it->file));
	if (it->warc != NULL) {
		if (j->status)
			add_num(&fl, "http_status", j->status);
		if (j->fetched_at)
			add_time(&fl, "fetched_at", j->fetched_at);
		add_str(&fl, "warc_record_id", it->warc->id, it->warc->id ?
		    strlen(it->warc->id) : 0);
		add_str(&fl, "warc_file", it->warc->file, strlen(it->warc->file));
		add_num(&fl, "warc_offset", (double)it->warc->offset);
	}
	put_fields(&fl, rec, it->line, it->len, out);
}

void
fetch_write_log(const struct fetch_opts *o, const struct fetch_item *it,
    int outcome, struct buf *out)
{
	struct fields fl;
	const struct crawl_job *j = &it->job;
	const char *name = crawl_outcome[outcome];

	fields_init(&fl);
	add_str(&fl, "url", it->url, strlen(it->url));
	add_str(&fl, "outcome", name, strlen(name));
	add_num(&fl, "http_status", j->status);
	add_str(&fl, "error", outcome == CR_OK ? NULL : j->error,
	    strlen(j->error));
	add_num(&fl, "bytes", it->bytes);
	add_num(&fl, "ms", j->ms);
	if (j->final_url)
		add_str(&fl, "final_url", j->final_url, strlen(j->final_url));
	if (j->content_type)
		add_str(&fl, "content_type", j->content_type,
		    strlen(j->content_type));
	if (j->fetched_at)
		add_time(&fl, "fetched_at", j->fetched_at);
	if (it->file && !o->extract)
		add_str(&fl, "file", it->file, strlen(it->file));
	put_fields(&fl, NULL, NULL, 0, out);
}

/* ---- the work on each item ---- */

/*
 * Published as outfile does, without its fsyncs (OUTFILE_NOSYNC): a page
 * is a cache of what was fetched, and two fsyncs a page would cost more
 * than fetching, writing and extracting it.
 */
int
fetch_save_html(const char *dir, struct fetch_item *it, char *err,
    size_t errsize, int *code)
{
	char name[64];
	struct outfile o;
	gzFile g;
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *s;
	size_t n;
	int fd;

	for (s = it->url; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	snprintf(name, sizeof name, "/%016llx.html.gz",
	    (unsigned long long)owt_mix64(h));
	n = strlen(dir) + strlen(name) + 1;
	free(it->file);
	it->file = xmalloc(n);
	snprintf(it->file, n, "%s%s", dir, name);
	if (outfile_open(&o, it->file, err, errsize, code) < 0)
		return -1;
	if ((fd = dup(o.fd)) < 0 || (g = gzdopen(fd, "wb6")) == NULL ||
	    (it->job.body.len > 0 && gzwrite(g, it->job.body.p,
	    it->job.body.len) <= 0) || gzclose(g) != Z_OK) {
		owt_fail_errno(err, errsize, code, XSYS,
		    "cannot write '%s'", it->file);
		outfile_abort(&o);
		return -1;
	}
	return outfile_commit(&o, OUTFILE_NOSYNC, err, errsize, code);
}

/* --extract: read the saved page into the job's body, as a fetch would. */
static void
read_page(const struct fetch_opts *o, struct fetch_item *it)
{
	struct crawl_job *j = &it->job;
	struct input fin;
	struct stat st;

	j->outcome = CR_OK;
	/* input_open takes a directory for a file, read fails: XSYS. */
	if (stat(j->url, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(j->error, sizeof j->error, "cannot open '%.200s': %s",
		    j->url, strerror(EISDIR));
		j->outcome = CR_ERROR;
		it->bad = XDATA;
		it->reason = BAD_OPEN;
		return;
	}
	if (input_open(&fin, j->url) < 0) {
		snprintf(j->error, sizeof j->error, "%.250s", fin.err);
		j->outcome = CR_ERROR;
		it->bad = fin.errcode;
		it->reason = fin.reason;
		return;
	}
	if (input_slurp(&fin, &j->body, o->c.max_bytes) < 0) {
		snprintf(j->error, sizeof j->error, "%.250s", fin.err);
		j->outcome = CR_ERROR;
		it->bad = fin.errcode;
		it->reason = fin.reason;
	}
	input_close(&fin);
	if (!it->bad)
		j->content_type = it->ctype ? xstrdup(it->ctype) : NULL;
}

void
fetch_extract(const struct fetch_opts *o, struct fetch_item *it,
    struct json_rec *rec)
{
	struct crawl_job *j = &it->job;
	char err[1024], xerr[128];
	double t0 = owt_now();
	int code;

	if (it->url == NULL || it->kept || j->outcome < 0)
		return;
	if (o->warc_file != NULL && !o->extract)
		fetch_warc_build(o, it);
	if (o->extract) {
		j->start = t0;
		if (it->warc != NULL)
			fetch_warc_payload(o, it);
		else
			read_page(o, it);
		if (it->bad)
			return;
	} else if (o->warc_prefix != NULL && j->outcome == CR_OK) {
		fetch_index_record(o, it);
		if (it->bad)
			return;
	}
	if (j->outcome != CR_OK)
		return;
	it->bytes = j->body.len;
	if (o->html_dir && !o->extract &&
	    fetch_save_html(o->html_dir, it, err, sizeof err, &code) < 0) {
		it->bad = code;
		it->msg = xstrdup(err);
		buf_free(&j->body);
		return;
	}
	if (it->warc != NULL && it->warc->type == WARC_CONVERSION)
		;	/* WET: the record's text is the text */
	else if (extract_page(j->body.p ? j->body.p : "", j->body.len, j->content_type,
	    &it->title, &it->text, &it->meta, &it->enc, xerr, sizeof xerr,
	    &code) < 0) {
		j->outcome = CR_BAD_HTML;
		snprintf(j->error, sizeof j->error, "%s", xerr);
	} else if (it->text.len == 0) {
		j->outcome = CR_EMPTY;
		snprintf(j->error, sizeof j->error, "no article text");
	}
	buf_free(&j->body);
	if (o->extract)
		j->ms = (owt_now() - t0) * 1e3;
	if (j->outcome == CR_OK)
		fetch_write_page(o, it, rec, &it->out);
	/* What is held until the record's turn is the record alone. */
	buf_free(&it->title);
	buf_free(&it->text);
}

/* ---- the loop's side: workers, and each item in its turn ---- */

static void *
worker_init(void *arg)
{
	struct json_rec *rec = xcalloc(1, sizeof *rec);

	(void)arg;
	json_rec_init(rec, NULL, 0);
	return rec;
}

static void
worker_fini(void *state)
{
	json_rec_free(state);
	free(state);
}

static void
work(struct batch *b, void *state)
{
	const struct fetch *f = b->opts->arg;
	size_t i;

	for (i = 0; i < b->nline; i++)
		fetch_extract(f->o, b->user[i], state);
}

/*
 * A bad line or page. Without keep_going the loop stops writing at it,
 * so the items after it in the same batch (--ordered) are not finished
 * either: no log line names a record not written.
 */
static void
note(struct fetch *f, struct batch *b, int reason, const char *msg)
{
	batch_note(b, reason, "%s", msg);
	if (!f->o->keep_going)
		f->halted = 1;
}

/* An item's turn: count it, write its record and log line, or its note. */
static void
finish(struct fetch *f, struct batch *b, struct fetch_item *it)
{
	const struct fetch_opts *o = f->o;
	struct crawl_job *j = &it->job;
	int oc = j->outcome;

	if (f->failed || f->halted)
		return;
	if (it->bad == XSYS) {
		fail(f, XSYS, "%s", it->msg ? it->msg : j->error);
		return;
	}
	if (it->url == NULL) {
		note(f, b, it->reason, it->msg);
		return;
	}
	if (oc < 0) {
		f->ncancelled++;
		/* --ordered: what was read after it waits for the next run. */
		if (f->held != NULL)
			f->cut = 1;
		return;
	}
	if (f->cut) {
		f->nunwritten++;
		return;
	}
	f->count[oc].n++;
	f->nfinished++;
	if (it->kept) {
		if (it->line != NULL)
			buf_add(&b->out, it->line, it->len);
		else
			buf_adds(&b->out, it->url);
		buf_addc(&b->out, '\n');
		return;
	}
	f->nbytes += it->bytes;
	if (f->ww != NULL && fetch_warc_meta(f, it, oc) < 0) {
		fail(f, XSYS, "%s", f->ww->err);
		return;
	}
	if (oc == CR_OK)
		buf_add(&b->out, it->out.p, it->out.len);
	if (f->logfd >= 0)
		fetch_write_log(o, it, oc, &f->logbuf);
	else if (oc != CR_OK && !o->quiet && !it->bad)
		owt_warn("%s: %s: %s", it->url, crawl_outcome[oc], j->error);
	if (it->bad == XDATA)
		note(f, b, it->reason, j->error);
	progress_tick(&f->prog, f->nfinished, f->nbytes);
}

/*
 * --ordered: an item done waits for those read before it; each item
 * released is written (at most c.window are held: crawl_next reads no
 * further ahead).
 */
static void
release(struct fetch *f, struct batch *b, struct fetch_item *it)
{
	size_t k;

	f->held[it->seq % f->heldcap] = it;
	while ((it = f->held[k = f->released % f->heldcap]) != NULL &&
	    it->seq == f->released) {
		f->held[k] = NULL;
		f->released++;
		finish(f, b, it);
		fetch_item_free(f, it);
	}
}

static void
done(struct batch *b, void *arg)
{
	struct fetch *f = arg;
	size_t i;

	for (i = 0; i < b->nline; i++) {
		if (f->held != NULL) {
			release(f, b, b->user[i]);
		} else {
			finish(f, b, b->user[i]);
			fetch_item_free(f, b->user[i]);
		}
	}
}

/* ---- writing ---- */

/*
 * Output first, then the log lines of what it holds: a log line never
 * names a page not yet written.
 */
static void
flush(struct fetch *f, int force)
{
	size_t off = 0;
	ssize_t w;

	if (f->failed || (!force && f->logbuf.len < FLUSH_BYTES &&
	    (f->ww == NULL || f->ww->pend.len < FLUSH_BYTES) &&
	    owt_now() - f->flushed < FLUSH_SECS))
		return;
	if (fflush(f->out) != 0) {
		fail(f, XSYS, "write error on standard output: %s",
		    strerror(errno));
		return;
	}
	/* The archive between: its pages are written, the log's are in it. */
	if (fetch_warc_flush(f) < 0) {
		fail(f, XSYS, "%s", f->ww->err);
		return;
	}
	while (off < f->logbuf.len) {
		w = write(f->logfd, f->logbuf.p + off, f->logbuf.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			fail(f, XSYS, "cannot write '%s': %s", f->o->log,
			    strerror(errno));
			return;
		}
		off += (size_t)w;
	}
	f->logbuf.len = 0;
	f->flushed = owt_now();
}

/* The loop stopped (a bad item without -k, or a write error): read no more. */
static void
stopped(struct fetch *f)
{
	f->stopping = 1;
	if (f->crawl)
		crawl_abort(f->crawl);
}

/*
 * Hand an item to the loop (which frees it; one the loop refuses is freed
 * with the rest at the end), and write what is done.
 */
static void
put(struct fetch *f, struct fetch_item *it)
{
	if (f->stopping) {
		fetch_item_free(f, it);
		return;
	}
	/* Inline (no workers) nothing is left in flight to poll for. */
	if (batch_add(f->loop, NULL, 0, "", 0, it) ||
	    (f->nworkers > 0 && batch_poll(f->loop)))
		stopped(f);
	flush(f, 0);
	if (f->failed)
		stopped(f);
}

/* ---- the modes ---- */

/* --ordered: the items read and not yet written fill the window. */
static int
window_full(const struct fetch *f)
{
	return f->nread - f->released >= f->heldcap;
}

static struct crawl_job *
crawl_next(void *arg)
{
	struct fetch *f = arg;
	struct fetch_item *it;

	for (;;) {
		/*
		 * --ordered, the window full: write what is done, without
		 * waiting while transfers run; once all that was read is back
		 * from the crawler, wait for its extraction and write it.
		 */
		while (f->held != NULL && !f->stopping && window_full(f)) {
			if (batch_poll(f->loop))
				stopped(f);
			else if (!window_full(f))
				break;
			else if (f->incrawl > 0)
				return CRAWL_LATER;
			else if (batch_sync(f->loop))
				stopped(f);
			flush(f, 1);
			if (f->failed)
				stopped(f);
		}
		if (f->stopping || (it = fetch_item_next(f)) == NULL)
			return NULL;
		/* An index row's URL is an archive's: no filter. */
		if (it->url != NULL && (it->job.ranged || !fetch_filter(f, it)))
			break;
		put(f, it);
	}
	f->incrawl++;
	return &it->job;
}

static void
crawl_done(void *arg, struct crawl_job *j)
{
	struct fetch *f = arg;

	f->incrawl--;
	put(f, (struct fetch_item *)j);
}

/*
 * Between transfers: write what the workers have finished, so that one
 * slow transfer does not hold back the pages done before it (the output
 * and the log at least once a second).
 */
static void
crawl_tick(void *arg)
{
	struct fetch *f = arg;

	if (f->stopping)
		return;
	if (f->nworkers > 0 && batch_poll(f->loop))
		stopped(f);
	flush(f, 0);
	if (f->failed)
		stopped(f);
}

static int
run_crawl(struct fetch *f)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		fail(f, XSYS, "cannot initialise libcurl");
		return -1;
	}
	f->crawl = crawl_new(&f->o->c);
	if (crawl_run(f->crawl, crawl_next, crawl_done, crawl_tick, f) < 0)
		fail(f, XSYS, "libcurl failed");
	crawl_free(f->crawl);
	f->crawl = NULL;
	curl_global_cleanup();
	return f->failed ? -1 : 0;
}

int
fetch_run(struct fetch *f, char *err, size_t errsize, int *code)
{
	const struct fetch_opts *o = f->o;
	struct batch_opts bo = {
		.nworkers = o->filter_only ? 0 : o->workers,
		.stack = EXTRACT_STACK,
		.depth = 4 * (size_t)o->workers + 16,
		/*
		 * An item a batch, extracted as soon as it is back; --filter-only
		 * (inline) writes a batch at a time, as it wrote 1 MB at a time.
		 */
		.maxrecs = o->filter_only ? 256 : 1,
		.keep_going = o->keep_going, .bad = f->bad, .out = f->out,
		.init = worker_init, .work = work, .fini = worker_fini,
		.done = done, .arg = f,
	};
	struct fetch_item *it;
	int r;

	if (o->ordered && !o->extract && !o->filter_only) {
		f->heldcap = o->c.window > (size_t)o->c.connections ?
		    o->c.window : (size_t)o->c.connections;
		f->held = xcalloc(f->heldcap, sizeof *f->held);
	}
	f->flushed = owt_now();
	f->nworkers = bo.nworkers;
	f->loop = batch_start(&bo);
	if (!o->extract && !o->filter_only) {
		run_crawl(f);
	} else {
		while (!f->stopping && (it = fetch_item_next(f)) != NULL) {
			if (o->filter_only && it->url != NULL &&
			    !fetch_filter(f, it)) {
				it->kept = 1;
				it->job.outcome = CR_OK;
			}
			put(f, it);
		}
	}
	r = batch_end(f->loop, err, errsize, code);
	f->loop = NULL;
	if (r < 0)
		fail(f, *code, "%s", err);
	else
		flush(f, 1);
	while (f->live)
		fetch_item_free(f, f->live);
	if (f->failed) {
		owt_fail(err, errsize, code, f->errcode, "%s", f->err);
		errno = f->errnum;
		return -1;
	}
	return r;
}

/* ---- setting up ---- */

int
fetch_resume_load(struct urlset *set, const char *path, char *err,
    size_t errsize, int *code)
{
	static const char *const want[] = { "url" };
	struct jsonl j;
	struct json_rec *r;
	struct stat st;
	int k, fd;

	if ((fd = open(path, O_RDWR)) >= 0 && fstat(fd, &st) == 0 &&
	    st.st_size > 0) {
		off_t end = st.st_size;
		char c;

		while (end > 0 && pread(fd, &c, 1, end - 1) == 1 && c != '\n')
			end--;
		if (end != st.st_size && ftruncate(fd, end) != 0) {
			owt_fail_errno(err, errsize, code, XSYS,
			    "cannot truncate '%s'", path);
			close(fd);
			return -1;
		}
	}
	if (fd >= 0)
		close(fd);
	if (jsonl_open(&j, path, want, 1) < 0) {
		owt_fail(err, errsize, code, j.errcode == XSYS ? XSYS : XDATA,
		    "%s", j.err);
		jsonl_close(&j);
		return -1;
	}
	while ((k = jsonl_next(&j, &r)) != 0) {
		const char *u, *why;
		size_t n;

		if (k < 0) {
			owt_fail(err, errsize, code, j.errcode, "%s", j.err);
			jsonl_close(&j);
			return -1;
		}
		if ((u = json_rec_str(r, "url", &n, &why)) != NULL)
			urlset_add(set, u, n);
	}
	jsonl_close(&j);
	return 0;
}

int
fetch_open(struct fetch *f, const struct fetch_opts *o, char *const *paths,
    int npaths, FILE *out, volatile sig_atomic_t *stop, char *err,
    size_t errsize, int *code)
{
	static const char *const want_url[] = { "url" };
	static const char *const want_file[] = { "file", "url", "content_type" };
	int flags;

	memset(f, 0, sizeof *f);
	f->o = o;
	f->paths = paths;
	f->npaths = npaths;
	f->cur = -1;
	f->out = out;
	f->stop = stop;
	f->logfd = -1;
	if (o->extract)
		json_rec_init(&f->rec, want_file, 3);
	else
		json_rec_init(&f->rec, want_url, 1);
	progress_init(&f->prog, o->quiet ? -1 : o->progress, "URLs");
	if (!o->extract) {
		if (urlfilter_init(&f->filter, o->blacklist, err, errsize,
		    code) < 0)
			return -1;
		f->filter_on = 1;
	}
	if (o->html_dir) {
		char *pat = xmalloc(strlen(o->html_dir) + 12);

		if (mkdir(o->html_dir, 0777) < 0 && errno != EEXIST) {
			owt_fail_errno(err, errsize, code, XSYS,
			    "cannot create '%s'", o->html_dir);
			free(pat);
			return -1;
		}
		sprintf(pat, "%s/*.html.gz", o->html_dir);
		outfile_sweep(pat);
		free(pat);
	}
	if (o->resume && fetch_resume_load(&f->done, o->resume, err, errsize,
	    code) < 0)
		return -1;
	if (o->warc_file && !o->extract && !o->filter_only &&
	    fetch_warc_writer_open(f, err, errsize, code) < 0)
		return -1;
	if (o->log) {
		flags = O_WRONLY | O_CREAT;
		flags |= o->resume && strcmp(o->resume, o->log) == 0 ?
		    O_APPEND : O_TRUNC;
		if ((f->logfd = open(o->log, flags, 0666)) < 0)
			return owt_fail_errno(err, errsize, code, XSYS,
			    "cannot open '%s'", o->log);
	}
	return 0;
}

int
fetch_close(struct fetch *f, char *err, size_t errsize, int *code)
{
	int fd = f->logfd;

	if (fetch_warc_writer_close(f, err, errsize, code) < 0)
		return -1;
	f->logfd = -1;
	if (fd >= 0 && close(fd) != 0)
		return owt_fail_errno(err, errsize, code, XSYS,
		    "cannot write '%s'", f->o->log);
	return 0;
}

void
fetch_free(struct fetch *f)
{
	while (f->live)
		fetch_item_free(f, f->live);
	if (f->in_open)
		input_close(&f->in);
	f->in_open = 0;
	fetch_warc_free(f);
	fetch_index_free(f);
	if (f->ww != NULL) {
		warc_writer_free(f->ww);
		free(f->ww);
		f->ww = NULL;
	}
	if (f->logfd >= 0)
		close(f->logfd);
	f->logfd = -1;
	if (f->filter_on)
		urlfilter_free(&f->filter);
	f->filter_on = 0;
	buf_free(&f->norm);
	buf_free(&f->logbuf);
	urlset_free(&f->done);
	json_rec_free(&f->rec);
	free(f->held);
	f->held = NULL;
}

unsigned long long
fetch_nbad(const struct fetch *f)
{
	unsigned long long n = 0;
	size_t i;

	for (i = 0; i < FETCH_NBAD; i++)
		n += f->bad[i].n;
	return n;
}
