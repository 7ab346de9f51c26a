/* langid.h - the language of a text: CLD2 (Compact Language Detector 2) */
#ifndef OWT_LANGID_H
#define OWT_LANGID_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Only the first LANGID_MAX characters of a text count (langdetect reads
 * 10,000): CLD2's accuracy stops growing after a few hundred (shared/
 * notes/clean-dedup.md section 3), and this halves its time on long texts.
 */
#define LANGID_MAX 3000

struct langid {
	char code[16];	/* ISO 639-1 where one exists ("en", "de", "zh"); "un": unknown */
	int percent;	/* share of the text's letters in that language, 0..100 */
	int reliable;	/* CLD2's own confidence flag */
};

/*
 * Detect the main language of the valid UTF-8 text s[0..n). Control
 * characters are read as spaces (CLD2 answers "unknown" for any text
 * that holds one). Chinese in either script is "zh". Thread-safe.
 */
void langid_detect(const char *s, size_t n, struct langid *r);

/*
 * langid_detect with the language the text's page declares (hint: a
 * lower-case BCP 47 tag as owt-fetch's lang_hint, or NULL). Its primary
 * subtag is CLD2's content-language hint, a prior that tips a close call
 * on a short text but does not outvote the text (page templates often
 * declare a language their text is not in); where CLD2 still answers
 * unknown (a text of few letters), the answer is the hint, with percent 0
 * and reliable 0. A hint that is not such a tag, or names a language
 * langid_known does not know, is ignored.
 */
void langid_detect_hint(const char *s, size_t n, const char *hint,
    struct langid *r);

/*
 * 1 if code is a language langid_detect can answer ("en", "zh", "haw"),
 * 0 otherwise: an unknown code, "un" (no language), "zh-Hant" (answered
 * as "zh"), or a code in another case than CLD2's.
 */
int langid_known(const char *code);

#ifdef __cplusplus
}
#endif

#endif
