/* Map, validate, rebuild and degrade for the container's shared state files
 * (docs/design.md, "State files"). One function call per file; failures
 * degrade (NULL and one warning), never kill the process. */
#ifndef CC_REGION_H
#define CC_REGION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cudacap/abi_region.h"
#include "os/os.h"

struct cc_region_spec {
    const char *file;        /* name inside the state folder */
    uint32_t magic;
    uint32_t layout_version;
    uint32_t region_size;    /* sizeof the layout */
    uint32_t file_size;      /* PERMANENT: never changes across versions */
    uint32_t device_count;
    /* Fills a zeroed body (everything after the header) on build. */
    void (*init)(void *base, void *arg);
    void *arg;
};

/* Opens or creates DIR/spec->file (one open(O_CREAT), no unlink, no rename),
 * takes the blocking init lock (OFD, else classic POSIX) on byte 0, rebuilds
 * the file in place when its size or header does not match the spec (magic
 * published last with release order), and maps it shared. Returns the
 * mapping (file_size bytes) or NULL after one warning naming the file and the
 * reason. Creates DIR (mode 0700) when missing. */
void *cc_region_open(const char *dir, const struct cc_region_spec *spec);

/* Observers (cudacap status) read the files through region/peek.h. */

/* cc_region_open with options (the memory ledger, cap/mem/). */
struct cc_region_opts {
    void *fixed;  /* map over this address (MAP_FIXED): our own earlier mapping of the file */
    int keep_fd;  /* return with the descriptor open and the init lock still held */
    int try_lock; /* do not wait for the init lock: NULL, errno EAGAIN, no warning if busy */
    int quiet;    /* no warning on failure (the caller says it) */
    /* out */
    int fd;       /* keep_fd: the descriptor (init lock held unless unlocked), else -1 */
    int rebuilt;  /* 1: the file was (re)built by this call */
    int unlocked; /* 1: the init lock was held past CC_REGION_LOCK_WAIT_NS by another
                   * process and the region, already built, was opened without it */
    dev_t dev;    /* keep_fd: the file's identity */
    ino_t ino;
};
void *cc_region_open_ex(const char *dir, const struct cc_region_spec *spec,
                        struct cc_region_opts *o);
/* The longest wait for another process's init lock. Its holder sizes and
 * fills a small file and waits at most 1 s for live processes to
 * re-publish after a rebuild (cap/mem/ledger_rebuild.c); a hold past this
 * is a stopped or foreign process. Then a region already built is opened
 * without the lock (what a process arriving after the build would see);
 * one not built fails the open (the caller's per-process fallback). */
#define CC_REGION_LOCK_WAIT_NS 3000000000ull
void cc_region_unlock_init(int fd);

/* Opens a state file for the library: O_NOFOLLOW, O_NONBLOCK (a FIFO cannot
 * block us), O_CLOEXEC, then refuses anything but a regular file with one
 * name (no hard link) owned by our effective uid. Returns the descriptor, or
 * -1 with errno and *why (for the caller's one warning). */
int cc_state_open(const char *path, int flags, mode_t mode, const char **why);

/* The SIGBUS guard (guard.c): a fault inside a registered mapping (its file
 * truncated under us) maps anonymous zeroed memory over the whole mapping
 * and resumes; every other SIGBUS goes to the previous handler, or kills as
 * it would have. Installed with the first registration. */
void cc_region_guard(void *base, size_t size, const char *name);
/* 1 when the guard replaced the mapping at base (warns once, from here). */
int cc_region_faulted(const void *base);
void cc_region_unfault(const void *base); /* the file is mapped there again */
/* 1 when any guarded mapping has faulted (warns once for each). */
int cc_region_faults_pending(void);

void cc_region_close(const void *base, const struct cc_region_spec *spec);

/* True when the header at base matches the spec (acquire on magic). */
int cc_region_valid(const void *base, const struct cc_region_spec *spec);

/* The byte-range locks are the OS layer's (os/os.h: cc_os_lock,
 * cc_os_lock_query); these names stay for callers not yet moved to it
 * (hook/hostpid.c). */
static inline int cc_lock_range(int fd, off_t start, off_t len, short type, int wait)
{
    return cc_os_lock(fd, start, len, type, wait);
}
static inline int cc_lock_query(int fd, off_t start, off_t len, off_t *at, off_t *n)
{
    return cc_os_lock_query(fd, start, len, at, n);
}

/* The state folder (0700) and its missing parents (0711), through
 * cc_os_mkdirs: 0, or -1 with errno. */
int cc_region_ensure_dir(const char *dir);

#endif
