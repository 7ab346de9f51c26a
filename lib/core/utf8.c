/* utf8.c - strict UTF-8 validation (RFC 3629), and counting characters */
#include <stdint.h>
#include <string.h>

#include "core/utf8.h"

/* The scalar check: the length of s[0..n)'s longest valid prefix. */
static size_t
valid_scalar(const unsigned char *s, size_t n)
{
	size_t i = 0, k;
	uint64_t w, w2;

	while (i < n) {
		/* ASCII runs go 16 bytes at a time. */
		while (i + 16 <= n) {
			memcpy(&w, s + i, 8);
			memcpy(&w2, s + i + 8, 8);
			if ((w | w2) & 0x8080808080808080ULL)
				break;
			i += 16;
		}
		if (i >= n)
			break;
		if ((k = utf8_seqlen(s + i, n - i)) == 0)
			return i;
		i += k;
	}
	return n;
}

/*
 * Where a check of s[0..n) that trusts s[0..i) goes on: at i, or before
 * it at the first byte of a character that i cuts (one of 2 to 4 bytes
 * that starts in the 3 bytes before i).
 */
static size_t
char_start(const unsigned char *s, size_t i)
{
	size_t k;

	for (k = 1; k <= 3 && k <= i; k++) {
		if (s[i - k] >= 0xc0)
			return i - k;
		if (s[i - k] < 0x80)
			break;
	}
	return i;
}

/* blocks by SSSE3 where the compiler can target it and the CPU has it */
#if defined(__x86_64__) && defined(__GNUC__)
#define UTF8_SSSE3 1
#include <immintrin.h>

/*
 * Blocks of 16 bytes checked at once, without a branch a character, by
 * the method of Keiser and Lemire ("Validating UTF-8 in less than one
 * instruction per byte", 2021): each byte and the one before it are
 * looked up by their nibbles in three tables of 16 (pshufb) whose
 * entries are sets of the faults the pair may show; a fault is one that
 * all three lookups name. The pair's faults, a bit each:
 */
#define F_SHORT 0x01	/* a first byte, then no continuation byte */
#define F_LONG 0x02	/* ASCII, then a continuation byte */
#define F_OVER3 0x04	/* E0 80..9F: an overlong form of three bytes */
#define F_BIG 0x08	/* F4 90..BF, F5..FF then 90..BF: above U+10FFFF */
#define F_SURR 0x10	/* ED A0..BF: a surrogate */
#define F_OVER2 0x20	/* C0, C1 then a continuation: overlong */
#define F_OVER4 0x40	/* F0 80..8F: overlong; F5..FF 80..8F: too big */
#define F_CONT2 0x80	/* two continuation bytes: the third or fourth byte
			   of a character, or a fault */
/* the faults that the first byte's high nibble alone tells */
#define F_ANY (F_SHORT | F_LONG | F_CONT2)

#define NIBBLES(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p) \
	_mm_setr_epi8(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)

/* The faults of each byte of x after the byte before it (prev's last for x's first). */
__attribute__((target("ssse3"))) static inline __m128i
block_faults(__m128i x, __m128i prev)
{
	const __m128i lo = _mm_set1_epi8(0x0f);
	/* by the first byte's high nibble */
	const __m128i t1h = NIBBLES(F_LONG, F_LONG, F_LONG, F_LONG, F_LONG,
	    F_LONG, F_LONG, F_LONG, F_CONT2, F_CONT2, F_CONT2, F_CONT2,
	    F_SHORT | F_OVER2, F_SHORT, F_SHORT | F_OVER3 | F_SURR,
	    F_SHORT | F_BIG | F_OVER4);
	/* by its low nibble */
	const __m128i t1l = NIBBLES(F_ANY | F_OVER2 | F_OVER3 | F_OVER4,
	    F_ANY | F_OVER2, F_ANY, F_ANY, F_ANY | F_BIG,
	    F_ANY | F_BIG | F_OVER4, F_ANY | F_BIG | F_OVER4,
	    F_ANY | F_BIG | F_OVER4, F_ANY | F_BIG | F_OVER4,
	    F_ANY | F_BIG | F_OVER4, F_ANY | F_BIG | F_OVER4,
	    F_ANY | F_BIG | F_OVER4, F_ANY | F_BIG | F_OVER4,
	    F_ANY | F_BIG | F_OVER4 | F_SURR, F_ANY | F_BIG | F_OVER4,
	    F_ANY | F_BIG | F_OVER4);
	/* by the second byte's high nibble */
	const __m128i t2h = NIBBLES(F_SHORT, F_SHORT, F_SHORT, F_SHORT,
	    F_SHORT, F_SHORT, F_SHORT, F_SHORT,
	    F_LONG | F_CONT2 | F_OVER2 | F_OVER3 | F_OVER4,
	    F_LONG | F_CONT2 | F_OVER2 | F_OVER3 | F_BIG,
	    F_LONG | F_CONT2 | F_OVER2 | F_SURR | F_BIG,
	    F_LONG | F_CONT2 | F_OVER2 | F_SURR | F_BIG,
	    F_SHORT, F_SHORT, F_SHORT, F_SHORT);
	__m128i p1 = _mm_alignr_epi8(x, prev, 15);
	__m128i f = _mm_and_si128(_mm_and_si128(
	    _mm_shuffle_epi8(t1h, _mm_and_si128(_mm_srli_epi16(p1, 4), lo)),
	    _mm_shuffle_epi8(t1l, _mm_and_si128(p1, lo))),
	    _mm_shuffle_epi8(t2h, _mm_and_si128(_mm_srli_epi16(x, 4), lo)));
	/*
	 * A byte two after E0..FF or three after F0..FF must continue its
	 * character (0x80 where so): two continuation bytes there are no
	 * fault, anything else is.
	 */
	__m128i third = _mm_subs_epu8(_mm_alignr_epi8(x, prev, 14),
	    _mm_set1_epi8((char)(0xe0 - 0x80)));
	__m128i fourth = _mm_subs_epu8(_mm_alignr_epi8(x, prev, 13),
	    _mm_set1_epi8((char)(0xf0 - 0x80)));
	__m128i must = _mm_and_si128(_mm_or_si128(third, fourth),
	    _mm_set1_epi8((char)0x80));

	return _mm_xor_si128(f, must);
}

/*
 * s[0..n) a block at a time, the last bytes in a block of their own
 * with zeros after them (ASCII: a character they cut is a fault); where
 * a block has a fault, the scalar check from the start of the character
 * that the block's start cuts finds the place (so that a fault of this
 * check would cost time, not a wrong answer).
 */
__attribute__((target("ssse3"))) static size_t
valid_ssse3(const unsigned char *s, size_t n)
{
	/* nonzero where prev's last bytes start a character not ended */
	const __m128i open = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1,
	    -1, -1, -1, -1, -1, (char)(0xf0 - 1), (char)(0xe0 - 1),
	    (char)(0xc0 - 1));
	const __m128i zero = _mm_setzero_si128();
	__m128i x, prev = zero;
	unsigned char last[16] = { 0 };
	size_t i;

	for (i = 0; i + 16 <= n; i += 16) {
		x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		if (_mm_movemask_epi8(x) == 0 && _mm_movemask_epi8(
		    _mm_cmpeq_epi8(_mm_subs_epu8(prev, open), zero)) == 0xffff) {
			prev = x;
			continue;
		}
		if (_mm_movemask_epi8(_mm_cmpeq_epi8(block_faults(x, prev),
		    zero)) != 0xffff)
			break;
		prev = x;
	}
	if (i + 16 > n) {
		memcpy(last, s + i, n - i);
		x = _mm_loadu_si128((const __m128i *)(const void *)last);
		if (_mm_movemask_epi8(_mm_cmpeq_epi8(block_faults(x, prev),
		    zero)) == 0xffff)
			return n;
	}
	i = char_start(s, i);
	return i + valid_scalar(s + i, n - i);
}
#endif

size_t
utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

#ifdef UTF8_SSSE3
	if (n > 0 && __builtin_cpu_supports("ssse3"))
		return valid_ssse3(s, n);
#endif
	return valid_scalar(s, n);
}

size_t
utf8_count(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}
