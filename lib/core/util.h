/* util.h - exit codes, diagnostics, checked allocation, the process */
#ifndef OWT_UTIL_H
#define OWT_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Exit status of every program (DESIGN.md, "Conventions"). */
enum {
	XOK = 0,	/* success */
	XDATA = 1,	/* bad input data */
	XUSAGE = 2,	/* usage error */
	XSYS = 3	/* system failure: I/O, memory, device */
};

#define OWT_VERSION "0.1.0"

#if defined(__GNUC__)
#define OWT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define OWT_NORETURN __attribute__((noreturn))
#else
#define OWT_PRINTF(a, b)
#define OWT_NORETURN
#endif

/* The program name used as the prefix of every diagnostic. */
extern const char *owt_prog;
/*
 * Set owt_prog from argv[0], first thing in main. It also runs the start
 * checks, the environment the library reads checked once so that library
 * code need not exit: the first that fails exits with its class and
 * message (in a program that reads input, lib/core/input.c's: a bad
 * OWT_MAX_LINE exits XUSAGE).
 */
void owt_setprog(const char *argv0);
/*
 * A module's start check, registered by a constructor in its file so that
 * it runs where the module is linked in, and util.c names nothing of it.
 * check returns 0, or -1 with the message in err and the class in *code.
 */
struct owt_start_check {
	int (*check)(char *err, size_t errsize, int *code);
	struct owt_start_check *next;
};
void owt_start_check_add(struct owt_start_check *c);

/*
 * "prog: message\n" on stderr, the control bytes of message (from input
 * quoted in it) escaped as by owt_put_escaped.
 */
void owt_warn(const char *fmt, ...) OWT_PRINTF(1, 2);
/* As owt_warn, then exit(code). */
void owt_die(int code, const char *fmt, ...) OWT_PRINTF(2, 3) OWT_NORETURN;
/* As owt_warn, with ": strerror(errno)" appended. */
void owt_warn_errno(const char *fmt, ...) OWT_PRINTF(1, 2);
void owt_die_errno(int code, const char *fmt, ...) OWT_PRINTF(2, 3) OWT_NORETURN;
/*
 * The one way library code exits: as owt_die(XSYS, ...), for what no
 * caller can handle (out of memory or threads, a broken invariant).
 */
void owt_fatal(const char *fmt, ...) OWT_PRINTF(1, 2) OWT_NORETURN;
/*
 * owt_fatal for n threads that could not all start, e pthread_create's
 * error: "cannot start N threads: why", exit 3.
 */
void owt_fatal_threads(int n, int e) OWT_NORETURN;
/*
 * Exit as owt_fatal_threads unless n threads, the caller among them, can
 * run now: n - 1 threads of stack bytes (0: the default) are started,
 * held until the last has started, and joined. For a pool that cannot
 * report a failure of its own, started just after: OpenMP's, whose
 * libgomp exits 1 with its own message (blas_init).
 */
void owt_threads_check(int n, size_t stack);

/*
 * The error convention of lib/: a function that can fail takes
 * (..., char *err, size_t errsize, int *code) last and returns -1 (or
 * NULL) with the message in err (cut to fit) and the exit class (XDATA,
 * XUSAGE or XSYS) in *code. owt_fail writes both (code may be NULL) and
 * returns -1; owt_fail_errno appends ": strerror(errno)", errno as it was
 * on entry. A buffer of OWT_ERRSIZE holds every message lib/ writes.
 */
#define OWT_ERRSIZE 1024
int owt_fail(char *err, size_t errsize, int *code, int cls,
    const char *fmt, ...) OWT_PRINTF(5, 6);
int owt_fail_errno(char *err, size_t errsize, int *code, int cls,
    const char *fmt, ...) OWT_PRINTF(5, 6);
/* owt_fail of a va_list, ": strerror(errnum)" appended unless errnum is 0. */
int owt_vfail(char *err, size_t errsize, int *code, int cls, int errnum,
    const char *fmt, va_list ap) OWT_PRINTF(6, 0);

/*
 * Write s with its control characters escaped: \t, \n and \r as such,
 * the other C0 bytes and DEL as \xHH (ESC is \x1b), the C1 controls in
 * UTF-8 (U+0080..U+009F) as their two bytes (\xc2\x9b). Other bytes,
 * backslashes included, pass unchanged.
 */
void owt_put_escaped(FILE *f, const char *s);

/* Allocation that exits with XSYS when memory runs out. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* Grow an array to hold at least need elements; doubles the capacity. */
void *xgrow(void *p, size_t *cap, size_t need, size_t elsize);
/* The same, its first capacity first elements (xgrow's: 16). */
void *xgrow_from(void *p, size_t *cap, size_t need, size_t elsize,
    size_t first);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/*
 * Memory for a big table, zeroed, in 2 MB pages where the system allows
 * (Linux transparent huge pages): random lookups then miss the TLB less.
 * huge_free takes the size given to huge_calloc.
 */
void *huge_calloc(size_t size);
void huge_free(void *p, size_t size);
/*
 * malloc's memory in 2 MB pages as well, for a program that touches
 * megabytes of it: one arena for every thread (another thread's arena is
 * out of reach), its heap grown pad bytes ahead and advised so. Where a
 * 4 KB page's first touch is dear (11 us on a virtual machine here), the
 * thousands of them cost more than the zeroing of whole 2 MB pages.
 */
void heap_huge(size_t pad);

/*
 * Flush and close stdout, and check that every write succeeded.
 * Returns XOK, or XSYS after printing why (a full disk, a closed pipe).
 */
int owt_close_stdout(void);
/*
 * End as a write to a closed pipe ends a program by default: killed by
 * SIGPIPE, quietly (status 141 in the shell). For a program that ignores
 * SIGPIPE (owt-fetch: libcurl's sockets) and gets EPIPE on its output.
 */
void owt_die_sigpipe(void) OWT_NORETURN;
/* Exit status of a run: XSYS if stdout failed, else status. */
int owt_finish(int status);

/*
 * The same by hand, for programs without a table: -h prints the usage
 * line and the options on stdout and returns the exit status; a usage
 * error prints the usage line on stderr and exits XUSAGE; --version
 * prints "prog VERSION" and returns the exit status.
 */
int owt_help(const char *usage_line, const char *options_help);
void owt_usage(const char *usage_line) OWT_NORETURN;
int owt_version(void);

/* Refuse to write binary data to a terminal (exit XUSAGE). */
void owt_no_tty_stdout(void);

/* The number of online processors, at least 1. */
int owt_ncpu(void);
/* Monotonic seconds. */
double owt_now(void);

/* splitmix64: the project's seeded mixing function and counter-based PRNG. */
uint64_t owt_mix64(uint64_t x);
/* FNV-1a of s[0..n), 64 bits: the hash of byte strings (mix it after). */
uint64_t owt_fnv1a(const char *s, size_t n);

/*
 * A hash of the short strings of the tokenizers' hot loops, mixed: eight
 * bytes a step, the last 4-7 or 1-3 by two loads or three, inlined (FNV,
 * a byte a step and a call, was a tenth of a lookup's time).
 */
static inline uint64_t
owt_hash_bytes(const void *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	if (n >= 4) {
		uint32_t a, b;

		memcpy(&a, p, 4);
		memcpy(&b, p + n - 4, 4);
		h = (h ^ ((uint64_t)b << 32 | a)) * 0x94d049bb133111ebull;
	} else if (n > 0) {
		w = (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 |
		    (uint64_t)p[n - 1] << 16;
		h = (h ^ w) * 0x94d049bb133111ebull;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

/*
 * Whether a[0..n) and b[0..n) are the same bytes: for the short strings
 * of the tokenizers' lookups, two loads a side (overlapping) rather than
 * a call of memcmp.
 */
static inline int
owt_same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t w[4];
	uint32_t h[4];

	if (n > 16)
		return memcmp(a, b, n) == 0;
	if (n >= 8) {
		memcpy(&w[0], a, 8);
		memcpy(&w[1], b, 8);
		memcpy(&w[2], a + n - 8, 8);
		memcpy(&w[3], b + n - 8, 8);
		return ((w[0] ^ w[1]) | (w[2] ^ w[3])) == 0;
	}
	if (n >= 4) {
		memcpy(&h[0], a, 4);
		memcpy(&h[1], b, 4);
		memcpy(&h[2], a + n - 4, 4);
		memcpy(&h[3], b + n - 4, 4);
		return ((h[0] ^ h[1]) | (h[2] ^ h[3])) == 0;
	}
	return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] &&
	    a[n - 1] == b[n - 1]);
}

/* A pair of 32-bit ids, a << 32 | b, mixed for a table's low bits. */
static inline uint64_t
owt_hash_pair(uint64_t key)
{
	key *= 0x9e3779b97f4a7c15ull;
	return key ^ (key >> 32);
}

/* Most callers of the above use these too. */
#include "core/buf.h"
#include "core/tally.h"

#endif
