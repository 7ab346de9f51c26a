/* buf.h - a growable byte buffer, always NUL-terminated */
#ifndef OWT_BUF_H
#define OWT_BUF_H

#include <stddef.h>

#include "core/util.h"	/* OWT_PRINTF; util.h includes this file */

struct buf {
	char *p;
	size_t len, cap;
};
void buf_reserve(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *p, size_t n);
void buf_addc(struct buf *b, char c);
void buf_adds(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...) OWT_PRINTF(2, 3);
void buf_free(struct buf *b);

#endif
