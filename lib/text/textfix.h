/* textfix.h - ftfy 6's fix_text in C: mojibake, entities, controls, widths, NFC */
#ifndef OWT_TEXTFIX_H
#define OWT_TEXTFIX_H

#include <stddef.h>
#include <stdint.h>

#include "core/util.h"

/*
 * The fixes, in the order ftfy applies them. textfix() returns the set
 * of those that changed the text; textfix_name[] names them as ftfy does.
 */
enum {
	TF_HTML,		/* unescape_html: entities, only in lines before a '<' */
	TF_ENCODING,		/* fix_encoding: mojibake, with its sub-steps */
	TF_C1,			/* fix_c1_controls: U+0080..U+009F as windows-1252 */
	TF_LIGATURES,		/* fix_latin_ligatures */
	TF_WIDTH,		/* fix_character_width: fullwidth, halfwidth, U+3000 */
	TF_QUOTES,		/* uncurl_quotes */
	TF_LINEBREAKS,		/* fix_line_breaks: CRLF, CR, U+0085, U+2028/9 */
	TF_ESCAPES,		/* remove_terminal_escapes */
	TF_CONTROLS,		/* remove_control_chars */
	TF_NFC,			/* NFC normalization */
	TF_NFIXES
};
#define TF_ALL ((1u << TF_NFIXES) - 1)
extern const char *const textfix_name[TF_NFIXES];

/* A growable array of code points. */
struct u32v {
	uint32_t *p;
	size_t n, cap;
};

/* Scratch space of one thread; zero it before the first call. */
struct textfix {
	struct u32v v[3];	/* a line being fixed, and two working copies */
};

/* Build the shared character tables; call once, before any thread. */
void textfix_init(void);

/*
 * Fix the valid UTF-8 text s[0..n) as ftfy.fix_text(s) does with the
 * default TextFixerConfig, restricted to the fixes in the bit set
 * `enabled` (1 << TF_*). Returns the bit set of fixes that changed the
 * text; when it is not 0, out holds the fixed text (replacing its
 * content), else out is left alone.
 */
unsigned textfix(struct textfix *tf, const char *s, size_t n, unsigned enabled,
    struct buf *out);

void textfix_free(struct textfix *tf);

#endif
