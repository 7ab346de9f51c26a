/* charset.c - find the character encoding of an HTML page and convert it to UTF-8 */
#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <string.h>
#include <strings.h>

#include "web/charset.h"
#include "core/utf8.h"

#define PRESCAN (8 << 10)

/* WHATWG labels -> the name glibc's iconv knows. Unlisted labels are tried as is. */
static const struct {
	const char *label, *enc;
} labels[] = {
	{ "utf-8", "UTF-8" }, { "utf8", "UTF-8" }, { "unicode-1-1-utf-8", "UTF-8" },
	{ "x-unicode20utf8", "UTF-8" },
	{ "windows-1252", "WINDOWS-1252" }, { "cp1252", "WINDOWS-1252" },
	{ "x-cp1252", "WINDOWS-1252" }, { "iso-8859-1", "WINDOWS-1252" },
	{ "iso8859-1", "WINDOWS-1252" }, { "iso8859_1", "WINDOWS-1252" },
	{ "iso_8859-1", "WINDOWS-1252" }, { "iso-ir-100", "WINDOWS-1252" },
	{ "latin1", "WINDOWS-1252" }, { "latin-1", "WINDOWS-1252" },
	{ "l1", "WINDOWS-1252" }, { "cp819", "WINDOWS-1252" },
	{ "ibm819", "WINDOWS-1252" }, { "us-ascii", "WINDOWS-1252" },
	{ "ascii", "WINDOWS-1252" }, { "ansi_x3.4-1968", "WINDOWS-1252" },
	{ "iso-8859-15", "ISO-8859-15" }, { "latin9", "ISO-8859-15" },
	{ "iso-8859-2", "ISO-8859-2" }, { "latin2", "ISO-8859-2" },
	{ "gb2312", "GB18030" }, { "gbk", "GB18030" }, { "x-gbk", "GB18030" },
	{ "gb_2312-80", "GB18030" }, { "chinese", "GB18030" },
	{ "csgb2312", "GB18030" }, { "gb18030", "GB18030" },
	{ "big5", "BIG5-HKSCS" }, { "big5-hkscs", "BIG5-HKSCS" },
	{ "x-x-big5", "BIG5-HKSCS" }, { "cn-big5", "BIG5-HKSCS" },
	{ "shift_jis", "CP932" }, { "shift-jis", "CP932" }, { "sjis", "CP932" },
	{ "x-sjis", "CP932" }, { "windows-31j", "CP932" }, { "ms_kanji", "CP932" },
	{ "euc-jp", "EUC-JP" }, { "x-euc-jp", "EUC-JP" },
	{ "iso-2022-jp", "ISO-2022-JP" },
	{ "euc-kr", "CP949" }, { "ks_c_5601-1987", "CP949" }, { "windows-949", "CP949" },
	{ "windows-874", "CP874" }, { "tis-620", "CP874" }, { "iso-8859-11", "CP874" },
	{ "koi8-r", "KOI8-R" }, { "koi8r", "KOI8-R" }, { "koi8-u", "KOI8-U" },
	{ "utf-16", "UTF-16LE" }, { "utf-16le", "UTF-16LE" }, { "utf-16be", "UTF-16BE" },
};

/* windows-1252 0x80..0x9f; the five holes map to C1 controls as WHATWG says. */
static const unsigned short cp1252[32] = {
	0x20ac, 0x0081, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021,
	0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008d, 0x017d, 0x008f,
	0x0090, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014,
	0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x009d, 0x017e, 0x0178,
};

/* The iconv name of a label, NULL when neither the table nor iconv knows it. */
static const char *
lookup(const char *lab)
{
	static const char *const known[] = {
		"WINDOWS-1250", "WINDOWS-1251", "WINDOWS-1253", "WINDOWS-1254",
		"WINDOWS-1255", "WINDOWS-1256", "WINDOWS-1257", "WINDOWS-1258",
		"ISO-8859-3", "ISO-8859-4", "ISO-8859-5", "ISO-8859-6",
		"ISO-8859-7", "ISO-8859-8", "ISO-8859-9", "ISO-8859-10",
		"ISO-8859-13", "ISO-8859-14", "ISO-8859-16", "MACINTOSH",
		"IBM866", "KOI8-RU",
	};
	char up[40];
	size_t i;

	for (i = 0; i < sizeof labels / sizeof labels[0]; i++)
		if (strcasecmp(lab, labels[i].label) == 0)
			return labels[i].enc;
	for (i = 0; lab[i] != '\0' && i < sizeof up - 1; i++)
		up[i] = toupper((unsigned char)lab[i]);
	up[i] = '\0';
	if (strncmp(up, "CP125", 5) == 0 && up[5] != '\0') {
		memmove(up + 8, up + 2, strlen(up + 2) + 1);
		memcpy(up, "WINDOWS-", 8);
	}
	for (i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(up, known[i]) == 0)
			return known[i];
	return NULL;
}

/* Copy a label (letters, digits, - _ . : ) from s into lab, lower case. */
static int
take_label(const char *s, const char *end, char *lab, size_t size)
{
	size_t n = 0;

	while (s < end && (*s == ' ' || *s == '\t' || *s == '"' || *s == '\''))
		s++;
	while (s < end && n + 1 < size && (isalnum((unsigned char)*s) ||
	    *s == '-' || *s == '_' || *s == '.' || *s == ':'))
		lab[n++] = tolower((unsigned char)*s++);
	lab[n] = '\0';
	return n > 0 ? 0 : -1;
}

int
charset_param(const char *ctype, char *lab, size_t size)
{
	const char *s;

	if (ctype == NULL)
		return -1;
	for (s = ctype; (s = strcasestr(s, "charset")) != NULL; s += 7) {
		const char *t = s + 7;

		while (*t == ' ' || *t == '\t')
			t++;
		if (*t == '=')
			return take_label(t + 1, t + 1 + strlen(t + 1), lab, size);
	}
	return -1;
}

/* A charset label in the <meta> or <?xml?> declarations of p[0..n). */
static int
meta_label(const char *p, size_t n, char *lab, size_t size)
{
	const char *end = p + (n < PRESCAN ? n : PRESCAN), *s = p, *gt, *t;

	while (s < end && (s = memchr(s, '<', end - s)) != NULL) {
		int xml = end - s > 5 && strncmp(s, "<?xml", 5) == 0;

		if (!xml && (end - s < 6 || strncasecmp(s, "<meta", 5) != 0 ||
		    !(s[5] == ' ' || s[5] == '\t' || s[5] == '\n' || s[5] == '\r' ||
		    s[5] == '/'))) {
			s++;
			continue;
		}
		gt = memchr(s, '>', end - s);
		if (gt == NULL)
			gt = end;
		for (t = s; t < gt; t++) {
			const char *key = xml ? "encoding" : "charset";
			size_t k = strlen(key);

			if (gt - t > (long)k && strncasecmp(t, key, k) == 0) {
				const char *v = t + k;

				while (v < gt && (*v == ' ' || *v == '\t'))
					v++;
				if (v < gt && *v == '=' &&
				    take_label(v + 1, gt, lab, size) == 0)
					return 0;
			}
		}
		s = gt;
	}
	return -1;
}

/* Counts of valid multibyte sequences and invalid bytes in p[0..n). */
static void
utf8_census(const char *p, size_t n, size_t *multi, size_t *bad)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i = 0, k;

	*multi = *bad = 0;
	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		k = utf8_seqlen(s + i, n - i);
		if (k == 0) {
			++*bad;
			i++;
		} else {
			++*multi;
			i += k;
		}
	}
}

const char *
charset_detect(const char *p, size_t n, const char *ctype, const char **how)
{
	const unsigned char *u = (const unsigned char *)p;
	const char *enc = NULL, *h = NULL;
	char lab[64];
	size_t multi, bad;

	if (n >= 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf)
		enc = "UTF-8", h = "bom";
	else if (n >= 2 && u[0] == 0xff && u[1] == 0xfe)
		enc = "UTF-16LE", h = "bom";
	else if (n >= 2 && u[0] == 0xfe && u[1] == 0xff)
		enc = "UTF-16BE", h = "bom";
	if (enc == NULL && charset_param(ctype, lab, sizeof lab) == 0 &&
	    (enc = lookup(lab)) != NULL)
		h = "header";
	if (enc == NULL && meta_label(p, n, lab, sizeof lab) == 0 &&
	    (enc = lookup(lab)) != NULL) {
		h = "meta";
		/* A page that reached us as bytes cannot be UTF-16 by its meta. */
		if (strncmp(enc, "UTF-16", 6) == 0)
			enc = "UTF-8";
	}
	if (strcmp(h ? h : "", "bom") != 0) {
		utf8_census(p, n, &multi, &bad);
		if (enc == NULL) {
			enc = bad == 0 ? "UTF-8" : "WINDOWS-1252";
			h = bad == 0 ? "detected" : "default";
		} else if (strcmp(enc, "UTF-8") == 0 && multi == 0 && bad > 0) {
			enc = "WINDOWS-1252", h = "detected";
		} else if (strcmp(enc, "UTF-8") != 0 && multi > 0 && bad == 0) {
			/*
			 * Text in another encoding is almost never valid
			 * multibyte UTF-8 by chance; pages saved or served
			 * as UTF-8 under their old label are common.
			 */
			enc = "UTF-8", h = "detected";
		}
	}
	if (how != NULL)
		*how = h;
	return enc;
}

/* Write code point c (below U+10000) at d; the number of bytes. */
static size_t
put_cp(char *d, unsigned c)
{
	if (c < 0x80) {
		d[0] = c;
		return 1;
	}
	if (c < 0x800) {
		d[0] = 0xc0 | c >> 6;
		d[1] = 0x80 | (c & 0x3f);
		return 2;
	}
	d[0] = 0xe0 | c >> 12;
	d[1] = 0x80 | (c >> 6 & 0x3f);
	d[2] = 0x80 | (c & 0x3f);
	return 3;
}

static const char repl[] = "\xef\xbf\xbd";

static size_t
from_utf8(const char *p, size_t n, struct buf *out)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i = 0, j, k, nrepl = 0;

	if (n >= 3 && s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf)
		i = 3;
	buf_reserve(out, n - i);
	while (i < n) {
		for (j = i; j < n && s[j] < 0x80 && s[j] != 0; j++)
			;
		buf_add(out, p + i, j - i);
		if ((i = j) >= n)
			break;
		if (s[i] == 0) {
			i++;
			continue;
		}
		if ((k = utf8_seqlen(s + i, n - i)) == 0) {
			buf_add(out, repl, 3);
			nrepl++;
			i++;
		} else {
			buf_add(out, p + i, k);
			i += k;
		}
	}
	return nrepl;
}

static void
from_1252(const char *p, size_t n, struct buf *out)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i;

	buf_reserve(out, 3 * n);
	for (i = 0; i < n; i++)
		if (s[i] != 0)
			out->len += put_cp(out->p + out->len,
			    s[i] >= 0x80 && s[i] < 0xa0 ? cp1252[s[i] - 0x80] : s[i]);
	out->p[out->len] = '\0';
}

size_t
charset_to_utf8(const char *p, size_t n, const char *enc, struct buf *out)
{
	iconv_t cd;
	char *in = (char *)p, *o;
	size_t inleft = n, oleft, nrepl = 0, r;
	struct buf tmp = { 0 };

	if (strcmp(enc, "UTF-8") == 0)
		return from_utf8(p, n, out);
	if (strcmp(enc, "WINDOWS-1252") == 0) {
		from_1252(p, n, out);
		return 0;
	}
	if ((cd = iconv_open("UTF-8", enc)) == (iconv_t)-1) {
		from_1252(p, n, out);
		return 0;
	}
	if (strncmp(enc, "UTF-16", 6) == 0 && n >= 2 &&
	    ((unsigned char)p[0] == 0xff || (unsigned char)p[0] == 0xfe))
		in += 2, inleft -= 2;
	while (inleft > 0) {
		buf_reserve(&tmp, inleft * 2 + 16);
		o = tmp.p + tmp.len;
		oleft = tmp.cap - tmp.len;
		r = iconv(cd, &in, &inleft, &o, &oleft);
		tmp.len = o - tmp.p;
		if (r != (size_t)-1)
			break;
		if (errno == E2BIG)
			continue;
		/* EILSEQ or a sequence cut at the end (EINVAL): one byte is lost. */
		buf_add(&tmp, repl, 3);
		nrepl++;
		in++;
		inleft--;
		iconv(cd, NULL, NULL, NULL, NULL);
	}
	iconv_close(cd);
	nrepl += from_utf8(tmp.p, tmp.len, out);
	buf_free(&tmp);
	return nrepl;
}
