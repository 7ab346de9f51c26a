/* schedule.h - the learning-rate schedule: Megatron's OptimizerParamScheduler, in samples */
#ifndef OWT_SCHEDULE_H
#define OWT_SCHEDULE_H

#include <stdint.h>

/*
 * Megatron's OptimizerParamScheduler, counted in samples: linear warmup
 * from 0 to max_lr over warmup samples, then decay to min_lr at decay
 * samples, min_lr after. The first iteration runs at lr(0), which is 0
 * when there is warmup, as in Megatron.
 */
enum { SCHEDULE_CONSTANT, SCHEDULE_LINEAR, SCHEDULE_COSINE, SCHEDULE_INVSQRT };
struct schedule {
	int style;
	double max_lr, min_lr;
	uint64_t warmup;	/* samples */
	uint64_t decay;		/* samples; more than warmup */
};
double schedule_lr_at(const struct schedule *s, uint64_t samples);

#endif
