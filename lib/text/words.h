/* words.h - the words of a text as Python's re.findall(r"\w+", text.lower()) finds them */
#ifndef OWT_WORDS_H
#define OWT_WORDS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A word is a maximal run of letters, digits (Unicode categories L and N)
 * and '_'. Its hash is of the lower-cased word (Unicode simple case
 * mapping, which keeps the length), so "The" and "the" hash alike.
 */
struct word {
	uint32_t start, end;	/* byte offsets in the text */
	uint32_t cstart, clen;	/* the same in code points */
	uint64_t hash;
};

struct words {
	struct word *w;
	size_t n, cap;
	uint32_t *x;		/* scratch for users: one value per word */
	size_t xcap;
};

/* Build the shared tables; call once, before any thread. */
void words_init(void);
/* The words of the valid UTF-8 text s[0..n) (at most 4 GB). */
void words_split(const char *s, size_t n, struct words *w);
/* The same for code points s[0..n); offsets are code point offsets. */
void words_split32(const uint32_t *s, size_t n, struct words *w);
void words_free(struct words *w);

/*
 * The hash of words w[0..k) as one sequence ("a b c"): the chain
 * h = mix(h ^ word hash) from WORDS_SEQ_START, so that the hashes of all
 * prefixes come out of one pass.
 */
#define WORDS_SEQ_START 0x736571ULL
uint64_t words_seq_hash(const struct word *w, size_t k);

#endif
