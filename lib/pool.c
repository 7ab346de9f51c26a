/* pool.c - worker threads that process items in parallel and finish them in order */
#include <pthread.h>
#include <stdlib.h>

#include "pool.h"
#include "util.h"

struct pool {
	pthread_mutex_t mu;
	pthread_cond_t work_cv, room_cv, idle_cv;
	pthread_t *th;
	int nth, stop;
	void **slot;
	unsigned char *done;
	size_t depth;
	unsigned long head, next, tail;	/* oldest unfinished, next to work, next free */
	void (*work)(void *, void *);
	void (*finish)(void *, void *);
	void *arg;
};

/* Finish the completed items at the head, in order. Called locked. */
static void
finish_ready(struct pool *p)
{
	while (p->head < p->next && p->done[p->head % p->depth]) {
		p->done[p->head % p->depth] = 0;
		p->finish(p->slot[p->head % p->depth], p->arg);
		p->head++;
		pthread_cond_broadcast(&p->room_cv);
	}
	if (p->head == p->tail)
		pthread_cond_broadcast(&p->idle_cv);
}

static void *
worker(void *arg)
{
	struct pool *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		unsigned long i;

		while (p->next == p->tail && !p->stop)
			pthread_cond_wait(&p->work_cv, &p->mu);
		if (p->next == p->tail)
			break;
		i = p->next++;
		pthread_mutex_unlock(&p->mu);
		p->work(p->slot[i % p->depth], p->arg);
		pthread_mutex_lock(&p->mu);
		p->done[i % p->depth] = 1;
		finish_ready(p);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct pool *
pool_new(int nthreads, size_t depth, size_t stack,
    void (*work)(void *, void *), void (*finish)(void *, void *), void *arg)
{
	struct pool *p = xcalloc(1, sizeof *p);
	pthread_attr_t attr;
	int i;

	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work_cv, NULL);
	pthread_cond_init(&p->room_cv, NULL);
	pthread_cond_init(&p->idle_cv, NULL);
	p->depth = depth < 1 ? 1 : depth;
	p->slot = xcalloc(p->depth, sizeof *p->slot);
	p->done = xcalloc(p->depth, 1);
	p->work = work;
	p->finish = finish;
	p->arg = arg;
	p->nth = nthreads;
	p->th = xcalloc(nthreads > 0 ? nthreads : 1, sizeof *p->th);
	pthread_attr_init(&attr);
	if (stack)
		pthread_attr_setstacksize(&attr, stack);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&p->th[i], &attr, worker, p) != 0)
			owt_die(XSYS, "cannot start a worker thread");
	pthread_attr_destroy(&attr);
	return p;
}

void
pool_put(struct pool *p, void *item)
{
	if (p->nth == 0) {
		p->work(item, p->arg);
		p->finish(item, p->arg);
		return;
	}
	pthread_mutex_lock(&p->mu);
	while (p->tail - p->head >= p->depth)
		pthread_cond_wait(&p->room_cv, &p->mu);
	p->slot[p->tail % p->depth] = item;
	p->tail++;
	pthread_cond_signal(&p->work_cv);
	pthread_mutex_unlock(&p->mu);
}

void
pool_drain(struct pool *p)
{
	pthread_mutex_lock(&p->mu);
	while (p->head != p->tail)
		pthread_cond_wait(&p->idle_cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void
pool_free(struct pool *p)
{
	int i;

	pool_drain(p);
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->work_cv);
	pthread_mutex_unlock(&p->mu);
	for (i = 0; i < p->nth; i++)
		pthread_join(p->th[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work_cv);
	pthread_cond_destroy(&p->room_cv);
	pthread_cond_destroy(&p->idle_cv);
	free(p->slot);
	free(p->done);
	free(p->th);
	free(p);
}
