/*
 * fetch_warc.c - owt-fetch --extract on WARC archives: records to items, payloads to pages
 *
 * The calling thread reads the records (decompression and the WARC
 * headers, the serial part) and hands each response, resource and
 * conversion record to the workers with its block as the job's body;
 * the workers undo the HTTP framing and codings and extract, as for a
 * saved page.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "web/charset.h"
#include "web/fetch_warc.h"
#include "web/warc_write.h"

struct fetch_warc {
	struct warc_reader r;
	struct warc_rec rec;
	int open, sharded;
	char *file;		/* the archive open; kept for items' warc_file */
	char **files;		/* every archive read, freed at the end */
	size_t nfiles, filecap;
	int any;		/* an archive was read */
	struct tally skipped[WARC_NTYPES];
	unsigned long long ncut;	/* archives cut short by a bad record */
};

static struct fetch_warc *
state(struct fetch *f)
{
	if (f->warc == NULL)
		f->warc = xcalloc(1, sizeof *f->warc);
	return f->warc;
}

int
fetch_warc_active(const struct fetch *f)
{
	return f->warc != NULL && f->warc->open;
}

int
fetch_warc_open(struct fetch *f, const char *path, int sharded,
    struct fetch_item **bad)
{
	struct fetch_warc *w;

	if (path == NULL || strcmp(path, "-") == 0 || !warc_sniff_file(path))
		return 0;
	w = state(f);
	warc_malloc_tune();
	w->files = xgrow(w->files, &w->filecap, w->nfiles + 1, sizeof *w->files);
	w->file = w->files[w->nfiles++] = xstrdup(path);
	if (warc_open(&w->r, w->file, NULL, 0, w->file) < 0) {
		*bad = fetch_item_bad(f, BAD_OPEN, "%s", w->r.err);
		if (w->r.errcode == XSYS)
			(*bad)->bad = XSYS;
		return -1;
	}
	w->open = 1;
	w->any = 1;
	w->sharded = sharded;
	return 1;
}

static void
end_archive(struct fetch_warc *w)
{
	warc_close(&w->r);
	w->open = 0;
}

struct fetch_item *
fetch_warc_item(struct fetch *f)
{
	struct fetch_warc *w = f->warc;
	struct warc_head *h = &w->rec.h;
	struct fetch_warc_rec *wr;
	struct fetch_item *it;
	int k;

	while (w->open && !(f->stop && *f->stop)) {
		if ((k = warc_next(&w->r, &w->rec)) == 0) {
			end_archive(w);
			break;
		}
		if (k > 0) {
			if (w->sharded && f->lineno++ % f->o->shard[1] !=
			    f->o->shard[0])
				continue;
			if (h->type != WARC_RESPONSE && h->type != WARC_RESOURCE &&
			    h->type != WARC_CONVERSION) {
				w->skipped[h->type].n++;
				continue;
			}
			if (f->o->resume && h->target != NULL &&
			    urlset_has(&f->done, h->target, strlen(h->target))) {
				f->nresumed++;
				continue;
			}
			if (warc_block(&w->r, &w->rec, f->o->c.max_bytes +
			    (h->type == WARC_RESPONSE ? WARC_HTTP_SLACK : 0)) == 0) {
				it = fetch_item_new(f);
				it->url = xstrdup(h->target ? h->target : "");
				it->job.url = it->url;
				it->job.fetched_at = warc_date(h->date);
				/* The block becomes the job's body, without a copy. */
				it->job.body = w->rec.block;
				memset(&w->rec.block, 0, sizeof w->rec.block);
				it->warc = wr = xcalloc(1, sizeof *wr);
				wr->type = h->type;
				wr->toolarge = w->rec.toolarge;
				wr->id = h->id ? xstrdup(h->id) : NULL;
				wr->ptype = h->ptype ? xstrdup(h->ptype) : NULL;
				wr->ctype = h->ctype ? xstrdup(h->ctype) : NULL;
				wr->file = w->file;
				wr->offset = w->rec.offset;
				return it;
			}
		}
		/* A corrupt or truncated record: the rest cannot be trusted. */
		it = fetch_item_bad(f, FETCH_BAD_WARC, "%s", w->r.err);
		if (w->r.errcode == XSYS)
			it->bad = XSYS;
		w->ncut++;
		end_archive(w);
		return it;
	}
	return NULL;
}

static void
outcome(struct crawl_job *j, int oc, const char *fmt, const char *arg)
{
	j->outcome = oc;
	snprintf(j->error, sizeof j->error, fmt, arg);
}

void
fetch_warc_payload(const struct fetch_opts *o, struct fetch_item *it)
{
	struct crawl_job *j = &it->job;
	struct fetch_warc_rec *w = it->warc;
	struct warc_http h;
	struct buf dec = { 0 };
	const char *ct;
	char err[256], n[32];
	size_t len, ctlen;
	int k, ht;

	j->outcome = CR_OK;
	if (w->toolarge) {
		snprintf(n, sizeof n, "%zu", o->c.max_bytes);
		outcome(j, CR_TOO_LARGE, "record over %s bytes", n);
		return;
	}
	if (w->type == WARC_CONVERSION) {
		/* WET: the text as it is, made valid UTF-8. */
		charset_to_utf8(j->body.p ? j->body.p : "", j->body.len, "UTF-8",
		    &it->text);
		it->enc = "UTF-8";
		return;
	}
	ct = w->ctype;
	ctlen = ct ? strlen(ct) : 0;
	if (w->type == WARC_RESPONSE) {
		/* Not HTTP (dns:, ftp: responses): nothing to extract. */
		if (ct != NULL && strncasecmp(ct, "application/http", 16) != 0) {
			outcome(j, CR_NOT_HTML, "record type %s", ct);
			return;
		}
		if (warc_http_parse(j->body.p, j->body.len, &h, err,
		    sizeof err) < 0) {
			outcome(j, CR_ERROR, "%s", err);
			return;
		}
		j->status = h.status;
		if (h.status != 200) {
			snprintf(n, sizeof n, "%ld", h.status);
			outcome(j, CR_HTTP, "HTTP %s", n);
			return;
		}
		/* The header goes, its Content-Type with it: keep a copy. */
		if (h.ctype != NULL)
			j->content_type = xstrndup(h.ctype, h.ctype_len);
		ct = NULL;
		len = j->body.len - h.body;
		memmove(j->body.p, j->body.p + h.body, len);
		j->body.len = len;
		j->body.p[len] = '\0';
		if (h.chunked && warc_dechunk(j->body.p, &j->body.len, err,
		    sizeof err) < 0) {
			outcome(j, CR_ERROR, "%s", err);
			return;
		}
		if (h.coding != WARC_CE_IDENTITY) {
			k = warc_decode(h.coding, j->body.p, j->body.len,
			    o->c.max_bytes + 1, &dec, err, sizeof err);
			if (k < 0) {
				buf_free(&dec);
				outcome(j, CR_ERROR, "%s", err);
				return;
			}
			buf_free(&j->body);
			j->body = dec;
		}
	}
	if (ct != NULL)
		j->content_type = xstrndup(ct, ctlen);
	ct = j->content_type;
	ctlen = ct ? strlen(ct) : 0;
	if (j->body.len > o->c.max_bytes) {
		snprintf(n, sizeof n, "%zu", o->c.max_bytes);
		outcome(j, CR_TOO_LARGE, "body over %s bytes", n);
		return;
	}
	/* The archive's own identification of the payload comes first. */
	ht = w->ptype != NULL ? crawl_html_type(w->ptype, strlen(w->ptype)) :
	    crawl_html_type(ct, ctlen);
	if (ht == 0 || (ht < 0 && (w->ptype != NULL ||
	    !crawl_sniff_html(j->body.p ? j->body.p : "", j->body.len))))
		outcome(j, CR_NOT_HTML, "content type %s",
		    w->ptype ? w->ptype : j->content_type ? j->content_type :
		    "missing");
}

void
fetch_warc_summary(const struct fetch *f)
{
	struct fetch_warc *w = f->warc;
	size_t i;

	if (w == NULL || !w->any)
		return;
	for (i = 0; i < WARC_NTYPES; i++)
		w->skipped[i].name = warc_type_name[i];
	tally_print("WARC records skipped", w->skipped, WARC_NTYPES);
	if (w->ncut)
		fprintf(stderr, "%s: %llu WARC files cut short at a bad record\n",
		    owt_prog, w->ncut);
}

void
fetch_warc_free(struct fetch *f)
{
	struct fetch_warc *w = f->warc;
	size_t i;

	if (w == NULL)
		return;
	if (w->open)
		warc_close(&w->r);
	warc_rec_free(&w->rec);
	for (i = 0; i < w->nfiles; i++)
		free(w->files[i]);
	free(w->files);
	free(w);
	f->warc = NULL;
}

/* ---- writing (--warc-file) ---- */

/* --resume: a URL the archive holds is done, as one the log has. */
static void
resumed_url(void *arg, const char *u, size_t n)
{
	urlset_add(arg, u, n);
}

int
fetch_warc_writer_open(struct fetch *f, char *err, size_t errsize, int *code)
{
	const struct fetch_opts *o = f->o;
	struct buf info = { 0 };
	const char *sfx[] = { ".warc.gz", ".warc.gz.open", "-00000.warc.gz",
		"-00000.warc.gz.open" };
	char path[4096];
	uint64_t ncut = 0;
	int seq = o->warc_max_size > 0 ? 0 : -1, next;
	size_t i;

	if (o->resume) {
		/* A CDX that would miss the new files' records: not silently. */
		snprintf(path, sizeof path, "%s.cdx", o->warc_file);
		if (!o->warc_cdx && access(path, F_OK) == 0)
			return owt_fail(err, errsize, code, XUSAGE, "--resume: '%s' "
			    "exists: give --warc-cdx to keep it whole (or remove "
			    "it)", path);
		/* What a killed run left: cut back, closed, its URLs done. */
		if (warc_recover(o->warc_file, o->warc_cdx, resumed_url, &f->done,
		    &next, &ncut, err, errsize, code) < 0)
			return -1;
		if (next >= 0)
			seq = next;
		if (ncut > 0 && !o->quiet)
			owt_warn("--resume: %llu bytes of partial records cut from "
			    "'%s' files", (unsigned long long)ncut, o->warc_file);
	} else {
		/* Never overwrite an archive, nor what a killed run left. */
		for (i = 0; i < 4; i++) {
			snprintf(path, sizeof path, "%s%s", o->warc_file, sfx[i]);
			if (access(path, F_OK) == 0)
				return owt_fail(err, errsize, code, XUSAGE, "--warc-file: "
				    "'%s' exists: give another prefix (or --resume)",
				    path);
		}
	}
	buf_printf(&info, "software: owt-fetch/%s\r\nformat: WARC File Format 1.1\r\n"
	    "robots: %s\r\nhttp-header-user-agent: %s\r\n"
	    "max-bytes: %zu\r\ntimeout: %g\r\nretries: %d\r\ndelay: %g\r\n"
	    "per-host: %d\r\n", OWT_VERSION,
	    o->c.ignore_robots ? "ignore" : "obey", o->c.agent ? o->c.agent : "",
	    o->c.max_bytes, o->c.timeout, o->c.retries, o->c.delay,
	    o->c.per_host);
	if (o->warc_max_size > 0)
		buf_printf(&info, "warc-max-size: %llu\r\n",
		    (unsigned long long)o->warc_max_size);
	f->ww = xcalloc(1, sizeof *f->ww);
	if (warc_writer_open(f->ww, o->warc_file, info.p, o->warc_max_size, seq,
	    o->warc_cdx, o->resume != NULL) < 0) {
		buf_free(&info);
		return owt_fail(err, errsize, code, f->ww->errcode, "%s",
		    f->ww->err);
	}
	buf_free(&info);
	return 0;
}

/* The next head of a run of heads: [*pos, end) up to its empty line. */
static int
next_head(const struct buf *b, size_t *pos, const char **h, size_t *n)
{
	size_t e;

	if (*pos >= b->len)
		return 0;
	*h = b->p + *pos;
	if ((e = warc_head_end(*h, b->len - *pos)) == 0)
		e = b->len - *pos;
	*n = e;
	*pos += e;
	return 1;
}

/* The value of header field name in head h[0..n), trimmed, into v (size vs). */
static int
head_field(const char *h, size_t n, const char *name, char *v, size_t vs)
{
	size_t nl = strlen(name), i = 0, k;
	const char *e;

	while (i < n) {
		e = memchr(h + i, '\n', n - i);
		k = e ? (size_t)(e - (h + i)) : n - i;
		if (k > nl && h[i + nl] == ':' && strncasecmp(h + i, name, nl) == 0) {
			const char *s = h + i + nl + 1, *t = h + i + k;

			while (s < t && (*s == ' ' || *s == '\t'))
				s++;
			while (t > s && (t[-1] == '\r' || t[-1] == ' '))
				t--;
			snprintf(v, vs, "%.*s", (int)(t - s), s);
			return 1;
		}
		i += k + 1;
	}
	return 0;
}

/* Make a record into it->warc_gz, after those made before. */
static void
add_record(struct fetch_item *it, const struct warc_out *r, char *id)
{
	warc_record_gz(r, id, &it->warc_gz);
}

void
fetch_warc_build(const struct fetch_opts *o, struct fetch_item *it)
{
	struct crawl_job *j = &it->job;
	size_t rp = 0, sp = 0, qn, sn = 0, plen;
	const char *q, *s = NULL;
	char scheme[8], host[512], path[2048], loc[16], reqid[48], fields[1024];
	char pdg[40], trunc[64], err[256], resid[48];
	struct warc_http h;
	size_t off;
	struct buf dec = { 0 };
	int last, parsed = 0;

	it->warc_id[0] = '\0';
	it->warc_gz.len = it->warc_cdx.len = 0;
	if (j->wresp.len == 0)
		return;
	snprintf(scheme, sizeof scheme, "%s", strncmp(j->url, "https:", 6) == 0 ?
	    "https" : "http");
	while (next_head(&j->wresp, &sp, &s, &sn)) {
		struct iovec rv[2], qv[1];
		struct warc_out rq, rs;

		/* Interim 1xx heads belong to the exchange that follows. */
		if (sn > 9 && s[9] == '1' && sp < j->wresp.len)
			continue;
		last = sp >= j->wresp.len;
		/* the last head's framing and coding, read once */
		parsed = last && warc_http_parse(s, sn, &h, err, sizeof err) == 0;
		if (!next_head(&j->wreq, &rp, &q, &qn)) {
			q = "";
			qn = 0;
		}
		/* The hop's URL: its request line and Host, its scheme. */
		path[0] = host[0] = '\0';
		sscanf(q, "%*s %2047s", path);
		head_field(q, qn, "Host", host, sizeof host);
		snprintf(fields, sizeof fields, "%s://%s%s", scheme, host, path);
		{
			char uri[sizeof fields];

			memcpy(uri, fields, sizeof uri);
			qv[0].iov_base = (void *)q;
			qv[0].iov_len = qn;
			rq = (struct warc_out){ "request", uri, j->fetched_at ?
			    j->fetched_at : time(NULL), "application/http; msgtype=request",
			    NULL, qv, 1, 0 };
			add_record(it, &rq, reqid);
			rv[0].iov_base = (void *)s;
			rv[0].iov_len = sn;
			rv[1].iov_base = last ? j->body.p : NULL;
			rv[1].iov_len = last ? j->body.len : 0;
			trunc[0] = pdg[0] = '\0';
			if (last && j->outcome == CR_OK) {
				struct iovec pv = { j->body.p, j->body.len };

				/* The payload digest is of the body without chunks. */
				if (parsed && h.chunked && j->body.len > 0) {
					size_t n = j->body.len;

					buf_add(&dec, j->body.p, n);
					if (warc_dechunk(dec.p, &n, err, sizeof err) == 0)
						dec.len = n;
					pv.iov_base = dec.p;
					pv.iov_len = dec.len;
				}
				warc_digest(&pv, 1, pdg);
			} else if (!head_field(s, sn, "Content-Length", loc,
			    sizeof loc) || strcmp(loc, "0") != 0) {
				snprintf(trunc, sizeof trunc, "WARC-Truncated: %s\r\n",
				    j->outcome == CR_TOO_LARGE ? "length" :
				    j->outcome == CR_TIMEOUT ? "time" : "unspecified");
			}
			plen = (size_t)snprintf(fields, sizeof fields,
			    "WARC-Concurrent-To: %s\r\n", reqid);
			if (last && j->ip[0])
				plen += (size_t)snprintf(fields + plen, sizeof fields - plen,
				    "WARC-IP-Address: %s\r\n", j->ip);
			if (pdg[0])
				plen += (size_t)snprintf(fields + plen, sizeof fields - plen,
				    "WARC-Payload-Digest: %s\r\n", pdg);
			snprintf(fields + plen, sizeof fields - plen, "%s", trunc);
			rs = (struct warc_out){ "response", uri, rq.date,
			    "application/http; msgtype=response", fields, rv, 2,
			    parsed && j->body.len > 0 && h.coding !=
			    WARC_CE_IDENTITY };
			off = it->warc_gz.len;
			add_record(it, &rs, resid);
			if (last)
				memcpy(it->warc_id, resid, sizeof resid);
			if (o->warc_cdx) {
				char date[32];
				struct tm tm;

				gmtime_r(&rs.date, &tm);
				strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
				warc_cdx_line(uri, date, s, sn, pdg[0] ? pdg : NULL,
				    &it->warc_cdx);
				buf_printf(&it->warc_cdx, "\t%zu\t%s\n", off, resid);
			}
		}
		/* An absolute Location may change the scheme of the next hop. */
		if (head_field(s, sn, "Location", loc, sizeof loc) &&
		    (strncasecmp(loc, "https:", 6) == 0 ||
		    strncasecmp(loc, "http:", 5) == 0))
			snprintf(scheme, sizeof scheme, "%s",
			    loc[4] == 's' || loc[4] == 'S' ? "https" : "http");
	}
	/* What is extracted is the payload: chunks and codings undone. */
	if (j->outcome == CR_OK && parsed) {
		if (dec.len > 0 || (h.chunked && j->body.len == 0)) {
			buf_free(&j->body);
			j->body = dec;
			memset(&dec, 0, sizeof dec);
		}
		if (h.coding != WARC_CE_IDENTITY) {
			struct buf out = { 0 };
			int k = warc_decode(h.coding, j->body.p, j->body.len,
			    o->c.max_bytes, &out, err, sizeof err);

			/* As the crawl without an archive says it. */
			if (k > 0) {
				j->outcome = CR_TOO_LARGE;
				snprintf(j->error, sizeof j->error,
				    "body over %zu bytes", o->c.max_bytes);
			} else if (k < 0) {
				j->outcome = CR_ERROR;
				snprintf(j->error, sizeof j->error, "%s", err);
			}
			buf_free(&j->body);
			j->body = out;
		}
	}
	buf_free(&dec);
}

int
fetch_warc_meta(struct fetch *f, const struct fetch_item *it, int outcome)
{
	struct buf b = { 0 }, gz = { 0 };
	char fields[128];
	struct iovec v, g[2];
	struct warc_out r;
	int k;

	if (it->warc_id[0] == '\0')
		return 0;
	buf_printf(&b, "outcome: %s\r\n", crawl_outcome[outcome]);
	if (outcome != CR_OK)
		buf_printf(&b, "error: %s\r\n", it->job.error);
	/* The URL as given, that --resume matches, where it was normalised. */
	if (strcmp(it->url, it->job.url) != 0)
		buf_printf(&b, "input-url: %s\r\n", it->url);
	v.iov_base = b.p;
	v.iov_len = b.len;
	snprintf(fields, sizeof fields, "WARC-Concurrent-To: %s\r\n", it->warc_id);
	r = (struct warc_out){ "metadata", it->job.url, it->job.fetched_at ?
	    it->job.fetched_at : time(NULL), "application/warc-fields", fields,
	    &v, 1, 0 };
	warc_record_gz(&r, NULL, &gz);
	/* The exchanges as the worker made them, the outcome last: a group. */
	g[0].iov_base = it->warc_gz.p;
	g[0].iov_len = it->warc_gz.len;
	g[1].iov_base = gz.p;
	g[1].iov_len = gz.len;
	k = warc_writer_group(f->ww, g, 2, it->warc_cdx.p, it->warc_cdx.len);
	buf_free(&b);
	buf_free(&gz);
	return k;
}

int
fetch_warc_flush(struct fetch *f)
{
	return f->ww != NULL ? warc_writer_flush(f->ww) : 0;
}

int
fetch_warc_writer_close(struct fetch *f, char *err, size_t errsize, int *code)
{
	int k = 0;

	if (f->ww == NULL)
		return 0;
	if (warc_writer_close(f->ww) < 0)
		k = owt_fail(err, errsize, code, f->ww->errcode, "%s", f->ww->err);
	warc_writer_free(f->ww);
	free(f->ww);
	f->ww = NULL;
	return k;
}
