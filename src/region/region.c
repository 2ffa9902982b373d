#include "region/region.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/controls.h"
#include "common/log.h"
#include "os/os.h"

int cc_region_valid(const void *base, const struct cc_region_spec *spec)
{
    const cc_region_hdr_t *h = base;
    /* Acquire: magic is published last, so seeing it means the body and the
     * other header fields of that build are visible. */
    return __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == spec->magic &&
           h->layout_version == spec->layout_version && h->region_size == spec->region_size &&
           h->device_count == spec->device_count;
}

/* The state folder (0700) and its missing parents (0711: traversable, not
 * listable, as `cudacap prepare` makes them): a CUDACAP_STATE_DIR whose
 * parent did not exist left the process on a per-process cap. */
int cc_region_ensure_dir(const char *dir) { return cc_os_mkdirs(dir, 0700, 0711); }

static void rebuild(void *base, const struct cc_region_spec *spec)
{
    cc_region_hdr_t *h = base;
    /* Unpublish first: a reader racing the rebuild sees "not this layout". */
    __atomic_store_n(&h->magic, 0, __ATOMIC_RELEASE);
    memset((char *)base + sizeof *h, 0, spec->file_size - sizeof *h);
    h->layout_version = spec->layout_version;
    h->region_size = spec->region_size;
    h->device_count = spec->device_count;
    if (spec->init) spec->init(base, spec->arg);
    __atomic_store_n(&h->magic, spec->magic, __ATOMIC_RELEASE);
}

/* The init lock, waited for at most CC_REGION_LOCK_WAIT_NS (region.h):
 * polled, 1 ms doubling to 50 ms. 0, or -1 with errno (ETIMEDOUT: held
 * all along). Before, a blocking wait: a process stopped while holding it
 * hung every new process of the container at its first CUDA call. */
static int CC_CONTROL_POINT(lock_init)(int fd)
{
    uint64_t t0 = cc_mono_ns();
    long nap = 1000000;
    for (;;) {
        if (cc_os_lock(fd, 0, 1, F_WRLCK, 0) == 0) return 0;
        if (errno != EAGAIN && errno != EACCES) return -1;
        if (cc_mono_ns() - t0 >= CC_REGION_LOCK_WAIT_NS) return errno = ETIMEDOUT, -1;
        cc_os_sleep_ns((uint64_t)nap);
        if (nap < 50000000) nap *= 2;
    }
}

/* Every page of the file backed now: a page the filesystem cannot back
 * later is a SIGBUS at first touch, inside the rebuild or any process's
 * first write (a 600 KiB tmpfs let two processes pass one cap). A
 * filesystem without fallocate: only a file this call sized is written
 * (nobody else uses it yet). 0, or -1 with errno (ENOSPC, EDQUOT...). */
static int back_pages(int fd, uint64_t size, int resized)
{
    int r = cc_os_reserve(fd, (off_t)size);
    if (r == 0 || (errno != EOPNOTSUPP && errno != ENOSYS)) return r;
    if (!resized) return 0;
    static const char zero[4096];
    for (uint64_t at = 0; at < size; at += sizeof zero) {
        size_t n = size - at < sizeof zero ? (size_t)(size - at) : sizeof zero;
        if (pwrite(fd, zero, n, (off_t)at) != (ssize_t)n) return errno ? -1 : (errno = ENOSPC, -1);
    }
    return 0;
}

/* Why an open state file is not ours to use: an errno, and *why, or 0. */
static int CC_CONTROL_POINT(foreign_file)(const struct stat *st, const char **why)
{
    /* A second name for the file (a hard link from elsewhere): writing it
     * would write that other file too. O_NOFOLLOW does not see hard links. */
    if (st->st_nlink != 1) return *why = "has more than one name (hard link)", EMLINK;
    /* Someone else's file: not ours to rebuild (and not a folder of ours). */
    if (st->st_uid != geteuid()) return *why = "belongs to another user", EPERM;
    return 0;
}

/* The path still names the file we hold, and that file still has one name.
 * The open's check saw the file as it was then; a hard link's other name
 * removed between a process's open and its check made a file from outside
 * the folder look like ours (one name, our uid), and the build wrote it
 * (faults.lib, "during: hard link in place of memory.region", once in 5
 * suite runs beside CI, 2026-12-06). Checked after the init lock, which can
 * wait seconds, and before any write. Cost: one lstat per open. */
static int CC_CONTROL_POINT(still_ours)(const char *path, int fd, struct stat *st)
{
    struct stat at;
    if (cc_os_fstat(fd, st) != 0 || cc_os_lstat(path, &at) != 0) return 0;
    return at.st_dev == st->st_dev && at.st_ino == st->st_ino && st->st_nlink == 1;
}

int cc_state_open(const char *path, int flags, mode_t mode, const char **why)
{
    /* The open refuses symbolic links, FIFOs (without blocking on them) and
     * anything else that is not a regular file (os/os.h). */
    struct stat st;
    int at = 0;
    int fd = cc_os_open_regular(path, flags, mode, &st, &at);
    if (fd < 0) {
        *why = at == CC_OS_AT_FSTAT ? "cannot stat"
             : at == CC_OS_AT_TYPE  ? "not a regular file"
             : errno == ELOOP       ? "is a symbolic link"
             : errno == EISDIR      ? "is a directory"
                                    : "cannot open";
        return -1;
    }
    int e = foreign_file(&st, why);
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

void *cc_region_open_ex(const char *dir, const struct cc_region_spec *spec,
                        struct cc_region_opts *o)
{
    char path[1024], space[128];
    void *base = NULL;
    const char *why = NULL;
    int fd = -1, locked = 0, mapped = 0;
    if (o) o->fd = -1, o->rebuilt = 0, o->unlocked = 0;
    if (spec->region_size > spec->file_size || spec->file_size < sizeof(cc_region_hdr_t)) {
        why = "layout larger than its file (internal error)";
        errno = EINVAL;
        goto fail;
    }
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, spec->file) >= sizeof path) {
        why = "path too long";
        errno = ENAMETOOLONG;
        goto fail;
    }
    if (cc_region_ensure_dir(dir) != 0) {
        why = "cannot create the state folder";
        goto fail;
    }
    int tries = 0;
again:
    /* One unconditional open: no exists-then-create window. */
    fd = cc_state_open(path, O_RDWR | O_CREAT, 0600, &why);
    if (fd < 0) goto fail;
    /* A late process sleeps while the first one builds, a bounded time
     * (lock_init). The holder truncates and fills a small file, and waits a
     * bounded time for live processes to re-publish after a rebuild
     * (cap/mem/ledger_rebuild.c); if it dies the kernel releases the lock
     * and we rebuild (idempotent). */
    int got = o && o->try_lock ? cc_os_lock(fd, 0, 1, F_WRLCK, 0) : lock_init(fd);
    if (got != 0) {
        if (o && o->try_lock && (errno == EAGAIN || errno == EACCES)) {
            close(fd);
            errno = EAGAIN;
            return NULL; /* busy: the caller tries again later, no warning */
        }
        if (errno != ETIMEDOUT) {
            why = "cannot lock";
            goto fail;
        }
    }
    locked = got == 0;
    struct stat st;
    if (!still_ours(path, fd, &st)) {
        /* Replaced or linked since our open: not the state file. Open the
         * path again (a new file, or the one that replaced it, checked anew). */
        if (locked) cc_os_lock(fd, 0, 1, F_UNLCK, 0);
        close(fd);
        fd = -1;
        locked = 0;
        if (++tries < 3) goto again;
        why = "was replaced or linked elsewhere while it was being opened, three times";
        errno = EAGAIN;
        goto fail;
    }
    int resized = 0;
    if (!locked && st.st_size != (off_t)spec->file_size) {
        why = "another process has held its init lock too long (stopped?), and it is not built";
        errno = ETIMEDOUT;
        goto fail;
    }
    if (st.st_size != (off_t)spec->file_size) {
        if (cc_os_ftruncate(fd, spec->file_size) != 0) {
            why = "cannot size";
            goto fail;
        }
        resized = 1;
    }
    if (locked && back_pages(fd, spec->file_size, resized) != 0) {
        snprintf(space, sizeof space,
                 "the filesystem of the state folder cannot hold it (%llu bytes needed)",
                 (unsigned long long)spec->file_size);
        why = space;
        goto fail;
    }
    base = cc_os_map_shared(o ? o->fixed : NULL, spec->file_size, fd, 1);
    if (!base) {
        why = "cannot map";
        goto fail;
    }
    mapped = 1;
    /* From here a truncation by anyone faults into the guard, not a kill. */
    cc_region_guard(base, spec->file_size, spec->file);
    cc_region_unfault(base);
    if (!locked) {
        if (!cc_region_valid(base, spec)) {
            why = "another process has held its init lock too long (stopped?), and it is not built";
            errno = ETIMEDOUT;
            goto fail;
        }
        /* Built: used as a process arriving after the build would. */
        cc_warn("%s: another process has held its init lock over %llu s (stopped?); opened "
                "without it", path, (unsigned long long)(CC_REGION_LOCK_WAIT_NS / 1000000000ull));
        if (o) o->unlocked = 1;
    } else if (resized || !cc_region_valid(base, spec)) {
        if (st.st_size != 0)
            cc_info("%s: %s; rebuilding it in place", path,
                    resized ? "wrong size" : "header of another layout or a torn build");
        rebuild(base, spec);
        if (o) o->rebuilt = 1;
    }
    if (o && o->keep_fd) {
        o->fd = fd; /* init lock still held (unless o->unlocked): cc_region_unlock_init */
        o->dev = st.st_dev;
        o->ino = st.st_ino;
        return base;
    }
    if (locked) cc_os_lock(fd, 0, 1, F_UNLCK, 0);
    close(fd);
    return base;
fail:
    {
        int e = errno;
        /* A mapping at a fixed address stays (it was the caller's). */
        if (mapped && !(o && o->fixed)) cc_os_unmap(base, spec->file_size);
        if (locked) cc_os_lock(fd, 0, 1, F_UNLCK, 0);
        if (fd >= 0) close(fd);
        if (!(o && o->quiet))
            cc_warn("%s: %s (%s); this process runs without the container-wide %s", path, why,
                    strerror(e), spec->file);
        errno = e;
    }
    return NULL;
}

void *cc_region_open(const char *dir, const struct cc_region_spec *spec)
{
    return cc_region_open_ex(dir, spec, NULL);
}

void cc_region_unlock_init(int fd) { cc_os_lock(fd, 0, 1, F_UNLCK, 0); }

void cc_region_close(const void *base, const struct cc_region_spec *spec)
{
    cc_os_unmap((void *)base, spec->file_size);
}
