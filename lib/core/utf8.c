/* utf8.c - strict UTF-8 validation (RFC 3629), and counting characters */
#include <stdint.h>
#include <string.h>

#include "core/utf8.h"

size_t
utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
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

size_t
utf8_count(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}
