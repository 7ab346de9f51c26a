/* extract.h - the title and main article text of an HTML page (libtidy) */
#ifndef OWT_EXTRACT_H
#define OWT_EXTRACT_H

#include <stddef.h>

#include "core/util.h"

/*
 * Pages nested deeper than this (counting elements that need an end tag)
 * are refused before libtidy sees them: its parser recurses once per level
 * and crashes on a few hundred thousand levels.
 */
#define EXTRACT_MAX_DEPTH 4000

/*
 * Parse html[0..n) (UTF-8, as charset_to_utf8 writes it) and append the
 * page title to title and the main text to text: the paragraphs of the
 * article, one per line, without navigation, ads, comments, bylines and
 * other boilerplate. Either may stay empty. Thread-safe; the caller's
 * thread needs a stack of at least 8 MB (see EXTRACT_STACK).
 * Returns 0, or -1 with the reason in err (nested too deep, over the work
 * budget of extract_budget(n)) and *code XDATA.
 */
int extract_html(const char *html, size_t n, struct buf *title,
    struct buf *text, char *err, size_t errsize, int *code);

/*
 * The work extract_html allows itself on a page of n bytes, in steps:
 * EXTRACT_WORK_BASE plus EXTRACT_WORK_PER_BYTE a byte, at most
 * EXTRACT_WORK_MAX. A pre-scan charges each tag as many steps as it is
 * nested deep (libtidy's parse, which cannot be interrupted, slows so on
 * deep pages), then each node visit of the article search is a step. The
 * evaluation pages need under 4 a byte; a hostile page fails ("over the
 * extraction work budget") in bounded time, a few seconds at most,
 * instead of holding up the pages written after it.
 */
#define EXTRACT_WORK_BASE 1000000UL
#define EXTRACT_WORK_PER_BYTE 50UL
#define EXTRACT_WORK_MAX 100000000UL
unsigned long extract_budget(size_t n);

/*
 * What a page says about itself besides its title, each empty when it
 * does not say:
 *   date: its publication date, ISO 8601 (2008-01-16, or
 *     2008-01-16T09:30:00 with Z or +05:30 when the page gives a time and
 *     zone), from JSON-LD's datePublished, else a publication <meta>
 *     (article:published_time, pubdate, ...), else a <time datetime> marked
 *     pubdate or itemprop=datePublished, else a <meta name=date> (dc.date,
 *     ...), else its first <time datetime>;
 *   lang: its declared language, a BCP 47 tag in lower case (en, pt-br),
 *     from <html lang>, else <meta http-equiv=content-language> (the first
 *     of a list), else JSON-LD's inLanguage.
 */
struct extract_meta {
	struct buf date, lang;
};

/*
 * extract_html with a budget of its own, and the page's date and language
 * into meta (may be NULL).
 */
int extract_html_work(const char *html, size_t n, unsigned long budget,
    struct buf *title, struct buf *text, struct extract_meta *meta,
    char *err, size_t errsize, int *code);

/*
 * A date as pages write it (2008-01-16T09:30:00.000+0530, 2008/01/16,
 * "Wed, 16 Jan 2008 09:30:00 GMT", "January 16, 2008", "16 January 2008")
 * as ISO 8601 into out: the date and, for the ISO forms, the time to the
 * second and the zone as given. Years 1900-2099. 0, or -1 when s is none
 * of these.
 */
int extract_iso_date(const char *s, size_t n, char *out, size_t size);

/*
 * A language tag (en-US, pt_BR, "de, en") as a lower-case BCP 47 tag into
 * out: the first of a list, '_' read as '-', a primary subtag of 2 or 3
 * letters and later ones of 1 to 8 letters or digits. 0, or -1.
 */
int extract_lang_tag(const char *s, size_t n, char *out, size_t size);

#define EXTRACT_STACK ((size_t)32 << 20)

/*
 * A page as fetched: find its encoding (charset_detect, with the
 * Content-Type header ctype, may be NULL), convert it to UTF-8 and
 * extract_html_work it (meta may be NULL). *enc receives the encoding used.
 */
int extract_page(const char *p, size_t n, const char *ctype, struct buf *title,
    struct buf *text, struct extract_meta *meta, const char **enc, char *err,
    size_t errsize, int *code);

/* The nesting depth estimate used for the EXTRACT_MAX_DEPTH check. */
int extract_depth(const char *html, size_t n);

#endif
