/* urlfilter.c - OpenWebText's URL filter: length, form, scheme, domain, extension, repeats */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <idn2.h>
#include <libpsl.h>

#include "core/input.h"
#include "web/urlfilter.h"

const char *const urlfilter_reason[URL_NREASONS] = {
	"ok", "short", "malformed", "scheme", "domain", "extension", "repeat"
};

/* Megatron-LM tools/openwebtext/blacklist_urls.py, sorted. */
const char *const urlfilter_domains[] = {
	"500px", "aapks", "akamaihd", "amazon", "apple", "artifactfire",
	"artstation", "awwni", "bandcamp", "battleforthenet", "coinscalendar",
	"dailymotion", "deviantart", "discord", "discordapp", "dlapkandroid",
	"dropbox", "e621", "ebay", "edealinfo", "erome", "eroshare", "explosm",
	"facebook", "fbcdn", "flickr", "furaffinity", "futhead", "gatopardo",
	"gfycat", "gifsound", "gifsoup", "giphy", "github", "google", "gunprime",
	"gyazo", "horsefucker", "hotdealstar", "imagefap", "imageshack",
	"imgflip", "imgur", "instagram", "karmadecay", "kryptocal", "kym-cdn",
	"liveleak", "livememe", "lmgtfy", "magaimg", "memegenerator",
	"minorplanetcenter", "minus", "mobafire", "morejpeg", "nocookie",
	"pcpartpicker", "photobucket", "pinimg", "pinterest", "pixiv", "pornhub",
	"prntscr", "puu", "qkme", "quickmeme", "radd", "redd", "reddit",
	"reddit-stream", "redditlog", "redditmedia", "reddituploads", "redtube",
	"reupp", "reverb", "roanoke", "rollingstone", "sli", "soundcloud",
	"soundgasm", "spankbang", "spotify", "strawpoll", "streamable",
	"timeanddate", "tinypic", "touhouradio", "tumblr", "twimg", "twitch",
	"twitter", "vid", "vimeo", "vine", "vkaao", "vocaroo", "voyagefusion",
	"walmart", "wciu", "wikimedia", "wikipedia", "xhamster", "xkcd",
	"xvideos", "youtu", "youtube", "youtubedoubler", "ytimg", "zillexplorer",
	NULL
};

/* The same script's extensions, with its missing comma (".7z" ".ai") fixed. */
const char *const urlfilter_extensions[] = {
	".3gp", ".7z", ".ai", ".aif", ".apk", ".app", ".avi", ".bin", ".bmp",
	".bz2", ".css", ".csv", ".dat", ".deb", ".dmg", ".doc", ".docx", ".exe",
	".gif", ".gifv", ".gz", ".iso", ".jar", ".jpeg", ".jpg", ".js", ".log",
	".mid", ".midi", ".mkv", ".mov", ".mp3", ".mp4", ".mpeg", ".mpg", ".ogg",
	".ogv", ".otf", ".pdf", ".pkg", ".png", ".pps", ".ppt", ".pptx", ".psd",
	".py", ".qt", ".ram", ".rar", ".sql", ".svg", ".swf", ".tar", ".tar.gz", ".tgz",
	".tiff", ".ttf", ".txt", ".wav", ".webm", ".wma", ".wmv", ".xls",
	".xlsx", ".xml", ".xz", ".zip", NULL
};

static int
cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
in_sorted(const char *const *v, size_t n, const char *s)
{
	return n > 0 && bsearch(&s, v, n, sizeof *v, cmpstr) != NULL;
}

static size_t
count(const char *const *v)
{
	size_t n = 0;

	while (v[n])
		n++;
	return n;
}

int
urlfilter_init(struct urlfilter *f, const char *file, char *err,
    size_t errsize, int *code)
{
	struct input in;
	char *line;
	size_t len, cap = 0;
	int k;

	memset(f, 0, sizeof *f);
	if ((f->psl = psl_latest(NULL)) == NULL &&
	    (f->psl = (psl_ctx_t *)psl_builtin()) == NULL)
		return owt_fail(err, errsize, code, XSYS,
		    "cannot load the Public Suffix List");
	if (file == NULL)
		return 0;
	if (input_open(&in, file) < 0) {
		urlfilter_free(f);
		return owt_fail(err, errsize, code, in.errcode, "%s", in.err);
	}
	while ((k = input_line(&in, &line, &len)) > 0) {
		char *s = line, *e;

		if ((e = strchr(s, '#')) != NULL)
			*e = '\0';
		while (isspace((unsigned char)*s))
			s++;
		for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]); e--)
			;
		*e = '\0';
		if (*s == '\0')
			continue;
		for (e = s; *e; e++) {
			*e = tolower((unsigned char)*e);
			if (!isalnum((unsigned char)*e) && *e != '-' && *e != '.' &&
			    *e != '_') {
				owt_fail(err, errsize, code, XDATA,
				    "%s:%lu: '%s' is not a domain name",
				    in.name, in.lineno, s);
				input_close(&in);
				urlfilter_free(f);
				return -1;
			}
		}
		f->extra = xgrow(f->extra, &cap, f->nextra + 1, sizeof *f->extra);
		f->extra[f->nextra++] = xstrdup(*s == '.' ? s + 1 : s);
	}
	if (k < 0) {
		owt_fail(err, errsize, code, in.errcode, "%s", in.err);
		input_close(&in);
		urlfilter_free(f);
		return -1;
	}
	input_close(&in);
	qsort(f->extra, f->nextra, sizeof *f->extra, cmpstr);
	return 0;
}

void
urlfilter_free(struct urlfilter *f)
{
	size_t i;

	if (f->psl)
		psl_free(f->psl);
	for (i = 0; i < f->nextra; i++)
		free(f->extra[i]);
	free(f->extra);
	urlset_free(&f->seen);
	memset(f, 0, sizeof *f);
}

/*
 * Is s[0..n) a host name or an IPv4 address? Labels are letters, digits,
 * inner hyphens and underscores: no DNS rule forbids '_', and hosts such
 * as my_blog.example.com exist and resolve.
 */
static int
good_host(const char *s, size_t n)
{
	size_t i, lab = 0, nlab = 0;

	if (n > 0 && s[n - 1] == '.')
		n--;
	if (n == 0 || n > 253)
		return 0;
	if (n >= 2 && s[0] == '[')
		return s[n - 1] == ']' && strspn(s + 1, "0123456789abcdefABCDEF:.") >= n - 2;
	for (i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			if (lab == 0 || lab > 63 || s[i - 1] == '-')
				return 0;
			nlab++;
			lab = 0;
		} else if (isalnum((unsigned char)s[i]) || s[i] == '_' ||
		    (s[i] == '-' && lab > 0)) {
			lab++;
		} else {
			return 0;
		}
	}
	return nlab >= 2 || (n == 9 && strncasecmp(s, "localhost", 9) == 0);
}

int
urlfilter_host(const char *url, size_t len, char *host, size_t size)
{
	const char *s = memchr(url, ':', len), *e, *end = url + len, *h;
	size_t n;

	if (s == NULL || end - s < 3 || s[1] != '/' || s[2] != '/')
		return -1;
	h = s + 3;
	for (e = h; e < end && *e != '/' && *e != '?' && *e != '#'; e++)
		;
	if (memchr(h, '@', e - h))
		return -1;
	/* Drop the port (not inside an IPv6 literal). */
	for (s = e; s > h && isdigit((unsigned char)s[-1]); s--)
		;
	if (s > h && s[-1] == ':' && s < e && (s - 1 == h || s[-2] != ':'))
		e = s - 1;
	else if (s > h && s[-1] == ':' && s == e)
		e = s - 1;
	n = e - h;
	if (n == 0 || n >= size)
		return -1;
	for (s = h; s < e; s++)
		host[s - h] = tolower((unsigned char)*s);
	host[n] = '\0';
	if (n > 1 && host[n - 1] == '.')
		host[--n] = '\0';
	return n;
}

/*
 * An internationalized host name (UTF-8, lower-cased ASCII) to its ASCII
 * form in place, as curl looks it up: IDNA2008 with the UTS #46 mapping,
 * non-transitional, else transitional. 0, or -1 when it is not a valid
 * name (invalid UTF-8, a disallowed code point) or does not fit.
 */
static int
idn_host(char *host, size_t size)
{
	char *a = NULL;
	int rc;

	rc = idn2_lookup_u8((const uint8_t *)host, (uint8_t **)&a,
	    IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
	if (rc == IDN2_DISALLOWED)
		rc = idn2_lookup_u8((const uint8_t *)host, (uint8_t **)&a,
		    IDN2_NFC_INPUT | IDN2_TRANSITIONAL);
	if (rc != IDN2_OK || strlen(a) >= size) {
		idn2_free(a);
		return -1;
	}
	memcpy(host, a, strlen(a) + 1);
	idn2_free(a);
	return 0;
}

int
urlfilter_domain_label(void *psl, const char *host, char *label, size_t size)
{
	const char *reg = psl_registrable_domain(psl, host);
	size_t n;

	if (reg == NULL)
		return -1;
	n = strcspn(reg, ".");
	if (n >= size)
		return -1;
	memcpy(label, reg, n);
	label[n] = '\0';
	return 0;
}

static int
blacklisted(struct urlfilter *f, const char *host)
{
	char label[256];
	const char *s;

	if (urlfilter_domain_label(f->psl, host, label, sizeof label) == 0 &&
	    (in_sorted(urlfilter_domains, count(urlfilter_domains), label) ||
	    in_sorted((const char *const *)f->extra, f->nextra, label)))
		return 1;
	for (s = host; s; s = strchr(s, '.') ? strchr(s, '.') + 1 : NULL)
		if (strchr(s, '.') && in_sorted((const char *const *)f->extra,
		    f->nextra, s))
			return 1;
	return 0;
}

static int
bad_extension(const char *path, size_t n)
{
	const char *const *e;
	char tail[8];
	size_t i, k;

	k = n < sizeof tail - 1 ? n : sizeof tail - 1;
	for (i = 0; i < k; i++)
		tail[i] = tolower((unsigned char)path[n - k + i]);
	tail[k] = '\0';
	for (e = urlfilter_extensions; *e; e++) {
		size_t el = strlen(*e);

		if (el <= k && strcmp(tail + k - el, *e) == 0)
			return 1;
	}
	return 0;
}

/*
 * Split the authority of an http(s) URL whose scheme ends at colon: *end
 * gets its end; host the host, lower-cased, in ASCII (an internationalized
 * name in its punycode form, a final dot dropped: *dot says there was
 * one); *port the port, 0 for none. URL_OK, or URL_MALFORMED for
 * credentials, a bad port or a host that is not a name or an address.
 */
static int
split_url(const char *url, size_t len, const char *colon, const char **end,
    char *host, size_t size, long *port, int *dot)
{
	const char *h = colon + 3, *e, *p, *stop = url + len;
	size_t i, n;
	int ascii = 1;

	if (urlfilter_host(url, len, host, size) < 0)
		return URL_MALFORMED;
	for (e = h; e < stop && *e != '/' && *e != '?' && *e != '#'; e++)
		;
	*end = e;
	n = strlen(host);
	p = h + n;
	*dot = p < e && *p == '.';
	p += *dot;
	*port = 0;
	if (p < e) {
		/* A port: digits, 1..65535. */
		char *q;

		if (*p != ':' || p + 1 == e)
			return URL_MALFORMED;
		errno = 0;
		*port = strtol(p + 1, &q, 10);
		if (q != e || *port < 1 || *port > 65535)
			return URL_MALFORMED;
	}
	for (i = 0; i < n; i++)
		ascii &= (unsigned char)host[i] < 0x80;
	if (!ascii && idn_host(host, size) < 0)
		return URL_MALFORMED;
	if (!good_host(host, strlen(host)))
		return URL_MALFORMED;
	return URL_OK;
}

/* The normal form of a URL split by split_url, into out. */
static void
normal_form(const char *url, size_t len, const char *colon, const char *e,
    const char *host, long port, int dot, struct buf *out)
{
	const char *p, *end = url + len;
	int https = colon - url == 5;

	out->len = 0;
	buf_adds(out, https ? "https://" : "http://");
	buf_adds(out, host);
	if (dot)
		buf_addc(out, '.');
	if (port != 0 && port != (https ? 443 : 80))
		buf_printf(out, ":%ld", port);
	for (p = e; p < end && *p != '#'; p++)
		;
	if (e == p || *e != '/')
		buf_addc(out, '/');
	buf_add(out, e, p - e);
}

/* Is the scheme url[0..colon) http or https, in any case? */
static int
http_scheme(const char *url, const char *colon)
{
	return (colon - url == 4 && strncasecmp(url, "http", 4) == 0) ||
	    (colon - url == 5 && strncasecmp(url, "https", 5) == 0);
}

/* The scheme's colon of url, or NULL when it has no http or https scheme. */
static const char *
http_colon(const char *url, size_t len)
{
	const char *colon = memchr(url, ':', len);

	if (colon == NULL || len - (colon - url) < 3 || colon[1] != '/' ||
	    colon[2] != '/')
		return NULL;
	return http_scheme(url, colon) ? colon : NULL;
}

/* Does url[0..len) hold a space, a control character or DEL? */
static int
has_control(const char *url, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)url[i] <= ' ' || url[i] == 0x7f)
			return 1;
	return 0;
}

int
urlfilter_normalize(const char *url, size_t len, struct buf *out)
{
	char host[256];
	const char *colon, *e;
	long port;
	int dot;

	if (has_control(url, len) || (colon = http_colon(url, len)) == NULL ||
	    split_url(url, len, colon, &e, host, sizeof host, &port, &dot) != URL_OK)
		return -1;
	normal_form(url, len, colon, e, host, port, dot, out);
	return 0;
}

int
urlfilter_check(struct urlfilter *f, const char *url, size_t len,
    struct buf *norm)
{
	char host[256];
	const char *colon, *e, *p, *end = url + len;
	struct buf tmp = { 0 }, *n = norm ? norm : &tmp;
	long port;
	int r, dot;

	if (len <= 8)
		return URL_SHORT;
	if (has_control(url, len))
		return URL_MALFORMED;
	colon = memchr(url, ':', len);
	if (colon == NULL || colon == url || !isalpha((unsigned char)url[0]))
		return URL_MALFORMED;
	for (p = url; p < colon; p++)
		if (!isalnum((unsigned char)*p) && *p != '+' && *p != '-' && *p != '.')
			return URL_MALFORMED;
	if (!http_scheme(url, colon))
		return URL_SCHEME;
	if (http_colon(url, len) == NULL ||
	    split_url(url, len, colon, &e, host, sizeof host, &port, &dot) !=
	    URL_OK)
		return URL_MALFORMED;
	if (blacklisted(f, host))
		return URL_DOMAIN;
	for (p = e; p < end && *p != '?' && *p != '#'; p++)
		;
	if (bad_extension(e, p - e))
		return URL_EXTENSION;
	/* Repeats are of the normal form: what would be fetched. */
	normal_form(url, len, colon, e, host, port, dot, n);
	r = urlset_add(&f->seen, n->p, n->len) ? URL_REPEAT : URL_OK;
	buf_free(&tmp);
	return r;
}
