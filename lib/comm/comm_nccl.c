/* comm_nccl.c - the NCCL transport of lib/comm/comm.c: libnccl.so.2 loaded at run time */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "comm/comm_impl.h"
#include "core/util.h"

/*
 * Plain C, in every build: NCCL's entry points are declared here from its
 * stable ABI (2.x) and looked up with dlsym, so a build needs neither NCCL
 * nor CUDA, and a CPU run never loads them. Where nccl.h is found the
 * build checks these declarations against it (OWT_NCCL_H). The stream and
 * the device arithmetic come from the GPU backend (struct comm_device).
 */
typedef int nccl_result;		/* ncclResult_t */
typedef struct nccl_comm *nccl_comm;	/* ncclComm_t */
typedef struct {
	char internal[COMM_NCCL_ID_SIZE];
} nccl_id;				/* ncclUniqueId */
enum {
	NCCL_SUCCESS = 0,		/* ncclSuccess */
	NCCL_IN_PROGRESS = 7,		/* ncclInProgress */
	NCCL_UINT8 = 1			/* ncclUint8 */
};

#ifdef OWT_NCCL_H
#include <nccl.h>
_Static_assert(sizeof(ncclUniqueId) == sizeof(nccl_id), "ncclUniqueId");
_Static_assert(NCCL_UNIQUE_ID_BYTES == COMM_NCCL_ID_SIZE, "NCCL_UNIQUE_ID_BYTES");
_Static_assert((int)ncclSuccess == NCCL_SUCCESS, "ncclSuccess");
_Static_assert((int)ncclInProgress == NCCL_IN_PROGRESS, "ncclInProgress");
_Static_assert((int)ncclUint8 == NCCL_UINT8, "ncclUint8");
_Static_assert(sizeof(ncclResult_t) == sizeof(nccl_result), "ncclResult_t");
_Static_assert(sizeof(ncclDataType_t) == sizeof(int), "ncclDataType_t");
_Static_assert(sizeof(ncclComm_t) == sizeof(nccl_comm), "ncclComm_t");
#endif

static struct {
	nccl_result (*get_version)(int *);
	nccl_result (*get_unique_id)(nccl_id *);
	nccl_result (*comm_init_rank)(nccl_comm *, int, nccl_id, int);
	nccl_result (*comm_abort)(nccl_comm);
	nccl_result (*comm_destroy)(nccl_comm);
	nccl_result (*comm_get_async_error)(nccl_comm, nccl_result *);
	nccl_result (*send)(const void *, size_t, int, int, nccl_comm, void *);
	nccl_result (*recv)(void *, size_t, int, int, nccl_comm, void *);
	nccl_result (*group_start)(void);
	nccl_result (*group_end)(void);
	const char *(*get_error_string)(nccl_result);
} nccl;

static const struct comm_device *device;

int
comm_nccl_load(const struct comm_device *dev, char *err, size_t errsize)
{
	static const struct {
		const char *name;
		size_t off;
	} sym[] = {
#define S(name, field) { name, offsetof(__typeof__(nccl), field) }
		S("ncclGetVersion", get_version),
		S("ncclGetUniqueId", get_unique_id),
		S("ncclCommInitRank", comm_init_rank),
		S("ncclCommAbort", comm_abort),
		S("ncclCommDestroy", comm_destroy),
		S("ncclCommGetAsyncError", comm_get_async_error),
		S("ncclSend", send),
		S("ncclRecv", recv),
		S("ncclGroupStart", group_start),
		S("ncclGroupEnd", group_end),
		S("ncclGetErrorString", get_error_string),
#undef S
	};
	const char *lib = getenv("OWT_NCCL");
	void *h, *f;
	int version = 0;

	if (dev == NULL || dev->query == NULL || dev->add == NULL ||
	    dev->copy == NULL || dev->alloc == NULL || dev->free == NULL ||
	    dev->is_device == NULL) {
		return owt_fail(err, errsize, NULL, XSYS,
		    "no GPU backend to run it on");
	}
	device = dev;
	if (nccl.send != NULL)
		return 0;
	if (lib == NULL || *lib == '\0')
		lib = "libnccl.so.2";
	if ((h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		return owt_fail(err, errsize, NULL, XSYS, "%s", dlerror());
	}
	for (size_t i = 0; i < sizeof sym / sizeof *sym; i++) {
		if ((f = dlsym(h, sym[i].name)) == NULL) {
			owt_fail(err, errsize, NULL, XSYS,
			    "'%s': no %s", lib, sym[i].name);
			memset(&nccl, 0, sizeof nccl);
			return -1;
		}
		memcpy((char *)&nccl + sym[i].off, &f, sizeof f);
	}
	if (nccl.get_version(&version) != NCCL_SUCCESS || version < 20700) {
		owt_fail(err, errsize, NULL, XSYS,
		    "'%s' is NCCL %d; 2.7 or later is "
		    "needed", lib, version);
		memset(&nccl, 0, sizeof nccl);
		return -1;
	}
	return 0;
}

static int
nccl_fail(nccl_result r, const char *what, char *err, size_t errsize)
{
	return owt_fail(err, errsize, NULL, XSYS,
	    "%s: %s", what, nccl.get_error_string(r));
}

int
comm_nccl_id(unsigned char *id, char *err, size_t errsize)
{
	nccl_id u;
	nccl_result r;

	if ((r = nccl.get_unique_id(&u)) != NCCL_SUCCESS)
		return nccl_fail(r, "ncclGetUniqueId", err, errsize);
	memcpy(id, u.internal, sizeof u.internal);
	return 0;
}

void *
comm_nccl_group(const unsigned char *id, int size, int rank, char *err,
    size_t errsize)
{
	nccl_comm g = NULL;
	nccl_id u;
	nccl_result r;

	memcpy(u.internal, id, sizeof u.internal);
	if ((r = nccl.comm_init_rank(&g, size, u, rank)) != NCCL_SUCCESS) {
		nccl_fail(r, "ncclCommInitRank", err, errsize);
		return NULL;
	}
	return g;
}

void
comm_nccl_abort(void *g)
{
	if (g != NULL)
		nccl.comm_abort(g);
}

void
comm_nccl_free(void *g)
{
	if (g != NULL)
		nccl.comm_destroy(g);
}

/* The batch is the stream's work: it is over when the stream is idle. */
static void *
nccl_start(void *g, struct comm_msg *m, int n, char *err, size_t errsize)
{
	nccl_result r;
	int i;

	if ((r = nccl.group_start()) != NCCL_SUCCESS) {
		nccl_fail(r, "ncclGroupStart", err, errsize);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		m[i].done = 0;
		r = m[i].send ? nccl.send(m[i].buf, m[i].size, NCCL_UINT8,
		    m[i].peer, g, device->stream) : nccl.recv(m[i].buf,
		    m[i].size, NCCL_UINT8, m[i].peer, g, device->stream);
		if (r != NCCL_SUCCESS)
			break;
	}
	if (i < n) {
		nccl.group_end();
		nccl_fail(r, m[i].send ? "ncclSend" : "ncclRecv", err, errsize);
		return NULL;
	}
	if ((r = nccl.group_end()) != NCCL_SUCCESS) {
		nccl_fail(r, "ncclGroupEnd", err, errsize);
		return NULL;
	}
	return g;
}

static int
nccl_test(void *batch, struct comm_msg *m, int n, char *err, size_t errsize)
{
	nccl_result r, async = NCCL_SUCCESS;
	int q;

	r = nccl.comm_get_async_error(batch, &async);
	if (r != NCCL_SUCCESS)
		return nccl_fail(r, "ncclCommGetAsyncError", err, errsize);
	if (async != NCCL_SUCCESS && async != NCCL_IN_PROGRESS)
		return nccl_fail(async, "nccl", err, errsize);
	if ((q = device->query(device->stream)) == -1) {
		return owt_fail(err, errsize, NULL, XSYS,
		    "the GPU stream failed");
	}
	if (q == 0)
		return 0;
	for (int i = 0; i < n; i++)
		m[i].done = 1;
	return 1;
}

static int
nccl_finish(char *err, size_t errsize)
{
	(void)err;
	(void)errsize;
	return 0;
}

static int
nccl_init(int *rank, int *size, int *local_rank, int *local_size, char *err,
    size_t errsize)
{
	return owt_fail(err, errsize, NULL, XSYS, "NCCL starts from MPI");
}

const struct comm_ops comm_nccl_ops = {
	COMM_ABI, "nccl", nccl_init, nccl_start, nccl_test, nccl_finish
};
