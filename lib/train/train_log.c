/* train_log.c - the training log in Megatron-LM's format */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/json.h"
#include "train/train_log.h"

/*
 * Python's format specs in C: {:8d} is %8d, {:.1f} %.1f, and {:.3E},
 * {:.6E} print the same two-digit exponents as %.3E, %.6E.
 */
void
train_log_line(struct buf *b, const struct train_log *l)
{
	uint64_t n = l->advanced + l->skipped;
	double loss = l->loss_sum / (double)(l->advanced ? l->advanced : 1);

	buf_printf(b, " iteration %8" PRIu64 "/%8" PRIu64 " |", l->iteration,
	    l->train_iters);
	buf_printf(b, " consumed samples: %12" PRIu64 " |", l->consumed);
	buf_printf(b, " elapsed time per iteration (ms): %.1f |",
	    l->ms / (double)(n ? n : 1));
	buf_printf(b, " learning rate: %.3E |", l->lr);
	buf_printf(b, " global batch size: %5d |", l->global);
	if (loss > 0)
		buf_printf(b, " lm loss: %.6E |", loss);
	buf_printf(b, " loss scale: %.1f |", l->loss_scale);
	if (!isnan(l->grad_norm))
		buf_printf(b, " grad norm: %.3f |", l->grad_norm);
	buf_printf(b, " number of skipped iterations: %3" PRIu64 " |",
	    l->skipped);
	buf_printf(b, " number of nan iterations: %3" PRIu64 " |", l->nan);
}

void
train_log_json(struct buf *b, const struct train_log *l, double lr,
    double grad_norm, double scale, double tps, double elapsed)
{
	struct json_w w;

	json_w_init(&w, b, JSON_SPACED);
	json_w_obj(&w);
	json_w_ku64(&w, "iteration", l->iteration);
	json_w_key(&w, "loss");
	json_w_num(&w, "%.9g", l->advanced ? l->loss_sum /
	    (double)l->advanced : NAN);
	json_w_key(&w, "lr");
	json_w_num(&w, "%.9g", lr);
	json_w_key(&w, "grad_norm");
	json_w_num(&w, "%.9g", grad_norm);
	if (scale > 0) {
		json_w_key(&w, "loss_scale");
		json_w_num(&w, "%.17g", scale);
		json_w_ku64(&w, "skipped", l->skipped);
	}
	json_w_key(&w, "tokens_per_s");
	json_w_num(&w, "%.1f", tps);
	json_w_key(&w, "elapsed_s");
	json_w_num(&w, "%.3f", elapsed);
	json_w_end(&w);
}

void
train_log_validation(struct buf *b, const char *prefix, double loss)
{
	struct buf s = { 0 };
	size_t i;

	buf_printf(&s, " validation loss at %s | lm loss value: %.6E | lm "
	    "loss PPL: %.6E | ", prefix, loss, exp(fmin(20, loss)));
	for (i = 0; i <= s.len; i++)
		buf_addc(b, '-');
	buf_printf(b, "\n%.*s\n", (int)s.len, s.p);
	for (i = 0; i <= s.len; i++)
		buf_addc(b, '-');
	buf_addc(b, '\n');
	buf_free(&s);
}
