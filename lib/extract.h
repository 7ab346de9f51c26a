/* extract.h - the title and main article text of an HTML page (libtidy) */
#ifndef OWT_EXTRACT_H
#define OWT_EXTRACT_H

#include <stddef.h>

#include "util.h"

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
 * Returns 0, or -1 with the reason in err ("nested too deep").
 */
int extract_html(const char *html, size_t n, struct buf *title,
    struct buf *text, char *err, size_t errsize);

#define EXTRACT_STACK ((size_t)32 << 20)

/*
 * A page as fetched: find its encoding (charset_detect, with the
 * Content-Type header ctype, may be NULL), convert it to UTF-8 and
 * extract_html it. *enc receives the encoding used.
 */
int extract_page(const char *p, size_t n, const char *ctype, struct buf *title,
    struct buf *text, const char **enc, char *err, size_t errsize);

/* The nesting depth estimate used for the EXTRACT_MAX_DEPTH check. */
int extract_depth(const char *html, size_t n);

#endif
