/* unit-gpt.c - the model library: safetensors, checkpoints, LR schedule, layers, dropout; `dump DIR` for the PyTorch check */
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/blas.h"
#include "model/ckpt.h"
#include "train/ckpt_args.h"
#include "comm/comm.h"
#include "dist/dist.h"
#include "model/gpt.h"
#include "train/gpt_data.h"
#include "train/mt19937.h"
#include "train/sampler.h"
#include "train/schedule.h"
#include "core/json.h"
#include "train/train.h"
#include "train/train_log.h"
#include "core/util.h"
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

/* err ends with want */
static void
like_err(const char *err, const char *want, const char *what)
{
	size_t n = strlen(err), w = strlen(want);
	int ok = n >= w && strcmp(err + n - w, want) == 0;

	OK(ok, "%s", what);
	if (!ok)
		printf("#   got  '%s'\n#   want '...%s'\n", err, want);
}

static void
die_if(int fail, const char *what, const char *err)
{
	if (fail) {
		fprintf(stderr, "unit-gpt: %s: %s\n", what, err);
		exit(3);
	}
}

/* A sample of T + 1 tokens as T inputs and their T targets (each the next). */
static void
sample_io(const uint32_t *tok, int T, int32_t *in, int32_t *tg)
{
	int t;

	for (t = 0; t < T; t++) {
		in[t] = (int32_t)tok[t];
		tg[t] = (int32_t)tok[t + 1];
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

/* ---- safetensors ---- */

static void
put_le(unsigned char *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static int
write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL)
		return -1;
	fwrite(p, 1, n, f);
	return fclose(f);
}

/* A safetensors file of header hdr and n zero bytes of data: its safetensors_open error, or "" */
static const char *
st_try(const char *dir, const char *hdr, size_t n)
{
	static char err[512];
	unsigned char raw[1024] = { 0 };
	char path[4096];
	struct safetensors_file f;
	size_t h = strlen(hdr);
	int code = 0;

	snprintf(path, sizeof path, "%s/r.safetensors", dir);
	put_le(raw, h, 8);
	memcpy(raw + 8, hdr, h);
	write_bytes(path, raw, 8 + h + n);
	if (safetensors_open(&f, path, err, sizeof err, &code) == 0) {
		safetensors_close(&f);
		return "";
	}
	if (code != XDATA)
		return "(not XDATA)";
	return strchr(err, ' ') + 1;
}

/* The safetensors library's rules on offsets, dtypes and the header. */
static void
st_rules(const char *dir)
{
	static const struct {
		const char *hdr;
		size_t n;
		const char *err, *what;
	} c[] = {
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"
		  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 16,
		  "", "tensors in any order in the header, contiguous by offset" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
		  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
		  "", "an empty tensor takes no bytes" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
		  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
		  "data of 'b' overlaps that of 'a'", "overlapping data_offsets" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
		  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
		  "data of 'b' overlaps that of 'a'", "two tensors on the same bytes" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
		  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}", 20,
		  "a gap in the data: bytes 8 to 12 before 'b' belong to no tensor",
		  "a gap between tensors" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
		  "a gap in the data: bytes 0 to 4 before 'a' belong to no tensor",
		  "data that does not start at 0" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 9,
		  "1 bytes after the last tensor's data", "bytes after the data" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4,
		  "data of 'a' is outside the file (truncated?)", "offsets beyond the file" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8,
		  "bad data_offsets of 'a'", "an end before the beginning" },
		{ "{\"a\":{\"dtype\":\"Q4\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
		  "tensor 'a' has an unknown dtype 'Q4'", "an unknown dtype" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
		  "\"data_offsets\":[0,8]}}", 8,
		  "the shape of 'a' overflows", "a shape whose size overflows" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
		  "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
		  "tensor 'a' appears twice", "a name twice" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
		  "\"\377\":1}", 4,
		  "bad safetensors header: not UTF-8", "a header that is not UTF-8" },
	};
	unsigned char raw[16];
	char path[4096], err[512];
	struct safetensors_file f;
	size_t i;
	int code;

	for (i = 0; i < sizeof c / sizeof *c; i++) {
		const char *got = st_try(dir, c[i].hdr, c[i].n);

		OK(strcmp(got, c[i].err) == 0, "safetensors: %s%s", c[i].what,
		    *c[i].err ? ": refused" : ": accepted");
		if (strcmp(got, c[i].err) != 0)
			printf("#   got  '%s'\n#   want '%s'\n", got, c[i].err);
	}
	put_le(raw, 100000001, 8);
	memcpy(raw + 8, "{}      ", 8);
	snprintf(path, sizeof path, "%s/r.safetensors", dir);
	write_bytes(path, raw, 16);
	OK(safetensors_open(&f, path, err, sizeof err, &code) < 0 && code == XDATA &&
	    strstr(err, "not a safetensors file (header size 100000001)"),
	    "safetensors: a header over the library's 100000000 bytes is refused");
}

static void
test_safetensors(const char *dir)
{
	float a[6] = { 1, -2, 3.5f, 0, 1e-30f, -7 }, b[3] = { 9, 8, 7 }, got[6];
	struct safetensors_out t[2] = {
		{ "x.weight", 2, { 2, 3 }, a }, { "x.bias", 1, { 3 }, b },
	};
	struct safetensors_file f;
	const struct safetensors_tensor *x;
	char path[4096], err[512];
	/* F16: 1.0, -2.0, 65504, 2^-24 (subnormal); BF16: 1.0, -3.0 */
	static const char hdr[] = "{\"h\":{\"dtype\":\"F16\",\"shape\":[4],"
	    "\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"BF16\",\"shape\":[2],"
	    "\"data_offsets\":[8,12]},\"i\":{\"dtype\":\"I64\",\"shape\":[1],"
	    "\"data_offsets\":[12,20]}}";
	static const uint16_t half[6] = { 0x3c00, 0xc000, 0x7bff, 0x0001,
	    0x3f80, 0xc040 };
	unsigned char raw[512];
	int code;
	size_t n;

	snprintf(path, sizeof path, "%s/t.safetensors", dir);
	OK(safetensors_write(path, "\"step\":\"7\"", t, 2, err, sizeof err) == 0,
	    "safetensors: write");
	OK(safetensors_open(&f, path, err, sizeof err, &code) == 0 && f.n == 2,
	    "safetensors: read back two tensors");
	x = safetensors_find(&f, "x.weight");
	OK(x && x->dtype == SAFETENSORS_F32 && x->rank == 2 && x->shape[0] == 2 &&
	    x->shape[1] == 3, "safetensors: name, dtype and shape");
	safetensors_to_f32(x, got);
	OK(memcmp(got, a, sizeof a) == 0, "safetensors: the data, bit for bit");
	OK(strcmp(json_doc_get(json_doc_get(f.hdr, "__metadata__"),
	    "format")->str, "pt") == 0 && strcmp(json_doc_get(json_doc_get(f.hdr,
	    "__metadata__"), "step")->str, "7") == 0,
	    "safetensors: metadata format pt, and ours");
	OK((8 + (size_t)f.map[0]) % 8 == 0, "safetensors: header padded to 8 bytes");
	safetensors_close(&f);

	n = strlen(hdr);
	put_le(raw, n, 8);
	memcpy(raw + 8, hdr, n);
	memcpy(raw + 8 + n, half, sizeof half);
	memset(raw + 8 + n + 12, 0, 8);
	snprintf(path, sizeof path, "%s/h.safetensors", dir);
	write_bytes(path, raw, 8 + n + 20);
	OK(safetensors_open(&f, path, err, sizeof err, &code) == 0,
	    "safetensors: F16, BF16 and I64 tensors open");
	safetensors_to_f32(safetensors_find(&f, "h"), got);
	OK(got[0] == 1 && got[1] == -2 && got[2] == 65504 &&
	    got[3] == ldexpf(1, -24), "safetensors: F16 converts, subnormals too");
	safetensors_to_f32(safetensors_find(&f, "b"), got);
	OK(got[0] == 1 && got[1] == -3, "safetensors: BF16 converts");
	OK(safetensors_find(&f, "i")->dtype < 0, "safetensors: other dtypes are listed, not read");
	safetensors_close(&f);

	put_le(raw, n, 8);
	write_bytes(path, raw, 8 + n + 10);
	OK(safetensors_open(&f, path, err, sizeof err, &code) < 0 && code == XDATA,
	    "safetensors: data beyond the end is bad data");
	like_err(err, "data of 'b' is outside the file (truncated?)",
	    "safetensors: ... naming the tensor");
	memcpy(raw + 8, "{\"h\":{\"dtype\":\"F16\",\"shape\":[3],", 32);
	write_bytes(path, raw, 8 + n + 20);
	OK(safetensors_open(&f, path, err, sizeof err, &code) < 0,
	    "safetensors: a shape that does not match the data is bad data");
	like_err(err, "data of 'h' does not match its shape",
	    "safetensors: ... naming the tensor");
	st_rules(dir);
}

/* ---- matrix products ---- */

static void
fill(float *x, size_t n, float scale)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = scale * ((float)rnd(2000001) / 1e6f - 1.0f);
}

/* max |a - b| / max |b| */
static double
rel_diff(const float *a, const double *b, size_t n)
{
	double d = 0, m = 1e-30;
	size_t i;

	for (i = 0; i < n; i++) {
		d = fmax(d, fabs((double)a[i] - b[i]));
		m = fmax(m, fabs(b[i]));
	}
	return d / m;
}

/* Every transposition of one size against a double-precision product. */
static void
check_sgemm(int M, int N, int K)
{
	float *A = xmalloc((size_t)M * K * sizeof *A);
	float *B = xmalloc((size_t)K * N * sizeof *B);
	float *C = xmalloc((size_t)M * N * sizeof *C);
	float *C0 = xmalloc((size_t)M * N * sizeof *C0);
	double *want = xmalloc((size_t)M * N * sizeof *want);
	int ta, tb, i, j, p, which;

	fill(A, (size_t)M * K, 1);
	fill(B, (size_t)K * N, 1);
	fill(C0, (size_t)M * N, 1);
	for (which = 0; which < 3; which++)
		for (ta = 0; ta < 2; ta++)
			for (tb = 0; tb < 2; tb++) {
				for (i = 0; i < M; i++)
					for (j = 0; j < N; j++) {
						double sum = 0;

						for (p = 0; p < K; p++)
							sum += (double)(ta ? A[p * M + i] : A[i * K + p]) *
							    (tb ? B[j * K + p] : B[p * N + j]);
						want[i * N + j] = 0.5 * sum + 2.0 * C0[i * N + j];
					}
				memcpy(C, C0, (size_t)M * N * sizeof *C);
				if (which == 2 && !sgemm512_available())
					continue;
				(which == 0 ? blas_sgemm_builtin : which == 1 ?
				    blas_sgemm : sgemm512)(ta, tb, M, N, K, 0.5f,
				    A, ta ? M : K, B, tb ? K : N, 2.0f, C, N);
				OK(rel_diff(C, want, (size_t)M * N) < 1e-6,
				    "%s sgemm %dx%dx%d, A%s B%s", which == 0 ?
				    "built-in" : which == 1 ? "chosen" : "AVX-512",
				    M, N, K, ta ? "^T" : "", tb ? "^T" : "");
			}
	free(A);
	free(B);
	free(C);
	free(C0);
	free(want);
}

static void
test_sgemm(void)
{
	check_sgemm(7, 9, 11);
	/* several panels and blocks of the AVX-512 kernel, with edges */
	check_sgemm(183, 77, 300);
}

/* ---- the learning-rate schedule ---- */

static void
test_lr(void)
{
	struct schedule s = { SCHEDULE_COSINE, 1e-3, 1e-4, 100, 1100 };

	OK(schedule_lr_at(&s, 0) == 0, "lr: 0 at the start of the warmup (Megatron's first step)");
	OK(fabs(schedule_lr_at(&s, 50) - 5e-4) < 1e-15, "lr: linear warmup");
	OK(schedule_lr_at(&s, 100) == 1e-3, "lr: the peak at the end of the warmup");
	OK(fabs(schedule_lr_at(&s, 600) - 5.5e-4) < 1e-15, "lr: cosine halfway");
	OK(fabs(schedule_lr_at(&s, 1100) - 1e-4) < 1e-15, "lr: min-lr at the end of the decay");
	OK(schedule_lr_at(&s, 5000) == 1e-4, "lr: min-lr after the decay");
	s.style = SCHEDULE_LINEAR;
	OK(fabs(schedule_lr_at(&s, 350) - 7.75e-4) < 1e-15, "lr: linear decay");
	s.style = SCHEDULE_CONSTANT;
	OK(schedule_lr_at(&s, 5000) == 1e-3, "lr: constant after warmup");
	s.style = SCHEDULE_INVSQRT;
	OK(fabs(schedule_lr_at(&s, 400) - 5e-4) < 1e-15, "lr: inverse square root");
}

/* The run's length and schedule from the options, as Megatron resolves them. */
static void
test_schedule_resolve(void)
{
	static const struct {
		struct schedule_opts o;
		uint64_t iters, samples, decay;
		int global;
		double warmup;
		const char *err;	/* NULL: resolves */
	} t[] = {
		{ { .train_iters = 10, .micro = 2, .lr = 1e-3, .style = "cosine",
		    .warmup_fraction = 0.01, .given = SCHEDULE_G_WARMUP_FRACTION },
		    10, 20, 20, 2, 0.2, NULL },	/* global: the micro-batch; warmup kept fractional */
		{ { .train_iters = 100, .micro = 2, .global = 8, .lr = 1e-3,
		    .style = "linear", .warmup_fraction = 0.1,
		    .given = SCHEDULE_G_WARMUP_FRACTION },
		    100, 800, 800, 8, 80, NULL },
		{ { .train_samples = 90, .micro = 2, .global = 8, .lr = 1e-3,
		    .style = "cosine", .warmup_fraction = 0.01,
		    .given = SCHEDULE_G_WARMUP_FRACTION },
		    11, 90, 88, 8, 0.88, NULL },	/* decay: whole iterations */
		{ { .train_iters = 100, .micro = 4, .global = 8, .lr = 1e-3,
		    .style = "cosine", .warmup_fraction = 0.5, .warmup_iters = 3,
		    .warmup_samples = 7, .decay_iters = 50, .decay_samples = 300,
		    .given = SCHEDULE_G_WARMUP_FRACTION | SCHEDULE_G_WARMUP_ITERS |
		    SCHEDULE_G_DECAY_ITERS },
		    100, 800, 400, 8, 24, NULL },	/* iterations over the fraction */
		{ { .train_iters = 100, .micro = 4, .global = 8, .lr = 1e-3,
		    .style = "cosine", .warmup_iters = 3, .warmup_samples = 7,
		    .decay_iters = 50, .decay_samples = 300,
		    .given = SCHEDULE_G_WARMUP_ITERS | SCHEDULE_G_WARMUP_SAMPLES |
		    SCHEDULE_G_DECAY_ITERS | SCHEDULE_G_DECAY_SAMPLES },
		    100, 800, 300, 8, 7, NULL },	/* samples over iterations */
		{ { .train_iters = 10, .micro = 2, .lr = 1e-3, .style = "cosine" },
		    10, 20, 20, 2, 0, NULL },	/* no warmup given: none */
		{ { .micro = 2, .lr = 1e-3, .style = "cosine" }, 0, 0, 0, 0, 0,
		    "one of --train-iters and --train-samples is required" },
		{ { .train_iters = 1, .micro = 4, .global = 6, .style = "cosine" },
		    0, 0, 0, 0, 0,
		    "--global-batch-size 6 is not a multiple of --micro-batch-size 4" },
		{ { .train_iters = 1, .micro = 1, .style = "cos" }, 0, 0, 0, 0, 0,
		    "--lr-decay-style: 'cos' is not constant, linear, cosine or "
		    "inverse-square-root" },
		{ { .train_iters = 1, .micro = 1, .lr = 1e-4, .min_lr = 6e-4,
		    .style = "cosine" }, 0, 0, 0, 0, 0,
		    "--min-lr 0.0006 (the default) is above --lr 0.0001" },
		{ { .train_iters = 1, .micro = 1, .lr = 1e-4, .min_lr = 6e-4,
		    .style = "cosine", .given = SCHEDULE_G_MIN_LR }, 0, 0, 0, 0, 0,
		    "--min-lr 0.0006 is above --lr 0.0001" },
		{ { .train_iters = 4, .micro = 1, .lr = 1e-3, .style = "linear",
		    .warmup_iters = 4, .given = SCHEDULE_G_WARMUP_ITERS },
		    0, 0, 0, 0, 0,
		    "the warmup (4 samples) must be shorter than the decay (4 "
		    "samples)" },
		{ { .train_iters = 4, .micro = 1, .lr = 1e-3, .style = "constant",
		    .warmup_iters = 4, .given = SCHEDULE_G_WARMUP_ITERS },
		    4, 4, 4, 1, 4, NULL },	/* constant: no decay to be shorter than */
	};
	struct schedule_run r;
	char err[256];
	size_t i;
	int code, k;

	for (i = 0; i < sizeof t / sizeof *t; i++) {
		err[0] = '\0';
		code = 0;
		k = schedule_resolve(&t[i].o, &r, err, sizeof err, &code);
		if (t[i].err) {
			OK(k < 0 && code == XUSAGE, "schedule_resolve %zu: refused", i);
			SAMES(err, t[i].err, "schedule_resolve %zu: the message", i);
			continue;
		}
		OK(k == 0 && r.train_iters == t[i].iters &&
		    r.train_samples == t[i].samples && r.global == t[i].global &&
		    r.lr.decay == t[i].decay && r.lr.warmup == t[i].warmup &&
		    r.lr.max_lr == t[i].o.lr,
		    "schedule_resolve %zu: %" PRIu64 " iterations, %" PRIu64
		    " samples, global %d, decay %" PRIu64 ", warmup %g", i,
		    r.train_iters, r.train_samples, r.global, r.lr.decay,
		    r.lr.warmup);
	}
	OK(schedule_style("inverse-square-root") == SCHEDULE_INVSQRT &&
	    schedule_style("linear") == SCHEDULE_LINEAR &&
	    schedule_style("Cosine") == -1, "schedule_style");
}

/* The log lines, typed from Megatron's training_log and evaluate_and_print_results. */
static void
test_train_log(void)
{
	struct train_log l = {
		.iteration = 10, .train_iters = 100, .consumed = 80, .global = 8,
		.ms = 1234.5, .lr = 5.9999e-5, .loss_scale = 1, .grad_norm = 3.14159,
		.loss_sum = 3 * 10.8251, .advanced = 3, .skipped = 2, .nan = 1,
	};
	struct buf b = { 0 };
	struct json_val *v;
	char err[128];
	int code;

	train_log_line(&b, &l);
	buf_addc(&b, '\0');
	SAMES(b.p, " iteration       10/     100 | consumed samples:           "
	    "80 | elapsed time per iteration (ms): 246.9 | learning rate: "
	    "6.000E-05 | global batch size:     8 | lm loss: 1.082510E+01 | "
	    "loss scale: 1.0 | grad norm: 3.142 | number of skipped "
	    "iterations:   2 | number of nan iterations:   1 |",
	    "train_log_line: Megatron's iteration line");
	b.len = 0;
	l.advanced = 0;
	l.skipped = 1;
	l.loss_sum = 0;
	l.grad_norm = NAN;
	l.loss_scale = 65536;
	train_log_line(&b, &l);
	buf_addc(&b, '\0');
	SAMES(b.p, " iteration       10/     100 | consumed samples:           "
	    "80 | elapsed time per iteration (ms): 1234.5 | learning rate: "
	    "6.000E-05 | global batch size:     8 | loss scale: 65536.0 | "
	    "number of skipped iterations:   1 | number of nan iterations:   "
	    "1 |", "train_log_line: no loss nor norm after skips only");
	b.len = 0;
	train_log_validation(&b, "iteration 50", 2.5);
	buf_addc(&b, '\0');
	SAMES(b.p, "--------------------------------------------------------"
	    "--------------------------------------\n"
	    " validation loss at iteration 50 | lm loss value: 2.500000E+00 | "
	    "lm loss PPL: 1.218249E+01 | \n"
	    "--------------------------------------------------------"
	    "--------------------------------------\n",
	    "train_log_validation: the block with its dashes");
	b.len = 0;
	train_log_validation(&b, "x", 25);
	OK(strstr(b.p, "lm loss PPL: 4.851652E+08 | ") != NULL,
	    "train_log_validation: the perplexity of min(20, loss)");

	/* l: one iteration skipped, none advanced */
	b.len = 0;
	train_log_json(&b, &l, 5.9999e-5, INFINITY, 32768, 1234.56, 2.5);
	SAMES(b.p, "{\"iteration\": 10, \"loss\": null, \"lr\": 5.9999e-05, "
	    "\"grad_norm\": null, \"loss_scale\": 32768, \"skipped\": 1, "
	    "\"tokens_per_s\": 1234.6, \"elapsed_s\": 2.500}",
	    "train_log_json: an fp16 overflow's norm of inf and no loss are null");
	v = json_doc_parse(b.p, b.len, err, sizeof err, &code);
	OK(v != NULL && json_doc_get(v, "grad_norm")->type == JV_NULL,
	    "train_log_json: the row parses as JSON");
	json_doc_free(v);
	b.len = 0;
	l.advanced = 3;
	l.loss_sum = 3 * 10.8251;
	train_log_json(&b, &l, 1e-4, NAN, 0, 100, 0.0004);
	SAMES(b.p, "{\"iteration\": 10, \"loss\": 10.8251, \"lr\": 0.0001, "
	    "\"grad_norm\": null, \"tokens_per_s\": 100.0, \"elapsed_s\": 0.000}",
	    "train_log_json: the mean loss; no scaler, no loss_scale nor skipped");
	b.len = 0;
	train_log_json(&b, &l, 1e-4, 3.14159, 0, 100, 1);
	OK(strstr(b.p, "\"grad_norm\": 3.14159,") != NULL,
	    "train_log_json: a finite norm by %%.9g");
	buf_free(&b);
}

/* ---- a run's options against a checkpoint (ckpt_args) ---- */

static struct {
	int layers, hidden, micro;
	uint64_t iters, samples, warmup, seed;
	double lr;
	const char *style, *rounding;
} ca;

static const struct opt ca_opts[] = {
	{ .name = "hidden-size", .type = OPT_INT, .p = &ca.hidden,
	    .tag = CKPT_ARGS_MODEL },
	{ .name = "lr", .type = OPT_DOUBLE, .p = &ca.lr, .tag = CKPT_ARGS_SCHED },
	{ .name = "lr-decay-style", .type = OPT_STR, .p = &ca.style,
	    .tag = CKPT_ARGS_SCHED },
	{ .name = "lr-warmup-iters", .type = OPT_U64, .p = &ca.warmup },
	{ .name = "lr-warmup-samples", .type = OPT_U64, .p = &ca.warmup,
	    .tag = CKPT_ARGS_SCHED },
	{ .name = "micro-batch-size", .type = OPT_INT, .p = &ca.micro,
	    .tag = CKPT_ARGS_KEEP },
	{ .name = "num-layers", .type = OPT_INT, .p = &ca.layers,
	    .tag = CKPT_ARGS_MODEL },
	{ .name = "seed", .type = OPT_U64, .p = &ca.seed, .tag = CKPT_ARGS_KEEP },
	{ .name = "split-rounding", .type = OPT_STR, .p = &ca.rounding,
	    .tag = CKPT_ARGS_KEEP },
	{ .name = "train-iters", .type = OPT_U64, .p = &ca.iters,
	    .tag = CKPT_ARGS_KEEP },
	{ .name = "train-samples", .type = OPT_U64, .p = &ca.samples,
	    .tag = CKPT_ARGS_KEEP },
	{ .name = "workers", .type = OPT_INT, .p = &ca.micro },
};
static const struct opt_prog ca_prog = { "t", ca_opts,
    sizeof ca_opts / sizeof *ca_opts, NULL, 0, NULL };

static void
ca_reset(char *given)
{
	ca.layers = 12;
	ca.hidden = 768;
	ca.micro = 4;
	ca.iters = 100;
	ca.samples = 0;
	ca.warmup = 0;
	ca.seed = 1234;
	ca.lr = 6e-4;
	ca.style = "cosine";
	ca.rounding = "legacy";
	memset(given, 0, ca_prog.n);
}

/* given: the options given, by name, NULL-terminated */
static void
ca_given(char *given, const char *const *names)
{
	for (; *names; names++)
		given[opt_find(&ca_prog, *names)] = 1;
}

static void
test_ckpt_args(void)
{
	static const char state[] = "{\"args\": {\"lr\": 0.001, "
	    "\"lr-decay-style\": \"linear\", \"lr-warmup-samples\": 40, "
	    "\"micro-batch-size\": 2, \"seed\": 7, \"train-iters\": 50, "
	    "\"workers\": 3, \"unknown\": 1, \"num-layers\": 9}}";
	static const struct {
		const char *given[4];	/* the options given */
		int sched;
		const char *want;	/* the options after the merge */
		const char *check;	/* ckpt_args_check's message, or NULL */
	} t[] = {
		{ { NULL }, CKPT_ARGS_CHECK,
		    "lr 0.001 linear 40 micro 2 seed 7 iters 50 samples 0 core "
		    "layers 12", NULL },
		{ { "lr", "micro-batch-size", "train-samples", NULL },
		    CKPT_ARGS_CHECK,
		    "lr 0.0006 linear 40 micro 4 seed 7 iters 100 samples 0 core "
		    "layers 12",
		    "D/trainer_state.json: lr is 0.001, but the options make it "
		    "differ (use --override-opt_param-scheduler)" },
		{ { "lr", "lr-warmup-iters", "seed", NULL }, CKPT_ARGS_OVERRIDE,
		    "lr 0.0006 linear 0 micro 2 seed 1234 iters 50 samples 0 core "
		    "layers 12", NULL },
		{ { "lr", "split-rounding", NULL }, CKPT_ARGS_USE_CKPT,
		    "lr 0.001 linear 40 micro 2 seed 7 iters 50 samples 0 legacy "
		    "layers 12", NULL },
	};
	struct ckpt_args_load l;
	struct gpt_config c = { .nlayer = 2, .nembd = 768 };
	char given[sizeof ca_opts / sizeof *ca_opts], err[256], got[256];
	const char *names[] = { "hidden-size", NULL };
	const char *bad = "{\"args\": {\"lr\": \"high\"}}";
	char *json;
	size_t i;
	int code, k;

	for (i = 0; i < sizeof t / sizeof *t; i++) {
		ca_reset(given);
		ca_given(given, t[i].given);
		memset(&l, 0, sizeof l);
		l.resume = 1;
		l.st.seed = 9;
		snprintf(l.path, sizeof l.path, "D");
		l.state = json_doc_parse(state, sizeof state - 1, err,
		    sizeof err, &code);
		k = ckpt_args_merge(&l, &ca_prog, given, t[i].sched, err,
		    sizeof err, &code);
		snprintf(got, sizeof got, "lr %g %s %" PRIu64 " micro %d seed %"
		    PRIu64 " iters %" PRIu64 " samples %" PRIu64 " %s layers %d",
		    ca.lr, ca.style, ca.warmup, ca.micro, ca.seed, ca.iters,
		    ca.samples, ca.rounding, ca.layers);
		OK(k == 0, "ckpt_args_merge %zu", i);
		SAMES(got, t[i].want, "ckpt_args_merge %zu: the options", i);
		OK(given[opt_find(&ca_prog, "lr")] &&
		    given[opt_find(&ca_prog, "micro-batch-size")] &&
		    !given[opt_find(&ca_prog, "workers")],
		    "ckpt_args_merge %zu: what the checkpoint set is given", i);
		err[0] = '\0';
		k = ckpt_args_check(&l, &ca_prog, given, t[i].sched, err,
		    sizeof err, &code);
		if (t[i].check) {
			OK(k < 0 && code == XDATA, "ckpt_args_check %zu: refused",
			    i);
			SAMES(err, t[i].check, "ckpt_args_check %zu: the message",
			    i);
		} else {
			OK(k == 0, "ckpt_args_check %zu: accepted", i);
		}
		ckpt_args_free(&l);
	}

	/* a value of the wrong type */
	ca_reset(given);
	memset(&l, 0, sizeof l);
	l.resume = 1;
	snprintf(l.path, sizeof l.path, "D");
	l.state = json_doc_parse(bad, strlen(bad), err, sizeof err, &code);
	k = ckpt_args_merge(&l, &ca_prog, given, CKPT_ARGS_CHECK, err,
	    sizeof err, &code);
	OK(k < 0 && code == XDATA, "ckpt_args_merge: a bad value refused");
	SAMES(err, "D/trainer_state.json: bad value of 'lr'",
	    "ckpt_args_merge: a bad value's message");
	ckpt_args_free(&l);

	/* config.json's shape */
	ca_reset(given);
	k = ckpt_args_config(&ca_prog, given, "D", &c, err, sizeof err, &code);
	OK(k == 0 && ca.layers == 2 && ca.hidden == 768,
	    "ckpt_args_config: the shape taken");
	ca_reset(given);
	ca_given(given, names);
	ca.hidden = 512;
	k = ckpt_args_config(&ca_prog, given, "D", &c, err, sizeof err, &code);
	OK(k < 0 && code == XDATA, "ckpt_args_config: a shape given differs");
	SAMES(err, "D/config.json: n_embd is 768, but --hidden-size is 512",
	    "ckpt_args_config: the message");

	/* the "args" kept: every kept option, unset counts left out */
	ca_reset(given);
	ca.style = "a\"b";
	json = ckpt_args_json(&ca_prog);
	SAMES(json, "{\n    \"lr\": 0.00059999999999999995,\n"
	    "    \"lr-decay-style\": \"a\\\"b\",\n"
	    "    \"lr-warmup-samples\": 0,\n"
	    "    \"micro-batch-size\": 4,\n    \"seed\": 1234,\n"
	    "    \"split-rounding\": \"legacy\",\n    \"train-iters\": 100\n  }",
	    "ckpt_args_json");
	free(json);
}

/* ---- layers, against double references and finite differences ---- */

/*
 * f(x) = sum(dout * forward(x)) in double, for the finite differences of
 * an op: forward reads x (n doubles) and writes out (m doubles).
 */
struct op {
	void (*forward)(const struct op *o, const double *x, double *out);
	int n, m;
	int B, T, C, NH, OC, V;
	float p;
	struct gpt_mask mk;	/* attention's dropout mask */
	const double *aux;	/* fixed inputs */
	const int32_t *ids;
};

static void
fd_grad(const struct op *o, const double *x, const double *dout, double *g)
{
	double *xp = xmalloc((size_t)o->n * sizeof *xp);
	double *out = xmalloc((size_t)o->m * sizeof *out), fp, fm, h = 1e-5;
	int i, j;

	memcpy(xp, x, (size_t)o->n * sizeof *xp);
	for (i = 0; i < o->n; i++) {
		xp[i] = x[i] + h;
		o->forward(o, xp, out);
		for (fp = 0, j = 0; j < o->m; j++)
			fp += dout[j] * out[j];
		xp[i] = x[i] - h;
		o->forward(o, xp, out);
		for (fm = 0, j = 0; j < o->m; j++)
			fm += dout[j] * out[j];
		xp[i] = x[i];
		g[i] = (fp - fm) / (2 * h);
	}
	free(xp);
	free(out);
}

static double *
to_double(const float *x, size_t n)
{
	double *d = xmalloc(n * sizeof *d);
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = x[i];
	return d;
}

/* layernorm of x = [inp (N,C), w (C), b (C)] */
static void
ref_layernorm(const struct op *o, const double *x, double *out)
{
	int n, c, N = o->B, C = o->C;
	const double *w = x + N * C, *b = w + C;

	for (n = 0; n < N; n++) {
		double m = 0, v = 0;

		for (c = 0; c < C; c++)
			m += x[n * C + c] / C;
		for (c = 0; c < C; c++)
			v += (x[n * C + c] - m) * (x[n * C + c] - m) / C;
		for (c = 0; c < C; c++)
			out[n * C + c] = (x[n * C + c] - m) / sqrt(v + 1e-5) * w[c] + b[c];
	}
}

/* matmul of x = [inp (N,C), w (C,OC), bias (OC)] */
static void
ref_matmul(const struct op *o, const double *x, double *out)
{
	int n, c, k, N = o->B, C = o->C, OC = o->OC;
	const double *w = x + N * C, *bias = w + C * OC;

	for (n = 0; n < N; n++)
		for (k = 0; k < OC; k++) {
			double s = bias[k];

			for (c = 0; c < C; c++)
				s += x[n * C + c] * w[c * OC + k];
			out[n * OC + k] = s;
		}
}

/* attention of x = qkv (B,T,3C), with dropout p on the probabilities */
static void
ref_attention(const struct op *o, const double *x, double *out)
{
	int B = o->B, T = o->T, C = o->C, NH = o->NH, HS = C / NH;
	int b, h, t, t2, i;
	double att[64];

	for (b = 0; b < B; b++)
		for (h = 0; h < NH; h++)
			for (t = 0; t < T; t++) {
				const double *q = x + (b * T + t) * 3 * C + h * HS;
				double max = -1e300, sum = 0;
				uint64_t idx = (((o->mk.s0 + (uint64_t)b) *
				    (uint64_t)o->mk.nh + (uint64_t)(o->mk.h0 + h)) *
				    (uint64_t)T + (uint64_t)t) * (uint64_t)T;

				for (t2 = 0; t2 <= t; t2++) {
					const double *k = x + (b * T + t2) * 3 * C + C + h * HS;

					att[t2] = 0;
					for (i = 0; i < HS; i++)
						att[t2] += q[i] * k[i] / sqrt(HS);
					max = fmax(max, att[t2]);
				}
				for (t2 = 0; t2 <= t; t2++)
					sum += att[t2] = exp(att[t2] - max);
				for (i = 0; i < HS; i++)
					out[(b * T + t) * C + h * HS + i] = 0;
				for (t2 = 0; t2 <= t; t2++) {
					const double *v = x + (b * T + t2) * 3 * C + 2 * C + h * HS;
					double a = att[t2] / sum;

					if (o->p > 0)
						a = gpt_dropout_keep(o->mk.key, idx + t2, o->p) ?
						    a / (1 - (double)o->p) : 0;
					for (i = 0; i < HS; i++)
						out[(b * T + t) * C + h * HS + i] += a * v[i];
				}
			}
}

static void
ref_gelu(const struct op *o, const double *x, double *out)
{
	int i;

	for (i = 0; i < o->n; i++)
		out[i] = 0.5 * x[i] * (1 + tanh(sqrt(2 / M_PI) *
		    (x[i] + 0.044715 * x[i] * x[i] * x[i])));
}

/* cross-entropy of logits x (N,V) at targets */
static void
ref_crossentropy(const struct op *o, const double *x, double *out)
{
	int n, v, N = o->B, V = o->V;

	for (n = 0; n < N; n++) {
		double max = -1e300, sum = 0;

		for (v = 0; v < V; v++)
			max = fmax(max, x[n * V + v]);
		for (v = 0; v < V; v++)
			sum += exp(x[n * V + v] - max);
		out[n] = log(sum) + max - x[n * V + o->ids[n]];
	}
}

static void
test_layers(const struct gpt_backend *be)
{
	enum { N = 6, C = 8, OC = 5, B = 2, T = 5, NH = 2, V = 11, G = 50 };
	/* big enough for every op below; attention's qkv is the largest */
	float x[B * T * 3 * C], out[B * T * 3 * C], dout[B * T * 3 * C];
	float dx[B * T * 3 * C], dw[C * OC], db[C + OC], mean[N], rstd[N];
	float att[B * NH * T * T], scratch[B * NH * T * T];
	double *xd, *doutd, *ref = xmalloc(4096 * sizeof *ref);
	double *g = xmalloc(4096 * sizeof *g);
	struct op o = { 0 };
	int32_t tg[N];
	float ploss[N];
	int i, pass;

	/* layernorm */
	o = (struct op){ ref_layernorm, N * C + 2 * C, N * C, .B = N, .C = C };
	fill(x, (size_t)o.n, 1.5f);
	fill(dout, N * C, 1);
	xd = to_double(x, (size_t)o.n);
	doutd = to_double(dout, N * C);
	be->layernorm_forward(out, mean, rstd, x, x + N * C, x + N * C + C, N, C, 1e-5f);
	ref_layernorm(&o, xd, ref);
	OK(rel_diff(out, ref, N * C) < 1e-5, "%s layernorm forward", be->name);
	memset(dx, 0, sizeof dx);
	memset(dw, 0, sizeof dw);
	memset(db, 0, sizeof db);
	be->layernorm_backward(dx, dw, db, dout, x, x + N * C, mean, rstd, N, C);
	fd_grad(&o, xd, doutd, g);
	OK(rel_diff(dx, g, N * C) < 1e-4 && rel_diff(dw, g + N * C, C) < 1e-4 &&
	    rel_diff(db, g + N * C + C, C) < 1e-4,
	    "%s layernorm backward (input, weight, bias)", be->name);
	free(xd);
	free(doutd);

	/* matmul */
	o = (struct op){ ref_matmul, N * C + C * OC + OC, N * OC, .B = N, .C = C, .OC = OC };
	fill(x, (size_t)o.n, 1);
	fill(dout, N * OC, 1);
	xd = to_double(x, (size_t)o.n);
	doutd = to_double(dout, N * OC);
	be->matmul_forward(out, x, x + N * C, x + N * C + C * OC, N, C, OC);
	ref_matmul(&o, xd, ref);
	OK(rel_diff(out, ref, N * OC) < 1e-5, "%s matmul forward", be->name);
	memset(dw, 0, sizeof dw);
	memset(db, 0, sizeof db);
	be->matmul_backward(dx, dw, db, dout, x, x + N * C, N, C, OC);
	fd_grad(&o, xd, doutd, g);
	OK(rel_diff(dx, g, N * C) < 1e-4 && rel_diff(dw, g + N * C, C * OC) < 1e-4 &&
	    rel_diff(db, g + N * C + C * OC, OC) < 1e-4,
	    "%s matmul backward (input, weight, bias)", be->name);
	free(xd);
	free(doutd);

	/*
	 * attention, without and with dropout: the second call as heads 1
	 * and 2 of a model of 5, from sample 3 (struct gpt_mask)
	 */
	for (pass = 0; pass < 2; pass++) {
		o = (struct op){ ref_attention, B * T * 3 * C, B * T * C, .B = B,
		    .T = T, .C = C, .NH = NH, .p = pass ? 0.3f : 0,
		    .mk = { 99, pass ? 3 : 0, pass ? 1 : 0, pass ? 5 : NH } };
		fill(x, (size_t)o.n, 1.5f);
		fill(dout, B * T * C, 1);
		xd = to_double(x, (size_t)o.n);
		doutd = to_double(dout, B * T * C);
		be->attention_forward(out, att, x, B, T, C, NH, o.p, &o.mk);
		ref_attention(&o, xd, ref);
		OK(rel_diff(out, ref, B * T * C) < 1e-5, "%s attention forward%s",
		    be->name, pass ? ", dropout 0.3" : "");
		be->attention_backward(dx, scratch, dout, x, att, B, T, C, NH,
		    o.p, &o.mk);
		fd_grad(&o, xd, doutd, g);
		OK(rel_diff(dx, g, B * T * 3 * C) < 1e-4,
		    "%s attention backward (q, k, v)%s", be->name,
		    pass ? ", the same dropout mask" : "");
		free(xd);
		free(doutd);
	}

	/* GELU */
	o = (struct op){ .forward = ref_gelu, .n = G, .m = G };
	fill(x, G, 4);
	fill(dout, G, 1);
	xd = to_double(x, G);
	doutd = to_double(dout, G);
	be->gelu_forward(out, x, G);
	ref_gelu(&o, xd, ref);
	OK(rel_diff(out, ref, G) < 1e-6, "%s GELU forward (tanh form)", be->name);
	be->gelu_backward(dx, x, dout, G);
	fd_grad(&o, xd, doutd, g);
	OK(rel_diff(dx, g, G) < 1e-5, "%s GELU backward", be->name);
	free(xd);
	free(doutd);

	/* cross-entropy: the loss, and the logits replaced by dloss * gradient */
	for (i = 0; i < N; i++)
		tg[i] = (int32_t)rnd(V);
	o = (struct op){ ref_crossentropy, N * V, N, .B = N, .V = V, .ids = tg };
	fill(x, N * V, 20);
	x[3] = 90;	/* one large logit: the softmax must not overflow */
	xd = to_double(x, N * V);
	ref_crossentropy(&o, xd, ref);
	be->crossentropy(ploss, x, tg, N, V, 0);
	OK(rel_diff(ploss, ref, N) < 1e-6, "%s cross-entropy loss", be->name);
	for (i = 0; i < N; i++)
		dout[i] = 0.25f;
	doutd = to_double(dout, N);
	be->crossentropy(ploss, x, tg, N, V, 0.25f);
	fd_grad(&o, xd, doutd, g);
	OK(rel_diff(x, g, N * V) < 1e-5 && rel_diff(ploss, ref, N) < 1e-6,
	    "%s cross-entropy gradient, in place", be->name);
	free(xd);
	free(doutd);

	/* dropout: kept with probability 1 - p, scaled, the same mask again */
	{
		enum { ND = 100000 };
		float *a = xmalloc(ND * sizeof *a), *b = xmalloc(ND * sizeof *b);
		size_t k, kept = 0, right = 0, same = 0;

		for (k = 0; k < ND; k++)
			a[k] = 1;
		be->dropout(b, a, ND, 0.25f, 5, 0);
		for (k = 0; k < ND; k++) {
			kept += b[k] != 0;
			right += b[k] == 0 || b[k] == 1 / 0.75f;
		}
		OK(kept > 74000 && kept < 76000 && right == ND,
		    "%s dropout 0.25 keeps %zu of %d, scaled by 1/0.75", be->name,
		    kept, ND);
		be->residual_forward(a, a, b, ND, 0.25f, 5, 0);
		for (k = 0; k < ND; k++)
			same += a[k] == 1 + b[k] * (1.0f / 0.75f);
		OK(same == ND, "%s residual dropout draws the same mask for the same key",
		    be->name);
		be->dropout(b, b, ND, 0, 5, 0);
		OK(b[0] == 0 || b[0] == 1 / 0.75f, "%s dropout 0 is the identity", be->name);
		free(a);
		free(b);
	}

	/* AdamW: one step against the formula in double */
	{
		float p[4] = { 0.5f, -0.25f, 1, 0 }, gr[4] = { 0.1f, -0.2f, 0, 3 };
		float m[4] = { 0.01f, 0, 0, 0 }, v[4] = { 0.001f, 0, 0, 0 };
		double want[4];

		for (i = 0; i < 4; i++) {
			double gg = gr[i] * 0.5, mm = 0.9 * m[i] + 0.1 * gg;
			double vv = 0.95 * v[i] + 0.05 * gg * gg;

			want[i] = p[i] - 1e-2 * (mm / 0.19 / (sqrt(vv / 0.0975) + 1e-8) +
			    0.1 * p[i]);
		}
		be->adamw(p, gr, m, v, 4, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.19f,
		    0.0975f, 0.5f);
		OK(rel_diff(p, want, 4) < 1e-6, "%s AdamW step with clipping scale",
		    be->name);
	}
	free(ref);
	free(g);
}

/*
 * Dropout masks are a function of the global position: attention over
 * heads [h0, h0 + nh) of a model (tensor parallelism), or over the
 * second sample of a batch alone (another micro-batch or data-parallel
 * rank), draws the masks of the matching part of the whole call, so
 * outputs, probabilities and gradients are the same bits. The same for
 * the hidden states' dropout with i0.
 */
static void
test_mask_parts(const struct gpt_backend *be)
{
	enum { B = 2, T = 6, NH = 6, HS = 4, C = NH * HS, TP = 3, NL = NH / TP };
	enum { CL = NL * HS };
	const float p = 0.3f;
	size_t nq = (size_t)B * T * 3 * C, ny = (size_t)B * T * C;
	size_t na = (size_t)B * NH * T * T;
	float *qkv = xmalloc(nq * sizeof *qkv), *dout = xmalloc(ny * sizeof *dout);
	float *y = xmalloc(ny * sizeof *y), *att = xmalloc(na * sizeof *att);
	float *dq = xmalloc(nq * sizeof *dq), *scr = xmalloc(na * sizeof *scr);
	float *lq = xmalloc(nq * sizeof *lq), *ldo = xmalloc(ny * sizeof *ldo);
	float *ly = xmalloc(ny * sizeof *ly), *la = xmalloc(na * sizeof *la);
	float *ldq = xmalloc(nq * sizeof *ldq);
	struct gpt_mask full = { 1234, 7, 0, NH }, part;
	int r, b, t, j, h, same, kept = 0;
	size_t i;

	fill(qkv, nq, 2);
	fill(dout, ny, 1);
	be->attention_forward(y, att, qkv, B, T, C, NH, p, &full);
	be->attention_backward(dq, scr, dout, qkv, att, B, T, C, NH, p, &full);
	for (i = 0; i < ny; i++)
		kept += y[i] != 0;
	for (r = 0; r < TP; r++) {
		/* rank r's qkv (B,T,3 CL): q, k, v of its heads, as Megatron splits */
		for (b = 0; b < B; b++)
			for (t = 0; t < T; t++)
				for (j = 0; j < 3; j++) {
					memcpy(lq + ((size_t)(b * T + t) * 3 + j) * CL,
					    qkv + (size_t)(b * T + t) * 3 * C + j * C + r * CL,
					    CL * sizeof *lq);
					if (j == 0)
						memcpy(ldo + (size_t)(b * T + t) * CL,
						    dout + (size_t)(b * T + t) * C + r * CL,
						    CL * sizeof *ldo);
				}
		part = (struct gpt_mask){ 1234, 7, r * NL, NH };
		be->attention_forward(ly, la, lq, B, T, CL, NL, p, &part);
		be->attention_backward(ldq, scr, ldo, lq, la, B, T, CL, NL, p,
		    &part);
		same = 1;
		for (b = 0; b < B; b++)
			for (t = 0; t < T; t++) {
				same &= memcmp(ly + (size_t)(b * T + t) * CL,
				    y + (size_t)(b * T + t) * C + r * CL,
				    CL * sizeof *ly) == 0;
				for (j = 0; j < 3; j++)
					same &= memcmp(ldq + ((size_t)(b * T + t) * 3 + j) * CL,
					    dq + (size_t)(b * T + t) * 3 * C + j * C + r * CL,
					    CL * sizeof *ldq) == 0;
			}
		for (b = 0; b < B; b++)
			for (h = 0; h < NL; h++)
				same &= memcmp(la + (size_t)(b * NL + h) * T * T,
				    att + (size_t)(b * NH + r * NL + h) * T * T,
				    T * T * sizeof *la) == 0;
		OK(same, "%s attention, dropout %.1f, over heads [%d, %d) of %d: "
		    "output, probabilities and gradients are the whole call's, "
		    "bit for bit", be->name, p, r * NL, r * NL + NL, NH);
	}
	/* the second sample alone, as sample 8 */
	part = (struct gpt_mask){ 1234, 8, 0, NH };
	be->attention_forward(ly, la, qkv + nq / B, 1, T, C, NH, p, &part);
	be->attention_backward(ldq, scr, dout + ny / B, qkv + nq / B, la, 1, T,
	    C, NH, p, &part);
	OK(memcmp(ly, y + ny / B, ny / B * sizeof *ly) == 0 &&
	    memcmp(ldq, dq + nq / B, nq / B * sizeof *ldq) == 0 &&
	    memcmp(la, att + na / B, na / B * sizeof *la) == 0,
	    "%s attention, dropout %.1f, over sample 8 alone: the whole call's "
	    "second sample, bit for bit", be->name, p);
	/* hidden states: samples 7 and 8 at once, and 8 alone */
	be->dropout(y, dout, ny, p, 55, (uint64_t)7 * T * C);
	be->residual_forward(ly, qkv, dout + ny / B, ny / B, p, 55,
	    (uint64_t)8 * T * C);
	same = 1;
	for (i = 0; i < ny / B; i++)
		same &= ly[i] == qkv[i] + y[ny / B + i];
	OK(same, "%s dropout from element i0: sample 8 alone draws the masks "
	    "of the batch from sample 7", be->name);
	OK(kept > 0, "%s the attention's output is not all dropped", be->name);
	free(qkv);
	free(dout);
	free(y);
	free(att);
	free(dq);
	free(scr);
	free(lq);
	free(ldo);
	free(ly);
	free(la);
	free(ldq);
}

/*
 * The backend functions of the parallel layouts: the embedding of a
 * vocabulary part (the owner adds, the others give zeros: parts sum to
 * the whole exactly), the cross-entropy over vocabulary parts in three
 * calls against the fused one, add, and the chunked sums of squares.
 */
static void
test_parts_backend(const struct gpt_backend *be)
{
	enum { B = 2, T = 5, C = 8, Vp = 24, V = 21, N = B * T, P = 3, VR = Vp / P };
	float wte[Vp * C], wpe[T * C], dout[N * C], out[N * C], sum[N * C];
	float dw[Vp * C], dwp[T * C], pw[P][VR * C], pwp[P][T * C];
	float x[N * V], g[N * V], lp[N * V], loss[N], ploss[N], mx[N], m2[N];
	double sx[2 * N], s2[2 * N];
	int32_t tok[N], tg[N];
	float *big;
	size_t i, nb = 3 * GPT_NORM_CHUNK + 5;
	double part[4], whole;
	int r, n, same;

	fill(wte, Vp * C, 1);
	fill(wpe, T * C, 1);
	fill(dout, N * C, 1);
	for (i = 0; i < N; i++) {
		tok[i] = (int32_t)rnd(V);
		tg[i] = (int32_t)rnd(V);
	}
	tok[0] = tok[1] = 20;	/* a repeated token, in the last part */
	be->encoder_forward(out, tok, wte, wpe, B, T, C, 0, Vp);
	memset(sum, 0, sizeof sum);
	memset(dw, 0, sizeof dw);
	memset(dwp, 0, sizeof dwp);
	be->encoder_backward(dw, dwp, dout, tok, B, T, C, 0, Vp);
	same = 1;
	for (r = 0; r < P; r++) {
		float o[N * C];

		be->encoder_forward(o, tok, wte + r * VR * C, wpe, B, T, C,
		    r * VR, VR);
		be->add(sum, o, N * C);
		memset(pw[r], 0, sizeof pw[r]);
		memset(pwp[r], 0, sizeof pwp[r]);
		be->encoder_backward(pw[r], pwp[r], dout, tok, B, T, C, r * VR, VR);
		same &= memcmp(pw[r], dw + r * VR * C, sizeof pw[r]) == 0 &&
		    memcmp(pwp[r], dwp, sizeof dwp) == 0;
	}
	OK(memcmp(sum, out, sizeof out) == 0, "%s embedding of %d vocabulary "
	    "parts: their sum is the whole's, bit for bit", be->name, P);
	OK(same, "%s embedding gradient of each vocabulary part: its rows of "
	    "the whole's, bit for bit, and the positions' whole", be->name);

	/* cross-entropy: three parts of 7 columns of V = 21 */
	fill(x, N * V, 8);
	memcpy(g, x, sizeof x);
	be->crossentropy(loss, g, tg, N, V, 0.5f);
	for (n = 0; n < N; n++)
		m2[n] = -INFINITY;
	memset(s2, 0, sizeof s2);
	for (r = 0; r < P; r++) {
		for (n = 0; n < N; n++)
			memcpy(lp + n * 7 + r * N * 7, x + n * V + r * 7,
			    7 * sizeof *lp);
		be->ce_rowmax(mx, lp + r * N * 7, N, 7);
		for (n = 0; n < N; n++)
			m2[n] = mx[n] > m2[n] ? mx[n] : m2[n];
	}
	for (r = 0; r < P; r++) {
		be->ce_rowsum(sx, lp + r * N * 7, tg, m2, N, 7, r * 7);
		for (n = 0; n < 2 * N; n++)
			s2[n] += sx[n];
	}
	same = 1;
	for (r = 0; r < P; r++) {
		be->ce_grad(ploss, lp + r * N * 7, tg, m2, s2, N, 7, r * 7, 0.5f);
		for (n = 0; n < N; n++)
			for (i = 0; i < 7; i++)
				same &= fabsf(lp[r * N * 7 + n * 7 + i] -
				    g[n * V + r * 7 + i]) <= 1e-6f *
				    (fabsf(g[n * V + r * 7 + i]) + 1e-3f);
		for (n = 0; n < N; n++)
			same &= fabsf(ploss[n] - loss[n]) <= 1e-6f * loss[n];
	}
	OK(same, "%s cross-entropy over %d vocabulary parts in three calls: "
	    "the fused call's losses and gradient to 1e-6", be->name, P);

	/* the norm's chunks */
	big = xmalloc(nb * sizeof *big);
	fill(big, nb, 1);
	be->sumsq_chunks(part, big, nb);
	whole = 0;
	for (r = 0; r < 4; r++)
		whole += part[r];
	for (i = 0, sx[0] = 0; i < GPT_NORM_CHUNK; i++)
		sx[0] += (double)big[i] * big[i];
	OK(whole == be->sumsq(big, nb) && fabs(part[0] - sx[0]) <= 1e-12 * sx[0] &&
	    part[3] == be->sumsq(big + 3 * GPT_NORM_CHUNK, 5),
	    "%s sums of squares by chunks of %d: in order, the whole's",
	    be->name, GPT_NORM_CHUNK);
	free(big);
}

/* ---- checkpoints ---- */

/* Copy src's model.safetensors to dir in HF's original spelling: no
 * "transformer." prefix, attention mask buffers, a tied lm_head.weight. */
static void
hf_spelling(struct gpt *m, const char *dir)
{
	static const char hfcfg[] = "{\"n_layer\": 2, \"n_head\": 4, "
	    "\"n_embd\": 64, \"n_ctx\": 32, \"vocab_size\": 300, "
	    "\"model_type\": \"gpt2\"}";
	float *h = xmalloc(m->nparams * sizeof *h), *mask;
	struct safetensors_out *t, *u;
	char path[4200];
	char err[512];
	size_t n, i, k = 0;
	int l, L = m->cfg.nlayer, T = m->cfg.maxpos;

	gpt_get(m, GPT_PARAMS, h);
	t = ckpt_tensors(m, h, "", &n);
	u = xcalloc(n + (size_t)L + 1, sizeof *u);
	mask = xcalloc((size_t)T * T, sizeof *mask);
	for (i = 0; i < n; i++) {
		u[k] = t[i];
		memmove(u[k].name, u[k].name + 12, strlen(u[k].name + 12) + 1);
		k++;
	}
	for (l = 0; l < L; l++) {
		snprintf(u[k].name, sizeof u->name, "h.%d.attn.bias", l);
		u[k].rank = 2;
		u[k].shape[0] = u[k].shape[1] = T;
		u[k++].data = mask;
	}
	u[k] = t[0];
	snprintf(u[k++].name, sizeof u->name, "lm_head.weight");
	mkdir(dir, 0755);
	snprintf(path, sizeof path, "%s/model.safetensors", dir);
	die_if(safetensors_write(path, NULL, u, k, err, sizeof err) < 0, "hf", err);
	snprintf(path, sizeof path, "%s/config.json", dir);
	write_bytes(path, hfcfg, strlen(hfcfg));
	free(h);
	free(t);
	free(u);
	free(mask);
}

static void
test_checkpoint(const char *dir)
{
	struct gpt m, m2;
	struct train_state st = { 7, 56, 8, 56, 99, 32768, 12, 1 }, st2;
	struct json_val *doc;
	struct gpt_config c = { 0 };	/* ckpt_read_config sets the shape only */
	float *a = xmalloc(sizeof(float) << 20), *b = xmalloc(sizeof(float) << 20);
	char err[512], path[4096], ck[4200], cfg[4300];
	int code, i, ok, kind;

	die_if(gpt_init(&m, &small, &gpt_cpu, err, sizeof err) < 0, "init", err);
	gpt_init_weights(&m, 3, 0.02f);
	for (i = 0; i < 3; i++) {	/* some moments to save */
		float *g = xmalloc(m.nparams * sizeof *g);

		fill(g, m.nparams, 0.1f);
		/* the padded rows never get a gradient */
		memset(g + m.t[GPT_WTE].off + (size_t)small.vocab * small.nembd, 0,
		    (size_t)(small.vocab_pad - small.vocab) * small.nembd * sizeof *g);
		gpt_put(&m, GPT_GRADS, g);
		gpt_update(&m, &(struct adamw){ 0.9f, 0.95f, 1e-8f, 0.1f }, 1e-3f, 1);
		free(g);
	}
	gpt_get(&m, GPT_PARAMS, a);
	OK(a[m.t[GPT_WTE].off + (size_t)small.vocab * small.nembd] == 0,
	    "checkpoint: padded embedding rows stay 0 under AdamW");
	snprintf(path, sizeof path, "%s/ck", dir);
	OK(ckpt_save(path, &m, &st, "{\"lr\": 0.5}", 1, err, sizeof err,
	    &code) == 0, "checkpoint: save");
	OK(ckpt_save(path, &m, &st, NULL, 1, err, sizeof err, &code) == 0,
	    "checkpoint: saving the same iteration again replaces it");
	OK(ckpt_resolve(path, ck, sizeof ck, &kind, err, sizeof err,
	    &code) == 0 && kind == CKPT_RUN, "checkpoint: resolve the latest");
	like_err(ck, "/ck/iter_0000007", "checkpoint: ... iter_0000007");
	snprintf(cfg, sizeof cfg, "%s/config.json", ck);
	OK(ckpt_read_config(cfg, &c, err, sizeof err, &code) == 0 &&
	    c.nlayer == 2 && c.nhead == 4 && c.nembd == 64 && c.maxpos == 32 &&
	    c.vocab == 300 && c.ln_eps == 1e-5f, "checkpoint: config.json read back");
	c.vocab_pad = 512;	/* other padding: the real rows are what is saved */
	die_if(gpt_init(&m2, &c, &gpt_cpu, err, sizeof err) < 0, "init", err);
	OK(ckpt_load_model(ck, &m2, err, sizeof err, &code) == 0 &&
	    ckpt_load_optim(ck, &m2, err, sizeof err, &code) == 0 &&
	    ckpt_load_state(ck, &st2, &doc, err, sizeof err, &code) == 0,
	    "checkpoint: load weights, optimizer and state");
	OK(memcmp(&st, &st2, sizeof st) == 0 && m2.step == 3,
	    "checkpoint: the trainer state (fp16's loss scaler too) and AdamW "
	    "step round-trip");
	json_doc_free(doc);
	for (ok = 1, i = 0; i < 3; i++) {
		enum gpt_buffer w = i == 0 ? GPT_PARAMS : i == 1 ? GPT_ADAM_M : GPT_ADAM_V;
		size_t n = (size_t)small.vocab * small.nembd;

		gpt_get(&m, w, a);
		gpt_get(&m2, w, b);
		ok &= memcmp(a, b, n * sizeof *a) == 0;
		ok &= memcmp(a + m.t[GPT_WPE].off, b + m2.t[GPT_WPE].off,
		    (m.nparams - m.t[GPT_WPE].off) * sizeof *a) == 0;
	}
	OK(ok, "checkpoint: weights and moments round-trip bit for bit");
	gpt_free(&m2);

	snprintf(path, sizeof path, "%s/hf", dir);
	hf_spelling(&m, path);
	OK(ckpt_resolve(path, ck, sizeof ck, &kind, err, sizeof err,
	    &code) == 0 && strcmp(ck, path) == 0 && kind == CKPT_WEIGHTS,
	    "checkpoint: a directory with only a model resolves to itself, weights alone");
	snprintf(cfg, sizeof cfg, "%s/config.json", path);
	OK(ckpt_read_config(cfg, &c, err, sizeof err, &code) == 0 && c.maxpos == 32,
	    "checkpoint: HF config with n_ctx only");
	c.vocab_pad = 384;
	die_if(gpt_init(&m2, &c, &gpt_cpu, err, sizeof err) < 0, "init", err);
	OK(ckpt_load_model(path, &m2, err, sizeof err, &code) == 0,
	    "checkpoint: HF names without the prefix, mask buffers and lm_head ignored");
	gpt_get(&m, GPT_PARAMS, a);
	gpt_get(&m2, GPT_PARAMS, b);
	OK(memcmp(a, b, m.nparams * sizeof *a) == 0, "checkpoint: ... the same weights");
	OK(ckpt_load_optim(path, &m2, err, sizeof err, &code) == 1 &&
	    ckpt_load_state(path, &st2, &doc, err, sizeof err, &code) == 1,
	    "checkpoint: no optimizer or trainer state there");
	gpt_free(&m2);

	c.nlayer = 3;
	die_if(gpt_init(&m2, &c, &gpt_cpu, err, sizeof err) < 0, "init", err);
	OK(ckpt_load_model(path, &m2, err, sizeof err, &code) < 0 && code == XDATA,
	    "checkpoint: a missing tensor is bad data");
	like_err(err, "/hf/model.safetensors: no tensor 'transformer.h.2.ln_1.weight' "
	    "of the 3 layers of config.json", "checkpoint: ... naming it");
	OK(ckpt_check_model(path, &c, err, sizeof err, &code) < 0 &&
	    code == XDATA && strstr(err, "no tensor 'transformer.h.2.ln_1."
	    "weight'") != NULL, "checkpoint: ckpt_check_model finds it from "
	    "the configuration alone");
	c.nlayer = 2;
	OK(ckpt_check_model(path, &c, err, sizeof err, &code) == 0,
	    "checkpoint: ckpt_check_model passes a matching file");
	gpt_free(&m2);
	gpt_free(&m);
	free(a);
	free(b);
}

/* ---- Megatron's sample order (notes/megatron-compat.md §3.8) ---- */

static const uint32_t vec_sizes[] = { 5, 3, 7, 4, 6 };

static uint32_t
vec_len(void *arg, uint64_t seq)
{
	return vec_sizes[seq];
}

/* token t of sequence s is 100 s + t */
static void
vec_read(void *arg, uint64_t seq, uint64_t off, size_t n, uint32_t *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = (uint32_t)(100 * seq + off + i);
}

static void
index_str(const struct sampler_index *x, char *s, size_t size)
{
	uint64_t i;
	size_t n = 0;

	for (i = 0; i < x->ndoc; i++)
		n += (size_t)snprintf(s + n, size - n, "%s%u", i ? " " : "", x->doc[i]);
	n += (size_t)snprintf(s + n, size - n, " |");
	for (i = 0; i <= x->nsamples; i++)
		n += (size_t)snprintf(s + n, size - n, " (%llu,%u)",
		    (unsigned long long)x->pos[i], x->off[i]);
	n += (size_t)snprintf(s + n, size - n, " |");
	for (i = 0; i < x->nsamples; i++)
		n += (size_t)snprintf(s + n, size - n, " %llu",
		    (unsigned long long)x->shuffle[i]);
}

static void
test_sampler(void)
{
	static const struct { uint64_t ns, begin, end; int epochs, sep; const char *want; } v[] = {
		{ 5, 0, 5, 1, 0, "4 0 1 2 3 | (0,0) (0,4) (1,2) (2,1) (3,2) (3,6) (4,3) | 5 2 3 1 0 4" },
		{ 7, 0, 5, 2, 1, "4 0 1 2 3 3 2 1 0 4 | (0,0) (0,4) (1,2) (2,1) (3,2) (3,6) (4,3) (5,3) (6,3) (7,0) (8,1) (9,0) (9,4) | 0 4 3 2 5 1 7 6 9 8 11 10" },
		{ 12, 0, 5, 2, 0, "2 2 4 1 0 3 4 0 1 3 | (0,0) (0,4) (1,1) (1,5) (2,2) (3,0) (4,1) (5,0) (6,0) (6,4) (7,2) (8,1) (9,2) | 3 11 2 1 7 5 4 0 8 6 10 9" },
		{ 3, 3, 5, 2, 0, "3 4 3 4 | (0,0) (1,0) (1,4) (2,2) (3,2) | 1 2 3 0" },
	};
	struct sampler_index x;
	struct mt19937 r;
	char s[1024], err[256];
	uint32_t tok[5];
	uint16_t didx[10];
	uint64_t sidx[10], b[3], e[3];
	double w[3], bw[2] = { 0.7, 0.3 };
	size_t i;
	int k, code = 0;

	mt19937_seed(&r, 5489);
	OK(mt19937_next(&r) == 3499211612u, "MT19937: the reference first output for seed 5489");
	for (i = 0; i < sizeof v / sizeof *v; i++) {
		OK(sampler_index_build(&x, vec_len, NULL, v[i].begin, v[i].end, v[i].ns,
		    4, 1234, err, sizeof err, &code) == 0, "index: build case %zu", i);
		index_str(&x, s, sizeof s);
		SAMES(s, v[i].want, "index: Megatron's doc, sample and shuffle "
		    "indices, %llu samples of sequences %llu..%llu",
		    (unsigned long long)v[i].ns, (unsigned long long)v[i].begin,
		    (unsigned long long)v[i].end - 1);
		OK(x.epochs == v[i].epochs && x.separate_last == v[i].sep,
		    "index: %d epochs, last %s", v[i].epochs,
		    v[i].sep ? "separate" : "mixed in");
		if (i == 0) {
			sampler_index_sample(&x, 0, vec_len, vec_read, NULL, tok);
			OK(tok[0] == 206 && tok[1] == 300 && tok[2] == 301 &&
			    tok[3] == 302 && tok[4] == 303,
			    "index: sample 0 is token 6 of sequence 2, then 0..3 of 3");
		}
		sampler_index_free(&x);
	}
	OK(sampler_index_build(&x, vec_len, NULL, 2, 2, 1, 4, 1, err, sizeof err, &code) < 0,
	    "index: an empty range is refused");
	SAMES(err, "no tokens", "index: ... saying so");
	OK(code == XDATA, "index: ... a data error");
	OK(sampler_index_build(&x, vec_len, NULL, 0, 5, 0, 4, 1234, err, sizeof err, &code) == 0 &&
	    x.epochs == 1 && !x.separate_last && x.nsamples == 6,
	    "index: 0 samples asks for one epoch, (25 - 1) / 4 samples");
	sampler_index_free(&x);
	OK(sampler_index_build(&x, vec_len, NULL, 1, 2, 0, 4, 1234, err, sizeof err, &code) < 0,
	    "index: one epoch shorter than a sample is refused");
	SAMES(err, "its 3 tokens hold no sample of 5", "index: ... saying so");
	OK(sampler_rounding("legacy") == SAMPLER_LEGACY &&
	    sampler_rounding("core") == SAMPLER_CORE && sampler_rounding("Core") < 0 &&
	    sampler_rounding("") < 0, "rounding: legacy and core, nothing else");
	for (k = 0; k < 2; k++)
		OK(sampler_split_parse("0, 0", k, w) < 0 && sampler_split_parse("", k, w) < 0 &&
		    sampler_split_parse("x", k, w) < 0, "split: no weight or a zero sum refused (%s)",
		    k ? "core" : "legacy");
	OK(sampler_split_parse("1,2,3,4", SAMPLER_CORE, w) < 0,
	    "split: core refuses four weights");
	OK(sampler_split_parse("1,2,3,x", SAMPLER_LEGACY, w) < 0 &&
	    sampler_split_parse("90,10,", SAMPLER_LEGACY, w) < 0 &&
	    sampler_split_parse("90:10", SAMPLER_LEGACY, w) < 0 &&
	    sampler_split_parse("0x10,1", SAMPLER_LEGACY, w) < 0 &&
	    sampler_split_parse("-1,2", SAMPLER_LEGACY, w) < 0 &&
	    sampler_split_parse("inf,1", SAMPLER_LEGACY, w) < 0,
	    "split: v2.5 refuses what float() refuses, and here negative or "
	    "infinite weights");
	OK(sampler_split_parse(" 98 ,\t2 ", SAMPLER_LEGACY, w) == 0 && w[0] == 0.98 &&
	    w[2] == 0, "split: v2.5 takes spaces around its numbers");
	sampler_split_ranges(w, SAMPLER_LEGACY, 0, b, e);
	OK(b[0] == 0 && e[0] == 0 && b[1] == 0 && e[1] == 0,
	    "split: no sequences, every range empty");
	sampler_blend_build(bw, 2, 10, didx, sidx);
	for (i = 0; i < 10; i++)
		s[i] = (char)('0' + didx[i]);
	s[10] = '\0';
	SAMES(s, "0100100100", "blend: Megatron's greedy interleave of 0.7 and 0.3");
	OK(sidx[9] == 6 && sidx[7] == 2, "blend: each dataset's samples in order");
}

/* ---- Megatron's order: t/data/megatron-order.txt (contrib/oracle/megatron-order.py) ---- */

#define VEC_DS 10000000u	/* token t of sequence s of dataset d: */
#define VEC_SEQ 1000u		/* d VEC_DS + s VEC_SEQ + t */

struct vec_data {
	char name[16];
	uint32_t *len;
	int n;
};

static uint64_t
fnv_u32(uint64_t h, const uint32_t *v, size_t n)
{
	size_t i;
	int k;

	for (i = 0; i < n; i++)
		for (k = 0; k < 4; k++) {
			h ^= (v[i] >> (8 * k)) & 0xff;
			h *= 0x100000001b3ULL;
		}
	return h;
}

/* The next tab-separated field of *p. */
static char *
vec_field(char **p)
{
	char *f = *p, *t;

	if (f == NULL)
		return "";
	if ((t = strchr(f, '\t')) != NULL) {
		*t = '\0';
		*p = t + 1;
	} else {
		*p = NULL;
	}
	return f;
}

/*
 * PREFIX.bin/.idx in document mode, written here by hand as the readers'
 * reference: tokens of width bytes (2: uint16, Megatron's dtype code 8;
 * 4: int32, code 4), token t of sequence s being base + s stride + t.
 */
static void
write_dataset(const char *prefix, const uint32_t *lens, int n, int width,
    uint32_t base, uint32_t stride)
{
	unsigned char hdr[34] = "MMIDIDX\0\0", b[8];
	char path[4200];
	uint64_t p = 0;
	FILE *f;
	int s;
	uint32_t t;

	snprintf(path, sizeof path, "%s.bin", prefix);
	f = fopen(path, "wb");
	for (s = 0; s < n; s++)
		for (t = 0; t < lens[s]; t++) {
			put_le(b, base + (uint32_t)s * stride + t, width);
			fwrite(b, 1, (size_t)width, f);
		}
	fclose(f);
	snprintf(path, sizeof path, "%s.idx", prefix);
	f = fopen(path, "wb");
	put_le(hdr + 9, 1, 8);
	hdr[17] = width == 4 ? 4 : 8;
	put_le(hdr + 18, (uint64_t)n, 8);
	put_le(hdr + 26, (uint64_t)n + 1, 8);
	fwrite(hdr, 1, 34, f);
	for (s = 0; s < n; s++) {
		put_le(b, lens[s], 4);
		fwrite(b, 1, 4, f);
	}
	for (s = 0; s < n; s++) {
		put_le(b, p, 8);
		fwrite(b, 1, 8, f);
		p += (uint64_t)width * lens[s];
	}
	for (s = 0; s <= n; s++) {
		put_le(b, (uint64_t)s, 8);
		fwrite(b, 1, 8, f);
	}
	fclose(f);
}

/* "d:s.o-s.o": a sample's first and last token. */
static void
vec_describe(const uint32_t *tok, int L, char *s, size_t size)
{
	uint32_t a = tok[0], z = tok[L];

	snprintf(s, size, "%u:%u.%u-%u.%u", a / VEC_DS, a % VEC_DS / VEC_SEQ,
	    a % VEC_SEQ, z % VEC_DS / VEC_SEQ, z % VEC_SEQ);
}

/* split ROUNDING S SPLIT RANGES */
static void
vec_split(char *p)
{
	const char *how = vec_field(&p);
	uint64_t n = strtoull(vec_field(&p), NULL, 10), b[3], e[3];
	const char *split = vec_field(&p), *want = vec_field(&p);
	int rounding = sampler_rounding(how), i;
	char got[256];
	size_t k = 0;
	double w[3];

	if (sampler_split_parse(split, rounding, w) < 0 ||
	    sampler_split_ranges(w, rounding, n, b, e) < 0) {
		snprintf(got, sizeof got, "error");
	} else {
		for (i = 0; i < 3; i++)
			if (e[i] > b[i])
				k += (size_t)snprintf(got + k, sizeof got - k, "%s%llu-%llu",
				    i ? " " : "", (unsigned long long)b[i],
				    (unsigned long long)e[i]);
			else
				k += (size_t)snprintf(got + k, sizeof got - k, "%snone",
				    i ? " " : "");
	}
	SAMES(got, want, "split: '%s' of %llu as %s", split, (unsigned long long)n,
	    rounding == SAMPLER_LEGACY ? "Megatron v2.5" : "Megatron-core");
}

/* blend ROUNDING N WEIGHTS NEEDS FIRST DIGEST SUM */
static void
vec_blend(char *p)
{
	const char *how = vec_field(&p);
	uint64_t n = strtoull(vec_field(&p), NULL, 10), *sidx;
	char *ws = vec_field(&p), *needs = vec_field(&p), *first = vec_field(&p);
	char *digest = vec_field(&p), *sum = vec_field(&p), got[1024], *tok, *save;
	int rounding = sampler_rounding(how), nw = 0, i;
	double w[16], bw[16];
	uint32_t *d32;
	uint16_t *didx;
	size_t k = 0;

	for (tok = strtok_r(ws, " ", &save); tok && nw < 16;
	    tok = strtok_r(NULL, " ", &save))
		w[nw++] = strtod(tok, NULL);
	sampler_normalize(w, nw, rounding == SAMPLER_CORE);
	for (i = 0; i < nw; i++)
		k += (size_t)snprintf(got + k, sizeof got - k, "%s%llu", i ? " " : "",
		    (unsigned long long)sampler_blend_need(w[i], n, rounding));
	SAMES(got, needs, "blend: %s asks each of %d datasets for its share of %llu "
	    "and 0.5%%", rounding == SAMPLER_LEGACY ? "v2.5" : "core", nw,
	    (unsigned long long)n);
	memcpy(bw, w, sizeof w);
	sampler_normalize(bw, nw, 1);
	didx = xmalloc(n * sizeof *didx);
	sidx = xmalloc(n * sizeof *sidx);
	d32 = xmalloc(n * sizeof *d32);
	sampler_blend_build(bw, nw, n, didx, sidx);
	for (i = 0; i < 60 && (uint64_t)i < n; i++)
		got[i] = "0123456789abcdef"[didx[i]];
	got[i] = '\0';
	for (k = 0; k < n; k++)
		d32[k] = didx[k];
	snprintf(got + i + 1, sizeof got - (size_t)i - 1, "%016llx",
	    (unsigned long long)fnv_u32(0xcbf29ce484222325ULL, d32, n));
	OK(strcmp(got, first) == 0 && strcmp(got + i + 1, digest) == 0,
	    "blend: the %s interleave of %d datasets, all %llu samples",
	    rounding == SAMPLER_LEGACY ? "v2.5" : "core", nw, (unsigned long long)n);
	if (strcmp(sum, "pairwise") == 0) {
		/* the vector tells numpy's pairwise sum from a plain one */
		memcpy(bw, w, sizeof w);
		sampler_normalize(bw, nw, 0);
		sampler_blend_build(bw, nw, n, didx, sidx);
		for (k = 0; k < n; k++)
			d32[k] = didx[k];
		snprintf(got, sizeof got, "%016llx",
		    (unsigned long long)fnv_u32(0xcbf29ce484222325ULL, d32, n));
		OK(strcmp(got, digest) != 0, "blend: ... which a left-to-right "
		    "sum of %d weights would not give", nw);
	}
	free(didx);
	free(sidx);
	free(d32);
}

/* order NAME ROUNDING SEED L SPLIT NEEDS DATA-PATH, then its lines */
static void
vec_order(char *p, FILE *f, const char *dir, const struct vec_data *data, int ndata)
{
	const char *name = vec_field(&p), *how = vec_field(&p);
	uint32_t seed = (uint32_t)strtoul(vec_field(&p), NULL, 10);
	int L = atoi(vec_field(&p)), nargs = 0, i, j, opened, code, weighted;
	const char *split = vec_field(&p);
	char *needs = vec_field(&p), *paths = vec_field(&p), *args[64], *tok, *save;
	char prefixes[64][256], *line = NULL, err[512], got[2048];
	uint64_t need[3], n, k;
	size_t size = 0, m;
	struct gpt_data d;
	uint32_t *tokens = xmalloc((size_t)(L + 1) * sizeof *tokens);
	uint64_t h;

	need[0] = strtoull(strtok_r(needs, " ", &save), NULL, 10);
	need[1] = strtoull(strtok_r(NULL, " ", &save), NULL, 10);
	need[2] = strtoull(strtok_r(NULL, " ", &save), NULL, 10);
	for (tok = strtok_r(paths, " ", &save); tok && nargs < 64;
	    tok = strtok_r(NULL, " ", &save))
		args[nargs++] = tok;
	/* the prefixes, each after its weight when there are weights */
	weighted = nargs > 1 && nargs % 2 == 0 &&
	    strspn(args[0], "0123456789.") == strlen(args[0]);
	for (i = j = 0; i < nargs; i++) {
		int ds;

		if (weighted && i % 2 == 0)
			continue;
		for (ds = 0; ds < ndata && strcmp(data[ds].name, args[i]) != 0; ds++)
			;
		if (ds == ndata) {
			OK(0, "order %s: dataset %s in the vectors", name, args[i]);
			return;
		}
		snprintf(prefixes[i], sizeof prefixes[i], "%s/%s.%d", dir, args[i], j);
		write_dataset(prefixes[i], data[ds].len, data[ds].n, 4,
		    (uint32_t)j * VEC_DS, VEC_SEQ);
		args[i] = prefixes[i];
		j++;
	}
	opened = gpt_data_open(&d, args, nargs, split, how, seed, L, 100000000u,
	    need[0], need[1], need[2], err, sizeof err, &code) == 0;
	while (getline(&line, &size, f) > 0) {
		char *q = line, *what, *want;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#')
			continue;
		what = vec_field(&q);
		if (strcmp(what, "end") == 0)
			break;
		if (strcmp(what, "error") == 0) {
			OK(!opened, "order %s (%s): Megatron cannot build it, nor "
			    "gpt-train (%s)", name, how, opened ? "opened" : err);
			continue;
		}
		if (!opened) {
			OK(0, "order %s (%s): open: %s", name, how, err);
			continue;
		}
		i = atoi(vec_field(&q));
		if (strcmp(what, "sample") == 0) {
			want = vec_field(&q);

			m = 0;
			got[0] = '\0';
			for (k = 0; k < 12 && k < need[i]; k++) {
				if (d.src[i].get(d.src[i].arg, k, tokens, err,
				    sizeof err, &code) < 0)
					break;
				vec_describe(tokens, L, got + m + (m > 0),
				    sizeof got - m - 1);
				if (m > 0)
					got[m] = ' ';
				m += strlen(got + m);
			}
			SAMES(got, want, "order %s (%s): the first %s samples, "
			    "seed %u", name, how, i == 0 ? "train" : i == 1 ?
			    "valid" : "test", seed);
		} else if (strcmp(what, "digest") == 0) {
			n = strtoull(vec_field(&q), NULL, 10);
			h = 0xcbf29ce484222325ULL;
			for (k = 0; k < n; k++) {
				if (d.src[i].get(d.src[i].arg, k, tokens, err,
				    sizeof err, &code) < 0)
					break;
				h = fnv_u32(h, tokens, (size_t)L + 1);
			}
			snprintf(got, sizeof got, "%016llx", (unsigned long long)h);
			want = vec_field(&q);
			SAMES(got, want, "order %s (%s): all %llu %s samples",
			    name, how, (unsigned long long)n, i == 0 ? "train" :
			    i == 1 ? "valid" : "test");
		}
	}
	if (opened)
		gpt_data_close(&d);
	free(line);
	free(tokens);
}

static void
test_vectors(const char *dir)
{
	const char *src = getenv("OWT_SRC");
	struct vec_data data[32];
	char path[4096], *line = NULL, *p, *what, *tok, *save;
	size_t size = 0;
	int ndata = 0, i, n;
	FILE *f;

	snprintf(path, sizeof path, "%s/t/data/megatron-order.txt", src ? src : ".");
	if ((f = fopen(path, "r")) == NULL) {
		OK(0, "vectors: open %s", path);
		return;
	}
	while (getline(&line, &size, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		p = line;
		what = vec_field(&p);
		if (strcmp(what, "dataset") == 0 && ndata < 32) {
			struct vec_data *v = &data[ndata++];

			snprintf(v->name, sizeof v->name, "%s", vec_field(&p));
			v->len = NULL;
			n = 0;
			for (tok = strtok_r(p, " ", &save); tok;
			    tok = strtok_r(NULL, " ", &save)) {
				v->len = xrealloc(v->len, (size_t)(n + 1) * sizeof *v->len);
				v->len[n++] = (uint32_t)strtoul(tok, NULL, 10);
			}
			v->n = n;
		} else if (strcmp(what, "split") == 0) {
			vec_split(p);
		} else if (strcmp(what, "blend") == 0) {
			vec_blend(p);
		} else if (strcmp(what, "order") == 0) {
			vec_order(p, f, dir, data, ndata);
		}
	}
	fclose(f);
	free(line);
	for (i = 0; i < ndata; i++)
		free(data[i].len);
}

/* ---- datasets: the order gpt-train reads them in ---- */

static void
test_data(const char *dir)
{
	static const uint32_t want[5][5] = {
		{ 206, 300, 301, 302, 303 }, { 2, 3, 4, 100, 101 },
		{ 101, 102, 200, 201, 202 }, { 404, 405, 0, 1, 2 },
		{ 400, 401, 402, 403, 404 },
	};
	struct gpt_data d;
	char a[4096], b[4096], bad[4096], err[512], *args[4];
	uint32_t tok[5], lens2[3] = { 9, 9, 9 };
	int code, i, ok = 1, from_b = 0;

	snprintf(a, sizeof a, "%s/a", dir);
	snprintf(b, sizeof b, "%s/b", dir);
	write_dataset(a, vec_sizes, 5, 2, 0, 100);
	write_dataset(b, lens2, 3, 2, 5000, 100);
	args[0] = a;
	OK(gpt_data_open(&d, args, 1, "100,0,0", "core", 1234, 4, 6000, 5, 0, 0, err,
	    sizeof err, &code) == 0, "data: open a dataset");
	OK(d.have[0] && !d.have[1] && !d.have[2],
	    "data: --split 100,0,0 leaves no validation or test range");
	for (i = 0; i < 5; i++) {
		d.src[0].get(d.src[0].arg, (uint64_t)i, tok, err, sizeof err, &code);
		ok &= memcmp(tok, want[i], sizeof tok) == 0;
	}
	OK(ok, "data: samples 0..4 in Megatron's order, across sequences");
	OK(d.src[0].get(d.src[0].arg, 6, tok, err, sizeof err, &code) < 0,
	    "data: a sample beyond the index is refused");
	gpt_data_close(&d);

	args[0] = "0.5";
	args[1] = a;
	args[2] = "0.5";
	args[3] = b;
	OK(gpt_data_open(&d, args, 4, "100,0,0", "core", 1234, 4, 6000, 8, 0, 0, err,
	    sizeof err, &code) == 0, "data: blend two datasets");
	for (i = 0; i < 8; i++) {
		d.src[0].get(d.src[0].arg, (uint64_t)i, tok, err, sizeof err, &code);
		from_b += tok[0] >= 5000;
	}
	OK(from_b == 4, "data: 0.5 and 0.5 draw alternately (%d of 8 from b)", from_b);
	gpt_data_close(&d);

	args[0] = a;
	OK(gpt_data_open(&d, args, 1, "100,0,0", "core", 1234, 4, 300, 5, 0, 0, err,
	    sizeof err, &code) == 0, "data: a vocabulary smaller than the ids opens");
	OK(d.src[0].get(d.src[0].arg, 0, tok, err, sizeof err, &code) < 0 &&
	    code == XDATA, "data: ... but reading an id beyond it is bad data");
	like_err(err, "/a.bin: token id 300 is not below the vocabulary size 300 (--vocab-size)",
	    "data: ... naming the id and the dataset");
	gpt_data_close(&d);
	OK(gpt_data_open(&d, args, 1, "0,1,0", "core", 1234, 4, 6000, 5, 1, 0, err,
	    sizeof err, &code) < 0 && code == XDATA, "data: an empty train split is bad data");
	like_err(err, "/a: the train split of --split '0,1,0' is empty",
	    "data: ... saying so");
	snprintf(bad, sizeof bad, "%s/nosuch", dir);
	args[0] = bad;
	OK(gpt_data_open(&d, args, 1, "1", "core", 1234, 4, 6000, 5, 0, 0, err,
	    sizeof err, &code) < 0 && code == XDATA, "data: a missing dataset is bad data");
	args[0] = "0.5";
	args[1] = a;
	args[2] = "x";
	OK(gpt_data_open(&d, args, 3, "1", "core", 1234, 4, 6000, 5, 0, 0, err,
	    sizeof err, &code) < 0 && code == XUSAGE,
	    "data: an unpaired weight is a usage error");
	SAMES(err, "--data-path: weights and prefixes must pair up ('x' has no prefix)",
	    "data: ... naming it");
	args[0] = "1e308";
	args[2] = "1e308";
	args[3] = b;
	OK(gpt_data_open(&d, args, 4, "1", "core", 1234, 4, 6000, 5, 0, 0, err,
	    sizeof err, &code) < 0 && code == XUSAGE,
	    "data: weights summing beyond a double are a usage error");
	SAMES(err, "--data-path: the weights sum to infinity", "data: ... saying so");

	/* a holds (25 - 1) / 4 = 6 samples, b (27 - 1) / 4 = 6 */
	args[0] = a;
	args[1] = b;
	OK(gpt_data_open(&d, args, 2, "100,0,0", "core", 1234, 4, 6000, 20, 0, 0,
	    err, sizeof err, &code) < 0 && code == XDATA,
	    "data: an unweighted blend shorter than the run is bad data");
	SAMES(err, "--data-path: one epoch of the unweighted blend holds 12 train "
	    "samples, the run needs 20; give weights", "data: ... saying what it holds");
	OK(gpt_data_open(&d, args, 2, "100,0,0", "legacy", 1234, 4, 6000, 12, 0, 0,
	    err, sizeof err, &code) == 0, "data: ... one as long as the run opens");
	for (i = 0, from_b = 0; i < 12; i++) {
		d.src[0].get(d.src[0].arg, (uint64_t)i, tok, err, sizeof err, &code);
		from_b += tok[0] >= 5000;
	}
	OK(from_b == 6, "data: ... and draws all of both (%d of 12 from b)", from_b);
	gpt_data_close(&d);
	OK(gpt_data_open(&d, args, 1, "1", "v2.5", 1234, 4, 6000, 5, 0, 0, err,
	    sizeof err, &code) < 0 && code == XUSAGE, "data: another rounding is a usage error");
	SAMES(err, "--split-rounding: 'v2.5' is not legacy or core", "data: ... naming it");
	OK(gpt_data_open(&d, args, 1, "90:10", "legacy", 1234, 4, 6000, 5, 0, 0, err,
	    sizeof err, &code) < 0 && code == XUSAGE,
	    "data: a split v2.5 cannot read is a usage error");
	SAMES(err, "--split: '90:10' is not numbers separated by ',' or '/', not all 0, "
	    "as Megatron v2.5 reads it", "data: ... saying how v2.5 reads it");
	OK(gpt_data_open(&d, args, 1, "90:10", "core", 1234, 4, 6000, 5, 1, 0, err,
	    sizeof err, &code) == 0 && d.have[0] && d.have[1],
	    "data: ... which Megatron-core reads as 90 and 10");
	gpt_data_close(&d);
	args[0] = b;
	OK(gpt_data_open(&d, args, 1, "0,50,50", "legacy", 1234, 4, 6000, 5, 0, 0, err,
	    sizeof err, &code) < 0 && code == XDATA,
	    "data: a split v2.5's rounding puts below sequence 0 is bad data");
	like_err(err, "/b: --split '0,50,50' of 3 sequences puts a range below sequence 0 "
	    "with v2.5's rounding (Megatron v2.5 fails on it)", "data: ... saying so");
	OK(gpt_data_open(&d, args, 1, "0,50,50", "core", 1234, 2, 6000, 0, 1, 1, err,
	    sizeof err, &code) < 0 && code == XDATA,
	    "data: ... and Megatron-core's, with no train range, too");
}

/*
 * The PyTorch comparison's C half (contrib/oracle/gpt2-torch.py check DIR):
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
	struct safetensors_out *out, *t;
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
	die_if(ckpt_save(path, &m, &st, NULL, 0, err, sizeof err, &code) < 0, "save",
	    err);

	for (i = 0; i < sizeof tok / sizeof *tok; i++)
		tok[i] = rnd((uint32_t)small.vocab);
	for (i = 0; i < sizeof train_tok / sizeof *train_tok; i++)
		train_tok[i] = rnd((uint32_t)small.vocab);
	for (b = 0; b < B; b++)
		sample_io(tok + b * (T + 1), T, in + b * T, tg + b * T);

	out = xcalloc(3 + 2 * GPT_NPARAM * (size_t)small.nlayer, sizeof *out);
	loss = gpt_forward(&m, in, tg, 0, 0, 0);
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
	gpt_forward(&m, in, tg, 1.0f / (B * T), 0, 0);
	gpt_backward(&m);
	gpt_grad_tie(&m);
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
	 * a visible difference in the update: eps 1e-5 and lr 1e-3 keep it
	 * under the tolerance. Weight decay is large so that a wrong no-decay
	 * set shows; the clipping threshold is below the gradient norm.
	 */
	tr.lr = (struct schedule){ SCHEDULE_CONSTANT, 1e-3, 0, 0, 1 };
	tr.adam = (struct adamw){ 0.9f, 0.95f, 1e-5f, 0.5f };
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
	die_if(safetensors_write(path, NULL, out, nout, err, sizeof err) < 0, "write", err);

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

/*
 * fp16's dynamic loss scaler: Megatron's DynamicGradScaler.update step by
 * step; a power-of-two scale changes no bit of the updates; an overflow
 * skips the iteration as Megatron does.
 */
static void
test_scaler(void)
{
	enum { B = 2, T = 8, STEPS = 3 };
	const struct loss_scaler ls = { 1, 3, 2 };
	struct train_state st = { 0 };
	struct gpt_data_mock md = { 11, 0, T, 300 };
	struct sample_src src = { gpt_data_mock_get, &md };
	struct step_result r;
	struct trainer tr[2];
	struct gpt m[2];
	float *p0, *p1;
	char err[256];
	int code, i, k, same = 1;

	/* overflow, overflow (back off), clean x3 (grow), overflow x2 */
	static const struct { int overflow; double scale; uint64_t hyst; } seq[] = {
		{ 1, 8, 1 }, { 1, 4, 0 }, { 0, 4, 0 }, { 0, 4, 0 }, { 0, 8, 2 },
		{ 1, 8, 1 }, { 1, 4, 0 }, { 1, 2, 0 }, { 1, 1, 0 }, { 1, 1, 0 },
	};
	train_scaler_start(&ls, &st, 8);
	for (i = 0; i < (int)(sizeof seq / sizeof *seq); i++) {
		train_scaler_update(&ls, &st, seq[i].overflow);
		if (st.loss_scale != seq[i].scale || st.ls_hyst != seq[i].hyst)
			break;
	}
	OK(i == (int)(sizeof seq / sizeof *seq), "loss scaler: back-off after "
	    "hysteresis, growth after the window, never below the minimum "
	    "(step %d)", i);

	/* the same run unscaled and scaled by 2^20 */
	for (k = 0; k < 2; k++) {
		die_if(gpt_init(&m[k], &small, &gpt_cpu, err, sizeof err) < 0,
		    "init", err);
		gpt_init_weights(&m[k], 3, 0.02f);
		die_if(gpt_set_batch(&m[k], B, T, err, sizeof err) < 0, "batch",
		    err);
		memset(&tr[k], 0, sizeof tr[k]);
		tr[k].m = &m[k];
		tr[k].micro = B;
		tr[k].T = T;
		tr[k].nmicro = 2;
		tr[k].lr = (struct schedule){ SCHEDULE_CONSTANT, 1e-3, 0, 0, 1 };
		tr[k].adam = (struct adamw){ 0.9f, 0.95f, 1e-8f, 0.1f };
		tr[k].scaler = (struct loss_scaler){ 1, 1000, 2 };
		if (k)
			train_scaler_start(&tr[k].scaler, &tr[k].st, 1048576);
		train_init(&tr[k]);
		for (i = 0; i < STEPS; i++)
			die_if(train_iteration(&tr[k], &src, &r, err, sizeof err,
			    &code) != 0 || r.skipped, "train", err);
	}
	p0 = xmalloc(m[0].nparams * sizeof *p0);
	p1 = xmalloc(m[0].nparams * sizeof *p1);
	gpt_get(&m[0], GPT_PARAMS, p0);
	gpt_get(&m[1], GPT_PARAMS, p1);
	same = memcmp(p0, p1, m[0].nparams * sizeof *p0) == 0;
	OK(same, "loss scale 2^20: the weights after %d steps are bit-identical "
	    "to unscaled training", STEPS);

	/* a scale that overflows: skipped, counted, nothing updated */
	tr[1].st.loss_scale = 1e41;	/* the loss gradient itself overflows */
	tr[1].st.ls_hyst = 1;
	die_if(train_iteration(&tr[1], &src, &r, err, sizeof err, &code) != 0,
	    "train", err);
	gpt_get(&m[1], GPT_PARAMS, p0);
	OK(r.skipped && memcmp(p0, p1, m[0].nparams * sizeof *p0) == 0 &&
	    tr[1].st.iteration == STEPS + 1 &&
	    tr[1].st.consumed_train == (STEPS + 1) * 2 * B &&
	    tr[1].st.sched_samples == STEPS * 2 * B &&
	    tr[1].st.loss_scale == 5e40 && isfinite(r.loss),
	    "overflow: the iteration is skipped (weights unchanged, samples "
	    "consumed, schedule not advanced) and the scale halves");
	free(p0);
	free(p1);
	for (k = 0; k < 2; k++) {
		train_free(&tr[k]);
		gpt_free(&m[k]);
	}
}

/*
 * Activation recomputation: every mode trains to the same bits as keeping
 * everything (losses, gradients, weights), with dropout on, on a shape
 * whose slices need padding; the memory each mode allocates, against the
 * formula, at the GPT-2 124M shape.
 */
static void
test_recompute(void)
{
	enum { B = 3, T = 7, STEPS = 3, NMODE = 9 };
	static const struct gpt_config c0 = {
		.nlayer = 5, .nhead = 4, .nembd = 48, .maxpos = 16, .vocab = 300,
		.vocab_pad = 384, .ln_eps = 1e-5f, .hidden_dropout = 0.1f,
		.attn_dropout = 0.1f,
	};
	static const struct { struct gpt_recompute r; const char *desc; } mode[NMODE] = {
		{ { GPT_RECOMPUTE_NONE, 0, 1 }, "none" },
		{ { GPT_RECOMPUTE_SELECTIVE, 0, 1 }, "selective (attention probabilities)" },
		{ { GPT_RECOMPUTE_FULL, GPT_RECOMPUTE_UNIFORM, 1 }, "full, uniform, 1 layer per chunk" },
		{ { GPT_RECOMPUTE_FULL, GPT_RECOMPUTE_UNIFORM, 2 }, "full, uniform, 2 layers per chunk" },
		{ { GPT_RECOMPUTE_FULL, GPT_RECOMPUTE_UNIFORM, 3 }, "full, uniform, 3 layers per chunk" },
		{ { GPT_RECOMPUTE_FULL, GPT_RECOMPUTE_UNIFORM, 9 }, "full, uniform, 5 layers per chunk" },
		{ { GPT_RECOMPUTE_FULL, GPT_RECOMPUTE_BLOCK, 2 }, "full, block, the first 2 of 5 layers" },
		{ { GPT_RECOMPUTE_FULL, GPT_RECOMPUTE_BLOCK, 5 }, "full, block, the first 5 of 5 layers" },
		{ { GPT_RECOMPUTE_NONE, 0, 1 }, "none" },	/* without dropout */
	};
	struct gpt_data_mock md = { 11, 0, T, 300 };
	struct sample_src src = { gpt_data_mock_get, &md };
	struct gpt_config c = c0;
	struct step_result r;
	struct trainer tr;
	struct gpt m;
	double loss[STEPS], loss0[STEPS];
	float *p0 = NULL, *g0 = NULL, *p, *g;
	size_t bytes0 = 0, bytes, np;
	char err[256], desc[128];
	int code, i, k;

	for (k = 0; k < NMODE; k++) {
		if (k == NMODE - 1)
			c.hidden_dropout = c.attn_dropout = 0;
		die_if(gpt_init(&m, &c, &gpt_cpu, err, sizeof err) < 0, "init",
		    err);
		gpt_init_weights(&m, 5, 0.02f);
		gpt_set_recompute(&m, &mode[k].r);
		die_if(gpt_set_batch(&m, B, T, err, sizeof err) < 0, "batch",
		    err);
		gpt_recompute_desc(&m, desc, sizeof desc);
		SAMES(desc, mode[k].desc, "recompute mode %d described", k);
		memset(&tr, 0, sizeof tr);
		tr.m = &m;
		tr.micro = B;
		tr.T = T;
		tr.nmicro = 2;
		tr.lr = (struct schedule){ SCHEDULE_CONSTANT, 1e-3, 0, 0, 1 };
		tr.adam = (struct adamw){ 0.9f, 0.95f, 1e-8f, 0.1f };
		tr.clip = 1.0f;
		tr.st.seed = 9;
		train_init(&tr);
		for (i = 0; i < STEPS; i++) {
			die_if(train_iteration(&tr, &src, &r, err, sizeof err,
			    &code) != 0, "train", err);
			loss[i] = r.loss;
		}
		np = m.nparams;
		p = xmalloc(np * sizeof *p);
		g = xmalloc(np * sizeof *g);
		gpt_get(&m, GPT_PARAMS, p);
		gpt_get(&m, GPT_GRADS, g);
		bytes = gpt_acts_bytes(&m, B, T);
		if (k == 0) {
			p0 = p;
			g0 = g;
			bytes0 = bytes;
			memcpy(loss0, loss, sizeof loss);
		} else if (k < NMODE - 1) {
			OK(memcmp(loss, loss0, sizeof loss) == 0 &&
			    memcmp(g, g0, np * sizeof *g) == 0 &&
			    memcmp(p, p0, np * sizeof *p) == 0, "recompute %s: "
			    "%d iterations of 2 micro-batches with dropout 0.1 "
			    "give bit-identical losses, gradients and weights "
			    "(loss %.9g)", desc, STEPS, loss[STEPS - 1]);
			/* one chunk of every layer is the live one: nothing recomputed */
			OK(k == 5 ? bytes == bytes0 : bytes < bytes0,
			    "recompute %s: %zu bytes of activations against %zu",
			    desc, bytes, bytes0);
		} else {
			OK(memcmp(g, g0, np * sizeof *g) != 0,
			    "the same run without dropout has other gradients: "
			    "the comparisons above ran with dropout on");
		}
		if (k > 0) {
			free(p);
			free(g);
		}
		train_free(&tr);
		gpt_free(&m);
	}
	free(p0);
	free(g0);
}

/*
 * The bytes gpt_set_batch allocates at the GPT-2 124M shape, B=4, T=1024
 * (every slice a multiple of 256 bytes), against the per-layer formula:
 * 16 BTC + 4 BT + B NH T^2 floats a layer, of which full recomputation
 * keeps BTC (the input) and selective all but B NH T^2.
 */
static void
test_recompute_bytes(void)
{
	static const struct gpt_config g124 = {
		.nlayer = 12, .nhead = 12, .nembd = 768, .maxpos = 1024,
		.vocab = 50257, .vocab_pad = 50304, .ln_eps = 1e-5f,
	};
	enum { B = 4, T = 1024 };
	const size_t BT = (size_t)B * T, BTC = BT * 768;
	const size_t att = (size_t)B * 12 * T * T, f = sizeof(float);
	const size_t work = 15 * BTC + 4 * BT + att;	/* a layer less its input */
	const size_t other = (2 * BTC + 3 * BT + BT * 50257 + 11 * BTC + att) *
	    f + 2 * BT * sizeof(int32_t);
	static const struct { struct gpt_recompute r; size_t layers; } want[] = {
		{ { GPT_RECOMPUTE_NONE, 0, 1 }, 12 * (16 * BTC + 4 * BT + att) },
		{ { GPT_RECOMPUTE_SELECTIVE, 0, 1 }, 12 * (16 * BTC + 4 * BT) + att },
		{ { GPT_RECOMPUTE_FULL, GPT_RECOMPUTE_UNIFORM, 1 }, 12 * BTC + work },
		/* 4 chunk outputs, 3 layers' working sets, 2 of them with outputs */
		{ { GPT_RECOMPUTE_FULL, GPT_RECOMPUTE_UNIFORM, 3 }, 4 * BTC + 3 * work + 2 * BTC },
		/* one working set for the first 4, 8 layers kept, 12 outputs */
		{ { GPT_RECOMPUTE_FULL, GPT_RECOMPUTE_BLOCK, 4 }, 12 * BTC + 9 * work },
	};
	struct gpt m;
	char err[256], desc[128];
	size_t k, got;

	die_if(gpt_layout(&m, &g124, err, sizeof err) < 0, "layout", err);
	for (k = 0; k < sizeof want / sizeof *want; k++) {
		gpt_set_recompute(&m, &want[k].r);
		gpt_recompute_desc(&m, desc, sizeof desc);
		got = gpt_acts_bytes(&m, B, T);
		OK(got == want[k].layers * f + other, "124M, B=4, T=1024, "
		    "recompute %s: %zu bytes, %.2f GiB of them the layers' "
		    "(want %zu)", desc, got, (double)want[k].layers * f /
		    (1 << 30), want[k].layers * f + other);
	}
}

/*
 * Gradient accumulation that data parallelism reproduces: four
 * micro-batches accumulated by gpt_grad_accumulate equal the four
 * computed apart (as four data-parallel ranks would) and added in order,
 * ((g0 + g1) + g2) + g3, bit for bit, both embedding gradients; the tie
 * adds them; the norm is the chunks' in (tensor, layer, chunk) order.
 */
static void
test_accumulate(void)
{
	enum { B = 2, T = 8, NM = 4 };
	struct gpt_config c = small;
	struct gpt_data_mock md = { 3, 0, T, 300 };
	struct gpt m;
	uint32_t tok[B * (T + 1)];
	int32_t in[NM][B * T], tg[NM][B * T];
	float *g[NM], *sum;
	char err[256];
	size_t i, n, nwte, np, idx;
	double norm, want = 0, *part;
	int j, b, k, l, code, nl;

	c.hidden_dropout = c.attn_dropout = 0.1f;
	die_if(gpt_init(&m, &c, &gpt_cpu, err, sizeof err) < 0, "init", err);
	die_if(gpt_set_batch(&m, B, T, err, sizeof err) < 0, "batch", err);
	gpt_init_weights(&m, 8, 0.02f);
	for (j = 0; j < NM; j++)
		for (b = 0; b < B; b++) {
			die_if(gpt_data_mock_get(&md, (uint64_t)(j * B + b), tok, err,
			    sizeof err, &code) < 0, "mock", err);
			sample_io(tok, T, in[j] + b * T, tg[j] + b * T);
		}
	n = m.ngrads;
	nwte = m.t[GPT_WTE].n;
	OK(m.head == m.nparams && n == m.nparams + nwte, "the output layer's "
	    "gradient of the tied embedding lies apart, after the parameters");
	for (j = 0; j < NM; j++) {
		gpt_zero_grad(&m);
		gpt_forward(&m, in[j], tg[j], 0.01f, 77, (uint64_t)(j * B));
		gpt_backward(&m);
		g[j] = xmalloc(n * sizeof *g[j]);
		memcpy(g[j], m.grads, n * sizeof *g[j]);
	}
	for (j = 0; j < NM; j++) {
		gpt_zero_grad(&m);
		gpt_forward(&m, in[j], tg[j], 0.01f, 77, (uint64_t)(j * B));
		gpt_backward(&m);
		gpt_grad_accumulate(&m, j, NM);
	}
	sum = xmalloc(n * sizeof *sum);
	for (i = 0; i < n; i++)
		sum[i] = ((g[0][i] + g[1][i]) + g[2][i]) + g[3][i];
	OK(memcmp(sum, m.grads, n * sizeof *sum) == 0, "%d micro-batches "
	    "accumulated: ((g0 + g1) + g2) + g3 of the micro-batches apart, "
	    "bit for bit, both embedding gradients", NM);
	gpt_grad_tie(&m);
	for (i = 0; i < nwte; i++)
		sum[m.t[GPT_WTE].off + i] += sum[m.head + i];
	OK(memcmp(sum, m.grads, m.nparams * sizeof *sum) == 0,
	    "the tie adds the output layer's gradient to the embedding's");
	/* the canonical norm: chunk sums in (k, l, chunk) order */
	np = gpt_norm_nparts(&m);
	part = xmalloc(np * sizeof *part);
	gpt_norm_parts(&m, part);
	for (k = 0, idx = 0; k < GPT_NPARAM; k++) {
		nl = m.t[k].layered ? c.nlayer : 1;
		for (l = 0; l < nl; l++)
			for (i = 0; i < m.t[k].slice; i += GPT_NORM_CHUNK) {
				double s = gpt_cpu.sumsq(m.grads + m.t[k].off +
				    (size_t)l * m.t[k].slice + i, m.t[k].slice - i <
				    GPT_NORM_CHUNK ? m.t[k].slice - i : GPT_NORM_CHUNK);

				want += s;
				idx += part[idx] == s;
			}
	}
	norm = gpt_grad_norm(&m);
	OK(idx == np && norm == sqrt(want) && norm == gpt_norm_sum(part, np),
	    "the gradient norm: %zu chunk sums of squares in (tensor, layer, "
	    "chunk) order (%.9g)", np, norm);
	for (j = 0; j < NM; j++)
		free(g[j]);
	free(sum);
	free(part);
	gpt_free(&m);
}

/*
 * A part's layout: the split shapes of lib/dist/dist.h, the tensors a stage
 * holds, the vocabulary rows, the output layer's gradient on the last
 * stage only, the activations a slot and the scratch take; and the
 * parts that are not one.
 */
static void
test_part_layout(void)
{
	struct gpt_config c = small;	/* L 2, NH 4, C 64, V 300, Vp 384 */
	struct gpt m, w;
	char err[256];
	size_t one;

	die_if(gpt_layout(&w, &c, err, sizeof err) < 0, "layout", err);
	die_if(gpt_layout_part(&m, &c, &(struct gpt_part){ 1, 2, 0, 1, 2, 1 },
	    err, sizeof err) < 0, "layout part", err);
	OK(m.t[GPT_QKVW].dim[0] == 64 && m.t[GPT_QKVW].dim[1] == 96 &&
	    m.t[GPT_QKVB].dim[0] == 96 && m.t[GPT_ATTPROJW].dim[0] == 32 &&
	    m.t[GPT_ATTPROJW].dim[1] == 64 && m.t[GPT_FCW].dim[1] == 128 &&
	    m.t[GPT_FCB].dim[0] == 128 && m.t[GPT_FCPROJW].dim[0] == 128 &&
	    m.t[GPT_LN1W].dim[0] == 64 && m.t[GPT_WTE].dim[0] == 192,
	    "a tp 2 part: QKV and fc split by columns, the projections by rows, "
	    "the token embedding by vocabulary rows, the rest whole");
	OK(m.t[GPT_WPE].n == 0 && m.t[GPT_WTE].n == 192 * 64 &&
	    m.t[GPT_LNFW].n == 64 && m.t[GPT_QKVW].n == 64 * 96 &&
	    m.v0 == 192 && m.vrows == 192 && m.vreal == 108 &&
	    m.head == m.nparams && m.ngrads == m.nparams + 192 * 64,
	    "the last stage (layer 1 of 2) at tp rank 1: no positions, its "
	    "vocabulary rows [192, 384) of which 108 real, one layer, the "
	    "output layer's gradient apart");
	one = gpt_acts_bytes(&m, 2, 8);
	gpt_set_slots(&m, 3);
	OK(gpt_acts_bytes(&m, 2, 8) > 2 * one && gpt_acts_bytes(&m, 2, 8) <
	    3 * one, "3 pipeline slots: 3 sets of activations, one scratch");
	die_if(gpt_layout_part(&m, &c, &(struct gpt_part){ 0, 1, 1, 0, 1, 0 },
	    err, sizeof err) < 0, "layout part", err);
	OK(m.t[GPT_WPE].n == w.t[GPT_WPE].n && m.t[GPT_LNFW].n == 0 &&
	    m.head == 0 && m.ngrads == m.nparams && m.nparams * 2 <
	    w.nparams + 2 * (w.t[GPT_WTE].n + w.t[GPT_WPE].n),
	    "the first stage: the embeddings, half the layers, no final "
	    "LayerNorm and no output layer");
	OK(gpt_layout_part(&m, &c, &(struct gpt_part){ 1, 1, 0, 1, 1, 0 }, err,
	    sizeof err) < 0, "a stage without layers is refused");
	SAMES(err, "a part of layers [1, 1) at tensor-parallel rank 0 of 1 is "
	    "not one of the model's", "... saying so");
	OK(gpt_layout_part(&m, &c, &(struct gpt_part){ 0, 2, 1, 1, 8, 0 }, err,
	    sizeof err) < 0, "8 tensor-parallel ranks of 4 heads are refused");
	SAMES(err, "hidden size 64, 4 attention heads and padded vocabulary 384 "
	    "must be multiples of the 8 tensor-parallel ranks", "... saying so");
	OK(gpt_init_part(&m, &c, &(struct gpt_part){ 0, 2, 1, 1, 2, 0 }, NULL,
	    &gpt_cpu, err, sizeof err) < 0, "tp 2 without its group is refused");
	SAMES(err, "tensor-parallel rank 0 of 2 needs its group of 2",
	    "... saying so");
}

/*
 * Two pipeline stages in one process, in 1F1B's order: stage 0 receives
 * micro-batch 0's gradient, runs micro-batch 1's forward pass, then 0's
 * backward pass (the slots and the stage gradient stay apart); the
 * losses and, after the embedding sum, the gradients are the whole
 * model's, bit for bit.
 */
static void
test_pipeline_order(void)
{
	enum { B = 2, T = 8 };
	struct gpt_config c = small;
	struct gpt_data_mock md = { 4, 0, T, 300 };
	struct gpt w, s[2];
	uint32_t tok[B * (T + 1)];
	int32_t in[2][B * T], tg[2][B * T];
	size_t btc = (size_t)B * T * c.nembd * sizeof(float), i, bad = 0;
	float lw[2], ls[2], *gw, *g;
	char err[256];
	int j, b, k, l, code;
	const float dloss = 1.0f / (2 * B * T);

	c.hidden_dropout = c.attn_dropout = 0.1f;
	for (j = 0; j < 2; j++)
		for (b = 0; b < B; b++) {
			die_if(gpt_data_mock_get(&md, (uint64_t)(j * B + b), tok, err,
			    sizeof err, &code) < 0, "mock", err);
			sample_io(tok, T, in[j] + b * T, tg[j] + b * T);
		}
	die_if(gpt_init(&w, &c, &gpt_cpu, err, sizeof err) < 0, "init", err);
	for (k = 0; k < 2; k++) {
		die_if(gpt_init_part(&s[k], &c, &(struct gpt_part){ k, k + 1,
		    k == 0, k == 1, 1, 0 }, NULL, &gpt_cpu, err, sizeof err) < 0,
		    "init part", err);
		gpt_set_slots(&s[k], 2);
		die_if(gpt_set_batch(&s[k], B, T, err, sizeof err) < 0, "batch",
		    err);
		gpt_init_weights(&s[k], 6, 0.02f);
		gpt_zero_grad(&s[k]);
	}
	die_if(gpt_set_batch(&w, B, T, err, sizeof err) < 0, "batch", err);
	gpt_init_weights(&w, 6, 0.02f);
	for (j = 0; j < 2; j++) {
		gpt_zero_grad(&w);
		lw[j] = gpt_forward(&w, in[j], tg[j], dloss, 31, (uint64_t)(j * B));
		gpt_backward(&w);
		gpt_grad_accumulate(&w, j, 2);
	}
	gpt_grad_tie(&w);

	/* stage 0: F0; stage 1: F0 B0; stage 0: (receives 0's gradient) F1 */
	gpt_forward_stage(&s[0], 0, in[0], NULL, dloss, 31, 0);
	memcpy(gpt_stage_input(&s[1], 0), gpt_stage_output(&s[0], 0), btc);
	ls[0] = gpt_forward_stage(&s[1], 0, NULL, tg[0], dloss, 31, 0);
	gpt_backward_stage(&s[1], 0);
	gpt_grad_accumulate(&s[1], 0, 2);
	memcpy(gpt_stage_grad(&s[0]), gpt_stage_grad(&s[1]), btc);
	gpt_forward_stage(&s[0], 1, in[1], NULL, dloss, 31, B);
	/* stage 0: B0 (the gradient received before F1); stage 1: F1 B1 */
	gpt_backward_stage(&s[0], 0);
	gpt_grad_accumulate(&s[0], 0, 2);
	gpt_zero_grad(&s[1]);
	memcpy(gpt_stage_input(&s[1], 1), gpt_stage_output(&s[0], 1), btc);
	ls[1] = gpt_forward_stage(&s[1], 1, NULL, tg[1], dloss, 31, B);
	gpt_backward_stage(&s[1], 1);
	gpt_grad_accumulate(&s[1], 1, 2);
	gpt_zero_grad(&s[0]);
	memcpy(gpt_stage_grad(&s[0]), gpt_stage_grad(&s[1]), btc);
	gpt_backward_stage(&s[0], 1);
	gpt_grad_accumulate(&s[0], 1, 2);
	for (k = 0; k < 2; k++)
		gpt_grad_tie(&s[k]);
	/* the embedding group's sum: first stage's + last stage's */
	gpt_cpu.add(s[0].grads + s[0].t[GPT_WTE].off,
	    s[1].grads + s[1].t[GPT_WTE].off, s[0].t[GPT_WTE].n);

	gw = xmalloc(w.nparams * sizeof *gw);
	gpt_get(&w, GPT_GRADS, gw);
	for (k = 0; k < GPT_NPARAM; k++)
		for (l = 0; l < (w.t[k].layered ? c.nlayer : 1); l++) {
			const struct gpt *p = &s[w.t[k].layered ? l :
			    k == GPT_LNFW || k == GPT_LNFB];

			g = p->grads + p->t[k].off;
			for (i = 0; i < w.t[k].slice; i++)
				bad += g[i] != gw[w.t[k].off + (size_t)l *
				    w.t[k].slice + i];
		}
	OK(memcmp(ls, lw, sizeof lw) == 0 && bad == 0, "two stages in 1F1B's "
	    "order (a forward pass between receiving a gradient and the "
	    "backward pass), dropout 0.1: the whole model's losses and "
	    "gradients, bit for bit (%zu elements differ)", bad);
	free(gw);
	for (k = 0; k < 2; k++)
		gpt_free(&s[k]);
	gpt_free(&w);
}

/* ---- model parallelism, under mpirun (t/6008-gpt-parts.t) ---- */

/*
 * The squared difference and the squared reference over the elements rank
 * holds of buffer part (a part's flat buffer) and whole (the whole
 * model's), matched through lib/dist/dist.h's runs; with exact, the count of
 * elements that differ instead of the difference.
 */
static void
part_diff(const struct dist *d, const struct gpt *pm, const float *part,
    const struct gpt *wm, const float *whole, double *diff, double *ref)
{
	struct dist_run run[DIST_MAXRUN];
	int k, l, i, nr;
	size_t j, q;

	*diff = *ref = 0;
	for (k = 0; k < GPT_NPARAM; k++)
		for (l = 0; l < (wm->t[k].layered ? wm->cfg.nlayer : 1); l++) {
			nr = dist_runs(d, d->rank, k, l, run);
			if (nr == 0)
				continue;
			for (i = 0; i < nr; i++)
				for (q = 0; q < run[i].rows; q++)
					for (j = 0; j < run[i].n; j++) {
						double a = part[pm->t[k].off +
						    (size_t)(wm->t[k].layered ? l - d->l0 : 0) *
						    pm->t[k].slice + run[i].local +
						    q * run[i].lstride + j];
						double b = whole[wm->t[k].off + (size_t)l *
						    wm->t[k].slice + run[i].global +
						    q * run[i].gstride + j];

						*diff += (a - b) * (a - b);
						*ref += b * b;
					}
		}
}

/* A layout's groups, from lib/dist/dist.h. */
struct layout {
	struct comm *world, *tp, *pp, *dp, *emb;
	struct dist d;
};

static void
die_comm(int fail, const char *err)
{
	die_if(fail, "comm", err);
}

/*
 * One training iteration as a layout runs it (gpt.h's recipe; the
 * pipeline as GPipe, every forward pass and then every backward pass in
 * micro-batch order, one slot each; nmicro micro-batches a data-parallel
 * replica, Megatron's samples): the loss and the norm, on every rank.
 */
static void
part_iteration(struct gpt *m, struct layout *ly, const struct sample_src *src,
    int B, int T, int nmicro, uint64_t first, double *loss, double *norm)
{
	int DP = ly->d.dp, dp = ly->d.dp_rank;
	uint32_t tok[64 * 17];
	int32_t in[8][64 * 16], tg[8][64 * 16];
	size_t btc = (size_t)B * T * m->cfg.nembd * sizeof(float), np;
	int s = ly->d.pp_rank, last = s == ly->d.pp - 1;
	char err[512];
	double *part, coef = 1, l = 0;
	int b, j, code;

	for (j = 0; j < nmicro; j++) {
		for (b = 0; b < B; b++) {
			die_if(src->get(src->arg, first + (uint64_t)((j * DP +
			    dp) * B + b), tok + b * (T + 1), err, sizeof err,
			    &code) < 0, "data", err);
			sample_io(tok + b * (T + 1), T, in[j] + b * T,
			    tg[j] + b * T);
		}
		if (s > 0)
			die_comm(comm_sendrecv(ly->pp, NULL, 0, -1,
			    gpt_stage_input(m, j), btc, s - 1, "activations",
			    err, sizeof err, &code) < 0, err);
		l += gpt_forward_stage(m, j, in[j], tg[j],
		    1.0f / (float)(B * T * nmicro * DP), owt_mix64(9),
		    first + (uint64_t)((j * DP + dp) * B));
		if (!last)
			die_comm(comm_sendrecv(ly->pp, gpt_stage_output(m, j), btc,
			    s + 1, NULL, 0, -1, "activations", err, sizeof err,
			    &code) < 0, err);
	}
	for (j = 0; j < nmicro; j++) {
		gpt_zero_grad(m);
		if (!last)
			die_comm(comm_sendrecv(ly->pp, NULL, 0, -1,
			    gpt_stage_grad(m), btc, s + 1, "gradients", err,
			    sizeof err, &code) < 0, err);
		gpt_backward_stage(m, j);
		if (s > 0)
			die_comm(comm_sendrecv(ly->pp, gpt_stage_grad(m), btc,
			    s - 1, NULL, 0, -1, "gradients", err, sizeof err,
			    &code) < 0, err);
		gpt_grad_accumulate(m, j, nmicro);
	}
	if (DP > 1)
		die_comm(comm_sum_ordered(ly->dp, m->grads, m->ngrads,
		    "gradients", err, sizeof err, &code) < 0, err);
	gpt_grad_tie(m);
	if (ly->emb != NULL && ly->emb->size > 1)
		die_comm(comm_sum_ordered(ly->emb, m->grads + m->t[GPT_WTE].off,
		    m->t[GPT_WTE].n, "embedding gradients", err, sizeof err,
		    &code) < 0, err);
	np = gpt_norm_nparts(m);
	part = xmalloc((np + 1) * sizeof *part);
	gpt_norm_parts(m, part);
	if (dp > 0)	/* one replica's vector: the others are the same */
		memset(part, 0, np * sizeof *part);
	/* the loss lives on the last stage: the sum adds it to zeros */
	part[np] = last && ly->d.tp_rank == 0 ? l : 0;
	if (ly->world->size > 1)
		die_comm(comm_ctl_allreduce(ly->world, part, np + 1, COMM_SUM,
		    "norm", err, sizeof err, &code) < 0, err);
	*norm = gpt_norm_sum(part, np);
	*loss = part[np] / (nmicro * DP);
	free(part);
	if (*norm > 0.5)
		coef = 0.5 / (*norm + 1e-6);
	gpt_update(m, &(struct adamw){ 0.9f, 0.95f, 1e-8f, 0.1f }, 1e-3f,
	    (float)coef);
}

/*
 * The group of kind of this rank (NULL where it has none: a middle stage
 * names the embedding group of its column, which comm_group numbers on
 * every rank alike).
 */
static struct comm *
layout_group(struct layout *ly, int kind)
{
	int ranks[64], n = dist_group(&ly->d, ly->world->rank, kind, ranks);
	struct comm *g = NULL;
	char err[512];
	int code;

	if (n == 0) {
		ranks[0] = dist_rank(&ly->d, 0, ly->d.dp_rank, ly->d.tp_rank);
		ranks[1] = dist_rank(&ly->d, ly->d.pp - 1, ly->d.dp_rank,
		    ly->d.tp_rank);
		n = 2;
	}

	die_comm(comm_group(ly->world, ranks, n, &g, err, sizeof err,
	    &code) < 0, err);
	return g;
}

/*
 * A layout of TP x PP ranks against the whole model (each rank runs
 * both): the initial weights are the whole model's slices, bit for bit;
 * over 6 iterations of 2 micro-batches with dropout 0.1, a pipeline alone
 * gives the whole model's losses, norms and weights bit for bit, and
 * tensor parallelism the first loss to 1e-6, the first gradients and
 * norm to 1e-5, losses to 2e-5 of the loss and final weights to 1e-5 in
 * norm (plan-16 B7: the row-parallel products and the split softmax sum
 * add in another order). Rank 0 writes TAP, after a reduction of every
 * rank's verdicts.
 */
static int
test_layout(int tp, int pp, int dp, const char *recompute)
{
	enum { B = 2, T = 16, STEPS = 6 };
	int nmicro = dp > 1 ? 1 : 2;	/* a replica's; 2 in all */
	struct gpt_config c = {
		.nlayer = 4, .nhead = 4, .nembd = 32, .maxpos = 16, .vocab = 250,
		.ln_eps = 1e-5f, .hidden_dropout = 0.1f, .attn_dropout = 0.1f,
	};
	struct gpt_data_mock md = { 11, 0, T, 250 };
	struct sample_src src = { gpt_data_mock_get, &md };
	struct layout ly = { 0 };
	struct dist *d = &ly.d;
	struct gpt whole, part;
	struct gpt_part gp;
	char err[512], name[64];
	double v[9], lw, lp, nw, np, diff, ref, worst = 0, tol;
	struct layout one = { 0 };
	struct comm self;
	float *hw, *hp;
	int code, i, ok_init, ok_loss = 1;

	die_comm(comm_init(&ly.world, 60, err, sizeof err, &code) < 0, err);
	if (ly.world->rank != 0)
		die_if(freopen("/dev/null", "w", stdout) == NULL, "stdout",
		    "cannot redirect");
	die_if(dist_init(d, ly.world->size, ly.world->rank, tp, pp, &c, 128,
	    B, 2 * B, err, sizeof err, &code) < 0, "dist", err);
	die_if(d->dp != dp || d->micro != nmicro, "layout", "world size is "
	    "not tp x pp x dp");
	ly.tp = layout_group(&ly, DIST_TP);
	ly.pp = layout_group(&ly, DIST_PP);
	ly.dp = layout_group(&ly, DIST_DP);
	ly.emb = layout_group(&ly, DIST_EMB);
	snprintf(name, sizeof name, "tp %d x pp %d x dp %d%s%s", tp, pp, dp,
	    recompute ? ", recompute " : "", recompute ? recompute : "");
	c.vocab_pad = d->vocab_pad;
	gp = (struct gpt_part){ d->l0, d->l1, d->pp_rank == 0,
	    d->pp_rank == pp - 1, d->tp, d->tp_rank };
	die_if(gpt_init(&whole, &c, &gpt_cpu, err, sizeof err) < 0, "init", err);
	die_if(gpt_init_part(&part, &c, &gp, ly.tp, &gpt_cpu, err,
	    sizeof err) < 0, "init part", err);
	if (recompute != NULL) {
		struct gpt_recompute rc;

		die_if(gpt_recompute_parse(&rc, 0, 0, recompute,
		    strcmp(recompute, "full") == 0 ? "uniform" : NULL, 1, err,
		    sizeof err) < 0, "recompute", err);
		gpt_set_recompute(&part, &rc);
	}
	gpt_set_slots(&part, nmicro);
	gpt_set_slots(&whole, 2);
	die_if(gpt_set_batch(&whole, B, T, err, sizeof err) < 0 ||
	    gpt_set_batch(&part, B, T, err, sizeof err) < 0, "batch", err);
	gpt_init_weights(&whole, 5, 0.02f);
	gpt_init_weights(&part, 5, 0.02f);
	hw = xmalloc(whole.nparams * sizeof *hw);
	hp = xmalloc(part.nparams * sizeof *hp);
	gpt_get(&whole, GPT_PARAMS, hw);
	gpt_get(&part, GPT_PARAMS, hp);
	part_diff(d, &part, hp, &whole, hw, &diff, &ref);
	ok_init = diff == 0 && ref > 0;
	/* the whole model alone, on every rank: a world of one, no groups */
	self = *ly.world;
	self.size = 1;
	one.world = &self;
	one.d.pp = one.d.tp = one.d.dp = 1;
	tol = tp > 1 ? 1 : 0;
	for (i = 0; i < STEPS; i++) {
		part_iteration(&whole, &one, &src, B, T, 2,
		    (uint64_t)i * B * 2, &lw, &nw);
		part_iteration(&part, &ly, &src, B, T, nmicro,
		    (uint64_t)i * B * 2, &lp, &np);
		ok_loss &= fabs(lp - lw) <= 2e-5 * tol * fabs(lw);
		worst = fmax(worst, fabs(lp - lw) / fabs(lw));
		if (i == 0) {
			v[8] = fabs(lp - lw) / lw;
			v[2] = fabs(np - nw) / nw;
			gpt_get(&whole, GPT_GRADS, hw);
			gpt_get(&part, GPT_GRADS, hp);
			part_diff(d, &part, hp, &whole, hw, &diff, &ref);
			v[3] = diff;
			v[4] = ref;
		}
	}
	gpt_get(&whole, GPT_PARAMS, hw);
	gpt_get(&part, GPT_PARAMS, hp);
	part_diff(d, &part, hp, &whole, hw, &diff, &ref);
	v[0] = ok_init;
	v[1] = ok_loss;
	v[5] = diff;
	v[6] = ref;
	v[7] = worst;
	/* the verdicts and sums of every rank (each holds other elements) */
	die_comm(comm_ctl_allreduce(ly.world, v, 2, COMM_MIN, "verdicts", err,
	    sizeof err, &code) < 0 || comm_ctl_allreduce(ly.world, v + 2, 4,
	    COMM_SUM, "sums", err, sizeof err, &code) < 0 ||
	    comm_ctl_allreduce(ly.world, v + 6, 3, COMM_MAX, "worst", err,
	    sizeof err, &code) < 0, err);
	OK(v[0] == 1, "%s: every rank's initial weights are the whole "
	    "model's slices, bit for bit", name);
	OK(v[8] <= 1e-6 * tol, "%s: the first iteration's loss %s the whole "
	    "model's (%.3g)", name, tp > 1 ? "within 1e-6 of" : "is", v[8]);
	OK(v[2] / ly.world->size <= 1e-5 * tol && sqrt(v[3] / v[4]) <=
	    1e-5 * tol, "%s: the first iteration's gradient norm (%.3g) and "
	    "gradients (%.3g, in norm) %s the whole model's", name,
	    v[2] / ly.world->size, sqrt(v[3] / v[4]), tp > 1 ?
	    "within 1e-5 of" : "are");
	OK(v[1] == 1, "%s: %d iterations of 2 micro-batches with dropout "
	    "0.1: losses %s the whole model's (worst %.3g)", name, STEPS,
	    tp > 1 ? "within 2e-5 of" : "are", v[7]);
	OK(sqrt(v[5] / v[6]) <= 1e-5 * tol, "%s: the final weights %s (%.3g "
	    "in norm)", name, tp > 1 ? "within 1e-5" : "the same bits",
	    sqrt(v[5] / v[6]));
	free(hw);
	free(hp);
	gpt_free(&whole);
	gpt_free(&part);
	die_comm(comm_finish(ly.world, err, sizeof err, &code) < 0, err);
	return unit_done();
}

static int
rm_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	return remove(path);
}

static void
remove_dir(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int
main(int argc, char **argv)
{
	blas_init(omp_get_max_threads());
	if (argc == 3 && strcmp(argv[1], "dump") == 0)
		return dump(argv[2]);
	if ((argc == 5 || argc == 6) && strcmp(argv[1], "layout") == 0)
		return test_layout(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
		    argc == 6 ? argv[5] : NULL);
	char dir[] = "/tmp/unit-gpt.XXXXXX";

	if (mkdtemp(dir) == NULL)
		return 3;
	test_safetensors(dir);
	test_sgemm();
	test_lr();
	test_schedule_resolve();
	test_ckpt_args();
	test_train_log();
	test_scaler();
	test_recompute();
	test_recompute_bytes();
	test_layers(&gpt_cpu);
	test_mask_parts(&gpt_cpu);
	test_parts_backend(&gpt_cpu);
	test_accumulate();
	test_part_layout();
	test_pipeline_order();
	test_checkpoint(dir);
	test_sampler();
	test_data(dir);
	test_vectors(dir);
	remove_dir(dir);
	return unit_done();
}
