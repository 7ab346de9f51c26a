/* fake-nccl - the NCCL entry points lib/comm/comm_nccl.c uses, over MPI in host memory (t/0008-comm-nccl.t) */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

/*
 * lib/comm/comm.c's NCCL path (joining groups through an id sent over MPI,
 * batches of grouped sends and receives, the adds and copies of struct
 * comm_device) run without a GPU: t/0008 builds this with mpicc and
 * loads it as $OWT_NCCL into comm-test, whose "device" memory is host
 * memory. A batch is over when ncclGroupEnd returns, as a stream would
 * be idle. Not NCCL: no ordering beyond comm.c's (one batch at a time).
 * Its messages use tags above comm-mpi.so's (< 32768) in MPI_COMM_WORLD.
 */
typedef struct {
	char internal[128];
} nccl_id;

struct fake_comm {
	int n, rank;
	int *world;		/* the world rank of each rank */
};

enum { DATA_TAG = 1 << 20, INIT_TAG = 1 << 21 };

struct op {
	void *buf;
	size_t size;
	int peer, send;
};

static struct op *ops;
static int nops, capops, depth;
static unsigned ids;

int
ncclGetVersion(int *v)
{
	*v = 21903;
	return 0;
}

const char *
ncclGetErrorString(int r)
{
	return r == 0 ? "no error" : "fake-nccl error";
}

/* The id names its maker's world rank and a count of its ids. */
int
ncclGetUniqueId(nccl_id *id)
{
	int me, v[2];

	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	memset(id, 0, sizeof *id);
	v[0] = me;
	v[1] = (int)(ids++ & 0xffff);
	memcpy(id->internal, v, sizeof v);
	return 0;
}

int
ncclCommInitRank(struct fake_comm **c, int n, nccl_id id, int rank)
{
	struct fake_comm *f = calloc(1, sizeof *f);
	int v[2], me, pair[2], tag;

	memcpy(v, id.internal, sizeof v);
	tag = INIT_TAG + v[1];
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	f->n = n;
	f->rank = rank;
	f->world = calloc((size_t)n, sizeof *f->world);
	if (rank == 0) {
		f->world[0] = me;
		for (int k = 1; k < n; k++) {
			MPI_Recv(pair, 2, MPI_INT, MPI_ANY_SOURCE, tag,
			    MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			f->world[pair[0]] = pair[1];
		}
		for (int k = 1; k < n; k++)
			MPI_Send(f->world, n, MPI_INT, f->world[k], tag,
			    MPI_COMM_WORLD);
	} else {
		pair[0] = rank;
		pair[1] = me;
		MPI_Send(pair, 2, MPI_INT, v[0], tag, MPI_COMM_WORLD);
		MPI_Recv(f->world, n, MPI_INT, v[0], tag, MPI_COMM_WORLD,
		    MPI_STATUS_IGNORE);
	}
	*c = f;
	return 0;
}

int
ncclCommDestroy(struct fake_comm *c)
{
	free(c->world);
	free(c);
	return 0;
}

int
ncclCommAbort(struct fake_comm *c)
{
	return ncclCommDestroy(c);
}

int
ncclCommGetAsyncError(struct fake_comm *c, int *r)
{
	(void)c;
	*r = 0;
	return 0;
}

int
ncclGroupStart(void)
{
	depth++;
	return 0;
}

static int
post(void *buf, size_t count, int type, int peer, struct fake_comm *c,
    int send)
{
	if (type != 1 || peer < 0 || peer >= c->n || depth == 0)
		return 4;	/* ncclInvalidArgument; comm.c always groups */
	if (nops == capops) {
		capops = capops ? 2 * capops : 16;
		ops = realloc(ops, (size_t)capops * sizeof *ops);
	}
	ops[nops].buf = buf;
	ops[nops].size = count;
	ops[nops].peer = c->world[peer];
	ops[nops].send = send;
	nops++;
	return 0;
}

int
ncclSend(const void *buf, size_t count, int type, int peer,
    struct fake_comm *c, void *stream)
{
	(void)stream;
	return post((void *)buf, count, type, peer, c, 1);
}

int
ncclRecv(void *buf, size_t count, int type, int peer, struct fake_comm *c,
    void *stream)
{
	(void)stream;
	return post(buf, count, type, peer, c, 0);
}

int
ncclGroupEnd(void)
{
	MPI_Request *r;

	if (--depth > 0)
		return 0;
	r = calloc((size_t)nops + 1, sizeof *r);
	for (int i = 0; i < nops; i++)
		if (ops[i].send)
			MPI_Isend(ops[i].buf, (int)ops[i].size, MPI_BYTE,
			    ops[i].peer, DATA_TAG, MPI_COMM_WORLD, &r[i]);
		else
			MPI_Irecv(ops[i].buf, (int)ops[i].size, MPI_BYTE,
			    ops[i].peer, DATA_TAG, MPI_COMM_WORLD, &r[i]);
	MPI_Waitall(nops, r, MPI_STATUSES_IGNORE);
	free(r);
	nops = 0;
	return 0;
}
