/* opt.h - a program's options declared once: getopt's table, usage, -h and checks */
#ifndef OWT_OPT_H
#define OWT_OPT_H

#include <stddef.h>
#include <stdint.h>

#include "core/util.h"

/* What an option's argument is, and what its target p points at. */
enum {
	OPT_FLAG,	/* no argument; int *p set to 1 (p may be NULL) */
	OPT_INT,	/* int, an integer in [min, max] */
	OPT_U32,	/* uint32_t, an integer in [min, max] */
	OPT_U64,	/* uint64_t, an integer in [min, max] */
	OPT_DOUBLE,	/* double, a number in [min, max] */
	OPT_SIZE,	/* size_t, bytes (K, M, G, T: of 1024) in [min, max] */
	OPT_STR,	/* const char *, as given; OPT_REPEAT: struct opt_list */
	OPT_SHARD,	/* unsigned long[2], "K/N" with 0 <= K < N */
	OPT_FUNC,	/* check does it all (an argument or not: arg) */
	OPT_MODE,	/* no argument; int *p set to value. The OPT_MODE
			   options of one p exclude each other: a second one
			   given fails with "--a, --b and --c exclude each
			   other", the group in table order */
	OPT_NOTE,	/* accepted with one log line: it has no effect */
	OPT_HELP,	/* -h: usage and help on stdout */
	OPT_VERSION	/* --version */
};

/*
 * flags: OPT_REQUIRED is unbracketed in usage ("--load dir"; the program
 * checks it); OPT_ALIAS is another spelling of the entry before it (in
 * -h, not in usage); OPT_REPEAT (OPT_STR) keeps each occurrence, in a
 * struct opt_list.
 */
enum { OPT_REQUIRED = 1, OPT_ALIAS = 2, OPT_REPEAT = 4 };

/* The arguments of an OPT_STR | OPT_REPEAT option, in order. */
struct opt_list {
	char **v;
	size_t n;
};

/*
 * One option. Without OPT_REPEAT an option given twice takes the last
 * value, as with getopt.
 */
struct opt {
	const char *name;	/* "workers": --workers */
	int key;		/* 'k': -k too; 0: none */
	const char *arg;	/* the argument's name in usage, -h; NULL: none */
	int type;		/* OPT_* */
	void *p;		/* the target */
	double min, max;	/* the range of numbers */
	const char *help;	/* the -h text */
	int flags;		/* OPT_REQUIRED, OPT_ALIAS, OPT_REPEAT */
	/*
	 * OPT_FUNC: reads arg (NULL for a flag) into its target. Other types:
	 * checks the value after it is stored. 0, or -1 with the whole
	 * message in err ("--x: 'v' is not ...").
	 */
	int (*check)(const struct opt *o, const char *arg, char *err,
	    size_t errsize);
	int tag;		/* the program's own (gpt-train's checkpoint class) */
	int value;		/* OPT_MODE: what it sets *p to */
	const char *words;	/* opt_check_word: the words taken, "a b c" */
	const char *why;	/* opt_check_word: added to its message */
};

/* The rows every program spells alike. */
#define OPT_ROW_HELP { .name = "help", .key = 'h', .type = OPT_HELP, \
	.help = "print this help and exit" }
#define OPT_ROW_VERSION { .name = "version", .type = OPT_VERSION, \
	.help = "print the version and exit" }
#define OPT_ROW_QUIET(target, text) { .name = "quiet", .key = 'q', \
	.type = OPT_FLAG, .p = (target), .help = (text) }
#define OPT_ROW_KEEP_GOING(target, text) { .name = "keep-going", \
	.key = 'k', .type = OPT_FLAG, .p = (target), .help = (text) }

struct opt_prog {
	const char *name;	/* the program, as its man page names it */
	const struct opt *opt;
	size_t n;
	const char *operands;	/* "[file ...]" at the end of usage, or NULL */
	int helpcol;		/* where -h's texts start (0: the longest + 2) */
	const int *quiet;	/* no OPT_NOTE lines while *quiet */
};

/*
 * The programs' front end: a program's options from its table, parsed
 * into their targets and given[] (may be NULL); returns the index of the
 * first operand. -h prints the usage line and the options on stdout and
 * exits 0; --version prints "prog VERSION" and exits 0; an unknown option
 * or a missing argument (getopt's message) prints the usage line on
 * stderr, and a bad value "prog: --x: 'v' is not ...", exiting XUSAGE.
 * Each OPT_NOTE option given gets its log line (not under *p->quiet).
 * Named as util.h's owt_* process functions it calls: it exits.
 */
int owt_options(const struct opt_prog *p, int argc, char **argv, char *given);

/*
 * Parse argv by the table (getopt_long: options and operands may mix,
 * "--" ends the options). given[i] (n of them, zeroed by the caller; or
 * NULL) is set for every option given, an alias's on the entry it
 * spells. *optindp is the first operand. Returns 0; OPT_HELP or
 * OPT_VERSION at the first -h or --version; or -1 with *code XUSAGE: err
 * holds the message, or is empty when getopt_long has already said why
 * on stderr (an unknown option, a missing argument).
 */
int opt_parse(const struct opt_prog *p, int argc, char **argv, char *given,
    int *optindp, char *err, size_t errsize, int *code);
/*
 * "usage: PROG [-dhkq] [-o prefix] [--long arg] ... OPERANDS\n": the short
 * flags bundled, then short options with an argument, then long-only
 * options (not aliases) in table order.
 */
void opt_usage(const struct opt_prog *p, struct buf *b);
/* The -h lines: "  -k, --keep-going  text" or "      --name arg  text". */
void opt_help(const struct opt_prog *p, struct buf *b);
/* The index of the option called name, or -1. */
int opt_find(const struct opt_prog *p, const char *name);
/* The log line of an OPT_NOTE option given, without the program name. */
void opt_note(const struct opt *o, char *msg, size_t size);

/*
 * Numbers of option arguments, for check functions: 0, or -1 with
 * "OPT: 'ARG' is not an integer" (a number, a size, K/N) or "OPT: 'ARG'
 * is out of range MIN..MAX" in err. opt is the option as written in
 * messages ("--seed").
 */
int opt_scan_int(const char *opt, const char *arg, long long min,
    long long max, long long *v, char *err, size_t errsize);
int opt_scan_double(const char *opt, const char *arg, double min, double max,
    double *v, char *err, size_t errsize);
int opt_scan_size(const char *opt, const char *arg, unsigned long long min,
    unsigned long long max, unsigned long long *v, char *err, size_t errsize);
int opt_scan_shard(const char *opt, const char *arg, unsigned long *k,
    unsigned long *n, char *err, size_t errsize);

/*
 * A check for an OPT_STR option that names one field of a record
 * (--json-keys key): not empty, no comma. 0, or -1 with "--NAME: 'ARG'
 * is not one field name".
 */
int opt_check_field(const struct opt *o, const char *arg, char *err,
    size_t errsize);
/*
 * A check for an option whose argument is one of o->words ("local
 * torch"), kept in o->p when it has one (also for OPT_NOTE). 0, or -1
 * with "--NAME: 'ARG' is not local or torch" and o->why after it.
 */
int opt_check_word(const struct opt *o, const char *arg, char *err,
    size_t errsize);

#endif
