/* outfile.c - publishing an output: a temporary beside it, then a rename */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/outfile.h"
#include "core/util.h"

static mode_t umask_now;
static pthread_once_t umask_once = PTHREAD_ONCE_INIT;

static void
read_umask(void)
{
	umask_now = umask(022);
	umask(umask_now);
}

mode_t
outfile_mode(int dir)
{
	pthread_once(&umask_once, read_umask);
	return (dir ? 0777 : 0666) & ~umask_now;
}

/* The temporaries a fatal-signal handler unlinks. */
#define SIG_SLOTS 64
static char *volatile sig_tmp[SIG_SLOTS];

static void
sig_add(char *tmp)
{
	for (int i = 0; i < SIG_SLOTS; i++) {
		char *none = NULL;
		if (__atomic_compare_exchange_n(&sig_tmp[i], &none, tmp, 0,
		    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return;
	}
}

static void
sig_del(char *tmp)
{
	for (int i = 0; i < SIG_SLOTS; i++) {
		char *want = tmp;
		if (__atomic_compare_exchange_n(&sig_tmp[i], &want, NULL, 0,
		    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return;
	}
}

void
outfile_signal_cleanup(void)
{
	for (int i = 0; i < SIG_SLOTS; i++) {
		char *t = __atomic_load_n(&sig_tmp[i], __ATOMIC_SEQ_CST);
		if (t)
			unlink(t);
	}
}

void
outfile_signal_exit(int sig)
{
	outfile_signal_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

int
outfile_write_all(int fd, const void *p, size_t n)
{
	ssize_t k;

	while (n > 0) {
		k = write(fd, p, n < (1u << 30) ? n : (1u << 30));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0) {
			errno = EIO;
			return -1;
		}
		p = (const char *)p + k;
		n -= (size_t)k;
	}
	return 0;
}

/* dirname and basename of path, split at the last '/'. */
static void
split_path(const char *path, char **dir, const char **base)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL) {
		*dir = xstrdup(".");
		*base = path;
	} else if (slash == path) {
		*dir = xstrdup("/");
		*base = slash + 1;
	} else {
		*dir = xstrndup(path, (size_t)(slash - path));
		*base = slash + 1;
	}
}

/*
 * Lock the new temporary, then make sure a sweeper did not remove it in
 * the moment between its creation and the lock: 1 if it is still there.
 */
static int
lock_fresh(int fd, const char *tmp)
{
	struct stat a, b;

	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return 0;
	return fstat(fd, &a) == 0 && stat(tmp, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void
rm_rf(const char *path);

static int
open_tmp(struct outfile *o, const char *path, int dir, char *err,
    size_t errsize, int *code)
{
	char *d;
	const char *base;
	size_t n;

	memset(o, 0, sizeof *o);
	o->fd = -1;
	o->dir = dir;
	if (*path == '\0' || path[strlen(path) - 1] == '/')
		return owt_fail(err, errsize, code, XUSAGE,
		    "'%s' is not a file name", path);
	split_path(path, &d, &base);
	n = strlen(path) + 16;
	o->tmp = xmalloc(n);
	for (int tries = 0; tries < 10; tries++) {
		if (dir) {
			snprintf(o->tmp, n, "%s/.%s.tmpXXXXXX", d, base);
			if (mkdtemp(o->tmp) == NULL)
				break;
			if (chmod(o->tmp, outfile_mode(1)) < 0 ||
			    (o->fd = open(o->tmp, O_RDONLY | O_DIRECTORY |
			    O_CLOEXEC)) < 0) {
				rm_rf(o->tmp);
				break;
			}
		} else {
			snprintf(o->tmp, n, "%s.tmpXXXXXX", path);
			if ((o->fd = mkostemp(o->tmp, O_CLOEXEC)) < 0)
				break;
			if (fchmod(o->fd, outfile_mode(0)) < 0) {
				unlink(o->tmp);
				break;
			}
			sig_add(o->tmp);
		}
		if (lock_fresh(o->fd, o->tmp)) {
			free(d);
			o->path = xstrdup(path);
			return 0;
		}
		if (!dir)
			sig_del(o->tmp);
		close(o->fd);
		o->fd = -1;
	}
	owt_fail_errno(err, errsize, code, XSYS, "cannot create a temporary "
	    "file for '%s'", path);
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	free(d);
	free(o->tmp);
	o->tmp = NULL;
	return -1;
}

int
outfile_mkdirs(const char *path, char *err, size_t errsize, int *code)
{
	char *d, *p;
	const char *base;
	struct stat sb;
	int r = 0;

	split_path(path, &d, &base);
	for (p = d + 1; r == 0; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(d, 0777) < 0 && errno != EEXIST)
			r = owt_fail_errno(err, errsize, code, XSYS,
			    "cannot create '%s'", d);
		else if (stat(d, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
			errno = ENOTDIR;
			r = owt_fail_errno(err, errsize, code, XSYS,
			    "cannot create '%s'", d);
		}
		*p = c;
		if (c == '\0')
			break;
	}
	free(d);
	return r;
}

int
outfile_open(struct outfile *o, const char *path, char *err, size_t errsize,
    int *code)
{
	return open_tmp(o, path, 0, err, errsize, code);
}

int
outfile_open_dir(struct outfile *o, const char *path, char *err,
    size_t errsize, int *code)
{
	return open_tmp(o, path, 1, err, errsize, code);
}

static int
rm_entry(const char *path, const struct stat *st, int type, struct FTW *f)
{
	return remove(path);
}

static void
rm_rf(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void
sync_parent(const char *path)
{
	char *d;
	const char *base;
	int fd;

	split_path(path, &d, &base);
	if ((fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(fd);
		close(fd);
	}
	free(d);
}

/* Sync every file of a directory written by the caller, then the directory. */
static int
sync_tree(struct outfile *o)
{
	DIR *dp;
	struct dirent *e;
	int fd, r = 0;

	if ((dp = opendir(o->tmp)) == NULL)
		return -1;
	while (r == 0 && (e = readdir(dp)) != NULL) {
		if (e->d_name[0] == '.' && (e->d_name[1] == '\0' ||
		    (e->d_name[1] == '.' && e->d_name[2] == '\0')))
			continue;
		if ((fd = openat(dirfd(dp), e->d_name, O_RDONLY | O_CLOEXEC)) < 0)
			r = -1;
		else {
			r = fsync(fd);
			close(fd);
		}
	}
	closedir(dp);
	return r < 0 ? -1 : fsync(o->fd);
}

static int
put_in_place(struct outfile *o, int flags)
{
	struct stat sb;

	if (flags & OUTFILE_NOREPLACE) {
		if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path,
		    RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EINVAL || o->dir)
			return -1;
		/* A file system without renameat2's flags. */
		if (link(o->tmp, o->path) < 0)
			return -1;
		unlink(o->tmp);
		return 0;
	}
	if (!o->dir || lstat(o->path, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return rename(o->tmp, o->path);
	/* A directory is replaced whole: swap, then remove the old one. */
	if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path,
	    RENAME_EXCHANGE) == 0) {
		rm_rf(o->tmp);
		return 0;
	}
	rm_rf(o->path);
	return rename(o->tmp, o->path);
}

int
outfile_commit(struct outfile *o, int flags, char *err, size_t errsize,
    int *code)
{
	int e;

	if (o->tmp == NULL)
		return owt_fail(err, errsize, code, XSYS, "'%s': nothing to "
		    "commit", o->path ? o->path : "?");
	if (!(flags & OUTFILE_NOSYNC) && (o->dir ? sync_tree(o) :
	    fsync(o->fd)) < 0) {
		owt_fail_errno(err, errsize, code, XSYS, "cannot write '%s'",
		    o->path);
		outfile_abort(o);
		return -1;
	}
	if (put_in_place(o, flags) < 0) {
		e = errno;
		if (e == EEXIST || e == ENOTEMPTY)
			owt_fail(err, errsize, code, XUSAGE, "'%s' already "
			    "exists", o->path);
		else
			owt_fail_errno(err, errsize, code, XSYS, "cannot "
			    "rename a temporary file to '%s'", o->path);
		outfile_abort(o);
		return -1;
	}
	if (!o->dir)
		sig_del(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	if (!(flags & OUTFILE_NOSYNC))
		sync_parent(o->path);
	e = close(o->fd) < 0 ? errno : 0;
	o->fd = -1;
	free(o->path);
	o->path = NULL;
	if (e) {
		errno = e;
		return owt_fail_errno(err, errsize, code, XSYS,
		    "cannot close a published file");
	}
	return 0;
}

void
outfile_abort(struct outfile *o)
{
	if (o->tmp) {
		if (o->dir)
			rm_rf(o->tmp);
		else {
			sig_del(o->tmp);
			unlink(o->tmp);
		}
	}
	if (o->fd >= 0)
		close(o->fd);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	o->fd = -1;
}

/* 1 if name is STEM.tmpXXXXXX (files) or .STEM.tmpXXXXXX (directories). */
static int
is_tmp_of(const char *name, const char *stem)
{
	size_t n = strlen(name);
	char *s;
	int r;

	if (n < 11 || strncmp(name + n - 10, ".tmp", 4) != 0)
		return 0;
	s = xstrndup(name, n - 10);
	r = fnmatch(stem, s, 0) == 0 ||
	    (s[0] == '.' && fnmatch(stem, s + 1, 0) == 0);
	free(s);
	return r;
}

int
outfile_sweep(const char *path)
{
	char *d, *p;
	const char *stem;
	DIR *dp;
	struct dirent *e;
	int fd, n = 0;

	split_path(path, &d, &stem);
	if ((dp = opendir(d)) == NULL) {
		free(d);
		return 0;
	}
	while ((e = readdir(dp)) != NULL) {
		if (!is_tmp_of(e->d_name, stem))
			continue;
		fd = openat(dirfd(dp), e->d_name, O_RDONLY | O_CLOEXEC |
		    O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			p = xmalloc(strlen(d) + strlen(e->d_name) + 2);
			sprintf(p, "%s/%s", d, e->d_name);
			rm_rf(p);
			free(p);
			n++;
		}
		close(fd);
	}
	closedir(dp);
	free(d);
	return n;
}
