/* textfix.c - ftfy 6's fix_text in C: mojibake, entities, controls, widths, NFC */
#include <stdlib.h>
#include <string.h>

#include <unictype.h>
#include <uninorm.h>

#include "text/textfix.h"

/*
 * This follows ftfy 6.3 (fix_text with the default TextFixerConfig) step
 * by step; see ../shared/notes/clean-dedup.md section 2. The text is
 * fixed line by line ("segments"), each line repeatedly until nothing
 * changes. The mojibake repair re-encodes a line in a single-byte code
 * page and decodes the bytes as UTF-8, but only when the "badness"
 * heuristic says the line looks like mojibake.
 */

enum { CP_LATIN1, CP_1252, CP_1251, CP_1250, CP_1253, CP_1254, CP_1257,
	CP_8859_2, CP_MACROMAN, CP_437, CP_N };

#include "text/textfix-tables.h"

const char *const textfix_name[TF_NFIXES] = {
	"unescape_html", "fix_encoding", "fix_c1_controls",
	"fix_latin_ligatures", "fix_character_width", "uncurl_quotes",
	"fix_line_breaks", "remove_terminal_escapes", "remove_control_chars",
	"nfc"
};

/* The longest segment fixed at once (ftfy's max_decode_length). */
#define MAX_SEGMENT 1000000
/* A bound on fixed-point loops that ftfy leaves unbounded. */
#define MAX_ROUNDS 64

/* Character classes: the badness heuristic's, and helpers. */
enum {
	B_C1 = 1u << 0,		/* U+0080..U+009F */
	B_BAD = 1u << 1,	/* almost only seen in mojibake */
	B_LAW = 1u << 2,	/* pilcrow, section sign */
	B_CUR = 1u << 3,	/* currency */
	B_SP = 1u << 4,		/* opening punctuation */
	B_EP = 1u << 5,		/* closing punctuation */
	B_NUM = 1u << 6,	/* numeric and math signs */
	B_KAO = 1u << 7,	/* letters used in kaomoji */
	B_UA = 1u << 8,		/* upper-case accented Latin */
	B_LA = 1u << 9,		/* lower-case accented Latin */
	B_UC = 1u << 10,	/* upper-case Greek and Cyrillic */
	B_LC = 1u << 11,	/* lower-case Greek and Cyrillic */
	B_BOX = 1u << 12,	/* box drawing */
	B_COMMON = 1u << 13,	/* common in mojibake and in real text */
	B_F2 = 1u << 14,	/* a single-byte reading of UTF-8 lead bytes */
	B_F3 = 1u << 15,
	B_F4 = 1u << 16,
	B_CONT = 1u << 17,	/* ... of UTF-8 continuation bytes */
	B_CONTS = 1u << 18,	/* ... the same without spaces and punctuation */
	B_WS = 1u << 19,	/* Python's \s */
	B_W = 1u << 20,		/* Python's \w */
	B_NFC = 1u << 21,	/* may change under NFC */
	B_FIX = 1u << 22,	/* changed by a fix other than HTML, mojibake, NFC */
	B_AMP = 1u << 23	/* '&' */
};

static uint32_t cls_bmp[0x10000];

/* Members of the badness classes (ftfy's MOJIBAKE_CATEGORIES). */
static const struct { uint32_t lo, hi, bits; } class_ranges[] = {
	{ 0x80, 0x9f, B_C1 },
	{ 0xa6, 0xa6, B_BAD }, { 0xa4, 0xa4, B_BAD }, { 0xa8, 0xa8, B_BAD },
	{ 0xac, 0xac, B_BAD }, { 0xaf, 0xaf, B_BAD }, { 0xb8, 0xb8, B_BAD },
	{ 0x192, 0x192, B_BAD }, { 0x2c6, 0x2c7, B_BAD }, { 0x2d8, 0x2d8, B_BAD },
	{ 0x2db, 0x2dc, B_BAD }, { 0x2020, 0x2021, B_BAD },
	{ 0x2030, 0x2030, B_BAD }, { 0x2310, 0x2310, B_BAD },
	{ 0x25ca, 0x25ca, B_BAD }, { 0xfffd, 0xfffd, B_BAD },
	{ 0xaa, 0xaa, B_BAD }, { 0xba, 0xba, B_BAD },
	{ 0xb6, 0xb6, B_LAW }, { 0xa7, 0xa7, B_LAW },
	{ 0xa2, 0xa3, B_CUR }, { 0xa5, 0xa5, B_CUR }, { 0x20a7, 0x20a7, B_CUR },
	{ 0x20ac, 0x20ac, B_CUR },
	{ 0xa1, 0xa1, B_SP }, { 0xab, 0xab, B_SP }, { 0xbf, 0xbf, B_SP },
	{ 0xa9, 0xa9, B_SP }, { 0x384, 0x385, B_SP }, { 0x2018, 0x2018, B_SP },
	{ 0x201a, 0x201a, B_SP }, { 0x201c, 0x201c, B_SP },
	{ 0x201e, 0x201e, B_SP }, { 0x2022, 0x2022, B_SP },
	{ 0x2039, 0x2039, B_SP }, { 0xf8ff, 0xf8ff, B_SP },
	{ 0xae, 0xae, B_EP }, { 0xbb, 0xbb, B_EP }, { 0x2dd, 0x2dd, B_EP },
	{ 0x201d, 0x201d, B_EP }, { 0x203a, 0x203a, B_EP },
	{ 0x2122, 0x2122, B_EP },
	{ 0xb1, 0xb3, B_NUM }, { 0xb9, 0xb9, B_NUM }, { 0xbc, 0xbe, B_NUM },
	{ 0xd7, 0xd7, B_NUM }, { 0xb5, 0xb5, B_NUM }, { 0xf7, 0xf7, B_NUM },
	{ 0x2044, 0x2044, B_NUM }, { 0x2202, 0x2202, B_NUM },
	{ 0x2206, 0x2206, B_NUM }, { 0x220f, 0x220f, B_NUM },
	{ 0x2211, 0x2211, B_NUM }, { 0x221a, 0x221a, B_NUM },
	{ 0x221e, 0x221e, B_NUM }, { 0x2229, 0x2229, B_NUM },
	{ 0x222b, 0x222b, B_NUM }, { 0x2248, 0x2248, B_NUM },
	{ 0x2260, 0x2261, B_NUM }, { 0x2264, 0x2265, B_NUM },
	{ 0x2116, 0x2116, B_NUM },
	{ 0xd2, 0xd6, B_KAO }, { 0xd9, 0xdc, B_KAO }, { 0xf2, 0xf6, B_KAO },
	{ 0xf8, 0xfc, B_KAO }, { 0x150, 0x150, B_KAO }, { 0x14c, 0x14c, B_KAO },
	{ 0x16a, 0x16a, B_KAO }, { 0x172, 0x172, B_KAO }, { 0xb0, 0xb0, B_KAO },
	{ 0xc0, 0xd1, B_UA }, { 0xd8, 0xd8, B_UA }, { 0xdc, 0xdd, B_UA },
	{ 0x100, 0x100, B_UA }, { 0x102, 0x102, B_UA }, { 0x104, 0x104, B_UA },
	{ 0x106, 0x106, B_UA }, { 0x10c, 0x10c, B_UA }, { 0x10e, 0x10e, B_UA },
	{ 0x110, 0x110, B_UA }, { 0x112, 0x112, B_UA }, { 0x116, 0x116, B_UA },
	{ 0x118, 0x118, B_UA }, { 0x11a, 0x11a, B_UA }, { 0x11e, 0x11e, B_UA },
	{ 0x122, 0x122, B_UA }, { 0x12a, 0x12a, B_UA }, { 0x130, 0x130, B_UA },
	{ 0x136, 0x136, B_UA }, { 0x139, 0x139, B_UA }, { 0x13b, 0x13b, B_UA },
	{ 0x13d, 0x13d, B_UA }, { 0x141, 0x141, B_UA }, { 0x143, 0x143, B_UA },
	{ 0x145, 0x145, B_UA }, { 0x147, 0x147, B_UA }, { 0x152, 0x152, B_UA },
	{ 0x158, 0x158, B_UA }, { 0x15a, 0x15a, B_UA }, { 0x15e, 0x15e, B_UA },
	{ 0x160, 0x160, B_UA }, { 0x162, 0x162, B_UA }, { 0x164, 0x164, B_UA },
	{ 0x16e, 0x16e, B_UA }, { 0x170, 0x170, B_UA }, { 0x178, 0x179, B_UA },
	{ 0x17b, 0x17b, B_UA }, { 0x17d, 0x17d, B_UA }, { 0x490, 0x490, B_UA },
	{ 0xdf, 0xdf, B_LA }, { 0xe0, 0xf1, B_LA }, { 0xfc, 0xfc, B_LA },
	{ 0x101, 0x101, B_LA }, { 0x103, 0x103, B_LA }, { 0x105, 0x105, B_LA },
	{ 0x107, 0x107, B_LA }, { 0x10d, 0x10d, B_LA }, { 0x10f, 0x10f, B_LA },
	{ 0x111, 0x111, B_LA }, { 0x113, 0x113, B_LA }, { 0x117, 0x117, B_LA },
	{ 0x119, 0x119, B_LA }, { 0x11b, 0x11b, B_LA }, { 0x11f, 0x11f, B_LA },
	{ 0x123, 0x123, B_LA }, { 0x12b, 0x12b, B_LA }, { 0x12f, 0x12f, B_LA },
	{ 0x137, 0x137, B_LA }, { 0x13a, 0x13a, B_LA }, { 0x13c, 0x13c, B_LA },
	{ 0x13e, 0x13e, B_LA }, { 0x142, 0x142, B_LA }, { 0x153, 0x153, B_LA },
	{ 0x155, 0x155, B_LA }, { 0x15b, 0x15b, B_LA }, { 0x15f, 0x15f, B_LA },
	{ 0x161, 0x161, B_LA }, { 0x165, 0x165, B_LA }, { 0x17a, 0x17a, B_LA },
	{ 0x17c, 0x17c, B_LA }, { 0x17e, 0x17e, B_LA }, { 0x491, 0x491, B_LA },
	{ 0xfb01, 0xfb02, B_LA },
	{ 0xde, 0xde, B_UC }, { 0x391, 0x3a9, B_UC }, { 0x386, 0x386, B_UC },
	{ 0x388, 0x38a, B_UC }, { 0x38c, 0x38c, B_UC }, { 0x38e, 0x38f, B_UC },
	{ 0x3aa, 0x3ab, B_UC }, { 0x401, 0x42f, B_UC },
	{ 0x3b1, 0x3c9, B_LC }, { 0x3ac, 0x3b0, B_LC }, { 0x430, 0x45f, B_LC },
	{ 0x2502, 0x2502, B_BOX }, { 0x250c, 0x250c, B_BOX },
	{ 0x2510, 0x2510, B_BOX }, { 0x2518, 0x2518, B_BOX },
	{ 0x251c, 0x251c, B_BOX }, { 0x2524, 0x2524, B_BOX },
	{ 0x252c, 0x252c, B_BOX }, { 0x253c, 0x253c, B_BOX },
	{ 0x2550, 0x256c, B_BOX }, { 0x2580, 0x2580, B_BOX },
	{ 0x2584, 0x2584, B_BOX }, { 0x2588, 0x2588, B_BOX },
	{ 0x258c, 0x258c, B_BOX }, { 0x2590, 0x2593, B_BOX },
	{ 0xa0, 0xa0, B_COMMON }, { 0xad, 0xad, B_COMMON },
	{ 0xb7, 0xb7, B_COMMON }, { 0xb4, 0xb4, B_COMMON },
	{ 0x2013, 0x2015, B_COMMON }, { 0x2026, 0x2026, B_COMMON },
	{ 0x2019, 0x2019, B_COMMON },
	/* Python's str.isspace() */
	{ 0x09, 0x0d, B_WS }, { 0x1c, 0x20, B_WS }, { 0x85, 0x85, B_WS },
	{ 0xa0, 0xa0, B_WS }, { 0x1680, 0x1680, B_WS },
	{ 0x2000, 0x200a, B_WS }, { 0x2028, 0x2029, B_WS },
	{ 0x202f, 0x202f, B_WS }, { 0x205f, 0x205f, B_WS },
	{ 0x3000, 0x3000, B_WS },
	/* what the fixers after fix_encoding may change */
	{ 0x00, 0x08, B_FIX }, { 0x0b, 0x0b, B_FIX }, { 0x0d, 0x1f, B_FIX },
	{ 0x7f, 0x9f, B_FIX }, { 0x132, 0x133, B_FIX }, { 0x149, 0x149, B_FIX },
	{ 0x1c4, 0x1cc, B_FIX }, { 0x1f1, 0x1f3, B_FIX }, { 0x2bc, 0x2bc, B_FIX },
	{ 0x2018, 0x201f, B_FIX }, { 0x2028, 0x2029, B_FIX },
	{ 0x206a, 0x206f, B_FIX }, { 0x3000, 0x3000, B_FIX },
	{ 0xfb00, 0xfb06, B_FIX }, { 0xfeff, 0xfeff, B_FIX },
	{ 0xfff9, 0xfffc, B_FIX },
	{ '&', '&', B_AMP },
};

/* Python's \w: letters, numbers and '_'. */
static int
is_word(uint32_t c)
{
	if (c < 0x80)
		return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || c == '_';
	return uc_is_general_category(c, UC_CATEGORY_L) ||
	    uc_is_general_category(c, UC_CATEGORY_N);
}

/* Conservative: a character that NFC may change or combine with. */
static int
nfc_sensitive(uint32_t c)
{
	uint32_t d[UC_DECOMPOSITION_MAX_LENGTH], r[8];
	size_t rn = 8;

	if (c < 0x300)
		return 0;
	if (uc_is_general_category(c, UC_CATEGORY_M) ||
	    (c >= 0x1100 && c <= 0x11ff) || (c >= 0xa960 && c <= 0xa97f) ||
	    (c >= 0xd7b0 && c <= 0xd7ff))
		return 1;
	if (uc_canonical_decomposition(c, d) < 0)
		return 0;
	if (c >= 0x10000)
		return 1;
	if (u32_normalize(UNINORM_NFC, &c, 1, r, &rn) == NULL)
		return 1;
	return !(rn == 1 && r[0] == c);
}

static uint32_t
cls_astral(uint32_t c)
{
	return (is_word(c) ? B_W : 0) | (nfc_sensitive(c) ? B_NFC : 0);
}

static inline uint32_t
cls(uint32_t c)
{
	return c < 0x10000 ? cls_bmp[c] : cls_astral(c);
}

/*
 * The code pages fix_encoding tries, in order; "sloppy" ones decode
 * their undefined bytes to the same-numbered code point and carry U+FFFD
 * as byte 0x1a, as ftfy's sloppy codecs do.
 */
static const struct { int page, sloppy; } try_order[] = {
	{ CP_LATIN1, 0 }, { CP_1252, 1 }, { CP_1251, 1 }, { CP_1250, 1 },
	{ CP_1253, 1 }, { CP_1254, 1 }, { CP_1257, 1 }, { CP_8859_2, 0 },
	{ CP_MACROMAN, 0 }, { CP_437, 0 }
};
#define NTRY (sizeof try_order / sizeof try_order[0])

/* Per tried code page: bytes 0x80..0xff (and 0x1a) by code point. */
static struct enc_entry {
	uint32_t cp;
	unsigned char byte;
} enc_table[NTRY][129];
static size_t enc_len[NTRY];

static int
entry_cmp(const void *a, const void *b)
{
	const struct enc_entry *x = a, *y = b;

	return x->cp < y->cp ? -1 : x->cp > y->cp;
}

static uint32_t
page_char(int page, int sloppy, unsigned b)
{
	if (b < 0x80)
		return b == 0x1a && sloppy ? 0xfffd : b;
	if (cp_high[page][b - 0x80] == 0)
		return sloppy ? b : 0;
	return cp_high[page][b - 0x80];
}

/* The UTF-8 clue classes are the characters these pages give those bytes. */
static const int clue_pages[] = { CP_LATIN1, CP_1252, CP_1251, CP_1250,
	CP_1253, CP_1254, CP_1257 };

void
textfix_init(void)
{
	static const uint32_t loose[] = { ' ', 0x2013, 0x2014, 0x2015, 0x2018,
		0x2019, 0x201a, 0x201c, 0x201d, 0x201e, 0x2022, 0x2026 };
	size_t i, e, k;
	uint32_t c, c2;
	unsigned b;

	for (c = 0; c < 0x10000; c++) {
		cls_bmp[c] = (is_word(c) ? B_W : 0) |
		    (c >= 0xd800 && c <= 0xdfff ? 0 : nfc_sensitive(c) ? B_NFC : 0);
		if (c >= 0xff01 && c < 0xfff0 && width_map[c - 0xff01][0])
			cls_bmp[c] |= B_FIX;
	}
	for (i = 0; i < sizeof class_ranges / sizeof class_ranges[0]; i++)
		for (c = class_ranges[i].lo; c <= class_ranges[i].hi; c++)
			cls_bmp[c] |= class_ranges[i].bits;
	for (i = 0; i < sizeof clue_pages / sizeof clue_pages[0]; i++) {
		for (b = 0x80; b < 0x100; b++) {
			if ((c = page_char(clue_pages[i], 0, b)) == 0)
				continue;
			if (b < 0xc0)
				cls_bmp[c] |= B_CONT | B_CONTS;
			else if (b >= 0xc2 && b <= 0xdf)
				cls_bmp[c] |= B_F2;
			else if (b >= 0xe0 && b <= 0xef)
				cls_bmp[c] |= B_F3;
			else if (b == 0xf0 || b == 0xf3)
				cls_bmp[c] |= B_F4;
		}
	}
	for (c = 0x80; c < 0xc0; c++)
		cls_bmp[c] |= B_CONT | B_CONTS;
	for (i = 0; i < sizeof loose / sizeof loose[0]; i++) {
		cls_bmp[loose[i]] |= B_CONT;
		cls_bmp[loose[i]] &= ~(uint32_t)B_CONTS;
	}
	for (e = 0; e < NTRY; e++) {
		k = 0;
		for (b = 0x80; b < 0x100; b++) {
			c2 = page_char(try_order[e].page, try_order[e].sloppy, b);
			enc_table[e][k].cp = c2;
			enc_table[e][k++].byte = b;
		}
		if (try_order[e].sloppy) {
			enc_table[e][k].cp = 0xfffd;
			enc_table[e][k++].byte = 0x1a;
		}
		qsort(enc_table[e], k, sizeof enc_table[e][0], entry_cmp);
		enc_len[e] = k;
	}
}

static void
v_reserve(struct u32v *v, size_t extra)
{
	if (v->n + extra > v->cap)
		v->p = xgrow(v->p, &v->cap, v->n + extra, sizeof *v->p);
}

static inline void
v_put(struct u32v *v, uint32_t c)
{
	if (v->n == v->cap)
		v_reserve(v, 1);
	v->p[v->n++] = c;
}

static void
v_add(struct u32v *v, const uint32_t *s, size_t n)
{
	if (n == 0)
		return;
	v_reserve(v, n);
	memcpy(v->p + v->n, s, n * sizeof *s);
	v->n += n;
}

static int
v_same(const struct u32v *v, const uint32_t *s, size_t n)
{
	return v->n == n && (n == 0 || memcmp(v->p, s, n * sizeof *s) == 0);
}

/* ---- the badness heuristic (ftfy's is_bad) ---- */

static int
in(uint32_t c, const uint32_t *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (set[i] == c)
			return 1;
	return 0;
}
#define IN(c, ...) in((c), (const uint32_t[]){ __VA_ARGS__ }, \
    sizeof((const uint32_t[]){ __VA_ARGS__ }) / sizeof(uint32_t))

static inline int
lower(uint32_t c)
{
	return c >= 'a' && c <= 'z';
}

static inline int
letter(uint32_t c)
{
	return lower(c) || (c >= 'A' && c <= 'Z');
}

/* Does one of the badness patterns match at s[i]? */
static int
bad_at(const uint32_t *s, size_t n, size_t i)
{
	uint32_t a = s[i], b, c, d, ka, kb, kc;
	const uint32_t acc = B_LA | B_UA, punct = B_SP | B_EP;

	if (a < 0x80) {
		if (!letter(a) && !(cls_bmp[a] & B_WS) && !IN(a, '.', ',', '?', '!'))
			return 0;
		if (i + 1 >= n)
			return 0;
		b = s[i + 1];
		kb = cls(b);
		c = i + 2 < n ? s[i + 2] : 0;
		kc = cls(c);
		if (letter(a) && (kb & (B_LC | B_UC)) && (kc & B_BAD))
			return 1;
		if ((cls_bmp[a] & B_WS) && (kb & B_UA) && (kc & B_CUR))
			return 1;
		if (lower(a) && (kb & B_UA) && (kc & (B_SP | B_CUR)))
			return 1;
		if (lower(a) && (kb & B_WS) && IN(c, 0xc3, 0xc2) && i + 3 < n &&
		    s[i + 3] == ' ')
			return 1;
		if (lower(a) && IN(b, 0xc3, 0xc2) && c == ' ' && i + 2 < n)
			return 1;
		if ((lower(a) || IN(a, '.', ',', '?', '!')) && b == 0xc2 &&
		    i + 2 < n && (c == ' ' || (kc & punct)))
			return 1;
		return 0;
	}
	ka = cls(a);
	if (ka & B_C1)
		return 1;
	if (i + 1 >= n)
		return 0;
	b = s[i + 1];
	kb = cls(b);
	c = i + 2 < n ? s[i + 2] : 0;
	kc = i + 2 < n ? cls(c) : 0;
	d = i + 3 < n ? s[i + 3] : 0;

	if ((ka & (B_BAD | acc | B_BOX | punct | B_CUR | B_NUM | B_LAW)) &&
	    (kb & B_BAD))
		return 1;
	if ((ka & B_BAD) && (kb & (acc | B_BOX | punct | B_CUR | B_NUM | B_LAW)))
		return 1;
	if ((ka & (B_LA | B_LC | B_BOX | B_EP | B_CUR | B_NUM)) && (kb & B_UA))
		return 1;
	if ((ka & (B_BOX | B_EP | B_CUR | B_NUM)) && (kb & B_LA))
		return 1;
	if ((ka & (B_LA | B_BOX | B_EP)) && (kb & B_CUR))
		return 1;
	if ((ka & B_WS) && (kb & B_UA) && (kc & B_CUR))
		return 1;
	if ((ka & (B_UA | B_BOX)) && (kb & (B_NUM | B_LAW)))
		return 1;
	if ((ka & (acc | B_BOX | B_CUR | B_EP)) && (kb & B_SP) && (kc & B_NUM))
		return 1;
	if ((ka & (acc | B_CUR | B_NUM | B_BOX | B_LAW)) && (kb & B_EP) &&
	    (kc & B_SP))
		return 1;
	if ((ka & (B_CUR | B_NUM | B_BOX)) && (kb & B_SP))
		return 1;
	if ((ka & B_BOX) && (kb & (B_KAO | B_EP)))
		return 1;
	if ((ka & (acc | B_CUR | B_NUM | punct | B_LAW)) && (kb & B_BOX))
		return 1;
	if ((ka & acc) && (kb & punct) && (kc & B_W))
		return 1;
	if ((a == 0x152 || a == 0x153) && !letter(b))
		return 1;
	if ((ka & B_UA) && b == 0xb0)
		return 1;
	if (IN(a, 0xc2, 0xc3, 0xce, 0xd0) && ((kb & punct) ||
	    IN(b, 0x20ac, 0x153, 0x160, 0x161, 0xa2, 0xa3, 0x178, 0x17e, 0xa0,
	    0xad, 0xae, 0xa9, 0xb0, 0xb7, 0xbb, 0x2013, 0x2014, 0xb4)))
		return 1;
	if (a == 0xd7 && (b == 0xb2 || b == 0xb3))
		return 1;
	if (IN(a, 0xd8, 0xd9) && i + 3 < n && IN(c, 0xd8, 0xd9)) {
		const uint32_t x = B_COMMON | B_CUR | B_BAD | B_NUM | B_SP;
		uint32_t kd = cls(d);

		if (((kb & x) || IN(b, 0x178, 0x160, 0xae, 0xb0, 0xb5, 0xbb)) &&
		    ((kd & x) || IN(d, 0x178, 0x160, 0xae, 0xb0, 0xb5, 0xbb)))
			return 1;
	}
	if (a == 0xe0 && IN(b, 0xb2, 0xb5, 0xb9, 0xbc, 0xbd, 0xbe))
		return 1;
	if (a == 0x221a && IN(b, 0xb1, 0x2202, 0x2020, 0x2260, 0xae, 0x2122,
	    0xb4, 0x2264, 0x2265, 0xa5, 0xb5, 0xf8))
		return 1;
	if (a == 0x2248 && (b == 0xb0 || b == 0xa2))
		return 1;
	if (a == 0x201a && b == 0xc4 && IN(c, 0xec, 0xee, 0xef, 0xf2, 0xf4,
	    0xfa, 0xf9, 0xfb, 0x2020, 0xb0, 0xa2, 0x3c0))
		return 1;
	if (a == 0x201a && (b == 0xe2 || b == 0xf3) &&
	    IN(c, 0xe0, 0xe4, 0xb0, 0xea))
		return 1;
	if (a == 0x432 && b == 0x402)
		return 1;
	if (IN(a, 0x412, 0x413, 0x420, 0x421) && IN(c, 0x412, 0x413, 0x420, 0x421) &&
	    ((kb & (B_C1 | B_BAD | punct | B_CUR)) || b == 0xb0 || b == 0xb5))
		return 1;
	if (a == 0x413 && b == 0x45e && c == 0x412 && d == 0x402 &&
	    i + 5 < n && s[i + 4] == 0x412 && s[i + 5] != '\n' &&
	    i + 6 < n && (letter(s[i + 6]) || s[i + 6] == ' '))
		return 1;
	if (a == 0xc3 && (b == 0xa0 || b == 0xa1))
		return 1;
	if (i == 0 && (a == 0xc3 || a == 0xc2) && b == ' ')
		return 1;
	if ((ka & B_EP) && b == 0xc2 && i + 2 < n && (c == ' ' || (kc & punct)))
		return 1;
	if (a == 0x3b2 && b == 0x20ac && IN(c, 0x2122, 0xa0, 0x386, 0xad, 0xae,
	    0xb0))
		return 1;
	if (IN(a, 0x392, 0x393, 0x39e, 0x39f) && IN(c, 0x392, 0x393, 0x39e, 0x39f) &&
	    ((kb & (B_C1 | B_BAD | punct | B_CUR)) || b == 0xb0))
		return 1;
	if (a == 0x101 && b == 0x20ac)
		return 1;
	return 0;
}

static int
is_bad(const uint32_t *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (bad_at(s, n, i))
			return 1;
	return 0;
}

/* ---- single-byte code pages and UTF-8 ---- */

/* The byte for c in tried code page e, or -1. */
static int
enc_byte(size_t e, uint32_t c)
{
	size_t lo = 0, hi = enc_len[e], mid;

	if (c < 0x80)
		return c == 0x1a && try_order[e].sloppy ? -1 : (int)c;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (enc_table[e][mid].cp == c)
			return enc_table[e][mid].byte;
		if (enc_table[e][mid].cp < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Encode s in code page e into b; 0, or -1 if a character is not in it. */
static int
enc_text(size_t e, const uint32_t *s, size_t n, struct buf *b)
{
	size_t i;
	int x;

	b->len = 0;
	buf_reserve(b, n);
	for (i = 0; i < n; i++) {
		if ((x = enc_byte(e, s[i])) < 0)
			return -1;
		b->p[b->len++] = (char)x;
	}
	return 0;
}

static inline int
cont(unsigned char c)
{
	return c >= 0x80 && c <= 0xbf;
}

/*
 * Decode UTF-8 strictly, as Python does; with variants, also CESU-8
 * surrogate pairs and Java's C0 80 for U+0000 (ftfy's utf-8-variants).
 */
static int
dec_utf8(const unsigned char *p, size_t n, int variants, struct u32v *out)
{
	size_t i = 0, k;
	uint32_t c;

	out->n = 0;
	v_reserve(out, n);
	while (i < n) {
		c = p[i];
		if (c < 0x80) {
			out->p[out->n++] = c;
			i++;
			continue;
		}
		if (variants && c == 0xc0 && i + 1 < n && p[i + 1] == 0x80) {
			out->p[out->n++] = 0;
			i += 2;
			continue;
		}
		if (variants && c == 0xed && i + 5 < n && p[i + 1] >= 0xa0 &&
		    p[i + 1] <= 0xaf && cont(p[i + 2]) && p[i + 3] == 0xed &&
		    p[i + 4] >= 0xb0 && p[i + 4] <= 0xbf && cont(p[i + 5])) {
			out->p[out->n++] = 0x10000 + ((p[i + 1] & 0x0fu) << 16) +
			    ((p[i + 2] & 0x3fu) << 10) + ((p[i + 4] & 0x0fu) << 6) +
			    (p[i + 5] & 0x3fu);
			i += 6;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			k = 1;
		else if (c >= 0xe0 && c <= 0xef)
			k = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			k = 3;
		else
			return -1;
		if (n - i <= k)
			return -1;
		if (!cont(p[i + 1]) || (k > 1 && !cont(p[i + 2])) ||
		    (k > 2 && !cont(p[i + 3])))
			return -1;
		if ((c == 0xe0 && p[i + 1] < 0xa0) || (c == 0xed && p[i + 1] > 0x9f) ||
		    (c == 0xf0 && p[i + 1] < 0x90) || (c == 0xf4 && p[i + 1] > 0x8f))
			return -1;
		if (k == 1)
			c = (c & 0x1f) << 6 | (p[i + 1] & 0x3f);
		else if (k == 2)
			c = (c & 0x0f) << 12 | (p[i + 1] & 0x3fu) << 6 |
			    (p[i + 2] & 0x3f);
		else
			c = (c & 0x07) << 18 | (p[i + 1] & 0x3fu) << 12 |
			    (p[i + 2] & 0x3fu) << 6 | (p[i + 3] & 0x3f);
		out->p[out->n++] = c;
		i += k + 1;
	}
	return 0;
}

/* ---- fix_encoding's byte-level repairs ---- */

/* A continuation byte that is not 0x85 or 0xa0. */
static inline int
xcont(unsigned char c)
{
	return cont(c) && c != 0x85 && c != 0xa0;
}

/* The length of ftfy's ALTERED_UTF8_RE match at p[i] (a space for 0xa0). */
static size_t
altered_at(const unsigned char *p, size_t n, size_t i)
{
	unsigned char c = p[i];
	size_t k, sp = 0;

	if (i + 1 >= n)
		return 0;
	if (c == 0xc2 || c == 0xc3 || c == 0xc5 || c == 0xce || c == 0xd0 ||
	    c == 0xd9)
		return p[i + 1] == ' ' ? 2 : 0;
	if (c >= 0xe0 && c <= 0xe3 && i + 2 < n) {
		if ((c == 0xe2 || c == 0xe3) && p[i + 1] == ' ' && xcont(p[i + 2]))
			return 3;
		return xcont(p[i + 1]) && p[i + 2] == ' ' ? 3 : 0;
	}
	if (c == 0xf0 && i + 3 < n) {
		for (k = 1; k <= 3; k++) {
			if (p[i + k] == ' ')
				sp++;
			else if (!cont(p[i + k]))
				return 0;
		}
		return sp == 1 ? 4 : 0;
	}
	return 0;
}

static int
altered_search(const struct buf *b)
{
	size_t i;

	for (i = 0; i < b->len; i++)
		if (altered_at((unsigned char *)b->p, b->len, i))
			return 1;
	return 0;
}

/*
 * ftfy's restore_byte_a0: put back 0xa0 bytes that became spaces inside
 * UTF-8 sequences; "Ã " as a word of its own becomes "à " (except before
 * the Portuguese "às", "àquele", ...).
 */
static void
restore_a0(const struct buf *in, struct buf *out)
{
	const unsigned char *p = (unsigned char *)in->p;
	size_t n = in->len, i, m, k;
	struct buf t = { 0 };

	for (i = 0; i < n; i++) {
		buf_addc(&t, (char)p[i]);
		if (p[i] == 0xc3 && i + 1 < n && p[i + 1] == ' ' &&
		    !(i + 2 < n && p[i + 2] == ' ') &&
		    !(n - i - 2 >= 5 && (memcmp(p + i + 2, "quele", 5) == 0 ||
		    memcmp(p + i + 2, "quela", 5) == 0 ||
		    memcmp(p + i + 2, "quilo", 5) == 0)) &&
		    !(n - i - 2 >= 2 && memcmp(p + i + 2, "s ", 2) == 0)) {
			buf_addc(&t, (char)0xa0);
			buf_addc(&t, ' ');
			i++;
		}
	}
	p = (unsigned char *)t.p;
	n = t.len;
	out->len = 0;
	for (i = 0; i < n; i += m) {
		if ((m = altered_at(p, n, i)) == 0) {
			buf_addc(out, (char)p[i]);
			m = 1;
			continue;
		}
		for (k = 0; k < m; k++)
			buf_addc(out, p[i + k] == ' ' ? (char)0xa0 : (char)p[i + k]);
	}
	buf_free(&t);
}

static inline int
lost(unsigned char c)
{
	return c == 0x1a || c == '?';
}

static inline int
lost_or_cont(unsigned char c)
{
	return c == 0x1a || cont(c);
}

/* The length of ftfy's LOSSY_UTF8_RE match at p[i], or 0. */
static size_t
lossy_at(const unsigned char *p, size_t n, size_t i)
{
	unsigned char c = p[i];

	if (c >= 0xc2 && c <= 0xdf && i + 1 < n &&
	    (p[i + 1] == 0x1a || (c <= 0xc3 && p[i + 1] == '?')))
		return 2;
	if (c == 0xed && i + 5 < n && p[i + 1] >= 0xa0 && p[i + 1] <= 0xaf &&
	    p[i + 3] == 0xed && p[i + 4] >= 0xb0 && p[i + 4] <= 0xbf &&
	    ((lost(p[i + 2]) && (lost(p[i + 5]) || cont(p[i + 5]))) ||
	    ((lost(p[i + 2]) || cont(p[i + 2])) && lost(p[i + 5]))))
		return 6;
	if (c >= 0xe0 && c <= 0xef && i + 2 < n &&
	    ((lost(p[i + 1]) && lost_or_cont(p[i + 2])) ||
	    (lost_or_cont(p[i + 1]) && lost(p[i + 2]))))
		return 3;
	if (c >= 0xf0 && c <= 0xf4 && i + 3 < n &&
	    ((lost(p[i + 1]) && lost_or_cont(p[i + 2]) && lost_or_cont(p[i + 3])) ||
	    (lost_or_cont(p[i + 1]) && lost(p[i + 2]) && lost_or_cont(p[i + 3])) ||
	    (lost_or_cont(p[i + 1]) && lost_or_cont(p[i + 2]) && lost(p[i + 3]))))
		return 4;
	return c == 0x1a;
}

/* ftfy's replace_lossy_sequences: lossy UTF-8 sequences become U+FFFD. */
static void
replace_lossy(const struct buf *in, struct buf *out)
{
	const unsigned char *p = (unsigned char *)in->p;
	size_t i, m;

	out->len = 0;
	for (i = 0; i < in->len; i += m) {
		if ((m = lossy_at(p, in->len, i)) == 0) {
			buf_addc(out, (char)p[i]);
			m = 1;
		} else {
			buf_add(out, "\xef\xbf\xbd", 3);
		}
	}
}

/*
 * The length of ftfy's UTF8_DETECTOR_RE match at s[i]: one or more
 * single-byte readings of whole UTF-8 sequences, not right after a
 * continuation-looking character.
 */
static size_t
detect_at(const uint32_t *s, size_t n, size_t i)
{
	static const struct { uint32_t lead; size_t k; } unit[] = {
		{ B_F2, 1 }, { B_F3, 2 }, { B_F4, 3 }
	};
	size_t j = i, u, k;
	uint32_t c;

	if (i > 0 && (cls(s[i - 1]) & B_CONTS))
		return 0;
	while (j < n) {
		c = cls(s[j]);
		for (u = 0; u < 3; u++) {
			if (!(c & unit[u].lead) || j + unit[u].k >= n)
				continue;
			for (k = 1; k <= unit[u].k; k++)
				if (!(cls(s[j + k]) & B_CONT))
					break;
			if (k > unit[u].k)
				break;
		}
		if (u == 3)
			break;
		j += unit[u].k + 1;
	}
	return j - i;
}

static int fix_encoding(const uint32_t *s, size_t n, struct u32v *out);

/* ftfy's decode_inconsistent_utf8: fix mojibake spans on their own. */
static int
decode_inconsistent(const uint32_t *s, size_t n, struct u32v *out)
{
	struct u32v sub = { 0 };
	size_t i = 0, m;

	out->n = 0;
	while (i < n) {
		if ((m = detect_at(s, n, i)) == 0) {
			v_put(out, s[i++]);
			continue;
		}
		if (m < n && is_bad(s + i, m) && fix_encoding(s + i, m, &sub))
			v_add(out, sub.p, sub.n);
		else
			v_add(out, s + i, m);
		i += m;
	}
	free(sub.p);
	return !v_same(out, s, n);
}

static void
swapb(struct buf *a, struct buf *b)
{
	struct buf t = *a;

	*a = *b;
	*b = t;
}

/* One round of ftfy's fix_encoding; 1 when out holds a changed text. */
static int
encoding_step(const uint32_t *s, size_t n, struct u32v *out)
{
	struct buf b = { 0 }, b2 = { 0 };
	size_t e, i;
	int latin1 = 0, ret = 0, variants;
	uint32_t max = 0, m;

	for (i = 0; i < n; i++)
		if (s[i] > max)
			max = s[i];
	if (max < 0x80 || !is_bad(s, n))
		return 0;
	for (e = 0; e < NTRY; e++) {
		if (enc_text(e, s, n, &b) < 0)
			continue;
		if (e == 0)
			latin1 = 1;
		if (try_order[e].page != CP_MACROMAN && altered_search(&b)) {
			restore_a0(&b, &b2);
			swapb(&b, &b2);
		}
		if (try_order[e].sloppy) {
			replace_lossy(&b, &b2);
			swapb(&b, &b2);
		}
		variants = memchr(b.p, 0xed, b.len) || memchr(b.p, 0xc0, b.len);
		if (dec_utf8((unsigned char *)b.p, b.len, variants, out) == 0) {
			ret = !v_same(out, s, n);
			goto done;
		}
	}
	for (i = 0; i < n; i++)
		if (detect_at(s, n, i))
			break;
	if (i < n && decode_inconsistent(s, n, out)) {
		ret = 1;
		goto done;
	}
	if (latin1) {
		out->n = 0;
		for (i = 0; i < n; i++) {
			m = s[i];
			if (m >= 0x80 && m < 0xa0 &&
			    (m = cp_high[CP_1252][m - 0x80]) == 0)
				break;
			v_put(out, m);
		}
		if (i == n && !v_same(out, s, n)) {
			ret = 1;
			goto done;
		}
	}
	out->n = 0;
	for (i = 0; i < n; i++) {
		m = s[i];
		if (m >= 0x80 && m < 0xa0 && cp_high[CP_1252][m - 0x80])
			m = cp_high[CP_1252][m - 0x80];
		v_put(out, m);
	}
	ret = !v_same(out, s, n);
done:
	buf_free(&b);
	buf_free(&b2);
	return ret;
}

/* ftfy's fix_encoding: encoding steps until nothing changes. */
static int
fix_encoding(const uint32_t *s, size_t n, struct u32v *out)
{
	struct u32v a = { 0 }, b = { 0 }, t;
	int rounds;

	v_add(&a, s, n);
	for (rounds = 0; rounds < MAX_ROUNDS; rounds++) {
		if (!encoding_step(a.p, a.n, &b))
			break;
		t = a;
		a = b;
		b = t;
	}
	out->n = 0;
	v_add(out, a.p, a.n);
	free(a.p);
	free(b.p);
	return !v_same(out, s, n);
}

/* ---- the other fixers ---- */

static int
entity_cmp(const void *key, const void *e)
{
	return strcmp(key, ((const struct entity *)e)->name);
}

static inline int
alnum(uint32_t c)
{
	return letter(c) || (c >= '0' && c <= '9');
}

/*
 * The value of the reference "&#" s[0..n) ";" as html.unescape decodes
 * it: a code point, -2 for nothing (it is deleted), -1 when it is not a
 * whole numeric reference or decodes to ';' (then ftfy keeps it as is).
 */
static long
charref(const uint32_t *s, size_t n)
{
	size_t i = 0, j;
	unsigned long v = 0;
	int hex = 0;
	uint32_t d;

	if (s[0] == 'x' || s[0] == 'X')
		hex = i = 1;
	if (i == n)
		return -1;
	for (; i < n; i++) {
		d = s[i];
		if (d >= '0' && d <= '9')
			d -= '0';
		else if (hex && (d | 0x20) >= 'a' && (d | 0x20) <= 'f')
			d = (d | 0x20) - 'a' + 10;
		else
			return -1;
		v = v * (hex ? 16 : 10) + d;
		if (v > 0x10ffff)
			v = 0x110000;
	}
	if (v == 0)
		return 0xfffd;
	if (v == 0x0d)
		return '\r';
	if (v >= 0x80 && v < 0xa0)
		return charref_c1[v - 0x80];
	if ((v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		return 0xfffd;
	for (j = 0; j < sizeof charref_void / sizeof charref_void[0]; j++)
		if (v >= charref_void[j][0] && v <= charref_void[j][1])
			return -2;
	return v == ';' ? -1 : (long)v;
}

/* ftfy's unescape_html: "&name;" and "&#N;" references. */
static int
unescape(const uint32_t *s, size_t n, struct u32v *out)
{
	const struct entity *e;
	char name[32];
	size_t i, j, k, start;
	long v;
	int changed = 0, num;

	for (i = 0; i < n && s[i] != '&'; i++)
		;
	if (i == n)
		return 0;
	out->n = 0;
	v_add(out, s, i);
	for (; i < n; i++) {
		if (s[i] != '&') {
			v_put(out, s[i]);
			continue;
		}
		num = i + 1 < n && s[i + 1] == '#';
		start = i + 1 + num;
		for (j = start; j < n && j - start < 25 && alnum(s[j]); j++)
			;
		if (j == start || j - start > 24 || j >= n || s[j] != ';') {
			v_put(out, s[i]);
			continue;
		}
		if (num) {
			v = charref(s + start, j - start);
		} else {
			for (k = start; k < j; k++)
				name[k - start] = (char)s[k];
			name[k - start] = ';';
			name[k - start + 1] = '\0';
			e = bsearch(name, entities, sizeof entities / sizeof entities[0],
			    sizeof entities[0], entity_cmp);
			v = -1;
			if (e != NULL) {
				for (k = 0; k < 3 && e->cp[k]; k++)
					v_put(out, e->cp[k]);
				v = -3;
			}
		}
		if (v == -1) {
			v_put(out, s[i]);
			continue;
		}
		if (v >= 0)
			v_put(out, (uint32_t)v);
		changed = 1;
		i = j;
	}
	return changed;
}

/* The replacement r[0..k) of c by a per-character fixer; k = 0: none. */
static size_t
char_fix(int fix, uint32_t c, uint32_t r[3])
{
	static const struct { uint32_t c, r[3]; } lig[] = {
		{ 0x132, { 'I', 'J' } }, { 0x133, { 'i', 'j' } },
		{ 0x149, { 0x2bc, 'n' } }, { 0x1c4, { 'D', 0x17d } },
		{ 0x1c5, { 'D', 0x17e } }, { 0x1c6, { 'd', 0x17e } },
		{ 0x1c7, { 'L', 'J' } }, { 0x1c8, { 'L', 'j' } },
		{ 0x1c9, { 'l', 'j' } }, { 0x1ca, { 'N', 'J' } },
		{ 0x1cb, { 'N', 'j' } }, { 0x1cc, { 'n', 'j' } },
		{ 0x1f1, { 'D', 'Z' } }, { 0x1f2, { 'D', 'z' } },
		{ 0x1f3, { 'd', 'z' } }, { 0xfb00, { 'f', 'f' } },
		{ 0xfb01, { 'f', 'i' } }, { 0xfb02, { 'f', 'l' } },
		{ 0xfb03, { 'f', 'f', 'i' } }, { 0xfb04, { 'f', 'f', 'l' } },
		{ 0xfb05, { 0x17f, 't' } }, { 0xfb06, { 's', 't' } },
	};
	size_t i;

	if (!(cls(c) & B_FIX))
		return 0;
	switch (fix) {
	case TF_C1:
		if (c >= 0x80 && c < 0xa0 && cp_high[CP_1252][c - 0x80]) {
			r[0] = cp_high[CP_1252][c - 0x80];
			return 1;
		}
		return 0;
	case TF_LIGATURES:
		for (i = 0; i < sizeof lig / sizeof lig[0]; i++)
			if (lig[i].c == c) {
				memcpy(r, lig[i].r, sizeof lig[i].r);
				return r[2] ? 3 : 2;
			}
		return 0;
	case TF_WIDTH:
		if (c == 0x3000) {
			r[0] = ' ';
			return 1;
		}
		if (c >= 0xff01 && c < 0xfff0 && width_map[c - 0xff01][0]) {
			r[0] = width_map[c - 0xff01][0];
			r[1] = width_map[c - 0xff01][1];
			return r[1] ? 2 : 1;
		}
		return 0;
	case TF_QUOTES:
		if (c == 0x2bc || (c >= 0x2018 && c <= 0x201b)) {
			r[0] = '\'';
			return 1;
		}
		if (c >= 0x201c && c <= 0x201f) {
			r[0] = '"';
			return 1;
		}
		return 0;
	case TF_LINEBREAKS:
		if (c == '\r' || c == 0x2028 || c == 0x2029 || c == 0x85) {
			r[0] = '\n';
			return 1;
		}
		return 0;
	case TF_CONTROLS:
		return 0;	/* deleted: see control() */
	}
	return 0;
}

static inline int
control(uint32_t c)
{
	return c <= 0x08 || c == 0x0b || (c >= 0x0e && c <= 0x1f) || c == 0x7f ||
	    (c >= 0x206a && c <= 0x206f) || c == 0xfeff ||
	    (c >= 0xfff9 && c <= 0xfffc);
}

/* Apply a per-character fixer (or the deletion of controls). */
static int
map_chars(int fix, const uint32_t *s, size_t n, struct u32v *out)
{
	uint32_t r[3];
	size_t i, k;

	for (i = 0; i < n; i++)
		if (fix == TF_CONTROLS ? control(s[i]) : char_fix(fix, s[i], r) > 0)
			break;
	if (i == n)
		return 0;
	out->n = 0;
	v_add(out, s, i);
	for (; i < n; i++) {
		if (fix == TF_CONTROLS) {
			if (!control(s[i]))
				v_put(out, s[i]);
		} else if ((k = char_fix(fix, s[i], r)) == 0) {
			v_put(out, s[i]);
		} else if (!(s[i] == '\r' && i + 1 < n && s[i + 1] == '\n')) {
			v_add(out, r, k);
		}
	}
	return 1;
}

/* remove_terminal_escapes: ESC '[' (digits and ';')* letter. */
static int
remove_escapes(const uint32_t *s, size_t n, struct u32v *out)
{
	size_t i, j;
	int changed = 0;

	for (i = 0; i < n && s[i] != 0x1b; i++)
		;
	if (i == n)
		return 0;
	out->n = 0;
	v_add(out, s, i);
	for (; i < n; i++) {
		if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '[') {
			for (j = i + 2; j < n && (s[j] == ';' ||
			    uc_is_general_category(s[j], UC_DECIMAL_DIGIT_NUMBER)); j++)
				;
			if (j < n && letter(s[j])) {
				i = j;
				changed = 1;
				continue;
			}
		}
		v_put(out, s[i]);
	}
	return changed;
}

static int
nfc(const uint32_t *s, size_t n, struct u32v *out)
{
	size_t i, len;
	uint32_t *r;

	for (i = 0; i < n && !(cls(s[i]) & B_NFC); i++)
		;
	if (i == n)
		return 0;
	if ((r = u32_normalize(UNINORM_NFC, s, n, NULL, &len)) == NULL)
		owt_fatal("out of memory in NFC normalization");
	out->n = 0;
	v_add(out, r, len);
	free(r);
	return !v_same(out, s, n);
}

/* ---- segments and documents ---- */

/*
 * Fix the segment in v[0] as ftfy's fix_and_explain does: all the fixes
 * in order, again until a round changes nothing. Returns the fixes that
 * changed it; the result is in v[*res].
 */
static unsigned
fix_segment(struct u32v v[3], int html, unsigned en, int *res)
{
	int orig = 0, cur = 0, nxt, rounds, fix, changed;
	unsigned done = 0;

	for (rounds = 0; rounds < MAX_ROUNDS; rounds++) {
		for (fix = 0; fix < TF_NFIXES; fix++) {
			if (!(en & (1u << fix)) || (fix == TF_HTML && !html))
				continue;
			for (nxt = 0; nxt == orig || nxt == cur; nxt++)
				;
			switch (fix) {
			case TF_HTML:
				changed = unescape(v[cur].p, v[cur].n, &v[nxt]);
				break;
			case TF_ENCODING:
				changed = encoding_step(v[cur].p, v[cur].n, &v[nxt]) &&
				    (fix_encoding(v[nxt].p, v[nxt].n, &v[nxt]), 1);
				break;
			case TF_ESCAPES:
				changed = remove_escapes(v[cur].p, v[cur].n, &v[nxt]);
				break;
			case TF_NFC:
				changed = nfc(v[cur].p, v[cur].n, &v[nxt]);
				break;
			default:
				changed = map_chars(fix, v[cur].p, v[cur].n, &v[nxt]);
			}
			if (changed) {
				done |= 1u << fix;
				cur = nxt;
			}
		}
		if (cur == orig || v_same(&v[cur], v[orig].p, v[orig].n))
			break;
		orig = cur;
	}
	*res = cur;
	return done;
}

/* A segment that no fix can change: printable ASCII, tab, LF, FF. */
static int
plain(const unsigned char *p, size_t n, int html)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\f') ||
		    p[i] >= 0x7f || (p[i] == '&' && html))
			return 0;
	return 1;
}

/* Valid UTF-8 to code points. */
static void
utf8_to_u32(const unsigned char *p, size_t n, struct u32v *v)
{
	size_t i = 0;
	uint32_t c;

	v->n = 0;
	v_reserve(v, n);
	while (i < n) {
		c = p[i];
		if (c < 0x80) {
			i++;
		} else if (c < 0xe0) {
			c = (c & 0x1f) << 6 | (p[i + 1] & 0x3f);
			i += 2;
		} else if (c < 0xf0) {
			c = (c & 0x0f) << 12 | (p[i + 1] & 0x3fu) << 6 | (p[i + 2] & 0x3f);
			i += 3;
		} else {
			c = (c & 0x07) << 18 | (p[i + 1] & 0x3fu) << 12 |
			    (p[i + 2] & 0x3fu) << 6 | (p[i + 3] & 0x3f);
			i += 4;
		}
		v->p[v->n++] = c;
	}
}

static void
u32_to_utf8(const uint32_t *s, size_t n, struct buf *b)
{
	size_t i;
	char *q;
	uint32_t c;

	buf_reserve(b, 4 * n);
	q = b->p + b->len;
	for (i = 0; i < n; i++) {
		c = s[i];
		if (c < 0x80) {
			*q++ = (char)c;
		} else if (c < 0x800) {
			*q++ = (char)(0xc0 | c >> 6);
			*q++ = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			*q++ = (char)(0xe0 | c >> 12);
			*q++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*q++ = (char)(0x80 | (c & 0x3f));
		} else {
			*q++ = (char)(0xf0 | c >> 18);
			*q++ = (char)(0x80 | ((c >> 12) & 0x3f));
			*q++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*q++ = (char)(0x80 | (c & 0x3f));
		}
	}
	b->len = (size_t)(q - b->p);
}

unsigned
textfix(struct textfix *tf, const char *s, size_t n, unsigned en,
    struct buf *out)
{
	const unsigned char *p = (const unsigned char *)s, *nl;
	size_t pos = 0, end, i, cps;
	int html = (en >> TF_HTML) & 1, started = 0, res;
	unsigned done = 0, d;

	while (pos < n) {
		nl = memchr(p + pos, '\n', n - pos);
		end = nl ? (size_t)(nl - p) + 1 : n;
		if (end - pos > MAX_SEGMENT) {
			for (i = pos, cps = 0; i < end; i++)
				if ((p[i] & 0xc0) != 0x80 && cps++ == MAX_SEGMENT)
					break;
			end = i;
		}
		if (html && memchr(p + pos, '<', end - pos))
			html = 0;
		d = 0;
		if (!plain(p + pos, end - pos, html)) {
			utf8_to_u32(p + pos, end - pos, &tf->v[0]);
			d = fix_segment(tf->v, html, en, &res);
		}
		if (d && !started) {
			out->len = 0;
			buf_add(out, s, pos);
			started = 1;
		}
		if (d)
			u32_to_utf8(tf->v[res].p, tf->v[res].n, out);
		else if (started)
			buf_add(out, s + pos, end - pos);
		done |= d;
		pos = end;
	}
	if (started && out->len == n && memcmp(out->p, s, n) == 0)
		return 0;
	return done;
}

void
textfix_free(struct textfix *tf)
{
	size_t i;

	for (i = 0; i < sizeof tf->v / sizeof tf->v[0]; i++)
		free(tf->v[i].p);
	memset(tf, 0, sizeof *tf);
}
