/* warc_index.h - index rows of WARC records: CDX (wget's, Common Crawl's), CDXJ, JSON */
#ifndef OWT_WARC_INDEX_H
#define OWT_WARC_INDEX_H

#include <stddef.h>

#include "core/json.h"

/*
 * A file of rows: its CDX columns, from its " CDX ..." header line or,
 * without one, Common Crawl's 11 (N b a m s k r M S V g) or the older 9
 * (N b a m s k r V g).
 */
struct warc_index {
	int col[4];		/* WI_URL, WI_FILE, WI_OFFSET, WI_LENGTH: 1-based, 0 none */
	int header;		/* the columns came from a header line */
	struct json_rec rec;
};

enum { WI_URL, WI_FILE, WI_OFFSET, WI_LENGTH };

/* A record: its strings point into the line (or x->rec), NUL-terminated. */
struct warc_index_row {
	const char *url;	/* "" when the row has none */
	const char *file;
	long long offset;
	long long length;	/* compressed, -1 when the row has none */
};

void warc_index_init(struct warc_index *x);
void warc_index_free(struct warc_index *x);
/* A new file: no header line seen. */
void warc_index_reset(struct warc_index *x);
/*
 * Is line[0..len) a CDX header line (" CDX" and the field letters)? Then
 * its columns (a original URL, g file name, V compressed offset, S
 * compressed length) are the file's: 1. Else 0; -1 with err for a header
 * without g or V.
 */
int warc_index_header(struct warc_index *x, const char *line, size_t len,
    char *err, size_t errsize);
/*
 * Parse a row, trimmed, not empty: a JSON object, CDXJ (two fields and a
 * JSON object: "urlkey timestamp {...}") with "filename", "offset" and
 * "length" (strings or numbers) and "url", or CDX columns. Writes NULs
 * into line. 0, or -1 with err.
 */
int warc_index_row(struct warc_index *x, char *line, size_t len,
    struct warc_index_row *r, char *err, size_t errsize);

#endif
