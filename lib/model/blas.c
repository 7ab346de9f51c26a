/* blas.c - single-precision matrix multiply: OpenBLAS loaded at run time, or a built-in kernel */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/blas.h"
#include "core/util.h"

/* cblas_sgemm's enums, so that building needs no BLAS headers. */
enum { ROWMAJOR = 101, NOTRANS = 111, TRANS = 112 };

typedef void sgemm_fn(int, int, int, int, int, int, float, const float *, int,
    const float *, int, float, float *, int);

static sgemm_fn *sgemm;
static int use512;
static char name[256] = "built-in sgemm";
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int nthreads = 1;

/* The (cols, rows) transpose of x (rows, cols), rows ld apart. */
static float *
transpose(const float *x, int rows, int cols, int ld)
{
	float *t = xmalloc((size_t)rows * cols * sizeof *t);
	long i, j;

	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++)
			t[j * rows + i] = x[i * ld + j];
	return t;
}

/*
 * The built-in kernel: op(A) and op(B) are copied to row-major (M,K) and
 * (K,N) when transposed, then each row of C is a sum of scaled rows of B,
 * which the compiler vectorizes. Slow next to OpenBLAS, but exact and
 * dependency-free.
 */
void
blas_sgemm_builtin(int ta, int tb, int M, int N, int K, float alpha,
    const float *A, int lda, const float *B, int ldb, float beta,
    float *C, int ldc)
{
	float *at = NULL, *bt = NULL;
	long i, j, p;

	if (ta) {
		A = at = transpose(A, K, M, lda);
		lda = K;
	}
	if (tb) {
		B = bt = transpose(B, N, K, ldb);
		ldb = N;
	}
#pragma omp parallel for private(j, p) schedule(static) \
    if ((size_t)M * N * K >= 65536)
	for (i = 0; i < M; i++) {
		float *c = C + i * ldc;

		for (j = 0; j < N; j++)
			c[j] = beta == 0 ? 0 : beta * c[j];
		for (p = 0; p < K; p++) {
			float a = alpha * A[i * lda + p];
			const float *b = B + p * ldb;

			for (j = 0; j < N; j++)
				c[j] += a * b[j];
		}
	}
	free(at);
	free(bt);
}

/* AMD processors with AVX-512 that OpenBLAS 0.3.21 mistakes for Haswell. */
static void
pick_coretype(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (getenv("OPENBLAS_CORETYPE") == NULL &&
	    __builtin_cpu_is("amd") && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512vl"))
		setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
#endif
}

static void
load(void)
{
	static const char *const paths[] = {
#if defined(__x86_64__)
		"/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0",
#elif defined(__aarch64__)
		"/usr/lib/aarch64-linux-gnu/openblas-openmp/libopenblas.so.0",
#endif
		"libopenblas.so.0",
	};
	const char *env = getenv("OWT_BLAS");
	char *(*config)(void);
	void (*set_threads)(int);
	void *h = NULL;
	size_t i;

	if (env != NULL && *env == '\0')
		env = NULL;
	if (env != NULL && strcmp(env, "builtin") == 0)
		return;
	if ((env == NULL || strcmp(env, "avx512") == 0) && sgemm512_available()) {
		use512 = 1;
		snprintf(name, sizeof name, "owt AVX-512 sgemm");
		return;
	}
	if (env != NULL && (strcmp(env, "openblas") == 0 ||
	    strcmp(env, "avx512") == 0))
		env = NULL;
	pick_coretype();
	if (env != NULL)
		h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
	for (i = 0; h == NULL && env == NULL && i < sizeof paths / sizeof *paths; i++)
		h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		snprintf(name, sizeof name, "built-in sgemm (%s)",
		    env ? dlerror() : "no OpenBLAS found");
		return;
	}
	sgemm = (sgemm_fn *)dlsym(h, "cblas_sgemm");
	config = (char *(*)(void))dlsym(h, "openblas_get_config");
	set_threads = (void (*)(int))dlsym(h, "openblas_set_num_threads");
	if (sgemm == NULL) {
		snprintf(name, sizeof name, "built-in sgemm (no cblas_sgemm "
		    "in %s)", env);
		return;
	}
	if (set_threads)
		set_threads(nthreads);
	snprintf(name, sizeof name, "%s", config ? config() : env);
}

/*
 * The stack of libgomp's threads: OMP_STACKSIZE, else GOMP_STACKSIZE, in
 * kilobytes or with a suffix B, K, M, G or T; 0 (the default) where
 * neither is set or valid, or below the least stack, as libgomp takes it.
 */
static size_t
omp_stack(void)
{
	static const char *const vars[] = { "OMP_STACKSIZE", "GOMP_STACKSIZE" };
	static const char units[] = "bkmgt";
	const char *v, *u;
	unsigned long long n;
	char *end;
	size_t i;
	int shift;

	for (i = 0; i < sizeof vars / sizeof *vars; i++) {
		if ((v = getenv(vars[i])) == NULL)
			continue;
		errno = 0;
		n = strtoull(v, &end, 10);
		if (end == v || errno != 0)
			continue;
		end += strspn(end, " \t");
		shift = 10;
		if (*end != '\0' &&
		    (u = strchr(units, tolower((unsigned char)*end))) != NULL) {
			shift = 10 * (int)(u - units);
			end++;
		}
		end += strspn(end, " \t");
		if (*end != '\0' || n > (SIZE_MAX >> shift))
			continue;
		return ((size_t)n << shift) < (size_t)PTHREAD_STACK_MIN ? 0 :
		    (size_t)n << shift;
	}
	return 0;
}

const char *
blas_init(int threads)
{
	nthreads = threads;
	/* libgomp exits 1 with its own message where a thread cannot start */
	owt_threads_check(threads, omp_stack());
#pragma omp parallel num_threads(threads)
	{
	}
	pthread_once(&once, load);
	return name;
}

const char *
blas_name(void)
{
	return name;
}

void
blas_sgemm(int ta, int tb, int M, int N, int K, float alpha,
    const float *A, int lda, const float *B, int ldb, float beta,
    float *C, int ldc)
{
	if (M == 0 || N == 0)
		return;
	if (use512)
		sgemm512(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
	else if (sgemm)
		sgemm(ROWMAJOR, ta ? TRANS : NOTRANS, tb ? TRANS : NOTRANS, M, N,
		    K, alpha, A, lda, B, ldb, beta, C, ldc);
	else
		blas_sgemm_builtin(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta,
		    C, ldc);
}
