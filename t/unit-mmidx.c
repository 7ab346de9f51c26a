/* unit-mmidx.c - Megatron indexed datasets: the byte-exact vectors, reader, writer, merge, publishing */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tok/mmidx.h"
#include "core/util.h"
#include "unit.h"

/* megatron-compat.md 1.6: document mode, vocabulary 50257. */
static const char vec_idx_hex[] =
    "4d4d494449445800000100000000000000080300000000000000"
    "0400000000000000030000000600000002000000"
    "000000000000000006000000000000001200000000000000"
    "0000000000000000010000000000000002000000000000000300000000000000";
static const char vec_bin_hex[] = "883ce30350c42800cc02010134050d0050c44fc450c4";
static const uint32_t doc0[] = { 15496, 995, 50256 };
static const uint32_t doc1[] = { 40, 716, 257, 1332, 13, 50256 };
static const uint32_t doc2[] = { 50255, 50256 };

static size_t
unhex(const char *h, unsigned char *out)
{
	size_t n = 0;
	unsigned v;

	for (; h[0] && h[1]; h += 2) {
		sscanf(h, "%2x", &v);
		out[n++] = (unsigned char)v;
	}
	return n;
}

static int
slurp(const char *path, struct buf *b)
{
	FILE *f = fopen(path, "rb");
	char tmp[4096];
	size_t k;

	b->len = 0;
	if (f == NULL)
		return -1;
	while ((k = fread(tmp, 1, sizeof tmp, f)) > 0)
		buf_add(b, tmp, k);
	fclose(f);
	return 0;
}

/* Compare PREFIX.idx and PREFIX.bin with expected bytes. */
static void
same_files(const char *prefix, const unsigned char *idx, size_t idxlen,
    const unsigned char *bin, size_t binlen, const char *what)
{
	struct buf b = { 0 };
	char path[600];

	snprintf(path, sizeof path, "%s.idx", prefix);
	slurp(path, &b);
	OK(b.len == idxlen && memcmp(b.p, idx, idxlen) == 0,
	    "%s: .idx bytes as Megatron writes them", what);
	snprintf(path, sizeof path, "%s.bin", prefix);
	slurp(path, &b);
	OK(b.len == binlen && memcmp(b.p, bin, binlen) == 0,
	    "%s: .bin bytes as Megatron writes them", what);
	buf_free(&b);
}

static void
test_vectors(const char *dir)
{
	unsigned char idx[256], bin[64];
	size_t idxlen = unhex(vec_idx_hex, idx), binlen = unhex(vec_bin_hex, bin);
	struct mmidx d;
	struct mmidx_writer w;
	uint32_t got[8];
	char err[256], prefix[512];
	int code = 0;

	OK(mmidx_open_mem(&d, "v", idx, idxlen, bin, binlen, err, sizeof err, &code)
	    == 0, "the notes' document-mode vector opens");
	OK(d.dtype == 8 && d.itemsize == 2, "dtype uint16 (code 8)");
	OK(d.nseq == 3 && d.ndocs == 3 && d.ntokens == 11,
	    "3 sequences, 3 documents, 11 tokens");
	OK(mmidx_len(&d, 0) == 3 && mmidx_len(&d, 1) == 6 &&
	    mmidx_len(&d, 2) == 2, "lengths 3 6 2");
	mmidx_read(&d, 1, 0, 6, got);
	OK(memcmp(got, doc1, sizeof doc1) == 0, "sequence 1 reads back");
	mmidx_read(&d, 1, 4, 2, got);
	OK(got[0] == 13 && got[1] == 50256, "a read at an offset");
	mmidx_read(&d, 2, 2, 0, got);
	OK(mmidx_doc(&d, 0) == 0 && mmidx_doc(&d, 3) == 3, "document index 0..3");
	mmidx_close(&d);

	snprintf(prefix, sizeof prefix, "%s/doc", dir);
	OK(mmidx_create(&w, prefix, MMIDX_DTYPE(50257), 0) == 0, "create");
	mmidx_add(&w, doc0, 3);
	mmidx_end_doc(&w);
	mmidx_add(&w, doc1, 6);
	mmidx_end_doc(&w);
	mmidx_add(&w, doc2, 2);
	OK(mmidx_commit(&w) == 0, "commit (closing the last document)");
	same_files(prefix, idx, idxlen, bin, binlen, "document mode");
	OK(mmidx_open(&d, prefix, err, sizeof err, &code) == 0,
	    "the written dataset opens from files");
	OK(d.nseq == 3 && d.ntokens == 11, "and reads its counts");
	mmidx_close(&d);

	OK(mmidx_create(&w, prefix, MMIDX_UINT16, 0) < 0 && w.errcode == XUSAGE,
	    "an existing dataset is not overwritten without force");
	snprintf(prefix + strlen(prefix), 8, ".idx");
	OK(strstr(w.err, prefix) != NULL &&
	    strstr(w.err, ": already exists; -f overwrites it") != NULL,
	    "the message names the file: %s", w.err);
}

/* Little-endian bytes of v, n of them, appended to p. */
static unsigned char *
put(unsigned char *p, uint64_t v, int n)
{
	memcpy(p, &v, (size_t)n);
	return p + n;
}

/* The index Megatron writes for these lengths and document index. */
static size_t
make_idx(unsigned char *out, int dtype, const uint32_t *len, size_t n,
    const uint64_t *doc, size_t nd)
{
	unsigned char *p = out;
	uint64_t ptr = 0;
	size_t i;

	memcpy(p, MMIDX_MAGIC, 9);
	p = put(p + 9, 1, 8);
	p = put(p, (uint64_t)dtype, 1);
	p = put(p, n, 8);
	p = put(p, nd, 8);
	for (i = 0; i < n; i++)
		p = put(p, len[i], 4);
	for (i = 0; i < n; i++) {
		p = put(p, ptr, 8);
		ptr += len[i] * (dtype == MMIDX_UINT16 ? 2u : 4u);
	}
	for (i = 0; i < nd; i++)
		p = put(p, doc[i], 8);
	return (size_t)(p - out);
}

/* Sentence mode and int32, as the notes describe them (1.6). */
static void
test_sentences_int32(const char *dir)
{
	static const uint32_t s0[] = { 1, 2, 3 }, s1[] = { 4, 5, 50256 },
	    s2[] = { 6, 7, 50256 }, lens[] = { 3, 3, 3 };
	static const uint64_t docs[] = { 0, 2, 3 };
	unsigned char idx[256], bin[64], *p;
	size_t idxlen, binlen, i;
	struct mmidx_writer w;
	char prefix[512];
	int dtype;

	for (dtype = MMIDX_INT32; dtype <= MMIDX_UINT16; dtype += 4) {
		snprintf(prefix, sizeof prefix, "%s/sent%d", dir, dtype);
		mmidx_create(&w, prefix, dtype, 0);
		mmidx_add(&w, s0, 3);
		mmidx_add(&w, s1, 3);
		mmidx_end_doc(&w);
		mmidx_add(&w, s2, 3);
		mmidx_end_doc(&w);
		OK(mmidx_commit(&w) == 0, "sentence mode, dtype %d: commit", dtype);
		idxlen = make_idx(idx, dtype, lens, 3, docs, 3);
		p = bin;
		for (i = 0; i < 3; i++) {
			p = put(p, s0[i], dtype == MMIDX_UINT16 ? 2 : 4);
		}
		for (i = 0; i < 3; i++)
			p = put(p, s1[i], dtype == MMIDX_UINT16 ? 2 : 4);
		for (i = 0; i < 3; i++)
			p = put(p, s2[i], dtype == MMIDX_UINT16 ? 2 : 4);
		binlen = (size_t)(p - bin);
		same_files(prefix, idx, idxlen, bin, binlen, dtype == MMIDX_INT32 ?
		    "sentence mode, int32 (vocabulary 100000)" :
		    "sentence mode, uint16: document index 0 2 3");
	}
	OK(MMIDX_DTYPE(65499) == MMIDX_UINT16 && MMIDX_DTYPE(65500) ==
	    MMIDX_INT32 && MMIDX_DTYPE(100000) == MMIDX_INT32,
	    "dtype rule: uint16 strictly under 65500");
	OK(idx[17] == 8, "the dtype byte at offset 17");
}

static void
add_m0(struct mmidx_writer *w, const uint32_t *a)
{
	mmidx_add(w, a, 2);
	mmidx_add(w, a + 2, 1);
	mmidx_end_doc(w);
	mmidx_add(w, a, 0);
	mmidx_end_doc(w);
	mmidx_end_doc(w);
}

/* A merge equals writing the concatenation; empty datasets merge too. */
static void
test_merge(const char *dir)
{
	static const uint32_t a[] = { 5, 6, 7, 8, 9 };
	struct mmidx_writer w;
	struct mmidx d[3];
	struct buf x = { 0 }, y = { 0 };
	char p[4][512], err[256], path[600];
	int code, i, ok = 1;

	for (i = 0; i < 4; i++)
		snprintf(p[i], sizeof p[i], "%s/m%d", dir, i);
	/*
	 * m0: a document of two sequences, one of an empty sequence, one of
	 * no sequence; m1: empty; m2: one document; m3: all three written
	 * directly.
	 */
	mmidx_create(&w, p[0], MMIDX_UINT16, 0);
	add_m0(&w, a);
	mmidx_commit(&w);
	mmidx_create(&w, p[1], MMIDX_UINT16, 0);
	mmidx_commit(&w);
	mmidx_create(&w, p[2], MMIDX_UINT16, 0);
	mmidx_add(&w, a, 5);
	mmidx_commit(&w);
	mmidx_create(&w, p[3], MMIDX_UINT16, 0);
	add_m0(&w, a);
	mmidx_add(&w, a, 5);
	mmidx_commit(&w);

	for (i = 0; i < 3; i++)
		ok &= mmidx_open(&d[i], p[i], err, sizeof err, &code) == 0;
	OK(ok, "three datasets open, one of them empty (%s)", ok ? "" : err);
	OK(d[0].ndocs == 3 && d[0].nseq == 3 && d[1].nseq == 0 &&
	    d[1].ndocs == 0, "a zero-sequence document is kept");
	mmidx_create(&w, p[0], MMIDX_UINT16, 1);
	for (i = 0; i < 3; i++)
		mmidx_add_dataset(&w, &d[i]);
	OK(mmidx_commit(&w) == 0, "merge into the first input's prefix with force");
	for (i = 0; i < 3; i++)
		mmidx_close(&d[i]);
	snprintf(path, sizeof path, "%s.idx", p[0]);
	slurp(path, &x);
	snprintf(path, sizeof path, "%s.idx", p[3]);
	slurp(path, &y);
	SAME(x.p, x.len, y.p, y.len, "merged .idx equals the concatenation's");
	snprintf(path, sizeof path, "%s.bin", p[0]);
	slurp(path, &x);
	snprintf(path, sizeof path, "%s.bin", p[3]);
	slurp(path, &y);
	SAME(x.p, x.len, y.p, y.len, "merged .bin equals the concatenation's");

	mmidx_open(&d[0], p[1], err, sizeof err, &code);
	mmidx_create(&w, p[2], MMIDX_INT32, 1);
	OK(mmidx_add_dataset(&w, &d[0]) < 0 && w.errcode == XDATA &&
	    strcmp(w.err, "dtype uint16 differs from the output's int32") == 0,
	    "merging another dtype fails: %s", w.err);
	mmidx_abort(&w);
	mmidx_close(&d[0]);
	buf_free(&x);
	buf_free(&y);
}

static void
test_stats(void)
{
	static const uint32_t lens[] = { 0, 5, 70000, 5, 1, 3, 100000, 2, 4, 5 };
	static const uint64_t docs[] = { 0, 4, 4, 10 };
	unsigned char idx[512], *bin = xcalloc(1, 400000);
	struct mmidx_stats st;
	struct mmidx d;
	char err[256];
	size_t n;
	int code;

	n = make_idx(idx, MMIDX_UINT16, lens, 10, docs, 4);
	OK(mmidx_open_mem(&d, "s", idx, n, bin, 2 * 170025, err, sizeof err, &code) == 0,
	    "lengths over 65535 open (%s)", err);
	mmidx_stats(&d, &st);
	OK(st.min == 0 && st.max == 100000 && st.empty == 1 && st.empty_docs == 1,
	    "min, max, empty sequences and documents");
	OK(st.p50 == 4 && st.p90 == 70000 && st.p99 == 100000,
	    "exact quantiles: p50 %u p90 %u p99 %u", st.p50, st.p90, st.p99);
	OK(st.mean == 17002.5, "mean %g", st.mean);
	free(bin);
}

/*
 * Every truncation of a valid index fails, and so does every truncation
 * of its .bin; a flipped byte either fails or leaves a dataset whose
 * accessors stay in bounds (checked under SANITIZE=1).
 */
static void
test_corrupt(void)
{
	unsigned char idx[256], bin[64], bad[256];
	size_t idxlen = unhex(vec_idx_hex, idx), binlen = unhex(vec_bin_hex, bin);
	size_t i, n, fails = 0, flips = 0, opened = 0;
	struct mmidx d;
	uint32_t out[64];
	char err[256];
	uint64_t s;
	int b, code = 0;

	for (n = 0; n < idxlen; n++)
		fails += mmidx_open_mem(&d, "t", idx, n, bin, binlen, err,
		    sizeof err, &code) < 0 && code == XDATA;
	OK(fails == idxlen, "each of %zu truncations of the .idx fails (XDATA)",
	    idxlen);
	for (fails = 0, n = 0; n < binlen; n++)
		fails += mmidx_open_mem(&d, "t", idx, idxlen, bin, n, err,
		    sizeof err, &code) < 0;
	OK(fails == binlen, "each of %zu truncations of the .bin fails", binlen);
	for (i = 0; i < idxlen; i++) {
		for (b = 0; b < 8; b++) {
			memcpy(bad, idx, idxlen);
			bad[i] ^= (unsigned char)(1u << b);
			flips++;
			if (mmidx_open_mem(&d, "t", bad, idxlen, bin, binlen, err,
			    sizeof err, &code) < 0)
				continue;
			opened++;
			for (s = 0; s < d.nseq; s++)
				mmidx_read(&d, s, 0, mmidx_len(&d, s), out);
		}
	}
	/* [0,0,2,3] and [0,1,3,3] are valid document indices. */
	OK(opened == 2, "of %zu single-bit flips of the .idx, only the 2 that "
	    "make another valid document index open (%zu)", flips, opened);
}

/*
 * A dataset's files get the mode 0666 less the umask. outfile.h reads the
 * umask once a process, at its first file: this test runs first (t/8002
 * tries other umasks, one process each).
 */
static void
test_mode(const char *dir)
{
	struct mmidx_writer w;
	struct stat st;
	char prefix[512], path[600];
	mode_t old;
	int ok;

	snprintf(prefix, sizeof prefix, "%s/mode", dir);
	old = umask(027);
	mmidx_create(&w, prefix, MMIDX_UINT16, 0);
	mmidx_add(&w, doc0, 3);
	mmidx_commit(&w);
	umask(old);
	snprintf(path, sizeof path, "%s.bin", prefix);
	ok = stat(path, &st) == 0 && (st.st_mode & 0777) == 0640;
	snprintf(path, sizeof path, "%s.idx", prefix);
	OK(ok && stat(path, &st) == 0 && (st.st_mode & 0777) == 0640,
	    "under umask 027 the .bin and .idx are 0640");
}

/*
 * Publishing through outfile.h: the temporaries of killed writers swept
 * by the next writer (a live one's kept), nothing left by an aborted one,
 * and a token id an int32 dataset cannot hold.
 */
static void
test_publish(const char *dir)
{
	struct mmidx_writer w;
	char prefix[512], path[600], live[600];
	uint32_t big = 3000000000u;
	int fd, lfd;

	snprintf(prefix, sizeof prefix, "%s/sweep", dir);
	snprintf(path, sizeof path, "%s.bin.tmpAbC123", prefix);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	snprintf(path, sizeof path, "%s.doc.tmpAbC123", prefix);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	snprintf(live, sizeof live, "%s.idx.tmpLiVe12", prefix);
	lfd = open(live, O_CREAT | O_WRONLY, 0600);
	flock(lfd, LOCK_EX);
	OK(mmidx_create(&w, prefix, MMIDX_UINT16, 0) == 0, "create over stale "
	    "temporaries");
	snprintf(path, sizeof path, "%s.bin.tmpAbC123", prefix);
	OK(access(path, F_OK) < 0, "a dead writer's .bin temporary is removed");
	snprintf(path, sizeof path, "%s.doc.tmpAbC123", prefix);
	OK(access(path, F_OK) < 0, "and its document index spill");
	OK(access(live, F_OK) == 0, "a live writer's (locked) is kept");
	mmidx_abort(&w);
	close(lfd);
	unlink(live);
	snprintf(path, sizeof path, "%s.bin", prefix);
	OK(access(path, F_OK) < 0, "an aborted writer publishes nothing");

	snprintf(prefix, sizeof prefix, "%s/huge", dir);
	mmidx_create(&w, prefix, MMIDX_INT32, 0);
	OK(mmidx_add(&w, doc0, 3) == 0 && mmidx_add(&w, &big, 1) < 0 &&
	    w.errcode == XDATA && strcmp(w.err, "token 3000000000 does not fit an "
	    "int32 dataset (at most 2147483647)") == 0,
	    "an id over 2^31 - 1 is bad data: %s", w.err);
	OK(mmidx_commit(&w) < 0, "and the dataset is not committed");
	snprintf(path, sizeof path, "%s.idx", prefix);
	OK(access(path, F_OK) < 0, "nor published");
}

int
main(void)
{
	char dir[] = "/tmp/unit-mmidx.XXXXXX", cmd[64];

	if (mkdtemp(dir) == NULL)
		return 3;
	test_mode(dir);
	test_vectors(dir);
	test_sentences_int32(dir);
	test_merge(dir);
	test_publish(dir);
	test_stats();
	test_corrupt();
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		OK(0, "remove %s", dir);
	return unit_done();
}
