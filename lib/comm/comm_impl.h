/* comm_impl.h - what comm.c asks of a transport: the MPI plugin (comm_mpi.c) and NCCL (comm_nccl.c) */
#ifndef OWT_COMM_IMPL_H
#define OWT_COMM_IMPL_H

#include <stddef.h>

/*
 * A transport moves batches of point-to-point messages; comm.c builds
 * every collective from them, so that sums keep their order and a wait
 * knows which peer it waits for. No MPI or CUDA type crosses this header:
 * comm_mpi.c is built apart (mpicc) into comm-mpi.so, whose one exported
 * symbol is comm_mpi_ops.
 */
#define COMM_ABI 1

/* The largest message a transport is given; comm.c splits longer ones. */
#define COMM_MSG_MAX ((size_t)1 << 30)

struct comm_msg {
	void *buf;
	size_t size;
	int peer;		/* the peer's rank in the transport's group */
	int send;		/* 1 send, 0 receive */
	int tag;		/* < 32768 */
	int done;		/* set by test */
};

struct comm_ops {
	int abi;		/* COMM_ABI */
	const char *name;
	/*
	 * Start the world: this rank, the size, the ranks on this node.
	 * -1 with err on failure.
	 */
	int (*init)(int *rank, int *size, int *local_rank, int *local_size,
	    char *err, size_t errsize);
	/*
	 * Post a batch of messages in group g (NULL: the world, peers
	 * numbered as world ranks); a handle for test, or NULL with err.
	 */
	void *(*start)(void *g, struct comm_msg *m, int n, char *err,
	    size_t errsize);
	/*
	 * Mark the finished messages done; 1 when the batch is over (the
	 * handle is then freed), 0 while it is not, -1 with err (a
	 * message of the wrong size, a lost peer).
	 */
	int (*test)(void *batch, struct comm_msg *m, int n, char *err,
	    size_t errsize);
	int (*finish)(char *err, size_t errsize);
};

typedef const struct comm_ops *comm_mpi_ops_fn(void);

/*
 * NCCL (comm_nccl.c, in every build). comm_nccl_load loads libnccl.so.2
 * ($OWT_NCCL overrides the name). id is NCCL's 128-byte unique id.
 */
#define COMM_NCCL_ID_SIZE 128
struct comm_device;
int comm_nccl_load(const struct comm_device *dev, char *err, size_t errsize);
int comm_nccl_id(unsigned char *id, char *err, size_t errsize);
/* The communicator of a group: NULL with err. */
void *comm_nccl_group(const unsigned char *id, int size, int rank, char *err,
    size_t errsize);
void comm_nccl_abort(void *g);
void comm_nccl_free(void *g);
extern const struct comm_ops comm_nccl_ops;

#endif
