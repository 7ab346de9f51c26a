/* spm.c - spm.h's functions: the plugin lib/owt/spm.so loaded once, its answers made owt's */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/buf.h"
#include "core/plugin.h"
#include "core/util.h"
#include "tok/spm.h"

static const struct spm_ops *ops;
static char failed[OWT_ERRSIZE];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Load the plugin, or say why not in failed[]. */
static void
open_plugin(void)
{
	char path[4200];
	spm_ops_fn *get;
	void *h;

	plugin_path("spm.so", "OWT_SPM_PLUGIN", path, sizeof path);
	/* NODELETE: libstdc++ registers exit handlers */
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)) == NULL)
		snprintf(failed, sizeof failed, "%s", dlerror());
	else if ((get = (spm_ops_fn *)dlsym(h, "owt_spm_ops")) == NULL ||
	    (ops = get()) == NULL || ops->abi != SPM_ABI) {
		ops = NULL;
		snprintf(failed, sizeof failed, "'%.800s' is not this build's "
		    "SentencePiece plugin (rebuild owt)", path);
	}
}

struct spm *
spm_load(const char *path, char *err, size_t errsize, int *code)
{
	struct spm *m;
	int why = 0;

	pthread_once(&once, open_plugin);
	if (ops == NULL) {
		owt_fail(err, errsize, code, XUSAGE, "%s: SentencePiece models "
		    "need owt's plugin lib/owt/spm.so, built where Debian's "
		    "libsentencepiece-dev is installed: %s", path, failed);
		return NULL;
	}
	if ((m = ops->load(path, &why)) != NULL)
		return m;
	/* a missing model is bad input (exit 1), as a missing rank file is */
	if (why == SPM_NOFILE)
		owt_fail_errno(err, errsize, code, XDATA, "cannot open '%s'",
		    path);
	else if (why == SPM_NOMEM)
		owt_fatal("out of memory");
	else
		owt_fail(err, errsize, code, XDATA, "%s: not a SentencePiece "
		    "model", path);
	return NULL;
}

/* Models are made only by spm_load: ops is set wherever there is one. */
void
spm_free(struct spm *m)
{
	if (m != NULL)
		ops->free(m);
}

uint32_t
spm_npieces(const struct spm *m)
{
	return ops->npieces(m);
}

int32_t
spm_bos(const struct spm *m)
{
	return ops->bos(m);
}

int32_t
spm_eos(const struct spm *m)
{
	return ops->eos(m);
}

int32_t
spm_pad(const struct spm *m)
{
	return ops->pad(m);
}

int32_t
spm_unk(const struct spm *m)
{
	return ops->unk(m);
}

const char *
spm_piece(const struct spm *m, uint32_t id)
{
	return ops->piece(m, id);
}

int32_t
spm_piece_id(const struct spm *m, const char *p, size_t n)
{
	return ops->piece_id(m, p, n);
}

struct ids {
	uint32_t **v;
	size_t *n, *cap, added;
};

static void
put_ids(void *arg, const int *id, size_t n)
{
	struct ids *a = arg;
	size_t i;

	if (*a->n + n > *a->cap)
		*a->v = xgrow(*a->v, a->cap, *a->n + n, sizeof **a->v);
	for (i = 0; i < n; i++)
		(*a->v)[(*a->n)++] = (uint32_t)id[i];
	a->added = n;
}

size_t
spm_encode(const struct spm *m, const char *text, size_t len, uint32_t **ids,
    size_t *n, size_t *cap)
{
	struct ids a = { ids, n, cap, 0 };

	return ops->encode(m, text, len, put_ids, &a) < 0 ? 0 : a.added;
}

static void
put_text(void *arg, const char *s, size_t n)
{
	buf_add(arg, s, n);
}

size_t
spm_decode(const struct spm *m, const uint32_t *ids, size_t n, struct buf *out)
{
	int *v = xmalloc((n > 0 ? n : 1) * sizeof *v);
	uint32_t np = ops->npieces(m);
	size_t i;

	for (i = 0; i < n; i++) {
		if (ids[i] >= np) {
			free(v);
			return i;
		}
		v[i] = (int)ids[i];
	}
	if (ops->decode(m, v, n, put_text, out) < 0)
		owt_fatal("spm_decode: ids below the number of pieces refused");
	free(v);
	return n;
}
