/* The OS layer on Linux (os.h). Each entry opens with its fault point. No
 * stdio or snprintf except in cc_os_nspid: the others stay
 * async-signal-safe, as os.h says. */
#include "os/os.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/fault.h"

/* ---- files ------------------------------------------------------------- */

int cc_os_fstat(int fd, struct stat *st)
{
    if (cc_fault(CC_FP_FSTAT)) return errno = EIO, -1;
    return fstat(fd, st);
}

int cc_os_lstat(const char *path, struct stat *st)
{
    if (cc_fault(CC_FP_FSTAT)) return errno = EIO, -1;
    return lstat(path, st);
}

int cc_os_open_dir(const char *path)
{
    if (cc_fault(CC_FP_OPEN)) return errno = EIO, -1;
    return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
}

int cc_os_open_regular(const char *path, int flags, mode_t mode, struct stat *st, int *at)
{
    return cc_os_open_regular_at(AT_FDCWD, path, flags, mode, st, at);
}

int cc_os_open_regular_at(int dfd, const char *name, int flags, mode_t mode, struct stat *st, int *at)
{
    int step = CC_OS_AT_OPEN, fd = -1;
    if (cc_fault(CC_FP_OPEN)) {
        errno = EIO;
        goto fail;
    }
    fd = openat(dfd, name, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode);
    if (fd < 0) goto fail;
    step = CC_OS_AT_FSTAT;
    if (cc_os_fstat(fd, st) != 0) goto fail;
    step = CC_OS_AT_TYPE;
    if (!S_ISREG(st->st_mode)) {
        errno = EINVAL;
        goto fail;
    }
    return fd;
fail:
    if (fd >= 0) {
        int e = errno;
        close(fd);
        errno = e;
    }
    if (at) *at = step;
    return -1;
}

int cc_os_ftruncate(int fd, off_t size)
{
    if (cc_fault(CC_FP_FTRUNCATE)) return errno = EIO, -1;
    return ftruncate(fd, size);
}

int cc_os_reserve(int fd, off_t size)
{
    if (cc_fault(CC_FP_RESERVE)) return errno = ENOSPC, -1;
    int r;
    do r = fallocate(fd, 0, 0, size);
    while (r < 0 && errno == EINTR);
    return r;
}

int cc_os_mkdirs(const char *dir, mode_t mode, mode_t parent_mode)
{
    if (cc_fault(CC_FP_MKDIR)) return errno = EIO, -1;
    struct stat st;
    if (stat(dir, &st) == 0) return S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1);
    if (mkdir(dir, mode) == 0 || errno == EEXIST) return 0;
    if (errno != ENOENT) return -1;
    /* A parent is missing: make the chain from the top. */
    char p[PATH_MAX];
    size_t len = strlen(dir);
    if (len >= sizeof p) return errno = ENAMETOOLONG, -1;
    memcpy(p, dir, len + 1);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, parent_mode) != 0 && errno != EEXIST) return -1;
        *s = '/';
    }
    if (mkdir(p, mode) == 0 || errno == EEXIST) return 0;
    return -1;
}

/* ---- mappings ---------------------------------------------------------- */

void *cc_os_map_shared(void *at, size_t size, int fd, int writable)
{
    if (cc_fault(CC_FP_MAP)) return errno = EIO, NULL;
    int prot = PROT_READ | (writable ? PROT_WRITE : 0);
    void *p = mmap(at, size, prot, MAP_SHARED | (at ? MAP_FIXED : 0), fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

void *cc_os_map_private(size_t size)
{
    if (cc_fault(CC_FP_MAP)) return errno = EIO, NULL;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void cc_os_unmap(void *p, size_t size)
{
    if (p) munmap(p, size);
}

/* ---- byte-range locks -------------------------------------------------- */

static void fill_lock(struct flock *fl, short type, off_t start, off_t len)
{
    memset(fl, 0, sizeof *fl);
    fl->l_type = type;
    fl->l_whence = SEEK_SET;
    fl->l_start = start;
    fl->l_len = len;
}

int cc_os_lock(int fd, off_t start, off_t len, short type, int wait)
{
    /* Not on release (os.h): a failed unlock injected into a kept init
     * lock would hang the container, which no kernel does. */
    if (type != F_UNLCK && cc_fault(CC_FP_LOCK)) return errno = EIO, -1;
    struct flock fl;
    fill_lock(&fl, type, start, len);
    int r;
#ifdef F_OFD_SETLK
    do r = fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
    while (r < 0 && errno == EINTR);
    if (r == 0 || errno != EINVAL) return r;
    /* EINVAL: a kernel without OFD locks (before 3.15). */
    fill_lock(&fl, type, start, len);
#endif
    do r = fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl);
    while (r < 0 && errno == EINTR);
    return r;
}

int cc_os_lock_query(int fd, off_t start, off_t len, off_t *at, off_t *n)
{
    if (cc_fault(CC_FP_LOCK)) return errno = EIO, -1;
    struct flock fl;
    fill_lock(&fl, F_WRLCK, start, len);
    int r = -1;
#ifdef F_OFD_GETLK
    r = fcntl(fd, F_OFD_GETLK, &fl);
    if (r != 0 && errno == EINVAL) fill_lock(&fl, F_WRLCK, start, len); /* no OFD locks */
#endif
    if (r != 0) r = fcntl(fd, F_GETLK, &fl);
    if (r != 0) return -1;
    if (fl.l_type == F_UNLCK) return 0;
    if (at) *at = fl.l_start;
    if (n) *n = fl.l_len ? fl.l_len : 1;
    return 1;
}

/* ---- processes --------------------------------------------------------- */

int cc_os_pid_alive(pid_t pid)
{
    if (cc_fault(CC_FP_ALIVE)) return 1; /* cannot tell: alive (os.h) */
    if (pid <= 0) return 0;
    return kill(pid, 0) == 0 || errno != ESRCH;
}

/* "/proc/<pid>/stat" into buf, without snprintf (async-signal-safe). */
static void stat_path(char *buf, pid_t pid)
{
    char digits[16];
    int n = 0;
    unsigned v = (unsigned)pid;
    do digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    memcpy(buf, "/proc/", 6);
    char *p = buf + 6;
    while (n) *p++ = digits[--n];
    memcpy(p, "/stat", 6);
}

ssize_t cc_os_proc_environ(pid_t pid, char *buf, size_t len)
{
    if (cc_fault(CC_FP_PROC_ENVIRON)) return errno = EIO, -1;
    if (pid <= 0 || len < 2) return errno = ENOENT, -1;
    char path[40];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return -1;
    size_t got = 0;
    while (got < len - 1) {
        ssize_t n = read(fd, buf + got, len - 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n < 0) {
                int e = errno;
                close(fd);
                return errno = e, -1;
            }
            break;
        }
        got += (size_t)n;
    }
    char extra;
    int more = got == len - 1 && read(fd, &extra, 1) == 1;
    close(fd);
    if (more) /* cut: keep whole strings only */
        while (got > 0 && buf[got - 1] != 0) got--;
    buf[got] = 0;
    return (ssize_t)got;
}

int cc_os_proc_stat(pid_t pid, char *state, uint64_t *start)
{
    if (cc_fault(CC_FP_PROC_STAT)) return errno = EIO, -1;
    if (pid <= 0) return errno = ENOENT, -1;
    char path[32], buf[1024];
    stat_path(path, pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int e = errno;
    close(fd);
    if (n < 0) return errno = e, -1;
    if (n == 0) return errno = EINVAL, -1;
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ') return errno = EINVAL, -1;
    p += 2; /* field 3 */
    char s = *p;
    for (int f = 3; f < 22; f++) {
        p = strchr(p, ' ');
        if (!p) return errno = EINVAL, -1;
        p++;
    }
    /* strtoull's reading of a field the kernel writes as plain digits. */
    uint64_t t = 0;
    while (*p >= '0' && *p <= '9') t = t * 10 + (uint64_t)(*p++ - '0');
    *state = s;
    *start = t;
    return 0;
}

int cc_os_nspid(uint32_t *pids, int max)
{
    if (cc_fault(CC_FP_NSPID)) return errno = EIO, -1;
    FILE *f = fopen("/proc/self/status", "re");
    if (!f) return -1;
    char line[256];
    int levels = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "NSpid:", 6) != 0) continue;
        char *p = line + 6, *end;
        for (;;) {
            unsigned long v = strtoul(p, &end, 10);
            if (end == p) break;
            if (levels < max) pids[levels] = (uint32_t)v;
            levels++;
            p = end;
        }
        break;
    }
    fclose(f);
    return levels;
}

int cc_os_pidns(uint64_t *id)
{
    if (cc_fault(CC_FP_NSPID)) return errno = EIO, -1;
    struct stat st;
    if (stat("/proc/self/ns/pid", &st) != 0) return -1;
    *id = (uint64_t)st.st_ino;
    return 0;
}
