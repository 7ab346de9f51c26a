/* walk.c - the files under a directory, recursively, in byte order of names */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/util.h"
#include "merge/walk.h"

static int
cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
walk_dir(const char *dir, int (*fn)(void *, const char *, int), void *arg)
{
	DIR *d;
	struct dirent *e;
	struct stat st;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	struct buf path = { 0 };
	int r = 0;

	if ((d = opendir(dir)) == NULL)
		return fn(arg, dir, errno);
	while ((errno = 0, e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		names = xgrow(names, &cap, n + 1, sizeof *names);
		names[n++] = xstrdup(e->d_name);
	}
	if (errno != 0)
		r = fn(arg, dir, errno);
	closedir(d);
	qsort(names, n, sizeof *names, cmp);
	for (i = 0; i < n && r == 0; i++) {
		path.len = 0;
		buf_adds(&path, dir);
		if (path.len > 0 && path.p[path.len - 1] != '/')
			buf_addc(&path, '/');
		buf_adds(&path, names[i]);
		if (lstat(path.p, &st) < 0) {
			r = fn(arg, path.p, errno);
			continue;
		}
		if (S_ISDIR(st.st_mode))
			r = walk_dir(path.p, fn, arg);
		else if (S_ISREG(st.st_mode) ||
		    (S_ISLNK(st.st_mode) && stat(path.p, &st) == 0 &&
		    S_ISREG(st.st_mode)))
			r = fn(arg, path.p, 0);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	buf_free(&path);
	return r;
}
