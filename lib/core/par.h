/* par.h - ordered parallel work: jobs run on worker threads and come back in order */
#ifndef OWT_PAR_H
#define OWT_PAR_H

#include <stddef.h>

struct par;

/*
 * Start nthreads workers, each with a stack of stack bytes (0: the
 * default). Each calls init(arg) once for its own state (init may be
 * NULL: the state is NULL), then work(job, state) for each job it takes,
 * and fini(state) when stopped (fini may be NULL). At most depth jobs are
 * in flight, so the memory in use is bounded by the caller's job size.
 * With nthreads 0 the caller's thread does the work inside par_put.
 * Out of memory or threads is fatal (owt_fatal).
 */
struct par *par_start(int nthreads, size_t depth, size_t stack,
    void (*work)(void *job, void *state), void *(*init)(void *arg),
    void (*fini)(void *state), void *arg);
/*
 * Queue a job. When depth jobs are in flight, first wait for the oldest and
 * return it, done; else return NULL.
 */
void *par_put(struct par *p, void *job);
/* Wait for the oldest job in flight and return it, done; NULL when none is. */
void *par_get(struct par *p);
/* The oldest job in flight if it is done already, else NULL; never waits. */
void *par_poll(struct par *p);
/* Stop and join the workers (after par_get has returned NULL). */
void par_stop(struct par *p);

#endif
