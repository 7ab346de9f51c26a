/* signature.h - the names of documents and owt-dedup's signature records (--sign, --signed) */
#ifndef OWT_SIGNATURE_H
#define OWT_SIGNATURE_H

#include <stddef.h>
#include <stdint.h>

#include "text/dedup.h"
#include "core/json.h"
#include "core/util.h"

/*
 * A document is named, in reports and signatures, by the fields
 * "file" and "line" of its input, then its "id", "adlr_id" and "url" as
 * they are. Its name as a report's "kept" value is the first of those
 * three it has, else "FILE:LINE" as a JSON string.
 *
 * A signature record (owt-dedup(1), --sign) is those name fields and the
 * signature: {"file":...,"line":...,"id":...,"text_hash":"...",
 * "minhash":"..."}.
 */

/* The keys a signature record is parsed with (for json_rec_init). */
#define SIGNATURE_NWANT 4
extern const char *const signature_want[SIGNATURE_NWANT];

/*
 * Append to dst the fields that name the record jr of input file (its
 * name, and as a JSON string file_json) at lineno, *wholen bytes; then,
 * where it has no id, adlr_id or url, its "FILE:LINE" string. *ref,
 * *reflen: where in dst its "kept" value is.
 */
void signature_name(const struct json_rec *jr, const char *file,
    const char *file_json, unsigned long lineno, struct buf *dst,
    size_t *wholen, size_t *ref, size_t *reflen);
/* The 128-bit hash of a record's "kept" value (jr's first id, adlr_id, url); 0: it has none. */
int signature_name_hash(const struct json_rec *jr, uint64_t h[2]);

/*
 * A signature as JSON members: ,"text_hash":"32 hex digits" and, when
 * there is a sketch, ,"minhash":"256 hex digits". Appended to b.
 */
void signature_hashes_write(struct buf *b, const struct dedup_sig *s);
/*
 * Read those members back from a record parsed with signature_want (the
 * URL hash comes from "url"). Returns 0, or -1 when they are missing or
 * malformed.
 */
int signature_hashes_read(const struct json_rec *r, struct dedup_sig *s);

/* A signature record: '{', the name fields who[0..wholen), the signature, "}\n". */
void signature_write(struct buf *b, const char *who, size_t wholen,
    const struct dedup_sig *s);
/*
 * Read a signature record jr (parsed with signature_want): its name
 * fields are appended to info (*who, *wholen; *ref, *reflen its "kept"
 * value, from its id, adlr_id or url, else its file and line), its
 * signature goes to s. Returns 0, or -1 when it is not one (info may hold
 * a part of it). tmp is scratch.
 */
int signature_read(const struct json_rec *jr, struct buf *info, size_t *who,
    size_t *wholen, size_t *ref, size_t *reflen, struct dedup_sig *s,
    struct buf *tmp);

#endif
