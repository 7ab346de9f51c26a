/* charset.h - find the character encoding of an HTML page and convert it to UTF-8 */
#ifndef OWT_CHARSET_H
#define OWT_CHARSET_H

#include <stddef.h>

#include "core/util.h"

/*
 * The encoding of an HTML page, in this order (WHATWG, simplified):
 *   1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE);
 *   2. the charset parameter of the Content-Type header (ctype, may be NULL);
 *   3. a <meta charset> or <meta http-equiv content="...; charset="> or
 *      <?xml encoding=""?> in the first 8 KB;
 *   4. UTF-8 when the bytes are valid UTF-8, else windows-1252.
 * A declared label other than UTF-8 (latin1, windows-1252, gb2312, ...)
 * on bytes that are valid UTF-8 with multibyte sequences is taken as UTF-8,
 * and a declared UTF-8 on bytes with no valid multibyte sequence but
 * invalid ones as windows-1252: the two mislabellings the web is full of.
 * Labels are mapped as WHATWG does (latin1 and ascii are windows-1252,
 * gb2312 and gbk are GB18030, ...). Unknown labels fall through to step 4.
 * Returns the canonical name of the encoding chosen (a static string);
 * *how, if not NULL, is "bom", "header", "meta", "detected" or "default".
 */
const char *charset_detect(const char *p, size_t n, const char *ctype,
    const char **how);

/*
 * Append p[0..n), in encoding enc (a name from charset_detect), to out as
 * UTF-8. Invalid or unconvertible sequences become U+FFFD and NUL bytes
 * are dropped, so the result is always valid UTF-8 without NULs.
 * Returns the number of replacement characters written.
 */
size_t charset_to_utf8(const char *p, size_t n, const char *enc, struct buf *out);

/* The charset parameter of a Content-Type value into lab (lower case); 0 or -1. */
int charset_param(const char *ctype, char *lab, size_t size);

#endif
