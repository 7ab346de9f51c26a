/* spill.h - an append-only temporary file of byte strings, read back by offset */
#ifndef OWT_SPILL_H
#define OWT_SPILL_H

#include <stddef.h>
#include <stdint.h>

#include "core/util.h"

/*
 * A temporary file in dir, unlinked at once, so that nothing is left
 * behind however the program ends. Writes are buffered in memory;
 * reads see what was written, flushed or not.
 */
struct spill {
	int fd;
	struct buf pending;	/* bytes not yet written */
	uint64_t flushed;	/* bytes in the file */
	int errcode;		/* XSYS after an error */
	char err[OWT_ERRSIZE];
};

/* 0, or -1 with s->err. */
int spill_open(struct spill *s, const char *dir);
/* Append n bytes; returns their offset, or -1 with s->err. */
int64_t spill_put(struct spill *s, const void *p, size_t n);
/* Read n bytes at off into b (appended); 0 or -1 with s->err. */
int spill_get(struct spill *s, uint64_t off, size_t n, struct buf *b);
/* The total size written. */
uint64_t spill_size(const struct spill *s);
/* Write what is pending; 0 or -1. */
int spill_flush(struct spill *s);
void spill_close(struct spill *s);

#endif
