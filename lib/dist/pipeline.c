/* pipeline.c - pipeline parallelism: Megatron's 1F1B schedule of one stage over the micro-batches of an iteration */
#include <stdlib.h>

#include "dist/pipeline.h"
#include "core/util.h"

int
pipeline_schedule(int p, int s, int m, struct pipe_op *ops)
{
	int w = p - s - 1 < m ? p - s - 1 : m, n = 0, i;

	for (i = 0; i < w; i++)
		ops[n++] = (struct pipe_op){ 'F', i };
	for (i = 0; i < m - w; i++) {
		ops[n++] = (struct pipe_op){ 'F', w + i };
		ops[n++] = (struct pipe_op){ 'B', i };
	}
	for (i = m - w; i < m; i++)
		ops[n++] = (struct pipe_op){ 'B', i };
	return n;
}

/*
 * Megatron's forward_backward_pipelining_without_interleaving: the
 * receives of the steady state are paired with the sends before them.
 */
int
pipeline_run(struct comm *pp, int m, const struct pipe_stage *st, char *err,
    size_t errsize, int *code)
{
	int p = pp ? pp->size : 1, s = pp ? pp->rank : 0;
	int first = s == 0, last = s == p - 1;
	int w = p - s - 1 < m ? p - s - 1 : m, r = m - w, i, rc = -1;
	int prev = first ? -1 : s - 1, next = last ? -1 : s + 1;
	size_t size = st->n * sizeof(float);
	float *x = first ? NULL : xmalloc(size);	/* received activations */
	float *y = last ? NULL : xmalloc(size);		/* to send forward */
	float *dy = last ? NULL : xmalloc(size);	/* received gradient */
	float *dx = first ? NULL : xmalloc(size);	/* to send backward */

#define SR(sb, to, rb, from, what) \
	(((to) >= 0 || (from) >= 0) && comm_sendrecv(pp, sb, (to) >= 0 ? \
	    size : 0, to, rb, (from) >= 0 ? size : 0, from, what, err, \
	    errsize, code) < 0)

	for (i = 0; i < w; i++) {
		if (SR(NULL, -1, x, prev, "activations") ||
		    st->forward(st->arg, i, x, y, err, errsize, code) < 0 ||
		    SR(y, next, NULL, -1, "activations"))
			goto out;
	}
	if (r > 0 && SR(NULL, -1, x, prev, "activations"))
		goto out;
	for (i = 0; i < r; i++) {
		if (st->forward(st->arg, w + i, x, y, err, errsize, code) < 0 ||
		    SR(y, next, dy, next, "activations and gradients") ||
		    st->backward(st->arg, i, dy, dx, err, errsize, code) < 0)
			goto out;
		if (i == r - 1) {
			if (SR(dx, prev, NULL, -1, "gradients"))
				goto out;
		} else if (SR(dx, prev, x, prev, "gradients and activations")) {
			goto out;
		}
	}
	for (i = r; i < m; i++) {
		if (SR(NULL, -1, dy, next, "gradients") ||
		    st->backward(st->arg, i, dy, dx, err, errsize, code) < 0 ||
		    SR(dx, prev, NULL, -1, "gradients"))
			goto out;
	}
	rc = 0;
out:
#undef SR
	free(x);
	free(y);
	free(dy);
	free(dx);
	return rc;
}
