/* clean_reason.h - owt-dedup's stages and the reasons it drops a document, by name */
#ifndef OWT_CLEAN_REASON_H
#define OWT_CLEAN_REASON_H

#include "core/input.h"

/* The stages, as --stages names them; CLEAN_LISTED's stage is --drop's. */
enum {
	CLEAN_FIX, CLEAN_LANG, CLEAN_LENGTH, CLEAN_EXACT, CLEAN_NEAR,
	CLEAN_DECONTAM, CLEAN_NSTAGES, CLEAN_DROPSTAGE = CLEAN_NSTAGES
};
extern const char *const clean_stage_name[CLEAN_NSTAGES + 1];

/* Why a document is dropped: counted in the summary, named in the report. */
enum {
	CLEAN_KEPT,
	/* 1 .. BAD_NREASONS - 1: bad records, named by input_bad_name[] */
	CLEAN_BADSIG = BAD_NREASONS,	/* --signed: not a signature */
	CLEAN_LISTED,			/* --drop */
	CLEAN_OTHERLANG, CLEAN_NOLANG,	/* lang */
	CLEAN_SHORT,			/* length */
	CLEAN_DUPTEXT, CLEAN_DUPURL,	/* exact */
	CLEAN_DUPNEAR,			/* near */
	CLEAN_PIECES, CLEAN_EMPTY,	/* decontam */
	CLEAN_NREASONS
};
/* A reason's stage (-1: "input", a bad record) and its name. */
struct clean_reason {
	int stage;
	const char *name;
};
extern const struct clean_reason clean_reason[CLEAN_NREASONS];
/* The name of a reason, bad records' (input_bad_name[]) too. */
const char *clean_reason_name(int reason);

#endif
