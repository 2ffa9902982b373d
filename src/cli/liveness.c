/* Liveness of a state folder (liveness.h). Cost: a walk of the folder, then
 * for every process of the node one read of /proc/<pid>/maps and one stat
 * per open descriptor: a few tens of milliseconds on a busy node, paid once
 * per container start. */
#include "cli/liveness.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli/snapshot.h"
#include "common/controls.h"
#include "cudacap/abi_compute_region.h"
#include "cudacap/abi_mem_region.h"

#define MAX_FILES 256

struct files {
    dev_t dir_dev; /* the folder itself */
    ino_t dir_ino;
    int n;
    dev_t dev[MAX_FILES];
    ino_t ino[MAX_FILES];
    int held; /* a lock on some *.lock file, or a liveness byte of memory.region, is held */
};

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && !strcmp(s + n - m, suffix);
}

/* Every process attached to memory.region or registered in compute.region
 * holds a write lock on its liveness byte (the live base + its process
 * key, past the end of the file; cudacap/abi_region.h) as long as it lives:
 * one query over the whole key range of the regular file name in dfd,
 * whatever the region's content, and across pid namespaces and without the
 * right to read the process's /proc. */
static void CC_CONTROL_POINT(probe_live_bytes)(int dfd, const char *name, struct files *f)
{
    long base = !strcmp(name, CC_MEM_REGION_FILE)  ? (long)CC_MEM_LIVE_BASE
                : !strcmp(name, CC_COMPUTE_FILE) ? (long)CC_COMPUTE_LIVE_BASE
                                                 : 0;
    if (!base) return;
    int lf = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (lf >= 0) {
        if (snap_lock_probe(lf, base + 1, (long)CC_KEY_END - 1) == OWNER_HELD) f->held = 1;
        close(lf);
    }
}

/* Every non-folder entry of the tree at dfd (two levels: the HAMi layout
 * keeps the regions in a *.cache.d subfolder), and the lock files' state. */
static void collect(int dfd, int depth, struct files *f)
{
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* own offset, unlike dup */
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            int sub = depth < 2 ? openat(dirfd(d), e->d_name,
                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                                : -1;
            if (sub >= 0) collect(sub, depth + 1, f), close(sub);
            continue;
        }
        if (f->n < MAX_FILES) f->dev[f->n] = st.st_dev, f->ino[f->n++] = st.st_ino;
        if (S_ISREG(st.st_mode)) probe_live_bytes(dirfd(d), e->d_name, f);
        if (S_ISREG(st.st_mode) && ends_with(e->d_name, ".lock")) {
            int lf = openat(dirfd(d), e->d_name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
            if (lf >= 0) {
                if (snap_lock_probe(lf, 0, 0) == OWNER_HELD) f->held = 1;
                close(lf);
            }
        }
    }
    closedir(d);
}

static int known(const struct files *f, dev_t dev, ino_t ino)
{
    for (int i = 0; i < f->n; i++)
        if (f->ino[i] == ino && f->dev[i] == dev) return 1;
    return 0;
}

/* A state file that is no longer in the folder (deleted, or replaced by a
 * FIFO) is still the folder's while a process maps or holds it: path is
 * its name as the process sees it ("... (deleted)"), whose folder, looked up
 * through the process's own root (its mount namespace), must be ours. Only
 * names cudacap gives are looked at: a stat each. */
static int was_ours(const char *pid, const char *path, const struct files *f)
{
    char p[PATH_MAX + 64], name[PATH_MAX];
    snprintf(name, sizeof name, "%s", path);
    char *del = strstr(name, " (deleted)");
    if (del) *del = 0;
    char *slash = strrchr(name, '/');
    if (!slash || name[0] != '/' || !(ends_with(slash, ".region") || ends_with(slash, ".lock"))) return 0;
    *slash = 0;
    snprintf(p, sizeof p, "/proc/%s/root%s", pid, name);
    struct stat st;
    return stat(p, &st) == 0 && st.st_dev == f->dir_dev && st.st_ino == f->dir_ino;
}

/* Does process pid map or hold open a file of the folder? */
static int uses(const char *pid, const struct files *f)
{
    char p[300], line[1024];
    snprintf(p, sizeof p, "/proc/%s/maps", pid);
    FILE *m = fopen(p, "re");
    int found = 0;
    while (m && !found && fgets(line, sizeof line, m)) {
        unsigned long lo, hi, off, ino;
        unsigned maj, mn;
        int at = 0, whole = strchr(line, '\n') != NULL;
        int ok = sscanf(line, "%lx-%lx %*s %lx %x:%x %lu %n", &lo, &hi, &off, &maj, &mn, &ino, &at) >= 6 &&
                 ino;
        line[strcspn(line, "\n")] = 0;
        if (ok && (known(f, makedev(maj, mn), (ino_t)ino) || (at && was_ours(pid, line + at, f)))) {
            found = 1;
        } else if (ok) {
            /* Some file systems (btrfs subvolumes, overlayfs) show another
             * device here than stat does; map_files says (for root). */
            struct stat st;
            int same_ino = 0;
            for (int i = 0; i < f->n && !same_ino; i++) same_ino = f->ino[i] == (ino_t)ino;
            snprintf(p, sizeof p, "/proc/%s/map_files/%lx-%lx", pid, lo, hi);
            if (same_ino && stat(p, &st) == 0 && known(f, st.st_dev, st.st_ino)) found = 1;
        }
        /* A line longer than the buffer: skip its rest. */
        while (!whole && fgets(line, sizeof line, m)) whole = strchr(line, '\n') != NULL;
    }
    if (m) fclose(m);
    if (found) return 1;
    snprintf(p, sizeof p, "/proc/%s/fd", pid);
    DIR *d = opendir(p);
    struct dirent *e;
    while (d && !found && (e = readdir(d))) {
        struct stat st;
        char target[PATH_MAX];
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "/proc/%s/fd/%s", pid, e->d_name);
        if (stat(p, &st) != 0 || S_ISDIR(st.st_mode)) continue;
        ssize_t tn = -1;
        if (known(f, st.st_dev, st.st_ino) ||
            ((tn = readlink(p, target, sizeof target - 1)) > 0 && (target[tn] = 0, was_ours(pid, target, f))))
            found = 1;
    }
    if (d) closedir(d);
    return found;
}

static int add(long *pids, int n, int max, long pid)
{
    for (int i = 0; i < n; i++)
        if (pids[i] == pid) return n;
    if (n < max) pids[n++] = pid;
    return n;
}

/* The processes that map or hold open a file of the folder, found through
 * the /proc of every process this user may read (one may use a file
 * without a slot or lock to show it), added to pids[0..n). */
static int CC_CONTROL_POINT(scan_proc)(const struct files *f, long *pids, int n, int max)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    char me[24];
    snprintf(me, sizeof me, "%ld", (long)getpid());
    while (d && n < max && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9' || !strcmp(e->d_name, me)) continue;
        if (uses(e->d_name, f)) n = add(pids, n, max, strtol(e->d_name, NULL, 10));
    }
    if (d) closedir(d);
    return n;
}

int live_users(int dfd, long *pids, int max)
{
    static struct snap s; /* large: not on the stack */
    static struct files f;
    char self[64];
    int n = 0;
    /* The folder itself, not the path it was found by. */
    snprintf(self, sizeof self, "/proc/self/fd/%d", dfd);
    snap_read(self, "", &s);
    for (int i = 0; i < s.nproc; i++)
        if (s.proc[i].alive) n = add(pids, n, max, s.proc[i].pid);
    memset(&f, 0, sizeof f);
    struct stat dst;
    if (fstat(dfd, &dst) == 0) f.dir_dev = dst.st_dev, f.dir_ino = dst.st_ino;
    collect(dfd, 0, &f);
    n = scan_proc(&f, pids, n, max);
    if (f.held && n == 0) n = add(pids, n, max, -1);
    return n;
}

int snap_live_pids(const char *dir, long *pids, int max)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    int n = live_users(fd, pids, max);
    close(fd);
    return n;
}
