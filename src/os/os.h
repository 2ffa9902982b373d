/* The OS layer: every operating-system call the library makes
 * about its state files and processes, behind one contract, in the manner
 * of mimalloc's prim.h. Above common/, below region/ (docs/design.md,
 * "Layout"); implemented for Linux in os_linux.c.
 *
 * Common to every entry unless it says otherwise:
 *  - It begins with its fault point (common/fault.h): when the point fires
 *    the entry fails as documented below, with errno EIO, before making any
 *    system call. Unarmed, the point costs one relaxed load and a branch.
 *  - Failure is -1 (NULL for mappings) with errno set; success leaves errno
 *    unspecified.
 *  - Thread-safe: no state of its own.
 *  - Async-signal-safe only where it says so, and then only while no fault
 *    is armed (a firing point may log).
 *  - Never blocks except where it says so: state files are opened
 *    O_NONBLOCK, /proc files are read once.
 *
 * Not here, on purpose: the SIGBUS guard's own mmap (region/guard.c runs it
 * in a signal handler and must not meet a fault point), close(), pread(),
 * and the clock (common/clock.h: one inline vDSO call on the launch path,
 * with its own fault point, CC_FP_CLOCK). */
#ifndef CC_OS_OS_H
#define CC_OS_OS_H

#include <fcntl.h> /* F_RDLCK, F_WRLCK, F_UNLCK, O_* */
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* ---- files ------------------------------------------------------------- */

/* The step of cc_os_open_regular that refused (for the caller's message). */
enum { CC_OS_AT_OPEN = 1, CC_OS_AT_FSTAT, CC_OS_AT_TYPE };

/* Opens path with flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK (mode when
 * O_CREAT), then fstats it into *st and refuses anything but a regular
 * file. O_NOFOLLOW: a symbolic link in place of the file cannot redirect
 * us; O_NONBLOCK: a FIFO in its place cannot block the open (it is then
 * refused). Returns the descriptor, or -1 with nothing left open, errno and
 * *at (at may be NULL):
 *   CC_OS_AT_OPEN   open's errno (ENOENT, ELOOP: a symbolic link, EISDIR,
 *                   EACCES, ...); EIO when CC_FP_OPEN fires
 *   CC_OS_AT_FSTAT  fstat's errno; EIO when CC_FP_FSTAT fires
 *   CC_OS_AT_TYPE   EINVAL: not a regular file; *st holds its status
 * Fault point: CC_FP_OPEN (then cc_os_fstat's). Async-signal-safe. */
int cc_os_open_regular(const char *path, int flags, mode_t mode, struct stat *st, int *at);
/* The same for name relative to the folder open at dfd (AT_FDCWD: the
 * current one). */
int cc_os_open_regular_at(int dfd, const char *name, int flags, mode_t mode, struct stat *st, int *at);
/* Opens the folder path itself, read-only: a symbolic link in its place
 * (ELOOP or ENOTDIR) or anything but a folder (ENOTDIR) is refused, and
 * nothing blocks. The descriptor, or -1 with open's errno (EIO when
 * CC_FP_OPEN fires). */
int cc_os_open_dir(const char *path);

/* fstat(fd). 0, or -1 with fstat's errno (EBADF); EIO when CC_FP_FSTAT
 * fires. Async-signal-safe. */
int cc_os_fstat(int fd, struct stat *st);

/* lstat(path): the name itself, a symbolic link not followed. 0, or -1
 * with lstat's errno (ENOENT, ...); EIO when CC_FP_FSTAT fires.
 * Async-signal-safe. */
int cc_os_lstat(const char *path, struct stat *st);

/* ftruncate(fd, size). 0, or -1 with its errno (EINVAL, EPERM, ENOSPC...);
 * EIO when CC_FP_FTRUNCATE fires. Async-signal-safe. */
int cc_os_ftruncate(int fd, off_t size);

/* Backs the first size bytes of fd's file with storage now (fallocate,
 * mode 0: the data is kept). 0, or -1 with errno: ENOSPC or EDQUOT when
 * the filesystem cannot hold them, EOPNOTSUPP where it cannot allocate
 * ahead; ENOSPC when CC_FP_RESERVE fires. */
int cc_os_reserve(int fd, off_t size);

/* Makes the folder dir (mode) and, when missing, its parents (parent_mode;
 * existing ones are left as they are). 0 when dir exists as a folder
 * already or was made; -1 with errno: ENOTDIR (dir, or a parent, is not a
 * folder), ENAMETOOLONG (over PATH_MAX), mkdir's (EACCES, EROFS, ...); EIO
 * when CC_FP_MKDIR fires. Not atomic: a concurrent maker is fine (EEXIST
 * counts as made). Async-signal-safe. */
int cc_os_mkdirs(const char *dir, mode_t mode, mode_t parent_mode);

/* ---- mappings ---------------------------------------------------------- */

/* Maps size bytes of fd from offset 0, MAP_SHARED, readable (and writable
 * when writable != 0). at != NULL: MAP_FIXED over at (a mapping the caller
 * owns, replaced atomically); NULL: where the kernel chooses. Returns the
 * mapping (never MAP_FAILED), or NULL with mmap's errno (EACCES, ENOMEM,
 * ENODEV...); EIO when CC_FP_MAP fires, at left as it was. Touching pages
 * past the file's end later raises SIGBUS (region/guard.c). */
void *cc_os_map_shared(void *at, size_t size, int fd, int writable);

/* size bytes of zeroed, private, anonymous read-write memory (copied on
 * fork). Returns it, or NULL with errno (ENOMEM); EIO when CC_FP_MAP
 * fires. */
void *cc_os_map_private(size_t size);

/* Unmaps [p, p + size) (from cc_os_map_*); p NULL: nothing. No fault point:
 * it cannot fail on a mapping we made, and its callers cannot act on a
 * failure. */
void cc_os_unmap(void *p, size_t size);

/* ---- byte-range locks -------------------------------------------------- */

/* fcntl byte-range lock on [start, start + len): OFD (owned by the open
 * file description) when the kernel has it, classic POSIX otherwise (before
 * Linux 3.15; those the kernel drops when the process closes ANY descriptor
 * of the file: hold long-lived classic locks only on files nobody else
 * opens). type: F_WRLCK, F_RDLCK or F_UNLCK. wait != 0: blocks until
 * granted (EINTR retried); else never blocks. Returns 0, or -1 with errno:
 * EAGAIN or EACCES (held elsewhere, wait == 0), EDEADLK, EBADF, ENOLCK;
 * EIO when CC_FP_LOCK fires (nothing taken). F_UNLCK has no fault point:
 * releasing a lock we hold does not fail, and an injected failure would
 * leave an init lock held and hang every other process of the container.
 * Async-signal-safe. */
int cc_os_lock(int fd, off_t start, off_t len, short type, int wait);

/* Whether another open file description (OFD locks) or process (classic)
 * holds a lock that conflicts with a write lock on [start, start + len):
 * 1, with the first such lock's start and length in *at / *n (either may
 * be NULL; a lock to the end of the file reads as length 1), 0 when none,
 * -1 with errno (EBADF, EINVAL); EIO when CC_FP_LOCK fires. Takes
 * nothing; never blocks. Async-signal-safe. */
int cc_os_lock_query(int fd, off_t start, off_t len, off_t *at, off_t *n);

/* ---- processes --------------------------------------------------------- */

/* Whether process pid may be alive: kill(pid, 0). 0 only when the kernel
 * says there is no such process (ESRCH); 1 otherwise (it exists, ours or
 * not (EPERM), or cannot tell). pid <= 0: 0 (kill would address a group).
 * When CC_FP_ALIVE fires: 1, "alive", the safe answer: a caller never
 * reclaims a live process's accounting on a fault, it only keeps a dead
 * one's a while longer. errno unspecified. Async-signal-safe. */
int cc_os_pid_alive(pid_t pid);

/* Fields 3 (state: R, S, D, Z, X...) and 22 (start time, clock ticks
 * since boot) of /proc/<pid>/stat, parsed after the last ')' (the command
 * name may hold spaces and parentheses). Reads once, never blocks. 0, or
 * -1 with errno: ENOENT (no such process, or no /proc), open's or read's,
 * EINVAL (not the expected format); EIO when CC_FP_PROC_STAT fires.
 * *state and *start are written only on success. Async-signal-safe. */
int cc_os_proc_stat(pid_t pid, char *state, uint64_t *start);

/* The environment of process pid (/proc/<pid>/environ: NUL-separated
 * NAME=value strings), at most len - 1 bytes of it into buf, NUL-terminated
 * (a longer one is cut at the last whole string). Reads once, never
 * blocks. The number of bytes, or -1 with errno: ENOENT, EACCES (another
 * user's process), read's; EIO when CC_FP_PROC_ENVIRON fires. */
ssize_t cc_os_proc_environ(pid_t pid, char *buf, size_t len);

/* Our pid at each level of pid namespace, outermost (the host's) first:
 * the NSpid line of /proc/self/status (Linux 4.1+). Stores the first
 * min(levels, max) of them in pids and returns the number of levels: 1
 * when we are in no pid namespace below the host's (or see no other), 0
 * when the line is absent (an older kernel), -1 with errno when the file
 * cannot be read (open's errno; EIO when CC_FP_NSPID fires). Reads once.
 * Not async-signal-safe (stdio). */
int cc_os_nspid(uint32_t *pids, int max);

/* The inode of our pid namespace (stat of /proc/self/ns/pid): the same
 * number for every process of that namespace, another in a sibling one.
 * 0, or -1 with errno (stat's; EIO when CC_FP_NSPID fires, the namespace
 * entries' one point). Async-signal-safe. */
int cc_os_pidns(uint64_t *id);

/* ---- time, threads, futexes (os_thread.c) ------------------------------ */

/* Sleeps ns nanoseconds (CLOCK_MONOTONIC, relative), once: a signal may end
 * it early, and every caller loops on its own bounded clock anyway. No
 * fault point (a sleep cannot fail in a way a caller could act on). */
void cc_os_sleep_ns(uint64_t ns);

/* Sleeps until CLOCK_MONOTONIC (cc_mono_ns's clock) reads t; resumed after
 * a signal. No fault point. */
void cc_os_sleep_until(uint64_t t);

/* CPU time the calling thread has used, in nanoseconds (0 if unknown):
 * for diagnostics only (a syscall where the vDSO has no thread clock). */
uint64_t cc_os_thread_cpu_ns(void);

/* Starts fn(arg) on a detached thread named name (at most 15 characters;
 * NULL or "": unnamed) with every signal blocked but the synchronous ones
 * (SIGBUS, SIGSEGV, SIGFPE, SIGILL: a fault of a truncated mapping must
 * reach region/guard.c's handler on that thread, and one blocked kills the
 * process). The mask is set around the creation, so the application's
 * signals never reach the thread. 0, or -1 with errno (EAGAIN: no thread
 * left, ...); EAGAIN when CC_FP_THREAD fires (no thread made). */
int cc_os_thread(void *(*fn)(void *), void *arg, const char *name);

/* Waits while *w holds val, at most timeout_ns: returns when woken, when *w
 * differs, when the time is up or on a signal (shared futex: w may lie in a
 * file mapping that other processes wake). No fault point: every caller
 * re-checks its condition after. */
void cc_os_futex_wait(uint32_t *w, uint32_t val, uint64_t timeout_ns);

/* Wakes every waiter on w (cc_os_futex_wait). */
void cc_os_futex_wake_all(uint32_t *w);

/* ---- host memory (os_hostmem.c) ---------------------------------------- */

/* What host memory can back oversubscription: the node's MemAvailable
 * (/proc/meminfo) and the container's cgroup memory limit and use (v2
 * memory.max / memory.current, else v1 memory.limit_in_bytes /
 * memory.usage_in_bytes). UINT64_MAX: unknown or no limit. Reads files
 * (tens of microseconds); CUDACAP_TEST_HOST_ROOT (tests only) prefixes
 * every path. */
struct cc_os_hostmem {
    uint64_t avail;          /* MemAvailable, bytes */
    uint64_t cg_limit;       /* the cgroup's limit, bytes */
    uint64_t cg_used;        /* the cgroup's use, bytes (0 unknown) */
    const char *cg_source;   /* the limit's file name, "" none */
};
void cc_os_host_memory(struct cc_os_hostmem *m);

#endif
