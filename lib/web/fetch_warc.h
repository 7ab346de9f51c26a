/* fetch_warc.h - owt-fetch --extract on WARC archives: records to items, payloads to pages */
#ifndef OWT_FETCH_WARC_H
#define OWT_FETCH_WARC_H

#include "web/fetch.h"
#include "web/warc.h"

/* What a record's item carries beside its job (url, body, fetched_at). */
struct fetch_warc_rec {
	int type;		/* WARC_RESPONSE, WARC_RESOURCE or WARC_CONVERSION */
	int toolarge;		/* the block was over the cap, not read */
	char *id;		/* WARC-Record-ID, as written */
	char *ptype;		/* WARC-Identified-Payload-Type, or NULL */
	char *ctype;		/* the block's Content-Type, or NULL */
	const char *file;	/* the archive (owned by the run) */
	uint64_t offset;	/* warc_offset */
	char *own;		/* --warc-prefix: the row's file name, file points at it */
	char *where;		/* --warc-prefix: "INDEX:LINE" of the row */
	struct warc_end *end;	/* --warc-prefix, no length: the record's end, found */
};

/*
 * Is path (an operand, or a file an --extract line names) an archive?
 * Then read it: its records become items (fetch_warc_item) before the
 * next line. sharded: its records count as input lines for --shard. 1
 * (opened), 0 (not an archive), or -1 with *bad (it cannot be opened).
 */
int fetch_warc_open(struct fetch *f, const char *path, int sharded,
    struct fetch_item **bad);
/*
 * The next item of the open archive: a response, resource or conversion
 * record (the others are counted and skipped), or a bad item at a corrupt
 * or truncated record (the rest of the archive is skipped). NULL at its
 * end (the archive is closed).
 */
struct fetch_item *fetch_warc_item(struct fetch *f);
/* Is an archive open? */
int fetch_warc_active(const struct fetch *f);
/*
 * On a worker: the page in a record's block, as a fetch gives it: j->body
 * (transfer and content coding undone), status, content type, outcome
 * (http, not-html, too-large; error for a payload that cannot be decoded).
 * A conversion record's text is it->text itself.
 */
void fetch_warc_payload(const struct fetch_opts *o, struct fetch_item *it);
/* Print the records skipped by type, and the archives cut short (stderr). */
void fetch_warc_summary(const struct fetch *f);
void fetch_warc_free(struct fetch *f);

/*
 * --warc-file: open PREFIX.warc.gz.open (PREFIX-00000 with
 * --warc-max-size) with its warcinfo record, and PREFIX.cdx with
 * --warc-cdx (0, or -1 with err: XUSAGE when the archive or its .open
 * file exists, else XSYS). With --resume, what a killed run left is
 * recovered first (warc_recover: the URLs of its whole items join
 * f->done) and the run goes on in the next numbered file. On a worker,
 * fetch_warc_build makes an item's exchanges into request and response
 * records (each redirect hop; the body as received) in it->warc_gz, their
 * CDX lines in it->warc_cdx, the last response's id in it->warc_id, then
 * leaves its body as the payload to extract (chunks and content coding
 * undone). In the item's turn, fetch_warc_meta adds them and the metadata
 * record of its outcome as one group (0, or -1 with f->ww->err, XSYS);
 * fetch_warc_flush writes what is pending (after the output, before the
 * log: an archived page is in the output, a logged one in the archive).
 * Then close and rename.
 */
int fetch_warc_writer_open(struct fetch *f, char *err, size_t errsize,
    int *code);
void fetch_warc_build(const struct fetch_opts *o, struct fetch_item *it);
int fetch_warc_meta(struct fetch *f, const struct fetch_item *it, int outcome);
int fetch_warc_flush(struct fetch *f);
int fetch_warc_writer_close(struct fetch *f, char *err, size_t errsize,
    int *code);

#endif
