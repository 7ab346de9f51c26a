/* jsonl.h - JSON Lines files: each line a record (json.h), with FILE:LINE errors */
#ifndef OWT_JSONL_H
#define OWT_JSONL_H

#include <stddef.h>

#include "core/input.h"
#include "core/json.h"
#include "core/util.h"

/* A reader over one input: lines, parsed, with FILE:LINE errors. */
struct jsonl {
	struct input in;
	struct json_rec rec;
	int errcode;		/* XDATA or XSYS after an error */
	int reason;		/* BAD_* after an error */
	char err[OWT_ERRSIZE];	/* "FILE:LINE: what" */
};

/* 0, or -1 with j->err (the file could not be opened). */
int jsonl_open(struct jsonl *j, const char *path, const char *const *want,
    size_t nwant);
/*
 * The next record: 1 with *rec set (valid until the next call), 0 at the
 * end, -1 on an error (j->err, j->errcode). After an XDATA error the
 * next call continues with the following line.
 */
int jsonl_next(struct jsonl *j, struct json_rec **rec);
void jsonl_close(struct jsonl *j);

#endif
