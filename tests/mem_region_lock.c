/* The memory region's init lock held by someone else, and a folder that
 * cannot hold the region (no CUDA; each process a fork of this one):
 *   held     a foreign process holds byte 0 of memory.region (the init
 *            lock, as a process stopped inside a rebuild would) while the
 *            region is built and a live process A holds 60 of 100 MiB: a
 *            new process B attaches within CC_REGION_LOCK_WAIT_NS + 2 s and
 *            shares the ledger (A's 60 MiB count: 41 MiB more refused, 40
 *            fit).
 *   unbuilt  the same lock on a region that is not built (its header
 *            zeroed, as in the middle of a rebuild): B gives up within the
 *            same bound and is capped on its own.
 *   nospace  the filesystem cannot back the file (the fault point
 *            `reserve`: fallocate says ENOSPC): the open fails and names
 *            the space; B is capped on its own, with no SIGBUS.
 *   tmpfs    as root, the folder on a 64 KiB tmpfs (the region does not
 *            fit): the same, from the kernel; skipped when no mount.
 * Before, the init lock was a blocking wait: B was still blocked after 20 s
 * (the red team), and a full filesystem surfaced as a SIGBUS at first
 * write. Control (mem.region.lock.control): region.c built with
 * CC_TEST_UNBOUNDED_INIT_LOCK (the blocking wait): B hangs in `held` and
 * its 10 s alarm kills it; checked to fail every run. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cap/memledger.h"
#include "check.h"
#include "mp_util.h"
#include "common/fault.h"
#include "cudacap/abi_mem_region.h"
#include "region/region.h"

#define MIB (1ull << 20)
#define CAP (100 * MIB)
static const char *UUID = "GPU-00000000-test-lock-0000-000000000000";

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* B: attach (timed), then what the cap allows. want_shared: 1, A's 60 MiB
 * must count; 0, capped on its own (all 100 MiB fit). */
static int process_b(const char *dir, int want_shared, const char *fault)
{
    check_failures = 0; /* the parent's, inherited by the fork */
    alarm(10);
    if (fault) cc_fault_configure(fault, NULL);
    double t0 = now_s();
    int shared = cc_ml_attach(dir);
    double took = now_s() - t0;
    int h = cc_ml_device(dir, UUID, CAP);
    double bound = (double)CC_REGION_LOCK_WAIT_NS / 1e9 + 2;
    printf("  attach took %.2f s, shared %d\n", took, shared);
    CHECK(took < bound, "attach took %.2f s (bound %.1f)", took, bound);
    CHECK(shared == want_shared, "shared %d, want %d", shared, want_shared);
    if (want_shared) {
        CHECK(cc_ml_reserve(h, 41 * MIB, CAP) != 0, "41 MiB granted beside A's 60 of 100");
        CHECK(cc_ml_reserve(h, 40 * MIB, CAP) == 0, "40 MiB refused beside A's 60 of 100");
    } else {
        CHECK(cc_ml_reserve(h, CAP, CAP) == 0, "own cap: 100 MiB refused");
    }
    return check_failures ? 1 : 0;
}

static int run_b(const char *name, const char *dir, int want_shared, const char *fault)
{
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) _exit(process_b(dir, want_shared, fault));
    int st = 0;
    waitpid(p, &st, 0);
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    printf("%-8s %s\n", name, ok ? "ok" : WIFSIGNALED(st) ? "KILLED (hung past 10 s?)" : "FAILED");
    CHECK(ok, "case %s (status 0x%x)", name, st);
    return ok;
}

/* The foreign holder: an open file description of our own with an OFD
 * write lock on byte 0, as a stopped process's would be. */
static int hold_byte0(const char *path)
{
    int fd = open(path, O_RDWR);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (fd < 0 || fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        fprintf(stderr, "cannot lock byte 0 of %s\n", path);
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

int main(int argc, char **argv)
{
    char dir[900], path[1000];
    if (argc < 2 || fresh_state_dir(argv[1], dir, sizeof dir, path, sizeof path) != 0) return 2;
    const char *base = argv[1];

    /* A: builds the region, holds 60 MiB, lives until told. */
    int go[2], ready[2];
    if (pipe(go) != 0 || pipe(ready) != 0) return 1;
    pid_t a = fork();
    if (a == 0) {
        close(go[1]);
        int h = (cc_ml_attach(dir), cc_ml_device(dir, UUID, CAP));
        char c = cc_ml_reserve(h, 60 * MIB, CAP) == 0 ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1) _exit(1);
        if (read(go[0], &c, 1) < 0) _exit(1);
        _exit(0);
    }
    close(go[0]);
    char c = 0;
    CHECK(read(ready[0], &c, 1) == 1 && c == 'y', "A did not reserve its 60 MiB");

    int fd = hold_byte0(path);
    CHECK(fd >= 0, "no foreign lock");
    run_b("held", dir, 1, NULL);
    close(go[1]);
    waitpid(a, NULL, 0);

    /* Not built: the header zeroed while the lock is held. */
    static const char zero[64];
    CHECK(pwrite(fd, zero, sizeof zero, 0) == (ssize_t)sizeof zero, "cannot zero the header");
    run_b("unbuilt", dir, 0, NULL);
    close(fd);

    /* No space: the fault point, on a fresh folder. */
    snprintf(dir, sizeof dir, "%s/nospace", base);
    run_b("nospace", dir, 0, "reserve:1:sticky");

    /* A real small filesystem, where we may mount one. */
    snprintf(dir, sizeof dir, "%s/tmpfs", base);
    mkdir(dir, 0700);
    if (geteuid() == 0 && mount("cudacap-test", dir, "tmpfs", 0, "size=64k") == 0) {
        run_b("tmpfs", dir, 0, NULL);
        umount2(dir, MNT_DETACH);
    } else {
        printf("tmpfs    skipped (not root, or no mount here)\n");
    }
    CHECK_EXIT();
}
