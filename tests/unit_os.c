/* The OS layer's contract (src/os/os.h), on libcudacap_os alone: each
 * entry's success, its documented failures (a missing path, a symbolic
 * link, a FIFO that must not block, things that are not regular files), and
 * each fault point firing with the documented answer.
 *   unit_os [DIR]   (a scratch folder, emptied first; default: a temporary one) */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "common/fault.h"
#include "os/os.h"

static char dir[PATH_MAX];

/* DIR/name; the last 4 results stay valid (copy one kept longer). */
static const char *at_path(const char *name)
{
    static char p[4][PATH_MAX + 64];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* A child that has exited and been reaped: its pid names no process. */
static pid_t dead_pid(void)
{
    pid_t c = fork();
    if (c == 0) _exit(0);
    waitpid(c, NULL, 0);
    return c;
}

static void files(void)
{
    struct stat st;
    int at = 0;
    char f[PATH_MAX + 64];
    snprintf(f, sizeof f, "%s", at_path("file"));
    int fd = cc_os_open_regular(f, O_RDWR | O_CREAT, 0600, &st, &at);
    CHECK(fd >= 0 && S_ISREG(st.st_mode) && st.st_size == 0, "open_regular(create): %d %s", fd,
          strerror(errno));
    CHECK(fd < 0 || (fcntl(fd, F_GETFD) & FD_CLOEXEC), "no O_CLOEXEC");
    CHECK(fd < 0 || (fcntl(fd, F_GETFL) & O_NONBLOCK), "no O_NONBLOCK");

    errno = 0, at = 0;
    CHECK(cc_os_open_regular(at_path("absent"), O_RDONLY, 0, &st, &at) == -1 && errno == ENOENT &&
          at == CC_OS_AT_OPEN, "missing path: errno %d at %d", errno, at);

    CHECK(symlink(f, at_path("link")) == 0, "symlink: %s", strerror(errno));
    errno = 0, at = 0;
    CHECK(cc_os_open_regular(at_path("link"), O_RDONLY, 0, &st, &at) == -1 && errno == ELOOP &&
          at == CC_OS_AT_OPEN, "symbolic link followed: errno %d at %d", errno, at);

    /* Read-only, as an observer opens: without O_NONBLOCK this waits for a
     * writer forever (the alarm ends the test instead). */
    CHECK(mkfifo(at_path("fifo"), 0600) == 0, "mkfifo: %s", strerror(errno));
    alarm(10);
    errno = 0, at = 0;
    CHECK(cc_os_open_regular(at_path("fifo"), O_RDONLY, 0, &st, &at) == -1 && errno == EINVAL &&
          at == CC_OS_AT_TYPE && S_ISFIFO(st.st_mode), "FIFO: errno %d at %d", errno, at);
    alarm(0);

    errno = 0, at = 0;
    CHECK(cc_os_open_regular(dir, O_RDONLY, 0, &st, &at) == -1 && errno == EINVAL &&
          at == CC_OS_AT_TYPE && S_ISDIR(st.st_mode), "folder read-only: errno %d at %d", errno, at);
    errno = 0, at = 0;
    CHECK(cc_os_open_regular(dir, O_RDWR, 0, &st, &at) == -1 && errno == EISDIR &&
          at == CC_OS_AT_OPEN, "folder read-write: errno %d at %d", errno, at);
    errno = 0, at = 0;
    CHECK(cc_os_open_regular("/dev/null", O_RDONLY, 0, &st, &at) == -1 && errno == EINVAL &&
          at == CC_OS_AT_TYPE && S_ISCHR(st.st_mode), "device: errno %d at %d", errno, at);
    /* at may be NULL. */
    CHECK(cc_os_open_regular(at_path("absent"), O_RDONLY, 0, &st, NULL) == -1, "at NULL");

    CHECK(cc_os_ftruncate(fd, 4096) == 0, "ftruncate: %s", strerror(errno));
    CHECK(cc_os_fstat(fd, &st) == 0 && st.st_size == 4096, "fstat after ftruncate");
    errno = 0;
    CHECK(cc_os_fstat(-1, &st) == -1 && errno == EBADF, "fstat(-1): errno %d", errno);
    int ro = cc_os_open_regular(f, O_RDONLY, 0, &st, NULL);
    CHECK(ro >= 0 && cc_os_ftruncate(ro, 0) == -1, "ftruncate on a read-only descriptor");
    CHECK(cc_os_lstat(at_path("link"), &st) == 0 && S_ISLNK(st.st_mode), "lstat of the link");
    errno = 0;
    CHECK(cc_os_lstat(at_path("absent"), &st) == -1 && errno == ENOENT, "lstat missing: %d", errno);
    if (ro >= 0) close(ro);
    if (fd >= 0) close(fd);
}

static void folders(void)
{
    struct stat st;
    mode_t old = umask(0);
    const char *deep = at_path("a/b/c");
    CHECK(cc_os_mkdirs(deep, 0700, 0711) == 0, "mkdirs chain: %s", strerror(errno));
    CHECK(stat(deep, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700, "leaf mode");
    CHECK(stat(at_path("a/b"), &st) == 0 && (st.st_mode & 0777) == 0711, "parent mode %o",
          st.st_mode & 0777);
    CHECK(cc_os_mkdirs(deep, 0700, 0711) == 0, "existing folder");
    CHECK(cc_os_mkdirs(at_path("single"), 0700, 0711) == 0 && stat(at_path("single"), &st) == 0,
          "one level");
    umask(old);
    errno = 0;
    CHECK(cc_os_mkdirs(at_path("file"), 0700, 0711) == -1 && errno == ENOTDIR, "a file: %d", errno);
    errno = 0;
    CHECK(cc_os_mkdirs(at_path("file/under"), 0700, 0711) == -1 && errno == ENOTDIR,
          "under a file: %d", errno);
    static char longp[PATH_MAX + 16];
    memset(longp, 'x', sizeof longp - 1);
    longp[0] = '/';
    errno = 0;
    CHECK(cc_os_mkdirs(longp, 0700, 0711) == -1, "path over PATH_MAX");
}

static void mappings(void)
{
    struct stat st;
    int fd = cc_os_open_regular(at_path("file"), O_RDWR, 0, &st, NULL);
    CHECK(fd >= 0 && st.st_size == 4096, "reopen");
    char *m = cc_os_map_shared(NULL, 4096, fd, 1);
    CHECK(m != NULL, "map_shared: %s", strerror(errno));
    if (m) {
        m[10] = 42;
        char c = 0;
        CHECK(pread(fd, &c, 1, 10) == 1 && c == 42, "shared write not in the file");
        /* Over our own mapping (MAP_FIXED): the same address, the file again. */
        char *again = cc_os_map_shared(m, 4096, fd, 1);
        CHECK(again == m && m[10] == 42, "fixed remap %p != %p", (void *)again, (void *)m);
    }
    errno = 0;
    CHECK(cc_os_map_shared(NULL, 4096, -1, 1) == NULL && errno == EBADF, "map of -1: %d", errno);
    int ro = cc_os_open_regular(at_path("file"), O_RDONLY, 0, &st, NULL);
    errno = 0;
    CHECK(cc_os_map_shared(NULL, 4096, ro, 1) == NULL && errno == EACCES, "writable map of a "
          "read-only descriptor: %d", errno);
    char *r = cc_os_map_shared(NULL, 4096, ro, 0);
    CHECK(r && r[10] == 42, "read-only map");
    cc_os_unmap(r, 4096);
    close(ro);

    unsigned char *p = cc_os_map_private(1 << 20);
    CHECK(p != NULL, "map_private: %s", strerror(errno));
    int zero = 1;
    for (size_t i = 0; p && i < (1 << 20); i += 4096) zero &= p[i] == 0;
    CHECK(zero, "private mapping not zeroed");
    if (p) p[0] = 1;
    cc_os_unmap(p, 1 << 20);
    errno = 0;
    CHECK(cc_os_map_private(SIZE_MAX / 2) == NULL && errno == ENOMEM, "huge private map: %d", errno);
    cc_os_unmap(NULL, 4096); /* nothing */

    /* A fired point leaves a fixed mapping as it was. */
    cc_fault_configure("map:1", NULL);
    errno = 0;
    CHECK(m && cc_os_map_shared(m, 4096, fd, 1) == NULL && errno == EIO && m[10] == 42,
          "map fault (shared, fixed): errno %d", errno);
    cc_fault_configure(NULL, NULL);
    cc_os_unmap(m, 4096);
    close(fd);
}

static void locks(void)
{
    struct stat st;
    int a = cc_os_open_regular(at_path("file"), O_RDWR, 0, &st, NULL);
    int b = cc_os_open_regular(at_path("file"), O_RDWR, 0, &st, NULL);
    CHECK(a >= 0 && b >= 0, "two descriptions");
    off_t at = -1, n = -1;
    CHECK(cc_os_lock_query(b, 0, 100, &at, &n) == 0, "unlocked file reads as locked");
    CHECK(cc_os_lock(a, 5, 1, F_WRLCK, 0) == 0, "lock: %s", strerror(errno));
    errno = 0;
    int r = cc_os_lock(b, 5, 1, F_WRLCK, 0);
    CHECK(r == -1 && (errno == EAGAIN || errno == EACCES), "second lock: %d errno %d", r, errno);
    CHECK(cc_os_lock(b, 6, 1, F_WRLCK, 0) == 0, "the next byte is free");
    CHECK(cc_os_lock_query(b, 0, 6, &at, &n) == 1 && at == 5 && n == 1, "query: at %lld n %lld",
          (long long)at, (long long)n);
    CHECK(cc_os_lock_query(b, 0, 6, NULL, NULL) == 1, "query without outputs");
    CHECK(cc_os_lock(a, 5, 1, F_UNLCK, 0) == 0, "unlock");
    CHECK(cc_os_lock_query(b, 0, 6, &at, &n) == 0, "unlocked byte still held");
    CHECK(cc_os_lock(b, 5, 1, F_WRLCK, 1) == 0, "waiting lock on a free byte");
    errno = 0;
    CHECK(cc_os_lock(-1, 0, 1, F_WRLCK, 0) == -1 && errno == EBADF, "lock(-1): %d", errno);
    errno = 0;
    CHECK(cc_os_lock_query(-1, 0, 1, &at, &n) == -1 && errno == EBADF, "query(-1): %d", errno);
    close(a);
    close(b);
}

static void processes(void)
{
    pid_t gone = dead_pid();
    CHECK(cc_os_pid_alive(getpid()) == 1, "we are not alive");
    CHECK(cc_os_pid_alive(gone) == 0, "reaped child %d alive", (int)gone);
    CHECK(cc_os_pid_alive(0) == 0 && cc_os_pid_alive(-1) == 0, "pid <= 0 alive");

    char s = 0;
    uint64_t t = 0, t2 = 0;
    CHECK(cc_os_proc_stat(getpid(), &s, &t) == 0 && s == 'R' && t > 0, "own stat: %c %llu", s,
          (unsigned long long)t);
    CHECK(cc_os_proc_stat(getpid(), &s, &t2) == 0 && t2 == t, "start time moved");
    errno = 0;
    CHECK(cc_os_proc_stat(gone, &s, &t) == -1 && errno == ENOENT, "stat of a reaped child: %d",
          errno);
    errno = 0;
    CHECK(cc_os_proc_stat(0, &s, &t) == -1, "stat of pid 0");

    /* A zombie: alive to kill(), 'Z' in its stat. */
    pid_t z = fork();
    if (z == 0) _exit(0);
    int zs = 0;
    for (int i = 0; i < 500 && !(cc_os_proc_stat(z, &s, &t) == 0 && s == 'Z'); i++)
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    CHECK(cc_os_proc_stat(z, &s, &t) == 0 && s == 'Z' && t > 0, "zombie state %c", s);
    CHECK(cc_os_pid_alive(z) == 1, "a zombie exists until reaped");
    waitpid(z, &zs, 0);

    uint32_t pids[8] = {0};
    int lv = cc_os_nspid(pids, 8);
    CHECK(lv >= 0 && lv <= 8, "nspid levels %d", lv);
    /* The innermost level is our pid as we see it. */
    if (lv >= 1) CHECK(pids[lv - 1] == (uint32_t)getpid(), "innermost %u, pid %d", pids[lv - 1],
                       (int)getpid());
    uint32_t one[1] = {0};
    CHECK(cc_os_nspid(one, 1) == lv && (lv == 0 || one[0] == pids[0]), "max 1: same levels");
    CHECK(cc_os_nspid(NULL, 0) == lv, "max 0 counts the levels");
}

/* Each point, armed at its first call, fails its entry as os.h says. */
static void faults(void)
{
    struct stat st;
    int at = 0;
    int fd = cc_os_open_regular(at_path("file"), O_RDWR, 0, &st, NULL);
    CHECK(fd >= 0, "open");

    cc_fault_configure("open:1", NULL);
    errno = 0;
    CHECK(cc_os_open_regular(at_path("file"), O_RDWR, 0, &st, &at) == -1 && errno == EIO &&
          at == CC_OS_AT_OPEN, "open fault: errno %d at %d", errno, at);
    /* Once (not sticky): the next call opens. */
    int again = cc_os_open_regular(at_path("file"), O_RDWR, 0, &st, NULL);
    CHECK(again >= 0, "open after the fault");
    if (again >= 0) close(again);

    cc_fault_configure("open:2", NULL);
    int first = cc_os_open_regular(at_path("file"), O_RDWR, 0, &st, NULL);
    CHECK(first >= 0, "open:2 fired on the first call");
    CHECK(cc_os_open_regular(at_path("file"), O_RDWR, 0, &st, NULL) == -1 && errno == EIO,
          "open:2 did not fire on the second");
    if (first >= 0) close(first);

    /* fstat inside the open: nothing left open (the lowest free descriptor
     * is the same after as before). */
    int base = open("/dev/null", O_RDONLY);
    close(base);
    cc_fault_configure("fstat:1", NULL);
    errno = 0;
    CHECK(cc_os_open_regular(at_path("file"), O_RDWR, 0, &st, &at) == -1 && errno == EIO &&
          at == CC_OS_AT_FSTAT, "fstat fault in open: errno %d at %d", errno, at);
    int probe = open("/dev/null", O_RDONLY);
    CHECK(probe == base, "descriptor leaked by a failed open (%d, was %d)", probe, base);
    close(probe);
    cc_fault_configure("fstat:1", NULL);
    errno = 0;
    CHECK(cc_os_fstat(fd, &st) == -1 && errno == EIO, "fstat fault: %d", errno);
    cc_fault_configure("fstat:1", NULL);
    errno = 0;
    CHECK(cc_os_lstat(at_path("file"), &st) == -1 && errno == EIO, "lstat fault: %d", errno);

    cc_fault_configure("ftruncate:1", NULL);
    errno = 0;
    CHECK(cc_os_ftruncate(fd, 8192) == -1 && errno == EIO, "ftruncate fault: %d", errno);
    CHECK(cc_os_fstat(fd, &st) == 0 && st.st_size == 4096, "a fired ftruncate sized the file");

    cc_fault_configure("mkdir:1", NULL);
    errno = 0;
    CHECK(cc_os_mkdirs(at_path("faulted"), 0700, 0711) == -1 && errno == EIO &&
          stat(at_path("faulted"), &st) != 0, "mkdir fault: %d", errno);

    cc_fault_configure("map:1", NULL);
    errno = 0;
    CHECK(cc_os_map_shared(NULL, 4096, fd, 1) == NULL && errno == EIO, "map fault (shared): %d",
          errno);
    cc_fault_configure("map:1", NULL);
    errno = 0;
    CHECK(cc_os_map_private(4096) == NULL && errno == EIO, "map fault (private): %d", errno);

    cc_fault_configure("lock:1", NULL);
    errno = 0;
    CHECK(cc_os_lock(fd, 0, 1, F_WRLCK, 0) == -1 && errno == EIO, "lock fault: %d", errno);
    cc_fault_configure("lock:1", NULL);
    errno = 0;
    CHECK(cc_os_lock_query(fd, 0, 1, NULL, NULL) == -1 && errno == EIO, "query fault: %d", errno);
    /* Release has no point: it neither fails nor counts. */
    cc_fault_configure("lock:1", NULL);
    CHECK(cc_os_lock(fd, 0, 1, F_UNLCK, 0) == 0, "unlock took the lock fault");
    CHECK(cc_os_lock(fd, 0, 1, F_WRLCK, 0) == -1 && errno == EIO, "unlock counted as a call");

    cc_fault_configure("proc_stat:1", NULL);
    char s;
    uint64_t t;
    errno = 0;
    CHECK(cc_os_proc_stat(getpid(), &s, &t) == -1 && errno == EIO, "proc_stat fault: %d", errno);

    cc_fault_configure("nspid:1", NULL);
    uint32_t pids[4];
    errno = 0;
    CHECK(cc_os_nspid(pids, 4) == -1 && errno == EIO, "nspid fault: %d", errno);

    /* Liveness: "cannot tell" is alive, even for a process that is gone. */
    pid_t gone = dead_pid();
    cc_fault_configure("alive:1:sticky", NULL);
    CHECK(cc_os_pid_alive(gone) == 1, "alive fault answered dead");
    CHECK(cc_os_pid_alive(gone) == 1, "sticky alive fault answered dead");
    cc_fault_configure(NULL, NULL);
    CHECK(cc_os_pid_alive(gone) == 0, "disarmed: the reaped child still alive");

    /* Disarmed: every entry works again. */
    CHECK(cc_os_fstat(fd, &st) == 0 && cc_os_lock(fd, 0, 1, F_WRLCK, 0) == 0 &&
          cc_os_proc_stat(getpid(), &s, &t) == 0, "disarmed entries fail");
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        snprintf(dir, sizeof dir, "%s", argv[1]);
        char cmd[PATH_MAX + 32];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) return 1;
        if (cc_os_mkdirs(dir, 0700, 0711) != 0) return perror(dir), 1;
    } else {
        snprintf(dir, sizeof dir, "/tmp/unit_os-XXXXXX");
        if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    }
    cc_fault_configure(NULL, NULL); /* whatever CUDACAP_TEST_FAULT says */
    files();
    folders();
    mappings();
    locks();
    processes();
    faults();
    CHECK_EXIT();
}
