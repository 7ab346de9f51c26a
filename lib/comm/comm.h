/* comm.h - ranks that talk: ordered collectives over MPI, NCCL or a world of one */
#ifndef OWT_COMM_H
#define OWT_COMM_H

#include <stddef.h>

/*
 * A process started by a launcher (mpirun, srun, a PMI launcher) is one
 * rank of a world; comm_init finds out from the launcher's environment.
 * A world of one (no launcher, or a launcher of one process) is "self":
 * nothing is loaded and every collective returns at once. A larger world
 * loads the MPI plugin, comm-mpi.so, with dlopen: programs never link MPI,
 * so a single process pays nothing for it.
 *
 * A struct comm is a group of ranks: the world, or a part of it that
 * comm_group makes (Megatron's tensor-, pipeline-, data-parallel and
 * embedding groups, lib/dist/dist.h). Ranks below are group ranks unless they
 * say "world".
 *
 * Sums are ordered: every element of a sum is ((x0 + x1) + x2) + ... in
 * group rank order, whatever the number of ranks, the message sizes or
 * the library below. A sum over ranks therefore equals the same floats
 * added in the same order by one process, bit for bit, and is identical
 * on every rank. (MPI_Allreduce and ncclAllReduce choose their own
 * association, so they are not used.)
 *
 * Every wait polls with a deadline: a wait that makes no progress for
 * timeout seconds (--distributed-timeout-minutes) fails, naming the ranks
 * that did not answer. Errors: -1 with the message in err and an exit
 * class in *code (XSYS); after one, the world is broken and every later
 * call fails: the caller reports and exits (the launcher then ends the
 * other ranks). Data collectives take backend memory: host memory, or
 * device memory once comm_device_attach has put NCCL under them.
 * Every rank of a group makes the same calls on it in the same order,
 * from one thread (MPI is started for the main thread only).
 */
struct comm_world;

struct comm {
	int rank, size;			/* this rank in the group, group size */
	const int *ranks;		/* the world rank of each group rank */
	int world_rank, world_size;
	int local_rank, local_size;	/* the ranks on this node */
	const char *impl;		/* "self", "mpi" or "nccl" (data collectives) */
	const char *launcher;		/* "mpirun", "srun", "pmi", "pmix"; NULL alone */
	double timeout;			/* seconds without progress before a wait fails */
	/*
	 * Elements of a sum per round: scratch memory is about this much,
	 * whatever n. Tests lower it to cross many rounds.
	 */
	size_t segment;

	struct comm_world *w;		/* private from here on */
	void *dev_group;		/* the NCCL communicator */
	int id;				/* group number: message tags */
	unsigned seq;			/* collectives made on the group */
	unsigned *sent, *recvd;		/* point-to-point messages, per peer */
	int *ranks_own;
};

/* How this process was launched, from the environment only. */
struct comm_launch {
	int size;			/* 1 alone; -1 when only MPI can say */
	int rank;
	const char *launcher;		/* as struct comm's; NULL alone */
};

/*
 * Read the launcher's variables: OMPI_COMM_WORLD_SIZE/_RANK (mpirun,
 * prterun), PMI_SIZE/PMI_RANK (hydra, srun --mpi=pmi2),
 * SLURM_STEP_NUM_TASKS/SLURM_PROCID (srun; with PMIX_RANK it says
 * "pmix"), PMIX_RANK alone (a PMIx launcher: the size comes from MPI).
 */
int comm_launch(struct comm_launch *l, char *err, size_t errsize, int *code);

/*
 * The world. timeout: seconds (> 0). The MPI plugin is $OWT_COMM_PLUGIN,
 * or lib/owt/comm-mpi.so beside the executable's bin/ directory. A
 * launched rank without it fails: the build had no MPI.
 */
int comm_init(struct comm **world, double timeout, char *err, size_t errsize,
    int *code);

/*
 * The group of the world ranks ranks[0..n), in that order; *g is NULL on
 * a rank that is not one of them. Every rank of the world makes the same
 * comm_group calls in the same order, each with its own group's ranks (so
 * that groups are numbered alike everywhere).
 */
int comm_group(struct comm *world, const int *ranks, int n, struct comm **g,
    char *err, size_t errsize, int *code);
void comm_group_free(struct comm *g);

/*
 * The CUDA side of NCCL, from the GPU backend, so that no CUDA type
 * crosses this header. Calls are on the backend's stream.
 */
struct comm_device {
	void *stream;					/* cudaStream_t */
	int (*query)(void *stream);			/* 1 idle, 0 busy, -1 failed */
	void (*add)(float *dst, const float *src, size_t n, void *stream);	/* dst += src */
	void (*copy)(void *dst, const void *src, size_t size, void *stream);
	void *(*alloc)(size_t size);
	void (*free)(void *p);
	int (*is_device)(const void *p);		/* 1: device memory */
};

/*
 * Put NCCL (libnccl.so.2, loaded now) under the data collectives of the
 * world and of its groups, those made before this call and after; a
 * collective over the world (each rank joins its groups in the order
 * they were made). The backend has picked its device from local_rank
 * before. In a world of one it does nothing unless $OWT_COMM is "nccl"
 * (the one-GPU test of the NCCL path). The control all-reduce and the
 * barrier stay on MPI, and so does a comm_sendrecv whose buffers are
 * both host memory (pipeline activations staged on the host, checkpoint
 * pieces); one with a host and a device buffer fails.
 */
int comm_device_attach(struct comm *world, const struct comm_device *dev,
    char *err, size_t errsize, int *code);

/*
 * The collectives. what names the data in messages ("gradients").
 * comm_sum_ordered: buf (n) = the ordered sum of every rank's buf.
 * comm_reduce_scatter_ordered: rank r's part buf[off[r], off[r+1]) of the
 * ordered sum (off: size + 1 ascending offsets); the rest of buf is left
 * as it was. comm_allgather: buf[off[r], off[r+1]) from rank r, in place.
 */
int comm_sum_ordered(struct comm *c, float *buf, size_t n, const char *what,
    char *err, size_t errsize, int *code);
int comm_reduce_scatter_ordered(struct comm *c, float *buf, const size_t *off,
    const char *what, char *err, size_t errsize, int *code);
int comm_allgather(struct comm *c, float *buf, const size_t *off,
    const char *what, char *err, size_t errsize, int *code);
/* size bytes of root's buf to every rank's buf. */
int comm_bcast(struct comm *c, void *buf, size_t size, int root,
    const char *what, char *err, size_t errsize, int *code);
/*
 * Send ssize bytes to rank to and receive rsize bytes from rank from, at
 * once (neither waits for the other: no pipeline deadlock); to or from
 * -1 for none. The sender's and receiver's sizes must agree.
 */
int comm_sendrecv(struct comm *c, const void *sbuf, size_t ssize, int to,
    void *rbuf, size_t rsize, int from, const char *what, char *err,
    size_t errsize, int *code);
int comm_barrier(struct comm *c, const char *what, char *err, size_t errsize,
    int *code);

enum { COMM_SUM, COMM_MAX, COMM_MIN };
/*
 * Host doubles (losses, flags, a few per iteration): v (n) = the sum
 * (ordered), max or min over the ranks, identical on every rank. Always
 * host memory, always MPI.
 */
int comm_ctl_allreduce(struct comm *c, double *v, size_t n, int op,
    const char *what, char *err, size_t errsize, int *code);

/*
 * The end of a successful run: MPI_Finalize, waiting for every rank.
 * After a failure do not call it (it would wait for ranks that are gone):
 * exit, and the launcher ends the rest. Frees the world.
 */
int comm_finish(struct comm *world, char *err, size_t errsize, int *code);

#endif
