/* unit-textfix.c - the text fixer against ftfy 6.3.1: own cases, and the shared dev set */
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "core/input.h"
#include "text/textfix.h"
#include "unit.h"

/* Outputs of ftfy.fix_text (6.3.1, default TextFixerConfig). */
static const struct {
	const char *in, *want;
} cases[] = {
	{ "s\303\203\302\263", "s\303\263" },
	{ "This \303\242\342\202\254\342\200\235 should be an em dash",
	    "This \342\200\224 should be an em dash" },
	{ "voil\303\203 le travail", "voil\303\240 le travail" },
	{ "\303\242\305\223\342\200\235 No problems", "\342\234\224 No problems" },
	{ "&macr;\\_(\303\243\302\203\302\204)_/&macr;",
	    "\302\257\\_(\343\203\204)_/\302\257" },
	{ "Broken text&hellip; it&#x2019;s \357\254\202ubberi\357\254\201c!",
	    "Broken text\342\200\246 it's flubberific!" },
	{ "I\302\222m blue, da ba dee da ba doo\302\205",
	    "I'm blue, da ba dee da ba doo\342\200\246" },
	{ "P&EACUTE;REZ", "P\303\211REZ" },
	{ "BUNDESSTRA&SZLIG;E", "BUNDESSTRASSE" },
	{ "&ntilde; &Ntilde; &NTILDE; &nTILDE;",
	    "\303\261 \303\221 \303\221 &nTILDE;" },
	{ "&Jscr;ohn &HilbertSpace;ancock", "\360\235\222\245ohn \342\204\213ancock" },
	{ "this&not that", "this&not that" },
	{ "&#59; &#1;&#x41;&#0; &#x110000; &#12ab;",
	    "&#59; A\357\277\275 \357\277\275 &#12ab;" },
	{ "&amp;amp; &lt;3", "& <3" },
	{ "<b>&amp;</b>\n&amp;", "<b>&amp;</b>\n&amp;" },
	{ "&amp;\n<b>&amp;</b>", "&\n<b>&amp;</b>" },
	{ "AH\303\205\342\204\242, the new sofa from IKEA\302\256",
	    "AH\303\205\342\204\242, the new sofa from IKEA\302\256" },
	{ "\357\274\254\357\274\257\357\274\265\357\274\244\343\200\200"
	    "\357\274\256\357\274\257\357\274\251\357\274\263\357\274\245\357\274\263",
	    "LOUD NOISES" },
	{ "\357\254\202u\357\254\203e\357\254\206", "fluffiest" },
	{ "a\r\nb\rc\342\200\250d\342\200\251e", "a\nb\nc\nd\ne" },
	{ "\033[36;44mI'm blue\033[0m\001\177", "I'm blue" },
	{ "\357\273\277BOM \342\201\252x\357\277\274", "BOM x" },
	{ "e\314\201 A\314\212", "\303\251 \303\205" },
	{ "\342\200\234here\342\200\231s a test\342\200\235", "\"here's a test\"" },
	{ "plain ASCII text\n\twith a tab", "plain ASCII text\n\twith a tab" },
	{ "caf\303\251 na\303\257ve", "caf\303\251 na\303\257ve" },
	/* mojibake on one line only: each line is fixed on its own */
	{ "caf\303\203\302\251\ncaf\303\251", "caf\303\251\ncaf\303\251" },
	/* double mojibake */
	{ "caf\303\203\302\203\303\202\302\251", "caf\303\251" },
};

/* textfix on a C string, leaving a C string in out. */
static unsigned
fix(struct textfix *tf, const char *s, unsigned en, struct buf *out)
{
	unsigned d = textfix(tf, s, strlen(s), en, out);

	buf_addc(out, '\0');
	out->len--;
	return d;
}

/*
 * The dev set is a JSON array of objects; yajl's callbacks give each
 * "original" and "fixed" string with its length (they may hold U+0000).
 */
struct devset {
	struct textfix tf;
	struct buf out, orig, fixed;
	int key;		/* 1: "original", 2: "fixed", 0: other */
	size_t n, agree;
};

static int
cb_key(void *ctx, const unsigned char *k, size_t n)
{
	struct devset *d = ctx;

	d->key = n == 8 && memcmp(k, "original", 8) == 0 ? 1 :
	    n == 5 && memcmp(k, "fixed", 5) == 0 ? 2 : 0;
	return 1;
}

static int
cb_string(void *ctx, const unsigned char *s, size_t n)
{
	struct devset *d = ctx;

	if (d->key == 1) {
		d->orig.len = 0;
		buf_add(&d->orig, s, n);
	} else if (d->key == 2) {
		d->fixed.len = 0;
		buf_add(&d->fixed, s, n);
	}
	d->key = 0;
	return 1;
}

static int
cb_end_map(void *ctx)
{
	struct devset *d = ctx;
	const char *got = d->orig.p;
	size_t glen = d->orig.len;

	if (textfix(&d->tf, d->orig.p, d->orig.len, TF_ALL, &d->out)) {
		got = d->out.p;
		glen = d->out.len;
	}
	d->n++;
	d->agree += glen == d->fixed.len && memcmp(got, d->fixed.p, glen) == 0;
	return 1;
}

static void
shared_set(const char *path)
{
	static const yajl_callbacks cb = {
		.yajl_string = cb_string, .yajl_map_key = cb_key,
		.yajl_end_map = cb_end_map,
	};
	struct devset d = { 0 };
	struct buf text = { 0 };
	struct input in;
	yajl_handle h;
	int ok;

	if (input_open(&in, path) < 0) {
		printf("ok %d # SKIP no %s\n", ++unit_n, path);
		return;
	}
	OK(input_slurp(&in, &text, 1 << 26) == 0, "read %s", path);
	input_close(&in);
	h = yajl_alloc(&cb, NULL, &d);
	ok = yajl_parse(h, (unsigned char *)text.p, text.len) == yajl_status_ok &&
	    yajl_complete_parse(h) == yajl_status_ok;
	OK(ok, "parse the dev set");
	yajl_free(h);
	printf("# ftfy dev set: %zu of %zu agree exactly (%.4f)\n", d.agree, d.n,
	    d.n ? (double)d.agree / d.n : 0);
	OK(d.n == 300, "300 dev cases");
	OK(d.agree * 100 >= d.n * 97, "at least 97%% exact agreement with ftfy");
	textfix_free(&d.tf);
	buf_free(&d.out);
	buf_free(&d.orig);
	buf_free(&d.fixed);
	buf_free(&text);
}

int
main(void)
{
	struct textfix tf = { 0 };
	struct buf out = { 0 };
	const char *shared = getenv("OWT_SHARED");
	char path[4096];
	size_t i, n;
	unsigned d;

	textfix_init();
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		n = strlen(cases[i].in);
		d = textfix(&tf, cases[i].in, n, TF_ALL, &out);
		if (d)
			SAME(out.p, out.len, cases[i].want, strlen(cases[i].want),
			    "case %zu", i);
		else
			SAMES(cases[i].in, cases[i].want, "case %zu (unchanged)", i);
	}
	d = fix(&tf, "\342\200\234q\342\200\235 caf\303\203\302\251",
	    TF_ALL & ~(1u << TF_QUOTES), &out);
	SAMES(out.p, "\342\200\234q\342\200\235 caf\303\251",
	    "quotes stay curly without TF_QUOTES");
	OK(d == 1u << TF_ENCODING, "only fix_encoding is reported");
	d = fix(&tf, "\342\200\234q\342\200\235", TF_ALL, &out);
	OK(d == 1u << TF_QUOTES, "uncurl_quotes is reported");
	OK(fix(&tf, "abc", TF_ALL, &out) == 0, "clean text: no fixes");
	snprintf(path, sizeof path, "%s/data/ftfy-dev/synthetic-dev.json",
	    shared ? shared : "../shared");
	shared_set(path);
	textfix_free(&tf);
	buf_free(&out);
	return unit_done();
}
