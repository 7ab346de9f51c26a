/* fetch_index.h - owt-fetch --warc-prefix: index rows to Range fetches of single records, each record to its page */
#ifndef OWT_FETCH_INDEX_H
#define OWT_FETCH_INDEX_H

#include "web/fetch.h"

/*
 * Is the input line a CDX header line (" CDX a b ...")? Then it sets the
 * columns of its file's rows: 1 (a bad one is *bad, -1). Else 0. Lines of
 * every shard pass here first.
 */
int fetch_index_header(struct fetch *f, const char *line, size_t len,
    struct fetch_item **bad);
/*
 * The item of an index row (trimmed, not empty): job.url is
 * o->warc_prefix "/" filename, the record's bytes its range (from the
 * offset on, to the end of the gzip member or record, when the row has
 * no length); url the row's (for --resume and the log). A bad row is a
 * bad item (FILE:LINE: what); a row --resume's log has is NULL.
 */
struct fetch_item *fetch_index_item(struct fetch *f, char *line, size_t len);
/*
 * On a worker, after the fetch: the record in the job's body read as
 * fetch_warc_item reads one of an archive (its block the body, url its
 * WARC-Target-URI, fetched_at its WARC-Date), then its page as
 * fetch_warc_payload makes it. Bytes that do not hold a whole record are
 * a bad item: XDATA, FETCH_BAD_WARC, "FILE:LINE: ARCHIVE:OFFSET: what".
 */
void fetch_index_record(const struct fetch_opts *o, struct fetch_item *it);
void fetch_index_free(struct fetch *f);

#endif
