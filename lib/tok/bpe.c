/* bpe.c - GPT-2 byte-level BPE: load a vocabulary, encode text as tiktoken's gpt2, decode */
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "tok/bpe.h"
#include "core/input.h"
#include "core/json.h"
#include "core/opt.h"
#include "tok/uniclass.h"
#include "core/utf8.h"

#define K1 0x9e3779b97f4a7c15ULL
#define NONE 0xffffffffu
#define NOTMERGE 0x80000000u	/* vslot.len flag: a token bpe_encode never makes */

/*
 * Whole tokens by their bytes, four slots a cache line: the first 8 bytes
 * (zero-padded), which with the length tell most tokens apart; longer
 * ones are compared in the pool.
 */
struct vslot {
	uint64_t w0;
	uint32_t id;
	uint32_t len;		/* 0: empty slot */
};

/*
 * The pair table: two adjacent parts, by rank, whose concatenation is a
 * mergeable token, packed as left << 40 | right << 20 | joined (ranks are
 * below RANKMAX); PEMPTY is an empty slot.
 */
#define RANKBITS 20
#define RANKMAX ((1u << RANKBITS) - 1)
#define PEMPTY UINT64_MAX

struct bpe {
	uint32_t n, eod;
	uint32_t nrank;		/* ranks are 0 .. nrank - 1 */
	int rank_is_id;		/* each token's rank is its id (GPT-2's are) */
	int image;		/* the arrays are an image's, not allocated */
	uint32_t *off;		/* token id is pool[off[id] .. off[id + 1]) */
	char *pool;
	uint32_t *rank;		/* merge priority, NONE for tokens never made */
	uint32_t *id_of_rank;
	uint32_t byte_id[256];
	uint32_t byte_rank[256];
	uint32_t *bytepair;	/* [a << 8 | b]: the rank of bytes a b joined, or NONE */
	struct vslot *vt;
	uint64_t *pt;
	uint64_t *pfilter;	/* a bit per hash of the pairs in pt, to skip most misses */
	unsigned vbits, pbits;
	uint32_t maxmerged;	/* the length of the longest mergeable token */

	/*
	 * The backtracking encoder's tables, by rank, for the tokens that
	 * merging makes (the bytes, and each token whose own bytes merge
	 * into it); bt is 0 when the vocabulary does not allow it.
	 */
	int bt;
	uint32_t *rlen;		/* the token's length in bytes */
	uint32_t (*lr)[2];	/* the two parts its merge joins last; NONE for a byte */
	uint32_t *pre;		/* the longest such token its bytes start with, or NONE */
	struct dnode *da;	/* such tokens, a trie in a double array */
	uint32_t nda;
};

/*
 * A node of the trie: the node of byte c under it is at base + c, if
 * that node's check is this one's index. tok: the rank of the token that
 * ends here, or NONE. The root is at 0; a free slot's check is NONE.
 */
struct dnode {
	uint32_t base, check, tok;
};

/*
 * The piece cache: a direct-mapped table of merged pieces, an entry a
 * cache line: the piece's bytes (zero-padded to 8), then its ids, 16 bits
 * each when the vocabulary allows (GPT-2's does), else 32. Its size is
 * the caller's (a program with many threads gives each a share of one
 * budget), a power of two entries from CMIN to CMAX.
 */
#define CMIN ((size_t)1 << 10)
#define CMAX ((size_t)1 << 18)
#define CDATA 56
struct centry {
	uint32_t tag;
	uint8_t len, nids;
	uint8_t pad[2];
	unsigned char data[CDATA];
};

struct bpe_state {
	const struct bpe *v;
	struct centry *cache;
	size_t cmask;		/* the cache's entries, less one */
	size_t idsize;		/* of the ids in the cache: 2 or 4 */
	struct bpe_ids tmp;
};

/* ---- hashing ---- */

/* The first min(n, 8) bytes of p as a little-endian word, zero-padded. */
static inline uint64_t
load_w0(const unsigned char *p, size_t n, const unsigned char *end)
{
	uint64_t w = 0;

	if (end - p >= 8) {
		memcpy(&w, p, 8);
		return n >= 8 ? w : w & (~0ULL >> (64 - 8 * n));
	}
	memcpy(&w, p, n < 8 ? n : 8);
	return w;
}

static inline uint64_t
load8(const unsigned char *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
	return w;
}

/* a[0..n) == b[0..n), for n >= 8: 8-byte words, the last one overlapping. */
static inline int
same8(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i + 8 < n; i += 8)
		if (load8(a + i) != load8(b + i))
			return 0;
	return load8(a + n - 8) == load8(b + n - 8);
}

static inline uint64_t
hash_piece(const unsigned char *p, size_t n, uint64_t w0)
{
	uint64_t h = (w0 ^ n) * K1, w;
	size_t i;

	for (i = 8; i < n; i += 8) {
		w = 0;
		memcpy(&w, p + i, n - i < 8 ? n - i : 8);
		h = (h ^ (h >> 29) ^ w) * K1;
	}
	return h ^ (h >> 32);
}

/* The slot of the token with these bytes, or of the empty slot ending its probe. */
static inline const struct vslot *
vfind(const struct bpe *v, const unsigned char *p, size_t n, uint64_t w0,
    uint64_t h, uint32_t lenmask)
{
	uint32_t mask = (1u << v->vbits) - 1, i = (uint32_t)(h >> 40) & mask;
	const struct vslot *s;

	for (;; i = (i + 1) & mask) {
		s = &v->vt[i];
		if (s->len == 0)
			return s;
		if ((s->len & lenmask) == n && s->w0 == w0 && (n <= 8 ||
		    same8((unsigned char *)v->pool + v->off[s->id], p, n)))
			return s;
	}
}

static inline uint64_t
pair_hash(uint64_t key)
{
	key *= K1;
	return key ^ (key >> 29);
}

/*
 * The pair filter: 2^FBITS bits, two a pair in one word. It answers two
 * thirds of the lookups, so the smaller the better: 64 KB, with fewer
 * false answers than one bit a pair in 128 KB (about 3% against 5% of
 * the pairs not in the table, for GPT-2's 50,000).
 */
#define FBITS 19

/* A pair's two bits in its word of the filter, h >> (64 - FBITS + 6). */
static inline uint64_t
filter_bits(uint64_t h)
{
	return 1ULL << (h & 63) | 1ULL << (h >> 6 & 63);
}

/* The rank of the token that joins the parts of ranks left and right, or NONE. */
static inline uint32_t
join(const struct bpe *v, uint32_t left, uint32_t right)
{
	uint64_t key = (uint64_t)left << RANKBITS | right, e, h = pair_hash(key);
	uint32_t mask = (1u << v->pbits) - 1, i = (uint32_t)(h >> 20) & mask;
	uint64_t fb = filter_bits(h);

	if ((v->pfilter[h >> (64 - FBITS + 6)] & fb) != fb)
		return NONE;

	for (;; i = (i + 1) & mask) {
		e = v->pt[i];
		if (e >> RANKBITS == key)
			return (uint32_t)e & RANKMAX;
		if (e == PEMPTY)
			return NONE;
	}
}

/* ---- loading ---- */

/*
 * GPT-2 writes every byte as a printable character: the bytes '!'..'~',
 * 0xa1..0xac and 0xae..0xff as themselves, the other 68 as U+0100.. in
 * byte order. rank_of_byte is a byte's position in that order, which is
 * also its rank.
 */
static void
byte_alphabet(int16_t uni2byte[324], uint32_t rank_of_byte[256])
{
	unsigned b, k = 0, extra = 0;

	for (b = 0; b < 324; b++)
		uni2byte[b] = -1;
	for (b = 0; b < 256; b++)
		if ((b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || b >= 0xae) {
			uni2byte[b] = (int16_t)b;
			rank_of_byte[b] = k++;
		}
	for (b = 0; b < 256; b++)
		if (uni2byte[b] != (int16_t)b) {
			uni2byte[256 + extra++] = (int16_t)b;
			rank_of_byte[b] = k++;
		}
}

struct loader {
	struct bpe *v;
	const char *name;
	int16_t uni2byte[324];
	uint32_t rank_of_byte[256];
	struct buf pool;	/* token bytes in file order */
	uint32_t *off, *id;	/* per token in file order: pool offset, id */
	size_t ntok, cap;
	int code;
	char *err;
	size_t errsize;
};

/* Append the bytes that s[0..n), in GPT-2's alphabet, stands for; -1 if it is not. */
static int
unalphabet(struct loader *l, struct buf *out, const unsigned char *s, size_t n)
{
	size_t i = 0, k;
	uint32_t cp;

	while (i < n) {
		k = utf8_seqlen(s + i, n - i);
		if (k == 0 || k > 2)
			return -1;
		cp = k == 1 ? s[i] : (uint32_t)(s[i] & 0x1f) << 6 | (s[i + 1] & 0x3f);
		if (cp >= 324 || l->uni2byte[cp] < 0)
			return -1;
		buf_addc(out, (char)l->uni2byte[cp]);
		i += k;
	}
	return 0;
}

/* Read a whole vocabulary file into b. */
static int
slurp(struct loader *l, const char *path, struct buf *b)
{
	return input_slurp_file(path, b, (size_t)1 << 30, l->err, l->errsize,
	    &l->code);
}

/* A lookup of whole-token bytes, prefetched first so that misses overlap. */
struct query {
	const unsigned char *p;
	size_t n;
	uint64_t w0, h;
};

static void
query_start(const struct bpe *v, struct query *q, const unsigned char *p,
    size_t n)
{
	q->p = p;
	q->n = n;
	q->w0 = load_w0(p, n, p + n);
	q->h = hash_piece(p, n, q->w0);
	__builtin_prefetch(&v->vt[(uint32_t)(q->h >> 40) & ((1u << v->vbits) - 1)]);
}

/*
 * Add token id, whose bytes q looks up, as one bpe_encode never makes (until
 * load_merges says otherwise); returns the id that already has its bytes,
 * or NONE.
 */
static uint32_t
vinsert(struct bpe *v, const struct query *q, uint32_t id)
{
	struct vslot *s;

	s = (struct vslot *)vfind(v, q->p, q->n, q->w0, q->h, ~NOTMERGE);
	if (s->len != 0)
		return s->id;
	s->w0 = q->w0;
	s->id = id;
	s->len = (uint32_t)q->n | NOTMERGE;
	return NONE;
}

/*
 * An id: a JSON integer (no fraction or exponent) in 0..INT32_MAX-1; the
 * value is in [p, p + n). 0, or -1 with the message.
 */
static int
token_id(struct loader *l, const char *p, size_t n, uint32_t *id)
{
	uint64_t v = 0;
	size_t i = p[0] == '-';

	if (i == n || strspn(p + i, "0123456789") != n - i) {
		owt_fail(l->err, l->errsize, &l->code, XDATA,
		    "%s: not a JSON object of token ids", l->name);
		return -1;
	}
	for (; i < n && v < INT32_MAX; i++)
		v = v * 10 + (uint64_t)(p[i] - '0');
	if ((p[0] == '-' && v != 0) || v >= INT32_MAX) {
		owt_fail(l->err, l->errsize, &l->code, XDATA,
		    "%s: id %.*s is out of range", l->name,
		    (int)(n > 30 ? 30 : n), p);
		return -1;
	}
	*id = (uint32_t)v;
	return 0;
}

/*
 * encoder.json: the tokens by id, and the table of whole tokens. The file
 * is one JSON object, parsed as a record is (json_rec_parse): its keys
 * decoded, its values spans of the text.
 */
static int
load_encoder(struct loader *l, const char *path)
{
	struct bpe *v = l->v;
	struct buf text = { 0 }, key = { 0 };
	struct json_rec rec;
	const struct json_field *f;
	struct query q[64];
	char jerr[512];
	uint32_t i, id, n, dup;
	size_t k;
	int r;

	if (slurp(l, path, &text) < 0)
		return -1;
	json_rec_init(&rec, NULL, 0);
	if ((r = json_rec_parse(&rec, text.p ? text.p : "", text.len, jerr,
	    sizeof jerr)) != 0) {
		if (r == BAD_NOTOBJECT)
			owt_fail(l->err, l->errsize, &l->code, XDATA,
			    "%s: not a JSON object of token ids",
			    l->name);
		else if (r == BAD_EMPTYLINE)
			owt_fail(l->err, l->errsize, &l->code, XDATA,
			    "%s: no tokens", l->name);
		else
			owt_fail(l->err, l->errsize, &l->code, XDATA,
			    "%s: %s", l->name, jerr);
	}
	for (k = 0; k < rec.nf && !l->code; k++) {
		f = &rec.f[k];
		key.len = 0;
		if (f->type != JV_NUMBER)
			owt_fail(l->err, l->errsize, &l->code, XDATA,
			    "%s: not a JSON object of token ids",
			    l->name);
		else if (f->klen == 0 || unalphabet(l, &key,
		    (const unsigned char *)f->key, f->klen) < 0)
			owt_fail(l->err, l->errsize, &l->code, XDATA,
			    "%s: token '%.*s' is not written in "
			    "GPT-2's byte alphabet", l->name,
			    (int)(f->klen > 60 ? 60 : f->klen), f->key);
		else if (token_id(l, rec.line + f->vstart, f->vend - f->vstart,
		    &id) == 0) {
			if (l->ntok == l->cap) {
				l->off = xgrow(l->off, &l->cap, l->ntok + 1,
				    sizeof *l->off);
				l->id = xrealloc(l->id, l->cap * sizeof *l->id);
			}
			l->off[l->ntok] = (uint32_t)l->pool.len;
			l->id[l->ntok++] = id;
			buf_add(&l->pool, key.p, key.len);
		}
	}
	json_rec_free(&rec);
	buf_free(&key);
	buf_free(&text);
	if (l->code)
		return -1;
	if (l->ntok == 0)
		return owt_fail(l->err, l->errsize, &l->code, XDATA,
		    "%s: no tokens", l->name);

	/* Ids must be 0..N-1, each once; the pool is rewritten in id order. */
	v->n = n = (uint32_t)l->ntok;
	v->off = xcalloc((size_t)n + 1, sizeof *v->off);
	for (i = 0; i < n; i++) {
		if ((id = l->id[i]) >= n)
			continue;
		if (v->off[id + 1] != 0) {
			owt_fail(l->err, l->errsize, &l->code, XDATA,
			    "%s: id %u is used twice", l->name, id);
			return -1;
		}
		v->off[id + 1] = (i + 1 < n ? l->off[i + 1] :
		    (uint32_t)l->pool.len) - l->off[i];
	}
	for (id = 0; id < n; id++)
		if (v->off[id + 1] == 0) {
			owt_fail(l->err, l->errsize, &l->code, XDATA,
			    "%s: ids are not 0..%u: %u is missing",
			    l->name, n - 1, id);
			return -1;
		}
	for (i = 0; i < n; i++)
		v->off[i + 1] += v->off[i];
	v->pool = xcalloc(1, l->pool.len + 8);
	for (i = 0; i < n; i++) {
		id = l->id[i];
		memcpy(v->pool + v->off[id], l->pool.p + l->off[i],
		    v->off[id + 1] - v->off[id]);
	}

	v->vbits = 10;
	while ((1u << v->vbits) < 2 * n)
		v->vbits++;
	v->vt = huge_calloc(((size_t)1 << v->vbits) * sizeof *v->vt);
	for (id = 0; id < n; id += 64) {
		for (i = 0; i < 64 && id + i < n; i++)
			query_start(v, &q[i], (unsigned char *)v->pool +
			    v->off[id + i], v->off[id + i + 1] - v->off[id + i]);
		for (i = 0; i < 64 && id + i < n; i++)
			if ((dup = vinsert(v, &q[i], id + i)) != NONE) {
				owt_fail(l->err, l->errsize, &l->code, XDATA,
				    "%s: two ids, %u and %u, have the "
				    "same token", l->name, dup, id + i);
				return -1;
			}
	}
	return 0;
}

static void
pinsert(struct bpe *v, uint32_t left, uint32_t right, uint32_t joined)
{
	uint64_t key = (uint64_t)left << RANKBITS | right, h;
	uint32_t mask = (1u << v->pbits) - 1;
	uint32_t i = (uint32_t)(pair_hash(key) >> 20) & mask;

	while (v->pt[i] != PEMPTY && v->pt[i] >> RANKBITS != key)
		i = (i + 1) & mask;
	v->pt[i] = key << RANKBITS | joined;
	h = pair_hash(key);
	v->pfilter[h >> (64 - FBITS + 6)] |= filter_bits(h);
}

/* The id of the token with the query's bytes, or NONE; lenmask as vfind's. */
static uint32_t
query_end(const struct bpe *v, const struct query *q, uint32_t lenmask)
{
	const struct vslot *s = vfind(v, q->p, q->n, q->w0, q->h, lenmask);

	return s->len ? s->id : NONE;
}

static uint32_t
vlookup(const struct bpe *v, const unsigned char *p, size_t n, uint32_t lenmask)
{
	struct query q;

	query_start(v, &q, p, n);
	return query_end(v, &q, lenmask);
}

/*
 * The pair table of the joins split[0..n): left, right, joined (ranks).
 * Up to four slots in five full: the bit filter answers most lookups
 * that miss, so a fuller table costs few probes, and a smaller one stays
 * in cache longer (512 KB for GPT-2's 50,000 pairs).
 */
static void
pairs_fill(struct bpe *v, uint32_t (*split)[3], size_t n)
{
	size_t k;

	v->pbits = 10;
	while ((1u << v->pbits) < n + n / 4)
		v->pbits++;
	v->pt = huge_calloc(((size_t)1 << v->pbits) * sizeof *v->pt);
	memset(v->pt, 0xff, ((size_t)1 << v->pbits) * sizeof *v->pt);
	v->pfilter = xcalloc((1u << FBITS) / 64, sizeof *v->pfilter);
	for (k = 0; k < n; k++)
		pinsert(v, split[k][0], split[k][1], split[k][2]);
}

/*
 * One step of tiktoken's merge of m parts (ranks r, the rank of the join
 * of each part with the next in j, NONE for none and after the last):
 * the lowest join, the leftmost of equals, is made and its neighbours'
 * joins looked up again. The new count of parts, or 0 when no pair joins.
 */
static inline size_t
merge_step(const struct bpe *v, uint32_t *r, uint32_t *j, size_t m)
{
	uint32_t best = NONE;
	size_t i, at = 0;

	for (i = 0; i + 1 < m; i++)
		if (j[i] < best) {
			best = j[i];
			at = i;
		}
	if (best == NONE)
		return 0;
	r[at] = best;
	m--;
	memmove(r + at + 1, r + at + 2, (m - at - 1) * sizeof *r);
	memmove(j + at + 1, j + at + 2, (m - at - 1) * sizeof *j);
	if (at > 0)
		j[at - 1] = join(v, r[at - 1], r[at]);
	j[at] = at + 1 < m ? join(v, r[at], r[at + 1]) : NONE;
	return m;
}

/*
 * Merge the bytes p[0..n) of a token (n >= 2) as tiktoken does, with
 * every pair that makes a token in the pair table, down to two parts:
 * their ranks in *left and *right, or -1 when the merge stops short (the
 * token is never made by joining). r and j: room for n ranks each.
 */
static int
last_join(const struct bpe *v, const unsigned char *p, size_t n, uint32_t *r,
    uint32_t *j, uint32_t *left, uint32_t *right)
{
	size_t i, m = n;

	for (i = 0; i < n; i++) {
		r[i] = v->byte_rank[p[i]];
		j[i] = i + 1 < n ? join(v, r[i], v->byte_rank[p[i + 1]]) : NONE;
	}
	while (m > 2)
		if ((m = merge_step(v, r, j, m)) == 0)
			return -1;
	if (j[0] == NONE)
		return -1;
	*left = r[0];
	*right = r[1];
	return 0;
}

/*
 * The pair table. tiktoken joins two parts whenever their concatenation
 * is a token, whichever merge line made it; so first every split of a
 * mergeable token into two mergeable tokens goes in (tokens are split in
 * groups, all lookups of a group started before any is finished). But of
 * these only one pair per token ever joins, in any text: the two parts
 * that merging the token's bytes alone ends with. A part made inside a
 * longer text is made by the same joins in the same order as when its
 * bytes are merged alone, for a join across its edges would have made a
 * part across them, and parts only grow. A token whose bytes merge into
 * other tokens is never made by joining (only a whole piece is it). So
 * the table is then rebuilt with those pairs alone, which keeps it small
 * enough to stay in cache.
 */
static void
build_pairs(struct bpe *v)
{
	const unsigned char *p;
	struct query *q = NULL;
	uint32_t id, t, next, left, right, (*split)[3] = NULL, *r;
	size_t n, k, i, nq, qcap = 0, nsplit = 0, cap = 0;

	for (id = 0; id < v->n; id = next) {
		nq = 0;
		for (next = id; next < v->n && nq < 64; next++) {
			if (v->rank[next] == NONE)
				continue;
			p = (unsigned char *)v->pool + v->off[next];
			n = v->off[next + 1] - v->off[next];
			q = xgrow(q, &qcap, nq + 2 * n, sizeof *q);
			for (k = 1; k < n; k++) {
				query_start(v, &q[nq++], p, k);
				query_start(v, &q[nq++], p + k, n - k);
			}
		}
		for (t = id, i = 0; t < next; t++) {
			if (v->rank[t] == NONE)
				continue;
			for (k = v->off[t] + 1; k < v->off[t + 1]; k++, i += 2) {
				left = query_end(v, &q[i], ~0u);
				right = query_end(v, &q[i + 1], ~0u);
				if (left == NONE || right == NONE)
					continue;
				split = xgrow(split, &cap, nsplit + 1, sizeof *split);
				split[nsplit][0] = v->rank[left];
				split[nsplit][1] = v->rank[right];
				split[nsplit++][2] = v->rank[t];
			}
		}
	}
	free(q);
	pairs_fill(v, split, nsplit);
	v->bytepair = xmalloc(65536 * sizeof *v->bytepair);
	for (k = 0; k < 65536; k++)
		v->bytepair[k] = join(v, v->byte_rank[k >> 8], v->byte_rank[k & 255]);

	/* Then only the pair that each token's own merge joins last. */
	r = xmalloc(2 * v->maxmerged * sizeof *r);
	v->lr = xmalloc(v->nrank * sizeof *v->lr);
	v->rlen = xcalloc(v->nrank, sizeof *v->rlen);
	for (k = 0, t = 0; t < v->n; t++) {
		if (v->rank[t] == NONE)
			continue;
		n = v->off[t + 1] - v->off[t];
		v->lr[v->rank[t]][0] = v->lr[v->rank[t]][1] = NONE;
		if (n < 2 || last_join(v, (unsigned char *)v->pool + v->off[t],
		    n, r, r + v->maxmerged, &left, &right) < 0) {
			if (n == 1)
				v->rlen[v->rank[t]] = 1;
			continue;
		}
		v->rlen[v->rank[t]] = (uint32_t)n;
		v->lr[v->rank[t]][0] = left;
		v->lr[v->rank[t]][1] = right;
		split[k][0] = left;
		split[k][1] = right;
		split[k++][2] = v->rank[t];
	}
	free(r);
	huge_free(v->pt, ((size_t)1 << v->pbits) * sizeof *v->pt);
	free(v->pfilter);
	pairs_fill(v, split, k);
	free(split);
}

/*
 * The backtracking encoder's trie: the tokens that merging makes (rlen
 * is set for those alone), built as a plain trie, then laid out in a
 * double array breadth first, each node's children at the first base
 * where they all fit. And each token's longest proper prefix among them.
 * The encoder needs a join to make a token of lower rank than both its
 * parts, as merge lists do; where a vocabulary's ranks do not, bt stays 0.
 */
struct tnode {
	uint32_t child, sib;	/* first child, next sibling: tnode indexes */
	uint32_t tok;
	uint32_t slot;		/* its index in the double array */
	unsigned char c;
};

/* Grow the double array from cap slots to at least want, the new slots free. */
static size_t
da_grow(struct bpe *v, size_t cap, size_t want)
{
	size_t i, n = cap > 0 ? cap : 1024;

	while (n < want)
		n *= 2;
	v->da = xrealloc(v->da, n * sizeof *v->da);
	for (i = cap; i < n; i++) {
		v->da[i].base = 0;
		v->da[i].check = NONE;
		v->da[i].tok = NONE;
	}
	return n;
}

static void
build_trie(struct bpe *v)
{
	struct tnode *tn = NULL;
	size_t ntn = 0, cap = 0, dcap, lo, head, b, k, i;
	uint32_t r, x, *queue, st, nx, c, last;
	const unsigned char *p;

	for (r = 0; r < v->nrank; r++)
		if (v->lr[r][0] != NONE && (v->lr[r][0] >= r || v->lr[r][1] >= r))
			return;

	tn = xgrow(tn, &cap, 1, sizeof *tn);
	memset(&tn[0], 0, sizeof tn[0]);
	tn[0].child = tn[0].sib = NONE;
	tn[0].tok = NONE;
	ntn = 1;
	for (r = 0; r < v->nrank; r++) {
		if (v->rlen[r] == 0)
			continue;
		p = (const unsigned char *)v->pool + v->off[v->id_of_rank[r]];
		for (x = 0, i = 0; i < v->rlen[r]; i++) {
			for (k = tn[x].child; k != NONE && tn[k].c != p[i]; k = tn[k].sib)
				;
			if (k == NONE) {
				tn = xgrow(tn, &cap, ntn + 1, sizeof *tn);
				k = ntn++;
				tn[k].child = NONE;
				tn[k].sib = tn[x].child;
				tn[k].tok = NONE;
				tn[k].c = p[i];
				tn[x].child = (uint32_t)k;
			}
			x = (uint32_t)k;
		}
		tn[x].tok = r;
	}

	v->da = NULL;
	dcap = da_grow(v, 0, ntn + 512);
	v->da[0].check = NONE - 1;	/* taken, and never a parent's index */
	queue = xmalloc(ntn * sizeof *queue);
	queue[0] = 0;
	tn[0].slot = 0;
	v->nda = 1;
	for (head = 0, k = 1, lo = 1; head < k; head++) {
		x = queue[head];
		if (tn[x].child == NONE)
			continue;
		while (v->da[lo].check != NONE)
			if (++lo + 257 > dcap)
				dcap = da_grow(v, dcap, 2 * dcap);
		/* The lowest base that puts every child in a free slot. */
		for (b = lo > tn[tn[x].child].c ? lo - tn[tn[x].child].c : 1;; b++) {
			if (b + 257 > dcap)
				dcap = da_grow(v, dcap, 2 * dcap);
			for (c = tn[x].child; c != NONE &&
			    v->da[b + tn[c].c].check == NONE; c = tn[c].sib)
				;
			if (c == NONE)
				break;
		}
		v->da[tn[x].slot].base = (uint32_t)b;
		for (c = tn[x].child; c != NONE; c = tn[c].sib) {
			tn[c].slot = (uint32_t)(b + tn[c].c);
			v->da[tn[c].slot].check = tn[x].slot;
			v->da[tn[c].slot].tok = tn[c].tok;
			if (tn[c].slot + 1 > v->nda)
				v->nda = tn[c].slot + 1;
			queue[k++] = c;
		}
	}
	/* Room for a step from any node: base + 255 is always in the array. */
	for (k = 0; k < v->nda; k++)
		if (v->da[k].base + 256 > v->nda && v->da[k].check != NONE)
			v->nda = v->da[k].base + 256;
	v->da = xrealloc(v->da, v->nda * sizeof *v->da);
	v->da[0].check = NONE;
	free(queue);
	free(tn);

	v->pre = xmalloc(v->nrank * sizeof *v->pre);
	for (r = 0; r < v->nrank; r++) {
		v->pre[r] = last = NONE;
		p = (const unsigned char *)v->pool + v->off[v->id_of_rank[r]];
		for (st = 0, i = 0; i + 1 < v->rlen[r]; i++) {
			nx = v->da[st].base + p[i];
			st = nx;
			if (v->da[st].tok != NONE)
				last = v->da[st].tok;
		}
		v->pre[r] = last;
	}
	v->bt = 1;
}

/* One line of vocab.bpe on its way through load_merges. */
struct merge_line {
	const char *line;
	size_t len, ab, split;	/* A B unalphabeted: ab[0..split), ab[split..) */
	unsigned long lineno;
	struct query q[3];	/* A, B, AB */
};

/*
 * vocab.bpe: the rank of every token the merges make; then the pair table.
 * Lines go in groups, their lookups started before any is finished.
 */
static int
load_merges(struct loader *l, const char *path)
{
	struct bpe *v = l->v;
	struct buf text = { 0 }, ab = { 0 };
	struct merge_line group[64], *g;
	const unsigned char *p;
	char *line, *end, *sp;
	unsigned long lineno = 0;
	uint32_t id, left, right, rank = 256;
	size_t n, k, ng;
	int rc = -1;

	if (slurp(l, path, &text) < 0)
		return -1;
	for (line = text.p; line < text.p + text.len;) {
		ab.len = 0;
		for (ng = 0; ng < 64 && line < text.p + text.len; line = end + 1) {
			end = memchr(line, '\n', (size_t)(text.p + text.len - line));
			if (end == NULL)
				end = text.p + text.len;
			lineno++;
			n = (size_t)(end - line);
			if (n > 0 && line[n - 1] == '\r')
				n--;
			if (n == 0 || (lineno == 1 && strncmp(line, "#version", 8) == 0))
				continue;
			sp = memchr(line, ' ', n);
			if (sp == NULL || sp == line || sp == line + n - 1 ||
			    memchr(sp + 1, ' ', n - (size_t)(sp + 1 - line)) != NULL) {
				owt_fail(l->err, l->errsize, &l->code, XDATA,
				    "%s:%lu: not a merge 'A B'", l->name,
				    lineno);
				goto out;
			}
			g = &group[ng++];
			g->line = line;
			g->len = n;
			g->lineno = lineno;
			g->ab = ab.len;
			if (unalphabet(l, &ab, (unsigned char *)line, (size_t)(sp - line)) < 0 ||
			    (g->split = ab.len - g->ab, unalphabet(l, &ab,
			    (unsigned char *)sp + 1, n - (size_t)(sp + 1 - line))) < 0) {
				owt_fail(l->err, l->errsize, &l->code, XDATA,
				    "%s:%lu: '%.*s' is not written in "
				    "GPT-2's byte alphabet", l->name, lineno, (int)n, line);
				goto out;
			}
		}
		for (k = 0; k < ng; k++) {
			g = &group[k];
			p = (unsigned char *)ab.p + g->ab;
			n = (k + 1 < ng ? group[k + 1].ab : ab.len) - g->ab;
			query_start(v, &g->q[0], p, g->split);
			query_start(v, &g->q[1], p + g->split, n - g->split);
			query_start(v, &g->q[2], p, n);
		}
		for (k = 0; k < ng; k++) {
			g = &group[k];
			left = query_end(v, &g->q[0], ~NOTMERGE);
			right = query_end(v, &g->q[1], ~NOTMERGE);
			id = query_end(v, &g->q[2], ~NOTMERGE);
			if (left == NONE || right == NONE || id == NONE) {
				owt_fail(l->err, l->errsize, &l->code, XDATA,
				    "%s:%lu: '%.*s' %s a token that is not "
				    "in the vocabulary", l->name, g->lineno, (int)g->len,
				    g->line, left == NONE || right == NONE ? "names" :
				    "makes");
				goto out;
			}
			if (v->rank[id] != NONE) {
				owt_fail(l->err, l->errsize, &l->code, XDATA,
				    "%s:%lu: '%.*s' makes a token that an "
				    "earlier line made", l->name, g->lineno, (int)g->len,
				    g->line);
				goto out;
			}
			if (rank == RANKMAX) {
				owt_fail(l->err, l->errsize, &l->code, XDATA,
				    "%s:%lu: more than %u merges", l->name,
				    g->lineno, RANKMAX - 256);
				goto out;
			}
			v->rank[id] = rank++;
		}
	}
	v->nrank = rank;
	v->id_of_rank = xmalloc(rank * sizeof *v->id_of_rank);
	v->rank_is_id = 1;
	for (id = 0; id < v->n; id++)
		if (v->rank[id] != NONE) {
			v->id_of_rank[v->rank[id]] = id;
			v->rank_is_id &= v->rank[id] == id;
		}

	/* Mergeable tokens become visible to whole-piece lookups. */
	for (k = 0; k < (size_t)1 << v->vbits; k++)
		if (v->vt[k].len != 0 && v->rank[v->vt[k].id] != NONE) {
			v->vt[k].len &= ~NOTMERGE;
			if (v->vt[k].len > v->maxmerged)
				v->maxmerged = v->vt[k].len;
		}
	build_pairs(v);
	build_trie(v);
	rc = 0;
out:
	buf_free(&text);
	buf_free(&ab);
	return rc;
}

/* ---- the image ---- */

/*
 * A loaded vocabulary written out whole, for bpe_load to use in place:
 * a header, then each array at a multiple of 64 bytes. The build writes
 * the default vocabulary's (contrib/build/mkimage.c) and links it into this
 * file, so that a program starts with every table ready and pages in only
 * what it reads. It is read by the code that wrote it, on the same host:
 * the header's check catches a stale or foreign image, not a hostile one.
 */
#define IMAGE_MAGIC "owt-bpe\n"
#define IMAGE_VERSION 2	/* 2: the two-bit pair filter */
#define NSECT 12

struct image_hdr {
	char magic[8];
	uint32_t version, hdrsize;	/* IMAGE_VERSION, sizeof (struct image_hdr) */
	uint32_t n, eod, nrank, vbits, pbits, maxmerged, bt, nda, rank_is_id;
	uint32_t byte_id[256], byte_rank[256];
	uint64_t at[NSECT], size[NSECT];	/* each array's offset and size */
};

/* v's arrays in image order, and their sizes. */
static void
image_sections(const struct bpe *v, const void *p[NSECT], uint64_t size[NSECT])
{
	p[0] = v->off;
	size[0] = ((uint64_t)v->n + 1) * sizeof *v->off;
	p[1] = v->pool;
	size[1] = (uint64_t)v->off[v->n] + 8;
	p[2] = v->rank;
	size[2] = (uint64_t)v->n * sizeof *v->rank;
	p[3] = v->id_of_rank;
	size[3] = (uint64_t)v->nrank * sizeof *v->id_of_rank;
	p[4] = v->bytepair;
	size[4] = 65536 * sizeof *v->bytepair;
	p[5] = v->vt;
	size[5] = ((uint64_t)1 << v->vbits) * sizeof *v->vt;
	p[6] = v->pt;
	size[6] = ((uint64_t)1 << v->pbits) * sizeof *v->pt;
	p[7] = v->pfilter;
	size[7] = ((uint64_t)1 << FBITS) / 8;
	p[8] = v->rlen;
	size[8] = (uint64_t)v->nrank * sizeof *v->rlen;
	p[9] = v->lr;
	size[9] = (uint64_t)v->nrank * sizeof *v->lr;
	p[10] = v->pre;
	size[10] = v->bt ? (uint64_t)v->nrank * sizeof *v->pre : 0;
	p[11] = v->da;
	size[11] = (uint64_t)v->nda * sizeof *v->da;
}

void
bpe_image_write(const struct bpe *v, struct buf *out)
{
	struct image_hdr h;
	const void *p[NSECT];
	uint64_t at;
	size_t k, base = out->len;

	memset(&h, 0, sizeof h);
	memcpy(h.magic, IMAGE_MAGIC, 8);
	h.version = IMAGE_VERSION;
	h.hdrsize = sizeof h;
	h.n = v->n;
	h.eod = v->eod;
	h.nrank = v->nrank;
	h.vbits = v->vbits;
	h.pbits = v->pbits;
	h.maxmerged = v->maxmerged;
	h.bt = (uint32_t)v->bt;
	h.rank_is_id = (uint32_t)v->rank_is_id;
	h.nda = v->nda;
	memcpy(h.byte_id, v->byte_id, sizeof h.byte_id);
	memcpy(h.byte_rank, v->byte_rank, sizeof h.byte_rank);
	image_sections(v, p, h.size);
	for (at = sizeof h, k = 0; k < NSECT; k++) {
		at = (at + 63) & ~(uint64_t)63;
		h.at[k] = at;
		at += h.size[k];
	}
	buf_add(out, (const char *)&h, sizeof h);
	for (k = 0; k < NSECT; k++) {
		while (out->len - base < h.at[k])
			buf_addc(out, 0);
		buf_add(out, p[k], h.size[k]);
	}
}

/* The vocabulary whose image is img[0..size), or NULL if it is not one. */
static struct bpe *
image_open(const unsigned char *img, size_t size)
{
	const struct image_hdr *h = (const void *)img;
	struct bpe *v;
	const void *p[NSECT];
	uint64_t want[NSECT];
	size_t k;

	if (size < sizeof *h || ((uintptr_t)img & 63) != 0 ||
	    memcmp(h->magic, IMAGE_MAGIC, 8) != 0 ||
	    h->version != IMAGE_VERSION || h->hdrsize != sizeof *h)
		return NULL;
	for (k = 0; k < NSECT; k++)
		if (h->at[k] % 64 != 0 || h->at[k] > size ||
		    h->size[k] > size - h->at[k])
			return NULL;
	v = xcalloc(1, sizeof *v);
	v->image = 1;
#define FROM_HEADER(f) v->f = h->f
	FROM_HEADER(n);
	FROM_HEADER(eod);
	FROM_HEADER(nrank);
	FROM_HEADER(vbits);
	FROM_HEADER(pbits);
	FROM_HEADER(maxmerged);
	FROM_HEADER(bt);
	FROM_HEADER(rank_is_id);
	FROM_HEADER(nda);
#undef FROM_HEADER
	memcpy(v->byte_id, h->byte_id, sizeof v->byte_id);
	memcpy(v->byte_rank, h->byte_rank, sizeof v->byte_rank);
	v->off = (uint32_t *)(img + h->at[0]);
	v->pool = (char *)(img + h->at[1]);
	v->rank = (uint32_t *)(img + h->at[2]);
	v->id_of_rank = (uint32_t *)(img + h->at[3]);
	v->bytepair = (uint32_t *)(img + h->at[4]);
	v->vt = (struct vslot *)(img + h->at[5]);
	v->pt = (uint64_t *)(img + h->at[6]);
	v->pfilter = (uint64_t *)(img + h->at[7]);
	v->rlen = (uint32_t *)(img + h->at[8]);
	v->lr = (uint32_t (*)[2])(img + h->at[9]);
	v->pre = (uint32_t *)(img + h->at[10]);
	v->da = (struct dnode *)(img + h->at[11]);
	if (h->size[0] != ((uint64_t)v->n + 1) * sizeof *v->off) {
		free(v);
		return NULL;
	}
	image_sections(v, p, want);
	for (k = 0; k < NSECT; k++)
		if (want[k] != h->size[k]) {
			free(v);
			return NULL;
		}
	return v;
}

#ifdef BPE_IMAGE
/* The default vocabulary's image, as the build wrote it (Makefile). */
__asm__(".pushsection .rodata.owt_bpe_image, \"a\", @progbits\n"
    ".balign 64\n"
    "owt_bpe_image:\n"
    ".incbin \"" BPE_IMAGE "\"\n"
    "owt_bpe_image_end:\n"
    ".popsection\n");
extern const unsigned char owt_bpe_image[] __attribute__((visibility("hidden")));
extern const unsigned char owt_bpe_image_end[] __attribute__((visibility("hidden")));
#else
static const unsigned char owt_bpe_image[1], *const owt_bpe_image_end = owt_bpe_image;
#endif

/* The default vocabulary, or NULL with err. */
static struct bpe *
load_default(int *code, char *err, size_t errsize)
{
	struct bpe *v;

	v = image_open(owt_bpe_image, (size_t)(owt_bpe_image_end - owt_bpe_image));
	if (v == NULL)
		owt_fail(err, errsize, code, XSYS, "this program was built "
		    "without a usable GPT-2 vocabulary image");
	return v;
}

struct bpe *
bpe_load(const char *encoder_json, const char *vocab_bpe, char *err,
    size_t errsize, int *code)
{
	struct loader l;
	struct bpe *v;
	unsigned char byte;
	unsigned b;
	uint32_t id;

	if (encoder_json == NULL || vocab_bpe == NULL)
		return load_default(code, err, errsize);
	memset(&l, 0, sizeof l);
	l.err = err;
	l.errsize = errsize;
	v = l.v = xcalloc(1, sizeof *v);
	byte_alphabet(l.uni2byte, l.rank_of_byte);
	l.name = encoder_json;
	if (load_encoder(&l, encoder_json) < 0)
		goto fail;
	v->rank = xmalloc(v->n * sizeof *v->rank);
	memset(v->rank, 0xff, v->n * sizeof *v->rank);
	for (b = 0; b < 256; b++) {
		byte = (unsigned char)b;
		id = vlookup(v, &byte, 1, ~NOTMERGE);
		if (id == NONE) {
			owt_fail(l.err, l.errsize, &l.code, XDATA,
			    "%s: byte 0x%02x has no token", l.name, b);
			goto fail;
		}
		v->byte_id[b] = id;
		v->byte_rank[b] = v->rank[id] = l.rank_of_byte[b];
	}
	l.name = vocab_bpe;
	if (load_merges(&l, vocab_bpe) < 0)
		goto fail;
	v->eod = vlookup(v, (const unsigned char *)"<|endoftext|>", 13, ~NOTMERGE);
	if (v->eod != NONE && v->rank[v->eod] != NONE)
		v->eod = BPE_NOID;
	goto done;
fail:
	*code = l.code;
	bpe_free(v);
	v = NULL;
done:
	free(l.off);
	free(l.id);
	buf_free(&l.pool);
	return v;
}

int
bpe_check_tokenizer(const struct opt *o, const char *arg, char *err,
    size_t errsize)
{
	if (strcmp(arg, "GPT2BPETokenizer") == 0)
		return 0;
	return owt_fail(err, errsize, NULL, XUSAGE,
	    "--%s: '%s' is not GPT2BPETokenizer", o->name,
	    arg);
}

void
bpe_free(struct bpe *v)
{
	if (v == NULL)
		return;
	if (!v->image) {
		free(v->off);
		free(v->pool);
		free(v->rank);
		free(v->id_of_rank);
		free(v->bytepair);
		free(v->pfilter);
		huge_free(v->vt, ((size_t)1 << v->vbits) * sizeof *v->vt);
		huge_free(v->pt, ((size_t)1 << v->pbits) * sizeof *v->pt);
		free(v->rlen);
		free(v->lr);
		free(v->pre);
		free(v->da);
	}
	free(v);
}

uint32_t
bpe_nvocab(const struct bpe *v)
{
	return v->n;
}

uint32_t
bpe_eod(const struct bpe *v)
{
	return v->eod;
}

/* ---- the pre-tokenizer ---- */

/*
 * The class of each byte: an ASCII character's own (UC_*), or UB for a
 * byte of a longer UTF-8 sequence (or not UTF-8), whose character's class
 * mb_class finds.
 */
#define UB 4
#define L_ UC_LETTER
#define N_ UC_NUMBER
#define S_ UC_SPACE
static const uint8_t byte_class[256] = {
	['\t'] = S_, ['\n'] = S_, ['\v'] = S_, ['\f'] = S_, ['\r'] = S_,
	[' '] = S_, ['0' ... '9'] = N_, ['A' ... 'Z'] = L_, ['a' ... 'z'] = L_,
	[0x80 ... 0xff] = UB,
};
#undef L_
#undef N_
#undef S_

/*
 * The class of the character at s[i] (s[i] >= 0x80), and its length in
 * *len. Not inlined: the ASCII paths that call it stay small.
 */
static __attribute__((noinline)) unsigned
mb_class(const unsigned char *s, size_t n, size_t i, size_t *len)
{
	const unsigned char *c = s + i;
	uint32_t cp;

	switch ((*len = utf8_seqlen(c, n - i))) {
	case 2:
		cp = (uint32_t)(c[0] & 0x1f) << 6 | (c[1] & 0x3f);
		break;
	case 3:
		cp = (uint32_t)(c[0] & 0x0f) << 12 | (uint32_t)(c[1] & 0x3f) << 6 |
		    (c[2] & 0x3f);
		break;
	case 4:
		cp = (uint32_t)(c[0] & 0x07) << 18 | (uint32_t)(c[1] & 0x3f) << 12 |
		    (uint32_t)(c[2] & 0x3f) << 6 | (c[3] & 0x3f);
		break;
	default:
		*len = 1;
		return UC_OTHER;
	}
	return uniclass(cp);
}

/* The class of the character at s[i], and its length in *len. */
static inline unsigned
char_class(const unsigned char *s, size_t n, size_t i, size_t *len)
{
	unsigned k = byte_class[s[i]];

	if (k != UB) {
		*len = 1;
		return k;
	}
	return mb_class(s, n, i, len);
}

#define ONES 0x0101010101010101ULL
#define HIGH (0x80 * ONES)

/*
 * The high bit of each byte of w that is not an ASCII letter. On the
 * bytes folded to lower case and 7 bits, x + 0x1f reaches 0x80 from 'a'
 * on and x + 0x05 from '{' on, without carries between bytes.
 */
static inline uint64_t
not_letters(uint64_t w)
{
	uint64_t x = (w | 0x20 * ONES) & ~HIGH;

	return ~(((x + 0x1f * ONES) & ~(x + 0x05 * ONES)) & ~w) & HIGH;
}

/* The same for ASCII digits: x + 0x76 reaches 0x80 from 10 on. */
static inline uint64_t
not_digits(uint64_t w)
{
	return ((((w ^ 0x30 * ONES) & ~HIGH) + 0x76 * ONES) | w) & HIGH;
}

/*
 * The class of the character at s[i] (s[i] >= 0x80) as mb_class, inline
 * for the common two- and three-byte forms.
 */
static inline unsigned
mb_class_fast(const unsigned char *s, size_t n, size_t i, size_t *len)
{
	unsigned c = s[i];

	if (c >= 0xc2 && c <= 0xdf && i + 1 < n && (s[i + 1] & 0xc0) == 0x80) {
		*len = 2;
		return uniclass((uint32_t)(c & 0x1f) << 6 | (s[i + 1] & 0x3f));
	}
	if (c >= 0xe0 && c <= 0xef && i + 2 < n && (s[i + 1] & 0xc0) == 0x80 &&
	    (s[i + 2] & 0xc0) == 0x80 && (c != 0xe0 || s[i + 1] >= 0xa0) &&
	    (c != 0xed || s[i + 1] <= 0x9f)) {
		*len = 3;
		return uniclass((uint32_t)(c & 0x0f) << 12 |
		    (uint32_t)(s[i + 1] & 0x3f) << 6 | (s[i + 2] & 0x3f));
	}
	return mb_class(s, n, i, len);
}

/*
 * run_end from a byte s[i] >= 0x80 on: characters of class k, multi-byte
 * or ASCII. Out of line: text that is mostly ASCII rarely needs it.
 */
static __attribute__((noinline)) size_t
run_end_mb(const unsigned char *s, size_t n, size_t i, unsigned k)
{
	size_t len;

	for (;;) {
		while (i < n && s[i] >= 0x80) {
			if (mb_class_fast(s, n, i, &len) != k)
				return i;
			i += len;
		}
		while (i < n && byte_class[s[i]] == k)
			i++;
		if (i >= n || s[i] < 0x80)
			return i;
	}
}

/*
 * The end of the run of characters of class k that starts at s[i]:
 * ASCII letters and digits 8 bytes at a time (the lowest flagged byte is
 * exact), other ASCII a byte at a time, the rest by run_end_mb.
 */
static inline __attribute__((always_inline)) size_t
run_end(const unsigned char *s, size_t n, size_t i, unsigned k)
{
	uint64_t m;

	if (k == UC_LETTER || k == UC_NUMBER) {
		for (; i + 8 <= n; i += 8) {
			m = load8(s + i);
			m = k == UC_LETTER ? not_letters(m) : not_digits(m);
			if (m != 0) {
				i += (size_t)__builtin_ctzll(m) >> 3;
				goto edge;
			}
		}
	}
	while (i < n && byte_class[s[i]] == k)
		i++;
edge:
	if (i >= n || s[i] < 0x80)
		return i;
	return run_end_mb(s, n, i, k);
}

/*
 * The end of the run of white space that starts at s[i]: a run followed
 * by a non-space gives its last character to the next piece (\s+(?!\S)),
 * unless the run is that one character (\s+).
 */
static size_t
space_end(const unsigned char *s, size_t n, size_t i)
{
	size_t len, last = i, j;

	char_class(s, n, i, &len);
	for (j = i + len; j < n; j += len) {
		if (char_class(s, n, j, &len) != UC_SPACE)
			return last > i ? last : j;
		last = j;
	}
	return n;
}

/*
 * piece_end where the character at s[at] decides and is not ASCII: at is
 * i, or i + 1 after a space.
 */
static __attribute__((noinline)) size_t
piece_end_mb(const unsigned char *s, size_t n, size_t i, size_t at)
{
	size_t len;
	unsigned k = mb_class_fast(s, n, at, &len);

	if (k != UC_SPACE)
		return run_end(s, n, at + len, k);
	return space_end(s, n, i);
}

/*
 * The end of the piece that starts at s[i]: the alternatives of the
 * pattern in bpe.h, first match wins.
 */
static inline __attribute__((always_inline)) size_t
piece_end(const unsigned char *s, size_t n, size_t i)
{
	unsigned c = s[i], k = byte_class[c], k2;

	if (k == UC_LETTER || k == UC_NUMBER)
		return run_end(s, n, i + 1, k);
	if (c == ' ' && i + 1 < n) {
		if ((k2 = byte_class[s[i + 1]]) < UC_SPACE)
			return run_end(s, n, i + 2, k2);
		if (k2 == UB)
			return piece_end_mb(s, n, i, i + 1);
	}
	if (k == UB)
		return piece_end_mb(s, n, i, i);
	if (c == '\'' && i + 1 < n) {
		c = s[i + 1];
		if (c == 's' || c == 'd' || c == 'm' || c == 't')
			return i + 2;
		if (i + 2 < n && ((c == 'l' && s[i + 2] == 'l') ||
		    (c == 'v' && s[i + 2] == 'e') || (c == 'r' && s[i + 2] == 'e')))
			return i + 3;
	}
	if (k != UC_SPACE)
		return run_end(s, n, i + 1, k);
	/* One white space character before other ASCII: \s+ takes it alone. */
	if (i + 1 < n && byte_class[s[i + 1]] < UC_SPACE)
		return i + 1;
	return space_end(s, n, i);
}

size_t
bpe_piece(const char *text, size_t len)
{
	return piece_end((const unsigned char *)text, len, 0);
}

/* ---- merging ---- */

struct bpe_state *
bpe_state_new(const struct bpe *v, size_t cache)
{
	struct bpe_state *s = xcalloc(1, sizeof *s);
	size_t n = cache == 0 ? CMAX : CMIN;

	while (n < CMAX && 2 * n * sizeof *s->cache <= cache)
		n *= 2;
	s->v = v;
	s->cmask = n - 1;
	s->cache = huge_calloc(n * sizeof *s->cache);
	s->idsize = v->n <= 65536 ? 2 : 4;
	return s;
}

void
bpe_state_free(struct bpe_state *s)
{
	if (s == NULL)
		return;
	huge_free(s->cache, (s->cmask + 1) * sizeof *s->cache);
	free(s->tmp.v);
	free(s);
}

static inline void
ids_reserve(struct bpe_ids *out, size_t extra)
{
	if (out->cap - out->n < extra)
		out->v = xgrow(out->v, &out->cap, out->n + extra, sizeof *out->v);
}

/*
 * The merges of tiktoken's byte_pair_merge: while two adjacent parts join
 * into a token, join the pair whose token has the lowest rank, leftmost
 * first. Short pieces keep their parts in an array and scan it for the
 * lowest rank, as tiktoken does (merge_short16, merge_short); longer ones
 * go to the backtracking encoder, which gives the same ids in linear time
 * (merge_bt), or else to a tree (merge_huge).
 */
#define SHORT 64

/* Pieces a batch of bpe_encode. */
#define PBATCH 32

/* Merge p[0..n) (2 <= n <= SHORT); the parts' ranks go to r, their number is returned. */
static size_t
merge_short(const struct bpe *v, const unsigned char *p, size_t n,
    uint32_t *r)
{
	uint32_t j[SHORT];
	size_t i, m = n, k;

	for (i = 0; i + 1 < n; i++) {
		r[i] = v->byte_rank[p[i]];
		j[i] = v->bytepair[p[i] << 8 | p[i + 1]];
	}
	r[n - 1] = v->byte_rank[p[n - 1]];
	j[n - 1] = NONE;
	while ((k = merge_step(v, r, j, m)) != 0)
		m = k;
	return m;
}

#define SHORT16 32

#ifdef __SSE2__
/*
 * merge_short for pieces of at most 32 bytes where every rank fits in 16
 * bits: the ranks of the joins by position in four vectors of 16-bit
 * lanes, the lowest (the leftmost of equals) found with a few vector
 * minimums; the parts stay where they start, a bit each in live.
 */
/* x with the lanes whose number in idx is k's set to val's. */
static inline __m128i
lane_set(__m128i x, __m128i idx, __m128i k, __m128i val)
{
	__m128i m = _mm_cmpeq_epi16(idx, k);

	return _mm_or_si128(_mm_andnot_si128(m, x), _mm_and_si128(m, val));
}

static inline __attribute__((always_inline)) size_t
merge_short16_w(const struct bpe *v, const unsigned char *p, size_t n,
    uint32_t *out, const int wide)
{
	int16_t j[SHORT16] __attribute__((aligned(16)));
	uint32_t r[SHORT16], live, rest, before, best, at, b, q, jr, jl;
	__m128i x0, x1, x2, x3, x, bb, k, k2, jv;
	const __m128i none = _mm_set1_epi16(0x7fff);
	const __m128i i0 = _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7);
	const __m128i i1 = _mm_add_epi16(i0, _mm_set1_epi16(8));
	const __m128i i2 = _mm_add_epi16(i0, _mm_set1_epi16(16));
	const __m128i i3 = _mm_add_epi16(i0, _mm_set1_epi16(24));
	size_t i, m = 0;
	uint64_t mask;

	/* The ranks go in with the sign bit flipped: signed minimums then work. */
	for (i = 0; i + 1 < n; i++) {
		r[i] = v->byte_rank[p[i]];
		j[i] = (int16_t)(v->bytepair[p[i] << 8 | p[i + 1]] ^ 0x8000);
	}
	r[n - 1] = v->byte_rank[p[n - 1]];
	for (i = n - 1; i < (wide ? 32u : 16u); i++)
		j[i] = 0x7fff;
	live = n == 32 ? ~0u : (1u << n) - 1;
	/*
	 * From here on the joins stay in registers: a lane is set by a
	 * compare of the lane numbers (lane_set), not by a store that the
	 * next step's loads would wait on, as a narrow store does not
	 * forward to a wider load.
	 */
	x0 = _mm_load_si128((const __m128i *)j);
	x1 = _mm_load_si128((const __m128i *)j + 1);
	x2 = x3 = x0;
	if (wide) {
		x2 = _mm_load_si128((const __m128i *)j + 2);
		x3 = _mm_load_si128((const __m128i *)j + 3);
	}
	for (;;) {
		x = _mm_min_epi16(x0, x1);
		if (wide)
			x = _mm_min_epi16(x, _mm_min_epi16(x2, x3));
		x = _mm_min_epi16(x, _mm_shuffle_epi32(x, 0x4e));
		x = _mm_min_epi16(x, _mm_shuffle_epi32(x, 0xb1));
		x = _mm_min_epi16(x, _mm_shufflelo_epi16(x, 0xb1));
		best = ((uint32_t)_mm_cvtsi128_si32(x) ^ 0x8000) & 0xffff;
		if (best == 0xffff)
			break;
		bb = _mm_shufflelo_epi16(x, 0);
		bb = _mm_unpacklo_epi64(bb, bb);
		mask = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi16(x0, bb)) |
		    (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi16(x1, bb)) << 16;
		if (wide && mask == 0)
			mask = ((uint64_t)(uint32_t)_mm_movemask_epi8(
			    _mm_cmpeq_epi16(x2, bb)) | (uint64_t)(uint32_t)
			    _mm_movemask_epi8(_mm_cmpeq_epi16(x3, bb)) << 16) << 32;
		at = (uint32_t)__builtin_ctzll(mask) >> 1;
		/* Join the part at at and the next one, b. */
		b = (uint32_t)__builtin_ctz(live & (~0u << (at + 1)));
		live &= ~(1u << b);
		r[at] = best;
		rest = live & (~0u << (at + 1));
		jr = rest == 0 ? 0xffff : join(v, best, r[__builtin_ctz(rest)]);
		before = live & ((1u << at) - 1);
		/* Part b is gone; the new part and the one before it join anew. */
		k = _mm_set1_epi16((short)b);
		k2 = _mm_set1_epi16((short)at);
		jv = _mm_set1_epi16((short)(jr ^ 0x8000));
		x0 = lane_set(lane_set(x0, i0, k, none), i0, k2, jv);
		x1 = lane_set(lane_set(x1, i1, k, none), i1, k2, jv);
		if (wide) {
			x2 = lane_set(lane_set(x2, i2, k, none), i2, k2, jv);
			x3 = lane_set(lane_set(x3, i3, k, none), i3, k2, jv);
		}
		if (before != 0) {
			q = 31 - (uint32_t)__builtin_clz(before);
			jl = join(v, r[q], best);
			k = _mm_set1_epi16((short)q);
			jv = _mm_set1_epi16((short)(jl ^ 0x8000));
			x0 = lane_set(x0, i0, k, jv);
			x1 = lane_set(x1, i1, k, jv);
			if (wide) {
				x2 = lane_set(x2, i2, k, jv);
				x3 = lane_set(x3, i3, k, jv);
			}
		}
	}
	for (; live != 0; live &= live - 1)
		out[m++] = r[__builtin_ctz(live)];
	return m;
}

static size_t
merge_short16(const struct bpe *v, const unsigned char *p, size_t n,
    uint32_t *out)
{
	return n > 16 ? merge_short16_w(v, p, n, out, 1) :
	    merge_short16_w(v, p, n, out, 0);
}
#endif

/*
 * Where the backtracking encoder cannot be used (a vocabulary whose joins
 * make tokens of lower rank than their parts), pieces over SHORT bytes are
 * merged in compact state, allocated for the piece and freed after it, so
 * that a thread keeps nothing in proportion to the longest piece it has
 * seen, and a piece of n bytes needs at most 4.7n bytes. The parts are
 * marked by a bit at their first byte; joined[i] is the rank of the token
 * that the part at i and the next one make, or NONE (also where no part
 * starts). The parts' own ranks are not kept: a part is a token, so what
 * two parts make is the token spelled by their bytes, looked up whole. A
 * tree over blocks of TB positions holds each block's lowest joined rank:
 * the lowest, leftmost first, is found in O(log n), and a join updates a
 * block or three and the paths above them.
 */
#define TBITS 5
#define TB (1u << TBITS)

struct huge {
	const unsigned char *end;
	size_t n, nleaf;	/* nleaf: a power of two, at least the blocks */
	uint32_t *joined;
	uint64_t *start;	/* a bit per byte: a part starts there */
	uint32_t *tree;		/* [1, nleaf): inner nodes; [nleaf, 2 nleaf): blocks */
};

/* The rank of the mergeable token spelled p[0..n), or NONE. */
static inline uint32_t
span_rank(const struct bpe *v, const unsigned char *p, size_t n,
    const unsigned char *end)
{
	const struct vslot *s;
	uint64_t w0;

	if (n > v->maxmerged)
		return NONE;
	w0 = load_w0(p, n, end);
	s = vfind(v, p, n, w0, hash_piece(p, n, w0), ~0u);
	return s->len ? v->rank[s->id] : NONE;
}

/* The first part after the one at i, or n. */
static inline size_t
next_part(const struct huge *h, size_t i)
{
	size_t w = ++i >> 6, nw = (h->n + 63) >> 6;
	uint64_t m;

	if (i >= h->n)
		return h->n;
	m = h->start[w] & (~0ULL << (i & 63));
	while (m == 0) {
		if (++w == nw)
			return h->n;
		m = h->start[w];
	}
	return w << 6 | (size_t)__builtin_ctzll(m);
}

/* The part before the one at i (i > 0; a part starts at 0). */
static inline size_t
prev_part(const struct huge *h, size_t i)
{
	size_t w = --i >> 6;
	uint64_t m = h->start[w] & (~0ULL >> (63 - (i & 63)));

	while (m == 0)
		m = h->start[--w];
	return w << 6 | (size_t)(63 - __builtin_clzll(m));
}

/* Recompute block j's lowest rank and the path above it. */
static void
huge_fix(struct huge *h, size_t j)
{
	const uint32_t *jn = h->joined + (j << TBITS);
	size_t i, k, len = h->n - (j << TBITS);
	uint32_t low = NONE, x;

	if (len > TB)
		len = TB;
	for (i = 0; i < len; i++)
		low = jn[i] < low ? jn[i] : low;
	h->tree[h->nleaf + j] = low;
	for (k = (h->nleaf + j) / 2; k > 0; k /= 2) {
		x = h->tree[2 * k] < h->tree[2 * k + 1] ? h->tree[2 * k] :
		    h->tree[2 * k + 1];
		if (h->tree[k] == x)
			break;
		h->tree[k] = x;
	}
}

static size_t
merge_huge(const struct bpe *v, const unsigned char *p, size_t n, uint32_t *r)
{
	struct huge h;
	size_t nw = (n + 63) >> 6, nb = (n + TB - 1) >> TBITS, i, k, a, b, c, q, m;
	uint32_t best;

	h.end = p + n;
	h.n = n;
	for (h.nleaf = 1; h.nleaf < nb; h.nleaf *= 2)
		;
	h.joined = xmalloc(n * sizeof *h.joined);
	h.start = xmalloc(nw * sizeof *h.start);
	h.tree = xmalloc(2 * h.nleaf * sizeof *h.tree);
	for (i = 0; i + 1 < n; i++)
		h.joined[i] = v->bytepair[p[i] << 8 | p[i + 1]];
	h.joined[n - 1] = NONE;
	memset(h.start, 0xff, nw * sizeof *h.start);
	if (n & 63)
		h.start[nw - 1] = ~0ULL >> (64 - (n & 63));
	for (k = 0; k < h.nleaf; k++)
		h.tree[h.nleaf + k] = NONE;
	for (k = 1; k < h.nleaf; k++)
		h.tree[k] = NONE;
	for (k = 0; k < nb; k++)
		huge_fix(&h, k);

	while ((best = h.tree[1]) != NONE) {
		/* The leftmost block of the lowest rank, and in it the position. */
		for (k = 1; k < h.nleaf; k = 2 * k + (h.tree[2 * k] != best))
			;
		for (a = (k - h.nleaf) << TBITS; h.joined[a] != best; a++)
			;
		b = next_part(&h, a);
		c = next_part(&h, b);
		h.start[b >> 6] &= ~(1ULL << (b & 63));
		h.joined[b] = NONE;
		h.joined[a] = c == n ? NONE :
		    span_rank(v, p + a, next_part(&h, c) - a, h.end);
		q = a;
		if (a > 0) {
			q = prev_part(&h, a);
			h.joined[q] = span_rank(v, p + q, c - q, h.end);
		}
		/* Blocks of q, a and b, each once. */
		huge_fix(&h, q >> TBITS);
		if (a >> TBITS != q >> TBITS)
			huge_fix(&h, a >> TBITS);
		if (b >> TBITS != a >> TBITS)
			huge_fix(&h, b >> TBITS);
	}
	for (a = 0, m = 0; a < n; a = b) {
		b = next_part(&h, a);
		r[m++] = b - a == 1 ? v->byte_rank[p[a]] :
		    span_rank(v, p + a, b - a, h.end);
	}
	free(h.joined);
	free(h.start);
	free(h.tree);
	return m;
}

/*
 * Backtracking BPE (after the encoder of GitHub's rust-gems bpe crate):
 * the ids of a piece are the one sequence of tokens, each made by
 * merging, that spell it and of which each adjacent pair is what
 * merging the pair's bytes makes. Walk the piece taking the longest such
 * token that fits (from the trie), or failing that the next shorter
 * prefix of it; when no token at a position pairs with the one before,
 * step back and mark the position as one no sequence reaches, so that no
 * position is tried twice that way. Linear in the piece's length.
 */

/*
 * Whether merging the bytes of tokens a b (ranks) stops at a b. Merging
 * a's bytes and b's bytes builds each from its two last parts down; a
 * join across the boundary would take the rightmost part of a's side
 * (a, then its right part, and so on) and the leftmost of b's side while
 * both are current: made before, and not yet grown into their parent.
 * Walked back in time from a b: the side whose last join came later
 * (the higher rank; b on a tie, as the leftmost of equal joins goes
 * first) gives up its parent, whose rank bounds the joins still to come
 * for that side (la strictly, as a's parent joins to the left of the
 * boundary; lb not, as b's joins to its right).
 */
static inline int
valid_pair(const struct bpe *v, uint32_t a, uint32_t b)
{
	uint32_t la = NONE, lb = NONE, z;

	for (;;) {
		z = join(v, a, b);
		if (z != NONE && z < la && z <= lb)
			return 0;
		if (v->lr[a][1] != NONE && (v->lr[b][0] == NONE || a > b)) {
			la = a;
			a = v->lr[a][1];
		} else if (v->lr[b][0] != NONE) {
			lb = b;
			b = v->lr[b][0];
		} else {
			return 1;
		}
	}
}

/* The rank of the longest token made by merging that p[0..n) starts with. */
static inline uint32_t
longest(const struct bpe *v, const unsigned char *p, size_t n)
{
	const struct dnode *d = v->da;
	uint32_t st = 0, nx, best = NONE;
	size_t i;

	for (i = 0; i < n; i++) {
		nx = d[st].base + p[i];
		if (d[nx].check != st)
			break;
		st = nx;
		if (d[st].tok != NONE)
			best = d[st].tok;
	}
	return best;
}

#define BTWORDS 64	/* pieces under 4096 bytes: the bit map on the stack */

/* Merge p[0..n); the parts' ranks go to r, their number is returned. */
static size_t
merge_bt(const struct bpe *v, const unsigned char *p, size_t n, uint32_t *r)
{
	uint64_t stack[BTWORDS], *ok = stack;
	size_t pos = 0, m = 0, len;
	uint32_t tok, last;

	if (n + 1 > 64 * BTWORDS)
		ok = xmalloc(((n >> 6) + 1) * sizeof *ok);
	memset(ok, 0xff, ((n >> 6) + 1) * sizeof *ok);
	tok = longest(v, p, n);
	for (;;) {
		last = m > 0 ? r[m - 1] : NONE;
		for (;;) {
			len = v->rlen[tok];
			if ((ok[(pos + len) >> 6] >> ((pos + len) & 63) & 1) &&
			    (last == NONE || valid_pair(v, last, tok))) {
				r[m++] = tok;
				pos += len;
				if (pos == n)
					goto done;
				tok = longest(v, p + pos, n - pos);
				break;
			}
			if ((tok = v->pre[tok]) == NONE) {
				/* Nothing from pos pairs with last: back off. */
				ok[pos >> 6] &= ~(1ULL << (pos & 63));
				tok = last;
				pos -= v->rlen[last];
				m--;
				break;
			}
		}
	}
done:
	if (ok != stack)
		free(ok);
	return m;
}

/*
 * Merge p[0..n) (n >= 2) and append the ids; returns how many. Leaves
 * room for PBATCH more ids, for the rest of bpe_encode's batch.
 */
static size_t
merge(struct bpe_state *s, const unsigned char *p, size_t n,
    struct bpe_ids *out)
{
	const struct bpe *v = s->v;
	uint32_t *r;
	size_t i, m;

	ids_reserve(out, n + PBATCH);
	r = out->v + out->n;
#ifdef __SSE2__
	if (n <= SHORT16 && v->nrank < 0xffff)
		m = merge_short16(v, p, n, r);
	else
#endif
	if (n <= SHORT16 || (!v->bt && n <= SHORT))
		m = merge_short(v, p, n, r);
	else if (v->bt)
		m = merge_bt(v, p, n, r);
	else
		m = merge_huge(v, p, n, r);
	if (!v->rank_is_id)
		for (i = 0; i < m; i++)
			r[i] = v->id_of_rank[r[i]];
	out->n += m;
	return m;
}

/* A piece on its way through bpe_encode. */
struct pending {
	const unsigned char *p;
	size_t n;
	uint64_t w0, h;
	uint32_t id;		/* the piece is this one token, or NONE */
};

static inline struct centry *
cache_entry(struct bpe_state *s, uint64_t h)
{
	return &s->cache[h & s->cmask];
}

/* Append the ids of a piece that is not one token: from the cache, or merged. */
static void
encode_merged(struct bpe_state *s, const struct pending *q, struct bpe_ids *out)
{
	struct centry *ce;
	size_t k, i, at = q->n < 8 ? 8 : q->n;
	uint32_t id;
	uint16_t id16;

	if (at + s->idsize > CDATA) {
		merge(s, q->p, q->n, out);
		return;
	}
	ce = cache_entry(s, q->h);
	if (ce->len == q->n && ce->tag == (uint32_t)(q->h >> 32) &&
	    load8(ce->data) == q->w0 && (q->n <= 8 || same8(ce->data, q->p, q->n))) {
		ids_reserve(out, ce->nids + PBATCH);
		for (i = 0; i < ce->nids; i++, at += s->idsize) {
			if (s->idsize == 2) {
				memcpy(&id16, ce->data + at, 2);
				id = id16;
			} else {
				memcpy(&id, ce->data + at, 4);
			}
			out->v[out->n++] = id;
		}
		return;
	}
	k = merge(s, q->p, q->n, out);
	if (at + k * s->idsize > CDATA)
		return;
	ce->tag = (uint32_t)(q->h >> 32);
	ce->len = (uint8_t)q->n;
	ce->nids = (uint8_t)k;
	memset(ce->data, 0, 8);
	memcpy(ce->data, q->p, q->n);
	for (i = out->n - k; i < out->n; i++, at += s->idsize) {
		if (s->idsize == 2) {
			id16 = (uint16_t)out->v[i];
			memcpy(ce->data + at, &id16, 2);
		} else {
			memcpy(ce->data + at, &out->v[i], 4);
		}
	}
}

/*
 * Pieces go through in batches, in three passes, so that the table
 * lookups of a batch overlap instead of each waiting on memory in turn:
 * cut the pieces and prefetch their slots in the table of tokens; look them
 * up, and prefetch the cache entries of those that are not one token;
 * append the ids in order.
 */
size_t
bpe_encode(struct bpe_state *s, const char *text, size_t len,
    struct bpe_ids *out)
{
	const struct bpe *v = s->v;
	const unsigned char *t = (const unsigned char *)text, *end = t + len;
	const struct vslot *vs;
	struct pending pend[PBATCH], *q;
	size_t i = 0, j, k, m, n0 = out->n;
	uint32_t vmask = (1u << v->vbits) - 1;

	while (i < len) {
		for (m = 0; m < PBATCH && i < len; m++, i = j) {
			j = piece_end(t, len, i);
			q = &pend[m];
			q->p = t + i;
			q->n = j - i;
			if (q->n == 1)
				continue;
			q->w0 = load_w0(q->p, q->n, end);
			q->h = hash_piece(q->p, q->n, q->w0);
			__builtin_prefetch(&v->vt[(uint32_t)(q->h >> 40) & vmask]);
		}
		for (k = 0; k < m; k++) {
			q = &pend[k];
			if (q->n == 1) {
				q->id = v->byte_id[*q->p];
				continue;
			}
			vs = vfind(v, q->p, q->n, q->w0, q->h, ~0u);
			q->id = vs->len ? vs->id : NONE;
			if (q->id == NONE && q->n < CDATA)
				__builtin_prefetch(cache_entry(s, q->h));
		}
		ids_reserve(out, m);
		for (k = 0; k < m; k++) {
			if (pend[k].id != NONE)	/* room: ids_reserve above, or merge */
				out->v[out->n++] = pend[k].id;
			else
				encode_merged(s, &pend[k], out);
		}
	}
	return out->n - n0;
}

size_t
bpe_count(struct bpe_state *s, const char *text, size_t len)
{
	s->tmp.n = 0;
	return bpe_encode(s, text, len, &s->tmp);
}

/* ---- decoding ---- */

const char *
bpe_token(const struct bpe *v, uint32_t id, size_t *len)
{
	if (id >= v->n)
		return NULL;
	*len = v->off[id + 1] - v->off[id];
	return v->pool + v->off[id];
}

size_t
bpe_decode(const struct bpe *v, const uint32_t *ids, size_t n, struct buf *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (ids[i] >= v->n)
			return i;
		buf_add(out, v->pool + v->off[ids[i]],
		    v->off[ids[i] + 1] - v->off[ids[i]]);
	}
	return n;
}
