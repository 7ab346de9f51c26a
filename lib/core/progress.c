/* progress.c - progress on stderr: terminal only, at most once a second */
#include <stdio.h>
#include <unistd.h>

#include "core/progress.h"
#include "core/util.h"

void
progress_init(struct progress *p, int mode, const char *unit)
{
	p->tty = isatty(STDERR_FILENO);
	p->on = mode > 0 || (mode == 0 && p->tty);
	p->start = p->last = owt_now();
	p->calls = 0;
	p->unit = unit;
}

void
progress_tick(struct progress *p, uint64_t count, uint64_t bytes)
{
	double now, t;

	if (!p->on || (++p->calls & 255) != 0)
		return;
	now = owt_now();
	if (now - p->last < 1.0)
		return;
	p->last = now;
	t = now - p->start;
	fprintf(stderr, "%s%s: %llu %s, %.1f MB, %.1f MB/s%s",
	    p->tty ? "\r" : "", owt_prog, (unsigned long long)count, p->unit,
	    (double)bytes / 1e6, t > 0 ? (double)bytes / 1e6 / t : 0.0,
	    p->tty ? "\033[K" : "\n");
	fflush(stderr);
}

void
progress_done(struct progress *p)
{
	if (p->on && p->tty && p->last > p->start)
		fputs("\r\033[K", stderr);
}

double
progress_elapsed(const struct progress *p)
{
	return owt_now() - p->start;
}
