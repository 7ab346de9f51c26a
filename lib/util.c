/* util.c - exit codes, diagnostics, checked allocation, option numbers */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

const char *owt_prog = "owt";

void
owt_setprog(const char *argv0)
{
	const char *s;

	if (argv0 == NULL || *argv0 == '\0')
		return;
	s = strrchr(argv0, '/');
	owt_prog = s ? s + 1 : argv0;
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
	size_t c = *cap;

	if (need <= c)
		return p;
	if (c < 16)
		c = 16;
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

long long
opt_int(const char *opt, const char *arg, long long min, long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (end == arg || *end != '\0' || errno == ERANGE)
		owt_die(XUSAGE, "%s: '%s' is not an integer", opt, arg);
	if (v < min || v > max)
		owt_die(XUSAGE, "%s: '%s' is out of range %lld..%lld", opt, arg,
		    min, max);
	return v;
}

double
opt_double(const char *opt, const char *arg, double min, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || *end != '\0' || errno == ERANGE || isnan(v))
		owt_die(XUSAGE, "%s: '%s' is not a number", opt, arg);
	if (v < min || v > max)
		owt_die(XUSAGE, "%s: '%s' is out of range %g..%g", opt, arg,
		    min, max);
	return v;
}

unsigned long long
opt_size(const char *opt, const char *arg, unsigned long long min,
    unsigned long long max)
{
	char *end;
	unsigned long long v, mul = 1;

	errno = 0;
	if (*arg == '-' || *arg == '+')
		owt_die(XUSAGE, "%s: '%s' is not a size", opt, arg);
	v = strtoull(arg, &end, 10);
	if (end == arg || errno == ERANGE)
		owt_die(XUSAGE, "%s: '%s' is not a size", opt, arg);
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': mul = 1ULL << 10; end++; break;
	case 'm': case 'M': mul = 1ULL << 20; end++; break;
	case 'g': case 'G': mul = 1ULL << 30; end++; break;
	case 't': case 'T': mul = 1ULL << 40; end++; break;
	default: break;
	}
	if (*end != '\0' || v > ULLONG_MAX / mul)
		owt_die(XUSAGE, "%s: '%s' is not a size", opt, arg);
	v *= mul;
	if (v < min || v > max)
		owt_die(XUSAGE, "%s: '%s' is out of range %llu..%llu", opt, arg,
		    min, max);
	return v;
}

void
opt_shard(const char *opt, const char *arg, unsigned long *k, unsigned long *n)
{
	const char *slash = strchr(arg, '/');
	char *ks;

	if (slash == NULL)
		owt_die(XUSAGE, "%s: '%s' is not K/N", opt, arg);
	ks = xstrndup(arg, (size_t)(slash - arg));
	*n = (unsigned long)opt_int(opt, slash + 1, 1, 1L << 30);
	*k = (unsigned long)opt_int(opt, ks, 0, (long long)*n - 1);
	free(ks);
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
owt_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}
