/* gpt_device.c - choosing the backend: --device auto|cpu|cuda, --fp32|--bf16|--fp16 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/blas.h"
#include "comm/comm.h"
#include "model/gpt_device.h"
#include "core/plugin.h"
#include "core/util.h"

#ifdef OWT_CUDA
#include "owtcuda.h"

/* The CUDA plugin's table once gpt_device_cuda has opened it. */
static const struct owtcuda *cuda;

static void
cuda_die(const char *msg)
{
	owt_die(XSYS, "%s", msg);
}

const struct owtcuda *
gpt_device_cuda(char *err, size_t errsize, int *code)
{
	static struct owtcuda_host host = { OWTCUDA_ABI, "", cuda_die };
	static char failed[OWT_ERRSIZE];
	char path[4200];
	owtcuda_plugin_fn *get;
	void *h;

	if (cuda != NULL)
		return cuda;
	if (failed[0] == '\0') {
		plugin_path("gpt-cuda.so", "OWT_CUDA_PLUGIN", path, sizeof path);
		/*
		 * NODELETE: the CUDA runtime and the profile register exit
		 * handlers, which must outlive any handle.
		 */
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
		host.prog = owt_prog;
		if (h == NULL)
			snprintf(failed, sizeof failed, "%s", dlerror());
		else if ((get = (owtcuda_plugin_fn *)dlsym(h,
		    "owtcuda_plugin")) == NULL || (cuda = get(&host)) == NULL)
			snprintf(failed, sizeof failed, "'%.800s' is not this "
			    "build's CUDA plugin (rebuild owt)", path);
	}
	if (cuda == NULL)
		owt_fail(err, errsize, code, XSYS, "%s", failed);
	return cuda;
}
#else
const struct owtcuda *
gpt_device_cuda(char *err, size_t errsize, int *code)
{
	owt_fail(err, errsize, code, XUSAGE, "no CUDA backend in this build "
	    "(rebuild with nvcc: make CUDA=1)");
	return NULL;
}
#endif

const char *
gpt_device_prec_name(int prec)
{
	return prec == GPT_BF16 ? "bf16" : prec == GPT_FP16 ? "fp16" : "fp32";
}

const char *
gpt_device_desc(struct gpt_device *d, int workers)
{
	if (d->be == &gpt_cpu)
		snprintf(d->desc, sizeof d->desc, "cpu backend, %d threads, %s",
		    workers, blas_name());
	return d->desc;
}

size_t
gpt_device_peak_bytes(const struct gpt_device *d)
{
#ifdef OWT_CUDA
	if (d->be != NULL && d->be != &gpt_cpu && cuda != NULL)
		return cuda->peak_bytes();
#endif
	(void)d;
	return 0;
}

static int device_index;

void
gpt_device_use(int local_rank)
{
	device_index = local_rank > 0 ? local_rank : 0;
}

int
gpt_device_comm(const struct gpt_device *d, struct comm *world, char *err,
    size_t errsize, int *code)
{
	if (d->be == NULL || d->be == &gpt_cpu)
		return 0;
#ifdef OWT_CUDA
	return comm_device_attach(world, cuda->comm_device(), err, errsize,
	    code);
#else
	(void)world;
	return owt_fail(err, errsize, code, XSYS,
	    "the %s backend has no collectives",
	    d->be->name);
#endif
}

/* A GPU's --fp16 or --bf16 runs in fp32 here, so that its script runs. */
static int
open_cpu(struct gpt_device *d, int prec, int train)
{
	if (prec == GPT_FP16 || prec == GPT_BF16)
		snprintf(d->warn, sizeof d->warn, "--%s: the cpu backend "
		    "computes in fp32%s", gpt_device_prec_name(prec), train ?
		    " only: training in fp32" : ": generating in fp32");
	d->be = &gpt_cpu;
	d->prec = GPT_FP32;
	return 0;
}

#ifdef OWT_CUDA
static int
open_cuda(struct gpt_device *d, int prec, int train, char *err,
    size_t errsize)
{
	char why[256] = "", name[96] = "";
	int cap;

	cuda->select(device_index);
	if ((cap = cuda->capability(name, sizeof name)) == 0) {
		cuda->device_count(why, sizeof why);
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--device cuda: no CUDA device%s%s",
		    why[0] ? ": " : "", why);
	}
	if (prec == GPT_PREC_DEFAULT)
		prec = train && cap >= 80 ? GPT_BF16 : GPT_FP32;
	if (prec == GPT_BF16 && cap < 80) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--bf16: %s (sm_%d) has no bf16 tensor "
		    "cores; use --fp16 or --fp32", name, cap);
	}
	if ((d->be = cuda->backend(prec, why, sizeof why)) == NULL) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--device cuda: %s", why);
	}
	d->prec = prec;
	snprintf(d->desc, sizeof d->desc, "cuda: %s (sm_%d), %s products",
	    name, cap, gpt_device_prec_name(prec));
	return 0;
}
#endif

/*
 * "cpu" opens nothing; "auto" and "cuda" open the CUDA plugin, and with
 * it the CUDA libraries. auto runs on the cpu where the plugin, a
 * library or a device is missing; cuda fails: XSYS naming the file that
 * could not be loaded, XUSAGE for the rest.
 */
static int
device_open(struct gpt_device *d, const char *name, int prec, int train,
    char *err, size_t errsize, int *code)
{
	char why[OWT_ERRSIZE];
	int asked;	/* cuda, not auto */

	memset(d, 0, sizeof *d);
	*code = XUSAGE;
	if (name == NULL && (name = getenv("OWT_DEVICE")) == NULL)
		name = "auto";
	if (strcmp(name, "cpu") == 0)
		return open_cpu(d, prec, train);
	asked = strcmp(name, "cuda") == 0;
	if (!asked && strcmp(name, "auto") != 0) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--device: '%s' is not auto, cpu or cuda",
		    name);
	}
	if (gpt_device_cuda(why, sizeof why, code) == NULL) {
		if (!asked)
			return open_cpu(d, prec, train);
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "--device cuda: %s", why);
	}
#ifdef OWT_CUDA
	if (asked || cuda->device_count(NULL, 0) > 0)
		return open_cuda(d, prec, train, err, errsize);
#endif
	return open_cpu(d, prec, train);
}

int
gpt_device_open(struct gpt_device *d, const char *name, int prec, int train,
    char *err, size_t errsize, int *code)
{
	int c;

	if (device_open(d, name, prec, train, err, errsize, &c) == 0)
		return 0;
	*code = c;
	return -1;
}
