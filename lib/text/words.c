/* words.c - the words of a text as Python's re.findall(r"\w+", text.lower()) finds them */
#include <stdlib.h>
#include <string.h>

#include <unicase.h>
#include <unictype.h>

#include "core/util.h"
#include "text/words.h"

static uint8_t word_bmp[0x10000 / 8];
static uint16_t lower_bmp[0x10000];

static int
is_word(uint32_t c)
{
	if (c < 0x10000)
		return word_bmp[c >> 3] >> (c & 7) & 1;
	return uc_is_general_category(c, UC_CATEGORY_L) ||
	    uc_is_general_category(c, UC_CATEGORY_N);
}

static uint32_t
lower(uint32_t c)
{
	return c < 0x10000 ? lower_bmp[c] : uc_tolower(c);
}

void
words_init(void)
{
	uint32_t c, l;

	for (c = 0; c < 0x10000; c++) {
		if (c == '_' || uc_is_general_category(c, UC_CATEGORY_L) ||
		    uc_is_general_category(c, UC_CATEGORY_N))
			word_bmp[c >> 3] |= (uint8_t)(1u << (c & 7));
		l = uc_tolower(c);
		lower_bmp[c] = (uint16_t)(l < 0x10000 ? l : c);
	}
}

#define FNV_PRIME 0x100000001b3ULL
#define FNV_BASIS 0xcbf29ce484222325ULL

/* The lower-cased word character c, or 0 when c is not one. */
static inline uint32_t
word_char(uint32_t c)
{
	if (c < 0x80) {
		if (c >= 'A' && c <= 'Z')
			return c + 'a' - 'A';
		return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '_' ? c : 0;
	}
	return is_word(c) ? lower(c) : 0;
}

/* Start, extend and end words; shared by the two splitters. */
struct splitter {
	struct words *w;
	struct word *cur;
	uint64_t h;
};

static inline void
split_char(struct splitter *sp, uint32_t c, size_t at, size_t cp)
{
	struct words *w = sp->w;

	if (c != 0) {
		if (sp->cur == NULL) {
			if (w->n == w->cap)
				w->w = xgrow(w->w, &w->cap, w->n + 1, sizeof *w->w);
			sp->cur = &w->w[w->n++];
			sp->cur->start = (uint32_t)at;
			sp->cur->cstart = (uint32_t)cp;
			sp->h = FNV_BASIS;
		}
		sp->h = (sp->h ^ c) * FNV_PRIME;
	} else if (sp->cur != NULL) {
		sp->cur->end = (uint32_t)at;
		sp->cur->clen = (uint32_t)(cp - sp->cur->cstart);
		sp->cur->hash = owt_mix64(sp->h);
		sp->cur = NULL;
	}
}

void
words_split32(const uint32_t *s, size_t n, struct words *w)
{
	struct splitter sp = { w, NULL, 0 };
	size_t i;

	w->n = 0;
	for (i = 0; i < n; i++)
		split_char(&sp, word_char(s[i]), i, i);
	split_char(&sp, 0, n, n);
}

void
words_split(const char *s, size_t n, struct words *w)
{
	const unsigned char *p = (const unsigned char *)s;
	struct splitter sp = { w, NULL, 0 };
	size_t i = 0, len, cp = 0;
	uint32_t c;

	w->n = 0;
	while (i < n) {
		c = p[i];
		if (c < 0x80) {
			len = 1;
		} else {
			if (c < 0xe0) {
				c = (c & 0x1f) << 6 | (p[i + 1] & 0x3f);
				len = 2;
			} else if (c < 0xf0) {
				c = (c & 0x0f) << 12 | (p[i + 1] & 0x3fu) << 6 |
				    (p[i + 2] & 0x3f);
				len = 3;
			} else {
				c = (c & 0x07) << 18 | (p[i + 1] & 0x3fu) << 12 |
				    (p[i + 2] & 0x3fu) << 6 | (p[i + 3] & 0x3f);
				len = 4;
			}
		}
		split_char(&sp, word_char(c), i, cp);
		i += len;
		cp++;
	}
	split_char(&sp, 0, n, cp);
}

void
words_free(struct words *w)
{
	free(w->w);
	free(w->x);
	memset(w, 0, sizeof *w);
}

uint64_t
words_seq_hash(const struct word *w, size_t k)
{
	uint64_t h = WORDS_SEQ_START;
	size_t i;

	for (i = 0; i < k; i++)
		h = owt_mix64(h ^ w[i].hash);
	return h;
}
