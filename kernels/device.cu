/* device.cu - finding CUDA devices */
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
