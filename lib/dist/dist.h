/* dist.h - Megatron's rank layout: tensor-, pipeline- and data-parallel ranks, and each rank's part of the model */
#ifndef OWT_DIST_H
#define OWT_DIST_H

#include <stddef.h>

#include "model/gpt.h"

/*
 * A world of TP x PP x DP ranks laid out as Megatron lays them out,
 * tensor-parallel ranks innermost:
 *	rank = pp * (DP * TP) + dp * TP + tp
 * so a tensor-parallel group is TP consecutive ranks (one node), a
 * pipeline group strides by world / PP, and a data-parallel group shares
 * (pp, tp). Stage pp holds layers [pp * L/PP, (pp+1) * L/PP); the first
 * stage also the token and position embeddings, the last the final
 * LayerNorm and a copy of the token embedding (the tied output layer).
 * Within a stage, the TP ranks split the tensors as Megatron does:
 *
 *	QKVW (C,3C), QKVB	columns: q, k and v each [r*C/TP, (r+1)*C/TP):
 *				the heads [r*NH/TP, (r+1)*NH/TP)
 *	FCW (C,4C), FCB		columns [r*4C/TP, (r+1)*4C/TP)
 *	ATTPROJW (C,C)		rows [r*C/TP, (r+1)*C/TP)
 *	FCPROJW (4C,C)		rows [r*4C/TP, (r+1)*4C/TP)
 *	WTE (Vp,C)		rows [r*Vp/TP, (r+1)*Vp/TP), Vp = V padded to
 *				a multiple of div*TP (vocabulary-parallel)
 *	the rest		whole on every TP rank
 *
 * A rank's part of each tensor is stored in the same row-major order as
 * the whole, its shape the split one (QKVW: (C,3C/TP), q k v each C/TP
 * wide, so the local heads are a model of NH/TP heads).
 */
struct dist {
	int world, rank;
	int tp, pp, dp;			/* sizes: world = tp * pp * dp */
	int tp_rank, pp_rank, dp_rank;	/* this rank's */
	int micro_batch;		/* samples a micro-batch */
	int micro;			/* micro-batches a rank an iteration */
	int l0, l1;			/* this stage's layers [l0, l1) */
	int nlayer, nembd, nhead;	/* L, C, NH */
	int maxpos;			/* maxT */
	int vocab, vocab_pad;		/* V, and Vp padded to div * tp */
};

/*
 * Check the layout (exit class XUSAGE, Megatron's conditions): world a
 * multiple of TP x PP, layers of PP, heads and hidden size of TP, the
 * global batch of micro-batch x DP. cfg gives L, C, NH, maxT and V.
 */
int dist_init(struct dist *d, int world, int rank, int tp, int pp,
    const struct gpt_config *cfg, int vocab_div, int micro_batch,
    int global_batch, char *err, size_t errsize, int *code);

/* The world rank at (pp, dp, tp), and back. */
int dist_rank(const struct dist *d, int pp, int dp, int tp);
void dist_coords(const struct dist *d, int rank, int *pp, int *dp, int *tp);

enum {
	DIST_TP,	/* same pp and dp: the tensor-parallel group */
	DIST_DP,	/* same pp and tp: gradients are summed over it */
	DIST_PP,	/* same dp and tp, by stage: the pipeline */
	DIST_EMB,	/* first and last stage of the pipeline: the tied embedding */
	DIST_NGROUP
};

/*
 * The world ranks of rank's group of that kind, in group rank order, into
 * ranks (room for the world); returns their number, 0 where the rank has
 * none (DIST_EMB on a middle stage). With PP = 1 the embedding group is
 * the rank alone.
 */
int dist_group(const struct dist *d, int rank, int kind, int *ranks);

/*
 * A rank's part of one slice (layer) of a tensor, as runs of rows: row i
 * (i < rows) is n elements at global + i * gstride in the whole slice
 * (row-major, the single-process shapes of gpt.h, vocabulary rows < V
 * only) and at local + i * lstride in the rank's part.
 */
struct dist_run {
	size_t global, local;
	size_t n, rows;
	size_t gstride, lstride;
};
#define DIST_MAXRUN 3

/*
 * Rank's runs of tensor k, layer l (0 for tensors without layers) into
 * run[DIST_MAXRUN]; returns their number, 0 where the rank holds none of
 * it (another stage's, or only vocabulary padding).
 */
int dist_runs(const struct dist *d, int rank, int k, int l,
    struct dist_run *run);
/*
 * The shape of one slice of tensor k, whole (local 0; the token
 * embedding's V real rows, as a checkpoint holds it) or as each TP rank
 * holds it (local 1; Vp/TP rows); returns the number of dimensions (1
 * or 2).
 */
int dist_shape(const struct dist *d, int k, int local, int dim[2]);
/*
 * 1 where rank's copy of tensor k is the one a model replica counts (the
 * gradient norm, the checkpoint): tensor-parallel rank 0 for a tensor
 * every TP rank holds whole, the first stage for the token embedding.
 */
int dist_owner(const struct dist *d, int rank, int k);

/*
 * The first sample of micro-batch j (0 <= j < micro) of rank's
 * data-parallel replica, consumed samples before the iteration: the
 * global batch is micro steps of micro_batch * DP consecutive samples,
 * replica dp taking the dp-th micro_batch of each (Megatron's sampler).
 */
long long dist_sample(const struct dist *d, int rank, long long consumed,
    int j);

/*
 * n elements in parts: off[0] = 0 <= off[1] <= ... <= off[parts] = n,
 * every boundary but the last a multiple of align (ZeRO's shards).
 */
void dist_split(size_t n, int parts, size_t align, size_t *off);

#endif
