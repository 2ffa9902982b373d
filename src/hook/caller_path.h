/* Where the C library's dlopen would find a bare library name for a given
 * caller (caller_path.c), and which loaded object holds an address. */
#ifndef CC_CALLER_PATH_H
#define CC_CALLER_PATH_H

#include <link.h>
#include <stddef.h>

/* 1 and the path in out when the caller's own DT_RPATH or DT_RUNPATH is
 * where `file` is found; 0 when any caller would find it the same way (a
 * name with a slash, LD_LIBRARY_PATH, the cache, the default folders). */
int cc_caller_path(const char *file, const void *caller, char *out, size_t outsz);

/* 1 when one of the object's loaded segments holds addr. */
int cc_dl_contains(const struct dl_phdr_info *i, const void *addr);

#endif
