/* rank.h - the error channel of the test drivers run as ranks under mpirun */
#ifndef OWT_RANK_H
#define OWT_RANK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "comm/comm.h"
#include "core/util.h"

/*
 * t/comm-test.c, t/train-test.c and t/pipe-test.c include this. The last
 * lib/ call's error (the library's convention: err, sizeof err,
 * &code), and the world while it stands: NULL before it starts and once
 * it is finished, so that a message never reads a freed world.
 */
static char err[1024];
static int code;
static struct comm *world;

static void rank_die(int status, const char *fmt, ...) OWT_PRINTF(2, 3)
    OWT_NORETURN;

/*
 * "PROG: rank R: msg" (R the world rank; "PROG: msg" while there is no
 * world) in one write: the lines of ranks that fail together reach
 * mpirun's stderr whole. (owt_warn writes a line in pieces.)
 */
static void
rank_die(int status, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	n = snprintf(line, sizeof line, "%s: ", owt_prog);
	if (world != NULL)
		n += snprintf(line + n, sizeof line - (size_t)n, "rank %d: ",
		    world->world_rank);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	if (write(2, line, (size_t)n) < 0)
		exit(status);
	exit(status);
}

/* The last lib/ call failed: its message, and its class (1 if it gave none). */
static void OWT_NORETURN
rank_fail(void)
{
	rank_die(code ? code : 1, "%s", err);
}

/* comm_finish of the world (train-test's is in train_ranks_close). */
static inline void
rank_finish(void)
{
	struct comm *w = world;

	world = NULL;
	if (comm_finish(w, err, sizeof err, &code) == -1)
		rank_fail();
}

#endif
