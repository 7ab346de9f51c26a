/* dedup_report.c - owt-dedup's report: one JSONL line per dropped or changed document, and --drop */
#include <string.h>

#include "clean.h"
#include "dedup_report.h"
#include "jsonl.h"
#include "signature.h"
#include "textfix.h"

int
dedup_report_open(struct dedup_report *r, const char *tmpdir, char *err,
    size_t errsize, int *code)
{
	memset(r, 0, sizeof *r);
	if (spill_open(&r->refs, tmpdir) < 0) {
		snprintf(err, errsize, "%s", r->refs.err);
		*code = XSYS;
		return -1;
	}
	return 0;
}

void
dedup_report_close(struct dedup_report *r)
{
	spill_close(&r->refs);
	free(r->at);
	r->at = NULL;
	r->n = r->cap = 0;
}

int
dedup_report_keep(struct dedup_report *r, const char *ref, size_t n,
    char *err, size_t errsize, int *code)
{
	int64_t off;

	if ((off = spill_put(&r->refs, ref, n)) < 0) {
		snprintf(err, errsize, "%s", r->refs.err);
		*code = XSYS;
		return -1;
	}
	if (r->n == r->cap)
		r->at = xgrow(r->at, &r->cap, r->n + 1, sizeof *r->at);
	r->at[r->n++] = (uint64_t)off;
	return 0;
}

/* Start a line: {WHO,"stage":"STAGE","reason":"WHY" */
static void
start(struct buf *b, const char *who, size_t wholen, const char *stage,
    const char *why)
{
	buf_addc(b, '{');
	buf_add(b, who, wholen);
	buf_printf(b, "%s\"stage\":\"%s\",\"reason\":", wholen ? "," : "",
	    stage);
	json_string(b, why, strlen(why));
}

void
dedup_report_fixed(struct buf *b, const char *who, size_t wholen,
    unsigned fixes)
{
	int f, any = 0;

	start(b, who, wholen, "fix", "fixed");
	buf_adds(b, ",\"fixes\":[");
	for (f = 0; f < TF_NFIXES; f++) {
		if (!(fixes >> f & 1))
			continue;
		buf_printf(b, "%s\"%s\"", any ? "," : "", textfix_name[f]);
		any = 1;
	}
	buf_adds(b, "]}\n");
}

int
dedup_report_drop(struct dedup_report *r, struct buf *b,
    const struct clean_doc *d, const char *who, const char *file_json,
    unsigned long lineno, long kept, double sim, char *err, size_t errsize,
    int *code)
{
	const struct clean_reason *why = &clean_reason[d->drop];
	uint64_t end;

	if (d->drop <= CLEAN_BADSIG) {
		buf_printf(b, "{\"file\":%s,\"line\":%lu,\"stage\":\"input\","
		    "\"reason\":\"%s\",\"error\":", file_json, lineno,
		    clean_reason_name(d->drop));
		json_string(b, who, d->wholen);
		buf_adds(b, "}\n");
		return 0;
	}
	start(b, who, d->wholen, clean_stage_name[why->stage], why->name);
	if (d->drop == CLEAN_OTHERLANG || d->drop == CLEAN_NOLANG) {
		buf_printf(b, ",\"lang\":\"%s\",\"percent\":%d", d->lang.code,
		    d->lang.percent);
	} else if (d->drop == CLEAN_SHORT && d->tokens > 0) {
		buf_printf(b, ",\"chars\":%zu,\"tokens\":%zu", d->chars,
		    d->tokens);
	} else if (d->drop == CLEAN_SHORT) {
		buf_printf(b, ",\"chars\":%zu", d->chars);
	} else if (kept >= 0) {
		end = (size_t)kept + 1 < r->n ? r->at[kept + 1] :
		    spill_size(&r->refs);
		buf_adds(b, ",\"kept\":");
		if (spill_get(&r->refs, r->at[kept], (size_t)(end - r->at[kept]),
		    b) < 0) {
			snprintf(err, errsize, "%s", r->refs.err);
			*code = XSYS;
			return -1;
		}
		if (sim >= 0)
			buf_printf(b, ",\"similarity\":%.3f", sim);
	}
	buf_adds(b, "}\n");
	return 0;
}

void
dedup_report_decontam(struct buf *b, const char *who, size_t wholen,
    const char *why, unsigned long ngrams, size_t pieces)
{
	buf_addc(b, '{');
	buf_add(b, who, wholen);
	buf_printf(b, ",\"stage\":\"decontam\",\"reason\":\"%s\","
	    "\"ngrams\":%lu,\"pieces\":%zu}\n", why, ngrams, pieces);
}

struct dedup *
dedup_report_load_drop(const char *path, char *err, size_t errsize, int *code)
{
	static const char *const want[] = { "stage", "reason" };
	struct dedup_sig name = { { 0, 0 }, 0, 0, 0, { 0 } };
	struct dedup *d;
	struct jsonl_rec *r;
	struct jsonl j;
	const char *stage, *why, *reason;
	size_t n, rn;
	int k;

	if (jsonl_open(&j, path, want, 2) < 0) {
		snprintf(err, errsize, "%s", j.err);
		*code = XDATA;
		return NULL;
	}
	d = dedup_new(DEDUP_EXACT);
	while ((k = jsonl_next(&j, &r)) != 0) {
		if (k < 0) {
			snprintf(err, errsize, "%s", j.err);
			*code = j.errcode;
			goto fail;
		}
		if ((stage = jsonl_str(r, "stage", &n, &why)) == NULL ||
		    (reason = jsonl_str(r, "reason", &rn, &why)) == NULL) {
			snprintf(err, errsize, "%s:%lu: not a report line (no "
			    "stage or reason)", j.in.name, j.in.lineno);
			*code = XDATA;
			goto fail;
		}
		if (strcmp(stage, "fix") == 0 || strcmp(reason, "cut") == 0)
			continue;
		if (signature_name_hash(r, name.text))
			dedup_add(d, &name);
	}
	jsonl_close(&j);
	return d;
fail:
	jsonl_close(&j);
	dedup_free(d);
	return NULL;
}
