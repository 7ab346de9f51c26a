/* unit-opt.c - options declared once (lib/core/opt.h): usage, -h, parsing, every value error, owt_options */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/opt.h"
#include "core/util.h"
#include "unit.h"

static struct {
	int force, quiet, n, mode;
	uint32_t vocab;
	uint64_t seed;
	double x;
	size_t memory;
	const char *output, *load, *word;
	struct opt_list paths;
	unsigned long shard[2];
} v;

/* --word, stored as a string, then checked. */
static int
check_word(const struct opt *o, const char *arg, char *err, size_t errsize)
{
	if (strcmp(*(const char **)o->p, "ok") != 0) {
		snprintf(err, errsize, "--%s: '%s' is not ok", o->name, arg);
		return -1;
	}
	return 0;
}

static const struct opt opts[] = {
	{ .name = "force", .key = 'f', .type = OPT_FLAG, .p = &v.force,
	    .help = "overwrite" },
	{ .name = "help", .key = 'h', .type = OPT_HELP,
	    .help = "print this help and exit" },
	{ .name = "output", .key = 'o', .arg = "prefix", .type = OPT_STR,
	    .p = &v.output, .help = "write prefix" },
	{ .name = "quiet", .key = 'q', .type = OPT_FLAG, .p = &v.quiet,
	    .help = "no summary" },
	{ .name = "a", .type = OPT_MODE, .p = &v.mode, .value = 1,
	    .help = "mode a" },
	{ .name = "b", .type = OPT_MODE, .p = &v.mode, .value = 2,
	    .help = "mode b" },
	{ .name = "c", .type = OPT_MODE, .p = &v.mode, .value = 3,
	    .help = "mode c" },
	{ .name = "data-path", .arg = "[weight] prefix ...", .type = OPT_STR,
	    .p = &v.paths, .flags = OPT_REPEAT, .help = "datasets" },
	{ .name = "int", .arg = "n", .type = OPT_INT, .p = &v.n, .min = -5,
	    .max = 5, .help = "an integer" },
	{ .name = "in_t", .arg = "n", .flags = OPT_ALIAS,
	    .help = "the same, another spelling" },
	{ .name = "load", .arg = "dir", .type = OPT_STR, .p = &v.load,
	    .flags = OPT_REQUIRED, .help = "the model" },
	{ .name = "memory", .arg = "size", .type = OPT_SIZE, .p = &v.memory,
	    .min = 1024, .max = 1 << 30, .help = "bytes" },
	{ .name = "note", .type = OPT_NOTE, .help = "accepted; no effect" },
	{ .name = "note-impl", .arg = "impl", .type = OPT_NOTE,
	    .help = "accepted; no effect" },
	{ .name = "seed", .arg = "n", .type = OPT_U64, .p = &v.seed,
	    .max = 4294967295.0, .help = "the seed" },
	{ .name = "shard", .arg = "k/n", .type = OPT_SHARD, .p = v.shard,
	    .help = "every n-th" },
	{ .name = "temperature", .arg = "x", .type = OPT_DOUBLE, .p = &v.x,
	    .max = 100, .help = "a number" },
	{ .name = "version", .type = OPT_VERSION,
	    .help = "print the version and exit" },
	{ .name = "very-long-option-name", .arg = "arg", .type = OPT_STR,
	    .help = "two spaces after it" },
	{ .name = "vocab", .arg = "n", .type = OPT_U32, .p = &v.vocab, .min = 1,
	    .max = 4294967295.0, .help = "tokens" },
	{ .name = "word", .arg = "w", .type = OPT_STR, .p = &v.word,
	    .check = check_word, .help = "a checked word" },
};
#define NOPTS (sizeof opts / sizeof *opts)

static const struct opt_prog prog = { "demo", opts, NOPTS, "[file ...]", 24,
    &v.quiet };

static const char want_usage[] =
    "usage: demo [-fhq] [-o prefix] [--a] [--b] [--c] "
    "[--data-path [weight] prefix ...] [--int n] --load dir "
    "[--memory size] [--note] [--note-impl impl] [--seed n] [--shard k/n] "
    "[--temperature x] [--version] [--very-long-option-name arg] "
    "[--vocab n] [--word w] [file ...]\n";

static const char want_help[] =
    "  -f, --force           overwrite\n"
    "  -h, --help            print this help and exit\n"
    "  -o, --output prefix   write prefix\n"
    "  -q, --quiet           no summary\n"
    "      --a               mode a\n"
    "      --b               mode b\n"
    "      --c               mode c\n"
    "      --data-path [weight] prefix ...  datasets\n"
    "      --int n           an integer\n"
    "      --in_t n          the same, another spelling\n"
    "      --load dir        the model\n"
    "      --memory size     bytes\n"
    "      --note            accepted; no effect\n"
    "      --note-impl impl  accepted; no effect\n"
    "      --seed n          the seed\n"
    "      --shard k/n       every n-th\n"
    "      --temperature x   a number\n"
    "      --version         print the version and exit\n"
    "      --very-long-option-name arg  two spaces after it\n"
    "      --vocab n         tokens\n"
    "      --word w          a checked word\n";

/* Parse args (argv[0] "demo" added) afresh; the result, given[] and optind. */
static int
parse(const char *const *args, char *given, int *ind, char *err, size_t size)
{
	char *argv[32];
	int argc = 1, code = 0, r, saved;

	memset(&v, 0, sizeof v);
	memset(given, 0, NOPTS);
	argv[0] = "demo";
	while (*args != NULL)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	/* getopt's own messages (an unknown option) are not the test's output */
	fflush(stderr);
	saved = dup(2);
	if (freopen("/dev/null", "w", stderr) == NULL)
		return -2;
	r = opt_parse(&prog, argc, argv, given, ind, err, size, &code);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	if (r < 0 && code != XUSAGE)
		return -3;
	return r;
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void
test_text(void)
{
	struct buf b = { 0 };

	opt_usage(&prog, &b);
	SAMES(b.p, want_usage, "the usage line: short flags bundled, short "
	    "options with arguments, long ones in table order, aliases left "
	    "out, OPT_REQUIRED unbracketed, the operands");
	b.len = 0;
	opt_help(&prog, &b);
	SAMES(b.p, want_help, "-h: every entry in table order, texts at the "
	    "column, two spaces after a longer name");
	buf_free(&b);
}

static void
test_parse(void)
{
	char given[NOPTS], err[256];
	int ind, r;

	r = parse(ARGS("-fq", "-o", "out", "--int", "-3", "file1",
	    "--data-path", "0.3", "--data-path", "b", "--memory", "2K",
	    "--seed", "4294967295", "--shard", "1/3", "--temperature", "0.5",
	    "--vocab", "50257", "--word", "ok", "--load", "m", "--a", "--",
	    "--x"), given, &ind, err, sizeof err);
	OK(r == 0, "a good command line parses");
	OK(v.force == 1 && v.quiet == 1 && strcmp(v.output, "out") == 0 &&
	    v.n == -3 && v.memory == 2048 && v.seed == 4294967295ULL &&
	    v.shard[0] == 1 && v.shard[1] == 3 && v.x == 0.5 &&
	    v.vocab == 50257 && strcmp(v.word, "ok") == 0 &&
	    strcmp(v.load, "m") == 0 && v.mode == 1,
	    "every type lands in its target");
	OK(v.paths.n == 2 && strcmp(v.paths.v[0], "0.3") == 0 &&
	    strcmp(v.paths.v[1], "b") == 0, "OPT_REPEAT keeps each occurrence, "
	    "in order");
	free(v.paths.v);
	OK(ind == 26, "optind is the first operand, after \"--\" (%d)", ind);
	OK(given[opt_find(&prog, "force")] && given[opt_find(&prog, "seed")] &&
	    given[opt_find(&prog, "a")] && !given[opt_find(&prog, "b")] &&
	    !given[opt_find(&prog, "help")], "given[] says which were given");
	OK(opt_find(&prog, "nope") == -1 && opt_find(&prog, "word") == 20,
	    "opt_find");

	r = parse(ARGS("--in_t", "4"), given, &ind, err, sizeof err);
	OK(r == 0 && v.n == 4 && given[opt_find(&prog, "int")] &&
	    !given[opt_find(&prog, "in_t")], "an alias sets its entry's "
	    "target, and given[] on that entry");
	r = parse(ARGS("--int", "1", "--int", "2"), given, &ind, err, sizeof err);
	OK(r == 0 && v.n == 2, "given twice, without OPT_REPEAT: the last "
	    "counts");
	r = parse(ARGS("--note", "--note-impl", "mmap", "x"), given, &ind, err,
	    sizeof err);
	OK(r == 0 && given[opt_find(&prog, "note")] &&
	    given[opt_find(&prog, "note-impl")] && ind == 4,
	    "OPT_NOTE: accepted, with or without an argument, and given");
	opt_note(&opts[opt_find(&prog, "note-impl")], err, sizeof err);
	SAMES(err, "--note-impl: accepted; no effect", "OPT_NOTE's log line");
	r = parse(ARGS("-f", "-h", "--nope"), given, &ind, err, sizeof err);
	OK(r == OPT_HELP, "-h stops the parse");
	r = parse(ARGS("--version", "--int", "x"), given, &ind, err, sizeof err);
	OK(r == OPT_VERSION, "--version stops the parse");
	r = parse(ARGS("--nope"), given, &ind, err, sizeof err);
	OK(r == -1 && err[0] == '\0', "an unknown option: -1, XUSAGE, "
	    "getopt's message");
	r = parse(ARGS("--int"), given, &ind, err, sizeof err);
	OK(r == -1 && err[0] == '\0', "a missing argument: -1, getopt's "
	    "message");
	r = parse(ARGS("--a=1"), given, &ind, err, sizeof err);
	OK(r == -1 && err[0] == '\0', "an argument to a flag: -1, getopt's "
	    "message");
}

static void
test_errors(void)
{
	static const char *const cases[][3] = {
		{ "--int", "x", "--int: 'x' is not an integer" },
		{ "--int", "", "--int: '' is not an integer" },
		{ "--int", "3x", "--int: '3x' is not an integer" },
		{ "--int", "99999999999999999999",
		    "--int: '99999999999999999999' is not an integer" },
		{ "--int", "6", "--int: '6' is out of range -5..5" },
		{ "--int", "-6", "--int: '-6' is out of range -5..5" },
		{ "--in_t", "9", "--int: '9' is out of range -5..5" },
		{ "--seed", "-1", "--seed: '-1' is out of range 0..4294967295" },
		{ "--seed", "4294967296",
		    "--seed: '4294967296' is out of range 0..4294967295" },
		{ "--vocab", "0", "--vocab: '0' is out of range 1..4294967295" },
		{ "--temperature", "x", "--temperature: 'x' is not a number" },
		{ "--temperature", "nan", "--temperature: 'nan' is not a number" },
		{ "--temperature", "1e999",
		    "--temperature: '1e999' is not a number" },
		{ "--temperature", "101",
		    "--temperature: '101' is out of range 0..100" },
		{ "--temperature", "-0.5",
		    "--temperature: '-0.5' is out of range 0..100" },
		{ "--memory", "1x", "--memory: '1x' is not a size" },
		{ "--memory", "-1", "--memory: '-1' is not a size" },
		{ "--memory", "1KK", "--memory: '1KK' is not a size" },
		{ "--memory", "99999999999T",
		    "--memory: '99999999999T' is not a size" },
		{ "--memory", "512",
		    "--memory: '512' is out of range 1024..1073741824" },
		{ "--memory", "2G",
		    "--memory: '2G' is out of range 1024..1073741824" },
		{ "--shard", "3", "--shard: '3' is not K/N" },
		{ "--shard", "3/3", "--shard: '3' is out of range 0..2" },
		{ "--shard", "0/0", "--shard: '0' is out of range 1..1073741824" },
		{ "--shard", "a/2", "--shard: 'a' is not an integer" },
		{ "--word", "no", "--word: 'no' is not ok" },
	};
	char given[NOPTS], err[256];
	size_t i;
	int ind, r;

	for (i = 0; i < sizeof cases / sizeof *cases; i++) {
		r = parse(ARGS(cases[i][0], cases[i][1]), given, &ind, err,
		    sizeof err);
		OK(r == -1, "%s '%s' is refused, XUSAGE", cases[i][0],
		    cases[i][1]);
		SAMES(err, cases[i][2], "%s '%s': the message", cases[i][0],
		    cases[i][1]);
	}
	r = parse(ARGS("--a", "--b"), given, &ind, err, sizeof err);
	OK(r == -1, "OPT_MODE: a second mode of the same target is refused");
	SAMES(err, "--a, --b and --c exclude each other", "the group named in "
	    "table order");
	r = parse(ARGS("--c", "--b"), given, &ind, err, sizeof err);
	OK(r == -1, "whichever comes first");
	r = parse(ARGS("--load", "m", "--b", "--b"), given, &ind, err,
	    sizeof err);
	OK(r == 0 && v.mode == 2, "the same mode twice is one mode, its value "
	    "set");
	r = parse(ARGS("--memory", "1K", "--memory", "1t"), given, &ind, err,
	    sizeof err);
	SAMES(err, "--memory: '1t' is out of range 1024..1073741824",
	    "size suffixes are powers of 1024, either case");
}

/* opt_check_word: one of the words, kept in p (OPT_NOTE too); else why. */
static void
test_word(void)
{
	const char *got = NULL;
	struct opt one = { .name = "dataset-impl", .type = OPT_STR,
	    .words = "mmap", .why = ", the only format owt writes" };
	struct opt two = { .name = "DDP-impl", .type = OPT_NOTE, .p = &got,
	    .words = "local torch" };
	struct opt four = { .name = "style", .type = OPT_STR,
	    .words = "constant linear cosine inverse-square-root" };
	char err[256];

	OK(opt_check_word(&one, "mmap", err, sizeof err) == 0, "the one word");
	OK(opt_check_word(&one, "mma", err, sizeof err) == -1 &&
	    opt_check_word(&one, "mmapx", err, sizeof err) == -1,
	    "a word's start or a longer word is not the word");
	SAMES(err, "--dataset-impl: 'mmapx' is not mmap, the only format owt "
	    "writes", "one word, and why");
	OK(opt_check_word(&two, "torch", err, sizeof err) == 0 &&
	    got != NULL && strcmp(got, "torch") == 0,
	    "the last word, kept in p");
	OK(opt_check_word(&two, "apex", err, sizeof err) == -1, "another word");
	SAMES(err, "--DDP-impl: 'apex' is not local or torch", "two words");
	OK(opt_check_word(&four, "cosine", err, sizeof err) == 0,
	    "a middle word");
	OK(opt_check_word(&four, "", err, sizeof err) == -1, "an empty word");
	SAMES(err, "--style: '' is not constant, linear, cosine or "
	    "inverse-square-root", "four words");
}

/* owt_options in a child "./demo ARGS": its status, stdout and stderr. */
static int
run(const char *const *args, char **out, char **errs)
{
	FILE *o = tmpfile(), *e = tmpfile();
	char *argv[32];
	int argc = 1, st, ind;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == 0) {
		dup2(fileno(o), 1);
		dup2(fileno(e), 2);
		argv[0] = "./demo";
		while (*args != NULL)
			argv[argc++] = (char *)*args++;
		argv[argc] = NULL;
		owt_setprog(argv[0]);
		ind = owt_options(&prog, argc, argv, NULL);
		printf("optind %d\n", ind);
		exit(owt_finish(XOK));
	}
	waitpid(pid, &st, 0);
	*out = unit_file_text(o);
	*errs = unit_file_text(e);
	fclose(o);
	fclose(e);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
test_options(void)
{
	struct buf want = { 0 };
	char *out, *err;
	int rc;

	rc = run(ARGS("-q", "-h"), &out, &err);
	buf_adds(&want, want_usage);
	buf_adds(&want, want_help);
	OK(rc == 0, "owt_options -h: exit 0");
	SAMES(out, want.p, "-h: the usage line and the help on stdout");
	SAMES(err, "", "-h: nothing on stderr");
	free(out);
	free(err);

	rc = run(ARGS("--version"), &out, &err);
	OK(rc == 0, "--version: exit 0");
	SAMES(out, "demo " OWT_VERSION "\n", "--version: name and version");
	free(out);
	free(err);

	rc = run(ARGS("--nope"), &out, &err);
	want.len = 0;
	buf_printf(&want, "./demo: unrecognized option '--nope'\n%s",
	    want_usage);
	OK(rc == 2, "an unknown option: exit 2");
	SAMES(err, want.p, "an unknown option: getopt's message, then the "
	    "usage line, on stderr");
	SAMES(out, "", "an unknown option: nothing on stdout");
	free(out);
	free(err);

	rc = run(ARGS("--int", "7"), &out, &err);
	OK(rc == 2, "a bad value: exit 2");
	SAMES(err, "demo: --int: '7' is out of range -5..5\n",
	    "a bad value: 'prog: --x: ...', no usage line");
	free(out);
	free(err);

	rc = run(ARGS("--note", "f", "--note-impl", "mmap", "g"), &out, &err);
	OK(rc == 0, "OPT_NOTE options are accepted");
	SAMES(err, "demo: --note: accepted; no effect\n"
	    "demo: --note-impl: accepted; no effect\n",
	    "each OPT_NOTE given: one log line");
	SAMES(out, "optind 4\n", "operands after the options (permuted)");
	free(out);
	free(err);

	rc = run(ARGS("--note", "-q"), &out, &err);
	OK(rc == 0, "-q --note: accepted");
	SAMES(err, "", "-q: no OPT_NOTE lines");
	free(out);
	free(err);
	buf_free(&want);
}

/* opt_check_field: --json-keys key names one field. */
static void
test_field(void)
{
	static const struct opt o = { .name = "json-keys", .arg = "key",
	    .type = OPT_STR };
	char err[128];

	OK(opt_check_field(&o, "text", err, sizeof err) == 0,
	    "opt_check_field: a field name");
	OK(opt_check_field(&o, "a,b", err, sizeof err) == -1,
	    "opt_check_field: two names");
	SAMES(err, "--json-keys: 'a,b' is not one field name", "and why");
	OK(opt_check_field(&o, "", err, sizeof err) == -1,
	    "opt_check_field: none");
	SAMES(err, "--json-keys: '' is not one field name", "and why");
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	owt_setprog("unit-opt");
	test_text();
	test_parse();
	test_errors();
	test_options();
	test_field();
	test_word();
	return unit_done();
}
