/* outfile.h - publishing an output: a temporary beside it, then a rename */
#ifndef OWT_OUTFILE_H
#define OWT_OUTFILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Every file or directory a program publishes (datasets, checkpoints,
 * saved pages, reports) is written under a temporary name in the same
 * directory, "NAME.tmpXXXXXX" (a directory: ".NAME.tmpXXXXXX"), synced,
 * and renamed into place, so a reader sees the old output or the whole
 * new one, never a part. The temporary gets the mode that a plain
 * open(O_CREAT, 0666) (a directory: mkdir 0777) would give under the
 * process's umask: 0644 under 022, 0664 under 002, 0600 under 077.
 *
 * While it is open, the temporary holds an flock, so outfile_sweep can
 * tell a live writer's temporary from one left by a killed process and
 * removes only the latter. Errors: -1 with "what: strerror" in err and an
 * exit class (XSYS, or XUSAGE for an output that exists under
 * OUTFILE_NOREPLACE) in *code.
 */
struct outfile {
	int fd;		/* the open temporary (a directory: its fd) */
	int dir;	/* 1 for a directory */
	char *path;	/* the final name */
	char *tmp;	/* the temporary's name; NULL once committed */
};

enum {
	OUTFILE_NOREPLACE = 1,	/* commit fails if the final name exists */
	/*
	 * No fsync of the file and its directory: the rename still shows
	 * readers and later runs the whole file or none, even after a kill,
	 * but after a power cut or an OS crash the file may be empty or
	 * gone. For many small outputs that are a cache (owt-fetch's saved
	 * pages), where two fsyncs a file would cost more than the writing.
	 */
	OUTFILE_NOSYNC = 2
};

/* 0666 (files) or 0777 (directories) less the umask, read once. */
mode_t outfile_mode(int dir);

/* Create the missing directories above path (mkdir -p of its dirname),
 * with mode 0777 less the umask, as mkdir(1) does. */
int outfile_mkdirs(const char *path, char *err, size_t errsize, int *code);
/* Create the temporary for path; o->fd is open for writing. */
int outfile_open(struct outfile *o, const char *path, char *err,
    size_t errsize, int *code);
/* The same for a directory: fill o->tmp, then commit. */
int outfile_open_dir(struct outfile *o, const char *path, char *err,
    size_t errsize, int *code);
/*
 * Sync the temporary, rename it to its final name (a directory already
 * there is replaced whole), sync the parent directory, close. On failure
 * the temporary is removed. flags: OUTFILE_NOREPLACE, OUTFILE_NOSYNC.
 */
int outfile_commit(struct outfile *o, int flags, char *err, size_t errsize,
    int *code);
/* Remove the temporary and forget it (safe after commit or a failed open). */
void outfile_abort(struct outfile *o);
/*
 * Remove the temporaries of path left by processes that died (kill -9,
 * a power cut): "path.tmpXXXXXX" and ".NAME.tmpXXXXXX" beside it that no
 * live writer holds. Returns how many were removed.
 */
int outfile_sweep(const char *path);
/* Async-signal-safe: unlink every temporary file still open (directories
 * are left to the next outfile_sweep). For a fatal-signal handler. */
void outfile_signal_cleanup(void);
/*
 * A handler for the fatal signals of a program that publishes outputs:
 * outfile_signal_cleanup, then the signal again with its default action,
 * so the program dies of it (status 128 + sig) with nothing half-written.
 */
void outfile_signal_exit(int sig);
/* Write all n bytes to fd; -1 with errno on failure. */
int outfile_write_all(int fd, const void *p, size_t n);

#endif
