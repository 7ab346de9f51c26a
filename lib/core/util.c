/* util.c - exit codes, diagnostics, checked allocation, the process */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

const char *owt_prog = "owt";

static struct owt_start_check *start_checks;

void
owt_start_check_add(struct owt_start_check *c)
{
	c->next = start_checks;
	start_checks = c;
}

void
owt_setprog(const char *argv0)
{
	struct owt_start_check *c;
	char err[256];
	const char *s;
	int code;

	if (argv0 != NULL && *argv0 != '\0') {
		s = strrchr(argv0, '/');
		owt_prog = s ? s + 1 : argv0;
	}
	for (c = start_checks; c != NULL; c = c->next)
		if (c->check(err, sizeof err, &code) < 0)
			owt_die(code, "%s", err);
}

/* The length of the control character at s (C0, DEL, C1 in UTF-8), or 0. */
static int
ctl_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	if ((*u < 0x20 && *u != '\0') || *u == 0x7f)
		return 1;
	return *u == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f ? 2 : 0;
}

void
owt_put_escaped(FILE *f, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *p;
	char e[4] = { '\\', 'x' };
	int k = 0;

	for (;;) {
		for (p = s; *p != '\0' && (k = ctl_len(p)) == 0; p++)
			;
		fwrite(s, 1, (size_t)(p - s), f);
		if (*p == '\0')
			return;
		if (*p == '\t' || *p == '\n' || *p == '\r') {
			e[1] = *p == '\t' ? 't' : *p == '\n' ? 'n' : 'r';
			fwrite(e, 1, 2, f);
			e[1] = 'x';
		} else
			for (s = p; s < p + k; s++) {
				e[2] = hex[(unsigned char)*s >> 4];
				e[3] = hex[*s & 0xf];
				fwrite(e, 1, 4, f);
			}
		s = p + k;
	}
}

/*
 * Messages quote input (URLs, file names, lines): its control bytes are
 * escaped so that a hostile line cannot drive the terminal. The line is
 * written under stderr's lock, whole among threads.
 */
static void
vwarn(const char *fmt, va_list ap, int errnum)
{
	char small[2048], *msg = small;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(small, sizeof small, fmt, aq);
	va_end(aq);
	if (n < 0)
		small[0] = '\0';
	if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)) != NULL)
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
	else
		msg = small;	/* cut short if memory runs out */
	flockfile(stderr);
	fprintf(stderr, "%s: ", owt_prog);
	owt_put_escaped(stderr, msg);
	if (errnum)
		fprintf(stderr, ": %s", strerror(errnum));
	fputc('\n', stderr);
	funlockfile(stderr);
	if (msg != small)
		free(msg);
}

void
owt_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap, 0);
	va_end(ap);
}

void
owt_die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap, 0);
	va_end(ap);
	exit(code);
}

void
owt_warn_errno(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	vwarn(fmt, ap, e);
	va_end(ap);
}

void
owt_die_errno(int code, const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	vwarn(fmt, ap, e);
	va_end(ap);
	exit(code);
}

void
owt_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap, 0);
	va_end(ap);
	exit(XSYS);
}

void
owt_fatal_threads(int n, int e)
{
	owt_fatal("cannot start %d thread%s: %s", n, n == 1 ? "" : "s",
	    strerror(e));
}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;

static void *
hold(void *arg)
{
	pthread_mutex_lock(&held);
	pthread_mutex_unlock(&held);
	return arg;
}

void
owt_threads_check(int n, size_t stack)
{
	pthread_attr_t attr;
	pthread_t *t;
	int i, k, e = 0;

	if (n <= 1)
		return;
	t = xcalloc((size_t)n - 1, sizeof *t);
	pthread_attr_init(&attr);
	if (stack && (e = pthread_attr_setstacksize(&attr, stack)) != 0)
		owt_fatal("cannot set a stack of %zu bytes: %s", stack,
		    strerror(e));
	/* held, so that no stack is freed and reused for the next */
	pthread_mutex_lock(&held);
	for (k = 0; k < n - 1; k++)
		if ((e = pthread_create(&t[k], &attr, hold, NULL)) != 0)
			break;
	pthread_mutex_unlock(&held);
	for (i = 0; i < k; i++)
		pthread_join(t[i], NULL);
	pthread_attr_destroy(&attr);
	free(t);
	if (e != 0)
		owt_fatal_threads(n, e);
}

int
owt_vfail(char *err, size_t errsize, int *code, int cls, int errnum,
    const char *fmt, va_list ap)
{
	int n;

	if (code != NULL)
		*code = cls;
	if (errsize == 0)
		return -1;
	n = vsnprintf(err, errsize, fmt, ap);
	if (n < 0)
		err[0] = '\0';
	else if (errnum && (size_t)n < errsize)
		snprintf(err + n, errsize - (size_t)n, ": %s", strerror(errnum));
	return -1;
}

int
owt_fail(char *err, size_t errsize, int *code, int cls, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	owt_vfail(err, errsize, code, cls, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int
owt_fail_errno(char *err, size_t errsize, int *code, int cls,
    const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	owt_vfail(err, errsize, code, cls, e, fmt, ap);
	va_end(ap);
	errno = e;
	return -1;
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		owt_die(XSYS, "out of memory allocating %zu bytes", n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		owt_die(XSYS, "out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		owt_die(XSYS, "out of memory allocating %zu bytes", n);
	return p;
}

void *
xgrow(void *p, size_t *cap, size_t need, size_t elsize)
{
	return xgrow_from(p, cap, need, elsize, 16);
}

void *
xgrow_from(void *p, size_t *cap, size_t need, size_t elsize, size_t first)
{
	size_t c = *cap;

	if (need <= c)
		return p;
	if (c < first)
		c = first;
	while (c < need) {
		if (c > SIZE_MAX / 2 / elsize)
			owt_die(XSYS, "out of memory: array of %zu elements", need);
		c *= 2;
	}
	*cap = c;
	return xrealloc(p, c * elsize);
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void
owt_die_sigpipe(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGPIPE);
	_exit(XSYS);
}

int
owt_close_stdout(void)
{
	int bad = ferror(stdout);

	if (fclose(stdout) != 0) {
		if (errno == EPIPE)
			owt_die_sigpipe();
		bad = 1;
	}
	if (bad) {
		if (bad && errno == 0)
			errno = EIO;
		owt_warn_errno("write error on standard output");
		return XSYS;
	}
	return XOK;
}

int
owt_finish(int status)
{
	int s = owt_close_stdout();

	return s != XOK ? s : status;
}

int
owt_help(const char *usage_line, const char *options_help)
{
	fputs(usage_line, stdout);
	fputs(options_help, stdout);
	return owt_finish(XOK);
}

void
owt_usage(const char *usage_line)
{
	fputs(usage_line, stderr);
	exit(XUSAGE);
}

int
owt_version(void)
{
	printf("%s %s\n", owt_prog, OWT_VERSION);
	return owt_finish(XOK);
}

void
owt_no_tty_stdout(void)
{
	if (isatty(STDOUT_FILENO))
		owt_die(XUSAGE, "refusing to write binary data to a terminal");
}

int
owt_ncpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

double
owt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t
owt_fnv1a(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

uint64_t
owt_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

#define HUGEPAGE ((size_t)2 << 20)

/* Fresh pages from the system, aligned: those never touched cost nothing. */
void *
huge_calloc(size_t size)
{
	char *p, *q;
	size_t map;

	if (size < HUGEPAGE)
		return xcalloc(1, size);
	size = (size + HUGEPAGE - 1) & ~(HUGEPAGE - 1);
	map = size + HUGEPAGE;
	p = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	if (p == MAP_FAILED)
		owt_fatal("out of memory allocating %zu bytes", size);
	q = (char *)(((uintptr_t)p + HUGEPAGE - 1) & ~(uintptr_t)(HUGEPAGE - 1));
	if (q > p)
		munmap(p, (size_t)(q - p));
	if (q + size < p + map)
		munmap(q + size, (size_t)(p + map - (q + size)));
	madvise(q, size, MADV_HUGEPAGE);
	return q;
}

void
huge_free(void *p, size_t size)
{
	if (p == NULL)
		return;
	if (size < HUGEPAGE)
		free(p);
	else
		munmap(p, (size + HUGEPAGE - 1) & ~(HUGEPAGE - 1));
}

void
heap_huge(size_t pad)
{
#ifdef M_TOP_PAD
	char *p, *lo, *hi;

	mallopt(M_ARENA_MAX, 1);
	mallopt(M_TOP_PAD, (int)pad);
	/* the heap grown now, by pad, to be advised whole */
	if ((p = malloc(HUGEPAGE)) == NULL)
		return;
	lo = (char *)(((uintptr_t)p + HUGEPAGE - 1) & ~(uintptr_t)(HUGEPAGE - 1));
	hi = (char *)((uintptr_t)sbrk(0) & ~(uintptr_t)(HUGEPAGE - 1));
	if (hi > lo)
		madvise(lo, (size_t)(hi - lo), MADV_HUGEPAGE);
	free(p);
#endif
}
