/* gemv.h - matrix products of a few rows for inference: fp32 and int8 weights */
#ifndef OWT_GEMV_H
#define OWT_GEMV_H

#include <stdint.h>

/*
 * Products of a few rows by a weight matrix, for decoding:
 * each weight is read once, without packing, and each row's result is
 * the same whatever N and the thread count. Any N works: from 4 rows
 * on, tiles of 8 rows stay in registers over panels read from L2
 * (contrib/bench/gemv-bench.c times them). The command line's steps use
 * them up to GEMV_MAXN rows and sgemm beyond; the server's (struct
 * gpt_infer's rowwise) at every size, for results that do not depend
 * on the batch.
 */
#define GEMV_MAXN 16
/* out (N,OC) = inp (N,C) @ w (C,OC) + bias (OC, or NULL) */
void gemv_f32(float *out, const float *inp, const float *w, const float *bias,
    int N, int C, int OC);
/* out (N,OC) = inp (N,C) @ w (OC,C)^T */
void gemv_f32t(float *out, const float *inp, const float *w, int N, int C,
    int OC);
/* out (N,OC) = inp (N,C) @ (w (OC,C) * scale (OC))^T + bias (OC, or NULL); w int8 */
void gemv_q8(float *out, const float *inp, const int8_t *w, const float *scale,
    const float *bias, int N, int C, int OC);

#endif
