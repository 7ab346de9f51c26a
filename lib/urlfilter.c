/* urlfilter.c - OpenWebText's URL filter: length, form, scheme, domain, extension, repeats */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libpsl.h>

#include "input.h"
#include "urlfilter.h"

const char *const url_reason[URL_NREASONS] = {
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
urlfilter_init(struct urlfilter *f, const char *file, char *err, size_t errsize)
{
	struct input in;
	char *line;
	size_t len, cap = 0;
	int k;

	memset(f, 0, sizeof *f);
	if ((f->psl = psl_latest(NULL)) == NULL && (f->psl = (psl_ctx_t *)psl_builtin()) == NULL) {
		snprintf(err, errsize, "cannot load the Public Suffix List");
		return -1;
	}
	if (file == NULL)
		return 0;
	if (input_open(&in, file) < 0) {
		snprintf(err, errsize, "%s", in.err);
		urlfilter_free(f);
		return -1;
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
			if (!isalnum((unsigned char)*e) && *e != '-' && *e != '.') {
				snprintf(err, errsize, "%s:%lu: '%s' is not a domain name",
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
		snprintf(err, errsize, "%s", in.err);
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

/* FNV-1a, then splitmix64's finaliser; never 0 (the empty slot). */
static uint64_t
hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	h = owt_mix64(h);
	return h ? h : 1;
}

static size_t
slot(const struct urlset *u, uint64_t h)
{
	size_t i, mask = u->cap - 1;

	for (i = h & mask; u->h[i] && u->h[i] != h; i = (i + 1) & mask)
		;
	return i;
}

int
urlset_add(struct urlset *u, const char *s, size_t n)
{
	uint64_t h = hash(s, n);
	size_t i;

	if (2 * (u->n + 1) > u->cap) {
		struct urlset old = *u;

		u->cap = u->cap ? 2 * u->cap : 1024;
		u->h = xcalloc(u->cap, sizeof *u->h);
		for (i = 0; i < old.cap; i++)
			if (old.h[i])
				u->h[slot(u, old.h[i])] = old.h[i];
		free(old.h);
	}
	i = slot(u, h);
	if (u->h[i])
		return 1;
	u->h[i] = h;
	u->n++;
	return 0;
}

int
urlset_has(const struct urlset *u, const char *s, size_t n)
{
	return u->cap > 0 && u->h[slot(u, hash(s, n))] != 0;
}

void
urlset_free(struct urlset *u)
{
	free(u->h);
	memset(u, 0, sizeof *u);
}

/* Is s[0..n) a host name (labels of letters, digits, '-') or an IPv4 address? */
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
		} else if (isalnum((unsigned char)s[i]) || (s[i] == '-' && lab > 0)) {
			lab++;
		} else {
			return 0;
		}
	}
	return nlab >= 2 || (n == 9 && strncasecmp(s, "localhost", 9) == 0);
}

int
url_host(const char *url, size_t len, char *host, size_t size)
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

int
url_domain_label(void *psl, const char *host, char *label, size_t size)
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

	if (url_domain_label(f->psl, host, label, sizeof label) == 0 &&
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

int
urlfilter_check(struct urlfilter *f, const char *url, size_t len)
{
	char host[256];
	const char *colon, *h, *e, *p, *end = url + len;
	size_t i;

	if (len <= 8)
		return URL_SHORT;
	for (i = 0; i < len; i++)
		if ((unsigned char)url[i] <= ' ' || url[i] == 0x7f)
			return URL_MALFORMED;
	colon = memchr(url, ':', len);
	if (colon == NULL || colon == url || !isalpha((unsigned char)url[0]))
		return URL_MALFORMED;
	for (p = url; p < colon; p++)
		if (!isalnum((unsigned char)*p) && *p != '+' && *p != '-' && *p != '.')
			return URL_MALFORMED;
	if (!((colon - url == 4 && strncasecmp(url, "http", 4) == 0) ||
	    (colon - url == 5 && strncasecmp(url, "https", 5) == 0)))
		return URL_SCHEME;
	if (url_host(url, len, host, sizeof host) < 0)
		return URL_MALFORMED;
	h = colon + 3;
	for (e = h; e < end && *e != '/' && *e != '?' && *e != '#'; e++)
		;
	p = h + strlen(host);
	if (p < e && *p == '.')
		p++;
	if (p < e) {
		/* A port: digits, 1..65535. */
		long port;
		char *q;

		if (*p != ':' || p + 1 == e)
			return URL_MALFORMED;
		errno = 0;
		port = strtol(p + 1, &q, 10);
		if (q != e || port < 1 || port > 65535)
			return URL_MALFORMED;
	}
	if (!good_host(host, strlen(host)))
		return URL_MALFORMED;
	if (blacklisted(f, host))
		return URL_DOMAIN;
	for (p = e; p < end && *p != '?' && *p != '#'; p++)
		;
	if (bad_extension(e, p - e))
		return URL_EXTENSION;
	if (urlset_add(&f->seen, url, len))
		return URL_REPEAT;
	return URL_OK;
}
