/* owtcuda.h - the CUDA side of owt, as plain C: no CUDA type crosses it */
#ifndef OWT_CUDA_H
#define OWT_CUDA_H

#include <stddef.h>

#include "model/gpt.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * kernels/ is built into the plugin lib/owt/gpt-cuda.so, the one object
 * that links the CUDA runtime and cuBLAS; the programs link none of it
 * and open the plugin when --device asks for CUDA (lib/model/gpt_device.c), so
 * that one build runs where there is no CUDA library. The plugin's one
 * exported symbol is owtcuda_plugin: given what it needs of the program
 * (struct owtcuda_host), it returns its table of calls (struct owtcuda),
 * or NULL when the host's abi is not its own.
 */
#define OWTCUDA_ABI 1

struct owtcuda_host {
	int abi;		/* OWTCUDA_ABI */
	const char *prog;	/* the program's name, for messages */
	/* Print "prog: msg" and exit with status 3 (XSYS): a CUDA error. */
	void (*die)(const char *msg);
};

/*
 * The precision of the matrix products. Storage, master weights,
 * optimizer state, LayerNorm, softmax and the loss stay fp32 in every
 * mode; bf16 and fp16 round the operands of every matrix product
 * (cuBLAS's CUBLAS_COMPUTE_32F_FAST_16BF / _16F: tensor cores, fp32
 * accumulation).
 */
enum { OWTCUDA_FP32, OWTCUDA_BF16, OWTCUDA_FP16 };

struct comm_device;

struct owtcuda {
	int abi;		/* OWTCUDA_ABI */

	/*
	 * The number of usable CUDA devices: 0 when there is no driver, no
	 * device, or the runtime fails (the reason, if any, is written to
	 * why[0..n)).
	 */
	int (*device_count)(char *why, unsigned long n);

	/*
	 * Make device index mod the count this process's device, before
	 * anything else (a rank picks its GPU from its local rank); 0 when
	 * there is no device. The calls below are about the chosen device.
	 */
	int (*select)(int index);

	/*
	 * The chosen device's name ("NVIDIA H200") and compute capability as
	 * major * 10 + minor (90 for sm_90); 0 when there is no device.
	 */
	int (*capability)(char *name, unsigned long n);

	/*
	 * The CUDA backend (struct gpt_backend, gpt.h) on the chosen device
	 * with products in the given precision; NULL with the reason in
	 * why[0..n) when there is no usable device. Every launcher checks
	 * its arguments and the launch; a CUDA error exits through the
	 * host's die, naming the launcher.
	 */
	const struct gpt_backend *(*backend)(int precision, char *why,
	    unsigned long n);

	/* The most device memory this process has had allocated, in bytes. */
	size_t (*peak_bytes)(void);

	/*
	 * Free the backend's scratch and cuBLAS handle and reset the device,
	 * so that a leak check sees only the caller's own allocations.
	 */
	void (*shutdown)(void);

	/*
	 * What lib/comm/comm.c needs to run NCCL under the backend (struct
	 * comm_device, comm.h): its stream, an add and a copy on it, memory.
	 */
	const struct comm_device *(*comm_device)(void);

	/* Wait for the device to finish (for timing). */
	void (*sync)(void);
};

typedef const struct owtcuda *owtcuda_plugin_fn(const struct owtcuda_host *);
const struct owtcuda *owtcuda_plugin(const struct owtcuda_host *host);

/* Inside the plugin (not exported): device.cu's part of the table. */
int owtcuda_device_count(char *why, unsigned long n);
int owtcuda_select(int index);
int owtcuda_capability(char *name, unsigned long n);

#ifdef __cplusplus
}
#endif

#endif
