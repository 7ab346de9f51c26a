/* unit-dedup.c - owt-dedup's library: stages, signatures, the report, decontam's second pass */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text/clean.h"
#include "text/decontam.h"
#include "text/dedup.h"
#include "text/dedup_report.h"
#include "text/signature.h"
#include "unit.h"
#include "core/utf8.h"

static char tmpdir[256];

/* A file in tmpdir holding s; returns its path (static, one at a time). */
static const char *
tmpfile_with(const char *name, const char *s)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	fputs(s, f);
	fclose(f);
	return path;
}

static void
test_utf8_count(void)
{
	OK(utf8_count("", 0) == 0, "utf8_count: nothing");
	OK(utf8_count("a\303\251\342\202\254\360\237\230\200", 10) == 4,
	    "utf8_count: 1, 2, 3 and 4 bytes are a character each");
	OK(utf8_count("\251\251", 2) == 0, "utf8_count: continuation bytes alone count nothing");
}

static void
test_stages(void)
{
	int st[CLEAN_NSTAGES], i, sum;
	char err[256];

	OK(clean_parse_stages("fix,near", st, err, sizeof err) == 0 &&
	    st[CLEAN_FIX] && st[CLEAN_NEAR] && !st[CLEAN_LANG] &&
	    !st[CLEAN_LENGTH] && !st[CLEAN_EXACT] && !st[CLEAN_DECONTAM],
	    "clean_parse_stages: fix,near");
	memset(st, 1, sizeof st);
	OK(clean_parse_stages("none", st, err, sizeof err) == 0, "none parses");
	for (i = sum = 0; i < CLEAN_NSTAGES; i++)
		sum += st[i];
	OK(sum == 0, "none: no stage");
	OK(clean_parse_stages("fix,bogus", st, err, sizeof err) == -1,
	    "an unknown stage fails");
	SAMES(err, "--stages: unknown stage 'bogus' in 'fix,bogus'", "and is named");
	OK(clean_parse_stages(",", st, err, sizeof err) == -1, "',' fails");
	SAMES(err, "--stages: unknown stage '' in ','", "as an empty name");
	OK(clean_parse_stages("", st, err, sizeof err) == -1, "'' fails");
	SAMES(err, "--stages: '' names no stage", "as naming no stage");
	OK(clean_parse_stages("decontam,exact,exact", st, err, sizeof err) == 0 &&
	    st[CLEAN_DECONTAM] && st[CLEAN_EXACT] && !st[CLEAN_FIX],
	    "repeats are allowed");
	SAMES(clean_reason_name(BAD_JSON), input_bad_name[BAD_JSON],
	    "clean_reason_name: a bad record's reason is input's");
	SAMES(clean_reason_name(CLEAN_DUPNEAR), "near duplicate",
	    "clean_reason_name: a stage's reason");
	SAMES(clean_stage_name[clean_reason[CLEAN_DUPURL].stage], "exact",
	    "a duplicate URL is the exact stage's");
	SAMES(clean_stage_name[clean_reason[CLEAN_LISTED].stage], "drop",
	    "a listed document is --drop's");
}

/* Parse line into jr with keys want. */
static int
parse(struct json_rec *jr, const char *line)
{
	char err[256];

	return json_rec_parse(jr, line, strlen(line), err, sizeof err);
}

#define NAME1 "\"file\":\"a.jsonl\",\"line\":3,\"id\":7,\"url\":\"u\""
#define NAME2 "\"file\":\"d/a \\\"q\\\".jsonl\",\"line\":12"
#define REF2 "\"d/a \\\"q\\\".jsonl:12\""
#define NAME3 "\"file\":\"f.jsonl\",\"line\":1,\"id\":1"

static void
test_names(void)
{
	static const char *const want[] = { "text" };
	struct json_rec jr, jr2;
	struct buf b = { 0 };
	size_t wholen, ref, reflen;
	uint64_t h[2], h2[2];

	json_rec_init(&jr, want, 1);
	json_rec_init(&jr2, want, 1);
	parse(&jr, "{\"url\":\"u\",\"text\":\"x\",\"id\":7}");
	buf_adds(&b, "XY");
	signature_name(&jr, "a.jsonl", "\"a.jsonl\"", 3, &b, &wholen, &ref,
	    &reflen);
	SAME(b.p + 2, wholen, NAME1, strlen(NAME1),
	    "signature_name: file, line, then id and url as they are");
	SAME(b.p + ref, reflen, "7", 1, "the kept value is the first of id, adlr_id, url");
	OK(b.len == 2 + wholen, "nothing more when it has one");
	parse(&jr, "{\"text\":\"x\"}");
	b.len = 0;
	signature_name(&jr, "d/a \"q\".jsonl", "\"d/a \\\"q\\\".jsonl\"", 12, &b,
	    &wholen, &ref, &reflen);
	SAME(b.p, wholen, NAME2, strlen(NAME2),
	    "signature_name: no id, adlr_id or url");
	SAME(b.p + ref, reflen, REF2, strlen(REF2),
	    "the kept value is FILE:LINE as a JSON string, after the fields");
	OK(ref == wholen && ref + reflen == b.len, "right after the fields");

	parse(&jr, "{\"adlr_id\":\"a\",\"url\":\"b\"}");
	parse(&jr2, "{\"adlr_id\":\"a\"}");
	OK(signature_name_hash(&jr, h) && signature_name_hash(&jr2, h2) &&
	    h[0] == h2[0] && h[1] == h2[1],
	    "signature_name_hash: the first name counts");
	parse(&jr2, "{\"adlr_id\":\"c\",\"url\":\"b\"}");
	OK(signature_name_hash(&jr2, h2) && (h[0] != h2[0] || h[1] != h2[1]),
	    "another name, another hash");
	parse(&jr2, "{\"text\":\"a\"}");
	OK(signature_name_hash(&jr2, h2) == 0, "no name: 0");
	json_rec_free(&jr);
	json_rec_free(&jr2);
	buf_free(&b);
}

static const char sig_bytes[] = "{\"file\":\"f\",\"line\":2,\"url\":\"http://x/\","
    "\"text_hash\":\"00000000000000010000000000000abc\"}\n";

static void
test_signatures(void)
{
	/* Records signature_read refuses. */
	static const char *const not_sig[][2] = {
		{ "{\"file\":\"f\",\"line\":1,\"text_hash\":\"0001\"}",
		    "a short text_hash is not a signature" },
		{ "{\"file\":\"f\",\"line\":1,\"text_hash\":"
		    "\"0000000000000001000000000000000g\"}",
		    "nor one that is not hex" },
		{ "{\"file\":\"f\",\"line\":1,\"minhash\":1,\"text_hash\":"
		    "\"00000000000000010000000000000001\"}",
		    "nor a minhash that is not a string" },
		{ "{\"line\":1,\"text_hash\":"
		    "\"00000000000000010000000000000001\"}",
		    "nor a record with no name and no file" },
	};
	struct json_rec jr;
	struct minhash mh;
	struct words w = { 0 };
	struct dedup_sig s, r;
	struct buf b = { 0 }, info = { 0 }, tmp = { 0 };
	size_t who, wholen, ref, reflen, i;
	const char *text = "the quick brown fox jumps over the lazy dog again and again";

	memset(&s, 0, sizeof s);
	s.text[0] = 1;
	s.text[1] = 0xabc;
	signature_write(&b, "\"file\":\"f\",\"line\":2,\"url\":\"http://x/\"", 37,
	    &s);
	SAMES(b.p, sig_bytes, "signature_write: no sketch, no minhash");

	json_rec_init(&jr, signature_want, SIGNATURE_NWANT);
	OK(parse(&jr, sig_bytes) == 0, "it parses");
	memset(&r, 0xff, sizeof r);
	OK(signature_read(&jr, &info, &who, &wholen, &ref, &reflen, &r, &tmp) == 0,
	    "signature_read: it reads back");
	SAME(info.p + who, wholen, "\"file\":\"f\",\"line\":2,\"url\":\"http://x/\"", 37,
	    "the name fields as they were");
	SAME(info.p + ref, reflen, "\"http://x/\"", 11, "the kept value is the url");
	OK(r.text[0] == 1 && r.text[1] == 0xabc && !r.has_sketch,
	    "the text hash, no sketch");
	OK(r.has_url && r.url == dedup_url_hash("http://x/", 9),
	    "the URL hash comes from url");

	/* A sketch round trip, from dedup_sign. */
	words_init();
	minhash_init(&mh, 1234);
	dedup_sign(&mh, text, strlen(text), NULL, 0, &w, &s);
	OK(s.has_sketch && !s.has_url, "dedup_sign: a sketch, no url");
	b.len = 0;
	signature_write(&b, "\"file\":\"f\",\"line\":5", 19, &s);
	OK(b.len == 20 + 13 + 34 + 11 + 258 + 2, "with a sketch: 256 hex digits more");
	OK(parse(&jr, b.p) == 0 && signature_read(&jr, &info, &who, &wholen,
	    &ref, &reflen, &r, &tmp) == 0, "and it reads back");
	OK(memcmp(r.text, s.text, sizeof s.text) == 0 && r.has_sketch &&
	    memcmp(r.sketch, s.sketch, MINHASH_K) == 0 && !r.has_url,
	    "the same signature");
	SAME(info.p + ref, reflen, "\"f:5\"", 5, "no id: the kept value is file:line");

	for (i = 0; i < sizeof not_sig / sizeof *not_sig; i++)
		OK(parse(&jr, not_sig[i][0]) == 0 && signature_read(&jr, &info,
		    &who, &wholen, &ref, &reflen, &r, &tmp) == -1, "%s",
		    not_sig[i][1]);
	json_rec_free(&jr);
	words_free(&w);
	buf_free(&b);
	buf_free(&info);
	buf_free(&tmp);
}

static void
test_check(void)
{
	struct dedup *d = dedup_new(DEDUP_EXACT | DEDUP_NEAR), *e;
	struct dedup_sig a, s;
	long kept;
	double sim;
	int i;

	memset(&a, 0, sizeof a);
	a.text[0] = 11;
	a.text[1] = 12;
	a.has_url = 1;
	a.url = 99;
	a.has_sketch = 1;
	for (i = 0; i < MINHASH_K; i++)
		a.sketch[i] = (uint8_t)i;
	OK(dedup_check(d, &a, 0.7, &kept, &sim) == DEDUP_NEW && kept == -1 &&
	    sim < 0, "dedup_check: an empty index has nothing");
	OK(dedup_add(d, &a) == 0, "the first is kept document 0");
	OK(dedup_check(d, &a, 0.7, &kept, &sim) == DEDUP_SAME_TEXT && kept == 0 &&
	    sim == 1, "the same text, similarity 1");
	s = a;
	s.text[0] = 13;
	for (i = 0; i < MINHASH_K / 2; i++)
		s.sketch[i] = 200;
	OK(dedup_check(d, &s, 0.7, &kept, &sim) == DEDUP_SAME_URL && kept == 0 &&
	    sim == minhash_similarity(a.sketch, s.sketch) && sim > 0.4 &&
	    sim < 0.6, "the same URL, with the sketches' estimate");
	s.has_sketch = 0;
	OK(dedup_check(d, &s, 0.7, &kept, &sim) == DEDUP_SAME_URL && sim < 0,
	    "the same URL without a sketch: no similarity");
	s = a;
	s.text[0] = 14;
	s.url = 98;
	s.sketch[0] = 201;
	OK(dedup_check(d, &s, 0.7, &kept, &sim) == DEDUP_SIMILAR && kept == 0 &&
	    sim > 0.99 && sim < 1, "a similar sketch is near");
	OK(dedup_check(d, &s, 1, &kept, &sim) == DEDUP_NEW && kept == -1 && sim < 0,
	    "not at a threshold above its similarity");
	e = dedup_new(DEDUP_EXACT);
	dedup_add(e, &a);
	OK(dedup_check(e, &s, 0.7, &kept, &sim) == DEDUP_NEW,
	    "without the near part, similar is new");
	dedup_free(e);
	e = dedup_new(DEDUP_NEAR);
	dedup_add(e, &a);
	OK(dedup_check(e, &a, 0.7, &kept, &sim) == DEDUP_SIMILAR && sim == 1,
	    "without the exact part, the same text is near");
	dedup_free(e);
	dedup_free(d);
}

static void
test_report(void)
{
	static const char who[] = "\"file\":\"a\",\"line\":1,\"id\":5";
	struct dedup_report r;
	struct clean_doc d;
	struct json_rec jr;
	struct buf b = { 0 };
	struct dedup *drop;
	const char *path;
	char err[256], missing[300];
	int code = 0;
	uint64_t h[2];

	dedup_report_fixed(&b, who, strlen(who), 1u << TF_ENCODING |
	    1u << TF_QUOTES);
	SAMES(b.p, "{\"file\":\"a\",\"line\":1,\"id\":5,\"stage\":\"fix\","
	    "\"reason\":\"fixed\",\"fixes\":[\"fix_encoding\",\"uncurl_quotes\"]}\n",
	    "dedup_report_fixed");
	OK(dedup_report_open(&r, tmpdir, err, sizeof err, &code) == 0,
	    "dedup_report_open");
	OK(dedup_report_keep(&r, "\"k0\"", 4, err, sizeof err, &code) == 0 &&
	    dedup_report_keep(&r, "7", 1, err, sizeof err, &code) == 0,
	    "dedup_report_keep twice");
	memset(&d, 0, sizeof d);
	d.wholen = strlen(who);
	d.drop = CLEAN_DUPNEAR;
	b.len = 0;
	OK(dedup_report_drop(&r, &b, &d, who, "\"a\"", 1, 1, 0.5, err, sizeof err,
	    &code) == 0, "dedup_report_drop: a near duplicate");
	SAMES(b.p, "{\"file\":\"a\",\"line\":1,\"id\":5,\"stage\":\"near\","
	    "\"reason\":\"near duplicate\",\"kept\":7,\"similarity\":0.500}\n",
	    "names the kept document, with the similarity");
	d.drop = CLEAN_DUPURL;
	b.len = 0;
	dedup_report_drop(&r, &b, &d, who, "\"a\"", 1, 0, -1, err, sizeof err,
	    &code);
	SAMES(b.p, "{\"file\":\"a\",\"line\":1,\"id\":5,\"stage\":\"exact\","
	    "\"reason\":\"duplicate url\",\"kept\":\"k0\"}\n",
	    "no similarity below 0");
	d.drop = CLEAN_OTHERLANG;
	strcpy(d.lang.code, "fr");
	d.lang.percent = 97;
	b.len = 0;
	dedup_report_drop(&r, &b, &d, who, "\"a\"", 1, -1, -1, err, sizeof err,
	    &code);
	SAMES(b.p, "{\"file\":\"a\",\"line\":1,\"id\":5,\"stage\":\"lang\","
	    "\"reason\":\"other language\",\"lang\":\"fr\",\"percent\":97}\n",
	    "another language: its code and percent");
	d.drop = CLEAN_SHORT;
	d.chars = 30;
	d.tokens = 9;
	d.wholen = 0;
	b.len = 0;
	dedup_report_drop(&r, &b, &d, "", "\"a\"", 1, -1, -1, err, sizeof err,
	    &code);
	SAMES(b.p, "{\"stage\":\"length\",\"reason\":\"too short\",\"chars\":30,"
	    "\"tokens\":9}\n", "too short, unnamed: characters and tokens");
	d.tokens = 0;
	b.len = 0;
	dedup_report_drop(&r, &b, &d, "", "\"a\"", 1, -1, -1, err, sizeof err,
	    &code);
	SAMES(b.p, "{\"stage\":\"length\",\"reason\":\"too short\",\"chars\":30}\n",
	    "tokens not counted: characters only");
	d.drop = BAD_FIELD;
	d.wholen = 25;
	b.len = 0;
	dedup_report_drop(&r, &b, &d, "a:4: missing 'text' field", "\"a\"", 4, -1,
	    -1, err, sizeof err, &code);
	SAMES(b.p, "{\"file\":\"a\",\"line\":4,\"stage\":\"input\",\"reason\":"
	    "\"missing text field\",\"error\":\"a:4: missing 'text' field\"}\n",
	    "a bad record: its message as the error");
	d.drop = BAD_UTF8;
	d.wholen = 4;
	b.len = 0;
	dedup_report_drop(&r, &b, &d, "x\"\n:", "\"a\"", 9, -1, -1, err,
	    sizeof err, &code);
	SAMES(b.p, "{\"file\":\"a\",\"line\":9,\"stage\":\"input\",\"reason\":"
	    "\"invalid UTF-8\",\"error\":\"x\\\"\\n:\"}\n",
	    "its reason by input_bad_name, the message escaped");
	b.len = 0;
	dedup_report_decontam(&b, who, strlen(who), "cut", 3, 2);
	SAMES(b.p, "{\"file\":\"a\",\"line\":1,\"id\":5,\"stage\":\"decontam\","
	    "\"reason\":\"cut\",\"ngrams\":3,\"pieces\":2}\n",
	    "dedup_report_decontam");
	dedup_report_close(&r);

	path = tmpfile_with("drop.rep",
	    "{\"file\":\"a\",\"line\":1,\"id\":1,\"stage\":\"fix\",\"reason\":\"fixed\"}\n"
	    "{\"file\":\"a\",\"line\":2,\"id\":2,\"stage\":\"decontam\",\"reason\":\"cut\"}\n"
	    "{\"file\":\"a\",\"line\":3,\"id\":3,\"stage\":\"near\",\"reason\":\"near duplicate\"}\n"
	    "{\"file\":\"a\",\"line\":4,\"url\":\"u\",\"stage\":\"decontam\",\"reason\":\"nothing left\"}\n");
	drop = dedup_report_load_drop(path, err, sizeof err, &code);
	OK(drop != NULL && dedup_count(drop) == 2,
	    "dedup_report_load_drop: two drops, not the fix and the cut");
	json_rec_init(&jr, NULL, 0);
	parse(&jr, "{\"id\":3}");
	signature_name_hash(&jr, h);
	OK(drop && dedup_find_text(drop, h) == 0, "the near duplicate by its id");
	parse(&jr, "{\"url\":\"u\",\"text\":\"\"}");
	signature_name_hash(&jr, h);
	OK(drop && dedup_find_text(drop, h) == 1, "the emptied one by its url");
	parse(&jr, "{\"id\":1}");
	signature_name_hash(&jr, h);
	OK(drop && dedup_find_text(drop, h) < 0, "not the fixed one");
	dedup_free(drop);
	path = tmpfile_with("bad.rep", "{\"id\":1,\"stage\":\"fix\",\"reason\":\"x\"}\n"
	    "{\"id\":2,\"stage\":\"near\"}\n");
	OK(dedup_report_load_drop(path, err, sizeof err, &code) == NULL &&
	    code == XDATA, "a line without a reason fails, XDATA");
	OK(strstr(err, "bad.rep:2: not a report line (no stage or reason)") != NULL,
	    "FILE:LINE: why");
	snprintf(missing, sizeof missing, "%s/none.rep", tmpdir);
	OK(dedup_report_load_drop(missing, err, sizeof err, &code) == NULL &&
	    code == XDATA, "a missing file fails, XDATA");
	json_rec_free(&jr);
	buf_free(&b);
}

static const char task[] = "one two three four five six seven eight nine ten "
    "eleven twelve thirteen";

static void
test_decontam(void)
{
	static const char *const want[] = { "text", "split_id" };
	static char *files[2];
	struct decontam *dc = decontam_new();
	struct decontam_work w = { 0 };
	struct decontam_pass p;
	struct json_rec jr;
	struct spill spool;
	struct buf b = { 0 }, long_text = { 0 }, line = { 0 };
	char err[256], *names[3] = { "x/lambada.test.jsonl", "piqa", ".hidden" };
	const char *path;
	char *got;
	FILE *out;
	int code = 0;

	decontam_prefix(names, 3, &b);
	SAME(b.p, b.len, "lambada-piqa-.hidden", 20,
	    "decontam_prefix: names without directory and extensions");

	path = tmpfile_with("tasks.jsonl", "{\"text\":\"a b c d e f g h i\"}\n"
	    "{\"q\":1}\n");
	files[0] = xstrdup(path);
	OK(decontam_load_tasks(dc, files, 1, "text", err, sizeof err, &code) ==
	    -1 && code == XDATA, "decontam_load_tasks: no text field, XDATA");
	OK(strstr(err, "tasks.jsonl:2: missing 'text' field") != NULL,
	    "FILE:LINE: missing 'key' field");
	free(files[0]);
	path = tmpfile_with("tasks.jsonl", "{\"text\":3}\n");
	files[0] = xstrdup(path);
	OK(decontam_load_tasks(dc, files, 1, "text", err, sizeof err, &code) ==
	    -1 && strstr(err, "tasks.jsonl:1: non-string 'text' field") != NULL,
	    "a non-string text field");
	free(files[0]);
	decontam_free(dc);

	dc = decontam_new();
	b.len = 0;
	buf_printf(&b, "{\"body\":\"%s\"}\n", task);
	path = tmpfile_with("tasks.jsonl", b.p);
	files[0] = xstrdup(path);
	OK(decontam_load_tasks(dc, files, 1, "body", err, sizeof err, &code) == 0 &&
	    decontam_size(dc) == 1, "a task of 13 words: one n-gram");

	memset(&w, 0, sizeof w);
	w.npiece = 0;
	OK(decontam_verdict(&w) == DECONTAM_EMPTY, "decontam_verdict: no piece");
	w.npiece = DECONTAM_MAX_PIECES + 1;
	OK(decontam_verdict(&w) == DECONTAM_TOOMANY, "over the most pieces");
	w.npiece = DECONTAM_MAX_PIECES;
	OK(decontam_verdict(&w) == DECONTAM_KEEP, "up to the most");

	/* decontam_rewrite on pieces set by hand. */
	json_rec_init(&jr, want, 2);
	parse(&jr, "{\"split_id\":\"s\",\"text\":\"abcdefgh\",\"n\":1}");
	w.piece = xcalloc(2, sizeof *w.piece);
	w.npiece = 2;
	w.piece[0].start = 0;
	w.piece[0].end = 3;
	w.piece[1].start = 5;
	w.piece[1].end = 8;
	b.len = 0;
	decontam_rewrite(&jr, "text", "abcdefgh", "t", 41, &w, &b);
	SAMES(b.p, "{\"split_id\":\"s-t-0000000042-0000\",\"text\":\"abc\",\"n\":1}\n"
	    "{\"split_id\":\"s-t-0000000042-0001\",\"text\":\"fgh\",\"n\":1}\n",
	    "decontam_rewrite: a record a piece, split_id after the old one");
	parse(&jr, "{\"text\":\"abcdefgh\"}");
	b.len = 0;
	decontam_rewrite(&jr, "text", "abcdefgh", "t", 0, &w, &b);
	SAMES(b.p, "{\"text\":\"abc\",\"split_id\":\"t-0000000001-0000\"}\n"
	    "{\"text\":\"fgh\",\"split_id\":\"t-0000000001-0001\"}\n",
	    "without one, split_id is added");
	decontam_work_free(&w);
	json_rec_free(&jr);

	/* decontam_pass2 over a spool: the task alone, then a clean long text. */
	while (long_text.len < 300)
		buf_adds(&long_text, "lorem ipsum dolor sit amet. ");
	OK(spill_open(&spool, tmpdir) == 0, "a spool");
	buf_printf(&line, "{\"body\":\"%s\"}\n", task);
	spill_put(&spool, line.p, line.len);
	line.len = 0;
	buf_printf(&line, "{\"body\":\"%.*s\",\"id\":2}\n", (int)long_text.len,
	    long_text.p);
	spill_put(&spool, line.p, line.len);
	out = tmpfile();
	memset(&p, 0, sizeof p);
	p.key = "body";
	p.prefix = "tasks";
	p.out = out;
	OK(decontam_pass2(dc, &spool, &p, err, sizeof err, &code) == 0,
	    "decontam_pass2");
	OK(p.ndrop[DECONTAM_EMPTY] == 1 && p.ndrop[DECONTAM_KEEP] == 1 &&
	    p.npieces == 1 && p.nmatches == 1 && p.ncut == 0,
	    "the task alone leaves nothing; the other is kept whole");
	got = unit_file_text(out);
	line.len = 0;
	buf_printf(&line, "{\"body\":\"%.*s\",\"id\":2,\"split_id\":"
	    "\"tasks-0000000002-0000\"}\n", (int)long_text.len, long_text.p);
	SAME(got, strlen(got), line.p, line.len,
	    "its one piece, numbered by its place");
	free(got);
	fclose(out);
	spill_close(&spool);
	decontam_free(dc);
	free(files[0]);
	buf_free(&b);
	buf_free(&line);
	buf_free(&long_text);
}

/* clean_doc_run then clean_order, as the loop calls them. */
static int
doc(struct clean *c, struct clean_worker *w, unsigned long lineno,
    const char *line, struct clean_doc *d, struct buf *out, struct buf *info,
    struct buf *rep)
{
	out->len = info->len = 0;
	clean_doc_run(c, w, "f.jsonl", "\"f.jsonl\"", lineno, line, strlen(line),
	    d, out, info);
	return clean_order(c, d, info->p, w->dw.found, out->p + d->out, 0,
	    lineno, rep);
}

static void
test_clean(void)
{
	static char *files[] = { "f.jsonl" };
	struct clean c;
	struct clean_worker *w;
	struct clean_doc d;
	struct buf out = { 0 }, info = { 0 }, rep = { 0 };
	const char *a = "{\"id\":1,\"text\":\"the same words in the same order here\"}";
	const char *a2 = "{\"id\":2,\"text\":\"the same words in the same order here\"}";
	char err[256];
	int code = 0;

	memset(&c, 0, sizeof c);
	c.stage[CLEAN_FIX] = c.stage[CLEAN_EXACT] = c.stage[CLEAN_NEAR] = 1;
	c.fixes = TF_ALL;
	c.text_key = "text";
	c.lang = "en";
	c.near = 0.7;
	c.seed = 1234;
	c.tmpdir = tmpdir;
	c.files = files;
	c.nfiles = 1;
	OK(clean_start(&c, err, sizeof err, &code) == 0, "clean_start");
	c.rep = stderr;		/* only tested for NULL: lines go to rep */
	OK(dedup_report_open(&c.report, tmpdir, err, sizeof err, &code) == 0,
	    "the report's names");
	w = clean_worker_new(&c);

	OK(doc(&c, w, 1, a, &d, &out, &info, &rep) == 1 && d.drop == 0,
	    "clean_order: a new document is output now");
	SAME(out.p + d.out, d.outlen - 1, a, strlen(a), "as it came");
	OK(out.p[d.out + d.outlen - 1] == '\n', "with its newline");
	SAME(info.p + d.who, d.wholen, NAME3, strlen(NAME3),
	    "its name, for the report");
	OK(rep.len == 0, "nothing to report");
	OK(doc(&c, w, 2, a2, &d, &out, &info, &rep) == 0 &&
	    d.drop == CLEAN_DUPTEXT, "the same text again is dropped");
	SAMES(rep.p, "{\"file\":\"f.jsonl\",\"line\":2,\"id\":2,\"stage\":\"exact\","
	    "\"reason\":\"exact duplicate\",\"kept\":1,\"similarity\":1.000}\n",
	    "and reported with the kept one");
	rep.len = 0;
	OK(doc(&c, w, 3, "{\"text\":\"\\u201ccurly\\u201d quotes, it\\u2019s "
	    "so\"}", &d, &out, &info, &rep) == 1 &&
	    d.fixes == 1u << TF_QUOTES, "fix: curly quotes uncurled");
	SAME(out.p + d.out, d.outlen, "{\"text\":\"\\\"curly\\\" quotes, it's so\"}\n",
	    37, "the text field rewritten");
	SAMES(rep.p, "{\"file\":\"f.jsonl\",\"line\":3,\"stage\":\"fix\",\"reason\":"
	    "\"fixed\",\"fixes\":[\"uncurl_quotes\"]}\n", "the fix reported");
	rep.len = 0;
	OK(doc(&c, w, 4, "{\"text\":1", &d, &out, &info, &rep) == 0 &&
	    d.drop == BAD_JSON, "a bad record");
	OK(strncmp(info.p + d.who, "f.jsonl:4: invalid JSON", 23) == 0,
	    "its message is FILE:LINE: what");
	OK(strncmp(rep.p, "{\"file\":\"f.jsonl\",\"line\":4,\"stage\":\"input\","
	    "\"reason\":\"invalid JSON\",\"error\":\"f.jsonl:4: invalid JSON", 89) == 0,
	    "reported as input's");
	rep.len = 0;
	OK(doc(&c, w, 5, "{\"body\":\"x\"}", &d, &out, &info, &rep) == 0 &&
	    d.drop == BAD_FIELD, "no text field");
	SAME(info.p + d.who, d.wholen, "f.jsonl:5: missing 'text' field", 31,
	    "is a bad record");
	OK(doc(&c, w, 6, "{\"text\":[1]}", &d, &out, &info, &rep) == 0 &&
	    d.drop == BAD_FIELD, "a text field that is not a string");
	SAME(info.p + d.who, d.wholen, "f.jsonl:6: non-string 'text' field", 34,
	    "is one too");
	OK(c.nin == 6 && c.nout == 2 && c.nfixed == 1 &&
	    c.count[CLEAN_DUPTEXT].n == 1 && c.count[BAD_FIELD].n == 2 &&
	    c.count[BAD_JSON].n == 1, "the counts");
	OK(dedup_count(c.index) == 2, "the index holds the kept two");

	clean_worker_free(w);
	clean_end(&c);
	buf_free(&out);
	buf_free(&info);
	buf_free(&rep);
}

int
main(void)
{
	char dir[] = "/tmp/unit-dedup.XXXXXX";
	char cmd[600];
	const char *t = getenv("TMPDIR");

	if (t != NULL && *t) {
		snprintf(tmpdir, sizeof tmpdir, "%s/unit-dedup.XXXXXX", t);
		if (mkdtemp(tmpdir) == NULL)
			return 3;
	} else {
		if (mkdtemp(dir) == NULL)
			return 3;
		snprintf(tmpdir, sizeof tmpdir, "%s", dir);
	}
	test_utf8_count();
	test_stages();
	test_names();
	test_signatures();
	test_check();
	test_report();
	test_decontam();
	test_clean();
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		return 3;
	return unit_done();
}
