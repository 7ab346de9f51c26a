/* chars.h - characters of two or three bytes taken whole before BPE's merges */
#ifndef OWT_CHARS_H
#define OWT_CHARS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A piece of Cyrillic or Greek letters is two bytes a letter, and half
 * its merges join a letter's bytes. Character c (bytes B, of two or
 * three, a token made by a join of rank r) may start a piece's merges
 * whole, where that changes no id:
 *  (a) B's own merges (B alone) end in c, each of rank r or less;
 *  (b) no join of rank below r takes a part of c's (B's first bytes, or
 *      the whole of c) with a part before it that ends with the byte
 *      before c in the piece, or a part of c's (B's last bytes, or the
 *      whole) with one after it that starts with the byte after.
 * While c is not whole, a join inside it of rank r or less is there to
 * take, and by (b) a join across its edge ranks above r: no merge takes
 * part of c with a byte outside before c is whole. Every other merge
 * taken meanwhile ranks below that join inside it, so below r, and by
 * (b) below any join of c whole with a neighbour: it is the lowest, and
 * leftmost, among the joins of the piece with c taken whole too. So the
 * merges are the same but for those inside c.
 *
 * A join is a tokenizer's: a rank file's joins any two parts whose bytes
 * are a token, at its rank (tiktoken.c), tokenizer.json's the pairs of
 * tokens its merges list (hftok.c). Each tells the parts of c's edges by
 * keys of its own (not 0), and each join across an edge part: its key,
 * the byte beside the part, its rank. (b) is kept per character as two
 * sets of those bytes, the joins of rank below c's.
 */
struct char_tok {
	uint32_t tok, rank;
	uint16_t left, right;	/* the byte sets (set[]) that forbid it */
};

struct chars {
	uint16_t *idx;		/* by code point (below 0x10000): ch[], 0 none */
	struct char_tok *ch;	/* ch[1..n] */
	uint64_t (*set)[4];	/* a bit a byte */
	size_t n;
};

struct chars_build;

struct chars_build *chars_build_new(void);
/*
 * Character cp (of two or three bytes; (a) holds), token tok, made by a
 * join of rank rank; the keys of its edge parts, left[0..3) and
 * right[0..3) (0: none), the whole character's among them.
 */
void chars_build_char(struct chars_build *b, unsigned cp, uint32_t tok,
    uint32_t rank, const uint32_t *left, const uint32_t *right);
/* A join of rank rank of the edge part of key key with a part whose byte beside it is byte. */
void chars_build_edge(struct chars_build *b, uint32_t key, uint8_t byte,
    uint32_t rank);
/* The table, b freed: NULL where no character was given. */
struct chars *chars_build_end(struct chars_build *b);
void chars_free(struct chars *c);

/*
 * The length of the character of two or three bytes at u[0..n), its
 * code point into *cp; 0 for any other bytes.
 */
static inline size_t
char_at(const unsigned char *u, size_t n, unsigned *cp)
{
	if (u[0] >= 0xc2 && u[0] < 0xe0) {
		if (n < 2 || (u[1] & 0xc0) != 0x80)
			return 0;
		*cp = (u[0] & 0x1fu) << 6 | (u[1] & 0x3fu);
		return 2;
	}
	if (u[0] >= 0xe0 && u[0] < 0xf0) {
		if (n < 3 || ((u[1] ^ 0x80) | (u[2] ^ 0x80)) & 0xc0)
			return 0;
		*cp = (u[0] & 0x0fu) << 12 | (u[1] & 0x3fu) << 6 |
		    (u[2] & 0x3fu);
		/* not overlong, not a surrogate */
		return *cp >= 0x800 && (*cp < 0xd800 || *cp > 0xdfff) ? 3 : 0;
	}
	return 0;
}

/*
 * The length of the part at u[i] of piece u[0..n) that a BPE's merges
 * start from, its token into *tok: a character that may be taken whole
 * (c may be NULL), or the byte, whose token is byte[u[i]].
 */
static inline size_t
chars_part(const struct chars *c, const uint32_t *byte,
    const unsigned char *u, size_t n, size_t i, uint32_t *tok)
{
	const struct char_tok *t;
	size_t len;
	unsigned cp;

	if (u[i] < 0xc2 || c == NULL || (len = char_at(u + i, n - i, &cp)) == 0 ||
	    c->idx[cp] == 0)
		goto byte;
	t = &c->ch[c->idx[cp]];
	if (i > 0 && (c->set[t->left][u[i - 1] >> 6] >> (u[i - 1] & 63) & 1))
		goto byte;
	if (i + len < n &&
	    (c->set[t->right][u[i + len] >> 6] >> (u[i + len] & 63) & 1))
		goto byte;
	*tok = t->tok;
	return len;
byte:
	*tok = byte[u[i]];
	return 1;
}

#endif
