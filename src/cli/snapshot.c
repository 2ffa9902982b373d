/* Reading a container's state folder (snapshot.h). Costs per call: two
 * private copies of the regions (1 MiB + 64 KiB of pread), a scan of the slots in use, one /proc/<pid>/stat read per
 * slot, and for a held sampling lock a walk of its holder's /proc fd table. */
#include "cli/snapshot.h"
#include "cap/limits.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cap/memledger.h"
#include "cap/compute/sampling_lock.h"
#include "cli/validate.h"
#include "cudacap/abi_counters.h"
#include "region/peek.h"
#include "region/specs.h"
#include "common/clock.h"
#include "common/controls.h"

/* A region's fields checked (cli/validate.h): NULL, or what is wrong in bad. */
static const char *CC_CONTROL_POINT(validate)(const char *(*check)(const void *, char *, size_t),
                                              const void *r, char *bad, size_t len)
{
    return check(r, bad, len);
}

/* A private copy of a region that passed its field checks, or NULL with
 * *state and why saying what was wrong. A copy taken while a process claims
 * or frees a slot can look inconsistent for an instant (the read is not
 * atomic), so a failing one is read again; garbage fails every time. */
static void *read_region(const char *dir, const struct cc_region_spec *spec,
                         const char *(*check)(const void *, char *, size_t), int *state,
                         char *why, size_t len)
{
    for (int attempt = 0;; attempt++) {
        struct cc_peek pk;
        void *r = cc_region_peek(dir, spec, &pk);
        if (!r) {
            static const int st[] = {[CC_PEEK_ABSENT] = SNAP_ABSENT, [CC_PEEK_UNUSABLE] = SNAP_UNUSABLE,
                                     [CC_PEEK_NODATA] = SNAP_NODATA, [CC_PEEK_TRUNCATED] = SNAP_TRUNCATED};
            *state = st[pk.state];
            snprintf(why, len, "%s", pk.why);
            return NULL;
        }
        char bad[160];
        if (validate(check, r, bad, sizeof bad)) {
            cc_region_unpeek(r);
            if (attempt < 2) {
                usleep(2000);
                continue;
            }
            *state = SNAP_CORRUPT;
            snprintf(why, len, "%s/%s is corrupt: %s", dir, spec->file, bad);
            return NULL;
        }
        *state = SNAP_OK;
        why[0] = 0;
        return r;
    }
}

int snap_pid_alive(uint32_t pid, uint32_t host_pid, uint64_t start_time)
{
    if (cc_ml_pid_alive(pid, start_time)) return 1;
    /* Seen from the host, a container's pid may mean nothing; its host pid
     * does, when the start time proves it is the same process. */
    return host_pid && host_pid != pid && start_time && cc_ml_pid_alive(host_pid, start_time);
}

/* Liveness of a slot's key: a pid key as snap_pid_alive; a probed key
 * (no pid anywhere) by its liveness byte in the region file at fd, else
 * by its host pid with the start time. */
static int key_alive(int fd, uint64_t base, uint32_t key, uint32_t host_pid, uint64_t start_time)
{
    if (key < CC_KEY_PIDS) return snap_pid_alive(key, host_pid, start_time);
    int o = fd >= 0 && key < CC_KEY_END ? snap_lock_probe(fd, (long)(base + key), 1) : OWNER_UNKNOWN;
    if (o != OWNER_UNKNOWN) return o == OWNER_HELD;
    return host_pid && start_time && cc_ml_pid_alive(host_pid, start_time);
}

/* The region file for lock probes (-1: none; probes then cannot tell). */
static int open_region_file(const char *dir, const char *file)
{
    char p[1100], why[1280];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, file);
    return cc_peek_open(p, &st, why, sizeof why);
}

/* Copies a UUID out of the file: bounded, printable characters only. */
static void copy_uuid(char *dst, size_t len, const char *src, size_t srclen)
{
    size_t n = 0;
    for (; n < srclen && n + 1 < len && src[n]; n++)
        dst[n] = isprint((unsigned char)src[n]) && src[n] != '"' && src[n] != '\\' ? src[n] : '?';
    dst[n] = 0;
}

const char *snap_nvidia_proc(void)
{
    const char *e = getenv("CUDACAP_NVIDIA_PROC");
    return e && *e ? e : "/proc/driver/nvidia/gpus";
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The NVML index of a UUID: NVML (and nvidia-smi, DCGM) number the GPUs in
 * PCI bus id order, so the index is the rank of the device's folder
 * (/proc/driver/nvidia/gpus/<domain:bus:dev.fn>, fixed width, lower-case
 * hex) among its siblings. *minor: the driver's minor number, which can
 * differ. -1 when the UUID is not listed (no driver, the simulator). */
static int gpu_index(const char *uuid, int *minor)
{
    *minor = -1;
    const char *root = snap_nvidia_proc();
    DIR *d = opendir(root);
    if (!d) return -1;
    char *names[64];
    int n = 0, idx = -1;
    struct dirent *e;
    while (n < 64 && (e = readdir(d)))
        if (e->d_name[0] != '.' && (names[n] = strdup(e->d_name))) n++;
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_name);
    for (int i = 0; i < n && idx < 0; i++) {
        char p[1024], line[256];
        snprintf(p, sizeof p, "%s/%s/information", root, names[i]);
        FILE *f = fopen(p, "re");
        if (!f) continue;
        int mn = -1, match = 0;
        while (fgets(line, sizeof line, f)) {
            if (!strncmp(line, "Device Minor:", 13)) mn = atoi(line + 13);
            if (!strncmp(line, "GPU UUID:", 9)) {
                char *u = line + 9;
                while (*u == ' ' || *u == '\t') u++;
                u[strcspn(u, " \t\n")] = 0;
                match = !strcmp(u, uuid);
            }
        }
        fclose(f);
        if (match) idx = i, *minor = mn;
    }
    for (int i = 0; i < n; i++) free(names[i]);
    return idx;
}

static struct snap_dev *dev_for(struct snap *s, const char *uuid, int slot)
{
    for (int i = 0; i < s->ndev; i++)
        if (!strcmp(s->dev[i].uuid, uuid)) return &s->dev[i];
    if (s->ndev >= SNAP_DEVS) return NULL;
    struct snap_dev *d = &s->dev[s->ndev++];
    memset(d, 0, sizeof *d);
    snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
    d->index = gpu_index(uuid, &d->minor);
    if (d->index < 0) d->index = slot;
    return d;
}

static struct snap_proc *proc_for(struct snap *s, uint32_t pid)
{
    for (int i = 0; i < s->nproc; i++)
        if (s->proc[i].pid == pid) return &s->proc[i];
    if (s->nproc >= (int)SNAP_PROCS) return NULL;
    struct snap_proc *p = &s->proc[s->nproc++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

/* A slot's bytes count towards its device's use only while its process
 * lives (a dead one's are the ledger's to sweep, not a load). */
static int CC_CONTROL_POINT(slot_counted)(const struct snap_proc *p) { return p->alive; }

static void read_mem(const char *dir, struct snap *s)
{
    const cc_mem_region_t *r = read_region(dir, &cc_mem_region_spec, snap_check_mem, &s->mem_state,
                                           s->mem_why, sizeof s->mem_why);
    if (!r) return;
    const cc_config_counters_t *cc = cc_config_counters((void *)r);
    s->config_errors = cc->errors;
    s->config_refused = cc->refused;
    int map[CC_MEM_DEVS]; /* region device -> snap device */
    for (int d = 0; d < CC_MEM_DEVS; d++) {
        map[d] = -1;
        if (!__atomic_load_n(&r->dev[d].key, __ATOMIC_ACQUIRE)) continue;
        char uuid[CC_MEM_UUID_LEN + 1];
        copy_uuid(uuid, sizeof uuid, r->dev[d].uuid, CC_MEM_UUID_LEN);
        if (!uuid[0]) snprintf(uuid, sizeof uuid, "device-slot-%d", d);
        struct snap_dev *sd = dev_for(s, uuid, d);
        if (!sd) continue;
        sd->has_mem = 1;
        sd->mem_limit = __atomic_load_n(&r->dev[d].limit, __ATOMIC_RELAXED);
        sd->host_limit = __atomic_load_n(&r->host_limit[d], __ATOMIC_RELAXED);
        sd->refusals = cc_mem_counters((void *)r)->refusals[d];
        map[d] = (int)(sd - s->dev);
    }
    uint32_t hw = __atomic_load_n(&r->slots_hw, __ATOMIC_ACQUIRE);
    if (hw > CC_MEM_SLOTS) hw = CC_MEM_SLOTS; /* never trust the file */
    int lfd = open_region_file(dir, CC_MEM_REGION_FILE);
    for (uint32_t i = 0; i < hw; i++) {
        uint32_t o = __atomic_load_n(&r->proc[i].owner, __ATOMIC_ACQUIRE);
        if (o == 0 || (o & CC_MEM_REAPING)) continue; /* free, or being cleaned */
        struct snap_proc *p = proc_for(s, o);
        if (!p) break;
        p->host_pid = __atomic_load_n(&r->proc[i].host_pid, __ATOMIC_RELAXED);
        uint64_t st = __atomic_load_n(&r->proc[i].start_time, __ATOMIC_RELAXED);
        p->alive = key_alive(lfd, CC_MEM_LIVE_BASE, o, p->host_pid, st);
        p->has_mem = 1;
        for (int d = 0; d < CC_MEM_DEVS; d++) {
            if (map[d] < 0) continue;
            uint64_t b = __atomic_load_n(&r->used[d][i], __ATOMIC_RELAXED);
            uint64_t ov = __atomic_load_n(&r->overhead[d][i], __ATOMIC_RELAXED);
            b = b + ov < b ? UINT64_MAX : b + ov;
            p->mem[map[d]] += b;
            p->mem_total += b;
            uint64_t hb = __atomic_load_n(&r->host_used[d][i], __ATOMIC_RELAXED);
            p->host[map[d]] = p->host[map[d]] + hb < hb ? UINT64_MAX : p->host[map[d]] + hb;
            if (slot_counted(p)) {
                struct snap_dev *sd = &s->dev[map[d]];
                sd->mem_used += b; /* a dead slot's bytes are never counted */
                sd->host_used = sd->host_used + hb < hb ? UINT64_MAX : sd->host_used + hb;
                if (b || hb) sd->nproc++;
            }
        }
    }
    if (lfd >= 0) close(lfd);
    cc_region_unpeek((void *)r);
}

/* The sampling owner's pid: the process among cands holding a lock on byte
 * idx of the lock file (dev, ino), found through /proc/<pid>/fdinfo. The
 * lock API itself cannot say: OFD locks report pid -1. */
static long find_owner(dev_t dev, ino_t ino, unsigned idx, const long *cands, int n)
{
    for (int c = 0; c < n; c++) {
        char p[64];
        snprintf(p, sizeof p, "/proc/%ld/fd", cands[c]);
        DIR *d = opendir(p);
        if (!d) continue;
        struct dirent *e;
        long found = 0;
        while (!found && (e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char fp[384], line[256];
            struct stat st;
            snprintf(fp, sizeof fp, "/proc/%ld/fd/%s", cands[c], e->d_name);
            if (stat(fp, &st) != 0 || st.st_dev != dev || st.st_ino != ino) continue;
            snprintf(fp, sizeof fp, "/proc/%ld/fdinfo/%s", cands[c], e->d_name);
            FILE *f = fopen(fp, "re");
            if (!f) continue;
            /* "lock:\t1: OFDLCK ADVISORY WRITE -1 fe:00:123 <start> <end|EOF>" */
            while (!found && fgets(line, sizeof line, f)) {
                if (strncmp(line, "lock:", 5) != 0) continue;
                char *end = line + strcspn(line, "\n");
                *end = 0;
                char *last = strrchr(line, ' ');
                if (!last) continue;
                *last = 0;
                char *first = strrchr(line, ' ');
                if (!first) continue;
                unsigned long a = strtoul(first + 1, NULL, 10);
                int eof = !strcmp(last + 1, "EOF");
                unsigned long b = eof ? ~0ul : strtoul(last + 1, NULL, 10);
                if (a <= idx && idx <= b) found = cands[c];
            }
            fclose(f);
        }
        closedir(d);
        if (found) return found;
    }
    return 0;
}

int snap_lock_probe(int fd, long start, long len)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = start;
    fl.l_len = len;
    int r = -1;
#ifdef F_OFD_GETLK
    r = fcntl(fd, F_OFD_GETLK, &fl);
#endif
    if (r != 0) {
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        fl.l_start = start;
        fl.l_len = len;
        r = fcntl(fd, F_GETLK, &fl);
    }
    if (r != 0) return OWNER_UNKNOWN;
    return fl.l_type == F_UNLCK ? OWNER_NONE : OWNER_HELD;
}

static int open_lock(const char *dir, struct stat *st)
{
    char p[1024], why[1280];
    int n = snprintf(p, sizeof p, "%s/%s", dir, CC_SAMPLING_LOCK_FILE);
    if (n < 0 || (size_t)n >= sizeof p) return -1; /* a path too long: owner unknown */
    return cc_peek_open(p, st, why, sizeof why); /* not a plain file: owner unknown */
}

static void read_sm(const char *dir, struct snap *s)
{
    const cc_compute_region_t *r = read_region(dir, &cc_compute_region_spec, snap_check_compute,
                                               &s->sm_state, s->sm_why, sizeof s->sm_why);
    if (!r) return;
    uint64_t now = cc_mono_ns();
    int pslot[CC_COMPUTE_PROCS]; /* compute slot -> snap process */
    int rfd = open_region_file(dir, CC_COMPUTE_FILE);
    for (unsigned i = 0; i < CC_COMPUTE_PROCS; i++) {
        pslot[i] = -1;
        uint32_t pid = __atomic_load_n(&r->proc[i].pid, __ATOMIC_ACQUIRE);
        if (!pid) continue;
        uint32_t hp = __atomic_load_n(&r->proc[i].host_pid, __ATOMIC_ACQUIRE);
        struct snap_proc *p = proc_for(s, pid);
        if (!p) break;
        pslot[i] = (int)(p - s->proc);
        if (!p->host_pid) p->host_pid = hp;
        if (!p->has_mem) p->alive = key_alive(rfd, CC_COMPUTE_LIVE_BASE, pid, hp, 0);
    }
    if (rfd >= 0) close(rfd);
    struct stat lst;
    int lfd = open_lock(dir, &lst);
    long cands[2 * SNAP_PROCS];
    int nc = 0;
    for (int i = 0; i < s->nproc; i++) {
        if (!s->proc[i].alive) continue;
        if (s->proc[i].pid < CC_KEY_PIDS) cands[nc++] = s->proc[i].pid; /* a probed key is no pid */
        if (s->proc[i].host_pid && s->proc[i].host_pid != s->proc[i].pid)
            cands[nc++] = s->proc[i].host_pid;
    }
    for (unsigned i = 0; i < CC_COMPUTE_DEVICES; i++) {
        if (__atomic_load_n(&r->uuid[i].state, __ATOMIC_ACQUIRE) != 2) continue;
        char uuid[CC_COMPUTE_UUID_LEN + 1];
        copy_uuid(uuid, sizeof uuid, r->uuid[i].uuid, CC_COMPUTE_UUID_LEN);
        struct snap_dev *sd = dev_for(s, uuid, (int)i);
        if (!sd) continue;
        const cc_compute_dev_t *l = &r->dev[i];
        sd->has_sm = 1;
        sd->throttled_ns = cc_compute_counters((void *)r)->throttled_ns[i];
        uint32_t cap = __atomic_load_n(&l->up_limit_pm, __ATOMIC_RELAXED);
        const cc_compute_elastic_t *el = &r->elastic[i];
        uint32_t hard = __atomic_load_n(&el->hard_pm, __ATOMIC_RELAXED);
        uint32_t soft = __atomic_load_n(&el->soft_pm, __ATOMIC_RELAXED);
        /* The hard cap as the processes say (up_limit_pm is an elastic
         * line's moving target); a region of a process that did not write
         * it: the target, which is then the cap. */
        if (hard && hard < 1000) cap = hard;
        sd->sm_limit_pm = cap >= 1000 ? 0 : cap;
        if (sd->sm_limit_pm && soft > sd->sm_limit_pm && soft <= 1000) {
            uint32_t t = __atomic_load_n(&l->up_limit_pm, __ATOMIC_RELAXED);
            sd->sm_soft_pm = soft;
            sd->sm_target_pm = t < cap ? cap : t > soft ? soft : t;
            sd->borrowing = __atomic_load_n(&el->borrowing, __ATOMIC_RELAXED) != 0;
            sd->borrowed_ns = __atomic_load_n(&el->borrowed_ns, __ATOMIC_RELAXED);
        }
        /* Acquire on the stamp: the sample and cadence of that publication. */
        uint64_t at = __atomic_load_n(&l->sample_ns, __ATOMIC_ACQUIRE);
        uint32_t smp = __atomic_load_n(&l->sample, __ATOMIC_RELAXED);
        sd->sample_interval_us = __atomic_load_n(&l->sample_interval_us, __ATOMIC_RELAXED);
        if (at) {
            sd->has_sample = 1;
            sd->util_pm = smp & 0xffff;
            sd->dev_util_pm = smp >> 16;
            if (sd->util_pm > 1000) sd->util_pm = 1000;
            if (sd->dev_util_pm > 1000) sd->dev_util_pm = 1000;
            sd->sample_age_ns = now > at ? now - at : 0;
        }
        for (unsigned k = 0; k < CC_COMPUTE_PROCS; k++) {
            if (pslot[k] < 0) continue;
            uint16_t u = __atomic_load_n(&r->proc[k].util_pm[i], __ATOMIC_RELAXED);
            struct snap_proc *p = &s->proc[pslot[k]];
            if (u == CC_COMPUTE_UTIL_UNKNOWN || !at) continue;
            p->has_util[sd - s->dev] = 1;
            p->util_pm[sd - s->dev] = u > 1000 ? 1000 : u;
        }
        if (lfd >= 0) {
            sd->owner = snap_lock_probe(lfd, (off_t)i, 1);
            if (sd->owner == OWNER_HELD) {
                /* The owner publishes its pid each period; 0 before its
                 * first one: then the /proc walk (works only where the
                 * container's /proc is readable). */
                uint32_t op = __atomic_load_n(&r->owner[i].pid, __ATOMIC_RELAXED);
                if (op) {
                    sd->owner_pid = op;
                    sd->owner_from_region = 1;
                    sd->owner_host_pid = __atomic_load_n(&r->owner[i].host_pid, __ATOMIC_RELAXED);
                } else {
                    sd->owner_pid = find_owner(lst.st_dev, lst.st_ino, i, cands, nc);
                }
            }
        }
    }
    if (lfd >= 0) close(lfd);
    cc_region_unpeek((void *)r);
}

/* HAMi / Volcano layout: ROOT/<pod>_<ctr>/<uuid>.cache.d is the state
 * folder (CUDA_DEVICE_MEMORY_SHARED_CACHE + ".d", docs/configuration.md).
 * A container folder without regions but with one such child uses it. */
static void resolve_dir(const char *dir, char *out, size_t len)
{
    char p[1024];
    struct stat st;
    snprintf(out, len, "%s", dir);
    snprintf(p, sizeof p, "%s/%s", dir, CC_MEM_REGION_FILE);
    if (lstat(p, &st) == 0) return;
    snprintf(p, sizeof p, "%s/%s", dir, CC_COMPUTE_FILE);
    if (lstat(p, &st) == 0) return;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 8 && !strcmp(e->d_name + n - 8, ".cache.d") &&
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(out, len, "%s/%s", dir, e->d_name);
            break;
        }
    }
    closedir(d);
}

int snap_read(const char *dir_in, const char *name, struct snap *s)
{
    char dir[1024];
    resolve_dir(dir_in, dir, sizeof dir);
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    if (snprintf(s->dir, sizeof s->dir, "%s", dir) >= (int)sizeof s->dir) s->dir[0] = 0;
    read_mem(dir, s);
    if (s->mem_state != SNAP_OK) { /* torn or absent: no memory figures */
        s->ndev = 0;
        s->nproc = 0;
    }
    read_sm(dir, s);
    /* The limits file, as the library would judge it (never followed, a
     * FIFO never waited on): a bad one is the container's config error. */
    cc_limits_t lim;
    char why[256];
    if (cc_limits_read(dir, &lim, why, sizeof why) < 0)
        snprintf(s->config_why, sizeof s->config_why, "%s/%s: %s", dir, CC_LIMITS_FILE, why);
    for (int i = 0; i < s->nproc; i++) s->nalive += s->proc[i].alive;
    for (int i = 0; i < s->ndev; i++) {
        if (!s->dev[i].has_mem) s->dev[i].nproc = s->nalive;
        /* No process alive: the last sample is history, not utilization. */
        if (s->dev[i].has_sm && s->nalive == 0) s->dev[i].idle = 1, s->dev[i].has_sample = 0;
    }
    return 0;
}

int snap_list(const char *root, char **names, int max)
{
    DIR *d = opendir(root);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while (n < max && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        struct stat st;
        /* No symlinks: a container folder is a real folder under ROOT. */
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            continue;
        names[n] = strdup(e->d_name);
        if (names[n]) n++;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_name);
    return n;
}

int snap_collect(const char *root, struct snap ***out)
{
    static char *names[SNAP_MAX_CONTAINERS];
    int n = snap_list(root, names, SNAP_MAX_CONTAINERS);
    if (n < 0) return -1;
    struct snap **s = calloc((size_t)n + 1, sizeof *s);
    int k = 0;
    for (int i = 0; i < n; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        if (s && (s[k] = malloc(sizeof **s))) snap_read(dir, names[i], s[k]), k++;
        free(names[i]);
    }
    *out = s;
    return s ? k : -1;
}

void snap_release(struct snap **s, int n)
{
    for (int i = 0; i < n; i++) free(s[i]);
    free(s);
}
