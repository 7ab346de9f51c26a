/* signature.c - the names of documents and owt-dedup's signature records (--sign, --signed) */
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "text/signature.h"

const char *const signature_want[SIGNATURE_NWANT] = { "file", "url",
	"text_hash", "minhash" };

/* The fields that name a document, in order of preference. */
static const char *const name_keys[3] = { "id", "adlr_id", "url" };

void
signature_name(const struct json_rec *jr, const char *file,
    const char *file_json, unsigned long lineno, struct buf *dst,
    size_t *wholen, size_t *ref, size_t *reflen)
{
	const struct json_field *f;
	struct json_w w;
	char at[4096];
	size_t i, start = dst->len;
	int k;

	json_w_members(&w, dst, JSON_COMPACT);
	json_w_key(&w, "file");
	json_w_raw(&w, file_json, strlen(file_json));
	json_w_ku64(&w, "line", lineno);
	*reflen = 0;
	for (i = 0; i < 3; i++) {
		if ((f = json_rec_get(jr, name_keys[i])) == NULL)
			continue;
		json_w_key(&w, name_keys[i]);
		if (*reflen == 0) {
			*ref = dst->len;
			*reflen = f->vend - f->vstart;
		}
		json_w_raw(&w, jr->line + f->vstart, f->vend - f->vstart);
	}
	*wholen = dst->len - start;
	if (*reflen == 0) {
		k = snprintf(at, sizeof at, "%s:%lu", file, lineno);
		*ref = dst->len;
		json_string(dst, at, k < (int)sizeof at ? (size_t)k : sizeof at - 1);
		*reflen = dst->len - *ref;
	}
}

int
signature_name_hash(const struct json_rec *jr, uint64_t h[2])
{
	const struct json_field *f;
	size_t i;

	for (i = 0; i < 3; i++) {
		if ((f = json_rec_get(jr, name_keys[i])) == NULL)
			continue;
		h[0] = dedup_hash(jr->line + f->vstart, f->vend - f->vstart, 1);
		h[1] = dedup_hash(jr->line + f->vstart, f->vend - f->vstart, 2);
		return 1;
	}
	return 0;
}

void
signature_hashes_write(struct buf *b, const struct dedup_sig *s)
{
	static const char digit[] = "0123456789abcdef";
	char hex[2 * MINHASH_K + 1];
	struct json_w w;
	size_t i;

	json_w_within(&w, b, JSON_COMPACT);
	json_w_key(&w, "text_hash");
	snprintf(hex, sizeof hex, "%016llx%016llx",
	    (unsigned long long)s->text[0], (unsigned long long)s->text[1]);
	json_w_str(&w, hex, 32);
	if (!s->has_sketch)
		return;
	for (i = 0; i < MINHASH_K; i++) {
		hex[2 * i] = digit[s->sketch[i] >> 4];
		hex[2 * i + 1] = digit[s->sketch[i] & 15];
	}
	json_w_key(&w, "minhash");
	json_w_str(&w, hex, 2 * MINHASH_K);
}

static int
hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
	    c - 'a' + 10 : -1;
}

/* n hex digits into bytes (n even), or -1. */
static int
unhex(const char *s, size_t n, uint8_t *out)
{
	size_t i;
	int hi, lo;

	for (i = 0; i < n / 2; i++) {
		if ((hi = hexval(s[2 * i])) < 0 || (lo = hexval(s[2 * i + 1])) < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int
signature_hashes_read(const struct json_rec *r, struct dedup_sig *s)
{
	const char *v, *why;
	uint8_t t[16];
	size_t n, i;

	if ((v = json_rec_str(r, "text_hash", &n, &why)) == NULL || n != 32 ||
	    unhex(v, n, t) < 0)
		return -1;
	s->text[0] = s->text[1] = 0;
	for (i = 0; i < 16; i++)
		s->text[i / 8] = s->text[i / 8] << 8 | t[i];
	s->has_sketch = 0;
	if ((v = json_rec_str(r, "minhash", &n, &why)) != NULL) {
		if (n != 2 * MINHASH_K || unhex(v, n, s->sketch) < 0)
			return -1;
		s->has_sketch = 1;
	} else if (strcmp(why, "missing") != 0) {
		return -1;
	}
	s->has_url = (v = json_rec_str(r, "url", &n, &why)) != NULL;
	s->url = s->has_url ? dedup_url_hash(v, n) : 0;
	return 0;
}

void
signature_write(struct buf *b, const char *who, size_t wholen,
    const struct dedup_sig *s)
{
	struct json_w w;

	json_w_init(&w, b, JSON_COMPACT);
	json_w_obj(&w);
	json_w_raw_members(&w, who, wholen);
	signature_hashes_write(b, s);
	json_w_end(&w);
	buf_addc(b, '\n');
}

int
signature_read(const struct json_rec *jr, struct buf *info, size_t *who,
    size_t *wholen, size_t *ref, size_t *reflen, struct dedup_sig *s,
    struct buf *tmp)
{
	static const char *const keys[] = { "file", "line", "id", "adlr_id",
		"url" };
	const struct json_field *f;
	const char *why, *file;
	struct json_w w;
	size_t i, n, start = info->len;

	*reflen = 0;
	json_w_members(&w, info, JSON_COMPACT);
	for (i = 0; i < 5; i++) {
		if ((f = json_rec_get(jr, keys[i])) == NULL)
			continue;
		json_w_key(&w, keys[i]);
		if (i >= 2 && *reflen == 0) {
			*ref = info->len;
			*reflen = f->vend - f->vstart;
		}
		json_w_raw(&w, jr->line + f->vstart, f->vend - f->vstart);
	}
	*who = start;
	*wholen = info->len - start;
	if (*reflen == 0) {
		if ((file = json_rec_str(jr, "file", &n, &why)) == NULL ||
		    (f = json_rec_get(jr, "line")) == NULL)
			return -1;
		tmp->len = 0;
		buf_add(tmp, file, n);
		buf_addc(tmp, ':');
		buf_add(tmp, jr->line + f->vstart, f->vend - f->vstart);
		*ref = info->len;
		json_string(info, tmp->p, tmp->len);
		*reflen = info->len - *ref;
	}
	return signature_hashes_read(jr, s);
}
