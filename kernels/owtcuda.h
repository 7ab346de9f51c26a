/* owtcuda.h - the CUDA side of owt, as plain C: no CUDA type crosses it */
#ifndef OWT_CUDA_H
#define OWT_CUDA_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The number of usable CUDA devices: 0 when there is no driver, no device,
 * or the runtime fails (the reason, if any, is written to why[0..n)).
 */
int owtcuda_device_count(char *why, unsigned long n);

#ifdef __cplusplus
}
#endif

#endif
