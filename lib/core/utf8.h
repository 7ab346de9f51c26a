/* utf8.h - strict UTF-8 validation (RFC 3629), and counting characters */
#ifndef OWT_UTF8_H
#define OWT_UTF8_H

#include <stddef.h>

/*
 * The length of the valid UTF-8 sequence that starts s (n > 0 bytes
 * available), or 0 when it is invalid: overlong forms, surrogates
 * (U+D800..DFFF) and code points above U+10FFFF are invalid.
 */
static inline size_t
utf8_seqlen(const unsigned char *s, size_t n)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

/* The length of the longest valid UTF-8 prefix of s[0..n): n when all is. */
size_t utf8_valid(const char *s, size_t n);
/* The number of characters (bytes that do not continue a sequence) of s[0..n). */
size_t utf8_count(const char *s, size_t n);

#endif
