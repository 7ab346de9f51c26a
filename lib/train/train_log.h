/* train_log.h - the training log in Megatron-LM's format */
#ifndef OWT_TRAIN_LOG_H
#define OWT_TRAIN_LOG_H

#include <stdint.h>

#include "core/buf.h"

/*
 * One log interval, as Megatron's training_log sums it: the iterations
 * that advanced (their losses summed), those skipped on an fp16 overflow,
 * and of those the ones whose loss was not finite (nan).
 */
struct train_log {
	uint64_t iteration, train_iters;
	uint64_t consumed;	/* training samples consumed */
	int global;		/* the global batch */
	double ms;		/* the interval's wall time, milliseconds */
	double lr;		/* after the last iteration's step */
	double loss_scale;	/* 1 without fp16's scaler */
	double grad_norm;	/* the last iteration's; NAN: none (no clipping, skipped) */
	double loss_sum;
	uint64_t advanced, skipped, nan;
};

/*
 * Megatron's iteration line, without a newline: " iteration N/ M |
 * consumed samples: ... | elapsed time per iteration (ms): ... | learning
 * rate: ... | global batch size: ... | lm loss: ... | loss scale: ... |
 * grad norm: ... | number of skipped iterations: ... | number of nan
 * iterations: ... |". The loss shows when its mean is above 0, the norm
 * when there is one.
 */
void train_log_line(struct buf *b, const struct train_log *l);

/*
 * The interval's --log-json row, without a newline: {"iteration": N,
 * "loss": the mean (null when every iteration was skipped), "lr": lr,
 * "grad_norm": norm, "loss_scale": scale, "skipped": n (both only when
 * scale > 0, fp16's scaler), "tokens_per_s": tps, "elapsed_s": elapsed}.
 * A number JSON lacks, the norm of an fp16 overflow, is null.
 */
void train_log_json(struct buf *b, const struct train_log *l, double lr,
    double grad_norm, double scale, double tps, double elapsed);

/*
 * Megatron's validation block, three lines: dashes, " validation loss at
 * PREFIX | lm loss value: ... | lm loss PPL: ... | ", dashes.
 */
void train_log_validation(struct buf *b, const char *prefix, double loss);

#endif
