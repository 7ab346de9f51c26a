/* par.c - ordered parallel work: jobs run on worker threads and come back in order */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/par.h"
#include "core/util.h"

struct par {
	pthread_mutex_t mu;
	pthread_cond_t queued, finished;
	void **job;
	char *done;
	size_t depth;
	size_t head;		/* the oldest job not yet returned */
	size_t next;		/* the next job a worker takes */
	size_t tail;		/* where the next job is queued */
	int stop;
	void (*work)(void *, void *);
	void *(*init)(void *);
	void (*fini)(void *);
	void *arg;
	pthread_t *threads;
	int nthreads;
	void *state;		/* the caller's own, when nthreads is 0 */
};

static void *
worker(void *arg)
{
	struct par *p = arg;
	void *state = p->init ? p->init(p->arg) : NULL;
	size_t k;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->next == p->tail && !p->stop)
			pthread_cond_wait(&p->queued, &p->mu);
		if (p->next == p->tail)
			break;
		k = p->next++ % p->depth;
		pthread_mutex_unlock(&p->mu);
		p->work(p->job[k], state);
		pthread_mutex_lock(&p->mu);
		p->done[k] = 1;
		pthread_cond_signal(&p->finished);
	}
	pthread_mutex_unlock(&p->mu);
	if (p->fini)
		p->fini(state);
	return NULL;
}

struct par *
par_start(int nthreads, size_t depth, size_t stack,
    void (*work)(void *, void *), void *(*init)(void *), void (*fini)(void *),
    void *arg)
{
	struct par *p = xcalloc(1, sizeof *p);
	pthread_attr_t attr;
	int i, e;

	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->queued, NULL);
	pthread_cond_init(&p->finished, NULL);
	p->depth = depth;
	p->job = xcalloc(depth, sizeof *p->job);
	p->done = xcalloc(depth, 1);
	p->work = work;
	p->init = init;
	p->fini = fini;
	p->arg = arg;
	p->nthreads = nthreads;
	if (nthreads == 0 && init)
		p->state = init(arg);
	p->threads = xcalloc(nthreads > 0 ? (size_t)nthreads : 1,
	    sizeof *p->threads);
	pthread_attr_init(&attr);
	if (stack && (e = pthread_attr_setstacksize(&attr, stack)) != 0)
		owt_fatal("cannot set a stack of %zu bytes: %s", stack,
		    strerror(e));
	for (i = 0; i < nthreads; i++)
		if ((e = pthread_create(&p->threads[i], &attr, worker, p)) != 0)
			owt_fatal_threads(nthreads, e);
	pthread_attr_destroy(&attr);
	return p;
}

/* Called locked, with a job in flight: wait for the oldest, take it. */
static void *
take_oldest(struct par *p)
{
	size_t k = p->head % p->depth;
	void *job;

	while (!p->done[k])
		pthread_cond_wait(&p->finished, &p->mu);
	job = p->job[k];
	p->done[k] = 0;
	p->head++;
	return job;
}

void *
par_put(struct par *p, void *job)
{
	void *old = NULL;

	if (p->nthreads == 0) {
		p->work(job, p->state);
		return job;
	}
	pthread_mutex_lock(&p->mu);
	if (p->tail - p->head == p->depth)
		old = take_oldest(p);
	p->job[p->tail++ % p->depth] = job;
	pthread_cond_signal(&p->queued);
	pthread_mutex_unlock(&p->mu);
	return old;
}

void *
par_get(struct par *p)
{
	void *job = NULL;

	pthread_mutex_lock(&p->mu);
	if (p->head != p->tail)
		job = take_oldest(p);
	pthread_mutex_unlock(&p->mu);
	return job;
}

void *
par_poll(struct par *p)
{
	void *job = NULL;
	size_t k;

	pthread_mutex_lock(&p->mu);
	k = p->head % p->depth;
	if (p->head != p->tail && p->done[k]) {
		job = p->job[k];
		p->done[k] = 0;
		p->head++;
	}
	pthread_mutex_unlock(&p->mu);
	return job;
}

void
par_stop(struct par *p)
{
	int i;

	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->queued);
	pthread_mutex_unlock(&p->mu);
	for (i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	if (p->nthreads == 0 && p->fini)
		p->fini(p->state);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->queued);
	pthread_cond_destroy(&p->finished);
	free(p->threads);
	free(p->job);
	free(p->done);
	free(p);
}
