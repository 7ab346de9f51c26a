/* buf.c - a growable byte buffer, always NUL-terminated */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/util.h"

void
buf_reserve(struct buf *b, size_t extra)
{
	if (b->len + extra + 1 > b->cap)
		b->p = xgrow(b->p, &b->cap, b->len + extra + 1, 1);
}

void
buf_add(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
buf_addc(struct buf *b, char c)
{
	buf_reserve(b, 1);
	b->p[b->len++] = c;
	b->p[b->len] = '\0';
}

void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
