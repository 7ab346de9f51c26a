/* comm_mpi.c - the MPI transport of lib/comm/comm.c, built apart as the plugin comm-mpi.so */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "comm/comm_impl.h"

/*
 * Built with mpicc -shared; comm.c loads it only in a world of more than
 * one rank, so that no program links MPI. Messages go over a duplicate of
 * MPI_COMM_WORLD that returns errors instead of aborting, to world ranks.
 */

static MPI_Comm world = MPI_COMM_NULL;

struct mpi_batch {
	int n, done;
	MPI_Request *req;
	int *idx;
	MPI_Status *st;
};

static void
mpi_error(int rc, const char *what, char *err, size_t errsize)
{
	char s[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
		len = snprintf(s, sizeof s, "error %d", rc);
	snprintf(err, errsize, "%s: %.*s", what, len, s);
}

static int
mpi_init(int *rank, int *size, int *local_rank, int *local_size, char *err,
    size_t errsize)
{
	MPI_Comm local;
	int rc, provided;

	/* Only the main thread calls MPI; OpenMP threads only compute. */
	rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
	if (rc != MPI_SUCCESS) {
		snprintf(err, errsize, "MPI_Init_thread failed (%d)", rc);
		return -1;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &world)) != MPI_SUCCESS ||
	    (rc = MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN)) !=
	    MPI_SUCCESS ||
	    (rc = MPI_Comm_rank(world, rank)) != MPI_SUCCESS ||
	    (rc = MPI_Comm_size(world, size)) != MPI_SUCCESS ||
	    (rc = MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, *rank,
	    MPI_INFO_NULL, &local)) != MPI_SUCCESS) {
		mpi_error(rc, "start", err, errsize);
		return -1;
	}
	MPI_Comm_rank(local, local_rank);
	MPI_Comm_size(local, local_size);
	MPI_Comm_free(&local);
	return 0;
}

static void
batch_free(struct mpi_batch *b)
{
	free(b->req);
	free(b->idx);
	free(b->st);
	free(b);
}

static void *
mpi_start(void *g, struct comm_msg *m, int n, char *err, size_t errsize)
{
	struct mpi_batch *b = calloc(1, sizeof *b);
	int i, rc;

	(void)g;
	if (b == NULL || (b->req = calloc((size_t)n, sizeof *b->req)) == NULL ||
	    (b->idx = calloc((size_t)n, sizeof *b->idx)) == NULL ||
	    (b->st = calloc((size_t)n, sizeof *b->st)) == NULL) {
		snprintf(err, errsize, "out of memory");
		if (b != NULL)
			batch_free(b);
		return NULL;
	}
	b->n = n;
	/* Receives first: a message finds its buffer waiting. */
	for (i = 0; i < n; i++) {
		m[i].done = 0;
		b->req[i] = MPI_REQUEST_NULL;
		if (m[i].send)
			continue;
		rc = MPI_Irecv(m[i].buf, (int)m[i].size, MPI_BYTE, m[i].peer,
		    m[i].tag, world, &b->req[i]);
		if (rc != MPI_SUCCESS)
			goto bad;
	}
	for (i = 0; i < n; i++) {
		if (!m[i].send)
			continue;
		rc = MPI_Isend(m[i].buf, (int)m[i].size, MPI_BYTE, m[i].peer,
		    m[i].tag, world, &b->req[i]);
		if (rc != MPI_SUCCESS)
			goto bad;
	}
	return b;
bad:
	mpi_error(rc, m[i].send ? "send" : "receive", err, errsize);
	return NULL;
}

static int
mpi_test(void *batch, struct comm_msg *m, int n, char *err, size_t errsize)
{
	struct mpi_batch *b = batch;
	char what[64];
	int out = 0, i, k, rc, count;

	rc = MPI_Testsome(n, b->req, &out, b->idx, b->st);
	if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
		mpi_error(rc, "wait", err, errsize);
		return -1;
	}
	for (k = 0; out != MPI_UNDEFINED && k < out; k++) {
		i = b->idx[k];
		if (rc == MPI_ERR_IN_STATUS && b->st[k].MPI_ERROR != MPI_SUCCESS) {
			snprintf(what, sizeof what, "%s rank %d",
			    m[i].send ? "to" : "from", m[i].peer);
			mpi_error(b->st[k].MPI_ERROR, what, err, errsize);
			return -1;
		}
		if (!m[i].send) {
			MPI_Get_count(&b->st[k], MPI_BYTE, &count);
			if ((size_t)count != m[i].size) {
				snprintf(err, errsize, "%d bytes from rank %d, "
				    "expected %zu (a different call there)",
				    count, m[i].peer, m[i].size);
				return -1;
			}
		}
		m[i].done = 1;
		b->done++;
	}
	if (out == MPI_UNDEFINED || b->done == b->n) {
		batch_free(b);
		return 1;
	}
	return 0;
}

static int
mpi_finish(char *err, size_t errsize)
{
	int rc;

	MPI_Comm_free(&world);
	if ((rc = MPI_Finalize()) != MPI_SUCCESS) {
		mpi_error(rc, "finish", err, errsize);
		return -1;
	}
	return 0;
}

static const struct comm_ops ops = {
	COMM_ABI, "mpi", mpi_init, mpi_start, mpi_test, mpi_finish
};

const struct comm_ops *comm_mpi_ops(void);

const struct comm_ops *
comm_mpi_ops(void)
{
	return &ops;
}
