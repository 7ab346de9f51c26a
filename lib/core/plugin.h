/* plugin.h - where a plugin lib/owt/NAME.so is: the environment, beside the executable, installed */
#ifndef OWT_PLUGIN_H
#define OWT_PLUGIN_H

#include <stddef.h>

/*
 * The path of the plugin NAME ("comm-mpi.so", "gpt-cuda.so") in
 * path[0..size): $VAR where it is set and not empty, else lib/owt/NAME
 * beside the executable's directory (bin/../lib/owt: the build tree, or
 * an installation moved whole) where that file exists, else the installed
 * one, LIBDIR/owt/NAME. The caller dlopens it and reports dlerror's text,
 * which names the path or the library that is missing.
 */
void plugin_path(const char *name, const char *var, char *path, size_t size);

#endif
