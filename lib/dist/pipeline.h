/* pipeline.h - pipeline parallelism: Megatron's 1F1B schedule of one stage over the micro-batches of an iteration */
#ifndef OWT_PIPELINE_H
#define OWT_PIPELINE_H

#include <stddef.h>

#include "comm/comm.h"

/*
 * A pipeline of p stages (lib/dist/dist.h's pipeline group, stage = group
 * rank) runs the m micro-batches of an iteration as Megatron's
 * non-interleaved 1F1B schedule does: stage s first runs
 * w = min(p - s - 1, m) forwards (the warm-up), then pairs of one forward
 * and one backward, then the w backwards left (the cool-down). Every
 * stage runs its forwards and its backwards in micro-batch order
 * 0 .. m-1, so gradients accumulate in the order one process adds them.
 * Activations go forward and their gradients backward with comm_sendrecv,
 * a send and a receive at once where the schedule pairs them (so that no
 * two stages wait on each other), in fp32, exactly.
 *
 * The stage's model part comes as callbacks. forward runs micro-batch j
 * on in (the previous stage's output; NULL on the first stage, which
 * reads its own inputs), keeps what its backward needs, and writes its
 * output to out (NULL on the last stage, which computes the loss).
 * backward runs micro-batch j's backward pass from dout (the next
 * stage's gradient of this stage's output; NULL on the last stage) and
 * writes the gradient of its input to din (NULL on the first stage).
 * Both return 0, or -1 with err and *code.
 */
struct pipe_stage {
	int (*forward)(void *arg, int j, const float *in, float *out,
	    char *err, size_t errsize, int *code);
	int (*backward)(void *arg, int j, const float *dout, float *din,
	    char *err, size_t errsize, int *code);
	void *arg;
	size_t n;		/* floats of one micro-batch's activations (B,T,C) */
};

/* One step of a stage's schedule. */
struct pipe_op {
	char kind;		/* 'F' forward, 'B' backward */
	int micro;
};

/*
 * The 2m steps of stage s of p over m micro-batches, in the order the
 * stage runs them, into ops (room for 2m); returns 2m. The number of
 * forwards a stage holds at once (its activation sets) is at most
 * min(p - s, m).
 */
int pipeline_schedule(int p, int s, int m, struct pipe_op *ops);

/*
 * Run one iteration's m micro-batches through stage pp->rank of the
 * pipeline pp (NULL: a pipeline of one stage). 0, or -1 with err and
 * *code from a callback or the ranks.
 */
int pipeline_run(struct comm *pp, int m, const struct pipe_stage *st,
    char *err, size_t errsize, int *code);

#endif
