/* pool.h - worker threads that process items in parallel and finish them in order */
#ifndef OWT_POOL_H
#define OWT_POOL_H

#include <stddef.h>

struct pool;

/*
 * nthreads workers (0: the caller does the work in pool_put), each with a
 * stack of stack bytes (0: the default). work(item, arg) runs on a worker;
 * finish(item, arg) runs once per item, in the order of pool_put, one at a
 * time (under the pool's lock), on whichever worker completed the oldest
 * item. At most depth items are in the pool; pool_put waits for room.
 */
struct pool *pool_new(int nthreads, size_t depth, size_t stack,
    void (*work)(void *item, void *arg), void (*finish)(void *item, void *arg),
    void *arg);
void pool_put(struct pool *p, void *item);
/* Wait until every item put so far is finished. */
void pool_drain(struct pool *p);
/* Drain, stop the workers and free the pool. */
void pool_free(struct pool *p);

#endif
