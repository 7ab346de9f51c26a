/* gpt_device.h - the backend a program runs on: --device auto|cpu|cuda and the precision */
#ifndef OWT_GPT_DEVICE_H
#define OWT_GPT_DEVICE_H

#include <stddef.h>

#include "model/gpt.h"

/* The precision of the matrix products (kernels/owtcuda.h has the same order). */
enum { GPT_FP32, GPT_BF16, GPT_FP16, GPT_PREC_DEFAULT };

struct gpt_device {
	const struct gpt_backend *be;
	int prec;		/* GPT_FP32, GPT_BF16 or GPT_FP16 */
	char desc[160];		/* gpt_device_desc's line */
	char warn[160];		/* the fallback to fp32, for the log; or "" */
};

/*
 * Choose the backend for --device name (NULL: $OWT_DEVICE, else "auto")
 * and a precision (GPT_PREC_DEFAULT: bf16 for training on sm_80 and
 * newer, fp32 otherwise). "auto" is cuda when this build has it and a
 * device answers, else cpu. On the cpu backend --fp16 and --bf16 run in
 * fp32, so that a GPU's script runs anywhere, and d->warn says so ("--fp16:
 * the cpu backend computes in fp32 only: training in fp32", or with train
 * 0 "...in fp32: generating in fp32"). "cpu" loads no CUDA library;
 * "auto" runs on the cpu where the plugin, a CUDA library or a device is
 * missing. 0, or -1 with err and *code: XSYS when cuda is asked for and
 * the plugin or a CUDA library cannot be loaded (dlerror's text names
 * it); XUSAGE for the rest (each is what the options asked for and this
 * machine cannot give): an unknown name, a build without CUDA, no
 * device, a precision the device lacks.
 */
int gpt_device_open(struct gpt_device *d, const char *name, int prec,
    int train, char *err, size_t errsize, int *code);

/*
 * The CUDA plugin's table (kernels/owtcuda.h), opened on the first call:
 * lib/owt/gpt-cuda.so as plugin_path finds it ($OWT_CUDA_PLUGIN, beside
 * the executable, installed), which links the CUDA runtime and cuBLAS.
 * NULL with err and *code: XSYS with dlerror's text (the plugin or the
 * CUDA library that is missing), XUSAGE in a build without CUDA. Nothing
 * else in a program loads a CUDA library.
 */
struct owtcuda;
const struct owtcuda *gpt_device_cuda(char *err, size_t errsize, int *code);

/*
 * The GPU gpt_device_open takes: local_rank modulo the node's devices (a
 * rank of a world uses its own). Before gpt_device_open; device 0
 * without it. No effect without CUDA.
 */
void gpt_device_use(int local_rank);

/*
 * Put the world's data collectives on the device: NCCL under a GPU
 * backend (comm_device_attach, comm.h); nothing on the cpu backend. 0,
 * or -1 with err and *code.
 */
struct comm;
int gpt_device_comm(const struct gpt_device *d, struct comm *world, char *err,
    size_t errsize, int *code);

/*
 * The line a program logs: "cpu backend, 2 threads, owt AVX-512 sgemm"
 * (the BLAS of blas.h in use) or the device's desc.
 */
const char *gpt_device_desc(struct gpt_device *d, int workers);

/* The most GPU memory in use so far (cudaMemGetInfo); 0 on the cpu backend. */
size_t gpt_device_peak_bytes(const struct gpt_device *d);

/* The precision's name: "fp32", "bf16", "fp16". */
const char *gpt_device_prec_name(int prec);

#endif
