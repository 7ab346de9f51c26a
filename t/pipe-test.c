/* pipe-test - lib/dist/pipeline.c's 1F1B schedule with a toy model, run by t/6101-dist.t under mpirun */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/comm.h"
#include "dist/pipeline.h"
#include "core/util.h"

#include "rank.h"

/*
 * pipe-test run M N       the ranks are the stages of a pipeline of M
 *                         micro-batches of N floats
 * pipe-test serial P M N  the same P stages one after the other, here
 * Stage s multiplies by a_s = 1 + s/8 and adds s + j/4 (micro-batch j);
 * the last stage's loss is half the sum of squares. Each stage prints
 * "stage S: grad G order OPS held H": the gradient of its a_s (%a, summed
 * over micro-batches in order), the order it ran its steps in and the
 * most micro-batches whose activations it held at once.
 */

struct toy {
	int s, p, m;
	size_t n;
	float a, b;
	float **in;		/* each micro-batch's input, kept for backward */
	double grad;
	char order[4096];
	int held, most;
};

static void
note(struct toy *t, char kind, int j)
{
	size_t len = strlen(t->order);

	snprintf(t->order + len, sizeof t->order - len, "%s%c%d",
	    len ? " " : "", kind, j);
}

static int
fwd(void *arg, int j, const float *in, float *out, char *e, size_t es, int *c)
{
	struct toy *t = arg;
	float *x = t->in[j];

	for (size_t i = 0; i < t->n; i++)
		x[i] = in ? in[i] : sinf((float)(j * t->n + i));
	if (out)
		for (size_t i = 0; i < t->n; i++)
			out[i] = x[i] * t->a + t->b + (float)j / 4;
	note(t, 'F', j);
	if (++t->held > t->most)
		t->most = t->held;
	return 0;
}

static int
bwd(void *arg, int j, const float *dout, float *din, char *e, size_t es, int *c)
{
	struct toy *t = arg;
	const float *x = t->in[j];
	float g = 0;

	for (size_t i = 0; i < t->n; i++) {
		/* the last stage: loss = sum(y^2) / 2, so dy = y */
		float dy = dout ? dout[i] : x[i] * t->a + t->b + (float)j / 4;

		g += dy * x[i];
		if (din)
			din[i] = dy * t->a;
	}
	t->grad += g;
	note(t, 'B', j);
	t->held--;
	return 0;
}

static void
toy_init(struct toy *t, int s, int p, int m, size_t n)
{
	memset(t, 0, sizeof *t);
	t->s = s;
	t->p = p;
	t->m = m;
	t->n = n;
	t->a = 1 + (float)s / 8;
	t->b = (float)s;
	t->in = xcalloc((size_t)m, sizeof *t->in);
	for (int j = 0; j < m; j++)
		t->in[j] = xcalloc(n, sizeof **t->in);
}

static void
toy_free(struct toy *t)
{
	for (int j = 0; j < t->m; j++)
		free(t->in[j]);
	free(t->in);
}

static void
toy_print(struct toy *t)
{
	printf("stage %d: grad %a order %s held %d\n", t->s, t->grad, t->order,
	    t->most);
}

int
main(int argc, char **argv)
{
	struct toy t;
	int p, m, s, j;
	size_t n;

	owt_setprog(argv[0]);
	if (argc == 4 && strcmp(argv[1], "run") == 0) {
		struct pipe_stage st = { fwd, bwd, &t, 0 };

		m = atoi(argv[2]);
		n = strtoul(argv[3], NULL, 10);
		if (comm_init(&world, 600, err, sizeof err, &code) < 0)
			rank_fail();
		toy_init(&t, world->rank, world->size, m, n);
		st.n = n;
		if (pipeline_run(world->size > 1 ? world : NULL, m, &st, err,
		    sizeof err, &code) < 0)
			rank_fail();
		toy_print(&t);
		fflush(stdout);
		toy_free(&t);
		rank_finish();
		return 0;
	}
	if (argc == 5 && strcmp(argv[1], "serial") == 0) {
		struct toy *ts;
		struct pipe_op *ops;
		float *x, *y;

		p = atoi(argv[2]);
		m = atoi(argv[3]);
		n = strtoul(argv[4], NULL, 10);
		ts = xcalloc((size_t)p, sizeof *ts);
		x = xcalloc(n, sizeof *x);
		y = xcalloc(n, sizeof *y);
		ops = xcalloc(2 * (size_t)m, sizeof *ops);
		for (s = 0; s < p; s++)
			toy_init(&ts[s], s, p, m, n);
		for (j = 0; j < m; j++) {
			for (s = 0; s < p; s++) {
				fwd(&ts[s], j, s ? x : NULL, s < p - 1 ? y : NULL,
				    err, sizeof err, &code);
				memcpy(x, y, n * sizeof *x);
			}
			for (s = p - 1; s >= 0; s--) {
				bwd(&ts[s], j, s < p - 1 ? x : NULL, s ? y : NULL,
				    err, sizeof err, &code);
				memcpy(x, y, n * sizeof *x);
			}
		}
		/* the order and depth the schedule gives each stage */
		for (s = 0; s < p; s++) {
			int k, held = 0, most = 0;

			ts[s].order[0] = '\0';
			k = pipeline_schedule(p, s, m, ops);
			for (int i = 0; i < k; i++) {
				note(&ts[s], ops[i].kind, ops[i].micro);
				held += ops[i].kind == 'F' ? 1 : -1;
				most = held > most ? held : most;
			}
			ts[s].most = most;
			toy_print(&ts[s]);
			toy_free(&ts[s]);
		}
		free(ts);
		free(x);
		free(y);
		free(ops);
		return 0;
	}
	fprintf(stderr, "usage: pipe-test run m n | serial p m n\n");
	return XUSAGE;
}
