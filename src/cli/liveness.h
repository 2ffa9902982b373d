/* Whether any process may still use a container's state folder (cudacap
 * prepare and run ask before emptying or removing it). */
#ifndef CC_CLI_LIVENESS_H
#define CC_CLI_LIVENESS_H

/* Users of the folder open at dfd, by any of three kinds of evidence:
 *  - a live slot in the memory or compute region;
 *  - a lock held on any *.lock file of the folder (sampling.lock,
 *    identity.lock), or on a liveness byte of memory.region (every attached
 *    process holds one: cudacap/abi_mem_region.h, CC_MEM_LIVE_BASE);
 *  - a process mapping or holding open a file of the folder (its
 *    /proc/<pid>/maps and /proc/<pid>/fd, matched by device and inode).
 * The last needs no region to parse, so a corrupt header or a FIFO in place
 * of a region cannot hide a live process. Fills pids (up to max; -1: a lock
 * holder not identified) and returns how many were found. */
int live_users(int dfd, long *pids, int max);

/* The same for the folder at path (0 when it cannot be opened). */
int snap_live_pids(const char *dir, long *pids, int max);

#endif
