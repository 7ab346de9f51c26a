/* schedule.c - the learning-rate schedule: Megatron's OptimizerParamScheduler, in samples */
#include <math.h>

#include "schedule.h"

double
schedule_lr_at(const struct schedule *s, uint64_t samples)
{
	double ratio, coeff, w, n;

	if (s->warmup > 0 && samples <= s->warmup)
		return s->max_lr * (double)samples / (double)s->warmup;
	switch (s->style) {
	case SCHEDULE_CONSTANT:
		return s->max_lr;
	case SCHEDULE_INVSQRT:
		w = s->warmup > 0 ? (double)s->warmup : 1;
		n = samples > 0 ? (double)samples : 1;
		return fmax(s->min_lr, s->max_lr * sqrt(w) / sqrt(n));
	}
	if (samples > s->decay)
		return s->min_lr;
	ratio = (double)(samples - s->warmup) / (double)(s->decay - s->warmup);
	coeff = s->style == SCHEDULE_COSINE ? 0.5 * (cos(M_PI * ratio) + 1) :
	    1 - ratio;
	return s->min_lr + coeff * (s->max_lr - s->min_lr);
}
