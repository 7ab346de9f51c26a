/* blas.h - single-precision matrix multiply: OpenBLAS loaded at run time, or a built-in kernel */
#ifndef OWT_BLAS_H
#define OWT_BLAS_H

#include <stddef.h>
#include <stdint.h>

/*
 * C = alpha * op(A) @ op(B) + beta * C, row-major, as cblas_sgemm:
 * op(A) is (M,K), op(B) is (K,N), C is (M,N); lda, ldb, ldc are row
 * strides of the matrices as stored (A is (K,M) when ta is set).
 */
void blas_sgemm(int ta, int tb, int M, int N, int K, float alpha,
    const float *A, int lda, const float *B, int ldb, float beta,
    float *C, int ldc);

/*
 * owt's own kernel for processors with AVX-512 (sgemm512.c): about twice
 * OpenBLAS 0.3.21's speed where OpenBLAS runs its AVX2 kernels. It keeps
 * packing buffers per OpenMP thread: call it from one thread at a time,
 * and only where sgemm512_available() (elsewhere it is owt_fatal).
 */
int sgemm512_available(void);
void sgemm512(int ta, int tb, int M, int N, int K, float alpha,
    const float *A, int lda, const float *B, int ldb, float beta,
    float *C, int ldc);

/* The portable kernel, whatever blas_init loaded (for tests). */
void blas_sgemm_builtin(int ta, int tb, int M, int N, int K, float alpha,
    const float *A, int lda, const float *B, int ldb, float beta,
    float *C, int ldc);

/*
 * Choose the matrix multiply once and set its thread count. OWT_BLAS in
 * the environment picks one: "avx512" (the default where the processor
 * has it), "openblas" (the OpenMP build of Debian's OpenBLAS, then any
 * libopenblas.so.0; the default elsewhere), a library path to dlopen, or
 * "builtin" (portable, slow). On an AMD processor with AVX-512, OpenBLAS
 * gets OPENBLAS_CORETYPE=SkylakeX unless the environment sets it:
 * OpenBLAS before 0.3.22 takes Zen 4 and 5 for Haswell. Without a
 * loadable OpenBLAS the built-in kernel is used and blas_name says so.
 * Returns the description for logs ("OpenBLAS 0.3.21 ...").
 * OpenMP's threads start here, threads of them: where they cannot, it
 * exits 3 ("cannot start N threads: why", owt_threads_check), not 1
 * with libgomp's message at the first parallel loop.
 */
const char *blas_init(int threads);
const char *blas_name(void);

#endif
