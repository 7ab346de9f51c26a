/* clean.c - owt-dedup's stages: fix, lang, length and sign per document, then exact, near and decontam in order */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text/clean.h"
#include "core/utf8.h"

int
clean_parse_stages(const char *list, int stage[CLEAN_NSTAGES], char *err,
    size_t errsize)
{
	const char *p = list, *e;
	size_t n;
	int i;

	memset(stage, 0, CLEAN_NSTAGES * sizeof *stage);
	if (strcmp(list, "none") == 0)
		return 0;
	while (*p) {
		e = strchr(p, ',');
		n = e ? (size_t)(e - p) : strlen(p);
		for (i = 0; i < CLEAN_NSTAGES; i++)
			if (strlen(clean_stage_name[i]) == n &&
			    strncmp(clean_stage_name[i], p, n) == 0)
				break;
		if (i == CLEAN_NSTAGES) {
			return owt_fail(err, errsize, NULL, XUSAGE,
			    "--stages: unknown stage '%.*s' in "
			    "'%s'", (int)n, p, list);
		}
		stage[i] = 1;
		p += n + (e != NULL);
	}
	for (i = 0; i < CLEAN_NSTAGES && !stage[i]; i++)
		;
	if (i == CLEAN_NSTAGES) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--stages: '%s' names no stage", list);
	}
	return 0;
}

/*
 * What a worker found about the records of a batch, on its way to the
 * calling thread: the loop's record pointers are the program's (the
 * reader gives none), and a worker hangs this on the batch's first.
 */
struct clean_batch {
	struct clean_doc *doc;
	size_t cap;
	struct buf info;	/* the docs' name fields and messages */
	uint32_t *found;	/* their decontam n-grams, in order */
	size_t nfound, foundcap;
	struct clean_batch *next;	/* c->free */
	struct clean_batch *link;	/* c->all */
};

int
clean_start(struct clean *c, char *err, size_t errsize, int *code)
{
	struct buf tmp = { 0 };
	size_t i;

	if (c->stage[CLEAN_FIX])
		textfix_init();
	words_init();
	minhash_init(&c->mh, c->seed);
	c->want[0] = c->text_key;
	c->want[1] = "url";
	c->want[2] = "lang_hint";
	c->nwant = 3;
	if (c->signed_in) {
		memcpy(c->want, signature_want, sizeof signature_want);
		c->nwant = SIGNATURE_NWANT;
	}
	c->file_json = xcalloc(c->nfiles, sizeof *c->file_json);
	for (i = 0; i < c->nfiles; i++) {
		tmp.len = 0;
		json_string(&tmp, c->files[i], strlen(c->files[i]));
		c->file_json[i] = xstrndup(tmp.p, tmp.len);
	}
	buf_free(&tmp);
	c->spool.fd = -1;
	c->report.refs.fd = -1;
	pthread_mutex_init(&c->lock, NULL);
	if (c->stage[CLEAN_EXACT] || c->stage[CLEAN_NEAR])
		c->index = dedup_new((c->stage[CLEAN_EXACT] ? DEDUP_EXACT : 0) |
		    (c->stage[CLEAN_NEAR] ? DEDUP_NEAR : 0));
	if (c->stage[CLEAN_DECONTAM]) {
		c->dc = decontam_new();
		if (decontam_load_tasks(c->dc, c->tasks, c->ntasks, c->text_key,
		    err, errsize, code) < 0)
			return -1;
		if (spill_open(&c->spool, c->tmpdir) < 0)
			return owt_fail(err, errsize, code, XSYS, "%s",
			    c->spool.err);
	}
	return 0;
}

void
clean_end(struct clean *c)
{
	struct clean_batch *cb;
	size_t i;

	for (i = 0; c->file_json != NULL && i < c->nfiles; i++)
		free(c->file_json[i]);
	free(c->file_json);
	dedup_free(c->index);
	decontam_free(c->dc);
	spill_close(&c->spool);
	dedup_report_close(&c->report);
	free(c->kept_line);
	free(c->badline);
	buf_free(&c->line);
	buf_free(&c->name);
	while ((cb = c->all) != NULL) {
		c->all = cb->link;
		free(cb->doc);
		buf_free(&cb->info);
		free(cb->found);
		free(cb);
	}
	pthread_mutex_destroy(&c->lock);
}

struct clean_worker *
clean_worker_new(struct clean *c)
{
	struct clean_worker *w = xcalloc(1, sizeof *w);

	w->c = c;
	json_rec_init(&w->jr, c->want, c->nwant);
	return w;
}

void
clean_worker_free(struct clean_worker *w)
{
	json_rec_free(&w->jr);
	textfix_free(&w->tf);
	buf_free(&w->fixed);
	buf_free(&w->tmp);
	words_free(&w->words);
	decontam_work_free(&w->dw);
	if (w->bpe != NULL)
		bpe_state_free(w->bpe);
	free(w);
}

/* A bad record: its message ("FILE:LINE: what") stands for its name. */
static void
bad(struct clean_doc *d, struct buf *info, int why, const char *file,
    unsigned long lineno, const char *what)
{
	char msg[1024];
	int k;

	k = snprintf(msg, sizeof msg, "%s:%lu: %s", file, lineno, what);
	if (k >= (int)sizeof msg)
		k = sizeof msg - 1;
	d->drop = why;
	d->who = info->len;
	d->wholen = (size_t)k;
	buf_add(info, msg, (size_t)k);
}

void
clean_doc_run(const struct clean *c, struct clean_worker *w,
    const char *file, const char *file_json, unsigned long lineno,
    const char *line, size_t len, struct clean_doc *d, struct buf *out,
    struct buf *info)
{
	const char *text, *why, *url, *hint;
	char err[512], h[16];
	struct json_edit ed;
	uint64_t nh[2];
	size_t n, un, hn, start;
	int e;

	memset(d, 0, sizeof *d);
	d->len = len;
	if ((e = json_rec_parse(&w->jr, line, len, err, sizeof err)) != 0) {
		bad(d, info, e, file, lineno, err);
		return;
	}
	if (c->droplist != NULL && signature_name_hash(&w->jr, nh) &&
	    dedup_find_text(c->droplist, nh) >= 0)
		d->drop = CLEAN_LISTED;
	if (c->signed_in) {
		start = info->len;
		if (signature_read(&w->jr, info, &d->who, &d->wholen, &d->ref,
		    &d->reflen, &d->sig, &w->tmp) < 0) {
			info->len = start;
			d->ref = d->reflen = 0;
			bad(d, info, CLEAN_BADSIG, file, lineno,
			    "bad signature record");
			return;
		}
		d->out = out->len;
		buf_add(out, line, len);
		buf_addc(out, '\n');
		d->outlen = out->len - d->out;
		return;
	}
	if ((text = json_rec_text(&w->jr, c->text_key, &n, err,
	    sizeof err)) == NULL) {
		bad(d, info, BAD_FIELD, file, lineno, err);
		return;
	}
	if (c->rep != NULL || c->sign != NULL) {
		d->who = info->len;
		signature_name(&w->jr, file, file_json, lineno, info, &d->wholen,
		    &d->ref, &d->reflen);
	}
	if (d->drop)
		return;
	if (c->stage[CLEAN_FIX] &&
	    (d->fixes = textfix(&w->tf, text, n, c->fixes, &w->fixed)) != 0) {
		text = w->fixed.p;
		n = w->fixed.len;
	}
	if (c->stage[CLEAN_LANG]) {
		/* owt-fetch's lang_hint: what the page declares (langid.h). */
		hint = json_rec_str(&w->jr, "lang_hint", &hn, &why);
		snprintf(h, sizeof h, "%.*s", hint && hn < sizeof h ? (int)hn : 0,
		    hint ? hint : "");
		langid_detect_hint(text, n, h[0] ? h : NULL, &d->lang);
		if (strcmp(d->lang.code, c->lang) != 0) {
			d->drop = strcmp(d->lang.code, "un") == 0 ? CLEAN_NOLANG :
			    CLEAN_OTHERLANG;
			return;
		}
	}
	if (c->stage[CLEAN_LENGTH]) {
		d->chars = utf8_count(text, n);
		if (c->vocab != NULL && d->chars < 8 * c->min_tokens) {
			/* a 2 MB cache: owt-dedup(1), "Memory" */
			if (w->bpe == NULL)
				w->bpe = bpe_state_new(c->vocab, (size_t)2 << 20);
			d->tokens = bpe_count(w->bpe, text, n) + 1;
		}
		if (d->chars < c->min_chars ||
		    (d->tokens > 0 && d->tokens < c->min_tokens)) {
			d->drop = CLEAN_SHORT;
			return;
		}
	}
	if (c->stage[CLEAN_EXACT] || c->stage[CLEAN_NEAR] || c->sign != NULL) {
		url = json_rec_str(&w->jr, "url", &un, &why);
		dedup_sign(&c->mh, text, n, url, un, c->stage[CLEAN_NEAR] ||
		    c->sign != NULL ? &w->words : NULL, &d->sig);
	}
	if (c->stage[CLEAN_DECONTAM])
		d->nfound = decontam_scan(c->dc, text, n, &w->dw);
	d->out = out->len;
	if (d->fixes) {
		w->tmp.len = 0;
		json_string(&w->tmp, text, n);
		ed.key = c->text_key;
		ed.json = w->tmp.p;
		ed.len = w->tmp.len;
		json_rec_write(out, &w->jr, &ed, 1);
	} else {
		buf_add(out, line, len);
		buf_addc(out, '\n');
	}
	d->outlen = out->len - d->out;
}

/* The first error stops the run. */
static int
fail(struct clean *c, const char *err, int code)
{
	if (c->errcode == 0)
		owt_fail(c->err, sizeof c->err, &c->errcode, code, "%s", err);
	return -1;
}

static int
fail_errno(struct clean *c, const char *name)
{
	char err[OWT_ERRSIZE];

	owt_fail_errno(err, sizeof err, NULL, XSYS, "cannot write '%s'", name);
	return fail(c, err, XSYS);
}

int
clean_order(struct clean *c, struct clean_doc *d, const char *info,
    const uint32_t *found, const char *line, int file, unsigned long lineno,
    struct buf *rep)
{
	static const int dup[] = { [DEDUP_SAME_TEXT] = CLEAN_DUPTEXT,
		[DEDUP_SAME_URL] = CLEAN_DUPURL, [DEDUP_SIMILAR] = CLEAN_DUPNEAR };
	char err[1024];
	long kept = -1;
	double sim = -1;
	int f, k, code;

	c->nin++;
	c->nbytes += d->len + 1;
	if (d->fixes) {
		c->nfixed++;
		for (f = 0; f < TF_NFIXES; f++)
			c->fixcount[f].n += d->fixes >> f & 1;
		if (c->rep != NULL)
			dedup_report_fixed(rep, info + d->who, d->wholen, d->fixes);
	}
	if (!d->drop && c->index != NULL &&
	    (k = dedup_check(c->index, &d->sig, c->near, &kept, &sim)) !=
	    DEDUP_NEW)
		d->drop = dup[k];
	if (d->drop) {
		c->count[d->drop].n++;
		if (c->rep != NULL && dedup_report_drop(&c->report, rep, d,
		    info + d->who, c->file_json[file], lineno, kept, sim, err,
		    sizeof err, &code) < 0)
			return fail(c, err, code);
		return 0;
	}
	if (c->index != NULL)
		dedup_add(c->index, &d->sig);
	if (c->rep != NULL && dedup_report_keep(&c->report, info + d->ref,
	    d->reflen, err, sizeof err, &code) < 0)
		return fail(c, err, code);
	if (c->stage[CLEAN_DECONTAM]) {
		decontam_count(c->dc, found, d->nfound);
		if (c->nkept == c->keptcap)
			c->kept_line = xgrow(c->kept_line, &c->keptcap, c->nkept + 1,
			    sizeof *c->kept_line);
		c->kept_line[c->nkept++] = (uint64_t)file << 40 | lineno;
	}
	if (c->sign != NULL) {
		c->line.len = 0;
		signature_write(&c->line, info + d->who, d->wholen, &d->sig);
		if (fwrite(c->line.p, 1, c->line.len, c->sign) != c->line.len)
			return fail_errno(c, c->signname);
	}
	c->nout++;
	if (!c->stage[CLEAN_DECONTAM])
		return 1;
	if (spill_put(&c->spool, line, d->outlen) < 0)
		return fail(c, c->spool.err, XSYS);
	return 0;
}

/* The index of input name (one of c->files). */
static int
file_index(const struct clean *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nfiles; i++)
		if (c->files[i] == name)
			return (int)i;
	owt_fatal("clean: '%s' is not an input: a bug", name);
}

void *
clean_batch_init(void *c)
{
	return clean_worker_new(c);
}

void
clean_batch_fini(void *w)
{
	clean_worker_free(w);
}

void
clean_batch_work(struct batch *b, void *state)
{
	struct clean_worker *w = state;
	struct clean *c = w->c;
	struct clean_batch *cb;
	struct clean_doc *d;
	const char *file_json;
	size_t i;

	if (b->nline == 0)
		return;
	pthread_mutex_lock(&c->lock);
	if ((cb = c->free) != NULL) {
		c->free = cb->next;
	} else {
		cb = xcalloc(1, sizeof *cb);
		cb->link = c->all;
		c->all = cb;
	}
	pthread_mutex_unlock(&c->lock);
	if (b->nline > cb->cap)
		cb->doc = xgrow(cb->doc, &cb->cap, b->nline, sizeof *cb->doc);
	cb->info.len = 0;
	cb->nfound = 0;
	file_json = c->file_json[file_index(c, b->name)];
	for (i = 0; i < b->nline; i++) {
		d = &cb->doc[i];
		clean_doc_run(c, w, b->name, file_json, b->lineno[i],
		    b->in.p + b->off[i], b->off[i + 1] - b->off[i] - 1, d, &b->out,
		    &cb->info);
		if (d->drop > CLEAN_KEPT && d->drop <= CLEAN_BADSIG)
			batch_note(b, d->drop, "%.*s", (int)d->wholen,
			    cb->info.p + d->who);
		if (d->nfound > 0) {
			if (cb->nfound + d->nfound > cb->foundcap)
				cb->found = xgrow(cb->found, &cb->foundcap,
				    cb->nfound + d->nfound, sizeof *cb->found);
			memcpy(cb->found + cb->nfound, w->dw.found,
			    d->nfound * sizeof *cb->found);
			cb->nfound += d->nfound;
		}
	}
	b->user[0] = cb;
}

/* A batch of batch_bad's: each note is a file or line clean_read could not read. */
static void
unreadable(struct clean *c, struct batch *b)
{
	struct clean_doc d;
	size_t i;
	int file = file_index(c, b->name);

	for (i = 0; i < b->nnote; i++) {
		memset(&d, 0, sizeof d);
		d.drop = b->note[i].reason;
		d.wholen = strlen(b->note[i].msg);
		b->note[i].outpos = 0;
		b->note[i].reppos = b->rep.len;
		if (clean_order(c, &d, b->note[i].msg, NULL, NULL, file,
		    c->badline[c->badhead++], &b->rep) < 0)
			break;
	}
	if (c->badhead == c->nbad)
		c->badhead = c->nbad = 0;
}

void
clean_batch_done(struct batch *b, void *arg)
{
	struct clean *c = arg;
	struct clean_batch *cb = b->nline > 0 ? b->user[0] : NULL;
	struct clean_doc *d;
	size_t i, k = 0, outlen = 0, found = 0;
	int file, r = 0, isbad;

	if (c->errcode == 0 && cb == NULL)
		unreadable(c, b);
	file = c->errcode == 0 ? file_index(c, b->name) : 0;
	for (i = 0; cb != NULL && i < b->nline && c->errcode == 0; i++) {
		d = &cb->doc[i];
		if ((isbad = d->drop > CLEAN_KEPT && d->drop <= CLEAN_BADSIG)) {
			b->note[k].outpos = outlen;
			b->note[k++].reppos = b->rep.len;
		}
		r = clean_order(c, d, cb->info.p, cb->found + found,
		    b->out.p + d->out, file, b->lineno[i], &b->rep);
		found += d->nfound;
		if (r == 1) {
			if (d->out != outlen)
				memmove(b->out.p + outlen, b->out.p + d->out,
				    d->outlen);
			outlen += d->outlen;
		}
		/* Without -k the loop stops at the bad record: so does c. */
		if (isbad && !b->opts->keep_going)
			break;
	}
	if (c->errcode != 0) {
		/* What the error came after is written; nothing more, no warning. */
		for (i = k; i < b->nnote; i++)
			free(b->note[i].msg);
		b->nnote = k;
		if (cb == NULL)
			b->rep.len = 0;
	}
	if (cb != NULL) {
		b->out.len = outlen;
		pthread_mutex_lock(&c->lock);
		cb->next = c->free;
		c->free = cb;
		pthread_mutex_unlock(&c->lock);
	}
	if (c->prog != NULL)
		progress_tick(c->prog, c->nin, c->nbytes);
}

/* A file or line that cannot be read, in order. */
static int
read_bad(struct clean *c, struct batch_loop *l, const char *name,
    unsigned long lineno, int reason, const char *msg)
{
	if (c->nbad == c->badcap)
		c->badline = xgrow(c->badline, &c->badcap, c->nbad + 1,
		    sizeof *c->badline);
	c->badline[c->nbad++] = lineno;
	return batch_bad(l, name, reason, msg);
}

int
clean_read(struct clean *c, struct batch_loop *l, int file, char *err,
    size_t errsize, int *code)
{
	const char *name = c->files[file];
	struct input in;
	char *line;
	size_t len;
	int k, stop = 0;

	if (input_open(&in, strcmp(name, "<stdin>") == 0 ? "-" : name) < 0)
		return read_bad(c, l, name, 0, in.reason, in.err) || c->errcode;
	while (!stop && c->errcode == 0 &&
	    (k = input_line(&in, &line, &len)) != 0) {
		if (k < 0 && in.errcode == XSYS) {
			owt_fail(err, errsize, code, XSYS, "%s", in.err);
			input_close(&in);
			return -1;
		}
		if (k < 0) {
			stop = read_bad(c, l, name, in.lineno, in.reason, in.err);
			if (in.reason == BAD_COMPRESSED)
				break;
			continue;
		}
		stop = batch_add(l, name, in.lineno, line, len, NULL);
		input_trim(&in);
	}
	input_close(&in);
	return stop || c->errcode != 0;
}

/* Pass 2's report line of document k, where it was cut or dropped. */
static int
decontam_each(void *arg, size_t k, const struct json_rec *jr, int verdict,
    const struct decontam_work *w, char *err, size_t errsize, int *code)
{
	struct clean *c = arg;
	int file = (int)(c->kept_line[k] >> 40);
	size_t wholen, ref, reflen;

	if (c->rep == NULL || (verdict == DECONTAM_KEEP && w->matches == 0))
		return 0;
	c->name.len = 0;
	signature_name(jr, c->files[file], c->file_json[file],
	    (unsigned long)(c->kept_line[k] & ((1ULL << 40) - 1)), &c->name,
	    &wholen, &ref, &reflen);
	dedup_report_decontam(&c->line, c->name.p, wholen,
	    verdict == DECONTAM_EMPTY ? clean_reason[CLEAN_EMPTY].name :
	    verdict == DECONTAM_TOOMANY ? clean_reason[CLEAN_PIECES].name :
	    "cut", w->matches, w->npiece);
	if (c->line.len >= (1u << 20)) {
		if (fwrite(c->line.p, 1, c->line.len, c->rep) != c->line.len)
			return owt_fail_errno(err, errsize, code, XSYS,
			    "cannot write '%s'", c->repname);
		c->line.len = 0;
	}
	return 0;
}

int
clean_finish(struct clean *c, FILE *out, char *err, size_t errsize,
    int *code)
{
	struct buf prefix = { 0 };
	int r;

	if (!c->stage[CLEAN_DECONTAM])
		return 0;
	decontam_prefix(c->tasks, c->ntasks, &prefix);
	c->pass2.key = c->text_key;
	c->pass2.prefix = prefix.p ? prefix.p : "";
	c->pass2.out = out;
	c->pass2.each = decontam_each;
	c->pass2.arg = c;
	c->line.len = 0;
	r = decontam_pass2(c->dc, &c->spool, &c->pass2, err, errsize, code);
	buf_free(&prefix);
	c->count[CLEAN_EMPTY].n += c->pass2.ndrop[DECONTAM_EMPTY];
	c->count[CLEAN_PIECES].n += c->pass2.ndrop[DECONTAM_TOOMANY];
	c->nout = c->pass2.npieces;
	if (r == 0 && c->rep != NULL && c->line.len > 0 &&
	    fwrite(c->line.p, 1, c->line.len, c->rep) != c->line.len) {
		owt_fail_errno(err, errsize, code, XSYS,
		    "cannot write '%s'", c->repname);
		r = -1;
	}
	c->line.len = 0;
	return r;
}
