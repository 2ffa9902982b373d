/* Process keys: a process's name in a region's liveness bytes and slot
 * owner words (the ranges: cudacap/abi_region.h, CC_KEY_PIDS). One key per
 * region file, taken with that file's own lock bytes, so two pid
 * namespaces sharing one state folder (a sidecar, a nested runtime: two
 * pid 1s) stay two processes of one container instead of colliding. */
#ifndef CC_REGION_PROC_KEY_H
#define CC_REGION_PROC_KEY_H

#include <stdint.h>

#include "cudacap/abi_region.h"

struct cc_pkey {
    int fd;        /* the region file, holding our key's byte; -1 none */
    uint64_t base; /* the region's first liveness byte */
    uint32_t key;  /* 0: none taken */
};

/* Takes a key on the region file open at fd (read-write), lock bytes at
 * base + key: our pid's byte when it is free, else the first free of 64
 * probed keys from a hash of (pid namespace, pid). Never waits for a lock.
 * 0 with k filled, or -1 with errno (EAGAIN: every candidate held; the
 * lock's errno otherwise). The byte is held until fd is closed (OFD locks;
 * classic POSIX: until the process closes any descriptor of the file). A
 * fork child shares its parent's open file description: it opens the file
 * again and takes its own key. */
int cc_pkey_take(struct cc_pkey *k, int fd, uint64_t base);

/* Whether the process of key holds its byte: 1 (ours counts), 0, or -1
 * when the lock cannot tell (no descriptor, a failed query). */
int cc_pkey_held(const struct cc_pkey *k, uint32_t key);

/* Liveness of a key for callers without a start time: its byte first;
 * when that cannot tell, kill(key, 0) for a pid key and "alive" for a
 * probed one (never reclaimed on a guess). */
int cc_pkey_alive(const struct cc_pkey *k, uint32_t key);

/* The keys whose bytes are held on the file at fd, other than ours (both
 * ranges), at most max. */
int cc_pkey_scan(int fd, uint64_t base, uint32_t *out, int max);

#endif
