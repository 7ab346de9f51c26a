/* pack.c - idx-pack's jobs: token streams packed into a dataset, datasets merged, read back */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json.h"
#include "core/util.h"
#include "tok/pack.h"

void
pack_init(struct pack *p, const char *output, int force, int keep_empty,
    struct progress *prog)
{
	memset(p, 0, sizeof *p);
	p->w.bin.fd = p->w.idx.fd = p->w.docfd = -1;
	p->output = output;
	p->force = force;
	p->keep_empty = keep_empty;
	p->prog = prog;
}

void
pack_free(struct pack *p)
{
	free(p->first_name);
	p->first_name = NULL;
}

/* Open the writer for the first input. */
static int
start(struct pack *p, int dtype, char *err, size_t errsize, int *code)
{
	if (p->started)
		return 0;
	p->started = 1;
	if (mmidx_create(&p->w, p->output, dtype, p->force) < 0)
		return owt_fail(err, errsize, code, p->w.errcode, "%s", p->w.err);
	return 0;
}

int
pack_stream(struct pack *p, const char *path, char *err, size_t errsize,
    int *code)
{
	struct tok_reader r;
	const unsigned char *raw;
	size_t n;
	int k, ret = -1;

	if (tok_open(&r, path) < 0) {
		owt_fail(err, errsize, code, r.errcode, "%s", r.err);
		goto out;
	}
	if (p->first_name == NULL) {
		p->first = r.h;
		p->first_name = xstrdup(r.in.name);
		if (start(p, MMIDX_DTYPE(p->first.vocab), err, errsize,
		    code) < 0)
			goto out;
	} else if (r.h.vocab != p->first.vocab || r.h.eod != p->first.eod) {
		owt_fail(err, errsize, code, XDATA, "%s: vocabulary %u, EOD %d "
		    "differ from %s's (vocabulary %u, EOD %d)", r.in.name,
		    r.h.vocab, (int)r.h.eod, p->first_name, p->first.vocab,
		    (int)p->first.eod);
		goto out;
	}
	while ((k = tok_next_raw(&r, &raw, &n)) > 0) {
		if (n == 0 && !p->keep_empty) {
			p->nempty++;
			continue;
		}
		if ((n > 0 && mmidx_add_le(&p->w, raw, r.h.width, n) < 0) ||
		    mmidx_end_doc(&p->w) < 0) {
			/* Bad data is the document's: name it. */
			if (p->w.errcode != XDATA)
				owt_fail(err, errsize, code, p->w.errcode, "%s",
				    p->w.err);
			else
				owt_fail(err, errsize, code, XDATA,
				    "%s: document %llu: %s", r.in.name,
				    (unsigned long long)r.ndocs, p->w.err);
			goto out;
		}
		progress_tick(p->prog, p->w.ndocs, p->w.binbytes);
	}
	if (k < 0) {
		owt_fail(err, errsize, code, r.errcode, "%s", r.err);
		goto out;
	}
	p->v1 = r.nv1 > 0 ? r.in.name : NULL;
	ret = 0;
out:
	tok_close(&r);
	return ret;
}

int
pack_dataset(struct pack *p, const char *prefix, char *err, size_t errsize,
    int *code)
{
	struct mmidx d;
	int ret = 0;

	if (mmidx_open(&d, prefix, err, errsize, code) < 0)
		return -1;
	if (start(p, d.dtype, err, errsize, code) < 0) {
		ret = -1;
	} else if (mmidx_add_dataset(&p->w, &d) < 0) {
		/* A dtype that differs is the input's; a write error names its file. */
		if (p->w.errcode != XDATA)
			owt_fail(err, errsize, code, p->w.errcode, "%s",
			    p->w.err);
		else
			owt_fail(err, errsize, code, XDATA, "%s.idx: %s",
			    prefix, p->w.err);
		ret = -1;
	} else {
		progress_tick(p->prog, p->w.ndocs, p->w.binbytes);
	}
	mmidx_close(&d);
	return ret;
}

char *
pack_prefix(const char *arg)
{
	size_t n = strlen(arg);
	char *p = xstrdup(arg), *idx;
	struct stat st;

	if (n > 4 && (strcmp(arg + n - 4, ".idx") == 0 ||
	    strcmp(arg + n - 4, ".bin") == 0) && stat(arg, &st) == 0) {
		idx = xmalloc(n + 5);
		sprintf(idx, "%s.idx", arg);
		if (stat(idx, &st) != 0)
			p[n - 4] = '\0';
		free(idx);
	}
	return p;
}

int
pack_info(const char *prefix, struct buf *out, char *err, size_t errsize,
    int *code)
{
	struct mmidx_stats st;
	struct mmidx d;
	struct json_w w;

	if (mmidx_open(&d, prefix, err, errsize, code) < 0)
		return -1;
	mmidx_stats(&d, &st);
	json_w_init(&w, out, JSON_COMPACT);
	json_w_obj(&w);
	json_w_kstr(&w, "prefix", prefix);
	json_w_kstr(&w, "dtype", mmidx_dtype_name(d.dtype));
	json_w_kint(&w, "dtype_code", d.dtype);
	json_w_ku64(&w, "sequences", d.nseq);
	json_w_ku64(&w, "documents", d.ndocs);
	json_w_ku64(&w, "tokens", d.ntokens);
	json_w_ku64(&w, "bin_bytes", d.ntokens * d.itemsize);
	json_w_ku64(&w, "idx_bytes",
	    MMIDX_HDRSIZE + 12 * d.nseq + 8 * (d.ndocs + 1));
	json_w_ku64(&w, "empty_sequences", st.empty);
	json_w_ku64(&w, "empty_documents", st.empty_docs);
	json_w_key(&w, "length");
	json_w_obj(&w);
	json_w_ku64(&w, "min", st.min);
	json_w_ku64(&w, "max", st.max);
	json_w_key(&w, "mean");
	json_w_num(&w, "%.2f", st.mean);
	json_w_ku64(&w, "p50", st.p50);
	json_w_ku64(&w, "p90", st.p90);
	json_w_ku64(&w, "p99", st.p99);
	json_w_end(&w);
	json_w_end(&w);
	buf_addc(out, '\n');
	mmidx_close(&d);
	return 0;
}

int
pack_cat(const struct pack_cat *c, const char *prefix, struct buf *out,
    FILE *f, char *err, size_t errsize, int *code)
{
	struct tok_count cnt = { 0 };
	struct tok_hdr h;
	struct mmidx d;
	uint32_t *ids = NULL;
	size_t cap = 0, n, len, i;
	uint64_t k, s, last;
	int ret = -1;

	if (mmidx_open(&d, prefix, err, errsize, code) < 0) {
		out->len = 0;
		return -1;
	}
	tok_hdr_init(&h, c->vocab, c->eod);
	tok_put_hdr(out, &h);
	last = c->last < d.ndocs ? c->last : d.ndocs;
	for (k = c->first; k < last; k++) {
		n = 0;
		for (s = mmidx_doc(&d, k); s < mmidx_doc(&d, k + 1); s++) {
			len = mmidx_len(&d, s);
			if (len > TOK_MAXDOC - n) {
				owt_fail(err, errsize, code, XDATA, "%s.idx: "
				    "document %llu is too long for a token "
				    "stream", prefix, (unsigned long long)k);
				out->len = 0;
				goto out;
			}
			ids = xgrow(ids, &cap, n + len, sizeof *ids);
			mmidx_read(&d, s, 0, len, ids + n);
			n += len;
		}
		for (i = 0; i < n; i++) {
			if (ids[i] >= c->vocab) {
				owt_fail(err, errsize, code, XDATA, "%s.bin: "
				    "token %u in document %llu is outside the "
				    "vocabulary (%u); --vocab sets it", prefix,
				    ids[i], (unsigned long long)k, c->vocab);
				goto out;
			}
		}
		tok_put_doc(out, &h, &cnt, ids, n);
		if (out->len >= (1u << 20)) {
			if (fwrite(out->p, 1, out->len, f) != out->len) {
				owt_fail_errno(err, errsize, code, XSYS,
				    "write error");
				goto out;
			}
			out->len = 0;
		}
	}
	tok_put_end(out, &cnt);
	ret = 0;
out:
	free(ids);
	mmidx_close(&d);
	return ret;
}
