/* device.cu - finding CUDA devices and what they are */
#include <cstdio>

#include <cuda_runtime.h>

#include "owtcuda.h"

extern "C" int
owtcuda_device_count(char *why, unsigned long n)
{
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);

	if (e != cudaSuccess) {
		if (why != NULL && n > 0)
			snprintf(why, n, "%s", cudaGetErrorString(e));
		cudaGetLastError();
		return 0;
	}
	return count;
}

static int chosen;	/* the device index */

extern "C" int
owtcuda_select(int index)
{
	int count = owtcuda_device_count(NULL, 0);

	if (count == 0)
		return 0;
	chosen = index % count;
	if (cudaSetDevice(chosen) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	return 1;
}

extern "C" int
owtcuda_capability(char *name, unsigned long n)
{
	cudaDeviceProp prop;

	if (owtcuda_device_count(NULL, 0) == 0 ||
	    cudaGetDeviceProperties(&prop, chosen) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	if (name != NULL && n > 0)
		snprintf(name, n, "%s", prop.name);
	return prop.major * 10 + prop.minor;
}
