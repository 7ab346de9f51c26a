/* comm-test - lib/comm/comm.c's collectives, run by t/0006-comm.t alone and under mpirun */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/comm.h"
#include "core/util.h"

#include "rank.h"

/*
 * comm-test env              the launcher comm_launch sees
 * comm-test init             the world; whether MPI is in this process
 * comm-test nccl             NCCL under a world of one ($OWT_COMM=nccl)
 * comm-test nccl-check       check under NCCL ($OWT_NCCL: t/mpi/fake-nccl.c),
 *                            after a group made before NCCL came
 * comm-test check [segment]  every collective against sums made here
 * comm-test hang RANK MIN    RANK stops answering; timeout MIN minutes
 * comm-test kill RANK        RANK dies by SIGKILL inside a collective
 * comm-test bench N REPS     seconds per ordered sum of N floats
 * Each rank computes every rank's data (a function of rank and index), so
 * it knows what every collective must give. In check, rank 0 prints
 * "ok NAME" or "FAIL NAME" for each check, failed on any rank; a rank
 * that fails says why on stderr.
 */

/* Rank q's element i: floats of both signs over 20 binary orders. */
static float
val(int q, size_t i, int salt)
{
	uint64_t h = owt_mix64((uint64_t)q << 40 ^ (uint64_t)i << 8 ^
	    (uint64_t)salt);

	return ldexpf((float)(h >> 40) / (float)(1 << 24) - 0.5f,
	    (int)(h % 21) - 10);
}

/* The ordered sum of the members' values: ((x0 + x1) + x2) + ... */
static float
want_sum(const int *ranks, int n, size_t i, int salt)
{
	float s = val(ranks[0], i, salt);

	for (int k = 1; k < n; k++)
		s += val(ranks[k], i, salt);
	return s;
}

#define MAXCHECK 32
static const char *names[MAXCHECK];
static double failed[MAXCHECK];
static int nchecks;

static void
check(const char *name, int ok)
{
	if (!ok)
		fprintf(stderr, "rank %d: %s: failed\n", world->world_rank,
		    name);
	names[nchecks] = name;
	failed[nchecks++] = !ok;
}

/* Sum over group g of every member's values; compare with want_sum. */
static int
sum_ok(struct comm *g, size_t n, int salt)
{
	float *x = xmalloc(n * sizeof *x);
	int ok = 1;

	for (size_t i = 0; i < n; i++)
		x[i] = val(g->ranks[g->rank], i, salt);
	if (comm_sum_ordered(g, x, n, "test", err, sizeof err, &code) == -1)
		rank_fail();
	for (size_t i = 0; i < n && ok; i++) {
		float w = want_sum(g->ranks, g->size, i, salt);

		if (memcmp(&x[i], &w, sizeof w) != 0) {
			fprintf(stderr, "rank %d: element %zu: %a, want %a\n",
			    world->world_rank, i, x[i], w);
			ok = 0;
		}
	}
	free(x);
	return ok;
}

static void
do_check(size_t segment)
{
	int d = world->size, me = world->rank, *ranks;
	size_t n = 4099, *off, i;
	float *x;
	unsigned char *bytes;
	double v[3];
	int ok, diff;
	struct comm *g;

	if (segment > 0)
		world->segment = segment;
	ranks = xmalloc((size_t)d * sizeof *ranks);
	for (int q = 0; q < d; q++)
		ranks[q] = q;
	check("ordered sum", sum_ok(world, n, 1));
	check("ordered sum of 5", sum_ok(world, 5, 2));

	/* The test can fail: another association gives other bits. */
	for (diff = 0, i = 0; d >= 3 && i < n; i++) {
		float a = val(0, i, 1) + (val(1, i, 1) + val(2, i, 1));
		float b = (val(0, i, 1) + val(1, i, 1)) + val(2, i, 1);

		diff += a != b;
	}
	check("association changes bits", d < 3 || diff > 0);

	/* Reduce-scatter: uneven parts, rank 1's empty. */
	off = xmalloc(((size_t)d + 1) * sizeof *off);
	off[0] = 5;
	for (int q = 0; q < d; q++)
		off[q + 1] = off[q] + (q == 1 ? 0 : (size_t)(37 * q + 11));
	n = off[d] + 3;
	x = xmalloc(n * sizeof *x);
	for (i = 0; i < n; i++)
		x[i] = val(me, i, 3);
	if (comm_reduce_scatter_ordered(world, x, off, "test", err,
	    sizeof err, &code) == -1)
		rank_fail();
	for (ok = 1, i = 0; i < n; i++) {
		float w = i >= off[me] && i < off[me + 1] ?
		    want_sum(ranks, d, i, 3) : val(me, i, 3);

		ok &= memcmp(&x[i], &w, sizeof w) == 0;
	}
	check("reduce-scatter", ok);

	/* All-gather of the same uneven parts, in place. */
	for (i = 0; i < n; i++)
		x[i] = i >= off[me] && i < off[me + 1] ? val(me, i, 4) : -1;
	if (comm_allgather(world, x, off, "test", err, sizeof err, &code) == -1)
		rank_fail();
	for (ok = 1, i = 0; i < n; i++) {
		int q = 0;

		while (q < d && !(i >= off[q] && i < off[q + 1]))
			q++;
		ok &= x[i] == (q < d ? val(q, i, 4) : -1);
	}
	check("all-gather", ok);
	free(x);

	/* Broadcast from the last rank. */
	bytes = xmalloc(1000);
	for (i = 0; i < 1000; i++)
		bytes[i] = me == d - 1 ? (unsigned char)(i * 7) : 0;
	if (comm_bcast(world, bytes, 1000, d - 1, "test", err, sizeof err,
	    &code) == -1)
		rank_fail();
	for (ok = 1, i = 0; i < 1000; i++)
		ok &= bytes[i] == (unsigned char)(i * 7);
	check("broadcast", ok);
	free(bytes);

	/*
	 * A pipeline: rank 0 sends three messages, the last rank receives
	 * three, the ones between receive and send in separate calls
	 * (twice as many calls). Message k from rank q is q + k + 1 floats.
	 */
	ok = 1;
	for (int k = 0; k < 3; k++) {
		float in[64], out[64];
		size_t nin = (size_t)me + (size_t)k, nout = (size_t)me + k + 1;

		for (i = 0; i < nout; i++)
			out[i] = val(me, i, 10 + k);
		if (me > 0 && comm_sendrecv(world, NULL, 0, -1, in,
		    nin * sizeof *in, me - 1, "test", err, sizeof err,
		    &code) == -1)
			rank_fail();
		if (me < d - 1 && comm_sendrecv(world, out, nout * sizeof *out,
		    me + 1, NULL, 0, -1, "test", err, sizeof err, &code) == -1)
			rank_fail();
		for (i = 0; me > 0 && i < nin; i++)
			ok &= in[i] == val(me - 1, i, 10 + k);
	}
	check("pipeline send and receive", ok);

	/* A ring: every rank sends and receives in one call. */
	{
		double out = me, in = -1;

		if (comm_sendrecv(world, &out, sizeof out, (me + 1) % d, &in,
		    sizeof in, (me + d - 1) % d, "ring", err, sizeof err,
		    &code) == -1)
			rank_fail();
		check("ring send and receive", in == (me + d - 1) % d);
	}

	if (comm_barrier(world, "test", err, sizeof err, &code) == -1)
		rank_fail();
	check("barrier", 1);

	/* Control all-reduce: ordered in double, max, min. */
	v[0] = val(me, 0, 5);
	v[1] = (double)val(me, 1, 5) * 1e-300;
	v[2] = -me;
	if (comm_ctl_allreduce(world, v, 3, COMM_SUM, "test", err, sizeof err,
	    &code) == -1)
		rank_fail();
	{
		double w0 = val(0, 0, 5), w1 = (double)val(0, 1, 5) * 1e-300,
		    w2 = 0;

		for (int q = 1; q < d; q++) {
			w0 += val(q, 0, 5);
			w1 += (double)val(q, 1, 5) * 1e-300;
			w2 += -q;
		}
		check("control sum", memcmp(&v[0], &w0, sizeof w0) == 0 &&
		    memcmp(&v[1], &w1, sizeof w1) == 0 && v[2] == w2);
	}
	v[0] = me;
	v[1] = -me;
	if (comm_ctl_allreduce(world, v, 2, COMM_MAX, "test", err, sizeof err,
	    &code) == -1)
		rank_fail();
	ok = v[0] == d - 1 && v[1] == 0;
	v[0] = me;
	if (comm_ctl_allreduce(world, v, 1, COMM_MIN, "test", err, sizeof err,
	    &code) == -1)
		rank_fail();
	check("control max and min", ok && v[0] == 0);

	/*
	 * Groups, made on every rank in the same order: the two halves
	 * (consecutive ranks, as tensor-parallel groups), the ranks of one
	 * parity (strided, as data-parallel ones), and the world in
	 * reverse, whose sum runs from the last rank down.
	 */
	{
		int h = (d + 1) / 2, lo = me < h ? 0 : h, hi = me < h ? h : d;
		int par[8], np = 0, rev[8];

		for (int q = 0; q < hi - lo; q++)
			ranks[q] = lo + q;
		if (comm_group(world, ranks, hi - lo, &g, err, sizeof err,
		    &code) == -1)
			rank_fail();
		check("half group member", g != NULL && g->size == hi - lo &&
		    g->rank == me - lo);
		check("half group sum", sum_ok(g, 1000, 6));
		comm_group_free(g);
		for (int q = me % 2; q < d; q += 2)
			par[np++] = q;
		if (comm_group(world, par, np, &g, err, sizeof err, &code) == -1)
			rank_fail();
		check("parity group sum", g != NULL && sum_ok(g, 1000, 7));
		comm_group_free(g);
		for (int q = 0; q < d; q++)
			rev[q] = d - 1 - q;
		if (comm_group(world, rev, d, &g, err, sizeof err, &code) == -1)
			rank_fail();
		check("reversed group sum", g != NULL && g->rank == d - 1 - me &&
		    sum_ok(g, 1000, 8));
		comm_group_free(g);
		ranks[0] = 0;
		if (comm_group(world, ranks, 1, &g, err, sizeof err, &code) == -1)
			rank_fail();
		check("group of rank 0", (me == 0) == (g != NULL) &&
		    (g == NULL || sum_ok(g, 10, 9)));
		comm_group_free(g);
	}

	/* The world still agrees after the groups. */
	check("ordered sum after groups", sum_ok(world, 300, 11));
	free(ranks);
	free(off);

	if (comm_ctl_allreduce(world, failed, (size_t)nchecks, COMM_MAX,
	    "results", err, sizeof err, &code) == -1)
		rank_fail();
	for (int k = 0; me == 0 && k < nchecks; k++)
		printf("%s %s\n", failed[k] ? "FAIL" : "ok", names[k]);
}

/* Whether a library of MPI is mapped into this process. */
static int
mpi_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = 0;

	if (f == NULL)
		owt_die_errno(XSYS, "cannot open '/proc/self/maps'");
	while (fgets(line, sizeof line, f) != NULL)
		if (strstr(line, "libmpi") || strstr(line, "comm-mpi") ||
		    strstr(line, "libopen-pal"))
			found = 1;
	fclose(f);
	return found;
}

static void
bench(size_t n, int reps)
{
	float *x = xmalloc(n * sizeof *x);
	double t = 0, v = 1;
	int r;

	for (size_t i = 0; i < n; i++)
		x[i] = val(world->rank, i, 1);
	for (r = -1; r < reps; r++) {
		if (r == 0)
			t = owt_now();
		if (comm_sum_ordered(world, x, n, "bench", err, sizeof err,
		    &code) == -1)
			rank_fail();
	}
	t = owt_now() - t;
	if (world->rank == 0)
		printf("ordered sum of %zu floats over %d ranks: %.3f ms "
		    "(%.2f GB/s of buffer)\n", n, world->size, t / reps * 1e3,
		    (double)n * 4 * reps / t / 1e9);
	for (r = -1; r < reps * 10; r++) {
		if (r == 0)
			t = owt_now();
		if (comm_ctl_allreduce(world, &v, 1, COMM_SUM, "bench", err,
		    sizeof err, &code) == -1)
			rank_fail();
	}
	t = owt_now() - t;
	if (world->rank == 0)
		printf("control all-reduce of 1 double over %d ranks: %.1f us\n",
		    world->size, t / (reps * 10) * 1e6);
	free(x);
}

/*
 * NCCL under a world of one with host memory standing in for a GPU's: it
 * sends nothing (one rank), so this checks loading libnccl.so.2 and
 * starting a communicator, which needs a GPU.
 */
static int
host_query(void *stream)
{
	return 1;
}

static void
host_add(float *dst, const float *src, size_t n, void *stream)
{
	for (size_t i = 0; i < n; i++)
		dst[i] += src[i];
}

static void
host_copy(void *dst, const void *src, size_t size, void *stream)
{
	memcpy(dst, src, size);
}

static void *
host_alloc(size_t size)
{
	return calloc(1, size);
}

/*
 * Every buffer is "device" memory, so data goes where NCCL would take it;
 * with $COMM_TEST_HOST none is, so that a send/receive goes over MPI.
 */
static int
host_is_device(const void *p)
{
	return getenv("COMM_TEST_HOST") == NULL;
}

static const struct comm_device host_device = {
	NULL, host_query, host_add, host_copy, host_alloc, free,
	host_is_device
};

/*
 * NCCL put under the world after a group was made (as gpt-train does):
 * the group joins too and sums over NCCL; then every check.
 */
static void
nccl_check(void)
{
	int d = world->size, *rev = xmalloc((size_t)d * sizeof *rev);
	struct comm *g;

	for (int q = 0; q < d; q++)
		rev[q] = d - 1 - q;
	if (comm_group(world, rev, d, &g, err, sizeof err, &code) == -1)
		rank_fail();
	free(rev);
	if (comm_device_attach(world, &host_device, err, sizeof err,
	    &code) == -1)
		rank_fail();
	check("collectives on nccl", strcmp(world->impl, "nccl") == 0 &&
	    strcmp(g->impl, "nccl") == 0);
	check("group made before nccl", sum_ok(g, 500, 12));
	comm_group_free(g);
	do_check(0);
}

int
main(int argc, char **argv)
{
	struct comm_launch l;
	const char *mode = argc > 1 ? argv[1] : "";
	double minutes = 10;

	owt_setprog(argv[0]);
	if (strcmp(mode, "env") == 0) {
		if (comm_launch(&l, err, sizeof err, &code) == -1)
			rank_fail();
		if (l.launcher == NULL)
			printf("alone\n");
		else if (l.size < 0)
			printf("%s rank %d of an unknown size\n", l.launcher,
			    l.rank);
		else
			printf("%s rank %d of %d\n", l.launcher, l.rank, l.size);
		return 0;
	}
	if (strcmp(mode, "hang") == 0 && argc == 4)
		minutes = atof(argv[3]);
	if (comm_init(&world, minutes * 60, err, sizeof err, &code) == -1)
		rank_fail();
	if (strcmp(mode, "init") == 0) {
		printf("%s rank %d of %d, %s, local %d of %d, mpi %s\n",
		    world->impl, world->rank, world->size,
		    world->launcher ? world->launcher : "alone",
		    world->local_rank, world->local_size,
		    mpi_mapped() ? "mapped" : "not mapped");
	} else if (strcmp(mode, "nccl") == 0) {
		if (comm_device_attach(world, &host_device, err, sizeof err,
		    &code) == -1)
			rank_fail();
		printf("%s rank %d of %d\n", world->impl, world->rank,
		    world->size);
	} else if (strcmp(mode, "nccl-check") == 0) {
		nccl_check();
	} else if (strcmp(mode, "check") == 0) {
		do_check(argc > 2 ? strtoul(argv[2], NULL, 10) : 0);
	} else if (strcmp(mode, "hang") == 0 && argc == 4) {
		if (world->rank == atoi(argv[2]))
			sleep(60);
		sum_ok(world, 100, 1);
	} else if (strcmp(mode, "kill") == 0 && argc == 3) {
		if (world->rank == atoi(argv[2]))
			raise(SIGKILL);
		sum_ok(world, 100, 1);
	} else if (strcmp(mode, "bench") == 0 && argc == 4) {
		bench(strtoul(argv[2], NULL, 10), atoi(argv[3]));
	} else {
		fprintf(stderr, "usage: comm-test env | init | nccl | "
		    "nccl-check | check [segment] | hang rank minutes | kill rank | "
		    "bench n reps\n");
		return XUSAGE;
	}
	rank_finish();
	for (int k = 0; k < nchecks; k++)
		if (failed[k])
			return 1;
	return 0;
}
