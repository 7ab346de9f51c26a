/* unit-warc.c - lib/warc.c's pure functions: WARC headers, HTTP heads, chunks, codings, sniffing, a record's end; warc_index.c's rows */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>

#include "unit.h"
#include "web/warc.h"
#include "web/warc_index.h"

static void
test_head(void)
{
	char h1[] = "WARC/1.1\r\nWARC-Type: Response\r\n"
	    "WARC-Target-URI: <http://a.test/x>\r\nWARC-Date: 2026-01-02T03:04:05.123Z\r\n"
	    "X-Folded: a\r\n b\r\nContent-Length:  42 \r\n\r\nBODY";
	char h2[] = "WARC/1.0\nWARC-Type: frobnicate\nContent-Length: 0\n\n";
	char h3[] = "WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: 4x\r\n\r\n";
	char h4[] = "WARC/1.0\r\nContent-Length: 1\r\n\r\n";
	char h5[] = "WARC/1.0\r\nWARC-Type: resource\r\nno colon\r\n\r\n";
	char h6[] = "HTTP/1.1 200 OK\r\n\r\n";
	char err[256];
	struct warc_head h;
	size_t n;

	n = warc_head_end(h1, strlen(h1));
	OK(n == strlen(h1) - 4, "warc_head_end: through the empty line");
	OK(warc_head_end(h1, 20) == 0, "warc_head_end: 0 before it");
	OK(warc_head_parse(h1, n, &h, err, sizeof err) == 0 &&
	    h.type == WARC_RESPONSE && h.length == 42,
	    "a 1.1 header: type without case, Content-Length trimmed");
	SAMES(h.target, "http://a.test/x", "the target URI without <>");
	SAMES(h.date, "2026-01-02T03:04:05.123Z", "WARC-Date as written");
	OK(warc_head_parse(h2, strlen(h2), &h, err, sizeof err) == 0 &&
	    h.type == WARC_OTHER && h.target == NULL,
	    "LF line ends; an unknown type is 'other'");
	OK(warc_head_parse(h3, strlen(h3), &h, err, sizeof err) < 0, "4x: refused");
	SAMES(err, "bad Content-Length '4x'", "and named");
	OK(warc_head_parse(h4, strlen(h4), &h, err, sizeof err) < 0, "no WARC-Type");
	SAMES(err, "WARC header without WARC-Type", "is an error");
	OK(warc_head_parse(h5, strlen(h5), &h, err, sizeof err) < 0, "a line without ':'");
	SAMES(err, "WARC header line without ':'", "is an error");
	OK(warc_head_parse(h6, strlen(h6), &h, err, sizeof err) < 0, "HTTP is not WARC");
	SAMES(err, "no WARC record here", "and says so");
}

static void
test_http(void)
{
	const char *a = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=x\r\n"
	    "Transfer-Encoding: gzip, Chunked\r\nContent-Encoding: br\r\n\r\nBODY";
	const char *cc = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n\r\nBODY";
	const char *keep = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n\r\nBODY";
	const char *bad = "HTTP/1.1 2x0 OK\r\n\r\n";
	struct warc_http h;
	char err[256];

	OK(warc_http_parse(a, strlen(a), &h, err, sizeof err) == 0 &&
	    h.status == 200 && h.chunked && h.coding == WARC_CE_BR &&
	    strcmp(a + h.body, "BODY") == 0, "status, chunked, br, the body");
	SAME(h.ctype, h.ctype_len, "text/html; charset=x", 20, "the Content-Type");
	OK(warc_http_parse(cc, strlen(cc), &h, err, sizeof err) == 0 &&
	    strcmp(cc + h.body, "BODY") == 0,
	    "Common Crawl 2018: the CRLF Content-Length does not count is left out");
	OK(warc_http_parse(keep, strlen(keep), &h, err, sizeof err) == 0 &&
	    strcmp(keep + h.body, "\r\nBODY") == 0,
	    "a CRLF that Content-Length counts is payload");
	OK(warc_http_parse(bad, strlen(bad), &h, err, sizeof err) < 0,
	    "a bad status line");
	SAMES(err, "bad HTTP status line", "is named");
	OK(warc_http_parse(a, 30, &h, err, sizeof err) < 0, "a head cut short");
	SAMES(err, "HTTP header not ended", "is named");
}

static void
test_chunks(void)
{
	char a[] = "4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nT: 1\r\n\r\n";
	char b[] = "A\r\nshort\r\n";
	char c[] = "zz\r\n";
	char d[] = "1234567890abcdef0\r\n";
	char err[256];
	size_t n = strlen(a);

	OK(warc_dechunk(a, &n, err, sizeof err) == 0, "chunks with an extension and a trailer");
	SAME(a, n, "Wikipedia in\r\n\r\nchunks.", 23, "are joined");
	n = strlen(b);
	OK(warc_dechunk(b, &n, err, sizeof err) < 0, "a chunk past the end");
	SAMES(err, "chunk of 10 bytes past the end", "is named");
	n = strlen(c);
	OK(warc_dechunk(c, &n, err, sizeof err) < 0, "no hex size");
	SAMES(err, "bad chunk size", "is named");
	n = strlen(d);
	OK(warc_dechunk(d, &n, err, sizeof err) < 0, "a size of 17 hex digits");
}

static void
test_decode(void)
{
	char page[3000], err[256];
	unsigned char z[4000];
	struct buf out = { 0 };
	z_stream s;
	size_t i, zn;

	for (i = 0; i < sizeof page; i++)
		page[i] = "abcdefgh <p>"[i % 12];
	memset(&s, 0, sizeof s);
	deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	s.next_in = (unsigned char *)page;
	s.avail_in = sizeof page;
	s.next_out = z;
	s.avail_out = sizeof z;
	deflate(&s, Z_FINISH);
	zn = sizeof z - s.avail_out;
	deflateEnd(&s);
	OK(warc_decode(WARC_CE_GZIP, (char *)z, zn, 1 << 20, &out, err,
	    sizeof err) == 0, "gzip");
	SAME(out.p, out.len, page, sizeof page, "decodes to the page");
	OK(warc_decode(WARC_CE_GZIP, (char *)z, zn, 1000, &out, err,
	    sizeof err) == 1 && out.len == 1000, "over max: 1, max bytes kept");
	OK(warc_decode(WARC_CE_GZIP, (char *)z, zn - 10, 1 << 20, &out, err,
	    sizeof err) < 0, "truncated gzip");
	SAMES(err, "corrupt gzip payload: truncated", "is named");
	OK(warc_decode(WARC_CE_DEFLATE, (char *)z + 10, zn - 18, 1 << 20, &out,
	    err, sizeof err) == 0 && out.len == sizeof page,
	    "raw deflate, after zlib's header check fails");
	OK(warc_decode(WARC_CE_GZIP, page, 100, 1 << 20, &out, err,
	    sizeof err) == 0 && out.len == 100 && memcmp(out.p, page, 100) == 0,
	    "gzip declared, not gzip: the bytes as they are");
	zn = ZSTD_compress(z, sizeof z, page, sizeof page, 3);
	OK(warc_decode(WARC_CE_ZSTD, (char *)z, zn, 1 << 20, &out, err,
	    sizeof err) == 0 && out.len == sizeof page &&
	    memcmp(out.p, page, sizeof page) == 0, "zstd");
	OK(warc_decode(WARC_CE_BR, "\xff\xff\xff", 3, 1 << 20, &out, err,
	    sizeof err) < 0 && strncmp(err, "corrupt br payload: ", 20) == 0,
	    "corrupt br is named");
	OK(warc_decode(WARC_CE_OTHER, page, 10, 1 << 20, &out, err,
	    sizeof err) < 0, "an unknown coding");
	SAMES(err, "unknown content coding", "is named");
	buf_free(&out);
}

static void
test_sniff(void)
{
	const char *w = "WARC/1.0\r\n";
	unsigned char z[256];
	size_t zn;
	z_stream s;

	OK(warc_sniff(w, strlen(w)), "plain WARC");
	OK(!warc_sniff("WARX/1.0", 8), "not WARC");
	OK(!warc_sniff("WAR", 3), "too short");
	OK(warc_sniff("\x5d\x2a\x4d\x18", 4), "the warc-zstd dictionary frame");
	zn = ZSTD_compress(z, sizeof z, w, strlen(w), 1);
	OK(warc_sniff(z, zn), "zstd");
	memset(&s, 0, sizeof s);
	deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	s.next_in = (unsigned char *)w;
	s.avail_in = (uInt)strlen(w);
	s.next_out = z;
	s.avail_out = sizeof z;
	deflate(&s, Z_FINISH);
	zn = sizeof z - s.avail_out;
	deflateEnd(&s);
	OK(warc_sniff(z, zn), "gzip");
	OK(!warc_sniff(z, 5), "gzip cut before WARC/");
}

/* gzip of p[0..n) as one member into z (size zs): its length. */
static size_t
gz(const char *p, size_t n, unsigned char *z, size_t zs)
{
	z_stream s;
	size_t k;

	memset(&s, 0, sizeof s);
	deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	s.next_in = (unsigned char *)p;
	s.avail_in = (uInt)n;
	s.next_out = z;
	s.avail_out = (uInt)zs;
	deflate(&s, Z_FINISH);
	k = zs - s.avail_out;
	deflateEnd(&s);
	return k;
}

static void
test_end(void)
{
	static const char rec[] = "WARC/1.1\r\nWARC-Type: resource\r\n"
	    "Content-Length: 5\r\n\r\nhello\r\n\r\n";
	unsigned char z[1024], big[4096];
	struct warc_end e;
	char err[256];
	size_t zn, n, i, at = 0;
	int k = 0;

	/* Two members: the first ends where its bytes end, byte by byte. */
	zn = gz(rec, sizeof rec - 1, z, sizeof z);
	memcpy(big, z, zn);
	memcpy(big + zn, z, zn);
	warc_end_init(&e);
	for (n = 1; n <= 2 * zn && k == 0; n++)
		if ((k = warc_end_feed(&e, big, n, err, sizeof err)) != 0)
			at = n;
	OK(k == 1 && at == zn, "gzip: the first member ends at %zu (of %zu)",
	    at, zn);
	warc_end_free(&e);
	/* A shorter stream is a new try. */
	warc_end_init(&e);
	k = warc_end_feed(&e, big, zn - 3, err, sizeof err);
	OK(k == 0, "gzip: not yet");
	k = warc_end_feed(&e, big, 10, err, sizeof err);
	k = warc_end_feed(&e, big, zn + 7, err, sizeof err);
	OK(k == 1, "gzip: a shorter stream, then a longer one: ended");
	warc_end_free(&e);
	/* Plain: the header, the block and CRLF CRLF. */
	n = sizeof rec - 1;
	warc_end_init(&e);
	for (i = 1, k = 0; i <= n && k == 0; i++)
		if ((k = warc_end_feed(&e, (const unsigned char *)rec, i, err,
		    sizeof err)) != 0)
			at = i;
	OK(k == 1 && at == n, "plain: the record ends at %zu (of %zu)", at, n);
	warc_end_free(&e);
	warc_end_init(&e);
	k = warc_end_feed(&e, (const unsigned char *)"<html>", 6, err, sizeof err);
	OK(k == -1, "not a record");
	SAMES(err, "no WARC record here", "is named");
	memcpy(big, "\x28\xb5\x2f\xfd\0\0", 6);
	k = warc_end_feed(&e, big, 6, err, sizeof err);
	SAMES(err, "a zstd record needs its length", "zstd: no end to find");
	memcpy(z, "\x1f\x8b\x08\0\0\0\0\0\0\0\xff\xff\xff", 13);
	warc_end_free(&e);
	warc_end_init(&e);
	k = warc_end_feed(&e, z, 13, err, sizeof err);
	OK(k == -1 && strncmp(err, "corrupt gzip data", 17) == 0,
	    "corrupt gzip: %s", err);
	warc_end_free(&e);
}

/* Parse line as a row of x: 0 or -1 (err). */
static int
row(struct warc_index *x, const char *line, struct warc_index_row *r,
    char *err)
{
	static char b[1024];

	snprintf(b, sizeof b, "%s", line);
	return warc_index_row(x, b, strlen(b), r, err, 256);
}

static void
test_index(void)
{
	struct warc_index x;
	struct warc_index_row r;
	char err[256];
	const char *h;

	warc_index_init(&x);
	OK(row(&x, "com,example)/ 20240801 http://example.com/ text/html 200 "
	    "D - - 1234 5678 crawl-data/a.warc.gz", &r, err) == 0 &&
	    strcmp(r.url, "http://example.com/") == 0 &&
	    strcmp(r.file, "crawl-data/a.warc.gz") == 0 && r.offset == 5678 &&
	    r.length == 1234, "Common Crawl's 11 columns, no header");
	OK(row(&x, "k 2024 http://e.test/ text/html 200 D - 99 f.warc.gz", &r,
	    err) == 0 && r.offset == 99 && r.length == -1 &&
	    strcmp(r.file, "f.warc.gz") == 0, "the older 9, no length");
	OK(row(&x, "a b c", &r, err) == -1, "3 fields, no header: bad");
	SAMES(err, "3 fields: not CDX (11 or 9 fields, or a ' CDX' header "
	    "line first), CDXJ or JSON", "is named");
	h = " CDX a b a m s k r M V g u";
	OK(warc_index_header(&x, h, strlen(h), err, sizeof err) == 1,
	    "wget's header line");
	OK(row(&x, "http://e.test/ 2024 http://e.test/ text/html 200 D - - 42 "
	    "site.warc.gz <urn:uuid:1>", &r, err) == 0 && r.offset == 42 &&
	    r.length == -1 && strcmp(r.file, "site.warc.gz") == 0 &&
	    strcmp(r.url, "http://e.test/") == 0, "wget's row: V, g, a");
	OK(row(&x, "- 2024 http://e.test/ text/html 200 D - - 42 "
	    "site.warc.gz <urn:uuid:1>", &r, err) == 0 && r.url[0] == '\0',
	    "a URL of '-' is none");
	OK(row(&x, "a b c d", &r, err) == -1, "shorter than the header: bad");
	SAMES(err, "4 fields, the CDX header has more", "is named");
	h = "CDX N b a S V g";
	OK(warc_index_header(&x, h, strlen(h), err, sizeof err) == 1 &&
	    row(&x, "k 1 http://e.test/ 10 20 f.gz", &r, err) == 0 &&
	    r.length == 10 && r.offset == 20, "a header of our own order, with S");
	h = " CDX a b";
	OK(warc_index_header(&x, h, strlen(h), err, sizeof err) == -1,
	    "a header without g or V");
	h = " CDXX a b";
	OK(warc_index_header(&x, h, strlen(h), err, sizeof err) == 0,
	    "not a header: CDXX");
	warc_index_reset(&x);
	OK(row(&x, "com,e)/ 2024 {\"url\": \"http://e.test/\", \"length\": "
	    "\"7\", \"offset\": \"8\", \"filename\": \"f.warc.gz\"}", &r,
	    err) == 0 && r.length == 7 && r.offset == 8 &&
	    strcmp(r.url, "http://e.test/") == 0, "CDXJ, strings");
	OK(row(&x, "{\"offset\": 8, \"length\": 7, \"filename\": \"f\"}",
	    &r, err) == 0 && r.length == 7 && r.offset == 8 && r.url[0] == '\0',
	    "JSON, numbers, no url");
	OK(row(&x, "{\"offset\": 8, \"filename\": \"f\"}", &r, err) == 0 &&
	    r.length == -1, "JSON without length");
	OK(row(&x, "{\"offset\": 8.5, \"filename\": \"f\"}", &r, err) == -1,
	    "a fractional offset");
	SAMES(err, "bad 'offset' field", "is named");
	OK(row(&x, "{\"offset\": 8, \"length\": 0, \"filename\": \"f\"}", &r,
	    err) == -1, "a length of 0");
	OK(row(&x, "{\"offset\": \"99999999999999999999\", \"filename\": "
	    "\"f\"}", &r, err) == -1, "an offset past 2^62");
	OK(row(&x, "{\"offset\": 1, \"filename\": 3}", &r, err) == -1,
	    "a file name that is no string");
	SAMES(err, "not a string 'filename' field", "is named");
	OK(row(&x, "{\"offset\": 1", &r, err) == -1, "bad JSON");
	warc_index_free(&x);
}

int
main(void)
{
	test_end();
	test_index();
	test_head();
	test_http();
	test_chunks();
	test_decode();
	test_sniff();
	return unit_done();
}
