/*
 * gpt_cuda.cu - the GPT-2 backend (struct gpt_backend, lib/model/gpt.h) on CUDA
 *
 * The CPU backend (lib/model/gpt_cpu.c) is the specification: every function
 * here computes what its namesake there computes, on device memory, in
 * the same layouts. Matrix products go through cuBLAS (row-major calls
 * turned into column-major ones by swapping the operands); attention is
 * cuBLAS batched products around a fused causal softmax; reductions that
 * feed the weights (LayerNorm, bias and embedding gradients, the gradient
 * norm) sum in a fixed order and use no atomics, so a run repeats exactly.
 *
 * The file is kernels first, then the launchers, then the backend table
 * and the plugin's (owtcuda.h: the programs open this code as
 * lib/owt/gpt-cuda.so).
 */
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "owtcuda.h"
extern "C" {
#include "comm/comm.h"
}

/* ---- errors ------------------------------------------------------------ */

/*
 * What the plugin needs of the program (owtcuda_plugin's argument): its
 * name and its way to exit on a CUDA error, so that the plugin uses no
 * symbol of the program's.
 */
static const struct owtcuda_host *host;

static void __attribute__((noreturn, format(printf, 1, 2)))
cuda_die(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	host->die(msg);
	abort();
}

#define CUDA_OK(x) cuda_ok((x), #x, __func__)
#define BLAS_OK(x) blas_ok((x), #x, __func__)
#define LAUNCHED() cuda_ok(cudaGetLastError(), "launch", __func__)

static void
cuda_ok(cudaError_t e, const char *what, const char *fn)
{
	if (e != cudaSuccess)
		cuda_die("cuda: %s: %s: %s", fn, what, cudaGetErrorString(e));
}

static void
blas_ok(cublasStatus_t s, const char *what, const char *fn)
{
	if (s != CUBLAS_STATUS_SUCCESS)
		cuda_die("cuda: %s: %s: cuBLAS status %d", fn, what, (int)s);
}

/* A launcher's argument check: a caller's bug, not a data error. */
#define ARG(cond) do { if (!(cond)) cuda_die(\
	"cuda: %s: bad arguments (%s)", __func__, #cond); } while (0)

/* ---- profile ------------------------------------------------------------ */

/*
 * With OWT_CUDA_PROFILE set, every launcher times itself with CUDA events
 * (waiting for the device, so the run is slower) and the totals are
 * printed on standard error at exit: where the time goes.
 */
struct prof_row {
	const char *name;
	double ms;
	long calls;
};
static struct prof_row prof_rows[48];
static int prof_on = -1;
static cudaEvent_t prof_ev[2];

static void
prof_report(void)
{
	double total = 0;
	int i;

	for (i = 0; i < 48 && prof_rows[i].name; i++)
		total += prof_rows[i].ms;
	fprintf(stderr, "%s: cuda profile: %.1f ms in the launchers\n",
	    host->prog, total);
	for (i = 0; i < 48 && prof_rows[i].name; i++)
		fprintf(stderr, "%s:   %-26s %9.1f ms %5.1f%% %8ld calls\n",
		    host->prog, prof_rows[i].name, prof_rows[i].ms,
		    100 * prof_rows[i].ms / (total > 0 ? total : 1),
		    prof_rows[i].calls);
}

struct Prof {
	const char *name;

	explicit Prof(const char *fn) : name(fn)
	{
		if (prof_on < 0) {
			prof_on = getenv("OWT_CUDA_PROFILE") != NULL;
			if (prof_on) {
				cudaEventCreate(&prof_ev[0]);
				cudaEventCreate(&prof_ev[1]);
				atexit(prof_report);
			}
		}
		if (prof_on)
			cudaEventRecord(prof_ev[0]);
	}
	~Prof()
	{
		float ms = 0;
		int i;

		if (!prof_on)
			return;
		cudaEventRecord(prof_ev[1]);
		cudaEventSynchronize(prof_ev[1]);
		cudaEventElapsedTime(&ms, prof_ev[0], prof_ev[1]);
		for (i = 0; i < 47 && prof_rows[i].name &&
		    strcmp(prof_rows[i].name, name) != 0; i++)
			;
		prof_rows[i].name = name;
		prof_rows[i].ms += ms;
		prof_rows[i].calls++;
	}
};
#define PROFILE() Prof prof_(__func__)

/* ---- state ------------------------------------------------------------- */

static cublasHandle_t blas;
static cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
static size_t peak_bytes;	/* device memory in use, at most, as cudaMemGetInfo says */

static void
note_peak(void)
{
	size_t free_b, total_b;

	if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess &&
	    total_b - free_b > peak_bytes)
		peak_bytes = total_b - free_b;
}

/* Scratch the launchers share: grown on demand, never shrunk. */
static void *work;
static size_t work_size;

static float *
scratch(size_t bytes)
{
	if (bytes > work_size) {
		if (work)
			CUDA_OK(cudaFree(work));
		work = NULL;
		if (cudaMalloc(&work, bytes) != cudaSuccess)
			cuda_die("cuda: out of device memory for %.1f MB of "
			    "scratch", bytes / 1e6);
		work_size = bytes;
		note_peak();
	}
	return (float *)work;
}

static unsigned
blocks(size_t n, unsigned threads)
{
	size_t b = (n + threads - 1) / threads;

	return b > 0x7fffffff ? 0x7fffffff : (unsigned)(b ? b : 1);
}

/* ---- reductions inside a block ------------------------------------------ */

struct Sum {
	template <typename T>
	__device__ T operator()(T a, T b) const { return a + b; }
};

struct Max {
	__device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <typename T, typename Op>
__device__ T
warp_reduce(T x, Op op)
{
	for (int o = 16; o > 0; o /= 2)
		x = op(x, __shfl_xor_sync(0xffffffff, x, o));
	return x;
}

template <typename T>
__device__ T
warp_sum(T x)
{
	return warp_reduce(x, Sum());
}

__device__ float
warp_max(float x)
{
	return warp_reduce(x, Max());
}

/*
 * Over the block (blockDim.x a multiple of 32, at most 1024); every thread
 * gets the result. The partials of each (T, Op) have their own array, and
 * the first barrier keeps a second call from overwriting it while the
 * first is still being read.
 */
template <typename T, typename Op>
__device__ T
block_reduce(T x, Op op, T identity)
{
	__shared__ T part[32];
	int lane = threadIdx.x % 32, w = threadIdx.x / 32;
	int nw = blockDim.x / 32;

	x = warp_reduce(x, op);
	__syncthreads();
	if (lane == 0)
		part[w] = x;
	__syncthreads();
	x = lane < nw ? part[lane] : identity;
	return warp_reduce(x, op);
}

template <typename T>
__device__ T
block_sum(T x)
{
	return block_reduce(x, Sum(), (T)0);
}

__device__ float
block_max(float x)
{
	return block_reduce(x, Max(), -INFINITY);
}

/* ---- kernels ------------------------------------------------------------ */

#define GELU_K 0.7978845608028654f	/* sqrt(2 / pi) */

/* out (B,T,C) = wte[inp - v0] + wpe[t], or 0 for tokens outside [v0, v0 + nrows) */
__global__ void
k_encoder(float *out, const int32_t *inp, const float *wte, const float *wpe,
    int T, int C, size_t n, int v0, int nrows)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n) {
		size_t bt = i / C;
		int c = (int)(i % C), v = inp[bt] - v0;

		out[i] = v >= 0 && v < nrows ? wte[(size_t)v * C + c] +
		    wpe[(bt % T) * C + c] : 0.0f;
	}
}

/* out (N,C) = wte[inp[i]] + wpe[pos[i]] */
__global__ void
k_encoder_pos(float *out, const int32_t *inp, const int32_t *pos,
    const float *wte, const float *wpe, int C, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n) {
		size_t r = i / C;
		int c = (int)(i % C);

		out[i] = wte[(size_t)inp[r] * C + c] + wpe[(size_t)pos[r] * C + c];
	}
}

/*
 * dwte (Vp,C) += dout (BT,C) rows by token inp (BT). Tokens repeat, and an
 * atomic scatter would add a token's rows in whatever order the warps
 * arrive. Here every element has one owner, which adds its rows in
 * position order, as the CPU does: thread (c, r) owns column c of the
 * tokens v with v % DWTE_OWNERS == r, and reads every id, a tile at a time
 * from shared memory. Each row of dout is read once, by its owners.
 */
enum { DWTE_OWNERS = 128, DWTE_TILE = 1024, DWTE_TPB = 128 };

__global__ void
k_encoder_dwte(float *__restrict__ dwte, const float *__restrict__ dout,
    const int32_t *__restrict__ inp, int C, int BT, int v0, int nrows)
{
	__shared__ int32_t ids[DWTE_TILE];
	int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;

	for (int t0 = 0; t0 < BT; t0 += DWTE_TILE) {
		int n = min((int)DWTE_TILE, BT - t0);

		__syncthreads();
		for (int i = threadIdx.x; i < n; i += blockDim.x) {
			int v = inp[t0 + i] - v0;

			ids[i] = v >= 0 && v < nrows ? v : -1;
		}
		__syncthreads();
		if (c >= C)
			continue;
		for (int i = 0; i < n; i++) {
			int v = ids[i];

			if (v >= 0 && (v & (DWTE_OWNERS - 1)) == r)
				dwte[(size_t)v * C + c] +=
				    dout[(size_t)(t0 + i) * C + c];
		}
	}
}

/* dwpe (T,C) += dout (B,T,C) over b, b in order, added one by one as the CPU adds */
__global__ void
k_encoder_dwpe(float *dwpe, const float *dout, int B, int T, int C)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	float s;

	if (i >= (size_t)T * C)
		return;
	s = dwpe[i];
	for (int b = 0; b < B; b++)
		s += dout[(size_t)b * T * C + i];
	dwpe[i] = s;
}

/* One warp per row: out (N,C), mean, rstd (N), two passes as the CPU. */
__global__ void
k_layernorm(float *out, float *mean, float *rstd, const float *inp,
    const float *w, const float *b, int N, int C, float eps)
{
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x % 32;
	const float *x;
	float m = 0, v = 0, s;

	if (row >= N)
		return;
	x = inp + (size_t)row * C;
	for (int c = lane; c < C; c += 32)
		m += x[c];
	m = warp_sum(m) / C;
	for (int c = lane; c < C; c += 32)
		v += (x[c] - m) * (x[c] - m);
	v = warp_sum(v) / C;
	s = rsqrtf(v + eps);
	for (int c = lane; c < C; c += 32)
		out[(size_t)row * C + c] = (x[c] - m) * s * w[c] + b[c];
	if (lane == 0) {
		mean[row] = m;
		rstd[row] = s;
	}
}

/* One warp per row: dinp (N,C) += the LayerNorm input gradient. */
__global__ void
k_layernorm_dx(float *dinp, const float *dout, const float *inp,
    const float *w, const float *mean, const float *rstd, int N, int C)
{
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x % 32;
	const float *dy, *x;
	float m, s, dmean = 0, dnorm = 0;

	if (row >= N)
		return;
	dy = dout + (size_t)row * C;
	x = inp + (size_t)row * C;
	m = mean[row];
	s = rstd[row];
	for (int c = lane; c < C; c += 32) {
		float g = dy[c] * w[c];

		dmean += g;
		dnorm += g * (x[c] - m) * s;
	}
	dmean = warp_sum(dmean) / C;
	dnorm = warp_sum(dnorm) / C;
	for (int c = lane; c < C; c += 32) {
		float norm = (x[c] - m) * s;

		dinp[(size_t)row * C + c] += (dy[c] * w[c] - dmean - norm * dnorm) * s;
	}
}

/*
 * Column sums in a fixed order, first pass: block (x, y) sums columns
 * 32x.. of rows in chunk y into part (chunks, 2, C). With LN, the two
 * sums are LayerNorm's weight and bias gradients (dy * xhat, dy);
 * without, the second is the column sum of dy (a bias gradient).
 */
enum { COL_ROWS = 256, COL_LANES = 8 };

template <bool LN>
__global__ void
k_colsum(float *part, const float *dy, const float *x, const float *mean,
    const float *rstd, int N, int C)
{
	__shared__ float s0[COL_LANES][32], s1[COL_LANES][32];
	int c = blockIdx.x * 32 + threadIdx.x, r0 = blockIdx.y * COL_ROWS;
	int r1 = min(N, r0 + COL_ROWS);
	float a = 0, b = 0;

	if (c < C) {
		for (int r = r0 + threadIdx.y; r < r1; r += COL_LANES) {
			float g = dy[(size_t)r * C + c];

			if (LN)
				a += g * (x[(size_t)r * C + c] - mean[r]) * rstd[r];
			b += g;
		}
	}
	s0[threadIdx.y][threadIdx.x] = a;
	s1[threadIdx.y][threadIdx.x] = b;
	__syncthreads();
	if (threadIdx.y == 0 && c < C) {
		for (int j = 1; j < COL_LANES; j++) {
			a += s0[j][threadIdx.x];
			b += s1[j][threadIdx.x];
		}
		part[((size_t)blockIdx.y * 2) * C + c] = a;
		part[((size_t)blockIdx.y * 2 + 1) * C + c] = b;
	}
}

/* Second pass: da (C) += sum of part[k][0], db (C) += part[k][1], k in order. */
__global__ void
k_colsum_add(float *da, float *db, const float *part, int chunks, int C)
{
	int c = blockIdx.x * blockDim.x + threadIdx.x;
	float a = 0, b = 0;

	if (c >= C)
		return;
	for (int k = 0; k < chunks; k++) {
		a += part[((size_t)k * 2) * C + c];
		b += part[((size_t)k * 2 + 1) * C + c];
	}
	if (da)
		da[c] += a;
	if (db)
		db[c] += b;
}

/* out (N,OC) = bias broadcast over rows */
__global__ void
k_rows(float *out, const float *bias, int OC, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = bias[i % OC];
}

/*
 * Element i of a head-major (B,NH,T,HS) tensor lies at the returned index
 * of a token-major one whose rows (b, t) are `row` floats apart, head h's
 * HS channels at h * HS: (B,T,NH,HS) with row C, or a third of
 * (B,T,3,NH,HS) with row 3C.
 */
__device__ size_t
token_major(size_t i, int T, int NH, int HS, size_t row)
{
	int d = (int)(i % HS), t = (int)(i / HS % T);
	int h = (int)(i / HS / T % NH), b = (int)(i / HS / T / NH);

	return ((size_t)b * T + t) * row + (size_t)h * HS + d;
}

/*
 * qkv (B,T,3,NH,HS) and q, k, v (B,NH,T,HS) each, head-major so that one
 * head's rows are a contiguous (T,HS) matrix for the batched products:
 * split copies qkv into q, k, v; otherwise q, k, v (gradients) go into qkv.
 */
__global__ void
k_qkv_heads(float *q, float *k, float *v, float *qkv, int B, int T, int NH,
    int HS, int split)
{
	size_t C = (size_t)NH * HS, n = (size_t)B * T * C;
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, j;

	if (i >= n)
		return;
	j = token_major(i, T, NH, HS, 3 * C);
	if (split) {
		q[i] = qkv[j];
		k[i] = qkv[j + C];
		v[i] = qkv[j + 2 * C];
	} else {
		qkv[j] = q[i];
		qkv[j + C] = k[i];
		qkv[j + 2 * C] = v[i];
	}
}

/* y (B,NH,T,HS) <-> out (B,T,NH,HS); to_heads picks the direction. */
__global__ void
k_heads(float *dst, const float *src, int B, int T, int NH, int HS,
    int to_heads)
{
	size_t n = (size_t)B * NH * T * HS;
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, j;

	if (i >= n)
		return;
	j = token_major(i, T, NH, HS, (size_t)NH * HS);
	if (to_heads)
		dst[i] = src[j];
	else
		dst[j] = src[i];
}

/*
 * One warp per row r = (b, h, t) of att (B,NH,T,T), holding the scaled
 * scores: replaced by the causal softmax (zero above the diagonal).
 */
__global__ void
k_softmax_causal(float *att, int T, size_t rows)
{
	size_t r = blockIdx.x * (size_t)(blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x % 32, t;
	float *x, max = -INFINITY, sum = 0, inv;

	if (r >= rows)
		return;
	t = (int)(r % T);
	x = att + r * T;
	for (int j = lane; j <= t; j += 32)
		max = fmaxf(max, x[j]);
	max = warp_max(max);
	for (int j = lane; j <= t; j += 32) {
		float e = expf(x[j] - max);

		x[j] = e;
		sum += e;
	}
	inv = 1.0f / warp_sum(sum);
	for (int j = lane; j < T; j += 32)
		x[j] = j <= t ? x[j] * inv : 0.0f;
}

/*
 * The mask index of element r * T + j of a call's (B,NH,T,T)
 * probabilities, row r = (b, h, t): struct gpt_mask's global position.
 */
__device__ static uint64_t
mask_index(struct gpt_mask mk, size_t r, int j, int T, int NH)
{
	uint64_t t = r % T, h = r / T % NH, b = r / T / NH;

	return (((mk.s0 + b) * (uint64_t)mk.nh + (uint64_t)mk.h0 + h) *
	    (uint64_t)T + t) * (uint64_t)T + (uint64_t)j;
}

/* out (n) = dropout(inp (n)) with the mask of the (B,NH,T,T) elements */
__global__ void
k_dropout(float *out, const float *inp, size_t n, float p, struct gpt_mask mk,
    int T, int NH)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = gpt_dropout_keep(mk.key, mask_index(mk, i / T,
		    (int)(i % T), T, NH), p) ? inp[i] * (1.0f / (1.0f - p)) : 0.0f;
}

/* out (n) = a + dropout(b), the masks of elements i0..; a may be NULL (0) or out */
__global__ void
k_residual(float *out, const float *a, const float *b, size_t n, float p,
    uint64_t key, uint64_t i0)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	float keep = 1.0f / (1.0f - p), y;

	if (i >= n)
		return;
	if (p > 0)
		y = gpt_dropout_keep(key, i0 + i, p) ? b[i] * keep : 0.0f;
	else
		y = b[i];
	out[i] = (a ? a[i] : 0.0f) + y;
}

/* out (n) += a (n) */
__global__ void
k_add(float *out, const float *a, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		out[i] += a[i];
}

/*
 * Softmax backward over one row r of the (B,NH,T,T) products, in place:
 * dp (the gradient of the dropped probabilities) becomes ds, the gradient
 * of the scaled scores: mask m, dp' = dp * m, ds = att * (dp' - dot) * scale.
 */
__global__ void
k_softmax_back(float *dp, const float *att, int T, int NH, size_t rows,
    float scale, float p, struct gpt_mask mk)
{
	size_t r = blockIdx.x * (size_t)(blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x % 32, t;
	float *d, dot = 0, keep = 1.0f / (1.0f - p);
	const float *a;

	if (r >= rows)
		return;
	t = (int)(r % T);
	d = dp + r * T;
	a = att + r * T;
	for (int j = lane; j <= t; j += 32) {
		float g = d[j];

		if (p > 0)
			g = gpt_dropout_keep(mk.key, mask_index(mk, r, j, T, NH),
			    p) ? g * keep : 0.0f;
		d[j] = g;
		dot += g * a[j];
	}
	dot = warp_sum(dot);
	for (int j = lane; j < T; j += 32)
		d[j] = j <= t ? a[j] * (d[j] - dot) * scale : 0.0f;
}

__global__ void
k_gelu(float *out, const float *x, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n) {
		float u = GELU_K * (x[i] + 0.044715f * x[i] * x[i] * x[i]);

		out[i] = 0.5f * x[i] * (1.0f + tanhf(u));
	}
}

__global__ void
k_gelu_back(float *dx, const float *x, const float *dy, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n) {
		float x2 = x[i] * x[i];
		float th = tanhf(GELU_K * (x[i] + 0.044715f * x2 * x[i]));
		float sech2 = 1.0f - th * th;
		float du = GELU_K * (1.0f + 3.0f * 0.044715f * x2);

		dx[i] = dy[i] * (0.5f * (1.0f + th) + 0.5f * x[i] * sech2 * du);
	}
}

/*
 * One block per row of logits (N,V): the loss at the target, the
 * exponentials summed in double as the CPU does; with dloss != 0 the row
 * becomes its gradient in place (the logits exist once).
 */
__global__ void
k_crossentropy(float *losses, float *logits, const int32_t *targets, int V,
    float dloss)
{
	float *x = logits + (size_t)blockIdx.x * V;
	int target = targets[blockIdx.x];
	float max = -INFINITY, xt = x[target], inv;
	double sum = 0;
	__shared__ double total;

	for (int i = threadIdx.x; i < V; i += blockDim.x)
		max = fmaxf(max, x[i]);
	max = block_max(max);
	for (int i = threadIdx.x; i < V; i += blockDim.x)
		sum += (double)expf(x[i] - max);
	sum = block_sum(sum);
	if (threadIdx.x == 0) {
		total = sum;
		losses[blockIdx.x] = (float)(log(sum) - (double)(xt - max));
	}
	__syncthreads();
	if (dloss == 0)
		return;
	inv = (float)(dloss / total);
	for (int i = threadIdx.x; i < V; i += blockDim.x)
		x[i] = expf(x[i] - max) * inv - (i == target ? dloss : 0.0f);
}

/* One block per row of a vocabulary part's logits (N,V): ce_rowmax, ce_rowsum, ce_grad. */
__global__ void
k_ce_rowmax(float *mx, const float *logits, int V)
{
	const float *x = logits + (size_t)blockIdx.x * V;
	float max = -INFINITY;

	for (int i = threadIdx.x; i < V; i += blockDim.x)
		max = fmaxf(max, x[i]);
	max = block_max(max);
	if (threadIdx.x == 0)
		mx[blockIdx.x] = max;
}

__global__ void
k_ce_rowsum(double *sx, const float *logits, const int32_t *targets,
    const float *mx, int N, int V, int v0)
{
	const float *x = logits + (size_t)blockIdx.x * V;
	float max = mx[blockIdx.x];
	int t = targets[blockIdx.x] - v0;
	double sum = 0;

	for (int i = threadIdx.x; i < V; i += blockDim.x)
		sum += (double)expf(x[i] - max);
	sum = block_sum(sum);
	if (threadIdx.x == 0) {
		sx[blockIdx.x] = sum;
		sx[N + blockIdx.x] = t >= 0 && t < V ? x[t] : 0.0;
	}
}

__global__ void
k_ce_grad(float *losses, float *logits, const int32_t *targets,
    const float *mx, const double *sx, int N, int V, int v0, float dloss)
{
	float *x = logits + (size_t)blockIdx.x * V, max = mx[blockIdx.x], inv;
	double sum = sx[blockIdx.x];
	int t = targets[blockIdx.x] - v0;

	if (threadIdx.x == 0)
		losses[blockIdx.x] = (float)(log(sum) -
		    (double)((float)sx[N + blockIdx.x] - max));
	if (dloss == 0)
		return;
	inv = (float)(dloss / sum);
	for (int i = threadIdx.x; i < V; i += blockDim.x)
		x[i] = expf(x[i] - max) * inv - (i == t ? dloss : 0.0f);
}

__global__ void
k_adamw(float *p, const float *g, float *m, float *v, size_t n, float lr,
    float beta1, float beta2, float eps, float wd, float bc1, float bc2,
    float gscale)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		gpt_adamw_elem(p + i, g[i], m + i, v + i, lr, beta1, beta2, eps,
		    wd, bc1, bc2, gscale);
}

/* Sum of squares: a fixed grid of SUM_BLOCKS partials, then one block. */
enum { SUM_BLOCKS = 1024, SUM_THREADS = 256 };

__global__ void
k_sumsq(double *part, const float *x, size_t n)
{
	double s = 0;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	    i += (size_t)gridDim.x * blockDim.x)
		s += (double)x[i] * x[i];
	s = block_sum(s);
	if (threadIdx.x == 0)
		part[blockIdx.x] = s;
}

/* part[b] = the sum of squares of chunk b of x (n), chunk elements each */
__global__ void
k_sumsq_chunk(double *part, const float *x, size_t n, size_t chunk)
{
	size_t c0 = blockIdx.x * chunk, c1 = min(c0 + chunk, n);
	double s = 0;

	for (size_t i = c0 + threadIdx.x; i < c1; i += blockDim.x)
		s += (double)x[i] * x[i];
	s = block_sum(s);
	if (threadIdx.x == 0)
		part[blockIdx.x] = s;
}

__global__ void
k_sum(double *out, const double *part, int n)
{
	double s = 0;

	for (int i = threadIdx.x; i < n; i += blockDim.x)
		s += part[i];
	s = block_sum(s);
	if (threadIdx.x == 0)
		*out = s;
}

/* Store each row's key and value at [seq[i], h, pos[i]] of the caches. */
__global__ void
k_kv_store(float *kcache, float *vcache, const float *qkv,
    const int32_t *seq, const int32_t *pos, int N, int C, int NH, int maxT)
{
	int HS = C / NH;
	size_t n = (size_t)N * C;
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n) {
		int r = (int)(i / C), c = (int)(i % C), h = c / HS, d = c % HS;
		size_t row = (((size_t)seq[r] * NH + h) * maxT + pos[r]) * HS + d;

		kcache[row] = qkv[(size_t)r * 3 * C + C + c];
		vcache[row] = qkv[(size_t)r * 3 * C + 2 * C + c];
	}
}

/*
 * One block per (row, head): the query's attention over positions
 * 0..pos of its slot. Dynamic shared memory: HS floats of query, then
 * maxT scores.
 */
__global__ void
k_attention_kv(float *out, const float *kcache, const float *vcache,
    const float *qkv, const int32_t *seq, const int32_t *pos, int C, int NH,
    int maxT, float scale)
{
	extern __shared__ float sh[];
	int HS = C / NH, r = blockIdx.x / NH, h = blockIdx.x % NH, p = pos[r];
	float *q = sh, *att = sh + HS, max = -INFINITY, sum = 0, inv;
	size_t base = ((size_t)seq[r] * NH + h) * maxT * HS;

	for (int d = threadIdx.x; d < HS; d += blockDim.x)
		q[d] = qkv[(size_t)r * 3 * C + h * HS + d];
	__syncthreads();
	for (int j = threadIdx.x; j <= p; j += blockDim.x) {
		const float *k = kcache + base + (size_t)j * HS;
		float s = 0;

		for (int d = 0; d < HS; d++)
			s += q[d] * k[d];
		att[j] = s * scale;
		max = fmaxf(max, att[j]);
	}
	max = block_max(max);
	for (int j = threadIdx.x; j <= p; j += blockDim.x) {
		att[j] = expf(att[j] - max);
		sum += att[j];
	}
	inv = 1.0f / block_sum(sum);
	__syncthreads();
	for (int d = threadIdx.x; d < HS; d += blockDim.x) {
		const float *v = vcache + base + d;
		float y = 0;

		for (int j = 0; j <= p; j++)
			y += att[j] * inv * v[(size_t)j * HS];
		out[(size_t)r * C + h * HS + d] = y;
	}
}

/* One warp per output channel o: out[n, o] for every row n (few rows). */
__global__ void
k_gemv_q8(float *out, const float *inp, const int8_t *w, const float *scale,
    const float *bias, int N, int C, int OC)
{
	int o = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x % 32;
	const int8_t *row;

	if (o >= OC)
		return;
	row = w + (size_t)o * C;
	for (int n = 0; n < N; n++) {
		const float *x = inp + (size_t)n * C;
		float s = 0;

		for (int c = lane; c < C; c += 32)
			s += x[c] * (float)row[c];
		s = warp_sum(s);
		if (lane == 0)
			out[(size_t)n * OC + o] = s * scale[o] + (bias ? bias[o] : 0.0f);
	}
}

/* wf (OC,C) = w (OC,C) * scale (OC) in fp32 */
__global__ void
k_dequant(float *wf, const int8_t *w, const float *scale, int C, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		wf[i] = (float)w[i] * scale[i / C];
}

/* ---- matrix products ---------------------------------------------------- */

/*
 * Row-major C (M,N) = alpha op(A) (M,K) op(B) (K,N) + beta C, with
 * leading dimensions as a row-major caller counts them (blas_sgemm's
 * convention), over batch matrices stride apart. cuBLAS is column-major:
 * the row-major C is the column-major C^T = op(B)^T op(A)^T.
 */
static void
gemm(int ta, int tb, int M, int N, int K, float alpha, const float *A,
    int lda, const float *B, int ldb, float beta, float *C, int ldc,
    int batch, long long sa, long long sb, long long sc)
{
	if (M == 0 || N == 0)
		return;
	BLAS_OK(cublasGemmStridedBatchedEx(blas,
	    tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
	    N, M, K, &alpha, B, CUDA_R_32F, ldb, sb, A, CUDA_R_32F, lda, sa,
	    &beta, C, CUDA_R_32F, ldc, sc, batch, compute, CUBLAS_GEMM_DEFAULT));
}

static void
gemm1(int ta, int tb, int M, int N, int K, float alpha, const float *A,
    int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, 1, 0, 0, 0);
}

/* ---- launchers ---------------------------------------------------------- */

enum { TPB = 256 };	/* threads per block of the element-wise kernels */

static void *
cu_alloc(size_t size)
{
	void *p = NULL;

	if (cudaMalloc(&p, size ? size : 1) != cudaSuccess) {
		cudaGetLastError();
		return NULL;
	}
	CUDA_OK(cudaMemset(p, 0, size ? size : 1));
	note_peak();
	return p;
}

static void
cu_free(void *p)
{
	if (p)
		CUDA_OK(cudaFree(p));
}

static void
cu_copy(void *dst, const void *src, size_t size)
{
	if (size)
		CUDA_OK(cudaMemcpy(dst, src, size, cudaMemcpyDefault));
}

static void
cu_zero(void *p, size_t size)
{
	if (size)
		CUDA_OK(cudaMemsetAsync(p, 0, size));
}

static void
cu_encoder_forward(float *out, const int32_t *inp, const float *wte,
    const float *wpe, int B, int T, int C, int v0, int nrows)
{
	size_t n = (size_t)B * T * C;

	PROFILE();
	ARG(out && inp && wte && wpe && B > 0 && T > 0 && C > 0 && nrows >= 0);
	k_encoder<<<blocks(n, TPB), TPB>>>(out, inp, wte, wpe, T, C, n, v0,
	    nrows);
	LAUNCHED();
}

static void
cu_encoder_backward(float *dwte, float *dwpe, const float *dout,
    const int32_t *inp, int B, int T, int C, int v0, int nrows)
{
	PROFILE();
	ARG(dwte && dwpe && dout && inp && B > 0 && T > 0 && C > 0 &&
	    nrows >= 0);
	k_encoder_dwte<<<dim3((C + DWTE_TPB - 1) / DWTE_TPB, DWTE_OWNERS),
	    DWTE_TPB>>>(dwte, dout, inp, C, B * T, v0, nrows);
	LAUNCHED();
	k_encoder_dwpe<<<blocks((size_t)T * C, TPB), TPB>>>(dwpe, dout, B, T, C);
	LAUNCHED();
}

static void
cu_layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
    const float *w, const float *b, int N, int C, float eps)
{
	PROFILE();
	ARG(out && mean && rstd && inp && w && b && N > 0 && C > 0);
	k_layernorm<<<blocks((size_t)N * 32, TPB), TPB>>>(out, mean, rstd, inp,
	    w, b, N, C, eps);
	LAUNCHED();
}

/* da (C) +=, db (C) += column sums of dy (N,C) (LN: LayerNorm's parameter gradients) */
static void
colsums(float *da, float *db, const float *dy, const float *x,
    const float *mean, const float *rstd, int N, int C, int ln)
{
	int chunks = (N + COL_ROWS - 1) / COL_ROWS;
	float *part = scratch((size_t)chunks * 2 * C * sizeof(float));
	dim3 grid((C + 31) / 32, chunks), block(32, COL_LANES);

	if (ln)
		k_colsum<true><<<grid, block>>>(part, dy, x, mean, rstd, N, C);
	else
		k_colsum<false><<<grid, block>>>(part, dy, x, mean, rstd, N, C);
	LAUNCHED();
	k_colsum_add<<<blocks(C, TPB), TPB>>>(da, db, part, chunks, C);
	LAUNCHED();
}

static void
cu_layernorm_backward(float *dinp, float *dw, float *db, const float *dout,
    const float *inp, const float *w, const float *mean, const float *rstd,
    int N, int C)
{
	PROFILE();
	ARG(dinp && dw && db && dout && inp && w && mean && rstd && N > 0 &&
	    C > 0);
	k_layernorm_dx<<<blocks((size_t)N * 32, TPB), TPB>>>(dinp, dout, inp,
	    w, mean, rstd, N, C);
	LAUNCHED();
	colsums(dw, db, dout, inp, mean, rstd, N, C, 1);
}

/*
 * out (N,OC) = inp (N,C) @ w + bias (OC), bias broadcast first and the
 * product added to it; w is (C,OC), or (OC,C) used transposed when tw.
 * bias may be NULL.
 */
static void
gemm_bias(float *out, const float *inp, const float *w, int tw,
    const float *bias, int N, int C, int OC)
{
	size_t n = (size_t)N * OC;

	if (bias) {
		k_rows<<<blocks(n, TPB), TPB>>>(out, bias, OC, n);
		LAUNCHED();
	}
	gemm1(0, tw, N, OC, C, 1, inp, C, w, tw ? C : OC, bias ? 1.0f : 0.0f,
	    out, OC);
}

static void
cu_matmul_forward(float *out, const float *inp, const float *w,
    const float *bias, int N, int C, int OC)
{
	PROFILE();
	ARG(out && inp && w && N > 0 && C > 0 && OC > 0);
	gemm_bias(out, inp, w, 0, bias, N, C, OC);
}

static void
cu_matmul_backward(float *dinp, float *dw, float *dbias, const float *dout,
    const float *inp, const float *w, int N, int C, int OC)
{
	PROFILE();
	ARG(dinp && dw && dout && inp && w && N > 0 && C > 0 && OC > 0);
	gemm1(0, 1, N, C, OC, 1, dout, OC, w, OC, 0, dinp, C);
	gemm1(1, 0, C, OC, N, 1, inp, C, dout, OC, 1, dw, OC);
	if (dbias)
		colsums(NULL, dbias, dout, NULL, NULL, NULL, N, OC, 0);
}

/* The warps-per-row kernels: 8 rows of 32 lanes per block. */
static unsigned
row_blocks(size_t rows)
{
	return blocks(rows, TPB / 32);
}

static void
cu_attention_forward(float *out, float *att, const float *qkv, int B, int T,
    int C, int NH, float p, const struct gpt_mask *mk)
{
	int HS;
	size_t btc = (size_t)B * T * C, natt = (size_t)B * NH * T * T;
	long long tt = (long long)T * T, th;
	float *q, *k, *v, *y, *a;

	PROFILE();
	ARG(att && qkv && B > 0 && T > 0 && NH > 0 && C % NH == 0 &&
	    p >= 0 && p < 1 && (p == 0 || mk));
	HS = C / NH;
	th = (long long)T * HS;
	q = scratch((4 * btc + (p > 0 && out ? natt : 0)) * sizeof(float));
	k = q + btc;
	v = k + btc;
	y = v + btc;
	k_qkv_heads<<<blocks(btc, TPB), TPB>>>(q, k, v, (float *)qkv, B, T, NH,
	    HS, 1);
	LAUNCHED();
	/* att (T,T) = q (T,HS) k^T / sqrt(HS), per (b, h) */
	gemm(0, 1, T, T, HS, 1.0f / sqrtf((float)HS), q, HS, k, HS, 0, att, T,
	    B * NH, th, th, tt);
	k_softmax_causal<<<row_blocks((size_t)B * NH * T), TPB>>>(att, T,
	    (size_t)B * NH * T);
	LAUNCHED();
	if (out == NULL)
		return;
	a = att;
	if (p > 0) {
		a = y + btc;
		k_dropout<<<blocks(natt, TPB), TPB>>>(a, att, natt, p, *mk, T,
		    NH);
		LAUNCHED();
	}
	/* y (T,HS) = a (T,T) v (T,HS) */
	gemm(0, 0, T, HS, T, 1, a, T, v, HS, 0, y, HS, B * NH, tt, th, th);
	k_heads<<<blocks(btc, TPB), TPB>>>(out, y, B, T, NH, HS, 0);
	LAUNCHED();
}

static void
cu_attention_backward(float *dqkv, float *dp, const float *dout,
    const float *qkv, const float *att, int B, int T, int C, int NH, float p,
    const struct gpt_mask *mk)
{
	int HS;
	struct gpt_mask m0 = { 0, 0, 0, 1 };
	size_t btc = (size_t)B * T * C, natt = (size_t)B * NH * T * T;
	long long tt = (long long)T * T, th;
	float *q, *k, *v, *dy, *dq, *dk, *dv;
	const float *a;

	PROFILE();
	ARG(dqkv && dp && dout && qkv && att && B > 0 && T > 0 && NH > 0 &&
	    C % NH == 0 && p >= 0 && p < 1 && (p == 0 || mk));
	if (mk)
		m0 = *mk;
	HS = C / NH;
	th = (long long)T * HS;
	q = scratch((7 * btc + (p > 0 ? natt : 0)) * sizeof(float));
	k = q + btc;
	v = k + btc;
	dy = v + btc;
	dq = dy + btc;
	dk = dq + btc;
	dv = dk + btc;
	k_qkv_heads<<<blocks(btc, TPB), TPB>>>(q, k, v, (float *)qkv, B, T, NH,
	    HS, 1);
	LAUNCHED();
	k_heads<<<blocks(btc, TPB), TPB>>>(dy, dout, B, T, NH, HS, 1);
	LAUNCHED();
	a = att;
	if (p > 0) {
		float *d = dv + btc;

		k_dropout<<<blocks(natt, TPB), TPB>>>(d, att, natt, p, m0, T, NH);
		LAUNCHED();
		a = d;
	}
	/* dv (T,HS) = a^T (T,T) dy (T,HS); dp (T,T) = dy v^T */
	gemm(1, 0, T, HS, T, 1, a, T, dy, HS, 0, dv, HS, B * NH, tt, th, th);
	gemm(0, 1, T, T, HS, 1, dy, HS, v, HS, 0, dp, T, B * NH, th, th, tt);
	k_softmax_back<<<row_blocks((size_t)B * NH * T), TPB>>>(dp, att, T, NH,
	    (size_t)B * NH * T, 1.0f / sqrtf((float)HS), p, m0);
	LAUNCHED();
	/* dq = ds k; dk = ds^T q */
	gemm(0, 0, T, HS, T, 1, dp, T, k, HS, 0, dq, HS, B * NH, tt, th, th);
	gemm(1, 0, T, HS, T, 1, dp, T, q, HS, 0, dk, HS, B * NH, tt, th, th);
	k_qkv_heads<<<blocks(btc, TPB), TPB>>>(dq, dk, dv, dqkv, B, T, NH, HS, 0);
	LAUNCHED();
}

static void
cu_gelu_forward(float *out, const float *inp, size_t N)
{
	PROFILE();
	ARG(out && inp);
	if (N == 0)
		return;
	k_gelu<<<blocks(N, TPB), TPB>>>(out, inp, N);
	LAUNCHED();
}

static void
cu_gelu_backward(float *dinp, const float *inp, const float *dout, size_t N)
{
	PROFILE();
	ARG(dinp && inp && dout);
	if (N == 0)
		return;
	k_gelu_back<<<blocks(N, TPB), TPB>>>(dinp, inp, dout, N);
	LAUNCHED();
}

static void
cu_residual_forward(float *out, const float *a, const float *b, size_t N,
    float p, uint64_t key, uint64_t i0)
{
	PROFILE();
	ARG(out && b && p >= 0 && p < 1);
	if (N == 0)
		return;
	k_residual<<<blocks(N, TPB), TPB>>>(out, a, b, N, p, key, i0);
	LAUNCHED();
}

static void
cu_dropout(float *out, const float *inp, size_t N, float p, uint64_t key,
    uint64_t i0)
{
	cu_residual_forward(out, NULL, inp, N, p, key, i0);
}

static void
cu_add(float *out, const float *a, size_t N)
{
	PROFILE();
	ARG(out && a);
	if (N == 0)
		return;
	k_add<<<blocks(N, TPB), TPB>>>(out, a, N);
	LAUNCHED();
}

static void
cu_lmhead_forward(float *logits, const float *inp, const float *wte, int N,
    int C, int V)
{
	PROFILE();
	ARG(logits && inp && wte && N > 0 && C > 0 && V > 0);
	gemm_bias(logits, inp, wte, 1, NULL, N, C, V);
}

static void
cu_lmhead_backward(float *dinp, float *dwte, const float *dlogits,
    const float *inp, const float *wte, int N, int C, int V)
{
	PROFILE();
	ARG(dinp && dwte && dlogits && inp && wte && N > 0 && C > 0 && V > 0);
	gemm1(0, 0, N, C, V, 1, dlogits, V, wte, C, 0, dinp, C);
	gemm1(1, 0, V, C, N, 1, dlogits, V, inp, C, 1, dwte, C);
}

static void
cu_crossentropy(float *losses, float *logits, const int32_t *targets, int N,
    int V, float dloss)
{
	PROFILE();
	ARG(losses && logits && targets && N > 0 && V > 0);
	k_crossentropy<<<N, 512>>>(losses, logits, targets, V, dloss);
	LAUNCHED();
}

static void
cu_ce_rowmax(float *mx, const float *logits, int N, int V)
{
	PROFILE();
	ARG(mx && logits && N > 0 && V >= 0);
	k_ce_rowmax<<<N, 512>>>(mx, logits, V);
	LAUNCHED();
}

static void
cu_ce_rowsum(double *sx, const float *logits, const int32_t *targets,
    const float *mx, int N, int V, int v0)
{
	PROFILE();
	ARG(sx && logits && targets && mx && N > 0 && V >= 0);
	k_ce_rowsum<<<N, 512>>>(sx, logits, targets, mx, N, V, v0);
	LAUNCHED();
}

static void
cu_ce_grad(float *losses, float *logits, const int32_t *targets,
    const float *mx, const double *sx, int N, int V, int v0, float dloss)
{
	PROFILE();
	ARG(losses && logits && targets && mx && sx && N > 0 && V >= 0);
	k_ce_grad<<<N, 512>>>(losses, logits, targets, mx, sx, N, V, v0, dloss);
	LAUNCHED();
}

static void
cu_adamw(float *p, const float *g, float *m, float *v, size_t n, float lr,
    float beta1, float beta2, float eps, float wd, float bc1, float bc2,
    float gscale)
{
	PROFILE();
	ARG(p && g && m && v && bc1 > 0 && bc2 > 0);
	if (n == 0)
		return;
	k_adamw<<<blocks(n, TPB), TPB>>>(p, g, m, v, n, lr, beta1, beta2, eps,
	    wd, bc1, bc2, gscale);
	LAUNCHED();
}

static double
cu_sumsq(const float *x, size_t n)
{
	double *part = (double *)scratch((SUM_BLOCKS + 1) * sizeof(double));
	double s;

	PROFILE();
	ARG(x != NULL);
	k_sumsq<<<SUM_BLOCKS, SUM_THREADS>>>(part, x, n);
	LAUNCHED();
	k_sum<<<1, 1024>>>(part + SUM_BLOCKS, part, SUM_BLOCKS);
	LAUNCHED();
	CUDA_OK(cudaMemcpy(&s, part + SUM_BLOCKS, sizeof s,
	    cudaMemcpyDeviceToHost));
	return s;
}

static void
cu_sumsq_chunks(double *part, const float *x, size_t n)
{
	size_t nchunk = (n + GPT_NORM_CHUNK - 1) / GPT_NORM_CHUNK;
	double *d;

	PROFILE();
	ARG(part && (x || n == 0));
	if (nchunk == 0)
		return;
	d = (double *)scratch(nchunk * sizeof(double));
	k_sumsq_chunk<<<blocks(nchunk, 1), SUM_THREADS>>>(d, x, n,
	    GPT_NORM_CHUNK);
	LAUNCHED();
	CUDA_OK(cudaMemcpy(part, d, nchunk * sizeof(double),
	    cudaMemcpyDeviceToHost));
}

static void
cu_encoder_forward_pos(float *out, const int32_t *inp, const int32_t *pos,
    const float *wte, const float *wpe, int N, int C)
{
	size_t n = (size_t)N * C;

	PROFILE();
	ARG(out && inp && pos && wte && wpe && N > 0 && C > 0);
	k_encoder_pos<<<blocks(n, TPB), TPB>>>(out, inp, pos, wte, wpe, C, n);
	LAUNCHED();
}

static void
cu_attention_forward_kv(float *out, float *kcache, float *vcache,
    const float *qkv, const int32_t *seq, const int32_t *pos, int N, int C,
    int NH, int maxT)
{
	size_t shared;
	int HS;

	PROFILE();
	ARG(out && kcache && vcache && qkv && seq && pos && N > 0 && NH > 0 &&
	    C % NH == 0 && maxT > 0);
	HS = C / NH;
	shared = (size_t)(HS + maxT) * sizeof(float);
	if (shared > 48 * 1024 - 1024)	/* the block reductions' static arrays too */
		cuda_die("cuda: %s: a context of %d positions needs %zu bytes "
		    "of shared memory (at most 48 KB)", __func__, maxT, shared);
	k_kv_store<<<blocks((size_t)N * C, TPB), TPB>>>(kcache, vcache, qkv, seq,
	    pos, N, C, NH, maxT);
	LAUNCHED();
	k_attention_kv<<<N * NH, 128, shared>>>(out, kcache, vcache, qkv, seq,
	    pos, C, NH, maxT, 1.0f / sqrtf((float)HS));
	LAUNCHED();
}

/* Few rows (decoding): a warp per output. More (a prompt): widen and gemm. */
enum { Q8_GEMV_ROWS = 8 };

static void
cu_matmul_forward_q8(float *out, const float *inp, const int8_t *w,
    const float *scale, const float *bias, int N, int C, int OC)
{
	PROFILE();
	ARG(out && inp && w && scale && N > 0 && C > 0 && OC > 0);
	if (N <= Q8_GEMV_ROWS) {
		k_gemv_q8<<<row_blocks(OC), TPB>>>(out, inp, w, scale, bias, N, C,
		    OC);
		LAUNCHED();
		return;
	}
	size_t nw = (size_t)OC * C;
	float *wf = scratch(nw * sizeof(float));

	k_dequant<<<blocks(nw, TPB), TPB>>>(wf, w, scale, C, nw);
	LAUNCHED();
	gemm_bias(out, inp, wf, 1, bias, N, C, OC);
}

static const struct gpt_backend gpt_cuda = {
	.name = "cuda",
	.alloc = cu_alloc,
	.free = cu_free,
	.put = cu_copy,
	.get = cu_copy,
	.zero = cu_zero,
	.encoder_forward = cu_encoder_forward,
	.encoder_backward = cu_encoder_backward,
	.layernorm_forward = cu_layernorm_forward,
	.layernorm_backward = cu_layernorm_backward,
	.matmul_forward = cu_matmul_forward,
	.matmul_backward = cu_matmul_backward,
	.attention_forward = cu_attention_forward,
	.attention_backward = cu_attention_backward,
	.gelu_forward = cu_gelu_forward,
	.gelu_backward = cu_gelu_backward,
	.residual_forward = cu_residual_forward,
	.dropout = cu_dropout,
	.add = cu_add,
	.lmhead_forward = cu_lmhead_forward,
	.lmhead_backward = cu_lmhead_backward,
	.crossentropy = cu_crossentropy,
	.ce_rowmax = cu_ce_rowmax,
	.ce_rowsum = cu_ce_rowsum,
	.ce_grad = cu_ce_grad,
	.adamw = cu_adamw,
	.sumsq = cu_sumsq,
	.sumsq_chunks = cu_sumsq_chunks,
	.encoder_forward_pos = cu_encoder_forward_pos,
	.attention_forward_kv = cu_attention_forward_kv,
	.matmul_forward_q8 = cu_matmul_forward_q8,
	/* no row-wise products: gpt_infer's rowwise mode uses the ones above */
	.matmul_forward_rows = NULL,
	.lmhead_forward_rows = NULL,
	.matmul_forward_q8_rows = NULL,
};

static const struct gpt_backend *
owtcuda_backend(int precision, char *why, unsigned long n)
{
	if (owtcuda_device_count(why, n) == 0) {
		if (why && n && why[0] == '\0')
			snprintf(why, n, "no CUDA device");
		return NULL;
	}
	if (blas == NULL) {	/* on owtcuda_select's device */
		BLAS_OK(cublasCreate(&blas));
	}
	switch (precision) {
	case OWTCUDA_BF16: compute = CUBLAS_COMPUTE_32F_FAST_16BF; break;
	case OWTCUDA_FP16: compute = CUBLAS_COMPUTE_32F_FAST_16F; break;
	default: compute = CUBLAS_COMPUTE_32F; break;
	}
	return &gpt_cuda;
}

/*
 * NCCL's side of the backend: every launcher here runs on the legacy
 * default stream, so NCCL's work goes there too, ordered with the
 * kernels before and after it.
 */
static int
comm_query(void *stream)
{
	cudaError_t e = cudaStreamQuery((cudaStream_t)stream);

	if (e == cudaSuccess)
		return 1;
	if (e == cudaErrorNotReady)
		return 0;
	cudaGetLastError();
	return -1;
}

static void
comm_add(float *dst, const float *src, size_t n, void *stream)
{
	(void)stream;
	cu_add(dst, src, n);
}

static void
comm_copy(void *dst, const void *src, size_t size, void *stream)
{
	CUDA_OK(cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice,
	    (cudaStream_t)stream));
}

static int
comm_is_device(const void *p)
{
	cudaPointerAttributes a;

	if (p == NULL)
		return 0;
	if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	return a.type == cudaMemoryTypeDevice ||
	    a.type == cudaMemoryTypeManaged;
}

static const struct comm_device comm_dev = {
	NULL, comm_query, comm_add, comm_copy, cu_alloc, cu_free,
	comm_is_device,
};

static const struct comm_device *
owtcuda_comm_device(void)
{
	return &comm_dev;
}

static size_t
owtcuda_peak_bytes(void)
{
	note_peak();
	return peak_bytes;
}

static void
owtcuda_shutdown(void)
{
	if (work)
		CUDA_OK(cudaFree(work));
	work = NULL;
	work_size = 0;
	if (blas)
		BLAS_OK(cublasDestroy(blas));
	blas = NULL;
	CUDA_OK(cudaDeviceReset());
}

static void
owtcuda_sync(void)
{
	CUDA_OK(cudaDeviceSynchronize());
}

static const struct owtcuda plugin = {
	OWTCUDA_ABI,
	owtcuda_device_count,
	owtcuda_select,
	owtcuda_capability,
	owtcuda_backend,
	owtcuda_peak_bytes,
	owtcuda_shutdown,
	owtcuda_comm_device,
	owtcuda_sync,
};

extern "C" __attribute__((visibility("default"))) const struct owtcuda *
owtcuda_plugin(const struct owtcuda_host *h)
{
	if (h == NULL || h->abi != OWTCUDA_ABI)
		return NULL;
	host = h;
	return &plugin;
}
