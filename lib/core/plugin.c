/* plugin.c - where a plugin lib/owt/NAME.so is: the environment, beside the executable, installed */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/plugin.h"

#ifndef OWT_LIBDIR
#define OWT_LIBDIR "/usr/local/lib"
#endif

void
plugin_path(const char *name, const char *var, char *path, size_t size)
{
	const char *env = getenv(var);
	char exe[4096], *s;
	ssize_t n;

	if (env != NULL && *env != '\0') {
		snprintf(path, size, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	for (int i = 0; i < 2 && (s = strrchr(exe, '/')) != NULL; i++)
		*s = '\0';
	snprintf(path, size, "%s/lib/owt/%s", exe, name);
	if (access(path, F_OK) != 0)
		snprintf(path, size, "%s/owt/%s", OWT_LIBDIR, name);
}
