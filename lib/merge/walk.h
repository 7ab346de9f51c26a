/* walk.h - the files under a directory, recursively, in byte order of names */
#ifndef OWT_WALK_H
#define OWT_WALK_H

/*
 * Call fn(arg, path, errnum) for every regular file below dir, descending
 * into subdirectories, each directory's entries sorted by strcmp(3) so the
 * order does not depend on the locale or the file system. Names starting
 * with '.' are skipped; symbolic links to files are followed, links to
 * directories are not. A directory that cannot be read is reported as
 * fn(arg, path, errno). A non-zero return from fn stops the walk and is
 * returned.
 */
int walk_dir(const char *dir, int (*fn)(void *arg, const char *path, int errnum),
    void *arg);

#endif
