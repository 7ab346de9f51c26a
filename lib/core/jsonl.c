/* jsonl.c - JSON Lines files: lines read, parsed as records (json.c), FILE:LINE errors */
#include <stdio.h>
#include <string.h>

#include "core/jsonl.h"

int
jsonl_open(struct jsonl *j, const char *path, const char *const *want,
    size_t nwant)
{
	memset(j, 0, sizeof *j);
	json_rec_init(&j->rec, want, nwant);
	if (input_open(&j->in, path) < 0) {
		j->reason = j->in.reason;
		owt_fail(j->err, sizeof j->err, &j->errcode, j->in.errcode, "%s",
		    j->in.err);
		return -1;
	}
	return 0;
}

int
jsonl_next(struct jsonl *j, struct json_rec **rec)
{
	char *line, why[256];
	size_t len;
	int r;

	r = input_line(&j->in, &line, &len);
	if (r < 0) {
		j->reason = j->in.reason;
		owt_fail(j->err, sizeof j->err, &j->errcode, j->in.errcode, "%s",
		    j->in.err);
		return -1;
	}
	if (r == 0)
		return 0;
	if ((r = json_rec_parse(&j->rec, line, len, why, sizeof why)) != 0) {
		j->reason = r;
		owt_fail(j->err, sizeof j->err, &j->errcode, XDATA, "%s:%lu: %s",
		    j->in.name, j->in.lineno, why);
		return -1;
	}
	*rec = &j->rec;
	return 1;
}

void
jsonl_close(struct jsonl *j)
{
	input_close(&j->in);
	json_rec_free(&j->rec);
}
