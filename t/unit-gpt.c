/* unit-gpt.c - the model library: JSON reader, safetensors, checkpoints, LR schedule, layers, dropout; `dump DIR` for the PyTorch check */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blas.h"
#include "ckpt.h"
#include "gpt.h"
#include "tjson.h"
#include "train.h"
#include "util.h"
#include "unit.h"

/* A small model: every code path, fast under the sanitizers. */
static const struct gpt_config small = {
	.nlayer = 2, .nhead = 4, .nembd = 64, .maxpos = 32, .vocab = 300,
	.vocab_pad = 384, .ln_eps = 1e-5f,
};

static uint64_t rng_state = 7;

static uint32_t
rnd(uint32_t n)
{
	return (uint32_t)(owt_mix64(rng_state++) % n);
}

/* A sample source over a fixed array of (n, T+1) tokens. */
struct arraysrc {
	const uint32_t *tok;
	int T;
	uint64_t n;
};

static int
array_get(void *arg, uint64_t i, uint32_t *tokens, char *err, size_t errsize,
    int *code)
{
	struct arraysrc *a = arg;

	if (i >= a->n) {
		snprintf(err, errsize, "sample %llu beyond %llu",
		    (unsigned long long)i, (unsigned long long)a->n);
		*code = XDATA;
		return -1;
	}
	memcpy(tokens, a->tok + i * (a->T + 1), (size_t)(a->T + 1) * sizeof *tokens);
	return 0;
}

static void
die_if(int fail, const char *what, const char *err)
{
	if (fail) {
		fprintf(stderr, "unit-gpt: %s: %s\n", what, err);
		exit(3);
	}
}

static void
json_tokens(FILE *f, const uint32_t *tok, int rows, int cols)
{
	int b, t;

	fputc('[', f);
	for (b = 0; b < rows; b++) {
		fprintf(f, "%s[", b ? "," : "");
		for (t = 0; t < cols; t++)
			fprintf(f, "%s%u", t ? "," : "", tok[b * cols + t]);
		fputc(']', f);
	}
	fputc(']', f);
}

/*
 * The PyTorch comparison's C half (contrib/gpt2-torch.py check DIR):
 * initial weights, logits, loss and gradients of one batch, then two
 * training iterations of two micro-batches each with clipping, and the
 * weights after them.
 */
static int
dump(const char *dir)
{
	enum { B = 2, T = 16, NMICRO = 2, NSTEPS = 2 };
	struct gpt m;
	struct trainer tr = { 0 };
	struct train_state st = { 0 };
	struct arraysrc src;
	struct step_result res[NSTEPS];
	struct st_out *out, *t;
	uint32_t tok[B * (T + 1)], train_tok[NSTEPS * NMICRO * B * (T + 1)];
	int32_t in[B * T], tg[B * T];
	char err[512], path[4096];
	float *grads, *final, *logits, loss;
	size_t n, nout = 0, i;
	int b, s, j, code;
	FILE *f;

	die_if(gpt_init(&m, &small, &gpt_cpu, err, sizeof err) < 0, "init", err);
	die_if(gpt_set_batch(&m, B, T, err, sizeof err) < 0, "batch", err);
	gpt_init_weights(&m, 42, 0.02f);
	mkdir(dir, 0755);
	snprintf(path, sizeof path, "%s/init", dir);
	die_if(ckpt_save(path, &m, &st, NULL, 0, err, sizeof err) < 0, "save",
	    err);

	for (i = 0; i < sizeof tok / sizeof *tok; i++)
		tok[i] = rnd((uint32_t)small.vocab);
	for (i = 0; i < sizeof train_tok / sizeof *train_tok; i++)
		train_tok[i] = rnd((uint32_t)small.vocab);
	for (b = 0; b < B; b++)
		for (j = 0; j < T; j++) {
			in[b * T + j] = (int32_t)tok[b * (T + 1) + j];
			tg[b * T + j] = (int32_t)tok[b * (T + 1) + j + 1];
		}

	out = xcalloc(3 + 2 * GPT_NPARAM * (size_t)small.nlayer, sizeof *out);
	loss = gpt_forward(&m, in, tg, 0, 0);
	logits = xmalloc((size_t)B * T * small.vocab * sizeof *logits);
	memcpy(logits, m.a.logits, (size_t)B * T * small.vocab * sizeof *logits);
	snprintf(out[nout].name, sizeof out->name, "logits");
	out[nout].rank = 2;
	out[nout].shape[0] = B * T;
	out[nout].shape[1] = small.vocab;
	out[nout++].data = logits;
	snprintf(out[nout].name, sizeof out->name, "loss");
	out[nout].rank = 1;
	out[nout].shape[0] = 1;
	out[nout++].data = &loss;
	gpt_zero_grad(&m);
	gpt_forward(&m, in, tg, 1.0f / (B * T), 0);
	gpt_backward(&m);
	grads = xmalloc(m.nparams * sizeof *grads);
	gpt_get(&m, GPT_GRADS, grads);
	t = ckpt_tensors(&m, grads, "grad.", &n);
	memcpy(out + nout, t, n * sizeof *t);
	nout += n;
	free(t);

	tr.m = &m;
	tr.micro = B;
	tr.T = T;
	tr.nmicro = NMICRO;
	/*
	 * Adam divides each gradient by its own size, so fp32 rounding in a
	 * gradient near eps (the key bias's is 0 in exact arithmetic) becomes
	 * a visible difference in the update: eps 1e-6 and lr 1e-3 keep it
	 * under the tolerance. Weight decay is large so that a wrong no-decay
	 * set shows; the clipping threshold is below the gradient norm.
	 */
	tr.lr = (struct lr_sched){ LR_CONSTANT, 1e-3, 0, 0, 1 };
	tr.adam = (struct adamw){ 0.9f, 0.95f, 1e-6f, 0.5f };
	tr.clip = 0.5f;
	train_init(&tr);
	src = (struct arraysrc){ train_tok, T, NSTEPS * NMICRO * B };
	for (s = 0; s < NSTEPS; s++)
		die_if(train_iteration(&tr, &(struct sample_src){ array_get, &src },
		    &res[s], err, sizeof err, &code) != 0, "train", err);
	final = xmalloc(m.nparams * sizeof *final);
	gpt_get(&m, GPT_PARAMS, final);
	t = ckpt_tensors(&m, final, "final.", &n);
	memcpy(out + nout, t, n * sizeof *t);
	nout += n;
	free(t);
	snprintf(path, sizeof path, "%s/out.safetensors", dir);
	die_if(st_write(path, NULL, out, nout, err, sizeof err) < 0, "write", err);

	snprintf(path, sizeof path, "%s/spec.json", dir);
	die_if((f = fopen(path, "w")) == NULL, path, "cannot create");
	fprintf(f, "{\"tokens\": ");
	json_tokens(f, tok, B, T + 1);
	fprintf(f, ",\n\"adamw\": {\"beta1\": %.9g, \"beta2\": %.9g, "
	    "\"eps\": %.9g, \"weight_decay\": %.9g},\n\"clip\": %.9g,\n"
	    "\"steps\": [", tr.adam.beta1, tr.adam.beta2, tr.adam.eps,
	    tr.adam.wd, tr.clip);
	for (s = 0; s < NSTEPS; s++) {
		fprintf(f, "%s\n{\"lr\": %.17g, \"loss\": %.9g, \"grad_norm\": "
		    "%.9g, \"micro_batches\": [", s ? "," : "", res[s].lr,
		    res[s].loss, res[s].grad_norm);
		for (j = 0; j < NMICRO; j++) {
			fprintf(f, "%s", j ? "," : "");
			json_tokens(f, train_tok + (size_t)(s * NMICRO + j) * B * (T + 1),
			    B, T + 1);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]}\n");
	die_if(fclose(f) != 0, path, "write error");
	free(out);
	free(grads);
	free(final);
	free(logits);
	train_free(&tr);
	gpt_free(&m);
	return 0;
}

int
main(int argc, char **argv)
{
	blas_init(omp_get_max_threads());
	if (argc == 3 && strcmp(argv[1], "dump") == 0)
		return dump(argv[2]);
	OK(1, "placeholder");
	return unit_done();
}
