/* langid.cc - the language of a text: a C shim over CLD2 */
#include <cstdio>
#include <cstring>
#include <string>

#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>

#include "text/langid.h"

/* CLD2's code of lang, with both Chinese scripts as "zh". */
static const char *
code_of(CLD2::Language lang)
{
	const char *code = CLD2::LanguageCode(lang);

	return std::strcmp(code, "zh-Hant") == 0 ? "zh" : code;
}

int
langid_known(const char *code)
{
	/* Unused slots of CLD2's table have "" or a number for a code. */
	if (*code < 'a' || *code > 'z')
		return 0;
	for (int i = 0; i < CLD2::NUM_LANGUAGES; i++) {
		CLD2::Language l = (CLD2::Language)i;

		if (l != CLD2::UNKNOWN_LANGUAGE && l != CLD2::TG_UNKNOWN_LANGUAGE &&
		    std::strcmp(code_of(l), code) == 0)
			return 1;
	}
	return 0;
}

void
langid_detect(const char *s, size_t n, struct langid *r)
{
	langid_detect_hint(s, n, NULL, r);
}

void
langid_detect_hint(const char *s, size_t n, const char *hint, struct langid *r)
{
	CLD2::Language lang3[3];
	int percent3[3] = { 0, 0, 0 }, text_bytes, valid;
	double score3[3];
	bool reliable = false;
	std::string t;
	size_t i, chars = 0;

	for (i = 0; i < n; i++)
		if ((s[i] & 0xc0) != 0x80 && chars++ == LANGID_MAX)
			break;
	n = i;
	t.assign(s, n);
	for (i = 0; i < n; i++)
		if ((unsigned char)t[i] < 0x20 || t[i] == 0x7f)
			t[i] = ' ';
	/* The primary subtag ("pt" of "pt-br") is what CLD2's hint reads. */
	char primary[8] = "";
	CLD2::CLDHints hints = { NULL, NULL, CLD2::UNKNOWN_ENCODING,
	    CLD2::UNKNOWN_LANGUAGE };

	if (hint != NULL) {
		for (i = 0; i < sizeof primary - 1 && hint[i] >= 'a' &&
		    hint[i] <= 'z'; i++)
			primary[i] = hint[i];
		primary[i] = '\0';
		if (i >= 2 && (hint[i] == '\0' || hint[i] == '-'))
			hints.content_language_hint = primary;
	}
	CLD2::Language lang = CLD2::ExtDetectLanguageSummaryCheckUTF8(t.data(),
	    (int)t.size(), true, &hints, 0, lang3, percent3, score3, NULL,
	    &text_bytes, &reliable, &valid);
	snprintf(r->code, sizeof r->code, "%s", code_of(lang));
	r->percent = lang == CLD2::UNKNOWN_LANGUAGE ? 0 : percent3[0];
	r->reliable = reliable;
	/*
	 * CLD2 answers unknown for most texts under a few dozen letters; a
	 * page that declares a language is taken at its word there.
	 */
	if (lang == CLD2::UNKNOWN_LANGUAGE && hints.content_language_hint &&
	    langid_known(primary))
		snprintf(r->code, sizeof r->code, "%s", primary);
}
