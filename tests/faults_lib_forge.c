/* Fault campaign, library side: forged counters, owners, stamps and
 * generations written into the live regions (tests/faults_lib.h). */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faults_lib.h"

/* ---- parent: forgeries ---------------------------------------------------------- */

const char *FORGE[] = {
    "memory: a live slot's count = 0",       "memory: a live slot's count = 2^64 - 1",
    "memory: a live slot's owner = 0",       "memory: a foreign live pid owns a cap of bytes",
    "memory: a reaping live pid holds bytes", "memory: the generation changed",
    "memory: slots_hw = 0, then 2^32 - 1",    "memory: the device entry's key changed",
    "memory: start times of live slots",     "compute: tokens = INT64_MIN",
    "compute: tokens = INT64_MAX",           "compute: share = INT64_MAX",
    "compute: share = INT64_MIN",            "compute: accrual stamp +10^6 s",
    "compute: refill stamp +10^6 s",         "compute: sample stamp +10^6 s",
    "compute: every uuid line 'being claimed'", "compute: the process table random",
};
/* Forgeries that the documented exposure covers (a lower count elsewhere). */
int forge_exposed(int k) { return k == F_USED0 || k == F_OWNER0; }

static void *map_once(const char *p, size_t size)
{
    int fd = open(p, O_RDWR | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return NULL;
    struct stat st;
    void *m = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)size)
        m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return m == MAP_FAILED ? NULL : m;
}

/* The state file f, mapped once it exists at its size: a worker makes the
 * compute region at its first launch, which a starved machine delays past
 * the workers' "ready" (faults.lib.4dev, "cannot map compute.region", in a
 * fresh-root suite beside a suite loop, 2026-12-06). At most 5 s. */
static void *map_state(const char *f, size_t size)
{
    char p[1000];
    path_of(p, sizeof p, g_state, f);
    void *m = map_once(p, size);
    for (uint64_t t0 = now_ns(); !m && now_ns() - t0 < 5000000000ull; m = map_once(p, size)) usleep(10000);
    return m;
}

void forge(int k, uint64_t *seed)
{
    if (k < F_TOKMIN) {
        cc_mem_region_t *r = map_state(CC_MEM_REGION_FILE, CC_MEM_FILE_SIZE);
        if (!r) {
            CHECK(0, "forge: cannot map memory.region");
            return;
        }
        for (int i = 0; i < CC_MEM_SLOTS; i++) {
            uint32_t o = __atomic_load_n(&r->proc[i].owner, __ATOMIC_SEQ_CST);
            int live = o && !(o & CC_MEM_REAPING);
            switch (k) {
            case F_USED0:
                if (live) __atomic_store_n(&r->used[0][i], 0, __ATOMIC_SEQ_CST);
                break;
            case F_USEDMAX:
                if (live) __atomic_store_n(&r->used[0][i], UINT64_MAX, __ATOMIC_SEQ_CST);
                break;
            case F_OWNER0:
                if (live) __atomic_store_n(&r->proc[i].owner, 0, __ATOMIC_SEQ_CST);
                break;
            case F_FOREIGN:
            case F_REAPING:
                if (!o && i >= 100 && i < 104) { /* free slots: a live pid that is no client */
                    __atomic_store_n(&r->used[0][i], CAP, __ATOMIC_SEQ_CST);
                    __atomic_store_n(&r->proc[i].owner,
                                     (uint32_t)getpid() | (k == F_REAPING ? CC_MEM_REAPING : 0),
                                     __ATOMIC_SEQ_CST);
                }
                break;
            case F_START:
                if (live) __atomic_store_n(&r->proc[i].start_time, rnd(seed), __ATOMIC_RELAXED);
                break;
            }
        }
        if (k == F_GEN) __atomic_add_fetch(&r->generation, 0x1000, __ATOMIC_SEQ_CST);
        if (k == F_HW) {
            __atomic_store_n(&r->slots_hw, 0, __ATOMIC_SEQ_CST);
            usleep(50000);
            __atomic_store_n(&r->slots_hw, UINT32_MAX, __ATOMIC_SEQ_CST);
        }
        if (k == F_DEVKEY)
            for (int d = 0; d < CC_MEM_DEVS; d++)
                if (__atomic_load_n(&r->dev[d].key, __ATOMIC_SEQ_CST))
                    __atomic_store_n(&r->dev[d].key, rnd(seed) | 1, __ATOMIC_SEQ_CST);
        munmap(r, CC_MEM_FILE_SIZE);
        return;
    }
    cc_compute_region_t *r = map_state(CC_COMPUTE_FILE, CC_COMPUTE_FILE_SIZE);
    if (!r) {
        CHECK(0, "forge: cannot map compute.region");
        return;
    }
    uint64_t far = now_ns() + 1000000000000000ull;
    for (unsigned l = 0; l < CC_COMPUTE_DEVICES; l++) {
        cc_compute_dev_t *d = &r->dev[l];
        switch (k) {
        case F_TOKMIN: __atomic_store_n(&d->tokens, INT64_MIN, __ATOMIC_RELAXED); break;
        case F_TOKMAX: __atomic_store_n(&d->tokens, INT64_MAX, __ATOMIC_RELAXED); break;
        case F_SHAREMAX: __atomic_store_n(&d->share, INT64_MAX, __ATOMIC_RELAXED); break;
        case F_SHAREMIN: __atomic_store_n(&d->share, INT64_MIN, __ATOMIC_RELAXED); break;
        case F_ACCRUE: __atomic_store_n(&r->accrued_ns[l], far, __ATOMIC_RELAXED); break;
        case F_REFILL: __atomic_store_n(&d->refill_ns, far, __ATOMIC_RELAXED); break;
        case F_SAMPLE: __atomic_store_n(&d->sample_ns, far, __ATOMIC_RELAXED); break;
        case F_UUIDSTATE: __atomic_store_n(&r->uuid[l].state, 1, __ATOMIC_RELAXED); break;
        }
    }
    if (k == F_PROCS) {
        unsigned char *p = (unsigned char *)r->proc;
        for (size_t i = 0; i < sizeof r->proc; i++)
            __atomic_store_n(&p[i], (unsigned char)rnd(seed), __ATOMIC_RELAXED);
    }
    munmap(r, CC_COMPUTE_FILE_SIZE);
}
