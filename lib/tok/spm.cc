/* spm.cc - a SentencePiece model through Debian's libsentencepiece: a C shim over its C++ */
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

extern "C" {
#include "core/util.h"
}
#include "tok/spm.h"

#ifdef OWT_NO_SPM
/*
 * A build without libsentencepiece (the GPU machine's, Makefile's
 * GPU_ONLY): no model loads, so nothing else is reached.
 */
struct spm *
spm_load(const char *path, char *err, size_t errsize, int *code)
{
	owt_fail(err, errsize, code, XUSAGE, "%s: this build has no "
	    "libsentencepiece (SentencePiece models)", path);
	return NULL;
}
void spm_free(struct spm *m) { (void)m; }
#define NONE(f) owt_fatal("%s: no libsentencepiece in this build", f)
uint32_t spm_npieces(const struct spm *m) { NONE("spm_npieces"); }
int32_t spm_bos(const struct spm *m) { NONE("spm_bos"); }
int32_t spm_eos(const struct spm *m) { NONE("spm_eos"); }
int32_t spm_pad(const struct spm *m) { NONE("spm_pad"); }
int32_t spm_unk(const struct spm *m) { NONE("spm_unk"); }
const char *spm_piece(const struct spm *m, uint32_t id) { NONE("spm_piece"); }
int32_t spm_piece_id(const struct spm *m, const char *p, size_t n)
{ NONE("spm_piece_id"); }
size_t spm_encode(const struct spm *m, const char *text, size_t len,
    uint32_t **ids, size_t *n, size_t *cap) { NONE("spm_encode"); }
size_t spm_decode(const struct spm *m, const uint32_t *ids, size_t n,
    struct buf *out) { NONE("spm_decode"); }
#else
#include <sentencepiece_processor.h>

struct spm {
	sentencepiece::SentencePieceProcessor sp;
};

struct spm *
spm_load(const char *path, char *err, size_t errsize, int *code)
{
	FILE *f;
	struct spm *m;

	/*
	 * The library's own message for a missing file names no errno; a
	 * missing model is bad input (exit 1), as a missing rank file is.
	 */
	if ((f = std::fopen(path, "rb")) == NULL) {
		owt_fail_errno(err, errsize, code, XDATA, "cannot open '%s'",
		    path);
		return NULL;
	}
	std::fclose(f);
	m = new (std::nothrow) spm;
	if (m == NULL)
		owt_fatal("out of memory");
	sentencepiece::util::Status st = m->sp.Load(path);
	if (!st.ok()) {
		owt_fail(err, errsize, code, XDATA, "%s: not a SentencePiece "
		    "model", path);
		delete m;
		return NULL;
	}
	return m;
}

void
spm_free(struct spm *m)
{
	delete m;
}

uint32_t
spm_npieces(const struct spm *m)
{
	return (uint32_t)m->sp.GetPieceSize();
}

int32_t
spm_bos(const struct spm *m)
{
	return m->sp.bos_id();
}

int32_t
spm_eos(const struct spm *m)
{
	return m->sp.eos_id();
}

int32_t
spm_pad(const struct spm *m)
{
	return m->sp.pad_id();
}

int32_t
spm_unk(const struct spm *m)
{
	return m->sp.unk_id();
}

const char *
spm_piece(const struct spm *m, uint32_t id)
{
	return m->sp.IdToPiece((int)id).c_str();
}

int32_t
spm_piece_id(const struct spm *m, const char *p, size_t n)
{
	/* PieceToId answers the unk id for a piece it does not hold. */
	int id = m->sp.PieceToId(absl::string_view(p, n));

	if (id < 0 || m->sp.IdToPiece(id) != std::string(p, n))
		return -1;
	return id;
}

size_t
spm_encode(const struct spm *m, const char *text, size_t len, uint32_t **ids,
    size_t *n, size_t *cap)
{
	std::vector<int> v;
	size_t i;

	if (!m->sp.Encode(absl::string_view(text, len), &v).ok())
		return 0;
	if (*n + v.size() > *cap) {
		*cap = (*n + v.size()) * 2;
		*ids = (uint32_t *)xrealloc(*ids, *cap * sizeof **ids);
	}
	for (i = 0; i < v.size(); i++)
		(*ids)[(*n)++] = (uint32_t)v[i];
	return v.size();
}

size_t
spm_decode(const struct spm *m, const uint32_t *ids, size_t n, struct buf *out)
{
	std::vector<int> v(n);
	std::string s;
	uint32_t np = spm_npieces(m);
	size_t i;

	for (i = 0; i < n; i++) {
		if (ids[i] >= np)
			return i;
		v[i] = (int)ids[i];
	}
	if (!m->sp.Decode(v, &s).ok())
		owt_fatal("spm_decode: ids below the number of pieces refused");
	buf_add(out, s.data(), s.size());
	return n;
}
#endif
