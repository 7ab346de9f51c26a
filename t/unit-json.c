/* unit-json.c - the JSON layer: records, documents as a tree, the writer in its three styles, strings and ids */
#include <math.h>
#include <stdlib.h>

#include "core/input.h"
#include "core/json.h"
#include "core/util.h"
#include "unit.h"

/*
 * A flat record takes json_rec_parse's fast path; with a nested member added
 * at the end, the same members come from yajl. Both must give the same
 * fields, and reject the same lines.
 */
static void
test_rec_paths(void)
{
	static const char *const want[] = { "text", "k\"" };
	static const char *const flat[] = {
		"{\"text\":\"a\\\"b\\\\c\\/\\b\\f\\n\\r\\t\\u00e9\\u4e2d\\ud83d\\ude00\\u0000z\"",
		"{ \"k\\\"\" :\t\"v\" ,\"n\":-0.5E+3 , \"t\":true,\"f\":false,\"z\":null",
		"{\"text\":\"" "0123456789abcdef0123456789abcdef\\n0123456789\xc3\xa9\"",
		"{\"\\u0074ext\":\"x\",\"text\":12",
		"{\"a\":01", "{\"a\":1.", "{\"a\":\"\\x\"", "{\"a\":\"\x01\"",
		"{\"a\":tru", "{\"a\" 1", "{\"a\":1,,\"b\":2", "{\x0b\"a\":1",
	};
	struct json_rec r1, r2;
	struct buf line = { 0 };
	char e1[256], e2[256];
	size_t i, k, n;
	int c1, c2, same;

	json_rec_init(&r1, want, 2);
	json_rec_init(&r2, want, 2);
	for (i = 0; i < sizeof flat / sizeof flat[0]; i++) {
		n = strlen(flat[i]);
		line.len = 0;
		buf_add(&line, flat[i], n);
		buf_add(&line, "}", 1);
		c1 = json_rec_parse(&r1, line.p, line.len, e1, sizeof e1);
		buf_add(&line, ",\"o\":[{}]}", 10);
		memmove(line.p + n, line.p + n + 1, 10);
		line.len--;
		c2 = json_rec_parse(&r2, line.p, line.len, e2, sizeof e2);
		same = (c1 == 0) == (c2 == 0) &&
		    (c1 != 0 || r1.nf + 1 == r2.nf);
		for (k = 0; same && c1 == 0 && k < r1.nf; k++) {
			same = r1.f[k].klen == r2.f[k].klen &&
			    memcmp(r1.f[k].key, r2.f[k].key, r1.f[k].klen + 1) == 0 &&
			    r1.f[k].type == r2.f[k].type &&
			    r1.f[k].vstart == r2.f[k].vstart &&
			    r1.f[k].vend == r2.f[k].vend &&
			    (r1.f[k].str == NULL) == (r2.f[k].str == NULL);
			if (same && r1.f[k].str != NULL)
				same = r1.f[k].slen == r2.f[k].slen &&
				    memcmp(r1.f[k].str, r2.f[k].str,
				    r1.f[k].slen + 1) == 0;
		}
		OK(same, "flat record %zu: the fast path and yajl agree (%s)", i,
		    c1 == 0 ? "parsed" : "rejected");
	}
	n = strlen("{\"text\":\"\\ud83d\\ude00\\u0000\"}");
	OK(json_rec_parse(&r1, "{\"text\":\"\\ud83d\\ude00\\u0000\"}", n, e1,
	    sizeof e1) == 0 && r1.f[0].slen == 5 &&
	    memcmp(r1.f[0].str, "\xf0\x9f\x98\x80\0", 6) == 0,
	    "a surrogate pair and \\u0000 decode to their bytes");
	json_rec_free(&r1);
	json_rec_free(&r2);
	buf_free(&line);
}

/*
 * Random strings of valid and invalid UTF-8, escapes and surrogates, runs
 * across the fast path's 16-byte blocks: its answer (it checks strings as
 * it reads them) against check_text's and yajl's for the same members
 * with a nested one added: the same code, the same message for bad
 * UTF-8, the same decoded text.
 */
static void
test_rec_random(void)
{
	static const char *const want[] = { "text" };
	static const char *const piece[] = {
		"a", "hello world ", "\xd0\xbf\xd1\x80", "\xe4\xb8\xad",
		"\xf0\x9f\x98\x80", "\\n", "\\\"", "\\u00e9", "\\ud83d\\ude00",
		"\xef\xbf\xbf", "\xe0\xa0\x80", "\xdf\xbf", "\xc2\x80",
		"\xf4\x8f\xbf\xbf",
		/* each bad: in one line of 8, at most one of them */
		"\\ud800", "\\udc00", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"\xf5", "\x80", "\xc3", "\xe4\xb8", "\xf0\x9f\x98", "\x01",
		"\xe0\x9f\xbf", "\\x",
	};
	const size_t ngood = 14, nall = sizeof piece / sizeof *piece;
	struct json_rec r1, r2;
	struct buf line = { 0 };
	char e1[256], e2[256];
	uint64_t x = 88172645463325252ull;
	size_t i, k, n, np, bad = (size_t)-1, nok = 0, nutf8 = 0, t1, t2;
	const char *s1, *s2, *why;
	int c1, c2;

	json_rec_init(&r1, want, 1);
	json_rec_init(&r2, want, 1);
	for (i = 0; i < 20000; i++) {
		line.len = 0;
		buf_adds(&line, "{\"text\":\"");
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		np = x % 60;
		for (k = 0; k < np; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf_adds(&line, piece[i % 8 == 0 && x % 97 == 0 ?
			    ngood + (x >> 8) % (nall - ngood) : (x >> 8) % ngood]);
		}
		buf_adds(&line, "\",\"id\":7");
		n = line.len;
		buf_adds(&line, "}");
		c1 = json_rec_parse(&r1, line.p, line.len, e1, sizeof e1);
		line.len = n;
		buf_adds(&line, ",\"o\":[{}]}");
		c2 = json_rec_parse(&r2, line.p, line.len, e2, sizeof e2);
		nok += c1 == 0;
		nutf8 += c1 == BAD_UTF8;
		s1 = c1 == 0 ? json_rec_str(&r1, "text", &t1, &why) : NULL;
		s2 = c2 == 0 ? json_rec_str(&r2, "text", &t2, &why) : NULL;
		if (c1 != c2 || (c1 == BAD_UTF8 && strcmp(e1, e2) != 0) ||
		    (c1 == 0 && (s1 == NULL || s2 == NULL || t1 != t2 ||
		    memcmp(s1, s2, t1) != 0))) {
			bad = i;
			break;
		}
	}
	OK(bad == (size_t)-1, "20000 random records: the fast path and "
	    "check_text with yajl agree (first differing: %zd)", (ssize_t)bad);
	OK(nok > 10000 && nutf8 > 100, "of them %zu parsed, %zu bad UTF-8",
	    nok, nutf8);
	json_rec_free(&r1);
	json_rec_free(&r2);
	buf_free(&line);
}

static void
test_rec(void)
{
	static const char *const want[] = { "text" };
	/* Lines json_rec_parse refuses (or takes), with the class and words. */
	static const struct {
		const char *line;
		int rc;
		const char *what, *err;
	} bad[] = {
		{ "{\"a\":1", BAD_JSON, "a truncated object is invalid JSON",
		    NULL },
		{ "{\"a\":1}{}", BAD_JSON,
		    "two objects on a line are invalid JSON", NULL },
		{ "{\"a\":1}\"x", BAD_JSON,
		    "a string cut short after the object is trailing garbage",
		    "invalid JSON: trailing garbage at byte 8" },
		{ "{\"a\":1}12", BAD_JSON,
		    "a number after the object is trailing garbage", NULL },
		{ "[]", BAD_NOTOBJECT, "an array is not an object", NULL },
		{ "  ", BAD_EMPTYLINE, "blank is an empty line", NULL },
		{ "{\"a\":\"\\ud83d\"}", BAD_JSON,
		    "a lone high surrogate escape is rejected", NULL },
		{ "{\"a\":\"\\\\ud83d\"}", 0,
		    "an escaped backslash before ud83d is text", NULL },
		{ "{\"a\":\"\xff\"}", BAD_UTF8, "invalid UTF-8 is rejected",
		    "invalid UTF-8 at byte 7" },
	};
	struct json_rec r;
	struct buf out = { 0 };
	struct json_edit ed[2];
	const struct json_field *f;
	const char *s, *why;
	char err[256];
	size_t len, i;
	const char *line = "  {\"a\" : \"x\\\"\\\\\" , \"text\":\"t\\u00e9\\n\","
	    "\"n\": -1.5e3,\"o\":{\"k\":[1,{}]},\"b\":true,\"z\":null}\r";

	json_rec_init(&r, want, 1);
	OK(json_rec_parse(&r, line, strlen(line), err, sizeof err) == 0,
	    "a record with every value type parses");
	OK(r.nf == 6, "six members");
	f = json_rec_get(&r, "a");
	SAME(r.line + f->vstart, f->vend - f->vstart, "\"x\\\"\\\\\"", 7,
	    "string span with escaped quote and backslash");
	f = json_rec_get(&r, "n");
	SAME(r.line + f->vstart, f->vend - f->vstart, "-1.5e3", 6, "number span");
	OK(f->type == JV_NUMBER, "number type");
	f = json_rec_get(&r, "o");
	SAME(r.line + f->vstart, f->vend - f->vstart, "{\"k\":[1,{}]}", 12,
	    "object span");
	OK(json_rec_get(&r, "b")->type == JV_BOOL && json_rec_get(&r, "z")->type == JV_NULL,
	    "bool and null types");
	s = json_rec_str(&r, "text", &len, &why);
	SAME(s, len, "t\xc3\xa9\n", 4, "wanted string is decoded");
	OK(json_rec_str(&r, "n", &len, &why) == NULL && strcmp(why, "not a string") == 0,
	    "a number is not a string");
	OK(json_rec_str(&r, "nope", &len, &why) == NULL && strcmp(why, "missing") == 0,
	    "a missing key is reported");

	ed[0] = (struct json_edit){ "a", "1", 1 };
	ed[1] = (struct json_edit){ "new", "\"v\"", 3 };
	json_rec_write(&out, &r, ed, 2);
	SAMES(out.p, "{\"a\" : 1 , \"text\":\"t\\u00e9\\n\",\"n\": -1.5e3,"
	    "\"o\":{\"k\":[1,{}]},\"b\":true,\"z\":null,\"new\":\"v\"}\n",
	    "edit replaces in place and appends, other bytes kept");

	/* The same spans without wanted keys (yajl does not decode strings). */
	json_rec_free(&r);
	json_rec_init(&r, NULL, 0);
	OK(json_rec_parse(&r, line, strlen(line), err, sizeof err) == 0,
	    "parses without wanted keys");
	f = json_rec_get(&r, "text");
	SAME(r.line + f->vstart, f->vend - f->vstart, "\"t\\u00e9\\n\"", 11,
	    "string span found without a string callback");
	f = json_rec_get(&r, "z");
	OK(f->type == JV_NULL, "last member typed");
	out.len = 0;
	ed[0] = (struct json_edit){ "text", "\"T\"", 3 };
	json_rec_write(&out, &r, ed, 1);
	SAMES(out.p, "{\"a\" : \"x\\\"\\\\\" , \"text\":\"T\",\"n\": -1.5e3,"
	    "\"o\":{\"k\":[1,{}]},\"b\":true,\"z\":null}\n",
	    "replacing a string member found without decoding");

	line = "{\"k\":\"v\" , \"k\":\"w\"}";
	json_rec_parse(&r, line, strlen(line), err, sizeof err);
	f = json_rec_get(&r, "k");
	SAME(r.line + f->vstart, f->vend - f->vstart, "\"w\"", 3,
	    "a repeated key: the last value counts, and a trailing string ends before '}'");
	out.len = 0;
	json_rec_write(&out, &r, ed, 0);
	SAMES(out.p, "{\"k\":\"v\" , \"k\":\"w\"}\n", "pass-through is byte for byte");

	line = "{}";
	json_rec_parse(&r, line, 2, err, sizeof err);
	out.len = 0;
	ed[0] = (struct json_edit){ "id", "7", 1 };
	json_rec_write(&out, &r, ed, 1);
	SAMES(out.p, "{\"id\":7}\n", "adding to an empty object needs no comma");

	for (i = 0; i < sizeof bad / sizeof *bad; i++) {
		OK(json_rec_parse(&r, bad[i].line, strlen(bad[i].line), err,
		    sizeof err) == bad[i].rc, "%s", bad[i].what);
		if (bad[i].err != NULL)
			SAMES(err, bad[i].err, "and named: %s", bad[i].err);
	}
	/*
	 * The text check's strides (16 bytes, then 8, then one): invalid
	 * UTF-8, a lone surrogate escape and a valid one after k ASCII
	 * letters, k = 0..40, each found at its byte, the valid line taken.
	 */
	for (i = 0; i <= 40; i++) {
		char l[128], want[64];
		int rc;
		int ok = 1;
		const char *tail[] = { "\xff\"}", "\\ud800x\"}", "\\u00e9\"}" };
		size_t t;

		for (t = 0; t < 3; t++) {
			snprintf(l, sizeof l, "{\"text\":\"%.*s%s", (int)i,
			    "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz", tail[t]);
			rc = json_rec_parse(&r, l, strlen(l), err, sizeof err);
			if (t == 0) {
				snprintf(want, sizeof want, "invalid UTF-8 at byte %zu",
				    10 + i);
				ok &= rc == BAD_UTF8 && strcmp(err, want) == 0;
			} else
				ok &= rc == (t == 1 ? BAD_JSON : 0);
		}
		OK(ok, "a fault after %zu ASCII bytes of text is found there", i);
	}
	json_rec_free(&r);
	test_rec_paths();

	out.len = 0;
	json_string(&out, "a\"b\\c\n\t\x01\x1f\xc3\xa9", 11);
	SAMES(out.p, "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f\xc3\xa9\"",
	    "json_string escapes quotes, backslashes and controls, keeps UTF-8");
	buf_free(&out);
}

/* Whether trees a and b are the same: types, numbers (their bits), strings, keys, kids. */
static int
same_tree(const struct json_val *a, const struct json_val *b)
{
	size_t i;

	if (a->type != b->type || memcmp(&a->num, &b->num, sizeof a->num) != 0 ||
	    (a->str == NULL) != (b->str == NULL) ||
	    (a->str != NULL && strcmp(a->str, b->str) != 0) ||
	    (a->key == NULL) != (b->key == NULL) ||
	    (a->key != NULL && strcmp(a->key, b->key) != 0) ||
	    a->nkids != b->nkids)
		return 0;
	for (i = 0; i < a->nkids; i++)
		if (!same_tree(&a->kids[i], &b->kids[i]))
			return 0;
	return 1;
}

static uint64_t doc_x = 0x2545f4914f6cdd1dull;
#define DRND() (doc_x ^= doc_x << 13, doc_x ^= doc_x >> 7, doc_x ^= doc_x << 17)

/* JSON's blanks between tokens, now and then one it has not */
static void
gen_ws(struct buf *b)
{
	static const char *const ws[] = { "", "", "", " ", "\n  ", "\t", "\r\n",
	    "\f", "\v" };

	unsigned odd = DRND() % 50 == 0;

	buf_adds(b, ws[DRND() % (odd ? 9 : 7)]);
}

/* A random value at depth d, a fault now and then (bad is the odds, in 1000) */
static void
gen_value(struct buf *b, int d, unsigned bad)
{
	static const char *const str[] = { "a", "hello", "\xc3\xa9",
	    "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "\\n", "\\\"", "\\/",
	    "\\u00e9", "\\u0000", "\\ud83d\\ude00", "\\t\\b\\f\\r", " ",
	    "\x7f" };
	static const char *const badstr[] = { "\xff", "\xc3", "\\x", "\x01",
	    "\xed\xa0\x80", "\\u12", "\\ud800", "\n" };
	static const char *const num[] = { "0", "-0", "7", "-42", "100256",
	    "1.5", "-2.25e3", "1E-2", "123456789012345678901", "0.5e+10" };
	static const char *const badnum[] = { "01", "-", "1.", ".5", "1e",
	    "+1", "0x1", "1e+", "--1", "NaN" };
	static const char *const lit[] = { "true", "false", "null" };
	static const char *const badlit[] = { "tru", "nul", "True", "nulll" };
	size_t k, n;

	gen_ws(b);
	switch (DRND() % (d < 6 ? 6 : 4)) {
	case 0:
		buf_addc(b, '"');
		for (n = DRND() % 6, k = 0; k < n; k++)
			buf_adds(b, DRND() % 1000 < bad ? badstr[DRND() % 8] :
			    str[DRND() % 14]);
		buf_addc(b, '"');
		break;
	case 1:
		buf_adds(b, DRND() % 1000 < bad ? badnum[DRND() % 10] :
		    num[DRND() % 10]);
		break;
	case 2:
	case 3:
		buf_adds(b, DRND() % 1000 < bad ? badlit[DRND() % 4] :
		    lit[DRND() % 3]);
		break;
	case 4:
		buf_addc(b, '[');
		for (n = DRND() % 5, k = 0; k < n; k++) {
			if (k > 0 && DRND() % 1000 >= bad)
				buf_addc(b, ',');
			gen_value(b, d + 1, bad);
		}
		if (n > 0 && DRND() % 1000 < bad)
			buf_addc(b, ',');
		gen_ws(b);
		buf_addc(b, ']');
		break;
	default:
		buf_addc(b, '{');
		for (n = DRND() % 5, k = 0; k < n; k++) {
			if (k > 0 && DRND() % 1000 >= bad)
				buf_addc(b, ',');
			gen_ws(b);
			buf_addc(b, '"');
			buf_adds(b, str[DRND() % 4]);	/* keys repeat */
			buf_addc(b, '"');
			gen_ws(b);
			if (DRND() % 1000 >= bad)
				buf_addc(b, ':');
			gen_value(b, d + 1, bad);
		}
		gen_ws(b);
		buf_addc(b, '}');
	}
	gen_ws(b);
}

/*
 * json_doc_parse's own reader against yajl alone (json_doc_fast 0) on
 * random documents, some with faults, cut short, with something after
 * them, or nested 63 to 66 deep: the same tree, or the same error.
 */
static void
test_doc_random(void)
{
	struct buf b = { 0 };
	struct json_val *t1, *t2;
	char e1[256], e2[256];
	size_t i, k, nok = 0, nerr = 0, bad = (size_t)-1;
	int c1, c2, depth;

	for (i = 0; i < 20000 && bad == (size_t)-1; i++) {
		b.len = 0;
		if (i % 500 == 0) {
			depth = 63 + (int)(i / 500 % 4);
			for (k = 0; k < (size_t)depth; k++)
				buf_addc(&b, i % 1000 ? '[' : '{');
			if (i % 1000 == 0)
				b.len = 0;	/* objects need keys: arrays only */
			for (k = 0; k < (size_t)depth; k++)
				buf_addc(&b, '[');
			for (k = 0; k < (size_t)depth; k++)
				buf_addc(&b, ']');
		} else
			gen_value(&b, 0, i % 3 == 0 ? 0 : 30);
		if (i % 17 == 0 && b.len > 0)
			b.len = DRND() % b.len;		/* cut short */
		if (i % 23 == 0)
			buf_adds(&b, DRND() % 2 ? " x" : " {}");
		e1[0] = e2[0] = '\0';
		c1 = c2 = 0;
		json_doc_fast = 1;
		t1 = json_doc_parse(b.p ? b.p : "", b.len, e1, sizeof e1, &c1);
		json_doc_fast = 0;
		t2 = json_doc_parse(b.p ? b.p : "", b.len, e2, sizeof e2, &c2);
		json_doc_fast = 1;
		if ((t1 == NULL) != (t2 == NULL) ||
		    (t1 == NULL && (strcmp(e1, e2) != 0 || c1 != c2)) ||
		    (t1 != NULL && !same_tree(t1, t2)))
			bad = i;
		nok += t1 != NULL;
		nerr += t1 == NULL;
		json_doc_free(t1);
		json_doc_free(t2);
	}
	OK(bad == (size_t)-1, "20000 random documents: json_doc_parse's own "
	    "reader and yajl give the same tree or error (first differing: "
	    "%zd)", (ssize_t)bad);
	if (bad != (size_t)-1)
		printf("# %.*s\n", (int)(b.len < 300 ? b.len : 300), b.p);
	OK(nok > 5000 && nerr > 2000, "of them %zu read, %zu refused", nok,
	    nerr);
	buf_free(&b);
}

static void
test_doc(void)
{
	static const struct { const char *in, *err; } bad[] = {
		{ "{\"n_layer\": 2", "byte 14: expected ',' or '}'" },
		{ "[1, 2", "byte 6: expected ',' or ']'" },
		{ "{\"a\":[1,", "byte 9: expected a value" },
		{ "{", "byte 2: expected a member name" },
		{ "{\"a\"", "byte 5: expected ':'" },
		{ "{\"a\": ", "byte 7: expected a value" },
		{ "\"a", "byte 3: unterminated string" },
		{ "", "byte 1: expected a value" },
		{ " \t ", "byte 4: expected a value" },
		{ "{\"a\":1,}", "byte 8: invalid object key (must be a string)" },
		{ "[1 2]", "byte 4: after array element, I expect ',' or ']'" },
		{ "{\"a\" 1}", "byte 6: object key and value must be separated "
		    "by a colon (':')" },
		{ "[1,,2]", "byte 4: unallowed token at this point in JSON text" },
		{ "01", "byte 2: trailing garbage" },
		{ "{} x", "byte 4: trailing garbage" },
		{ "{}\"x", "byte 3: trailing garbage" },
		{ "tru", "byte 1: invalid string in json text" },
		{ "1.", "byte 1: malformed number, a digit is required after "
		    "the decimal point" },
		{ "\"\\ud800\"", "byte 2: unpaired UTF-16 surrogate escape" },
		{ "[\"a\", \"\\udc00\"]", "byte 8: unpaired UTF-16 surrogate escape" },
		{ "\"\\ud800\\u0041\"", "byte 2: unpaired UTF-16 surrogate escape" },
		{ "\"\xff\"", "byte 1: invalid bytes in UTF8 string" },
	};
	const char *doc = " {\"s\": \"a\\\"\\u00e9\\ud83d\\ude00\\n\", \"n\": -1.5e3,"
	    " \"i\": 50257, \"a\": [true, false, null, {}], \"o\": {\"k\": []},"
	    " \"i\": 1, \"\": \"\\\\ud800\"} ";
	struct json_val *v;
	const struct json_val *a;
	char err[128], deep[200];
	int code;
	size_t i;

	v = json_doc_parse(doc, strlen(doc), err, sizeof err, &code);
	OK(v != NULL && v->type == JV_MAP && v->nkids == 7,
	    "doc: an object with every kind of value");
	if (v == NULL)
		return;
	SAMES(json_doc_get(v, "s")->str, "a\"\xc3\xa9\xf0\x9f\x98\x80\n",
	    "doc: escapes and a surrogate pair decode to UTF-8");
	OK(json_doc_get(v, "n")->type == JV_NUMBER &&
	    json_doc_get(v, "n")->num == -1500, "doc: a number with exponent");
	OK(json_doc_get(v, "i")->num == 50257,
	    "doc: a key given twice gives its first value");
	SAMES(json_doc_get(v, "")->str, "\\ud800",
	    "doc: an escaped backslash before ud800 is text, and the key may be empty");
	a = json_doc_get(v, "a");
	OK(a->type == JV_ARRAY && a->nkids == 4 && a->kids[0].type == JV_BOOL &&
	    a->kids[0].num == 1 && a->kids[1].num == 0 &&
	    a->kids[2].type == JV_NULL && a->kids[3].type == JV_MAP &&
	    a->kids[3].nkids == 0, "doc: array of true, false, null, {}");
	OK(json_doc_get(json_doc_get(v, "o"), "k")->type == JV_ARRAY &&
	    json_doc_get(json_doc_get(v, "o"), "k")->nkids == 0,
	    "doc: a nested object holding an empty array");
	OK(json_doc_get(v, "x") == NULL && json_doc_get(a, "s") == NULL &&
	    json_doc_get(NULL, "s") == NULL,
	    "doc: absent keys and non-objects give NULL");
	json_doc_free(v);

	{
		/* whole numbers read without strtod, the rest by it: the same */
		static const char *const num[] = { "0", "-0", "7", "-42",
		    "100256", "123456789012345", "-999999999999999",
		    "1234567890123456", "18446744073709551617", "1.5", "-2e3",
		    "0.1", "1E-2" };
		char d[512];
		size_t k, bad = 0, at = 1;

		d[0] = '[';
		for (k = 0; k < sizeof num / sizeof *num; k++)
			at += (size_t)snprintf(d + at, sizeof d - at, "%s%s",
			    k ? "," : "", num[k]);
		snprintf(d + at, sizeof d - at, "]");
		v = json_doc_parse(d, strlen(d), err, sizeof err, &code);
		for (k = 0; v != NULL && k < v->nkids; k++) {
			double want = strtod(num[k], NULL);

			if (v->kids[k].num != want ||
			    signbit(v->kids[k].num) != signbit(want))
				bad++;
		}
		OK(v != NULL && v->nkids == sizeof num / sizeof *num && bad == 0,
		    "doc: numbers as strtod reads them (-0 too; %zu differ)", bad);
		json_doc_free(v);
	}

	v = json_doc_parse("[7]xyz", 3, err, sizeof err, &code);
	OK(v != NULL && v->type == JV_ARRAY && v->kids[0].num == 7,
	    "doc: only len bytes are read (no NUL needed)");
	json_doc_free(v);
	v = json_doc_parse("\"top\"", 5, err, sizeof err, &code);
	OK(v != NULL && v->type == JV_STRING && strcmp(v->str, "top") == 0,
	    "doc: a string at the top");
	json_doc_free(v);

	memset(deep, '[', 64);
	memset(deep + 64, ']', 64);
	v = json_doc_parse(deep, 128, err, sizeof err, &code);
	OK(v != NULL, "doc: 64 levels of nesting");
	json_doc_free(v);
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	v = json_doc_parse(deep, 130, err, sizeof err, &code);
	OK(v == NULL, "doc: 65 levels are refused");
	SAMES(err, "byte 65: nested too deeply", "doc: ... at the 65th bracket");

	for (i = 0; i < sizeof bad / sizeof *bad; i++) {
		code = 0;
		v = json_doc_parse(bad[i].in, strlen(bad[i].in), err, sizeof err,
		    &code);
		OK(v == NULL && code == XDATA, "doc: '%s' is rejected (XDATA)",
		    bad[i].in);
		SAMES(err, bad[i].err, "doc: '%s' error message", bad[i].in);
		json_doc_free(v);
	}
}

/* The same values through a writer of each style. */
static void
write_sample(struct buf *b, int style)
{
	struct json_w w;

	json_w_init(&w, b, style);
	json_w_obj(&w);
	json_w_key(&w, "s");
	json_w_strz(&w, "a\"\n");
	json_w_key(&w, "n");
	json_w_num(&w, "%.9g", 0.1f);
	json_w_key(&w, "inf");
	json_w_num(&w, "%.17g", INFINITY);
	json_w_key(&w, "nan");
	json_w_num(&w, "%.17g", NAN);
	json_w_key(&w, "u");
	json_w_u64(&w, UINT64_MAX);
	json_w_key(&w, "i");
	json_w_int(&w, -42);
	json_w_key(&w, "a");
	json_w_arr(&w);
	json_w_bool(&w, 1);
	json_w_obj(&w);
	json_w_key(&w, "k");
	json_w_null(&w);
	json_w_end(&w);
	json_w_arr(&w);
	json_w_end(&w);
	json_w_end(&w);
	json_w_key(&w, "o");
	json_w_obj(&w);
	json_w_key(&w, "e");
	json_w_obj(&w);
	json_w_end(&w);
	json_w_key(&w, "f");
	json_w_bool(&w, 0);
	json_w_raw_members(&w, "\"m\":1", 5);
	json_w_end(&w);
	json_w_key(&w, "r");
	json_w_raw(&w, "{\"x\": [1]}", 10);
	json_w_end(&w);
}

static void
test_writer(void)
{
	static const char *const want[] = {
		"{\"s\":\"a\\\"\\n\",\"n\":0.100000001,\"inf\":null,\"nan\":null,"
		"\"u\":18446744073709551615,\"i\":-42,"
		"\"a\":[true,{\"k\":null},[]],\"o\":{\"e\":{},\"f\":false,\"m\":1},"
		"\"r\":{\"x\": [1]}}",

		"{\"s\": \"a\\\"\\n\", \"n\": 0.100000001, \"inf\": null, "
		"\"nan\": null, \"u\": 18446744073709551615, \"i\": -42, "
		"\"a\": [true, {\"k\": null}, []], \"o\": {\"e\": {}, "
		"\"f\": false, \"m\":1}, \"r\": {\"x\": [1]}}",

		"{\n"
		"  \"s\": \"a\\\"\\n\",\n"
		"  \"n\": 0.100000001,\n"
		"  \"inf\": null,\n"
		"  \"nan\": null,\n"
		"  \"u\": 18446744073709551615,\n"
		"  \"i\": -42,\n"
		"  \"a\": [true, {\"k\": null}, []],\n"
		"  \"o\": {\n"
		"    \"e\": {},\n"
		"    \"f\": false,\n"
		"    \"m\":1\n"
		"  },\n"
		"  \"r\": {\"x\": [1]}\n"
		"}",
	};
	static const char *const name[] = { "compact", "spaced", "pretty" };
	struct buf b = { 0 };
	struct json_w w;
	struct json_val *v;
	char err[128];
	int style, code;

	for (style = JSON_COMPACT; style <= JSON_PRETTY; style++) {
		b.len = 0;
		write_sample(&b, style);
		SAMES(b.p, want[style], "writer: %s", name[style]);
		v = json_doc_parse(b.p, b.len, err, sizeof err, &code);
		OK(v != NULL && json_doc_get(v, "u")->num == 0x1p64 &&
		    json_doc_get(json_doc_get(v, "o"), "m")->num == 1,
		    "writer: %s output parses back", name[style]);
		json_doc_free(v);
	}

	b.len = 0;
	json_w_init(&w, &b, JSON_PRETTY);
	json_w_arr(&w);
	json_w_obj(&w);
	json_w_key(&w, "k");
	json_w_arr(&w);
	json_w_end(&w);
	json_w_end(&w);
	json_w_end(&w);
	json_w_obj(&w);
	json_w_end(&w);
	SAMES(b.p, "[{\"k\": []}]{}",
	    "writer: pretty arrays are inline; values follow at the top");

	b.len = 0;
	buf_adds(&b, "{\"a\":1");
	json_w_within(&w, &b, JSON_COMPACT);
	json_w_key(&w, "b");
	json_w_str(&w, "xy", 1);
	json_w_key(&w, "c");
	json_w_arr(&w);
	json_w_int(&w, 0);
	json_w_end(&w);
	buf_addc(&b, '}');
	SAMES(b.p, "{\"a\":1,\"b\":\"x\",\"c\":[0]}",
	    "writer: members added to an object that is open");

	b.len = 0;
	json_w_init(&w, &b, JSON_COMPACT);
	json_w_obj(&w);
	json_w_raw_members(&w, "", 0);
	json_w_raw_members(&w, "\"a\":1", 5);
	json_w_key(&w, "b");
	json_w_int(&w, 2);
	json_w_end(&w);
	SAMES(b.p, "{\"a\":1,\"b\":2}",
	    "writer: raw members first, then a key; empty ones add nothing");

	b.len = 0;
	buf_addc(&b, '{');
	json_w_members(&w, &b, JSON_COMPACT);
	json_w_key(&w, "a");
	json_w_int(&w, 1);
	json_w_key(&w, "b");
	json_w_null(&w);
	buf_addc(&b, '}');
	SAMES(b.p, "{\"a\":1,\"b\":null}",
	    "writer: members of an object with none yet, the first without ','");

	b.len = 0;
	json_w_nested(&w, &b, JSON_PRETTY, 1);
	json_w_obj(&w);
	json_w_key(&w, "x");
	json_w_int(&w, 1);
	json_w_key(&w, "y");
	json_w_arr(&w);
	json_w_strz(&w, "z");
	json_w_end(&w);
	json_w_end(&w);
	SAMES(b.p, "{\n    \"x\": 1,\n    \"y\": [\"z\"]\n  }",
	    "writer: a value at depth 1 of a pretty document, indented as there");

	b.len = 0;
	json_w_init(&w, &b, JSON_SPACED | JSON_ASCII);
	json_w_obj(&w);
	json_w_key(&w, "\xc3\xa9");
	json_w_strz(&w, "\xe2\x82\xac\n");
	json_w_key(&w, "n");
	json_w_num(&w, "%.9g", -INFINITY);
	json_w_end(&w);
	SAMES(b.p, "{\"\\u00e9\": \"\\u20ac\\n\", \"n\": null}",
	    "writer: JSON_SPACED | JSON_ASCII, keys and strings escaped");
	buf_free(&b);
}

static void
test_strings(void)
{
	static const uint32_t ids[] = { 0, 50256, 4294967295u };
	struct buf b = { 0 };

	json_string(&b, "a\"b\\c\n\t\x01\x1f\xc3\xa9", 11);
	SAMES(b.p, "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f\xc3\xa9\"",
	    "json_string escapes quotes, backslashes and controls, keeps UTF-8");
	b.len = 0;
	json_string_lossy(&b, "\xc3\xa9x\"", 4);
	SAMES(b.p, "\"\xc3\xa9x\\\"\"", "json_string_lossy: valid UTF-8 as json_string");
	b.len = 0;
	json_string_lossy(&b, "a\xff" "b\xe2\x82z\xf0\x9f\x98", 9);
	SAMES(b.p, "\"a\xef\xbf\xbd" "b\xef\xbf\xbdz\xef\xbf\xbd\"",
	    "json_string_lossy: a bad byte, a cut sequence and one cut at the "
	    "end each become U+FFFD");
	b.len = 0;
	/* what json.dumps(s) writes, checked with python3 */
	json_string_as(&b, "a\"\\\n\x7f\x01~ \xc3\xa9\xe2\x82\xac\xef\xbf\xbf"
	    "\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf", 24, JSON_ASCII);
	SAMES(b.p, "\"a\\\"\\\\\\n\\u007f\\u0001~ \\u00e9\\u20ac\\uffff"
	    "\\ud83d\\ude00\\udbff\\udfff\"",
	    "json_string_as JSON_ASCII: json.dumps' ensure_ascii, lower-case "
	    "hex, surrogate pairs above U+FFFF");
	b.len = 0;
	json_string_as(&b, "a\xff\xc3\xa9\xe2\x82", 6, JSON_ASCII);
	SAMES(b.p, "\"a\\ufffd\\u00e9\\ufffd\"",
	    "json_string_as JSON_ASCII: invalid UTF-8 as json_string_lossy, "
	    "escaped");
	b.len = 0;
	json_string_as(&b, "\xc3\xa9\x7f", 3, JSON_LOSSY);
	SAMES(b.p, "\"\xc3\xa9\x7f\"",
	    "json_string_as JSON_LOSSY: valid UTF-8 and DEL kept");
	b.len = 0;
	json_string_lossy(&b, "", 0);
	SAMES(b.p, "\"\"", "json_string_lossy: empty");
	b.len = 0;
	json_ids(&b, ids, 3);
	SAMES(b.p, "[0, 50256, 4294967295]", "json_ids: an array of ids");
	b.len = 0;
	json_ids(&b, ids, 0);
	SAMES(b.p, "[]", "json_ids: none");
	buf_free(&b);
}

int
main(void)
{
	test_rec();
	test_rec_random();
	test_doc();
	test_doc_random();
	test_writer();
	test_strings();
	return unit_done();
}
