/* hftok.c - a Hugging Face tokenizer.json (byte-level BPE): encode as `tokenizers` does, decode */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uninorm.h>

#include "core/input.h"
#include "core/json.h"
#include "core/utf8.h"
#include "core/util.h"
#include "tok/chars.h"
#include "tok/hftok.h"
#include "tok/pretok.h"

#define NONE 0xffffffffu
/* merges whose table slots are asked of memory ahead of their insert */
#define MERGES_AHEAD 16
#define MAXSTEP 8
#define MAXFIX 16	/* ids a post-processor puts around a document */

/* GPT-2's pattern, which ByteLevel's use_regex applies. */
#define PAT_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| " \
	"?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

struct added {
	char *s;
	size_t n;
	uint32_t id;
	unsigned char lstrip, rstrip, single, normalized;
};

struct step {
	struct pretok *re;	/* NULL: ByteLevel without use_regex */
	int prefix;		/* ByteLevel's add_prefix_space */
};

struct merge {
	uint64_t key;		/* left id << 32 | right id */
	uint32_t rank, id;	/* id NONE: an empty slot */
};

struct hftok {
	uint32_t nvocab, eod;
	char *pool;		/* the bytes of every token */
	size_t *off;		/* id -> its bytes in pool */
	uint32_t *len;		/* NONE: no token */
	/*
	 * The model's vocabulary by bytes: an entry is the hash's top 24
	 * bits, the length (255: 255 or more) and the id, 24, 8 and 32
	 * bits, VH_EMPTY empty; a probe of an entry of other bytes mostly
	 * ends there, reading neither len[] nor pool (two misses each in a
	 * vocabulary of 128 K; the probes were 14% of a Llama-3-style load).
	 */
	uint64_t *vh;
	size_t vmask;
	struct merge *mh;
	size_t mmask;
	/*
	 * A bit a hash of the listed pairs (8 a merge, one hash): most
	 * pairs a piece asks for are not listed, and the bit answers them
	 * without a probe of the table (4 MB for a Llama-3-style file,
	 * where a miss walked several slots).
	 */
	uint64_t *mfilter;
	int mfshift;
	struct chars *chars;	/* taken whole before the merges */
	uint32_t byteid[256];
	int ignore_merges, nfc;
	uint32_t nmodel;	/* entries in the model's vocab */
	struct added *add;	/* by first byte, the longest first */
	size_t nadd, first[257];	/* add[first[c]..first[c+1]): byte c */
	int one_first;		/* the first byte of every added token, or -1 */
	struct step step[MAXSTEP];
	int nstep;
	uint32_t pre[MAXFIX], post[MAXFIX];
	int npre, npost;
};

struct heapent {
	uint32_t rank, pos, id;
};

/* A merged piece of up to 22 bytes and its ids (up to 8), by its hash. */
#define CACHE_BITS 15
#define CACHE_BYTES 22
#define CACHE_IDS 8
struct cached {
	uint8_t len, nids;	/* len 0: empty */
	char bytes[CACHE_BYTES];
	uint32_t ids[CACHE_IDS];
};

struct hftok_state {
	const struct hftok *h;
	struct cached *cache;
	struct pretok_state *ps[MAXSTEP];
	struct buf scratch[MAXSTEP];	/* a piece with its prefix space */
	struct buf norm;
	uint32_t *sym, *prev, *next;
	struct heapent *heap;
	size_t cap;
	struct bpe_ids *out;
};

/* GPT-2's bytes_to_unicode: byte -> code point, and back (below 324). */
static unsigned
byte_cp(unsigned b)
{
	if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)
		return b;
	if (b < 33)
		return 256 + b;
	if (b <= 160)
		return 256 + 33 + (b - 127);	/* 127..160 after 0..32 */
	return 256 + 33 + 34;			/* 173 */
}

static int cp_byte[324];

static void
bytemap_init(void)
{
	unsigned b;

	if (cp_byte[0] != 0)
		return;
	for (b = 0; b < 324; b++)
		cp_byte[b] = -1;
	for (b = 0; b < 256; b++)
		cp_byte[byte_cp(b)] = (int)b;
}

/* The code point at s (valid UTF-8 of length k). */
static unsigned
cp_at(const unsigned char *s, size_t k)
{
	switch (k) {
	case 1: return s[0];
	case 2: return (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu);
	case 3: return (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
	default: return (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 |
		    (s[2] & 0x3fu) << 6 | (s[3] & 0x3fu);
	}
}

/*
 * The byte of ByteLevel's character at s[i] (i < n), its length in *k;
 * -1 where it is none of the alphabet's (all below U+0144: one or two
 * bytes of UTF-8) or not UTF-8.
 */
static inline int
bl_byte(const unsigned char *s, size_t n, size_t i, size_t *k)
{
	unsigned cp;

	if (s[i] < 0x80) {
		*k = 1;
		return cp_byte[s[i]];
	}
	if (s[i] < 0xc2 || s[i] >= 0xe0 || i + 1 >= n ||
	    (s[i + 1] & 0xc0) != 0x80)
		return -1;
	*k = 2;
	cp = (s[i] & 0x1fu) << 6 | (s[i + 1] & 0x3fu);
	return cp < 324 ? cp_byte[cp] : -1;
}

/*
 * ByteLevel's decoding of a token's text s: its characters mapped back
 * to bytes, into out; 0 if one of them is not in the alphabet (then the
 * decoder takes the text as it is).
 */
static int
bl_bytes(const char *s, size_t n, struct buf *out)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, k;
	char *o;
	int b;

	/* never more bytes than characters */
	buf_reserve(out, n + 1);
	o = out->p + out->len;
	for (i = 0; i < n; i += k) {
		if ((b = bl_byte(u, n, i, &k)) < 0)
			return 0;
		*o++ = (char)b;
	}
	out->len = (size_t)(o - out->p);
	return 1;
}

#define VH_EMPTY UINT64_MAX

/* An entry's upper half for bytes of length n whose hash is x. */
static inline uint32_t
vh_tag(uint64_t x, size_t n)
{
	return (uint32_t)(x >> 40) << 8 | (uint32_t)(n < 255 ? n : 255);
}

/*
 * The slot of bytes s[0..n) in vh: theirs, or the empty one they would
 * take; *tag their entry's upper half.
 */
static size_t
vocab_slot(const struct hftok *h, const char *s, size_t n, uint32_t *tagp)
{
	uint64_t x = owt_hash_bytes(s, n), v;
	uint32_t tag = *tagp = vh_tag(x, n), id;
	size_t i = x & h->vmask;

	while ((v = h->vh[i]) != VH_EMPTY) {
		id = (uint32_t)v;
		if ((uint32_t)(v >> 32) == tag && h->len[id] == n &&
		    owt_same_bytes(h->pool + h->off[id], s, n))
			break;
		i = (i + 1) & h->vmask;
	}
	return i;
}

/* The id of bytes s[0..n) in the model's vocabulary, or NONE. */
static uint32_t
vocab_find(const struct hftok *h, const char *s, size_t n)
{
	uint32_t tag;
	uint64_t v = h->vh[vocab_slot(h, s, n, &tag)];

	return v == VH_EMPTY ? NONE : (uint32_t)v;
}

/*
 * The slot of pair key (x its owt_hash_pair()) in mh: its merge's, or
 * the empty one it would take.
 */
static size_t
merge_slot(const struct hftok *h, uint64_t key, uint64_t x)
{
	size_t i = x & h->mmask;

	while (h->mh[i].id != NONE && h->mh[i].key != key)
		i = (i + 1) & h->mmask;
	return i;
}

/* Whether a pair whose owt_hash_pair() is x may be listed (its filter bit). */
static inline int
merge_maybe(const struct hftok *h, uint64_t x)
{
	uint64_t b = x >> h->mfshift;

	return (int)(h->mfilter[b >> 6] >> (b & 63) & 1);
}

/* The merge of pair key (x its owt_hash_pair()), or NULL. */
static const struct merge *
merge_lookup(const struct hftok *h, uint64_t key, uint64_t x)
{
	const struct merge *e;

	if (!merge_maybe(h, x))
		return NULL;
	e = &h->mh[merge_slot(h, key, x)];
	return e->id == NONE ? NULL : e;
}

static const struct merge *
merge_find(const struct hftok *h, uint32_t a, uint32_t b)
{
	uint64_t key = (uint64_t)a << 32 | b;

	return merge_lookup(h, key, owt_hash_pair(key));
}

static size_t
pow2_above(size_t n)
{
	size_t m = 16;

	while (m < 2 * n)
		m *= 2;
	return m;
}

static const char *
str_of(const struct json_val *v)
{
	return v != NULL && v->type == JV_STRING ? v->str : NULL;
}

static int
true_of(const struct json_val *v)
{
	return v != NULL && v->type == JV_BOOL && v->num != 0;
}

static int
null_of(const struct json_val *v)
{
	return v == NULL || v->type == JV_NULL;
}

/* An id: a JSON number that is a whole number below 2^31. */
static int
id_of(const struct json_val *v, uint32_t *id)
{
	if (v == NULL || v->type != JV_NUMBER || v->num < 0 ||
	    v->num >= 2147483648.0 || v->num != (double)(uint32_t)v->num)
		return -1;
	*id = (uint32_t)v->num;
	return 0;
}

struct load {
	struct hftok *h;
	const char *file;
	char *err;
	size_t errsize;
	int *code;
	struct buf pool;
	uint32_t cap;	/* of off and len */
};

static int
unsupported(struct load *l, const char *part, const char *what)
{
	return owt_fail(l->err, l->errsize, l->code, XUSAGE, "%s: %s: %s is "
	    "not supported (byte-level BPE only)", l->file, part, what);
}

static int
malformed(struct load *l, const char *part, const char *what)
{
	return owt_fail(l->err, l->errsize, l->code, XDATA, "%s: %s: %s",
	    l->file, part, what);
}

/* Merge m into the table; where its pair is already, the first rank stays. */
static void
merge_put(struct hftok *h, const struct merge *m)
{
	uint64_t x = owt_hash_pair(m->key), b = x >> h->mfshift;
	size_t j = merge_slot(h, m->key, x);

	if (h->mh[j].id == NONE)
		h->mh[j] = *m;
	h->mfilter[b >> 6] |= 1ull << (b & 63);
}

/*
 * Merge i's place in a message, "model.merges[i]", written only for one
 * (written for each of a Llama-3-style file's 189,704 merges, it was a
 * tenth of the load).
 */
static const char *
merge_at(char *where, size_t size, size_t i)
{
	snprintf(where, size, "model.merges[%zu]", i);
	return where;
}

/* Give id the bytes of text s (ByteLevel-decoded, or as it is). */
static int
set_token(struct load *l, uint32_t id, const char *s, int *mapped)
{
	struct hftok *h = l->h;
	size_t start = l->pool.len, n = strlen(s);

	if (id >= l->cap) {
		uint32_t old = l->cap, i;

		l->cap = id + 1 > 2 * old ? id + 1 : 2 * old;
		h->off = xrealloc(h->off, l->cap * sizeof *h->off);
		h->len = xrealloc(h->len, l->cap * sizeof *h->len);
		for (i = old; i < l->cap; i++)
			h->len[i] = NONE;
	}
	*mapped = bl_bytes(s, n, &l->pool);
	if (!*mapped)
		buf_add(&l->pool, s, n);
	h->off[id] = start;
	h->len[id] = (uint32_t)(l->pool.len - start);
	if (id >= h->nvocab)
		h->nvocab = id + 1;
	return 0;
}

static void
vocab_add(struct hftok *h, uint32_t id)
{
	uint32_t tag;
	size_t i = vocab_slot(h, h->pool + h->off[id], h->len[id], &tag);

	/* the first id of these bytes stays */
	if (h->vh[i] == VH_EMPTY)
		h->vh[i] = (uint64_t)tag << 32 | id;
}

/* The id of a token's text (by its bytes in ByteLevel's alphabet), or NONE. */
static uint32_t
text_id(const struct hftok *h, const char *s)
{
	char tmp[256];
	struct buf t = { 0 };
	uint32_t id = NONE;
	size_t n = strlen(s), i, k, q;
	int b;

	/* The common case, in place: short, every character in the alphabet. */
	for (i = k = 0; i < n && k < sizeof tmp; i += q) {
		if ((b = bl_byte((const unsigned char *)s, n, i, &q)) < 0)
			return NONE;
		tmp[k++] = (char)b;
	}
	if (i >= n)
		return vocab_find(h, tmp, k);
	if (bl_bytes(s, n, &t))
		id = vocab_find(h, t.p ? t.p : "", t.len);
	buf_free(&t);
	return id;
}

static int
load_model(struct load *l, const struct json_val *m)
{
	struct hftok *h = l->h;
	const struct json_val *vocab, *merges, *v;
	const char *type = str_of(json_doc_get(m, "type"));
	struct merge ring[MERGES_AHEAD];	/* the last merges, to insert */
	uint8_t *bl;
	size_t i, nm, nbit;
	int mapped;
	char where[64];

	if (m == NULL || m->type != JV_MAP)
		return malformed(l, "model", "not an object");
	if (type != NULL && strcmp(type, "BPE") != 0) {
		char what[128];

		snprintf(what, sizeof what, "type '%s'", type);
		return unsupported(l, "model", what);
	}
	v = json_doc_get(m, "dropout");
	if (!null_of(v) && !(v->type == JV_NUMBER && v->num == 0))
		return unsupported(l, "model.dropout", "dropout");
	if ((v = json_doc_get(m, "continuing_subword_prefix")) != NULL &&
	    !null_of(v) && !(v->type == JV_STRING && v->str[0] == '\0'))
		return unsupported(l, "model.continuing_subword_prefix",
		    "a subword prefix");
	if ((v = json_doc_get(m, "end_of_word_suffix")) != NULL &&
	    !null_of(v) && !(v->type == JV_STRING && v->str[0] == '\0'))
		return unsupported(l, "model.end_of_word_suffix",
		    "a word suffix");
	h->ignore_merges = true_of(json_doc_get(m, "ignore_merges"));
	vocab = json_doc_get(m, "vocab");
	merges = json_doc_get(m, "merges");
	if (vocab == NULL || vocab->type != JV_MAP)
		return malformed(l, "model.vocab", "not an object");
	if (merges == NULL || merges->type != JV_ARRAY)
		return malformed(l, "model.merges", "not an array");
	h->nmodel = (uint32_t)vocab->nkids;
	h->vmask = pow2_above(vocab->nkids) - 1;
	h->vh = xmalloc((h->vmask + 1) * sizeof *h->vh);
	memset(h->vh, 0xff, (h->vmask + 1) * sizeof *h->vh);	/* VH_EMPTY */
	/* each entry's text in ByteLevel's alphabet or not */
	bl = xmalloc(vocab->nkids ? vocab->nkids : 1);
	for (i = 0; i < vocab->nkids; i++) {
		uint32_t id;

		if (id_of(&vocab->kids[i], &id) < 0) {
			free(bl);
			snprintf(where, sizeof where, "model.vocab[%zu]", i);
			return malformed(l, where, "the id is not a whole "
			    "number from 0 to 2^31-1");
		}
		set_token(l, id, vocab->kids[i].key, &mapped);
		bl[i] = (uint8_t)mapped;
	}
	/*
	 * The pool is final for the vocabulary: hash it by bytes. Tokens
	 * not in ByteLevel's alphabet never match a piece.
	 */
	h->pool = l->pool.p;
	for (i = 0; i < vocab->nkids; i++)
		if (bl[i])
			vocab_add(h, (uint32_t)vocab->kids[i].num);
	free(bl);
	for (i = 0; i < 256; i++) {
		char one = (char)i;

		h->byteid[i] = vocab_find(h, &one, 1);
		if (h->byteid[i] == NONE) {
			snprintf(where, sizeof where, "byte 0x%02zx has no token "
			    "in the vocabulary", i);
			return unsupported(l, "model.vocab", where);
		}
	}
	nm = merges->nkids;
	h->mmask = pow2_above(nm) - 1;
	h->mh = xmalloc((h->mmask + 1) * sizeof *h->mh);
	memset(h->mh, 0xff, (h->mmask + 1) * sizeof *h->mh);
	for (nbit = 64, h->mfshift = 64 - 6; nbit < 8 * nm; nbit *= 2)
		h->mfshift--;
	h->mfilter = xcalloc(nbit / 64, sizeof *h->mfilter);
	for (i = 0; i < nm; i++) {
		const struct json_val *e = &merges->kids[i];
		const char *a, *b;
		char *two = NULL, *cat, catbuf[256];
		uint32_t ia, ib, ic;
		size_t na, nb;

		if (e->type == JV_STRING) {
			char *sp = strchr(e->str, ' ');

			if (sp == NULL || strchr(sp + 1, ' ') != NULL)
				return malformed(l, merge_at(where,
				    sizeof where, i), "not \"A B\"");
			two = xstrdup(e->str);
			two[sp - e->str] = '\0';
			a = two;
			b = two + (sp - e->str) + 1;
		} else if (e->type == JV_ARRAY && e->nkids == 2 &&
		    str_of(&e->kids[0]) && str_of(&e->kids[1])) {
			a = e->kids[0].str;
			b = e->kids[1].str;
		} else
			return malformed(l, merge_at(where, sizeof where, i),
			    "not \"A B\" or [A, B]");
		na = strlen(a);
		nb = strlen(b);
		cat = na + nb < sizeof catbuf ? catbuf : xmalloc(na + nb + 1);
		memcpy(cat, a, na);
		memcpy(cat + na, b, nb + 1);
		ia = text_id(h, a);
		ib = text_id(h, b);
		ic = text_id(h, cat);
		if (cat != catbuf)
			free(cat);
		free(two);
		if (ia == NONE || ib == NONE || ic == NONE)
			return malformed(l, merge_at(where, sizeof where, i),
			    ic == NONE && ia != NONE && ib != NONE ?
			    "the merged token is not in the vocabulary" :
			    "a part is not in the vocabulary");
		/*
		 * Into the table MERGES_AHEAD merges later, in rank order,
		 * its slot asked of memory now: the table (4 MB for 189,704
		 * merges) is far larger than the core's caches, and its
		 * misses, one after another, were a tenth of the load.
		 */
		if (i >= MERGES_AHEAD)
			merge_put(h, &ring[i % MERGES_AHEAD]);
		ring[i % MERGES_AHEAD] = (struct merge){
			(uint64_t)ia << 32 | ib, (uint32_t)i, ic };
		__builtin_prefetch(&h->mh[owt_hash_pair(
		    ring[i % MERGES_AHEAD].key) & h->mmask], 1);
	}
	for (i = nm > MERGES_AHEAD ? nm - MERGES_AHEAD : 0; i < nm; i++)
		merge_put(h, &ring[i % MERGES_AHEAD]);
	return 0;
}

static int
added_cmp(const void *a, const void *b)
{
	const struct added *x = a, *y = b;

	if (x->s[0] != y->s[0])
		return (unsigned char)x->s[0] - (unsigned char)y->s[0];
	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

static void
added_index(struct hftok *h)
{
	size_t i, c = 0;

	qsort(h->add, h->nadd, sizeof *h->add, added_cmp);
	for (i = 0; i <= h->nadd; i++)
		while (c < 257 && (i == h->nadd || c <= (unsigned char)h->add[i].s[0]))
			h->first[c++] = i;
	h->one_first = h->nadd > 0 && h->add[0].s[0] == h->add[h->nadd - 1].s[0] ?
	    (unsigned char)h->add[0].s[0] : -1;
}

/* The id of an added token's text: an added token's, or the model's. */
static uint32_t
added_id(const struct hftok *h, const char *s)
{
	size_t i;

	for (i = 0; i < h->nadd; i++)
		if (strcmp(h->add[i].s, s) == 0)
			return h->add[i].id;
	return text_id(h, s);
}

static int
load_added(struct load *l, const struct json_val *a)
{
	struct hftok *h = l->h;
	size_t i, un;
	uint8_t *u;
	uint32_t maxid = NONE;
	char where[64];
	int mapped;

	if (null_of(a))
		return 0;
	if (a->type != JV_ARRAY)
		return malformed(l, "added_tokens", "not an array");
	h->add = xcalloc(a->nkids + 1, sizeof *h->add);
	for (i = 0; i < a->nkids; i++) {
		const struct json_val *t = &a->kids[i];
		const char *s = str_of(json_doc_get(t, "content"));
		struct added *d = &h->add[h->nadd];

		snprintf(where, sizeof where, "added_tokens[%zu]", i);
		if (s == NULL || s[0] == '\0' ||
		    id_of(json_doc_get(t, "id"), &d->id) < 0)
			return malformed(l, where, "no content or id");
		/*
		 * The id `tokenizers` gives it, whatever the file says: the
		 * vocabulary's for its text, else the one after the added
		 * tokens' highest, or the size of the vocabulary.
		 */
		if ((d->id = added_id(h, s)) == NONE) {
			d->id = h->nmodel;
			if (maxid != NONE && (maxid >= h->nmodel || h->nmodel == 0))
				d->id = maxid + 1;
		}
		if (maxid == NONE || d->id > maxid)
			maxid = d->id;
		d->s = xstrdup(s);
		d->n = strlen(s);
		d->lstrip = true_of(json_doc_get(t, "lstrip"));
		d->rstrip = true_of(json_doc_get(t, "rstrip"));
		d->single = true_of(json_doc_get(t, "single_word"));
		d->normalized = true_of(json_doc_get(t, "normalized"));
		h->nadd++;
		if (d->normalized && h->nfc && (u = u8_normalize(UNINORM_NFC,
		    (const uint8_t *)s, d->n, NULL, &un)) != NULL) {
			/* matched as the normalizer writes it */
			free(d->s);
			d->s = xstrndup((const char *)u, un);
			d->n = un;
			free(u);
		}
		/* decoded as `tokenizers` does: its normalized text */
		set_token(l, d->id, d->s, &mapped);
	}
	added_index(h);
	return 0;
}

static int
load_normalizer(struct load *l, const struct json_val *n)
{
	const char *type;
	size_t i;

	if (null_of(n))
		return 0;
	type = str_of(json_doc_get(n, "type"));
	if (type != NULL && strcmp(type, "NFC") == 0) {
		l->h->nfc = 1;
		return 0;
	}
	if (type != NULL && strcmp(type, "Sequence") == 0) {
		const struct json_val *s = json_doc_get(n, "normalizers");

		if (s == NULL || s->type != JV_ARRAY)
			return malformed(l, "normalizer", "no normalizers");
		for (i = 0; i < s->nkids; i++)
			if (load_normalizer(l, &s->kids[i]) < 0)
				return -1;
		return 0;
	}
	{
		char what[128];

		snprintf(what, sizeof what, "type '%s'", type ? type : "?");
		return unsupported(l, "normalizer", what);
	}
}

static int
add_step(struct load *l, const char *part, const char *pattern, int prefix)
{
	struct hftok *h = l->h;
	char e[OWT_ERRSIZE];
	int c;

	if (h->nstep == MAXSTEP)
		return unsupported(l, part, "more than 8 steps");
	h->step[h->nstep].prefix = prefix;
	if (pattern != NULL &&
	    (h->step[h->nstep].re = pretok_compile(pattern, e, sizeof e,
	    &c)) == NULL)
		return owt_fail(l->err, l->errsize, l->code, XUSAGE, "%s: %s: %s",
		    l->file, part, e);
	h->nstep++;
	return 0;
}

static int
load_pre(struct load *l, const struct json_val *p, int last, int *bytelevel)
{
	const char *type = str_of(json_doc_get(p, "type"));
	const struct json_val *v;
	char what[160];
	size_t i;

	if (type != NULL && strcmp(type, "Sequence") == 0) {
		v = json_doc_get(p, "pretokenizers");
		if (v == NULL || v->type != JV_ARRAY)
			return malformed(l, "pre_tokenizer", "no pretokenizers");
		for (i = 0; i < v->nkids; i++)
			if (load_pre(l, &v->kids[i], last && i + 1 == v->nkids,
			    bytelevel) < 0)
				return -1;
		return 0;
	}
	if (*bytelevel)
		return unsupported(l, "pre_tokenizer", "a step after ByteLevel");
	if (type != NULL && strcmp(type, "ByteLevel") == 0) {
		v = json_doc_get(p, "use_regex");
		*bytelevel = 1;
		return add_step(l, "pre_tokenizer.ByteLevel",
		    null_of(v) || true_of(v) ? PAT_GPT2 : NULL,
		    true_of(json_doc_get(p, "add_prefix_space")));
	}
	if (type != NULL && strcmp(type, "Split") == 0) {
		const char *re = str_of(json_doc_get(json_doc_get(p, "pattern"),
		    "Regex"));
		const char *beh = str_of(json_doc_get(p, "behavior"));

		if (re == NULL)
			return unsupported(l, "pre_tokenizer.Split",
			    "a pattern that is not a Regex");
		if (beh == NULL || strcmp(beh, "Isolated") != 0) {
			snprintf(what, sizeof what, "behavior '%s'",
			    beh ? beh : "?");
			return unsupported(l, "pre_tokenizer.Split", what);
		}
		if (true_of(json_doc_get(p, "invert")))
			return unsupported(l, "pre_tokenizer.Split", "invert");
		return add_step(l, "pre_tokenizer.Split", re, 0);
	}
	snprintf(what, sizeof what, "type '%s'", type ? type : "?");
	return unsupported(l, "pre_tokenizer", what);
}

/* The ids of a post-processor's template around the document. */
static int
fix_add(struct load *l, uint32_t *fix, int *n, uint32_t id)
{
	if (*n == MAXFIX)
		return unsupported(l, "post_processor", "more than 16 ids");
	fix[(*n)++] = id;
	return 0;
}

static int
load_post(struct load *l, const struct json_val *p)
{
	struct hftok *h = l->h;
	const char *type;
	const struct json_val *v;
	char what[160];
	size_t i, j;

	if (null_of(p))
		return 0;
	type = str_of(json_doc_get(p, "type"));
	if (type != NULL && strcmp(type, "ByteLevel") == 0)
		return 0;
	if (type != NULL && strcmp(type, "Sequence") == 0) {
		v = json_doc_get(p, "processors");
		if (v == NULL || v->type != JV_ARRAY)
			return malformed(l, "post_processor", "no processors");
		for (i = 0; i < v->nkids; i++)
			if (load_post(l, &v->kids[i]) < 0)
				return -1;
		return 0;
	}
	if (type != NULL && (strcmp(type, "RobertaProcessing") == 0 ||
	    strcmp(type, "BertProcessing") == 0)) {
		const struct json_val *cls = json_doc_get(p, "cls");
		const struct json_val *sep = json_doc_get(p, "sep");
		uint32_t c, s;

		if (cls == NULL || cls->type != JV_ARRAY || cls->nkids != 2 ||
		    id_of(&cls->kids[1], &c) < 0 || sep == NULL ||
		    sep->type != JV_ARRAY || sep->nkids != 2 ||
		    id_of(&sep->kids[1], &s) < 0)
			return malformed(l, "post_processor", "no cls or sep");
		h->npre = h->npost = 0;
		fix_add(l, h->pre, &h->npre, c);
		return fix_add(l, h->post, &h->npost, s);
	}
	if (type != NULL && strcmp(type, "TemplateProcessing") == 0) {
		const struct json_val *single = json_doc_get(p, "single");
		const struct json_val *sp = json_doc_get(p, "special_tokens");
		int seen = 0;

		if (single == NULL || single->type != JV_ARRAY)
			return malformed(l, "post_processor.single",
			    "not an array");
		h->npre = h->npost = 0;
		for (i = 0; i < single->nkids; i++) {
			const struct json_val *e = &single->kids[i];
			const char *id;
			const struct json_val *ids;

			if (json_doc_get(e, "Sequence") != NULL) {
				seen = 1;
				continue;
			}
			id = str_of(json_doc_get(json_doc_get(e,
			    "SpecialToken"), "id"));
			ids = json_doc_get(json_doc_get(sp, id ? id : ""),
			    "ids");
			if (id == NULL || ids == NULL || ids->type != JV_ARRAY)
				return malformed(l, "post_processor.single",
				    "a piece that is no Sequence or known "
				    "SpecialToken");
			for (j = 0; j < ids->nkids; j++) {
				uint32_t x;

				if (id_of(&ids->kids[j], &x) < 0)
					return malformed(l, "post_processor."
					    "special_tokens", "a bad id");
				if (fix_add(l, seen ? h->post : h->pre,
				    seen ? &h->npost : &h->npre, x) < 0)
					return -1;
			}
		}
		return 0;
	}
	snprintf(what, sizeof what, "type '%s'", type ? type : "?");
	return unsupported(l, "post_processor", what);
}

/* eos_token of tokenizer_config.json: a string or {"content": ...}. */
static int
load_config(struct load *l, const char *dir)
{
	struct hftok *h = l->h;
	struct buf b = { 0 };
	struct json_val *doc;
	const struct json_val *e;
	const char *s;
	char path[4096], e2[OWT_ERRSIZE];
	size_t i;
	int c;

	snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
	if (input_slurp_file(path, &b, (size_t)1 << 30, l->err, l->errsize,
	    l->code) < 0) {
		buf_free(&b);
		return -1;
	}
	doc = json_doc_parse(b.p, b.len, e2, sizeof e2, &c);
	buf_free(&b);
	if (doc == NULL)
		return owt_fail(l->err, l->errsize, l->code, XDATA, "%s: %s",
		    path, e2);
	h->eod = BPE_NOID;
	e = json_doc_get(doc, "eos_token");
	s = str_of(e) ? e->str : str_of(json_doc_get(e, "content"));
	if (s != NULL) {
		for (i = 0; i < h->nadd; i++)
			if (strcmp(h->add[i].s, s) == 0)
				h->eod = h->add[i].id;
		if (h->eod == BPE_NOID)
			h->eod = text_id(h, s);
		if (h->eod == BPE_NOID) {
			owt_fail(l->err, l->errsize, l->code, XDATA, "%s: "
			    "eos_token '%s' is no token of tokenizer.json",
			    path, s);
			json_doc_free(doc);
			return -1;
		}
	}
	json_doc_free(doc);
	return 0;
}

/* The key of an edge part (chars.h): token id, first bytes (side 0) or last. */
#define PART_KEY(side, id) ((uint32_t)(side) << 31 | (uint32_t)1 << 30 | (id))

/*
 * h's characters taken whole (chars.h). A join is a pair of tokens the
 * merges list, at its rank: c's edge parts are the tokens its own
 * merges make of its first bytes (its first byte, or its first two
 * where they join first) or of its last, and c itself; a join across
 * one a listed pair of it and a token beside it.
 */
static void
chars_of(struct hftok *h)
{
	struct chars_build *b = chars_build_new();
	const struct merge *m12, *m23, *first, *f;
	const unsigned char *u;
	uint32_t id, a, z, key[2][3];
	size_t i, len;
	unsigned cp;
	unsigned char last, start;

	for (id = 0; id < h->nvocab; id++) {
		if ((len = h->len[id]) == NONE || len < 2 || len > 3)
			continue;
		u = (const unsigned char *)h->pool + h->off[id];
		if (char_at(u, len, &cp) != len)
			continue;
		memset(key, 0, sizeof key);
		key[0][0] = PART_KEY(0, id);
		key[1][0] = PART_KEY(1, id);
		key[0][1] = PART_KEY(0, h->byteid[u[0]]);
		key[1][1] = PART_KEY(1, h->byteid[u[len - 1]]);
		/* its own merges, each of its rank or less: (a) */
		if (len == 2)
			f = merge_find(h, h->byteid[u[0]], h->byteid[u[1]]);
		else {
			m12 = merge_find(h, h->byteid[u[0]], h->byteid[u[1]]);
			m23 = merge_find(h, h->byteid[u[1]], h->byteid[u[2]]);
			if (m12 != NULL && (m23 == NULL || m12->rank < m23->rank)) {
				first = m12;
				f = merge_find(h, m12->id, h->byteid[u[2]]);
				key[0][2] = PART_KEY(0, m12->id);
			} else if ((first = m23) != NULL) {
				f = merge_find(h, h->byteid[u[0]], m23->id);
				key[1][2] = PART_KEY(1, m23->id);
			} else
				continue;
			if (f != NULL && first->rank > f->rank)
				continue;
		}
		if (f == NULL || f->id != id)
			continue;
		chars_build_char(b, cp, id, f->rank, key[0], key[1]);
	}
	/* the listed joins of a part of a character's first or last bytes */
	for (i = 0; i <= h->mmask; i++) {
		if (h->mh[i].id == NONE)
			continue;
		a = (uint32_t)(h->mh[i].key >> 32);
		z = (uint32_t)h->mh[i].key;
		if (h->len[a] == 0 || h->len[z] == 0)
			continue;
		last = (unsigned char)h->pool[h->off[a] + h->len[a] - 1];
		start = (unsigned char)h->pool[h->off[z]];
		/* a, then z of a character's first bytes or the whole */
		if (h->len[z] <= 3 && start >= 0xc2 && start < 0xf0)
			chars_build_edge(b, PART_KEY(0, z), last, h->mh[i].rank);
		/* a of a character's last bytes or the whole, then z */
		if (h->len[a] <= 3 && (last & 0xc0) == 0x80)
			chars_build_edge(b, PART_KEY(1, a), start, h->mh[i].rank);
	}
	h->chars = chars_build_end(b);
}

struct hftok *
hftok_load(const char *dir, char *err, size_t errsize, int *code)
{
	struct hftok *h = xcalloc(1, sizeof *h);
	struct load l = { .h = h, .err = err, .errsize = errsize, .code = code };
	struct buf b = { 0 };
	struct json_val *doc = NULL;
	const struct json_val *v;
	char path[4096], e[OWT_ERRSIZE];
	int c, bytelevel = 0;
	const char *type;

	h->one_first = -1;
	bytemap_init();
	snprintf(path, sizeof path, "%s/tokenizer.json", dir);
	l.file = path;
	if (input_slurp_file(path, &b, (size_t)1 << 31, err, errsize,
	    code) < 0)
		goto fail;
	if ((doc = json_doc_parse(b.p, b.len, e, sizeof e, &c)) == NULL) {
		owt_fail(err, errsize, code, XDATA, "%s: %s", path, e);
		goto fail;
	}
	buf_free(&b);
	if (doc->type != JV_MAP) {
		malformed(&l, "the top", "not an object");
		goto fail;
	}
	if (!null_of(json_doc_get(doc, "truncation"))) {
		unsupported(&l, "truncation", "truncation");
		goto fail;
	}
	if (!null_of(json_doc_get(doc, "padding"))) {
		unsupported(&l, "padding", "padding");
		goto fail;
	}
	if (load_model(&l, json_doc_get(doc, "model")) < 0 ||
	    load_normalizer(&l, json_doc_get(doc, "normalizer")) < 0)
		goto fail;
	v = json_doc_get(doc, "pre_tokenizer");
	if (!null_of(v) && load_pre(&l, v, 1, &bytelevel) < 0)
		goto fail;
	if (!bytelevel) {
		unsupported(&l, "pre_tokenizer", "one without ByteLevel");
		goto fail;
	}
	if (load_added(&l, json_doc_get(doc, "added_tokens")) < 0 ||
	    load_post(&l, json_doc_get(doc, "post_processor")) < 0)
		goto fail;
	h->pool = l.pool.p;
	v = json_doc_get(doc, "decoder");
	type = str_of(json_doc_get(v, "type"));
	if (!null_of(v) && (type == NULL || strcmp(type, "ByteLevel") != 0)) {
		char what[160];

		snprintf(what, sizeof what, "type '%s'", type ? type : "?");
		unsupported(&l, "decoder", what);
		goto fail;
	}
	json_doc_free(doc);
	doc = NULL;
	if (load_config(&l, dir) < 0)
		goto fail;
	chars_of(h);
	return h;
fail:
	buf_free(&b);
	json_doc_free(doc);
	h->pool = l.pool.p;
	hftok_free(h);
	return NULL;
}

void
hftok_free(struct hftok *h)
{
	size_t i;
	int k;

	if (h == NULL)
		return;
	for (i = 0; i < h->nadd; i++)
		free(h->add[i].s);
	free(h->add);
	for (k = 0; k < h->nstep; k++)
		pretok_free(h->step[k].re);
	free(h->pool);
	free(h->off);
	free(h->len);
	free(h->vh);
	free(h->mh);
	free(h->mfilter);
	chars_free(h->chars);
	free(h);
}

uint32_t
hftok_nvocab(const struct hftok *h)
{
	return h->nvocab;
}

uint32_t
hftok_eod(const struct hftok *h)
{
	return h->eod;
}

struct hftok_state *
hftok_state_new(const struct hftok *h)
{
	struct hftok_state *s = xcalloc(1, sizeof *s);
	int k;

	s->h = h;
	s->cache = xcalloc((size_t)1 << CACHE_BITS, sizeof *s->cache);
	for (k = 0; k < h->nstep; k++)
		if (h->step[k].re != NULL)
			s->ps[k] = pretok_state_new(h->step[k].re);
	return s;
}

void
hftok_state_free(struct hftok_state *s)
{
	int k;

	if (s == NULL)
		return;
	for (k = 0; k < MAXSTEP; k++) {
		pretok_state_free(s->ps[k]);
		buf_free(&s->scratch[k]);
	}
	buf_free(&s->norm);
	free(s->cache);
	free(s->sym);
	free(s->prev);
	free(s->next);
	free(s->heap);
	free(s);
}

static void
push_id(struct bpe_ids *out, uint32_t id)
{
	if (out->n == out->cap)
		out->v = xgrow(out->v, &out->cap, out->n + 1, sizeof *out->v);
	out->v[out->n++] = id;
}

static int
heap_less(const struct heapent *a, const struct heapent *b)
{
	return a->rank != b->rank ? a->rank < b->rank : a->pos < b->pos;
}

static void
heap_push(struct heapent *hp, size_t *n, struct heapent e)
{
	size_t i = (*n)++;

	while (i > 0 && heap_less(&e, &hp[(i - 1) / 2])) {
		hp[i] = hp[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	hp[i] = e;
}

static struct heapent
heap_pop(struct heapent *hp, size_t *n)
{
	struct heapent top = hp[0], last = hp[--*n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && heap_less(&hp[c + 1], &hp[c]))
			c++;
		if (!heap_less(&hp[c], &last))
			break;
		hp[i] = hp[c];
		i = c;
	}
	if (*n > 0)
		hp[i] = last;
	return top;
}

static void
try_pair(struct hftok_state *s, size_t *nh, uint32_t pos)
{
	const struct merge *m;

	if (s->next[pos] == NONE)
		return;
	m = merge_find(s->h, s->sym[pos], s->sym[s->next[pos]]);
	if (m != NULL)
		heap_push(s->heap, nh, (struct heapent){ m->rank, pos, m->id });
}

/* Entry c keeps piece p[0..n) (n <= CACHE_BYTES), its ids id[0..nids). */
static void
cache_put(struct cached *c, const unsigned char *p, size_t n,
    const uint32_t *id, size_t nids)
{
	c->len = (uint8_t)n;
	c->nids = (uint8_t)nids;
	memcpy(c->bytes, p, n);
	memcpy(c->ids, id, nids * sizeof *c->ids);
}

/*
 * The merges of parts sym[0..m) (m <= SHORT) without the heap: the
 * listed pair of lowest rank found by a scan, leftmost among equals (the
 * heap's order, model_piece's), the parts after it moved down; the
 * parts left. The first pairs' table slots are asked of memory before
 * any is read (the table is megabytes: their misses overlap).
 */
#define SHORT 32

/* Merge e's rank and id (NONE for none) into *rank and *id. */
static inline void
join_of(const struct merge *e, uint32_t *rank, uint32_t *id)
{
	*rank = e != NULL ? e->rank : NONE;
	*id = e != NULL ? e->id : NONE;
}

static size_t
merge_short(const struct hftok *h, uint32_t *sym, size_t m)
{
	uint32_t rank[SHORT], id[SHORT], r;
	uint64_t x[SHORT];
	size_t i, best;

	for (i = 0; i + 1 < m; i++) {
		x[i] = owt_hash_pair((uint64_t)sym[i] << 32 | sym[i + 1]);
		__builtin_prefetch(&h->mh[x[i] & h->mmask]);
	}
	for (i = 0; i + 1 < m; i++)
		join_of(merge_lookup(h, (uint64_t)sym[i] << 32 | sym[i + 1],
		    x[i]), &rank[i], &id[i]);
	while (m > 1) {
		r = NONE;
		best = 0;
		for (i = 0; i + 1 < m; i++)
			if (rank[i] < r) {
				r = rank[i];
				best = i;
			}
		if (r == NONE)
			break;
		/* part best takes in the next: pair best + 1 goes */
		sym[best] = id[best];
		m--;
		memmove(&sym[best + 1], &sym[best + 2],
		    (m - best - 1) * sizeof *sym);
		if (m > best + 2) {
			memmove(&rank[best + 1], &rank[best + 2],
			    (m - best - 2) * sizeof *rank);
			memmove(&id[best + 1], &id[best + 2],
			    (m - best - 2) * sizeof *id);
		}
		/* the pairs either side of it, anew */
		if (best + 1 < m)
			join_of(merge_find(h, sym[best], sym[best + 1]),
			    &rank[best], &id[best]);
		if (best > 0)
			join_of(merge_find(h, sym[best - 1], sym[best]),
			    &rank[best - 1], &id[best - 1]);
	}
	return m;
}

/*
 * The model on one piece: `tokenizers`' BPE (word.rs merge_all), the
 * listed pair of lowest rank merged first, leftmost among equals.
 */
static void
model_piece(struct hftok_state *s, const unsigned char *p, size_t n)
{
	const struct hftok *h = s->h;
	struct cached *c = NULL;
	size_t i, j, k, nh = 0, n0;
	uint32_t id;

	if (n == 0)
		return;
	if (n == 1) {
		push_id(s->out, h->byteid[p[0]]);
		return;
	}
	/*
	 * The cache first, pieces that are whole tokens (ignore_merges)
	 * kept there too: its line holds the bytes and the ids, where the
	 * vocabulary's probe waits for a slot, then for the token's length
	 * and bytes elsewhere (a Llama-3-style tokenizer.json on 20 MB:
	 * the probes 19% of the profile before, 12% after).
	 */
	if (n <= CACHE_BYTES) {
		c = &s->cache[owt_hash_bytes((const char *)p, n) &
		    (((size_t)1 << CACHE_BITS) - 1)];
		if (c->len == n && owt_same_bytes(c->bytes, (const char *)p,
		    n)) {
			for (i = 0; i < c->nids; i++)
				push_id(s->out, c->ids[i]);
			return;
		}
	}
	if (h->ignore_merges && (id = vocab_find(h, (const char *)p, n)) !=
	    NONE) {
		push_id(s->out, id);
		if (c != NULL)
			cache_put(c, p, n, &id, 1);
		return;
	}
	n0 = s->out->n;
	if (n <= SHORT) {
		uint32_t sym[SHORT];
		size_t m;

		for (i = 0, m = 0; i < n; m++)
			i += chars_part(h->chars, h->byteid, p, n, i, &sym[m]);
		m = merge_short(h, sym, m);
		for (i = 0; i < m; i++)
			push_id(s->out, sym[i]);
		if (c != NULL && m <= CACHE_IDS)
			cache_put(c, p, n, sym, m);
		return;
	}
	if (n > s->cap) {
		s->cap = n;
		s->sym = xrealloc(s->sym, n * sizeof *s->sym);
		s->prev = xrealloc(s->prev, n * sizeof *s->prev);
		s->next = xrealloc(s->next, n * sizeof *s->next);
		s->heap = xrealloc(s->heap, 3 * n * sizeof *s->heap);
	}
	/* a byte a part, but for the characters taken whole (chars.h) */
	for (i = 0, j = NONE; i < n; j = i, i = k) {
		k = i + chars_part(h->chars, h->byteid, p, n, i, &s->sym[i]);
		s->prev[i] = (uint32_t)j;
		s->next[i] = k == n ? NONE : (uint32_t)k;
	}
	for (i = 0; i != NONE; i = s->next[i])
		try_pair(s, &nh, (uint32_t)i);
	while (nh > 0) {
		struct heapent e = heap_pop(s->heap, &nh);
		const struct merge *m;
		uint32_t r;

		if (s->sym[e.pos] == NONE || (r = s->next[e.pos]) == NONE)
			continue;
		m = merge_find(h, s->sym[e.pos], s->sym[r]);
		if (m == NULL || m->id != e.id)
			continue;
		s->sym[e.pos] = e.id;
		s->sym[r] = NONE;
		s->next[e.pos] = s->next[r];
		if (s->next[r] != NONE)
			s->prev[s->next[r]] = e.pos;
		if (s->prev[e.pos] != NONE)
			try_pair(s, &nh, s->prev[e.pos]);
		try_pair(s, &nh, e.pos);
	}
	for (i = 0; i != NONE; i = s->next[i])
		push_id(s->out, s->sym[i]);
	if (c != NULL && s->out->n - n0 <= CACHE_IDS)
		cache_put(c, p, n, s->out->v + n0, s->out->n - n0);
}

/* Pre-tokenizer step k and those after it, then the model, on p[0..n). */
static void
pre_step(struct hftok_state *s, int k, const char *p, size_t n)
{
	const struct hftok *h = s->h;
	size_t at, m;

	if (n == 0)
		return;
	if (k == h->nstep) {
		model_piece(s, (const unsigned char *)p, n);
		return;
	}
	if (h->step[k].prefix && p[0] != ' ') {
		struct buf *b = &s->scratch[k];

		b->len = 0;
		buf_addc(b, ' ');
		buf_add(b, p, n);
		p = b->p;
		n = b->len;
	}
	if (h->step[k].re == NULL) {
		pre_step(s, k + 1, p, n);
		return;
	}
	for (at = 0; at < n; at += m) {
		m = pretok_next(s->ps[k], p, n, at);
		pre_step(s, k + 1, p + at, m);
	}
}

/* Whether the character that ends (or starts) s is a word character. */
static int
word_cp(unsigned cp)
{
	/* ASCII letters, digits and '_'; every other letter counts too. */
	return (cp >= '0' && cp <= '9') || (cp >= 'A' && cp <= 'Z') ||
	    (cp >= 'a' && cp <= 'z') || cp == '_' || cp >= 0xaa;
}

static int
white_cp(unsigned cp)
{
	return (cp >= 9 && cp <= 13) || cp == ' ' || cp == 0x85 ||
	    cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
	    cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f ||
	    cp == 0x3000;
}

/* The code point that ends t[0..i), and its start in *at. */
static unsigned
cp_before(const char *t, size_t i, size_t *at)
{
	size_t j = i - 1;

	while (j > 0 && ((unsigned char)t[j] & 0xc0) == 0x80)
		j--;
	*at = j;
	return cp_at((const unsigned char *)t + j, i - j);
}

static unsigned
cp_from(const char *t, size_t n, size_t i, size_t *k)
{
	*k = utf8_seqlen((const unsigned char *)t + i, n - i);
	if (*k == 0)
		*k = 1;
	return cp_at((const unsigned char *)t + i, *k);
}

/*
 * The next added token (normalized or not, as norm) in t[from..n): its
 * id, and its span with lstrip and rstrip in *a, *b (never before done).
 * NONE when there is none.
 */
static uint32_t
added_next(const struct hftok *h, const char *t, size_t n, size_t from,
    size_t done, int norm, size_t *a, size_t *b)
{
	size_t i, j, k;
	const struct added *d;

	for (i = from; i < n; i++) {
		unsigned c;

		/* where all begin with one byte ('<'), memchr's pace to it */
		if (h->one_first >= 0) {
			const char *q = memchr(t + i, h->one_first, n - i);

			if (q == NULL)
				break;
			i = (size_t)(q - t);
		}
		c = (unsigned char)t[i];
		if (h->first[c] == h->first[c + 1])
			continue;
		d = NULL;
		for (j = h->first[c]; j < h->first[c + 1]; j++)
			if (h->add[j].normalized == norm && h->add[j].n <= n - i &&
			    memcmp(h->add[j].s, t + i, h->add[j].n) == 0) {
				d = &h->add[j];
				break;
			}
		if (d == NULL)
			continue;
		*a = i;
		*b = i + d->n;
		if (d->single && ((i > 0 && word_cp(cp_before(t, i, &k))) ||
		    (*b < n && word_cp(cp_from(t, n, *b, &k))))) {
			i = *b - 1;	/* the search goes on after it */
			continue;
		}
		if (d->lstrip) {
			while (*a > done && white_cp(cp_before(t, *a, &k)))
				*a = k;
		}
		if (d->rstrip)
			while (*b < n && white_cp(cp_from(t, n, *b, &k)))
				*b += k;
		return d->id;
	}
	return NONE;
}

/* Normalized text: pre-tokenizer and model between normalized tokens. */
static void
encode_normalized(struct hftok_state *s, const char *t, size_t n)
{
	size_t at = 0, a, b;
	uint32_t id;

	while ((id = added_next(s->h, t, n, at, at, 1, &a, &b)) != NONE) {
		pre_step(s, 0, t + at, a - at);
		push_id(s->out, id);
		at = b;
	}
	pre_step(s, 0, t + at, n - at);
}

static void
encode_raw(struct hftok_state *s, const char *t, size_t n)
{
	size_t i, len;
	uint8_t *u;

	if (n == 0)
		return;
	if (s->h->nfc) {
		for (i = 0; i < n && (unsigned char)t[i] < 0xcc; i++)
			;
		if (i < n && (u = u8_normalize(UNINORM_NFC, (const uint8_t *)t,
		    n, NULL, &len)) != NULL) {
			s->norm.len = 0;
			buf_add(&s->norm, u, len);
			free(u);
			encode_normalized(s, s->norm.p, s->norm.len);
			return;
		}
	}
	encode_normalized(s, t, n);
}

size_t
hftok_encode(struct hftok_state *s, const char *text, size_t len,
    struct bpe_ids *out)
{
	const struct hftok *h = s->h;
	size_t n0 = out->n, at = 0, a, b;
	uint32_t id;
	int k;

	s->out = out;
	for (k = 0; k < h->npre; k++)
		push_id(out, h->pre[k]);
	while ((id = added_next(h, text, len, at, at, 0, &a, &b)) != NONE) {
		encode_raw(s, text + at, a - at);
		push_id(out, id);
		at = b;
	}
	encode_raw(s, text + at, len - at);
	for (k = 0; k < h->npost; k++)
		push_id(out, h->post[k]);
	return out->n - n0;
}

size_t
hftok_decode(const struct hftok *h, const uint32_t *ids, size_t n,
    struct buf *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (ids[i] >= h->nvocab || h->len[ids[i]] == NONE)
			return i;
		buf_add(out, h->pool + h->off[ids[i]], h->len[ids[i]]);
	}
	return n;
}
