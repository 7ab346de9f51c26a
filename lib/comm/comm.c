/* comm.c - ranks that talk: ordered collectives over MPI, NCCL or a world of one */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm/comm.h"
#include "comm/comm_impl.h"
#include "core/plugin.h"
#include "core/util.h"

/*
 * Every collective is built from batches of point-to-point messages, each
 * peer's data sent straight to the rank that needs it: the volume per
 * rank is that of a ring (2(d-1)/d of the buffer for a sum), the sums are
 * done here in rank order, and a wait that stalls knows which peers have
 * not answered. Message tags are the group's number (7 bits) and a
 * counter of its collectives or of the messages between two ranks (7
 * bits): two ranks that disagree about which call they are in wait with
 * unmatched tags until the timeout names them, instead of mixing data.
 */

struct comm_world {
	const struct comm_ops *mpi;	/* host messages; NULL in a world of one */
	const struct comm_ops *dev;	/* data messages: mpi, NCCL or NULL */
	const struct comm_device *device;	/* with NCCL */
	struct comm *world;
	struct comm **groups;		/* this rank's, in the order made */
	size_t ngl, capgl;
	int ngroups;
	int broken;
	void *scratch[2];		/* [0] host, [1] device */
	size_t scratch_size[2];
};

enum { HOST, DATA };

static int
fail(struct comm *c, char *err, size_t errsize, int *code, const char *fmt, ...)
    OWT_PRINTF(5, 6);

static int
fail(struct comm *c, char *err, size_t errsize, int *code, const char *fmt, ...)
{
	va_list ap;

	if (c != NULL)
		c->w->broken = 1;
	va_start(ap, fmt);
	owt_vfail(err, errsize, code, XSYS, 0, fmt, ap);
	va_end(ap);
	return -1;
}

static int
broken(struct comm *c, const char *op, const char *what, char *err,
    size_t errsize, int *code)
{
	if (!c->w->broken)
		return 0;
	return fail(c, err, errsize, code, "%s of '%s': an earlier "
	    "collective failed", op, what);
}

/* A positive decimal environment variable, -1 when unset, -2 when bad. */
static long
env_num(const char *name)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > INT_MAX)
		return -2;
	return v;
}

int
comm_launch(struct comm_launch *l, char *err, size_t errsize, int *code)
{
	static const struct {
		const char *size, *rank, *launcher;
	} env[] = {
		{ "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "mpirun" },
		{ "PMI_SIZE", "PMI_RANK", "pmi" },
		{ "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "srun" },
		{ NULL, "PMIX_RANK", "pmix" },
	};
	size_t i;
	long size, rank;

	l->size = 1;
	l->rank = 0;
	l->launcher = NULL;
	for (i = 0; i < sizeof env / sizeof *env; i++) {
		size = env[i].size ? env_num(env[i].size) : -1;
		rank = env_num(env[i].rank);
		if (size == -1 && (env[i].size != NULL || rank == -1))
			continue;
		l->launcher = env[i].launcher;
		if (i == 2 && getenv("PMIX_RANK") != NULL)
			l->launcher = "pmix";
		if (size == -2 || size == 0 || rank < 0 ||
		    (size > 0 && rank >= size))
			return owt_fail(err, errsize, code, XSYS,
			    "%s=%s and %s=%s: not a rank of a world",
			    env[i].size ? env[i].size : "size",
			    env[i].size && getenv(env[i].size) ?
			    getenv(env[i].size) : "unset", env[i].rank,
			    getenv(env[i].rank) ? getenv(env[i].rank) : "unset");
		l->size = (int)size;
		l->rank = (int)rank;
		return 0;
	}
	return 0;
}

static struct comm *
comm_new(struct comm_world *w, const int *ranks, int n, int me, int id)
{
	struct comm *c = xcalloc(1, sizeof *c);
	int *r = xmalloc((size_t)n * sizeof *r);

	memcpy(r, ranks, (size_t)n * sizeof *r);
	c->ranks = c->ranks_own = r;
	c->rank = me;
	c->size = n;
	c->id = id;
	c->w = w;
	c->sent = xcalloc((size_t)n, sizeof *c->sent);
	c->recvd = xcalloc((size_t)n, sizeof *c->recvd);
	if (w->world != NULL) {
		c->world_rank = w->world->world_rank;
		c->world_size = w->world->world_size;
		c->local_rank = w->world->local_rank;
		c->local_size = w->world->local_size;
		c->impl = w->world->impl;
		c->launcher = w->world->launcher;
		c->timeout = w->world->timeout;
		c->segment = w->world->segment;
	}
	return c;
}

int
comm_init(struct comm **world, double timeout, char *err, size_t errsize,
    int *code)
{
	struct comm_launch l;
	struct comm_world *w;
	struct comm *c;
	const struct comm_ops *ops = NULL;
	comm_mpi_ops_fn *get;
	char path[4200], msg[4400];
	int rank = 0, size = 1, lrank = 0, lsize = 1, *ranks;
	void *h;

	*world = NULL;
	if (comm_launch(&l, err, errsize, code) == -1)
		return -1;
	if (l.size != 1) {
		plugin_path("comm-mpi.so", "OWT_COMM_PLUGIN", path,
		    sizeof path);
		/*
		 * RTLD_GLOBAL: some MPI builds dlopen components that look
		 * for libmpi's symbols in the global scope (Debian's
		 * OpenMPI 4.1 works either way).
		 */
		if ((h = dlopen(path, RTLD_NOW | RTLD_GLOBAL)) == NULL) {
			snprintf(msg, sizeof msg, "%s", dlerror());
			goto nompi;
		}
		get = (comm_mpi_ops_fn *)dlsym(h, "comm_mpi_ops");
		if (get == NULL || (ops = get()) == NULL ||
		    ops->abi != COMM_ABI)
			return owt_fail(err, errsize, code, XSYS, "rank %d "
			    "under %s: '%s' is not this build's MPI plugin "
			    "(rebuild owt)", l.rank, l.launcher, path);
		if (ops->init(&rank, &size, &lrank, &lsize, msg,
		    sizeof msg) == -1)
			return owt_fail(err, errsize, code, XSYS,
			    "rank %d under %s: MPI: %s", l.rank, l.launcher,
			    msg);
		if (l.size > 0 && size != l.size)
			return owt_fail(err, errsize, code, XSYS,
			    "%s started %d ranks but MPI sees a world of %d%s",
			    l.launcher, l.size, size,
			    strcmp(l.launcher, "srun") == 0 ?
			    " (srun needs --mpi=pmix)" : "");
	}
	w = xcalloc(1, sizeof *w);
	w->mpi = w->dev = ops;
	ranks = xmalloc((size_t)size * sizeof *ranks);
	for (int i = 0; i < size; i++)
		ranks[i] = i;
	c = comm_new(w, ranks, size, rank, 0);
	free(ranks);
	c->world_rank = rank;
	c->world_size = size;
	c->local_rank = lrank;
	c->local_size = lsize;
	c->impl = ops ? "mpi" : "self";
	c->launcher = l.launcher;
	c->timeout = timeout > 0 ? timeout : 600;
	c->segment = (size_t)1 << 22;
	w->world = c;
	*world = c;
	return 0;
nompi:
	if (l.size > 0)
		return owt_fail(err, errsize, code, XSYS, "rank %d of %d under "
		    "%s, but this build has no MPI (%s; install "
		    "libopenmpi-dev and rebuild)", l.rank, l.size, l.launcher,
		    msg);
	return owt_fail(err, errsize, code, XSYS, "rank %d under %s, but this "
	    "build has no MPI (%s; install libopenmpi-dev and rebuild)",
	    l.rank, l.launcher, msg);
}

/* A batch of messages under construction. */
struct batch {
	struct comm_msg *m;
	int n;
	size_t cap;
	int tag;		/* of the messages added next */
};

/* A message to or from group rank peer, in parts of at most COMM_MSG_MAX. */
static void
batch_add(struct batch *b, struct comm *c, const struct comm_ops *ops,
    const void *buf, size_t size, int peer, int send)
{
	size_t part;

	do {
		part = size < COMM_MSG_MAX ? size : COMM_MSG_MAX;
		b->m = xgrow(b->m, &b->cap, (size_t)b->n + 1, sizeof *b->m);
		b->m[b->n].buf = (void *)buf;
		b->m[b->n].size = part;
		b->m[b->n].peer = ops == c->w->mpi ? c->ranks[peer] : peer;
		b->m[b->n].send = send;
		b->m[b->n].tag = b->tag;
		b->m[b->n].done = 0;
		b->n++;
		buf = (const char *)buf + part;
		size -= part;
	} while (size > 0);
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* "rank 3" or "ranks 1, 3": the world ranks of the unfinished messages. */
static void
missing(struct comm *c, const struct comm_ops *ops, const struct batch *b,
    char *s, size_t size)
{
	int *r = xmalloc((size_t)b->n * sizeof *r), n = 0, k, i;
	size_t len;

	for (i = 0; i < b->n; i++)
		if (!b->m[i].done)
			r[n++] = ops == c->w->mpi ? b->m[i].peer :
			    c->ranks[b->m[i].peer];
	qsort(r, (size_t)n, sizeof *r, cmp_int);
	for (k = 0, i = 0; i < n; i++)		/* a peer once, however many messages */
		if (i == 0 || r[i] != r[k - 1])
			r[k++] = r[i];
	len = (size_t)snprintf(s, size, "rank%s", k > 1 ? "s" : "");
	for (i = 0; i < k && len < size; i++)
		len += (size_t)snprintf(s + len, size - len, "%s %d",
		    i ? "," : "", r[i]);
	free(r);
}

/*
 * Post the batch and wait for it. MPI moves a large message in fragments
 * only while it is called, so the wait polls without sleeping (yielding
 * the processor to ranks that share it, as OpenMPI does when
 * oversubscribed) for as long as the data left could take to move at a
 * slow 200 MB/s, plus 50 ms; then it sleeps from 20 us up to 1 ms between
 * polls, so that a rank waiting for a slow one leaves the cores to it. A
 * message finished starts over. A wait with no message finished for
 * c->timeout seconds fails.
 */
static int
xfer(struct comm *c, int path, struct batch *b, const char *op,
    const char *what, char *err, size_t errsize, int *code)
{
	const struct comm_ops *ops = path == HOST ? c->w->mpi : c->w->dev;
	struct timespec ts = { 0, 0 };
	char msg[512], who[256];
	double last, now, spin = 0;
	void *h;
	int r, i, done = -1, n;
	long ns = 20000;

	if (b->n == 0)
		return 0;
	h = ops->start(ops == c->w->mpi ? NULL : c->dev_group, b->m, b->n,
	    msg, sizeof msg);
	if (h == NULL)
		return fail(c, err, errsize, code, "%s of '%s': %s", op, what,
		    msg);
	last = owt_now();
	for (;;) {
		if ((r = ops->test(h, b->m, b->n, msg, sizeof msg)) == 1)
			return 0;
		if (r == -1)
			return fail(c, err, errsize, code, "%s of '%s': %s", op,
			    what, msg);
		for (n = 0, i = 0; i < b->n; i++)
			n += b->m[i].done;
		now = owt_now();
		if (n > done) {
			for (spin = 0.05, i = 0; i < b->n; i++)
				spin += b->m[i].done ? 0 : b->m[i].size / 2e8;
			done = n;
			last = now;
			ns = 20000;
		} else if (now - last > c->timeout) {
			/*
			 * NCCL finishes a batch as a whole: there every
			 * peer of the batch is named.
			 */
			missing(c, ops, b, who, sizeof who);
			if (ops != c->w->mpi) {
				comm_nccl_abort(c->dev_group);
				c->dev_group = NULL;
			}
			return fail(c, err, errsize, code, "%s of '%s': no answer "
			    "from %s in %g s (dead or hung)", op, what, who,
			    c->timeout);
		}
		if (now - last < spin) {
			sched_yield();
			continue;
		}
		ts.tv_nsec = ns;
		nanosleep(&ts, NULL);
		if (ns < 1000000)
			ns *= 2;
	}
}

/* The tag of the group's next collective. */
static int
tag_next(struct comm *c)
{
	return c->id << 8 | (int)(c->seq++ & 0x7f);
}

typedef void addfn(void *dst, const void *src, size_t n);

static void
add_f32(void *dst, const void *src, size_t n)
{
	float *d = dst;
	const float *s = src;

	for (size_t i = 0; i < n; i++)
		d[i] += s[i];
}

static void
add_f64(void *dst, const void *src, size_t n)
{
	double *d = dst;
	const double *s = src;

	for (size_t i = 0; i < n; i++)
		d[i] += s[i];
}

static void
max_f64(void *dst, const void *src, size_t n)
{
	double *d = dst;
	const double *s = src;

	for (size_t i = 0; i < n; i++)
		if (s[i] > d[i])
			d[i] = s[i];
}

static void
min_f64(void *dst, const void *src, size_t n)
{
	double *d = dst;
	const double *s = src;

	for (size_t i = 0; i < n; i++)
		if (s[i] < d[i])
			d[i] = s[i];
}

/* Host memory, or device memory under NCCL. */
static int
on_device(struct comm *c, int path)
{
	return path == DATA && c->w->dev != NULL && c->w->dev != c->w->mpi;
}

static void
data_add(struct comm *c, int path, addfn *add, void *dst, const void *src,
    size_t n)
{
	if (on_device(c, path))
		c->w->device->add(dst, src, n, c->w->device->stream);
	else
		add(dst, src, n);
}

static void
data_copy(struct comm *c, int path, void *dst, const void *src, size_t size)
{
	if (size == 0 || dst == src)
		return;
	if (on_device(c, path))
		c->w->device->copy(dst, src, size, c->w->device->stream);
	else
		memcpy(dst, src, size);
}

static void *
scratch(struct comm *c, int path, size_t size)
{
	struct comm_world *w = c->w;
	int d = on_device(c, path);

	if (w->scratch_size[d] < size) {
		if (d) {
			w->device->free(w->scratch[d]);
			w->scratch[d] = w->device->alloc(size);
			if (w->scratch[d] == NULL)
				return NULL;
		} else {
			free(w->scratch[d]);
			w->scratch[d] = xmalloc(size);
		}
		w->scratch_size[d] = size;
	}
	return w->scratch[d];
}

static int
check_off(struct comm *c, const size_t *off, const char *op, const char *what,
    char *err, size_t errsize, int *code)
{
	for (int q = 0; q < c->size; q++)
		if (off[q + 1] < off[q])
			return fail(c, err, errsize, code, "%s of '%s': offsets "
			    "not ascending", op, what);
	return 0;
}

/*
 * Rank r's part [off[r], off[r+1]) of the ordered reduction of every
 * rank's buf (elements of es bytes), in rounds of at most c->segment / d
 * elements of each part: rank q sends its copy of part r to rank r, which
 * adds the d copies in rank order, from rank 0's on.
 */
static int
reduce_scatter(struct comm *c, int path, char *buf, const size_t *off,
    size_t es, addfn *add, const char *op, const char *what, char *err,
    size_t errsize, int *code)
{
	struct batch b = { NULL, 0, 0, 0 };
	size_t chunk, maxlen = 0, my, j, rounds, k, slot;
	int d = c->size, me = c->rank, q, rc = 0;
	char *s, *acc, *x;

	for (q = 0; q < d; q++)
		if (off[q + 1] - off[q] > maxlen)
			maxlen = off[q + 1] - off[q];
	chunk = c->segment / (size_t)d;
	if (chunk < 16)
		chunk = 16;
	my = off[me + 1] - off[me];
	slot = my < chunk ? my : chunk;
	s = scratch(c, path, (size_t)(d - 1) * slot * es);
	if (s == NULL && slot > 0)
		return fail(c, err, errsize, code, "%s of '%s': out of device "
		    "memory for %zu bytes", op, what, (size_t)(d - 1) * slot * es);
	rounds = (maxlen + chunk - 1) / chunk;
	for (j = 0; j < rounds && rc == 0; j++) {
		b.n = 0;
		b.tag = tag_next(c);
		k = my > j * chunk ? my - j * chunk : 0;
		if (k > chunk)
			k = chunk;
		for (q = 0; q < d; q++) {
			size_t sq = j * chunk, lq = off[q + 1] - off[q];

			if (q == me)
				continue;
			lq = lq > sq ? lq - sq : 0;
			if (lq > chunk)
				lq = chunk;
			if (lq > 0)
				batch_add(&b, c, path == HOST ? c->w->mpi :
				    c->w->dev, buf + (off[q] + sq) * es, lq * es,
				    q, 1);
			if (k > 0)
				batch_add(&b, c, path == HOST ? c->w->mpi :
				    c->w->dev, s + (size_t)(q - (q > me)) * slot * es,
				    k * es, q, 0);
		}
		rc = xfer(c, path, &b, op, what, err, errsize,
		    code);
		if (rc != 0 || k == 0)
			continue;
		x = buf + (off[me] + j * chunk) * es;
		acc = me == 0 ? x : s;
		for (q = 1; q < d; q++)
			data_add(c, path, add, acc, q == me ? x :
			    s + (size_t)(q - (q > me)) * slot * es, k);
		if (me != 0)
			data_copy(c, path, x, acc, k * es);
	}
	free(b.m);
	return rc;
}

static int
allgather(struct comm *c, int path, char *buf, const size_t *off, size_t es,
    const char *op, const char *what, char *err, size_t errsize, int *code)
{
	const struct comm_ops *ops = path == HOST ? c->w->mpi : c->w->dev;
	struct batch b = { NULL, 0, 0, tag_next(c) };
	size_t my = off[c->rank + 1] - off[c->rank];
	int rc;

	for (int q = 0; q < c->size; q++) {
		if (q == c->rank)
			continue;
		if (my > 0)
			batch_add(&b, c, ops, buf + off[c->rank] * es, my * es,
			    q, 1);
		if (off[q + 1] > off[q])
			batch_add(&b, c, ops, buf + off[q] * es,
			    (off[q + 1] - off[q]) * es, q, 0);
	}
	rc = xfer(c, path, &b, op, what, err, errsize, code);
	free(b.m);
	return rc;
}

/* n elements in d parts, each but the last a multiple of 16 long. */
static size_t *
even_parts(size_t n, int d)
{
	size_t *off = xmalloc(((size_t)d + 1) * sizeof *off);
	size_t part = (n + (size_t)d - 1) / (size_t)d;

	part = (part + 15) / 16 * 16;
	for (int q = 0; q <= d; q++)
		off[q] = (size_t)q * part < n ? (size_t)q * part : n;
	return off;
}

static int
sum_ordered(struct comm *c, int path, void *buf, size_t n, size_t es,
    addfn *add, const char *op, const char *what, char *err, size_t errsize,
    int *code)
{
	size_t *off = even_parts(n, c->size);
	int rc;

	rc = reduce_scatter(c, path, buf, off, es, add, op, what, err,
	    errsize, code);
	if (rc == 0)
		rc = allgather(c, path, buf, off, es, op, what, err, errsize,
		    code);
	free(off);
	return rc;
}

int
comm_sum_ordered(struct comm *c, float *buf, size_t n, const char *what,
    char *err, size_t errsize, int *code)
{
	if (broken(c, "ordered sum", what, err, errsize, code))
		return -1;
	if (c->size == 1 || n == 0)
		return 0;
	return sum_ordered(c, DATA, buf, n, sizeof *buf, add_f32,
	    "ordered sum", what, err, errsize, code);
}

int
comm_reduce_scatter_ordered(struct comm *c, float *buf, const size_t *off,
    const char *what, char *err, size_t errsize, int *code)
{
	const char *op = "reduce-scatter";

	if (broken(c, op, what, err, errsize, code) ||
	    check_off(c, off, op, what, err, errsize, code))
		return -1;
	if (c->size == 1)
		return 0;
	return reduce_scatter(c, DATA, (char *)buf, off, sizeof *buf, add_f32,
	    op, what, err, errsize, code);
}

int
comm_allgather(struct comm *c, float *buf, const size_t *off,
    const char *what, char *err, size_t errsize, int *code)
{
	const char *op = "all-gather";

	if (broken(c, op, what, err, errsize, code) ||
	    check_off(c, off, op, what, err, errsize, code))
		return -1;
	if (c->size == 1)
		return 0;
	return allgather(c, DATA, (char *)buf, off, sizeof *buf, op, what,
	    err, errsize, code);
}

static int
bcast(struct comm *c, int path, void *buf, size_t size, int root,
    const char *what, char *err, size_t errsize, int *code)
{
	const struct comm_ops *ops = path == HOST ? c->w->mpi : c->w->dev;
	struct batch b = { NULL, 0, 0, tag_next(c) };
	int rc;

	if (broken(c, "broadcast", what, err, errsize, code))
		return -1;
	if (root < 0 || root >= c->size)
		return fail(c, err, errsize, code, "broadcast of '%s': no rank "
		    "%d in a group of %d", what, root, c->size);
	if (c->size == 1)
		return 0;
	for (int q = 0; q < c->size; q++)
		if (c->rank == root && q != root)
			batch_add(&b, c, ops, buf, size, q, 1);
	if (c->rank != root)
		batch_add(&b, c, ops, buf, size, root, 0);
	rc = xfer(c, path, &b, "broadcast", what, err, errsize,
	    code);
	free(b.m);
	return rc;
}

int
comm_bcast(struct comm *c, void *buf, size_t size, int root,
    const char *what, char *err, size_t errsize, int *code)
{
	return bcast(c, DATA, buf, size, root, what, err, errsize, code);
}

int
comm_sendrecv(struct comm *c, const void *sbuf, size_t ssize, int to,
    void *rbuf, size_t rsize, int from, const char *what, char *err,
    size_t errsize, int *code)
{
	const char *op = "send/receive";
	struct batch b = { NULL, 0, 0, 0 };
	const struct comm_ops *ops = c->w->dev;
	int rc, path = DATA, host = 0, dev = 0;

	if (broken(c, op, what, err, errsize, code))
		return -1;
	/* Under NCCL, host buffers go over MPI (comm.h). */
	if (on_device(c, DATA)) {
		if (to >= 0 && ssize > 0)
			c->w->device->is_device(sbuf) ? dev++ : host++;
		if (from >= 0 && rsize > 0)
			c->w->device->is_device(rbuf) ? dev++ : host++;
		if (host > 0 && dev > 0)
			return fail(c, err, errsize, code, "%s of '%s': a host "
			    "and a device buffer", op, what);
		if (dev == 0) {
			path = HOST;
			ops = c->w->mpi;
		}
	}
	if (to < -1 || to >= c->size || from < -1 || from >= c->size)
		return fail(c, err, errsize, code, "%s of '%s': no rank %d in "
		    "a group of %d", op, what, to < -1 || to >= c->size ? to :
		    from, c->size);
	if (to == c->rank || from == c->rank) {
		if (to != from || ssize != rsize)
			return fail(c, err, errsize, code, "%s of '%s': a rank "
			    "sends to itself only what it receives from itself",
			    op, what);
		data_copy(c, path, rbuf, sbuf, ssize);
		return 0;
	}
	/*
	 * Point-to-point tags count the messages between the two ranks,
	 * not the group's calls: stages of a pipeline make different
	 * numbers of calls.
	 */
	if (to >= 0) {
		b.tag = c->id << 8 | 0x80 | (int)(c->sent[to]++ & 0x7f);
		batch_add(&b, c, ops, sbuf, ssize, to, 1);
	}
	if (from >= 0) {
		b.tag = c->id << 8 | 0x80 | (int)(c->recvd[from]++ & 0x7f);
		batch_add(&b, c, ops, rbuf, rsize, from, 0);
	}
	rc = xfer(c, path, &b, op, what, err, errsize, code);
	free(b.m);
	return rc;
}

int
comm_barrier(struct comm *c, const char *what, char *err, size_t errsize,
    int *code)
{
	struct batch b = { NULL, 0, 0, tag_next(c) };
	static char none;
	int rc;

	if (broken(c, "barrier", what, err, errsize, code))
		return -1;
	if (c->size == 1)
		return 0;
	for (int q = 0; q < c->size; q++)
		if (q != c->rank) {
			batch_add(&b, c, c->w->mpi, &none, 0, q, 1);
			batch_add(&b, c, c->w->mpi, &none, 0, q, 0);
		}
	rc = xfer(c, HOST, &b, "barrier", what, err, errsize,
	    code);
	free(b.m);
	return rc;
}

int
comm_ctl_allreduce(struct comm *c, double *v, size_t n, int op,
    const char *what, char *err, size_t errsize, int *code)
{
	const char *name = "control all-reduce";
	addfn *f = op == COMM_MAX ? max_f64 : op == COMM_MIN ? min_f64 :
	    add_f64;

	if (broken(c, name, what, err, errsize, code))
		return -1;
	if (c->size == 1 || n == 0)
		return 0;
	return sum_ordered(c, HOST, v, n, sizeof *v, f, name, what, err,
	    errsize, code);
}

/*
 * NCCL's communicator for group c: rank 0 makes the id, MPI carries it to
 * the others (a broadcast on the group's host path), all join.
 */
static int
nccl_join(struct comm *c, char *err, size_t errsize, int *code)
{
	unsigned char id[COMM_NCCL_ID_SIZE];
	char msg[512];

	if (c->rank == 0 && comm_nccl_id(id, msg, sizeof msg) == -1)
		return fail(c, err, errsize, code, "nccl: %s", msg);
	if (c->size > 1 && bcast(c, HOST, id, sizeof id, 0, "nccl id", err,
	    errsize, code) == -1)
		return -1;
	c->dev_group = comm_nccl_group(id, c->size, c->rank, msg, sizeof msg);
	if (c->dev_group == NULL)
		return fail(c, err, errsize, code, "nccl: a group of %d: %s",
		    c->size, msg);
	return 0;
}

int
comm_group(struct comm *world, const int *ranks, int n, struct comm **g,
    char *err, size_t errsize, int *code)
{
	struct comm_world *w = world->w;
	int me = -1, id;

	*g = NULL;
	if (world != w->world)
		return fail(NULL, err, errsize, code, "comm_group: groups are "
		    "made from the world");
	if (w->ngroups >= 127)
		return fail(NULL, err, errsize, code, "comm_group: more than "
		    "127 groups");
	id = ++w->ngroups;
	if (n < 1)
		return fail(NULL, err, errsize, code, "comm_group: no ranks");
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= world->size)
			return fail(NULL, err, errsize, code, "comm_group: no "
			    "rank %d in a world of %d", ranks[i], world->size);
		for (int k = 0; k < i; k++)
			if (ranks[k] == ranks[i])
				return fail(NULL, err, errsize, code,
				    "comm_group: rank %d twice", ranks[i]);
		if (ranks[i] == world->rank)
			me = i;
	}
	if (me < 0)
		return 0;
	*g = comm_new(w, ranks, n, me, id);
	if (w->dev != w->mpi && nccl_join(*g, err, errsize, code) == -1) {
		comm_group_free(*g);
		*g = NULL;
		return -1;
	}
	w->groups = xgrow(w->groups, &w->capgl, w->ngl + 1, sizeof *w->groups);
	w->groups[w->ngl++] = *g;
	return 0;
}

void
comm_group_free(struct comm *g)
{
	if (g == NULL)
		return;
	for (size_t i = 0; i < g->w->ngl; i++)
		if (g->w->groups[i] == g)
			g->w->groups[i] = NULL;
	if (g->dev_group != NULL)
		comm_nccl_free(g->dev_group);
	free(g->ranks_own);
	free(g->sent);
	free(g->recvd);
	free(g);
}

int
comm_device_attach(struct comm *world, const struct comm_device *dev,
    char *err, size_t errsize, int *code)
{
	struct comm_world *w = world->w;
	const char *env = getenv("OWT_COMM");
	char msg[512];

	if (world->size == 1 && (env == NULL || strcmp(env, "nccl") != 0))
		return 0;
	if (w->dev != w->mpi)
		return 0;
	if (comm_nccl_load(dev, msg, sizeof msg) == -1)
		return fail(world, err, errsize, code, "collectives on GPUs "
		    "need NCCL: %s", msg);
	w->device = dev;
	w->dev = &comm_nccl_ops;
	if (nccl_join(world, err, errsize, code) == -1)
		return -1;
	world->impl = "nccl";
	for (size_t i = 0; i < w->ngl; i++) {
		if (w->groups[i] == NULL)
			continue;
		if (nccl_join(w->groups[i], err, errsize, code) == -1)
			return -1;
		w->groups[i]->impl = "nccl";
	}
	return 0;
}

int
comm_finish(struct comm *world, char *err, size_t errsize, int *code)
{
	struct comm_world *w = world->w;
	char msg[512];
	int rc = 0;

	if (world->dev_group != NULL)
		comm_nccl_free(world->dev_group);
	world->dev_group = NULL;
	if (w->scratch[1] != NULL)
		w->device->free(w->scratch[1]);
	free(w->scratch[0]);
	if (w->mpi != NULL && w->mpi->finish(msg, sizeof msg) == -1) {
		owt_fail(err, errsize, code, XSYS, "MPI: %s", msg);
		rc = -1;
	}
	comm_group_free(world);
	free(w->groups);
	free(w);
	return rc;
}
