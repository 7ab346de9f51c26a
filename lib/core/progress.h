/* progress.h - progress on stderr: terminal only, at most once a second */
#ifndef OWT_PROGRESS_H
#define OWT_PROGRESS_H

#include <stdint.h>

struct progress {
	int on;			/* print updates at all */
	int tty;		/* redraw one line, else one line each */
	double start, last;
	unsigned calls;
	const char *unit;	/* what is counted: "records", "tokens", ... */
};

/*
 * mode: -1 never (-q), 0 when stderr is a terminal, 1 always (--progress).
 */
void progress_init(struct progress *p, int mode, const char *unit);
/*
 * Called often; prints "\rprog: N unit, X MB, Y MB/s" at most once a
 * second. Cheap when nothing is due.
 */
void progress_tick(struct progress *p, uint64_t count, uint64_t bytes);
/* Clear the progress line, if one was drawn. */
void progress_done(struct progress *p);
/* Seconds since progress_init. */
double progress_elapsed(const struct progress *p);

#endif
