/* dedup_report.c - owt-dedup's report: one JSONL line per dropped or changed document, and --drop */
#include <stdlib.h>
#include <string.h>

#include "text/clean.h"
#include "text/clean_reason.h"
#include "text/dedup_report.h"
#include "core/json.h"
#include "core/jsonl.h"
#include "text/signature.h"
#include "text/textfix.h"

int
dedup_report_open(struct dedup_report *r, const char *tmpdir, char *err,
    size_t errsize, int *code)
{
	memset(r, 0, sizeof *r);
	if (spill_open(&r->refs, tmpdir) < 0)
		return owt_fail(err, errsize, code, XSYS, "%s", r->refs.err);
	return 0;
}

void
dedup_report_close(struct dedup_report *r)
{
	spill_close(&r->refs);
	buf_free(&r->val);
	free(r->at);
	r->at = NULL;
	r->n = r->cap = 0;
}

int
dedup_report_keep(struct dedup_report *r, const char *ref, size_t n,
    char *err, size_t errsize, int *code)
{
	int64_t off;

	if ((off = spill_put(&r->refs, ref, n)) < 0)
		return owt_fail(err, errsize, code, XSYS, "%s", r->refs.err);
	if (r->n == r->cap)
		r->at = xgrow(r->at, &r->cap, r->n + 1, sizeof *r->at);
	r->at[r->n++] = (uint64_t)off;
	return 0;
}

/* Start a line: {WHO,"stage":"STAGE","reason":"WHY" */
static void
start(struct json_w *w, struct buf *b, const char *who, size_t wholen,
    const char *stage, const char *why)
{
	json_w_init(w, b, JSON_COMPACT);
	json_w_obj(w);
	json_w_raw_members(w, who, wholen);
	json_w_kstr(w, "stage", stage);
	json_w_kstr(w, "reason", why);
}

/* End the line that w writes. */
static void
end(struct json_w *w)
{
	json_w_end(w);
	buf_addc(w->b, '\n');
}

void
dedup_report_fixed(struct buf *b, const char *who, size_t wholen,
    unsigned fixes)
{
	struct json_w w;
	int f;

	start(&w, b, who, wholen, "fix", "fixed");
	json_w_key(&w, "fixes");
	json_w_arr(&w);
	for (f = 0; f < TF_NFIXES; f++)
		if (fixes >> f & 1)
			json_w_strz(&w, textfix_name[f]);
	json_w_end(&w);
	end(&w);
}

int
dedup_report_drop(struct dedup_report *r, struct buf *b,
    const struct clean_doc *d, const char *who, const char *file_json,
    unsigned long lineno, long kept, double sim, char *err, size_t errsize,
    int *code)
{
	const struct clean_reason *why = &clean_reason[d->drop];
	struct json_w w;
	uint64_t stop;

	if (d->drop <= CLEAN_BADSIG) {
		json_w_init(&w, b, JSON_COMPACT);
		json_w_obj(&w);
		json_w_key(&w, "file");
		json_w_raw(&w, file_json, strlen(file_json));
		json_w_ku64(&w, "line", lineno);
		json_w_kstr(&w, "stage", "input");
		json_w_kstr(&w, "reason", clean_reason_name(d->drop));
		json_w_key(&w, "error");
		json_w_str(&w, who, d->wholen);
		end(&w);
		return 0;
	}
	start(&w, b, who, d->wholen, clean_stage_name[why->stage], why->name);
	if (d->drop == CLEAN_OTHERLANG || d->drop == CLEAN_NOLANG) {
		json_w_kstr(&w, "lang", d->lang.code);
		json_w_kint(&w, "percent", d->lang.percent);
	} else if (d->drop == CLEAN_SHORT) {
		json_w_ku64(&w, "chars", d->chars);
		if (d->tokens > 0) {
			json_w_ku64(&w, "tokens", d->tokens);
		}
	} else if (kept >= 0) {
		stop = (size_t)kept + 1 < r->n ? r->at[kept + 1] :
		    spill_size(&r->refs);
		r->val.len = 0;
		if (spill_get(&r->refs, r->at[kept], (size_t)(stop - r->at[kept]),
		    &r->val) < 0)
			return owt_fail(err, errsize, code, XSYS, "%s",
			    r->refs.err);
		json_w_key(&w, "kept");
		json_w_raw(&w, r->val.p, r->val.len);
		if (sim >= 0) {
			json_w_key(&w, "similarity");
			json_w_num(&w, "%.3f", sim);
		}
	}
	end(&w);
	return 0;
}

void
dedup_report_decontam(struct buf *b, const char *who, size_t wholen,
    const char *why, unsigned long ngrams, size_t pieces)
{
	struct json_w w;

	start(&w, b, who, wholen, "decontam", why);
	json_w_ku64(&w, "ngrams", ngrams);
	json_w_ku64(&w, "pieces", pieces);
	end(&w);
}

struct dedup *
dedup_report_load_drop(const char *path, char *err, size_t errsize, int *code)
{
	static const char *const want[] = { "stage", "reason" };
	struct dedup_sig name = { { 0, 0 }, 0, 0, 0, { 0 } };
	struct dedup *d;
	struct json_rec *r;
	struct jsonl j;
	const char *stage, *why, *reason;
	size_t n, rn;
	int k;

	if (jsonl_open(&j, path, want, 2) < 0) {
		owt_fail(err, errsize, code, XDATA, "%s", j.err);
		return NULL;
	}
	d = dedup_new(DEDUP_EXACT);
	while ((k = jsonl_next(&j, &r)) != 0) {
		if (k < 0) {
			owt_fail(err, errsize, code, j.errcode, "%s", j.err);
			goto fail;
		}
		if ((stage = json_rec_str(r, "stage", &n, &why)) == NULL ||
		    (reason = json_rec_str(r, "reason", &rn, &why)) == NULL) {
			owt_fail(err, errsize, code, XDATA,
			    "%s:%lu: not a report line (no "
			    "stage or reason)", j.in.name, j.in.lineno);
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
