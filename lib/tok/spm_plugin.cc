/* spm_plugin.cc - the plugin lib/owt/spm.so: Debian's libsentencepiece behind spm.h's struct spm_ops */
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include <sentencepiece_processor.h>

#include "tok/spm.h"

/*
 * Built apart from libowt (Makefile: $(B)/lib/owt/spm.so) and linked with
 * -z defs: nothing here calls the program; spm.c turns the codes into
 * messages.
 */
struct spm {
	sentencepiece::SentencePieceProcessor sp;
};

static struct spm *
load(const char *path, int *why)
{
	FILE *f;
	struct spm *m;

	/* The library's own message for a missing file names no errno. */
	if ((f = std::fopen(path, "rb")) == NULL) {
		*why = SPM_NOFILE;
		return NULL;
	}
	std::fclose(f);
	if ((m = new (std::nothrow) spm) == NULL) {
		*why = SPM_NOMEM;
		return NULL;
	}
	if (!m->sp.Load(path).ok()) {
		delete m;
		*why = SPM_NOTMODEL;
		return NULL;
	}
	return m;
}

static void
spm_delete(struct spm *m)
{
	delete m;
}

static uint32_t
npieces(const struct spm *m)
{
	return (uint32_t)m->sp.GetPieceSize();
}

static int32_t bos(const struct spm *m) { return m->sp.bos_id(); }
static int32_t eos(const struct spm *m) { return m->sp.eos_id(); }
static int32_t pad(const struct spm *m) { return m->sp.pad_id(); }
static int32_t unk(const struct spm *m) { return m->sp.unk_id(); }

static const char *
piece(const struct spm *m, uint32_t id)
{
	return m->sp.IdToPiece((int)id).c_str();
}

static int32_t
piece_id(const struct spm *m, const char *p, size_t n)
{
	/* PieceToId answers the unk id for a piece it does not hold. */
	int id = m->sp.PieceToId(absl::string_view(p, n));

	if (id < 0 || m->sp.IdToPiece(id) != std::string(p, n))
		return -1;
	return id;
}

static int
encode(const struct spm *m, const char *text, size_t len,
    void (*put)(void *arg, const int *ids, size_t n), void *arg)
{
	std::vector<int> v;

	if (!m->sp.Encode(absl::string_view(text, len), &v).ok())
		return -1;
	put(arg, v.data(), v.size());
	return 0;
}

static int
decode(const struct spm *m, const int *ids, size_t n,
    void (*put)(void *arg, const char *s, size_t n), void *arg)
{
	std::vector<int> v(ids, ids + n);
	std::string s;

	if (!m->sp.Decode(v, &s).ok())
		return -1;
	put(arg, s.data(), s.size());
	return 0;
}

static const struct spm_ops ops = {
	SPM_ABI, load, spm_delete, npieces, bos, eos, pad, unk, piece,
	piece_id, encode, decode,
};

extern "C" __attribute__((visibility("default"))) const struct spm_ops *
owt_spm_ops(void)
{
	return &ops;
}
