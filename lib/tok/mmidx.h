/* mmidx.h - Megatron indexed datasets (PREFIX.bin + PREFIX.idx, "MMIDIDX") */
#ifndef OWT_MMIDX_H
#define OWT_MMIDX_H

#include <stddef.h>
#include <stdint.h>

#include "core/outfile.h"
#include "core/util.h"

/*
 * PREFIX.idx: the 9-byte magic "MMIDIDX\0\0", u64 version 1, u8 dtype
 * code, u64 N (sequences), u64 D (document index entries), then int32
 * lengths[N], int64 byte pointers[N] into PREFIX.bin, int64
 * document_indices[D]; little-endian, unaligned (the arrays start at byte
 * 34). PREFIX.bin: the tokens of every sequence, back to back, no header.
 * Document k is sequences [document_indices[k], document_indices[k+1]).
 */
#define MMIDX_MAGIC "MMIDIDX\0\0"
#define MMIDX_MAGICSIZE 9
#define MMIDX_HDRSIZE 34
#define MMIDX_UINT16 8
#define MMIDX_INT32 4
/* Megatron's rule: uint16 for a vocabulary under 65500 ids, else int32. */
#define MMIDX_DTYPE(vocab) ((vocab) < 65500 ? MMIDX_UINT16 : MMIDX_INT32)

struct mmidx {
	int dtype;		/* Megatron dtype code: 8 uint16, 4 int32 */
	unsigned itemsize;	/* 2 or 4 */
	uint64_t nseq;		/* sequences: N */
	uint64_t ndocs;		/* documents: D - 1 */
	uint64_t ntokens;	/* sum of the sequence lengths */
	/* private: the mappings */
	const unsigned char *idx, *bin;
	size_t idxsize, binsize;
	const unsigned char *lens, *ptrs, *docs;	/* into idx */
	int mapped;		/* idx and bin are our mmaps */
};

/*
 * Map PREFIX.idx and PREFIX.bin read-only and check every invariant
 * (magic, version, dtype, sizes, pointers, lengths, document index), so
 * that no accessor below can read out of bounds. 0, or -1 with
 * "PREFIX.idx: what is wrong" (or PREFIX.bin when the fault is there) in
 * err and *code = XDATA (bad data, or a missing file) or XSYS (I/O).
 * Token values are not checked (that would read all of PREFIX.bin): an
 * int32 dataset may hold any 32-bit value, so a caller checks ids against
 * its vocabulary. The files must not be truncated while they are open.
 */
int mmidx_open(struct mmidx *d, const char *prefix, char *err, size_t errsize,
    int *code);
/*
 * The same checks on an index and a .bin already in memory (not copied;
 * they must outlive d). name is used in messages as PREFIX. 0 or -1 (XDATA).
 */
int mmidx_open_mem(struct mmidx *d, const char *name, const void *idx,
    size_t idxsize, const void *bin, size_t binsize, char *err,
    size_t errsize, int *code);
void mmidx_close(struct mmidx *d);
/* "uint16", "int32", ... for a Megatron dtype code; "unknown" outside 1..8. */
const char *mmidx_dtype_name(int dtype);

uint32_t mmidx_len(const struct mmidx *d, uint64_t seq);	/* tokens in sequence seq < nseq */
/* Copy n ids of sequence seq starting at token off (off + n <= len) as uint32. */
void mmidx_read(const struct mmidx *d, uint64_t seq, uint64_t off, size_t n,
    uint32_t *out);
uint64_t mmidx_doc(const struct mmidx *d, uint64_t k);	/* document_indices[k], k <= ndocs */

/*
 * Statistics of the sequence lengths. Quantiles are exact (the smallest
 * length with at least that fraction of sequences at or below it).
 */
struct mmidx_stats {
	uint64_t empty;			/* sequences of length 0 */
	uint64_t empty_docs;		/* documents of no sequence */
	uint32_t min, max, p50, p90, p99;
	double mean;
};
void mmidx_stats(const struct mmidx *d, struct mmidx_stats *st);

/*
 * Scan every token of an int32 dataset for negative values (uint16 ones
 * cannot be wrong). 0, or -1 with "name.bin: ..." naming the first (XDATA).
 */
int mmidx_check_tokens(const struct mmidx *d, const char *name, char *err,
    size_t errsize, int *code);

/*
 * Writing. Output goes to temporary files beside PREFIX (outfile.h: the
 * umask's mode, swept when a killed run left them), renamed into place by
 * mmidx_commit, so a failed or interrupted run leaves no dataset. Memory
 * is fixed (three buffers); the document index is spilled to an unlinked
 * temporary file, 8 bytes a document. A fatal-signal handler calls
 * outfile_signal_cleanup.
 */
struct mmidx_writer {
	char *prefix;
	int force, dtype;
	unsigned itemsize;
	struct outfile bin, idx;	/* PREFIX.bin and PREFIX.idx, unpublished */
	int docfd;
	uint64_t nseq, ndocs, ntokens, binbytes;
	uint64_t doc_start;	/* first sequence of the open document */
	unsigned char *bbuf, *lbuf, *dbuf;	/* .bin, lengths, documents */
	size_t blen, llen, dlen;
	int errcode;		/* XDATA, XUSAGE (exists) or XSYS after an error */
	char err[OWT_ERRSIZE];
};

/*
 * Start writing PREFIX with a dtype code (MMIDX_UINT16 or MMIDX_INT32).
 * Without force an existing PREFIX.bin or PREFIX.idx is an error
 * (code XUSAGE). Temporaries of PREFIX that killed writers left are
 * removed first. 0, or -1 with w->err and w->code.
 */
int mmidx_create(struct mmidx_writer *w, const char *prefix, int dtype,
    int force);
/* Append a sequence of n ids (each must fit the dtype). 0 or -1. */
int mmidx_add(struct mmidx_writer *w, const uint32_t *ids, size_t n);
/* The same for n ids of width (2 or 4) bytes each, little-endian, as a
 * token stream holds them: copied as they are when the widths agree. */
int mmidx_add_le(struct mmidx_writer *w, const void *raw, unsigned width,
    size_t n);
/* Close the current document (after its sequences; none is allowed). 0 or -1. */
int mmidx_end_doc(struct mmidx_writer *w);
/*
 * Append a whole dataset of the same dtype: its tokens, its lengths and
 * its document index shifted by the sequences written so far (Megatron's
 * merge). Documents left open before the call are closed first. 0 or -1.
 */
int mmidx_add_dataset(struct mmidx_writer *w, const struct mmidx *d);
/*
 * Write the index, sync both files and rename them into place (.bin, then
 * .idx). An open document is closed first. 0, or -1 after removing the
 * temporary files. Frees w either way.
 */
int mmidx_commit(struct mmidx_writer *w);
/* Remove the temporary files and free w. Safe after any failure. */
void mmidx_abort(struct mmidx_writer *w);

#endif
