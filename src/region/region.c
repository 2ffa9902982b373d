#include "region/region.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

int cc_lock_range(int fd, off_t start, off_t len, short type, int wait)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = start;
    fl.l_len = len;
    int r;
#ifdef F_OFD_SETLK
    do r = fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
    while (r < 0 && errno == EINTR);
    if (r == 0 || errno != EINVAL) return r;
    /* EINVAL: a kernel without OFD locks (before 3.15). */
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = start;
    fl.l_len = len;
#endif
    do r = fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl);
    while (r < 0 && errno == EINTR);
    return r;
}

int cc_region_valid(const void *base, const struct cc_region_spec *spec)
{
    const cc_region_hdr_t *h = base;
    /* Acquire: magic is published last, so seeing it means the body and the
     * other header fields of that build are visible. */
    return __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) == spec->magic &&
           h->layout_version == spec->layout_version && h->region_size == spec->region_size &&
           h->device_count == spec->device_count;
}

int cc_region_ensure_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0) return S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1);
    if (mkdir(dir, 0700) == 0 || errno == EEXIST) return 0;
    return -1;
}

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

void *cc_region_open(const char *dir, const struct cc_region_spec *spec)
{
    char path[1024];
    void *base = NULL;
    const char *why = NULL;
    int fd = -1, locked = 0;
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
    /* One unconditional open: no exists-then-create window. O_NOFOLLOW: a
     * link planted in the folder cannot redirect us. */
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        why = "cannot open";
        goto fail;
    }
    /* Blocking: a late process sleeps while the first one builds. The holder
     * only truncates and fills a small file; if it dies the kernel releases
     * the lock and we rebuild (idempotent). */
    if (cc_lock_range(fd, 0, 1, F_WRLCK, 1) != 0) {
        why = "cannot lock";
        goto fail;
    }
    locked = 1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        why = "cannot stat";
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        why = "not a regular file";
        errno = EINVAL;
        goto fail;
    }
    int resized = 0;
    if (st.st_size != (off_t)spec->file_size) {
        if (ftruncate(fd, spec->file_size) != 0) {
            why = "cannot size";
            goto fail;
        }
        resized = 1;
    }
    base = mmap(NULL, spec->file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        base = NULL;
        why = "cannot map";
        goto fail;
    }
    if (resized || !cc_region_valid(base, spec)) {
        if (st.st_size != 0)
            cc_info("%s: %s; rebuilding it in place", path,
                    resized ? "wrong size" : "header of another layout or a torn build");
        rebuild(base, spec);
    }
    cc_lock_range(fd, 0, 1, F_UNLCK, 0);
    close(fd);
    return base;
fail:
    {
        int e = errno;
        if (base) munmap(base, spec->file_size);
        if (locked) cc_lock_range(fd, 0, 1, F_UNLCK, 0);
        if (fd >= 0) close(fd);
        cc_warn("%s: %s (%s); this process runs without the container-wide %s", path, why,
                strerror(e), spec->file);
        errno = e;
    }
    return NULL;
}

void cc_region_close(const void *base, const struct cc_region_spec *spec)
{
    if (base) munmap((void *)base, spec->file_size);
}
