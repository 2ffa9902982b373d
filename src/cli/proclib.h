/* Which cudacap library a live process has loaded (cudacap status). */
#ifndef CC_CLI_PROCLIB_H
#define CC_CLI_PROCLIB_H

#include <stddef.h>
#include <stdint.h>

/* The path of the library a process mapped (as that process names it, in
 * its own mount namespace), found in /proc/<host_pid>/maps: a file named
 * libcudacap.so* or HAMi's libvgpu.so (node-install.sh installs over it);
 * and its version, read from the file itself (the tag src/hook/stats.c
 * keeps in it) through /proc/<host_pid>/root. 1 with path filled (version
 * "" when unreadable), 0 when no such mapping is seen (not allowed, gone,
 * or loaded under another name). */
int proclib_of(uint32_t host_pid, char *path, size_t plen, char *version, size_t vlen);

#endif
