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
 * 1 if code is a language langid_detect can answer ("en", "zh", "haw"),
 * 0 otherwise: an unknown code, "un" (no language), "zh-Hant" (answered
 * as "zh"), or a code in another case than CLD2's.
 */
int langid_known(const char *code);

#ifdef __cplusplus
}
#endif

#endif
