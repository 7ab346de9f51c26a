/* clean_reason.c - owt-dedup's stages and the reasons it drops a document, by name: clean's and the report's */
#include "text/clean_reason.h"

const char *const clean_stage_name[CLEAN_NSTAGES + 1] = {
	"fix", "lang", "length", "exact", "near", "decontam", "drop"
};

const struct clean_reason clean_reason[CLEAN_NREASONS] = {
	[CLEAN_BADSIG] = { -1, "bad signature" },
	[CLEAN_LISTED] = { CLEAN_DROPSTAGE, "listed" },
	[CLEAN_OTHERLANG] = { CLEAN_LANG, "other language" },
	[CLEAN_NOLANG] = { CLEAN_LANG, "unknown language" },
	[CLEAN_SHORT] = { CLEAN_LENGTH, "too short" },
	[CLEAN_DUPTEXT] = { CLEAN_EXACT, "exact duplicate" },
	[CLEAN_DUPURL] = { CLEAN_EXACT, "duplicate url" },
	[CLEAN_DUPNEAR] = { CLEAN_NEAR, "near duplicate" },
	[CLEAN_PIECES] = { CLEAN_DECONTAM, "more than 10 pieces" },
	[CLEAN_EMPTY] = { CLEAN_DECONTAM, "nothing left" },
};

const char *
clean_reason_name(int reason)
{
	return reason < BAD_NREASONS ? input_bad_name[reason] :
	    clean_reason[reason].name;
}
