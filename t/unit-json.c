/* unit-json.c - the JSON layer: documents as a tree, string literals */
#include <stdlib.h>

#include "json.h"
#include "util.h"
#include "unit.h"

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

static void
test_strings(void)
{
	struct buf b = { 0 };

	json_string(&b, "a\"b\\c\n\t\x01\x1f\xc3\xa9", 11);
	SAMES(b.p, "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f\xc3\xa9\"",
	    "json_string escapes quotes, backslashes and controls, keeps UTF-8");
	buf_free(&b);
}

int
main(void)
{
	test_doc();
	test_strings();
	return unit_done();
}
