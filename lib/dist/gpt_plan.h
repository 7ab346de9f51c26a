/* gpt_plan.h - gpt-train --dry-run: a layout's parameters, memory, communication, bubble and FLOPs, without data, devices or MPI */
#ifndef OWT_GPT_PLAN_H
#define OWT_GPT_PLAN_H

#include <stddef.h>

#include "core/buf.h"
#include "dist/dist.h"
#include "model/gpt.h"

/* What gpt-train would run: the options' model, batch and layout. */
struct gpt_plan_in {
	struct gpt_config cfg;	/* vocab_pad unused: div pads per layout */
	int vocab_div;		/* --make-vocab-size-divisible-by */
	int tp, pp, world;	/* world: the launcher's, or --world-size */
	int ranks_per_node;
	int micro_batch, global_batch, seq;
	int zero;		/* --use-distributed-optimizer */
	struct gpt_recompute rc;
};

/*
 * One rank class: a pipeline stage's ranks (first, a middle one, last).
 * The byte counts are backend memory as gpt.c and train.c allocate it
 * for the rank, exactly (but zero_optim, which is the even share).
 */
struct gpt_plan_rank {
	int stage;
	int l0, l1;
	size_t params;		/* elements held (padding included): m.nparams */
	size_t ngrads;		/* elements of the gradients (m.ngrads) */
	int slots;		/* 1F1B activation sets */
	size_t b_params, b_grads, b_optim, b_acc, b_acts;
	size_t total;		/* their sum */
	/*
	 * The last tensor-parallel rank of the last stage holds fewer real
	 * vocabulary rows (the padding), so fewer logits: its activations
	 * and total (the same as tp rank 0's elsewhere).
	 */
	size_t b_acts_tplast, total_tplast;
	double mg_acts;		/* Korthikanti 2022: activations, bytes */
	double mg_static;	/* 18 B/param, or 6 + 12/d */
	double tp_bytes, pp_bytes, dp_bytes, emb_bytes;	/* sent an iteration */
	int tp_inter, pp_inter, dp_inter;	/* 1: the group spans nodes */
};

struct gpt_plan {
	struct gpt_plan_in in;
	struct dist d;		/* world rank 0's */
	int nrank;		/* rank classes: 1 to 3 */
	struct gpt_plan_rank r[3];
	size_t total_params;	/* gpt_nparams: the model without padding */
	double narayanan;	/* 12lh^2 (1 + 13/(12h) + (V+s)/(12lh)) */
	double bubble, idle;	/* (p-1)/m, (p-1)/(m+p-1) */
	double flops;		/* an iteration's, model FLOPs */
};

/*
 * Plan the run. 0, or -1 with err and code (XUSAGE: the layout's errors,
 * dist_init's words).
 */
int gpt_plan_make(struct gpt_plan *p, const struct gpt_plan_in *in,
    char *err, size_t errsize, int *code);
/* The plan in words, for people (gpt-train(1), --dry-run). */
void gpt_plan_print(struct buf *out, const struct gpt_plan *p);

#endif
