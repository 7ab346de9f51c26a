/* merge.c - jsonl-merge's records: text and JSONL files and directories into one stream */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/jsonl.h"
#include "core/utf8.h"
#include "merge/merge.h"
#include "merge/walk.h"

void
merge_init(struct merge *m, const struct merge_opts *o, struct progress *prog,
    FILE *f)
{
	size_t i;

	memset(m, 0, sizeof *m);
	m->o = *o;
	m->prog = prog;
	m->f = f;
	for (i = 1; i < MERGE_NCOUNT; i++)
		m->count[i].name = i < BAD_NREASONS ? input_bad_name[i] :
		    "empty file";
	json_rec_init(&m->outrec, NULL, 0);
	/* The prefix as a JSON string less its closing quote: an id adds -N". */
	if (o->id_prefix != NULL) {
		json_string(&m->id, o->id_prefix, strlen(o->id_prefix));
		m->idlen = --m->id.len;
	}
	if (o->shuffle)
		shuffle_init(&m->shuf, o->seed, o->memory, o->tmpdir);
}

void
merge_free(struct merge *m)
{
	if (m->o.shuffle)
		shuffle_free(&m->shuf);
	json_rec_free(&m->outrec);
	buf_free(&m->out);
	buf_free(&m->id);
}

/* A bad record or file: report it, count it; 1 to stop unless keep_going. */
static int
bad(struct merge *m, int reason, const char *msg)
{
	owt_warn("%s", msg);
	m->count[reason].n++;
	m->status = XDATA;
	return m->o.keep_going ? 0 : 1;
}

static int
flush_out(struct merge *m, int force)
{
	if (m->out.len >= (1u << 20) || (force && m->out.len > 0)) {
		if (fwrite(m->out.p, 1, m->out.len, m->f) != m->out.len)
			return owt_fail_errno(m->err, sizeof m->err,
			    &m->errcode, XSYS, "write error");
		m->out.len = 0;
	}
	return 0;
}

/*
 * Write one validated record (a JSONL line without '\n'), adding the id;
 * r is the line parsed, or NULL (a shuffled line).
 */
static int
emit(struct merge *m, const struct json_rec *r, const char *line, size_t len)
{
	struct json_edit ed;
	char err[256], num[32];

	m->nout++;
	if (m->o.id_prefix == NULL) {
		buf_add(&m->out, line, len);
		buf_addc(&m->out, '\n');
	} else {
		if (r == NULL) {
			if (json_rec_parse(&m->outrec, line, len, err,
			    sizeof err) != 0)
				return owt_fail(m->err, sizeof m->err,
				    &m->errcode, XSYS,
				    "shuffled record unreadable: %s", err);
			r = &m->outrec;
		}
		m->id.len = m->idlen;
		snprintf(num, sizeof num, "-%010llu\"", m->nout);
		buf_adds(&m->id, num);
		ed.key = "adlr_id";
		ed.json = m->id.p;
		ed.len = m->id.len;
		json_rec_write(&m->out, r, &ed, 1);
	}
	return flush_out(m, 0);
}

static int
emit_shuffled(void *arg, const char *line, size_t len)
{
	return emit(arg, NULL, line, len);
}

static int
record(struct merge *m, const struct json_rec *r)
{
	m->nin++;
	if (!m->o.shuffle)
		return emit(m, r, r->line, r->len);
	if (shuffle_add(&m->shuf, r->line, r->len) < 0)
		return owt_fail(m->err, sizeof m->err, &m->errcode, XSYS, "%s",
		    m->shuf.err);
	return 0;
}

static int
do_jsonl(struct merge *m, const char *path)
{
	static const char *const want[] = { NULL };
	const struct json_field *f;
	struct json_rec *r;
	struct jsonl j;
	char msg[1024], why[256];
	int k, ret = 0;

	if (jsonl_open(&j, path, want, 0) < 0)
		return bad(m, j.reason, j.err);
	m->nfiles++;
	for (;;) {
		k = jsonl_next(&j, &r);
		if (k == 0)
			break;
		if (k < 0) {
			if (j.errcode == XSYS) {
				ret = owt_fail(m->err, sizeof m->err,
				    &m->errcode, XSYS, "%s", j.err);
				goto out;
			}
			if ((ret = bad(m, j.reason, j.err)) != 0)
				goto out;
			if (j.reason == BAD_COMPRESSED)
				break;
			continue;
		}
		m->nbytes += r->len + 1;
		f = json_rec_get(r, m->o.text_key);
		if (f == NULL || f->type != JV_STRING) {
			json_field_bad(why, sizeof why, f, m->o.text_key);
			snprintf(msg, sizeof msg, "%s:%lu: %s", j.in.name,
			    j.in.lineno, why);
			if ((ret = bad(m, BAD_FIELD, msg)) != 0)
				goto out;
			continue;
		}
		if ((ret = record(m, r)) != 0)
			goto out;
		progress_tick(m->prog, m->nin, m->nbytes);
	}
	if (j.in.lineno == 0) {
		snprintf(msg, sizeof msg, "%s: empty file", j.in.name);
		ret = bad(m, MERGE_EMPTYFILE, msg);
	}
out:
	jsonl_close(&j);
	return ret;
}

/* A .txt file becomes one record: {"text": content, "src": path}. */
static int
do_text(struct merge *m, const char *path)
{
	static const char *const want[] = { NULL };
	struct input in;
	struct buf text = { 0 }, line = { 0 };
	struct json_rec r;
	struct json_w w;
	char msg[1024], err[256];
	size_t badat, i;
	unsigned long lineno = 1;
	int ret = 0;

	if (input_open(&in, path) < 0)
		return bad(m, in.reason, in.err);
	m->nfiles++;
	if (input_slurp(&in, &text, in.maxline) < 0) {
		if (in.errcode == XSYS)
			ret = owt_fail(m->err, sizeof m->err, &m->errcode,
			    XSYS, "%s", in.err);
		else
			ret = bad(m, in.reason, in.err);
		goto done;
	}
	if (text.len == 0) {
		snprintf(msg, sizeof msg, "%s: empty file", in.name);
		ret = bad(m, MERGE_EMPTYFILE, msg);
		goto done;
	}
	if ((badat = utf8_valid(text.p, text.len)) != text.len) {
		for (i = 0; i < badat; i++)
			lineno += text.p[i] == '\n';
		snprintf(msg, sizeof msg, "%s:%lu: invalid UTF-8 at byte %zu",
		    in.name, lineno, badat + 1);
		ret = bad(m, BAD_UTF8, msg);
		goto done;
	}
	m->nbytes += text.len;
	json_w_init(&w, &line, JSON_COMPACT);
	json_w_obj(&w);
	json_w_key(&w, m->o.text_key);
	json_w_str(&w, text.p, text.len);
	json_w_kstr(&w, "src", path);
	json_w_end(&w);
	json_rec_init(&r, want, 0);
	if (json_rec_parse(&r, line.p, line.len, err, sizeof err) != 0)
		ret = owt_fail(m->err, sizeof m->err, &m->errcode, XSYS,
		    "%s: cannot make a record: %s", path, err);
	else
		ret = record(m, &r);
	json_rec_free(&r);
	if (ret == 0)
		progress_tick(m->prog, m->nin, m->nbytes);
done:
	input_close(&in);
	buf_free(&text);
	buf_free(&line);
	return ret;
}

/* The file name without .gz or .zst ends with ext. */
static int
has_ext(const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(ext);

	if (n > 3 && strcmp(path + n - 3, ".gz") == 0)
		n -= 3;
	else if (n > 4 && strcmp(path + n - 4, ".zst") == 0)
		n -= 4;
	return n > e && strncmp(path + n - e, ext, e) == 0;
}

static int
visit(void *arg, const char *path, int errnum)
{
	struct merge *m = arg;
	char msg[1024];

	if (errnum != 0) {
		snprintf(msg, sizeof msg, "cannot read '%s': %s", path,
		    strerror(errnum));
		return bad(m, BAD_OPEN, msg);
	}
	if (has_ext(path, ".txt"))
		return do_text(m, path);
	if (has_ext(path, ".jsonl") || has_ext(path, ".json"))
		return do_jsonl(m, path);
	m->nignored++;
	return 0;
}

int
merge_operand(struct merge *m, const char *path)
{
	struct stat st;

	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return walk_dir(path, visit, m);
	if (has_ext(path, ".txt"))
		return do_text(m, path);
	return do_jsonl(m, path);
}

int
merge_finish(struct merge *m)
{
	if (m->o.shuffle && shuffle_finish(&m->shuf, emit_shuffled, m) != 0) {
		/* emit's own error, else the shuffle's */
		if (m->errcode == 0)
			owt_fail(m->err, sizeof m->err, &m->errcode, XSYS,
			    "%s", m->shuf.err);
		return -1;
	}
	return flush_out(m, 1);
}
