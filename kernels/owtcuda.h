/* owtcuda.h - the CUDA side of owt, as plain C: no CUDA type crosses it */
#ifndef OWT_CUDA_H
#define OWT_CUDA_H

#include <stddef.h>

#include "model/gpt.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The number of usable CUDA devices: 0 when there is no driver, no device,
 * or the runtime fails (the reason, if any, is written to why[0..n)).
 */
int owtcuda_device_count(char *why, unsigned long n);

/*
 * Make device index mod the count this process's device, before anything
 * else (a rank picks its GPU from its local rank); 0 when there is no
 * device. The calls below are about the chosen device.
 */
int owtcuda_select(int index);

/*
 * The chosen device's name ("NVIDIA H200") and compute capability as major * 10 +
 * minor (90 for sm_90); 0 when there is no device.
 */
int owtcuda_capability(char *name, unsigned long n);

/*
 * The precision of the matrix products. Storage, master weights,
 * optimizer state, LayerNorm, softmax and the loss stay fp32 in every
 * mode; bf16 and fp16 round the operands of every matrix product
 * (cuBLAS's CUBLAS_COMPUTE_32F_FAST_16BF / _16F: tensor cores, fp32
 * accumulation).
 */
enum { OWTCUDA_FP32, OWTCUDA_BF16, OWTCUDA_FP16 };

/*
 * The CUDA backend (struct gpt_backend, gpt.h) on device 0 with products
 * in the given precision; NULL with the reason in why[0..n) when there
 * is no usable device. Every launcher checks its arguments and the
 * launch; a CUDA error exits with status 3 (XSYS) naming the launcher.
 */
const struct gpt_backend *owtcuda_backend(int precision, char *why,
    unsigned long n);

/* The most device memory this process has had allocated, in bytes. */
size_t owtcuda_peak_bytes(void);

/*
 * Free the backend's scratch and cuBLAS handle and reset the device, so
 * that a leak check sees only the caller's own allocations.
 */
void owtcuda_shutdown(void);

/*
 * What lib/comm/comm.c needs to run NCCL under the backend (struct
 * comm_device, comm.h): its stream, an add and a copy on it, memory.
 */
struct comm_device;
const struct comm_device *owtcuda_comm_device(void);

/* Wait for the device to finish (for timing). */
void owtcuda_sync(void);

#ifdef __cplusplus
}
#endif

#endif
