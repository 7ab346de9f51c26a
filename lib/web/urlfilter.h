/* urlfilter.h - OpenWebText's URL filter: length, form, scheme, domain, extension, repeats */
#ifndef OWT_URLFILTER_H
#define OWT_URLFILTER_H

#include <stddef.h>
#include <stdint.h>

#include "web/urlset.h"
#include "core/util.h"

/* Why a URL is dropped, in the order the checks run; urlfilter_reason[] names them. */
enum {
	URL_OK,
	URL_SHORT,		/* 8 characters or fewer */
	URL_MALFORMED,		/* not scheme://host[:port][/...], or white space */
	URL_SCHEME,		/* a scheme other than http and https */
	URL_DOMAIN,		/* blacklisted registrable domain */
	URL_EXTENSION,		/* the path ends in a blacklisted extension */
	URL_REPEAT,		/* the same URL, in normal form, was seen before */
	URL_NREASONS
};
extern const char *const urlfilter_reason[URL_NREASONS];

/* Megatron-LM's lists, corrected (.7z and .ai are two entries). */
extern const char *const urlfilter_domains[];
extern const char *const urlfilter_extensions[];

struct urlfilter {
	void *psl;		/* psl_ctx_t */
	char **extra;		/* --blacklist entries, sorted */
	size_t nextra;
	struct urlset seen;
};

/*
 * Set up the filter; file (may be NULL) names more blacklisted domains, one
 * a line, '#' comments. Returns 0, or -1 with err ("FILE:LINE: what", or
 * why the file cannot be read) and *code (XDATA: a missing file or a bad
 * line; XSYS: a read error, no Public Suffix List).
 */
int urlfilter_init(struct urlfilter *f, const char *file, char *err,
    size_t errsize, int *code);
void urlfilter_free(struct urlfilter *f);

/*
 * Check url[0..len): URL_OK or the reason to drop it. An accepted URL is
 * remembered in normal form (urlfilter_normalize), so the next URL with
 * the same normal form is URL_REPEAT. norm (may be NULL) receives the
 * normal form of an accepted URL: what is to be fetched.
 */
int urlfilter_check(struct urlfilter *f, const char *url, size_t len,
    struct buf *norm);

/*
 * The normal form of an http(s) URL into out (reset): scheme and host
 * lower-cased, an internationalized host name in its ASCII (punycode)
 * form, a default port (:80 for http, :443 for https) and the fragment
 * dropped, an empty path made "/"; the rest as it is. Returns 0, or -1
 * when url is not http(s)://host[:port][rest] with a valid host.
 */
int urlfilter_normalize(const char *url, size_t len, struct buf *out);

/*
 * The host part of an absolute http(s) URL, lower-cased, into host; the
 * length, or -1 when there is none.
 */
int urlfilter_host(const char *url, size_t len, char *host, size_t size);

/* The label a blacklist entry without a dot is compared with: "google" for maps.google.co.uk. */
int urlfilter_domain_label(void *psl, const char *host, char *label,
    size_t size);

#endif
