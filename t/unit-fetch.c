/* unit-fetch.c - owt-fetch's library: charsets, URL filter, robots.txt, addresses, extraction, the pipeline's items and records */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <unistd.h>

#include "web/charset.h"
#include "web/crawl.h"
#include "web/extract.h"
#include "web/fetch.h"
#include "web/robots.h"
#include "web/urlfilter.h"
#include "core/util.h"
#include "unit.h"

static void
test_charset(void)
{
	static const struct {
		const char *body, *ctype, *enc, *how, *utf8;
	} v[] = {
		{ "caf\xc3\xa9", NULL, "UTF-8", "detected", "caf\xc3\xa9" },
		{ "caf\xe9 \x93q\x94", NULL, "WINDOWS-1252", "default",
		  "caf\xc3\xa9 \xe2\x80\x9cq\xe2\x80\x9d" },
		{ "caf\xe9", "text/html; charset=ISO-8859-1", "WINDOWS-1252", "header",
		  "caf\xc3\xa9" },
		{ "caf\xc3\xa9", "text/html; charset=iso-8859-1", "UTF-8", "detected",
		  "caf\xc3\xa9" },
		{ "caf\xe9", "text/html; charset=utf-8", "WINDOWS-1252", "detected",
		  "caf\xc3\xa9" },
		{ "<meta charset=\"windows-1251\">\xcf\xf0\xe8", NULL, "WINDOWS-1251",
		  "meta", "<meta charset=\"windows-1251\">\xd0\x9f\xd1\x80\xd0\xb8" },
		{ "<META http-equiv=Content-Type content=\"text/html; charset=gb2312\">"
		  "\xd6\xd0", NULL, "GB18030", "meta",
		  "<META http-equiv=Content-Type content=\"text/html; charset=gb2312\">"
		  "\xe4\xb8\xad" },
		{ "<meta charset=gb2312>\xe4\xb8\xad", NULL, "UTF-8", "detected",
		  "<meta charset=gb2312>\xe4\xb8\xad" },
		{ "\xe4\xb8\xad", "text/html; charset=Shift_JIS", "UTF-8", "detected",
		  "\xe4\xb8\xad" },
		{ "\xef\xbb\xbfx\xc3\xa9", "text/html; charset=latin1", "UTF-8", "bom",
		  "x\xc3\xa9" },
		{ "<?xml version=\"1.0\" encoding=\"koi8-r\"?>\xf0", NULL, "KOI8-R", "meta",
		  "<?xml version=\"1.0\" encoding=\"koi8-r\"?>\xd0\x9f" },
		{ "a\xff\xfe b", "text/html; charset=x-nonsense", "WINDOWS-1252",
		  "default", "a\xc3\xbf\xc3\xbe b" },
		{ "bad \xc3\xa9 \xff", "text/html; charset=utf-8", "UTF-8", "header",
		  "bad \xc3\xa9 \xef\xbf\xbd" },
		{ "nul\0byte", NULL, "UTF-8", "detected", "nulbyte" },
	};
	size_t i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		struct buf out = { 0 };
		const char *how, *enc;
		size_t n = strlen(v[i].body);

		if (i == sizeof v / sizeof v[0] - 1)
			n = 8;
		enc = charset_detect(v[i].body, n, v[i].ctype, &how);
		OK(strcmp(enc, v[i].enc) == 0 && strcmp(how, v[i].how) == 0,
		    "charset case %zu: %s by %s (got %s by %s)", i, v[i].enc,
		    v[i].how, enc, how);
		charset_to_utf8(v[i].body, n, enc, &out);
		SAME(out.p, out.len, v[i].utf8, strlen(v[i].utf8),
		    "charset case %zu converts to UTF-8", i);
		buf_free(&out);
	}
}

static void
test_normalize(void)
{
	static const struct { const char *url, *norm; } v[] = {
		{ "HTTP://Example.COM/Path?Q=A#frag", "http://example.com/Path?Q=A" },
		{ "https://example.com:443", "https://example.com/" },
		{ "http://example.com:443/", "http://example.com:443/" },
		{ "https://example.com:80/", "https://example.com:80/" },
		{ "http://example.com:080?x", "http://example.com/?x" },
		{ "http://example.com#a", "http://example.com/" },
		{ "http://example.com./a", "http://example.com./a" },
		{ "http://[::1]:80/x", "http://[::1]/x" },
		{ "http://my_host.example.com/a_b", "http://my_host.example.com/a_b" },
		{ "http://m\303\274nchen.example/%C3%BC#x", "http://xn--mnchen-3ya.example/%C3%BC" },
		{ "http://\346\227\245\346\234\254.jp/", "http://xn--wgv71a.jp/" },
	};
	static const char *const bad[] = { "ftp://example.com/", "http://",
		"http://exa mple.com/", "http://ex\377.com/", "example.com/x",
		"http://a@b.com/" };
	struct buf b = { 0 };
	size_t i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		OK(urlfilter_normalize(v[i].url, strlen(v[i].url), &b) == 0,
		    "'%s' has a normal form", v[i].url);
		SAME(b.p, b.len, v[i].norm, strlen(v[i].norm), "'%s' is '%s'",
		    v[i].url, v[i].norm);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		OK(urlfilter_normalize(bad[i], strlen(bad[i]), &b) < 0,
		    "'%s' has none", bad[i]);
	buf_free(&b);
}

static void
test_urlfilter(void)
{
	static const struct { const char *url; int why; } v[] = {
		{ "http://example.com/a", URL_OK },
		{ "https://Example.COM:8443/a?b=c#d", URL_OK },
		{ "http://1.2.3.4/", URL_OK },
		{ "http://a.b", URL_OK },
		{ "http://a.b/", URL_REPEAT },	/* an empty path is "/" */
		{ "http://x", URL_SHORT },
		{ "http://localhost/page", URL_OK },
		{ "http://exa mple.com/", URL_MALFORMED },
		{ "http://example/", URL_MALFORMED },
		{ "http://-bad-.com/", URL_MALFORMED },
		{ "http://user:pw@example.com/", URL_MALFORMED },
		{ "http://example.com:0/", URL_MALFORMED },
		{ "http://example.com:99999/", URL_MALFORMED },
		{ "example.com/page", URL_MALFORMED },
		{ "ftp://example.com/file", URL_SCHEME },
		{ "javascript:alert(1)", URL_SCHEME },
		{ "https://www.youtube.com/watch?v=x", URL_DOMAIN },
		{ "http://maps.google.co.uk/maps", URL_DOMAIN },
		{ "http://i.redd.it/abc", URL_DOMAIN },
		{ "http://en.wikipedia.org/wiki/C", URL_DOMAIN },
		{ "http://someone.github.io/post", URL_OK },
		{ "http://googleblog.example.com/", URL_OK },
		{ "http://example.com/photo.JPG", URL_EXTENSION },
		{ "http://example.com/a.7z", URL_EXTENSION },
		{ "http://example.com/a.ai", URL_EXTENSION },
		{ "http://example.com/a.tar.gz?x=1", URL_EXTENSION },
		{ "http://example.com/a.pdf#page=2", URL_EXTENSION },
		{ "http://example.com/a.pdf.html", URL_OK },
		{ "http://example.com/?file=a.pdf", URL_OK },
		{ "http://example.com/a", URL_REPEAT },
		{ "HTTP://EXAMPLE.com/a", URL_REPEAT },
		{ "http://example.com:80/a#top", URL_REPEAT },
		{ "https://example.com:8443/a?b=c", URL_REPEAT },
		{ "http://example.com:8080/a", URL_OK },
		{ "https://example.com:443", URL_OK },
		{ "https://example.com/", URL_REPEAT },
		{ "http://my_blog.example.com/", URL_OK },
		{ "http://_dmarc.example.com/x", URL_OK },
		{ "http://b\303\274cher.example/", URL_OK },
		{ "http://xn--bcher-kva.example/", URL_REPEAT },
		{ "http://B\303\234CHER.example/", URL_REPEAT },
		{ "http://b\374cher.example/", URL_MALFORMED },
		{ "http://a\342\200\256b.example/", URL_MALFORMED },
		{ "http://blocked.example.org/x", URL_DOMAIN },
		{ "http://deep.sub.blocked.example.org/x", URL_DOMAIN },
		{ "http://example.org/x", URL_OK },
		{ "http://news.badlabel.co.jp/x", URL_DOMAIN },
	};
	struct urlfilter f;
	char err[256], path[] = "/tmp/owt-unit-bl.XXXXXX";
	const char *const *e;
	size_t i, n = 0;
	int fd = mkstemp(path), seven = 0, ai = 0, code = 0;

	OK(fd >= 0 && write(fd, "# more\nblocked.example.org\nBadLabel  # label\n\n", 46) == 46,
	    "blacklist file written");
	close(fd);
	OK(urlfilter_init(&f, path, err, sizeof err, &code) == 0,
	    "filter with a blacklist file");
	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		int r = urlfilter_check(&f, v[i].url, strlen(v[i].url), NULL);

		OK(r == v[i].why, "'%s' is %s (got %s)", v[i].url,
		    urlfilter_reason[v[i].why], urlfilter_reason[r]);
	}
	urlfilter_free(&f);
	unlink(path);
	for (e = urlfilter_extensions; *e; e++, n++) {
		seven += strcmp(*e, ".7z") == 0;
		ai += strcmp(*e, ".ai") == 0;
		OK(strchr(*e + 1, '.') == NULL || strcmp(*e, ".tar.gz") == 0,
		    "extension %s is one suffix", *e);
	}
	OK(n == 67 && seven && ai, "67 extensions, .7z and .ai separate (Megatron's .7z.ai fixed)");
	for (n = 0, e = urlfilter_domains; *e; e++, n++)
		OK(e == urlfilter_domains || strcmp(e[-1], *e) < 0, "domain list sorted at %s", *e);
	OK(n == 111, "111 blacklisted domain labels");

	fd = open("/nonexistent/bl", 0);
	OK(urlfilter_init(&f, "/nonexistent/bl", err, sizeof err, &code) < 0 &&
	    strstr(err, "cannot open '/nonexistent/bl'") && code == XDATA,
	    "a missing blacklist is an error (XDATA): %s", err);
	strcpy(path, "/tmp/owt-unit-bl.XXXXXX");
	fd = mkstemp(path);
	OK(write(fd, "ok.com\nnot a domain\n", 20) == 20, "bad blacklist written");
	close(fd);
	code = 0;
	OK(urlfilter_init(&f, path, err, sizeof err, &code) < 0 &&
	    strstr(err, ":2: 'not a domain' is not a domain name") &&
	    code == XDATA,
	    "a bad blacklist line names its line: %s", err);
	unlink(path);
}

static void
test_robots(void)
{
	static const char txt[] =
	    "# comment\n"
	    "User-agent: other\nDisallow: /\n\n"
	    "User-agent: *\nDisallow: /private/\nAllow: /private/open\n"
	    "Disallow: /*.php$\nDisallow: /search\nCrawl-delay: 2.5\n\n"
	    "User-agent: Owt-Fetch\nUser-agent: x\nDisallow: /mine/ # ours\n"
	    "Allow: /mine/ok\n";
	static const struct { const char *path; int ok; } star[] = {
		{ "/", 1 }, { "/private/x", 0 }, { "/private/open/x", 1 },
		{ "/a.php", 0 }, { "/a.php?x", 1 }, { "/searching", 0 },
		{ "/mine/x", 1 }, { "/robots.txt", 1 },
	}, mine[] = {
		{ "/private/x", 1 }, { "/mine/x", 0 }, { "/mine/ok", 1 },
	};
	struct robots rb;
	size_t i;

	robots_parse(&rb, txt, sizeof txt - 1, "nobody");
	for (i = 0; i < sizeof star / sizeof star[0]; i++)
		OK(robots_allowed(&rb, star[i].path) == star[i].ok,
		    "robots '*' group: %s %s", star[i].path, star[i].ok ? "allowed" : "disallowed");
	OK(rb.delay == 2.5, "Crawl-delay of the '*' group");
	robots_free(&rb);
	robots_parse(&rb, txt, sizeof txt - 1, "owt-fetch");
	for (i = 0; i < sizeof mine / sizeof mine[0]; i++)
		OK(robots_allowed(&rb, mine[i].path) == mine[i].ok,
		    "robots own group: %s %s", mine[i].path, mine[i].ok ? "allowed" : "disallowed");
	OK(rb.delay == 0, "no Crawl-delay in our group");
	robots_free(&rb);
	robots_parse(&rb, "User-agent: *\nAllow: /p\nDisallow: /p\n", 37, "x");
	OK(robots_allowed(&rb, "/page"), "allow wins a tie");
	robots_free(&rb);
	robots_parse(&rb, "garbage\n\0\n<html>", 16, "x");
	OK(robots_allowed(&rb, "/x"), "garbage allows everything");
	robots_free(&rb);
}

static void
test_private(void)
{
	static const struct { const char *a; int priv; } v[] = {
		{ "127.0.0.1", 1 }, { "127.9.9.9", 1 }, { "10.1.2.3", 1 },
		{ "172.16.0.1", 1 }, { "172.31.255.255", 1 }, { "172.32.0.1", 0 },
		{ "192.168.1.1", 1 }, { "169.254.169.254", 1 }, { "100.64.0.1", 1 },
		{ "0.0.0.0", 1 }, { "224.0.0.1", 1 }, { "255.255.255.255", 1 },
		{ "8.8.8.8", 0 }, { "198.51.100.7", 0 }, { "93.184.216.34", 0 },
		{ "::1", 1 }, { "::", 1 }, { "fe80::1", 1 }, { "fd00::1", 1 },
		{ "::ffff:127.0.0.1", 1 }, { "::ffff:8.8.8.8", 0 },
		{ "2606:4700::1111", 0 }, { "ff02::1", 1 },
	};
	size_t i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		struct sockaddr_in s4;
		struct sockaddr_in6 s6;
		const struct sockaddr *sa;

		memset(&s4, 0, sizeof s4);
		memset(&s6, 0, sizeof s6);
		if (inet_pton(AF_INET, v[i].a, &s4.sin_addr) == 1) {
			s4.sin_family = AF_INET;
			sa = (struct sockaddr *)&s4;
		} else {
			inet_pton(AF_INET6, v[i].a, &s6.sin6_addr);
			s6.sin6_family = AF_INET6;
			sa = (struct sockaddr *)&s6;
		}
		OK(crawl_private_addr(sa) == v[i].priv, "%s is %s", v[i].a,
		    v[i].priv ? "private" : "public");
	}
}

static void
test_extract(void)
{
	static const char page[] =
	    "<html><head><title>The Title - Site</title></head><body>"
	    "<div id=\"nav\"><a href=\"/\">Home</a> | <a href=\"/a\">About</a></div>"
	    "<div class=\"sidebar\"><p>Buy our things, they are good, really good, cheap.</p></div>"
	    "<div class=\"article-body\"><h1>The Title</h1>"
	    "<p>First paragraph of the story, which is long enough, with commas, to count.</p>"
	    "<p>A long paragraph follows, so that the article has more than five hundred "
	    "characters, the least Readability accepts before it retries with fewer rules, "
	    "and this is the sentence that gets it there, with commas, many of them, yes.</p>"
	    "<p>One more paragraph, to be safe, about nothing much at all, but long.</p>"
	    "<p>And the last one, which goes on and on about the weather, the sea, the "
	    "mountains, the people who live there, and what they eat for breakfast.</p>"
	    "<p>Second <b>paragraph</b> of the story,<br>with a line break, and more words here.</p>"
	    "<script>var x = '<p>not text</p>';</script>"
	    "<p style=\"display:none\">Hidden text that nobody sees, not even the reader.</p>"
	    "<custom-el>Custom element text is kept, as a block of its own here.</custom-el>"
	    "</div><div class=\"comments\"><p>Comment one, which says something, at length.</p></div>"
	    "<footer>Copyright 2024, all rights reserved, everywhere.</footer></body></html>";
	static const char want[] =
	    "First paragraph of the story, which is long enough, with commas, to count.\n"
	    "A long paragraph follows, so that the article has more than five hundred "
	    "characters, the least Readability accepts before it retries with fewer rules, "
	    "and this is the sentence that gets it there, with commas, many of them, yes.\n"
	    "One more paragraph, to be safe, about nothing much at all, but long.\n"
	    "And the last one, which goes on and on about the weather, the sea, the "
	    "mountains, the people who live there, and what they eat for breakfast.\n"
	    "Second paragraph of the story,\nwith a line break, and more words here.\n"
	    "Custom element text is kept, as a block of its own here.";
	struct buf title = { 0 }, text = { 0 }, deep = { 0 };
	char err[128], msg[128];
	int i, depth, rc, code = 0;
	unsigned long lo, hi;

	OK(extract_html(page, sizeof page - 1, &title, &text, err, sizeof err, &code) == 0,
	    "a small page extracts");
	SAMES(title.p, "The Title - Site", "the title");
	SAMES(text.p ? text.p : "", want, "the article text, without navigation, sidebar, "
	    "script, hidden text, title heading, comments and footer");
	for (i = 0; i < EXTRACT_MAX_DEPTH + 1; i++)
		buf_adds(&deep, "<div>");
	OK(extract_depth(deep.p, deep.len) == EXTRACT_MAX_DEPTH + 1, "depth of nested divs");
	title.len = text.len = 0;
	OK(extract_html(deep.p, deep.len, &title, &text, err, sizeof err, &code) < 0 &&
	    strcmp(err, "nested deeper than 4000 elements") == 0 &&
	    code == XDATA,
	    "a page nested too deep is refused: %s", err);
	OK(extract_depth("<p><p><br><img><li><li><b>x</b><!-- <div><div> --><div/>"
	    "<script><div><div></script>", 79) == 1, "implicitly closed, void, "
	    "self-closed, commented and script tags do not nest");

	/* The work budget. */
	OK(extract_budget(0) == EXTRACT_WORK_BASE &&
	    extract_budget(1000) == EXTRACT_WORK_BASE + 1000 * EXTRACT_WORK_PER_BYTE &&
	    extract_budget((size_t)10 << 20) == EXTRACT_WORK_MAX,
	    "the budget: a base, a share per byte, a cap");
	/* The least budget that does (the pre-scan takes part of it). */
	for (lo = 0, hi = 100000; lo + 1 < hi; ) {
		unsigned long mid = lo + (hi - lo) / 2;

		title.len = text.len = 0;
		if (extract_html_work(page, sizeof page - 1, mid, &title, &text, NULL,
		    err, sizeof err, &code) == 0)
			hi = mid;
		else
			lo = mid;
	}
	title.len = text.len = 0;
	snprintf(msg, sizeof msg, "over the extraction work budget (%lu steps)", lo);
	OK(extract_html_work(page, sizeof page - 1, lo, &title, &text, NULL, err,
	    sizeof err, &code) < 0 && strcmp(err, msg) == 0 && text.len == 0 &&
	    title.len == 0, "a page one step over its budget (%lu) fails, "
	    "without text, out of the passes: %s", lo, err);
	title.len = text.len = 0;
	OK(extract_html_work(page, sizeof page - 1, hi, &title, &text, NULL, err,
	    sizeof err, &code) == 0 && strcmp(text.p, want) == 0,
	    "and extracts as usual with enough");
	title.len = text.len = 0;
	OK(extract_html_work(page, sizeof page - 1, 10, &title, &text, NULL, err,
	    sizeof err, &code) < 0 && strcmp(err, "over the extraction work budget "
	    "(10 steps)") == 0, "a budget under the pre-scan's share fails before the parse");
	/*
	 * Lists nested in lists, each with a few items: the article search
	 * used to walk each list's subtree once per list (15 s on 300 KB),
	 * and libtidy's parse is quadratic in the nesting too. 300 levels
	 * are a page; 3990 (under the depth guard) fail in milliseconds.
	 */
	for (depth = 300; depth <= 3990; depth += 3690) {
		deep.len = 0;
		buf_adds(&deep, "<html><body><div class=\"content\">");
		for (i = 0; i < depth; i++)
			buf_printf(&deep, "<ul><li>item %d, and some words,</li>"
			    "<li><a href=\"/a\">a</a></li><li><p>x</p></li><li>", i);
		for (i = 0; i < depth; i++)
			buf_adds(&deep, "</li></ul>");
		buf_adds(&deep, "</div></body></html>");
		title.len = text.len = 0;
		rc = extract_html(deep.p, deep.len, &title, &text, err, sizeof err, &code);
		if (depth == 300)
			OK(rc == 0 && text.len > 0 && strncmp(text.p, "item 0, and "
			    "some words,\na\nx\nitem 1,", 26) == 0,
			    "300 levels of nested lists extract");
		else
			OK(rc < 0 && strncmp(err, "over the extraction work budget",
			    31) == 0, "%d levels of nested lists (%zu bytes) are "
			    "over the budget: %s", depth, deep.len, err);
	}
	buf_free(&title);
	buf_free(&text);
	buf_free(&deep);
}

/* Messages escape the control bytes of the input they quote. */
static void
test_escape(void)
{
	static const struct {
		const char *in, *out;
	} v[] = {
		{ "plain caf\xc3\xa9 \\x1b", "plain caf\xc3\xa9 \\x1b" },
		{ "a\x1b[2Jb", "a\\x1b[2Jb" },
		{ "\t\n\r\x01\x7f", "\\t\\n\\r\\x01\\x7f" },
		{ "x\xc2\x9b" "1m\xc2\xa0", "x\\xc2\\x9b1m\xc2\xa0" },
		{ "\xc2", "\xc2" },
		{ "", "" },
	};
	char got[128];
	size_t i;
	FILE *f;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		memset(got, 0, sizeof got);
		if ((f = fmemopen(got, sizeof got - 1, "w")) == NULL) {
			OK(0, "fmemopen");
			return;
		}
		owt_put_escaped(f, v[i].in);
		fclose(f);
		SAMES(got, v[i].out, "escaped: '%s'", v[i].out);
	}
}

/* extract_html of PAGE: it extracts (WHAT), and the text is WANT's (DESC). */
static void
extract_same(const struct buf *page, struct buf *want, const char *what,
    const char *desc)
{
	struct buf title = { 0 }, text = { 0 };
	char err[128];
	int code = 0;

	OK(extract_html(page->p, page->len, &title, &text, err, sizeof err,
	    &code) == 0, "%s extracts", what);
	buf_addc(&text, '\0');
	buf_addc(want, '\0');
	SAMES(text.p, want->p, "%s", desc);
	buf_free(&title);
	buf_free(&text);
}

/* The article's boilerplate: edges, comment sections, a hidden majority. */
static void
test_extract_clean(void)
{
	static const char para[] =
	    "<p>This paragraph of the story is long enough to be a paragraph, with "
	    "commas, clauses, and a full stop at the end of it, as articles have.</p>";
	static const char want_para[] =
	    "This paragraph of the story is long enough to be a paragraph, with "
	    "commas, clauses, and a full stop at the end of it, as articles have.";
	struct buf page = { 0 }, want = { 0 }, title = { 0 }, text = { 0 };
	char err[128];
	int i, code = 0;

	/* Edges: headline, dateline, byline and tool links above, link list below. */
	buf_adds(&page, "<html><head><title>Rain in Spain - The Daily</title></head>"
	    "<body><div class=\"story\"><h1>Rain in Spain</h1><div>January 8, 2008</div>"
	    "<div>By Jane Doe, Staff Writer</div><div><a href=\"/e\">Email</a> | "
	    "<a href=\"/p\">Print</a></div><h2>Where it falls</h2>");
	buf_adds(&want, "Where it falls\n");
	for (i = 0; i < 6; i++) {
		buf_adds(&page, para);
		buf_adds(&want, want_para);
		buf_addc(&want, '\n');
	}
	buf_adds(&page, "<p>Short closing line.</p><div>More news</div><div><a href=\"/1\">"
	    "Other story one</a></div><div><a href=\"/2\">Other story two</a></div>"
	    "</div><div class=\"comments-body\">");
	for (i = 0; i < 6; i++)
		buf_adds(&page, "<p>A reader's comment, which goes on at length about "
		    "the article, disagreeing with it, and with the other readers, too.</p>");
	buf_adds(&page, "</div></body></html>");
	buf_adds(&want, "Short closing line.");
	extract_same(&page, &want, "a page with edge boilerplate", "headline, "
	    "dateline, byline, tool links, the trailing heading and link list "
	    "and the comment section are left out; an opening heading and a "
	    "short last sentence stay");

	/* A hidden menu left open, the article nested inside it. */
	page.len = title.len = text.len = 0;
	buf_adds(&page, "<html><body><div id=\"submenu\" style=\"display:none\">"
	    "<div><a href=\"/x\">Menu item</a></div>");
	for (i = 0; i < 6; i++)
		buf_adds(&page, para);
	buf_adds(&page, "</body></html>");
	OK(extract_html(page.p, page.len, &title, &text, err, sizeof err, &code) == 0 &&
	    text.len > 6 * (sizeof want_para - 1) && strstr(text.p, want_para) &&
	    !strstr(text.p, "Menu item"), "a hidden node that holds most of the "
	    "page's text is kept (got %zu bytes)", text.len);
	page.len = text.len = 0;
	buf_adds(&page, "<html><body>");
	for (i = 0; i < 6; i++)
		buf_adds(&page, para);
	buf_adds(&page, "<div style=\"display:none\"><p>A hidden paragraph, long enough "
	    "to count as text, but hidden from readers all the same, so not kept.</p>"
	    "</div></body></html>");
	OK(extract_html(page.p, page.len, &title, &text, err, sizeof err, &code) == 0 &&
	    strstr(text.p, "hidden paragraph") == NULL, "a small hidden node is dropped");

	/* Sentence ends in CJK text: 。 ends one, a kana does not. */
	page.len = want.len = text.len = 0;
	buf_adds(&page, "<html><body><div>");
	for (i = 0; i < 8; i++) {
		buf_adds(&page, "<p>肉をくわえたイヌが、橋を渡っていました。ふと下を見ると、"
		    "川の中にも肉をくわえたイヌがいます。</p>");
		buf_printf(&want, "%s肉をくわえたイヌが、橋を渡っていました。ふと下を見ると、"
		    "川の中にも肉をくわえたイヌがいます。", i ? "\n" : "");
	}
	buf_adds(&page, "<p>おしまい</p></div></body></html>");
	extract_same(&page, &want, "a Japanese page", "a short closing line "
	    "without 。 is trimmed, the paragraphs that end in 。 are not");

	/*
	 * A short article beside a long table of headlines: the first try
	 * keeps the article (under 500 characters), the retries find the
	 * table, longer but no prose; the article is kept.
	 */
	page.len = want.len = text.len = 0;
	buf_adds(&page, "<html><body><div class=\"sidebar\"><table>");
	for (i = 0; i < 30; i++)
		buf_printf(&page, "<tr><td>Headline number %d of the day, with "
		    "commas, and, more, commas, here</td></tr>", i);
	buf_adds(&page, "</table></div><div class=\"article\">");
	for (i = 0; i < 3; i++) {
		buf_printf(&page, "<p>This is sentence %d of a short article, long "
		    "enough to be scored as a paragraph here.</p>", i);
		buf_printf(&want, "%sThis is sentence %d of a short article, long "
		    "enough to be scored as a paragraph here.", i ? "\n" : "", i);
	}
	buf_adds(&page, "</div></body></html>");
	extract_same(&page, &want, "a short article beside a table", "of "
	    "Readability's tries, the one with the most prose (the short "
	    "article), not the longest (the table of headlines)");
	buf_free(&page);
	buf_free(&want);
	buf_free(&title);
	buf_free(&text);
}

/* date and lang_hint: the formats, the sources and their order. */
static void
test_extract_meta(void)
{
	static const struct { const char *in, *out; } dates[] = {
		{ "2008-01-16", "2008-01-16" },
		{ " 2008-01-16T09:30:15.123+0530 ", "2008-01-16T09:30:15+05:30" },
		{ "2008-01-16T09:30Z", "2008-01-16T09:30:00Z" },
		{ "2008-01-16 09:30:00-04:00", "2008-01-16T09:30:00-04:00" },
		{ "2008/01/16", "2008-01-16" },
		{ "Wed, 16 Jan 2008 09:30:00 GMT", "2008-01-16" },
		{ "January 16, 2008", "2008-01-16" },
		{ "16 January 2008", "2008-01-16" },
		{ "2008-13-01", NULL }, { "1850-01-01", NULL }, { "yesterday", NULL },
		{ "20080116", NULL }, { "2008-01-16x", "2008-01-16" },
		{ "16 01 2008", NULL }, { "", NULL },
	};
	static const struct { const char *in, *out; } langs[] = {
		{ "en", "en" }, { "en-US", "en-us" }, { "pt_BR", "pt-br" },
		{ " de, en", "de" }, { "zh-Hant-TW", "zh-hant-tw" }, { "x-default", NULL },
		{ "english", NULL }, { "e", NULL }, { "en-", NULL }, { "12", NULL },
		{ "", NULL }, { "en-toolongsubtag", NULL },
	};
	static const struct { const char *html, *date, *lang; } pages[] = {
		{ "<html lang=\"en-GB\"><head><meta property=\"article:published_time\" "
		  "content=\"2020-05-01T10:00:00Z\"><meta name=\"date\" content=\"2019-01-01\">"
		  "<meta http-equiv=\"Content-Language\" content=\"fr\"><script type="
		  "\"application/ld+json\">{\"@type\": \"NewsArticle\", \"datePublished\" : "
		  "\"2021-02-03\", \"inLanguage\": \"de\"}</script></head><body><p>x</p>"
		  "</body></html>", "2021-02-03", "en-gb" },
		{ "<html><head><meta name=\"date\" content=\"2019-01-01\"><meta http-equiv="
		  "\"content-language\" content=\"fr, en\"><meta property=\"article:"
		  "published_time\" content=\"2020-05-01T10:00:00Z\"></head><body><p>x</p>"
		  "</body></html>", "2020-05-01T10:00:00Z", "fr" },
		{ "<html><body><p><time datetime=\"2018-01-01\">then</time> and "
		  "<time pubdate datetime=\"2018-02-02\">now</time></p><script type="
		  "\"application/ld+json\">{\"inLanguage\":\"es\"}</script></body></html>",
		  "2018-02-02", "es" },
		{ "<html><head><meta name=\"DC.date\" content=\"May 5, 2017\"></head>"
		  "<body><p><time datetime=\"2016-01-01\">x</time></p></body></html>",
		  "2017-05-05", "" },
		{ "<html lang=\"nonsense!\"><body><p><time datetime=\"soon\">x</time></p>"
		  "</body></html>", "", "" },
	};
	struct extract_meta m = { { 0 }, { 0 } };
	struct buf title = { 0 }, text = { 0 };
	char out[40], err[128];
	const char *enc;
	size_t i;
	int rc, code = 0;

	for (i = 0; i < sizeof dates / sizeof dates[0]; i++) {
		rc = extract_iso_date(dates[i].in, strlen(dates[i].in), out, sizeof out);
		OK(dates[i].out ? rc == 0 && strcmp(out, dates[i].out) == 0 : rc < 0,
		    "date '%s': %s", dates[i].in, dates[i].out ? dates[i].out : "none");
	}
	for (i = 0; i < sizeof langs / sizeof langs[0]; i++) {
		rc = extract_lang_tag(langs[i].in, strlen(langs[i].in), out, sizeof out);
		OK(langs[i].out ? rc == 0 && strcmp(out, langs[i].out) == 0 : rc < 0,
		    "language tag '%s': %s", langs[i].in, langs[i].out ? langs[i].out : "none");
	}
	for (i = 0; i < sizeof pages / sizeof pages[0]; i++) {
		title.len = text.len = 0;
		buf_adds(&m.date, "stale");
		rc = extract_page(pages[i].html, strlen(pages[i].html), NULL, &title,
		    &text, &m, &enc, err, sizeof err, &code);
		buf_addc(&m.date, '\0');
		buf_addc(&m.lang, '\0');
		OK(rc == 0 && strcmp(m.date.p, pages[i].date) == 0 &&
		    strcmp(m.lang.p, pages[i].lang) == 0, "page %zu: date '%s', "
		    "lang '%s' (got '%s', '%s')", i, pages[i].date, pages[i].lang,
		    m.date.p, m.lang.p);
		m.date.len = m.lang.len = 0;
	}
	buf_free(&m.date);
	buf_free(&m.lang);
	buf_free(&title);
	buf_free(&text);
}

/* A temporary file holding s; its name in path (a "/tmp/...XXXXXX" template). */
static void
temp_file(char *path, const char *s)
{
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		abort();
	close(fd);
}

static void
test_fetch_write(void)
{
	struct fetch_opts o = { .text_key = "text" };
	struct fetch_item it;
	struct json_rec rec;
	struct buf b = { 0 };

	json_rec_init(&rec, NULL, 0);
	memset(&it, 0, sizeof it);
	it.url = "http://a.example/x";
	it.job.final_url = "http://a.example/x?y";
	it.job.status = 200;
	it.job.fetched_at = 86400 * 365;
	buf_adds(&it.title, "T \"q\"");
	buf_adds(&it.text, "line\nline2");
	it.enc = "UTF-8";
	it.bytes = 1234;
	fetch_write_page(&o, &it, &rec, &b);
	buf_addc(&b, '\0');
	SAMES(b.p, "{\"url\":\"http://a.example/x\",\"title\":\"T \\\"q\\\"\","
	    "\"text\":\"line\\nline2\",\"final_url\":\"http://a.example/x?y\","
	    "\"http_status\":200,\"fetched_at\":\"1971-01-01T00:00:00Z\","
	    "\"charset\":\"UTF-8\",\"bytes\":1234}\n",
	    "fetch_write_page: a plain URL's record");

	/* An input record: its members kept, title replaced in place. */
	b.len = 0;
	it.line = "{\"title\":\"old\",\"url\":\"http://a.example/x\",\"n\":[1, 2]}";
	it.len = strlen(it.line);
	buf_adds(&it.meta.date, "2008-01-16");
	buf_adds(&it.meta.lang, "en");
	it.file = "d/0.html.gz";
	o.text_key = "body";
	fetch_write_page(&o, &it, &rec, &b);
	buf_addc(&b, '\0');
	SAMES(b.p, "{\"title\":\"T \\\"q\\\"\",\"url\":\"http://a.example/x\","
	    "\"n\":[1, 2],\"body\":\"line\\nline2\",\"date\":\"2008-01-16\","
	    "\"lang_hint\":\"en\",\"final_url\":\"http://a.example/x?y\","
	    "\"http_status\":200,\"fetched_at\":\"1971-01-01T00:00:00Z\","
	    "\"charset\":\"UTF-8\",\"bytes\":1234,\"file\":\"d/0.html.gz\"}\n",
	    "fetch_write_page: an input record with the page's members");

	b.len = 0;
	o.extract = 1;
	fetch_write_page(&o, &it, &rec, &b);
	buf_addc(&b, '\0');
	SAMES(b.p, "{\"title\":\"T \\\"q\\\"\",\"url\":\"http://a.example/x\","
	    "\"n\":[1, 2],\"body\":\"line\\nline2\",\"date\":\"2008-01-16\","
	    "\"lang_hint\":\"en\",\"charset\":\"UTF-8\",\"bytes\":1234}\n",
	    "fetch_write_page: --extract, no fetch members");

	b.len = 0;
	o.extract = 0;
	it.job.ms = 12.4;
	it.job.content_type = "text/html";
	fetch_write_log(&o, &it, CR_OK, &b);
	buf_addc(&b, '\0');
	SAMES(b.p, "{\"url\":\"http://a.example/x\",\"outcome\":\"ok\","
	    "\"http_status\":200,\"error\":null,\"bytes\":1234,\"ms\":12,"
	    "\"final_url\":\"http://a.example/x?y\",\"content_type\":\"text/html\","
	    "\"fetched_at\":\"1971-01-01T00:00:00Z\",\"file\":\"d/0.html.gz\"}\n",
	    "fetch_write_log: ok");

	b.len = 0;
	memset(&it.job, 0, sizeof it.job);
	it.job.status = 404;
	it.job.ms = 7.5;
	snprintf(it.job.error, sizeof it.job.error, "HTTP 404");
	it.file = NULL;
	it.bytes = 0;
	fetch_write_log(&o, &it, CR_HTTP, &b);
	buf_addc(&b, '\0');
	SAMES(b.p, "{\"url\":\"http://a.example/x\",\"outcome\":\"http\","
	    "\"http_status\":404,\"error\":\"HTTP 404\",\"bytes\":0,\"ms\":8}\n",
	    "fetch_write_log: an outcome with its error, unknown members left out");
	buf_free(&it.title);
	buf_free(&it.text);
	buf_free(&it.meta.date);
	buf_free(&it.meta.lang);
	buf_free(&b);
	json_rec_free(&rec);
}

static void
test_fetch_resume(void)
{
	char path[] = "/tmp/owt-unit-log.XXXXXX", err[256], got[256];
	struct urlset set = { 0 };
	int code = 0, fd;
	ssize_t n;

	temp_file(path, "{\"url\":\"http://a.example/1\",\"outcome\":\"ok\"}\n"
	    "{\"outcome\":\"http\",\"url\":\"http://a.example/2\"}\n"
	    "{\"url\":\"http://a.example/3\",\"outc");
	OK(fetch_resume_load(&set, path, err, sizeof err, &code) == 0,
	    "fetch_resume_load: a log with a torn last line");
	OK(urlset_has(&set, "http://a.example/1", 18) &&
	    urlset_has(&set, "http://a.example/2", 18) &&
	    !urlset_has(&set, "http://a.example/3", 18),
	    "fetch_resume_load: the whole lines' URLs, not the torn one's");
	fd = open(path, O_RDONLY);
	n = read(fd, got, sizeof got);
	close(fd);
	OK(n == 90 && got[n - 1] == '\n',
	    "fetch_resume_load: the torn line cut off the file (%zd bytes)", n);
	urlset_free(&set);
	unlink(path);

	OK(fetch_resume_load(&set, "/nonexistent/log", err, sizeof err,
	    &code) < 0 && code == XDATA, "fetch_resume_load: a missing log: XDATA");
	SAMES(err, "cannot open '/nonexistent/log': No such file or directory",
	    "fetch_resume_load: its message");
	urlset_free(&set);
}

static void
test_fetch_items(void)
{
	char in[] = "/tmp/owt-unit-in.XXXXXX", log[] = "/tmp/owt-unit-log.XXXXXX";
	char *paths[1] = { in }, err[1024], want[1200];
	struct fetch_opts o = { .text_key = "text", .shard = { 0, 1 } };
	volatile sig_atomic_t stop = 0;
	struct fetch_item *it;
	struct fetch f;
	int code = 0;

	temp_file(in, "  http://a.example/1 \t\r\n"
	    "\n"
	    "{\"url\":\"HTTP://A.example:80/2#x\",\"k\":1}\n"
	    "{\"nourl\":1}\n"
	    "{bad\n"
	    "http://a.example/p.jpg\n");
	OK(fetch_open(&f, &o, paths, 1, stdout, &stop, err, sizeof err,
	    &code) == 0, "fetch_open");
	it = fetch_item_next(&f);
	OK(it != NULL && strcmp(it->url, "http://a.example/1") == 0 &&
	    it->line == NULL && it->seq == 0, "fetch_item_next: a URL, trimmed");
	OK(it != NULL && fetch_filter(&f, it) == 0 && it->job.url == it->url,
	    "fetch_filter: kept, its own normal form");
	it = fetch_item_next(&f);
	OK(it != NULL && strcmp(it->url, "HTTP://A.example:80/2#x") == 0 &&
	    it->len == 39 && strncmp(it->line, "{\"url\"", 6) == 0 &&
	    it->seq == 1, "fetch_item_next: a record, the blank line skipped");
	OK(it != NULL && fetch_filter(&f, it) == 0 &&
	    strcmp(it->job.url, "http://a.example/2") == 0,
	    "fetch_filter: the normal form fetched");
	it = fetch_item_next(&f);
	snprintf(want, sizeof want, "%s:4: missing 'url' field", in);
	OK(it != NULL && it->url == NULL && it->bad == XDATA &&
	    it->reason == BAD_FIELD, "fetch_item_next: no url, a bad item");
	SAMES(it && it->msg ? it->msg : "", want, "fetch_item_next: its message");
	it = fetch_item_next(&f);
	OK(it != NULL && it->url == NULL && it->reason == BAD_JSON,
	    "fetch_item_next: invalid JSON, a bad item");
	snprintf(want, sizeof want, "%s:5: invalid JSON", in);
	OK(it != NULL && it->msg && strncmp(it->msg, want, strlen(want)) == 0,
	    "fetch_item_next: its message ('%s')", it && it->msg ? it->msg : "");
	it = fetch_item_next(&f);
	OK(it != NULL && fetch_filter(&f, it) == 1 &&
	    it->job.outcome == CR_FILTERED &&
	    strcmp(it->job.error, "extension") == 0,
	    "fetch_filter: filtered, its reason");
	OK(fetch_item_next(&f) == NULL && f.nread == 5,
	    "fetch_item_next: NULL at the end");
	fetch_free(&f);
	OK(f.live == NULL, "fetch_free: every item freed");

	/* --shard 1/2 counts blank lines; --resume skips a logged URL. */
	temp_file(log, "{\"url\":\"http://a.example/p.jpg\"}\n");
	o.shard[0] = 1;
	o.shard[1] = 2;
	o.resume = log;
	OK(fetch_open(&f, &o, paths, 1, stdout, &stop, err, sizeof err,
	    &code) == 0, "fetch_open, --shard 1/2 --resume");
	it = fetch_item_next(&f);
	OK(it != NULL && it->url == NULL && it->reason == BAD_FIELD,
	    "fetch_item_next, shard 1/2: lines 1 (blank), 3 and 5");
	OK(fetch_item_next(&f) == NULL && f.nresumed == 1,
	    "fetch_item_next: the logged URL skipped");
	fetch_free(&f);

	o.resume = NULL;
	o.shard[0] = 0;
	o.shard[1] = 1;
	stop = 1;
	OK(fetch_open(&f, &o, paths, 1, stdout, &stop, err, sizeof err,
	    &code) == 0 && fetch_item_next(&f) == NULL,
	    "fetch_item_next: nothing once the stop flag is set");
	fetch_free(&f);
	unlink(in);
	unlink(log);
}

int
main(void)
{
	test_charset();
	test_urlfilter();
	test_normalize();
	test_robots();
	test_private();
	test_extract();
	test_extract_clean();
	test_extract_meta();
	test_escape();
	test_fetch_write();
	test_fetch_resume();
	test_fetch_items();
	return unit_done();
}
