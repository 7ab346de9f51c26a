/* shuffle.c - a seeded shuffle of records that may not fit in memory */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "merge/shuffle.h"
#include "core/util.h"

/* Runs merged into one when this many are open, to stay under fd limits. */
#define MAXRUNS 256

struct shuffle_rec {
	uint64_t key;
	size_t off;
	size_t len;
};

void
shuffle_init(struct shuffle *s, uint64_t seed, size_t mem, const char *tmpdir)
{
	memset(s, 0, sizeof *s);
	s->base = owt_mix64(seed);
	s->mem = mem;
	s->tmpdir = tmpdir;
}

static int
cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct shuffle_rec *)a)->key;
	uint64_t y = ((const struct shuffle_rec *)b)->key;

	return x < y ? -1 : x > y;
}

static FILE *
newrun(struct shuffle *s)
{
	char *path;
	FILE *fp;
	int fd;
	size_t n = strlen(s->tmpdir) + 32;

	path = xmalloc(n);
	snprintf(path, n, "%s/owt-shuffle.XXXXXX", s->tmpdir);
	fd = mkstemp(path);
	if (fd < 0) {
		owt_fail_errno(s->err, sizeof s->err, &s->errcode, XSYS,
		    "cannot create a temporary file in '%s'", s->tmpdir);
		free(path);
		return NULL;
	}
	unlink(path);
	free(path);
	if ((fp = fdopen(fd, "w+")) == NULL) {
		close(fd);
		owt_fail_errno(s->err, sizeof s->err, &s->errcode, XSYS, "fdopen");
		return NULL;
	}
	setvbuf(fp, NULL, _IOFBF, 1 << 16);
	return fp;
}

static int
put(struct shuffle *s, FILE *fp, uint64_t key, const char *p, size_t len)
{
	uint64_t n = len;

	if (fwrite(&key, 8, 1, fp) != 1 || fwrite(&n, 8, 1, fp) != 1 ||
	    fwrite(p, 1, len, fp) != len) {
		owt_fail_errno(s->err, sizeof s->err, &s->errcode, XSYS,
		    "cannot write a temporary file in '%s'", s->tmpdir);
		return -1;
	}
	return 0;
}

/* One record of a run: 1, 0 at its end, -1 on a read error. */
static int
get(FILE *fp, uint64_t *key, struct buf *b)
{
	uint64_t n;

	if (fread(key, 8, 1, fp) != 1)
		return ferror(fp) ? -1 : 0;
	if (fread(&n, 8, 1, fp) != 1)
		return -1;
	b->len = 0;
	buf_reserve(b, (size_t)n);
	if (fread(b->p, 1, (size_t)n, fp) != n)
		return -1;
	b->len = (size_t)n;
	return 1;
}

/* The merge of the runs, smallest key first, through a binary heap. */
struct merge {
	FILE **fp;
	struct buf *cur;
	uint64_t *key;
	size_t *heap, n;
};

static int
less(const struct merge *m, size_t a, size_t b)
{
	return m->key[a] < m->key[b];
}

static void
sift(struct merge *m, size_t i)
{
	size_t c, t;

	for (;;) {
		c = 2 * i + 1;
		if (c >= m->n)
			break;
		if (c + 1 < m->n && less(m, m->heap[c + 1], m->heap[c]))
			c++;
		if (!less(m, m->heap[c], m->heap[i]))
			break;
		t = m->heap[c];
		m->heap[c] = m->heap[i];
		m->heap[i] = t;
		i = c;
	}
}

static int
merge_runs(struct shuffle *s, FILE **runs, size_t nruns,
    int (*out)(void *, uint64_t, const char *, size_t), void *arg)
{
	struct merge m;
	size_t i, top;
	int r = 0, g;

	m.fp = runs;
	m.cur = xcalloc(nruns, sizeof *m.cur);
	m.key = xcalloc(nruns, sizeof *m.key);
	m.heap = xcalloc(nruns, sizeof *m.heap);
	m.n = 0;
	for (i = 0; i < nruns; i++) {
		rewind(runs[i]);
		g = get(runs[i], &m.key[i], &m.cur[i]);
		if (g < 0)
			goto readerr;
		if (g > 0)
			m.heap[m.n++] = i;
	}
	for (i = m.n / 2; i-- > 0;)
		sift(&m, i);
	while (m.n > 0) {
		top = m.heap[0];
		r = out(arg, m.key[top], m.cur[top].p, m.cur[top].len);
		if (r != 0)
			goto done;
		g = get(runs[top], &m.key[top], &m.cur[top]);
		if (g < 0)
			goto readerr;
		if (g == 0)
			m.heap[0] = m.heap[--m.n];
		sift(&m, 0);
	}
	goto done;
readerr:
	if (errno == 0)
		errno = EIO;
	owt_fail_errno(s->err, sizeof s->err, &s->errcode, XSYS,
	    "cannot read a temporary file");
	r = -1;
done:
	for (i = 0; i < nruns; i++)
		buf_free(&m.cur[i]);
	free(m.cur);
	free(m.key);
	free(m.heap);
	return r;
}

static int
to_run(void *arg, uint64_t key, const char *p, size_t len)
{
	struct shuffle *s = arg;

	return put(s, s->runs[s->nruns], key, p, len);
}

/* Sort the records in memory and write them as a new run. */
static int
spill(struct shuffle *s)
{
	FILE *fp;
	size_t i;

	if (s->nruns + 1 >= MAXRUNS) {
		/* Merge the open runs into one; keys keep the order. */
		s->runs = xgrow(s->runs, &s->runcap, s->nruns + 1, sizeof *s->runs);
		if ((s->runs[s->nruns] = newrun(s)) == NULL)
			return -1;
		if (merge_runs(s, s->runs, s->nruns, to_run, s) != 0)
			return -1;
		for (i = 0; i < s->nruns; i++)
			fclose(s->runs[i]);
		s->runs[0] = s->runs[s->nruns];
		s->nruns = 1;
	}
	qsort(s->recs, s->n, sizeof *s->recs, cmp);
	if ((fp = newrun(s)) == NULL)
		return -1;
	for (i = 0; i < s->n; i++)
		if (put(s, fp, s->recs[i].key, s->arena + s->recs[i].off,
		    s->recs[i].len) < 0) {
			fclose(fp);
			return -1;
		}
	if (fflush(fp) != 0) {
		owt_fail_errno(s->err, sizeof s->err, &s->errcode, XSYS,
		    "cannot write a temporary file in '%s'", s->tmpdir);
		fclose(fp);
		return -1;
	}
	s->runs = xgrow(s->runs, &s->runcap, s->nruns + 1, sizeof *s->runs);
	s->runs[s->nruns++] = fp;
	s->n = 0;
	s->alen = 0;
	return 0;
}

int
shuffle_add(struct shuffle *s, const char *rec, size_t len)
{
	if (s->n > 0 && s->alen + len + (s->n + 1) * sizeof *s->recs > s->mem)
		if (spill(s) < 0)
			return -1;
	if (s->alen + len > s->acap) {
		/* Double, but not past the memory limit unless one record is. */
		s->acap = s->acap * 2 < s->mem ? s->acap * 2 : s->mem;
		if (s->acap < s->alen + len)
			s->acap = s->alen + len;
		s->arena = xrealloc(s->arena, s->acap);
	}
	s->recs = xgrow(s->recs, &s->cap, s->n + 1, sizeof *s->recs);
	memcpy(s->arena + s->alen, rec, len);
	s->recs[s->n].key = owt_mix64(s->base + s->count++);
	s->recs[s->n].off = s->alen;
	s->recs[s->n].len = len;
	s->alen += len;
	s->n++;
	return 0;
}

struct outarg {
	int (*out)(void *, const char *, size_t);
	void *arg;
};

static int
to_out(void *arg, uint64_t key, const char *p, size_t len)
{
	struct outarg *o = arg;

	(void)key;
	return o->out(o->arg, p, len);
}

int
shuffle_finish(struct shuffle *s, int (*out)(void *, const char *, size_t),
    void *arg)
{
	struct outarg o = { out, arg };
	size_t i;
	int r;

	if (s->nruns == 0) {
		qsort(s->recs, s->n, sizeof *s->recs, cmp);
		for (i = 0; i < s->n; i++)
			if ((r = out(arg, s->arena + s->recs[i].off,
			    s->recs[i].len)) != 0)
				return r;
		return 0;
	}
	if (s->n > 0 && spill(s) < 0)
		return -1;
	return merge_runs(s, s->runs, s->nruns, to_out, &o);
}

void
shuffle_free(struct shuffle *s)
{
	size_t i;

	for (i = 0; i < s->nruns; i++)
		fclose(s->runs[i]);
	free(s->runs);
	free(s->arena);
	free(s->recs);
	memset(s, 0, sizeof *s);
}
