/* The memory region's own state under corruption, with live processes (no
 * CUDA: the ledger linked directly; every process is a fork of this one and
 * attaches on its own). Modes:
 *   slots    a live holder A (60 of 100 MiB), then slots_hw = 0 and 1 GiB in
 *            every free slot: B gets exactly the 40 MiB left, not 100 + the
 *            garbage; after A dies B gets all 100 (items 6, 7).
 *   rebuild  A holds 3840 MiB of a 4 GiB cap; the file is then rebuilt under
 *            it (zeroed magic; truncate to 2 MiB; another layout) and B
 *            attaches: B gets at most the 256 MiB left each time (item 5).
 *   sigbus   A and B hold memory and keep allocating while the file is
 *            truncated to 100 bytes under them: neither dies, the cap still
 *            holds afterwards; a SIGBUS of the process's own making (its
 *            own truncated file) still kills it, and raise(SIGBUS) still
 *            reaches the application's handler (item 2).
 *   files    memory.region as a hard link to a file elsewhere, a FIFO, a
 *            symbolic link, a directory, a file of another user: the
 *            process runs on a private ledger (per-process cap), nothing
 *            blocks and the other file is not touched (item 8).
 *   wrap     a live holder A (60 of 100 MiB) whose slot's count is forged
 *            to 2^64 - 1, then A reserves 2 MiB and B at once grabs what it
 *            can: B gets at most the 38 MiB left (A's add saturates; a
 *            wrapped add left A's slot reading 2 MiB - 1, and B took 90 MiB
 *            until A's keeper repaired it: faults_lib's "a live slot's count
 *            = 2^64 - 1", 274 MiB of a 256 + 16 bound once in 7 suite runs,
 *            2026-12-06). WRAP_ROUNDS rounds, each timed inside one keeper
 *            period of 100 ms.
 *   relink   memory.region, a file of ours that is not a region, is open in
 *            a process waiting for its init lock (the test holds it); then
 *            the file gets a second name outside the folder and loses its
 *            name in the folder, and the lock is released: the process
 *            builds a new memory.region and the file outside keeps its
 *            content (before, it was rebuilt into a 1 MiB region: faults.lib,
 *            "during: hard link in place of memory.region", 2026-12-06).
 * Negative controls (tests/memory.cmake, WILL_FAIL): slots with
 * -DCC_ML_TEST_TRUST_HW (the sum below slots_hw, free slots counted, no
 * per-slot clamp): B is given 100 MiB beside A's 60; rebuild with
 * -DCC_ML_TEST_NO_REPUBLISH: B is given 4 GiB beside A's 3840 MiB; sigbus
 * with -DCC_TEST_NO_SIGBUS_GUARD: A and B die of SIGBUS; files with
 * -DCC_TEST_NO_FILE_CHECKS: the hard-linked file is rewritten; wrap with
 * -DCC_ML_TEST_WRAP_ADD (the add wraps): B is given 90 MiB in most rounds,
 * and the test fails if any round passes the cap; relink with
 * -DCC_TEST_NO_PATH_RECHECK (the file held not checked against the path
 * after the lock): the file outside is rebuilt. Each was run
 * and fails as stated, every time (the outcome does not depend on timing:
 * each step waits for the previous one). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cap/memledger.h"
#include "check.h"
#include "cudacap/abi_mem_region.h"
#include "mp_util.h"

#define MIB (1ull << 20)
static const char *UUID = "GPU-00000000-test-stat-0000-000000000000";
static char g_dir[900], g_path[1000];

struct shm {
    int step;      /* parent -> children */
    int ready[4];  /* children -> parent */
    int result[4];
};
static struct shm *S;

static void wait_for(int *p, int v)
{
    uint64_t t0 = now_ns();
    while (__atomic_load_n(p, __ATOMIC_ACQUIRE) < v) {
        if (now_ns() - t0 > 20000000000ull) {
            fprintf(stderr, "pid %d: timeout waiting\n", (int)getpid());
            _exit(9);
        }
        usleep(500);
    }
}

static void set(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

static cc_mem_region_t *map_file(void)
{
    int fd = open(g_path, O_RDWR);
    if (fd < 0) return NULL;
    void *p = mmap(NULL, CC_MEM_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

static int status_ok(pid_t p, const char *what)
{
    int st = 0;
    waitpid(p, &st, 0);
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    CHECK(ok, "%s: status 0x%x%s", what, st, WIFSIGNALED(st) ? " (killed by a signal)" : "");
    return ok;
}

/* Reserves chunks of `chunk` until refused; returns the total granted. */
static uint64_t grab(int h, uint64_t chunk, uint64_t cap, uint64_t limit)
{
    uint64_t got = 0;
    while (got < limit && cc_ml_reserve(h, chunk, cap) == 0) got += chunk;
    return got;
}

/* In a fork child: attached, holding `bytes` of a cap of `cap` (exit 2 if refused). */
static int holder(uint64_t cap, uint64_t bytes)
{
    cc_ml_attach(g_dir);
    int h = cc_ml_device(g_dir, UUID, cap);
    if (cc_ml_reserve(h, bytes, cap) != 0) _exit(2);
    return h;
}

/* ---- slots --------------------------------------------------------------- */

static int slots(void)
{
    const uint64_t cap = 100 * MIB;
    pid_t a = fork();
    if (a == 0) {
        holder(cap, 60 * MIB);
        set(&S->ready[0], 1);
        wait_for(&S->step, 2);
        _exit(0);
    }
    wait_for(&S->ready[0], 1);
    pid_t b = fork();
    if (b == 0) {
        cc_ml_attach(g_dir);
        int h = cc_ml_device(g_dir, UUID, cap);
        set(&S->ready[1], 1);
        wait_for(&S->step, 1); /* the parent corrupts the region meanwhile */
        uint64_t got = grab(h, 10 * MIB, cap, 200 * MIB);
        printf("slots: slots_hw = 0: B got %llu MiB beside A's 60 (cap 100)\n",
               (unsigned long long)(got / MIB));
        int bad = got != 40 * MIB;
        cc_ml_release(h, got);
        set(&S->ready[1], 2);
        wait_for(&S->step, 3); /* A exited, garbage in every free slot, hw = all */
        uint64_t more = grab(h, 10 * MIB, cap, 200 * MIB);
        printf("slots: A gone, 1 GiB in every free slot: B got %llu MiB\n",
               (unsigned long long)(more / MIB));
        bad |= more != 100 * MIB;
        _exit(bad);
    }
    wait_for(&S->ready[1], 1);
    cc_mem_region_t *r = map_file();
    CHECK(r != NULL, "cannot map %s", g_path);
    if (!r) return 1;
    __atomic_store_n(&r->slots_hw, 0, __ATOMIC_SEQ_CST);
    set(&S->step, 1);
    wait_for(&S->ready[1], 2);
    set(&S->step, 2);
    status_ok(a, "A (slots)");
    for (int i = 0; i < CC_MEM_SLOTS; i++)
        if (!__atomic_load_n(&r->proc[i].owner, __ATOMIC_SEQ_CST) ||
            __atomic_load_n(&r->proc[i].owner, __ATOMIC_SEQ_CST) == (uint32_t)a)
            for (int d = 0; d < CC_MEM_DEVS; d++) {
                if (r->proc[i].owner == (uint32_t)a) continue; /* A's: swept */
                r->used[d][i] = 1024 * MIB;
            }
    __atomic_store_n(&r->slots_hw, CC_MEM_SLOTS, __ATOMIC_SEQ_CST);
    set(&S->step, 3);
    status_ok(b, "B (slots)");
    munmap(r, CC_MEM_FILE_SIZE);
    return check_failures;
}

/* ---- wrap ---------------------------------------------------------------- */

#define WRAP_ROUNDS 20

static int wrap(void)
{
    const uint64_t cap = 100 * MIB;
    pid_t a = fork();
    if (a == 0) {
        int h = holder(cap, 60 * MIB);
        cc_mem_region_t *r = map_file();
        int mine = -1;
        for (int i = 0; r && i < CC_MEM_SLOTS && mine < 0; i++)
            if (__atomic_load_n(&r->proc[i].owner, __ATOMIC_SEQ_CST) &&
                __atomic_load_n(&r->used[0][i], __ATOMIC_SEQ_CST) == 60 * MIB)
                mine = i;
        if (mine < 0) _exit(3);
        set(&S->ready[0], 1);
        int bad = 0;
        for (int k = 1; k <= WRAP_ROUNDS; k++) {
            wait_for(&S->ready[1], k); /* B attached, or done with the last round */
            __atomic_store_n(&r->used[0][mine], UINT64_MAX, __ATOMIC_SEQ_CST);
            /* Granted: a saturated count of our own is repaired, then the reserve tried again. */
            int rc = cc_ml_reserve(h, 2 * MIB, cap);
            if (rc != 0) fprintf(stderr, "wrap: A's reserve of 2 MiB refused in round %d\n", k), bad = 1;
            set(&S->step, k);
            wait_for(&S->result[1], k);
            if (rc == 0) cc_ml_release(h, 2 * MIB);
        }
        _exit(bad ? 4 : 0);
    }
    wait_for(&S->ready[0], 1);
    pid_t b = fork();
    if (b == 0) {
        cc_ml_attach(g_dir);
        int h = cc_ml_device(g_dir, UUID, cap);
        uint64_t worst = 0;
        int over = 0;
        for (int k = 1; k <= WRAP_ROUNDS; k++) {
            set(&S->ready[1], k);
            while (__atomic_load_n(&S->step, __ATOMIC_ACQUIRE) < k) { /* spin: inside A's keeper period */
            }
            uint64_t got = grab(h, 2 * MIB, cap, 200 * MIB);
            cc_ml_release(h, got);
            if (got > worst) worst = got;
            over += got > 38 * MIB;
            set(&S->result[1], k);
        }
        printf("wrap: A's count forged to 2^64 - 1, then A +2 MiB: B got at most %llu MiB beside A's 62 "
               "(cap 100), over the cap in %d of %d rounds\n",
               (unsigned long long)(worst / MIB), over, WRAP_ROUNDS);
        _exit(over ? 1 : 0);
    }
    int ok = status_ok(b, "B (wrap)");
    CHECK(ok, "B was given more than the 38 MiB left beside A's 62 MiB (cap 100)");
    status_ok(a, "A (wrap: its own reserve refused, or its slot not found)");
    return check_failures;
}

/* ---- relink --------------------------------------------------------------- */

/* Whether process p has the file of inode ino open. */
static int holds_open(pid_t p, ino_t ino)
{
    char d[64];
    snprintf(d, sizeof d, "/proc/%d/fd", (int)p);
    DIR *dir = opendir(d);
    if (!dir) return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(dir))) {
        char f[400];
        struct stat st;
        snprintf(f, sizeof f, "%s/%s", d, e->d_name);
        found = e->d_name[0] != '.' && stat(f, &st) == 0 && st.st_ino == ino;
    }
    closedir(dir);
    return found;
}

static int relink(const char *base)
{
    static const char text[] = "a file outside the state folder\n";
    char outside[1000];
    snprintf(outside, sizeof outside, "%s/outside", base);
    int fd = open(g_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    struct stat st;
    CHECK(fd >= 0 && write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1) &&
              fcntl(fd, F_SETLK, &fl) == 0 && fstat(fd, &st) == 0,
          "cannot make %s and hold its init lock", g_path);
    if (check_failures) return 1;
    pid_t p = fork();
    if (p == 0) _exit(cc_ml_attach(g_dir) ? 0 : 1); /* 0: in a shared region */
    uint64_t t0 = now_ns();
    while (!holds_open(p, st.st_ino) && now_ns() - t0 < 10000000000ull) usleep(1000);
    CHECK(holds_open(p, st.st_ino), "the process never opened %s", g_path);
    usleep(100000); /* past its open's checks, polling for the lock */
    CHECK(link(g_path, outside) == 0 && unlink(g_path) == 0, "cannot move %s out", g_path);
    close(fd); /* the lock goes */
    int shared = status_ok(p, "the attaching process (0: attached to a shared region)");
    char buf[2 * sizeof text];
    int o = open(outside, O_RDONLY);
    ssize_t n = o >= 0 ? read(o, buf, sizeof buf) : -1;
    struct stat os = {0};
    CHECK(o >= 0 && fstat(o, &os) == 0 && os.st_size == (off_t)(sizeof text - 1) &&
              n == (ssize_t)(sizeof text - 1) && !memcmp(buf, text, sizeof text - 1),
          "the file moved out of the folder was written: %lld bytes now", (long long)os.st_size);
    if (o >= 0) close(o);
    struct stat now;
    CHECK(lstat(g_path, &now) == 0 && now.st_size == CC_MEM_FILE_SIZE, "no new %s built", g_path);
    printf("relink: the file moved out holds %lld bytes (it held %zu); the process %s a new "
           "memory.region\n", (long long)os.st_size, sizeof text - 1, shared ? "shares" : "does not share");
    return check_failures;
}

/* ---- rebuild ------------------------------------------------------------- */

static void corrupt(int how)
{
    if (how == 0) { /* zeroed magic */
        cc_mem_region_t *r = map_file();
        if (r) __atomic_store_n(&r->hdr.magic, 0, __ATOMIC_SEQ_CST), munmap(r, CC_MEM_FILE_SIZE);
    } else if (how == 1) { /* truncate -s 2M */
        if (truncate(g_path, 2 * CC_MEM_FILE_SIZE) != 0) perror("truncate");
    } else { /* another layout */
        cc_mem_region_t *r = map_file();
        if (r) __atomic_store_n(&r->hdr.layout_version, 99, __ATOMIC_SEQ_CST), munmap(r, CC_MEM_FILE_SIZE);
    }
}

static int rebuild(void)
{
    const uint64_t cap = 4096 * MIB;
    const char *names[] = {"zeroed magic", "truncate -s 2M", "another layout"};
    for (int how = 0; how < 3; how++) {
        memset(S, 0, sizeof *S);
        pid_t a = fork();
        if (a == 0) {
            cc_ml_attach(g_dir);
            int h = cc_ml_device(g_dir, UUID, cap);
            if (cc_ml_reserve(h, 3840 * MIB, cap) != 0) _exit(2);
            set(&S->ready[0], 1);
            wait_for(&S->step, 2); /* idle meanwhile: only the keeper can speak for it */
            _exit(0);
        }
        wait_for(&S->ready[0], 1);
        corrupt(how);
        pid_t b = fork();
        if (b == 0) {
            cc_ml_attach(g_dir);
            int h = cc_ml_device(g_dir, UUID, cap);
            uint64_t got = grab(h, 64 * MIB, cap, 8192 * MIB);
            printf("rebuild (%s): B got %llu MiB beside A's 3840 (cap 4096)\n", names[how],
                   (unsigned long long)(got / MIB));
            _exit(got > 256 * MIB);
        }
        status_ok(b, names[how]);
        set(&S->step, 2);
        status_ok(a, "A (rebuild)");
    }
    return check_failures;
}

/* ---- sigbus -------------------------------------------------------------- */

static void churn_child(int id, uint64_t cap)
{
    cc_ml_attach(g_dir);
    int h = cc_ml_device(g_dir, UUID, cap);
    if (cc_ml_reserve(h, 100 * MIB, cap) != 0) _exit(2);
    set(&S->ready[id], 1);
    uint64_t seed = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
    /* Allocate and free through the truncation: every call touches the
     * mapping. */
    while (__atomic_load_n(&S->step, __ATOMIC_ACQUIRE) < 2) {
        uint64_t x = (1 + rnd(&seed) % 8) * MIB;
        if (cc_ml_reserve(h, x, cap) == 0) cc_ml_release(h, x);
        cc_ml_used(h);
    }
    /* Afterwards the cap still holds: nobody may pass it (per process or
     * container-wide, whichever the process runs on now). */
    set(&S->ready[id], 2);
    wait_for(&S->step, 3);
    uint64_t got = grab(h, 10 * MIB, cap, 4 * cap);
    S->result[id] = (int)((got + 100 * MIB) / MIB);
    _exit(got + 100 * MIB > cap);
}

static int sigbus(void)
{
    const uint64_t cap = 512 * MIB;
    pid_t k[2];
    for (int i = 0; i < 2; i++)
        if ((k[i] = fork()) == 0) churn_child(i, cap);
    wait_for(&S->ready[0], 1);
    wait_for(&S->ready[1], 1);
    usleep(50000);
    if (truncate(g_path, 100) != 0) perror("truncate");
    usleep(300000);
    set(&S->step, 2);
    int st = 0, dead[2] = {0, 0}, sts[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        uint64_t t0 = now_ns();
        while (__atomic_load_n(&S->ready[i], __ATOMIC_ACQUIRE) < 2 && now_ns() - t0 < 5000000000ull &&
               !dead[i]) {
            if (waitpid(k[i], &sts[i], WNOHANG) == k[i]) dead[i] = 1;
            usleep(1000);
        }
    }
    set(&S->step, 3);
    for (int i = 0; i < 2; i++) {
        if (!dead[i]) waitpid(k[i], &sts[i], 0);
        CHECK(WIFEXITED(sts[i]) && WEXITSTATUS(sts[i]) == 0,
              "process %d allocating through a truncation: status 0x%x%s", i, sts[i],
              WIFSIGNALED(sts[i]) ? " (killed by a signal)" : "");
    }
    printf("sigbus: A and B held %d and %d MiB after the truncation (cap %llu each or together)\n",
           S->result[0], S->result[1], (unsigned long long)(cap / MIB));

    /* A fault in the process's own mapping is not ours: it still kills. */
    pid_t c = fork();
    if (c == 0) {
        cc_ml_attach(g_dir); /* the guard is installed */
        char p[1100];
        snprintf(p, sizeof p, "%s/own", g_dir);
        int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || ftruncate(fd, 8192) != 0) _exit(3);
        volatile char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) _exit(3);
        if (ftruncate(fd, 0) != 0) _exit(3);
        m[4096] = 1; /* SIGBUS */
        _exit(0);
    }
    waitpid(c, &st, 0);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    /* The sanitizer's handler was there first: we pass the fault on to it,
     * and it reports and exits instead of the default action. */
    int died = WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0);
#else
    int died = WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS;
#endif
    CHECK(died, "a fault outside our mappings: status 0x%x", st);
    /* raise(SIGBUS) goes to the application's handler, installed before. */
    pid_t e = fork();
    if (e == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = (void (*)(int))_exit; /* _exit(SIGBUS == 7) */
        sigaction(SIGBUS, &sa, NULL);
        cc_ml_attach(g_dir);
        raise(SIGBUS);
        _exit(0);
    }
    waitpid(e, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == SIGBUS, "raise(SIGBUS): status 0x%x", st);
    return check_failures;
}

/* ---- files --------------------------------------------------------------- */

static int private_case(const char *name)
{
    pid_t p = fork();
    if (p == 0) {
        alarm(10); /* a FIFO must not block the open */
        const uint64_t cap = 100 * MIB;
        int shared = cc_ml_attach(g_dir);
        int h = cc_ml_device(g_dir, UUID, cap);
        int bad = shared != 0;
        bad |= grab(h, 10 * MIB, cap, 1000 * MIB) != cap; /* still capped, per process */
        _exit(bad);
    }
    int ok = status_ok(p, name);
    printf("files: %-12s %s\n", name, ok ? "private ledger, capped" : "FAILED");
    return ok;
}

static int files(const char *base)
{
    char other[1000], cmd[2100];
    /* Hard link: a file elsewhere with content of its own. */
    snprintf(other, sizeof other, "%s/x", base);
    int fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, "precious", 8) != 8) return 1;
    close(fd);
    unlink(g_path);
    if (link(other, g_path) != 0) perror("link");
    private_case("hard link");
    struct stat st;
    stat(other, &st);
    CHECK(st.st_size == 8, "the hard-linked file was rewritten (size %lld)", (long long)st.st_size);
    unlink(g_path);
    if (mkfifo(g_path, 0600) != 0) perror("mkfifo");
    private_case("FIFO");
    unlink(g_path);
    if (symlink(other, g_path) != 0) perror("symlink");
    private_case("symlink");
    stat(other, &st);
    CHECK(st.st_size == 8, "the symlink's target was rewritten");
    unlink(g_path);
    mkdir(g_path, 0700);
    private_case("directory");
    rmdir(g_path);
    if (geteuid() == 0) {
        fd = open(g_path, O_RDWR | O_CREAT, 0600);
        if (fd >= 0) {
            if (fchown(fd, 65534, 65534) != 0) perror("fchown");
            close(fd);
        }
        private_case("other owner");
        unlink(g_path);
    }
    snprintf(cmd, sizeof cmd, "true");
    return check_failures;
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    const char *mode = argv[1], *base = argv[2];
    char cmd[2100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", base, base);
    if (system(cmd) != 0) return 1;
    snprintf(g_dir, sizeof g_dir, "%s/d", base);
    snprintf(g_path, sizeof g_path, "%s/%s", g_dir, CC_MEM_REGION_FILE);
    mkdir(g_dir, 0700);
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!strcmp(mode, "slots")) slots();
    else if (!strcmp(mode, "rebuild")) rebuild();
    else if (!strcmp(mode, "sigbus")) sigbus();
    else if (!strcmp(mode, "files")) files(base);
    else if (!strcmp(mode, "wrap")) wrap();
    else if (!strcmp(mode, "relink")) relink(base);
    else return 2;
    CHECK_EXIT();
}
