/* Caps changed while the process runs (live.h). */
#include "cap/live.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cap/cfg.h"
#include "cap/limits.h"
#include "common/controls.h"
#include "common/fork.h"
#include "common/log.h"
#include "os/os.h"

uint32_t cc_live_word;
static uint32_t changes;
/* Guards the rest: held to stat, read (a bounded read of a plain file,
 * never a FIFO: cc_limits_read) and apply. Never held by the caller of
 * anything that takes it again; under it the appliers take the device
 * lock (cap/device.h), which never takes this one. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int have;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtim, ctim;
} seen;
static int fork_registered;

static void fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    mu = fresh;
}

uint32_t cc_live_changes(void) { return __atomic_load_n(&changes, __ATOMIC_ACQUIRE); }

static int same_file(const struct stat *st)
{
    return seen.have && seen.dev == st->st_dev && seen.ino == st->st_ino && seen.size == st->st_size &&
           seen.mtim.tv_sec == st->st_mtim.tv_sec && seen.mtim.tv_nsec == st->st_mtim.tv_nsec &&
           seen.ctim.tv_sec == st->st_ctim.tv_sec && seen.ctim.tv_nsec == st->st_ctim.tv_nsec;
}

static const char *size_str(uint64_t v, char *b, size_t n)
{
    if (!v) snprintf(b, n, "none");
    else if (v % (1ull << 30) == 0) snprintf(b, n, "%" PRIu64 " GiB", v >> 30);
    else if (v % (1ull << 20) == 0) snprintf(b, n, "%" PRIu64 " MiB", v >> 20);
    else snprintf(b, n, "%" PRIu64 " bytes", v);
    return b;
}

/* Stores the file's caps and hands each changed device to its appliers. */
static void apply_locked(const cc_limits_t *l)
{
    uint64_t mem[CC_MAX_DEVICES], over[CC_MAX_DEVICES];
    uint32_t sm[CC_MAX_DEVICES], soft[CC_MAX_DEVICES];
    cc_limits_effective(l, mem, sm, soft);
    cc_limits_over_effective(l, over);
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        uint64_t om = cc_cfg_mem_cap(i);
        uint32_t os = cc_cfg_sm(i), osoft = cc_cfg_sm_soft(i);
        /* Oversubscription is memory beyond a cap: none without one (the
         * file's check refuses the pair; this keeps the rule here too). The
         * seed's spill (CUDA_MEM_OVERSOLD) is never in effect with a limits
         * file (cap/config_over.c). */
        uint64_t oo = cc_cfg_mem_over(i), no = mem[i] ? over[i] : 0;
        if (om != mem[i] || oo != no) {
            char a[32], b[32];
            __atomic_store_n(&cc_cfg.mem_limit[i], mem[i], __ATOMIC_RELAXED);
            __atomic_store_n(&cc_cfg.mem_over[i], no, __ATOMIC_RELAXED);
            cc_mem_set_limits(i, mem[i], no);
            if (om != mem[i])
                cc_info("limits file: device %d memory cap %s -> %s", i, size_str(om, a, sizeof a),
                        size_str(mem[i], b, sizeof b));
            if (oo != no)
                cc_info("limits file: device %d oversubscription %s -> %s", i, size_str(oo, a, sizeof a),
                        size_str(no, b, sizeof b));
        }
        if (os != sm[i] || osoft != soft[i]) {
            __atomic_store_n(&cc_cfg.sm_limit[i], sm[i], __ATOMIC_RELAXED);
            __atomic_store_n(&cc_cfg.sm_soft_limit[i], soft[i], __ATOMIC_RELAXED);
            cc_compute_caps_changed(i);
            cc_info("limits file: device %d SM cap %u%% -> %u%% (elastic %u%% -> %u%%; 0: none)", i,
                    os ? os : 100, sm[i] ? sm[i] : 100, osoft, soft[i]);
        }
    }
    __atomic_store_n(&cc_cfg.limits_generation, l->generation, __ATOMIC_RELAXED);
    /* Release: the caps above before the count the watcher acquires. */
    __atomic_add_fetch(&changes, 1, __ATOMIC_RELEASE);
}

/* Whether this process looks at the limits file again at all. */
static inline int CC_CONTROL_POINT(live_on)(void) { return cc_cfg.state_dir[0] && !cc_cfg.limits_bad; }

void cc_live_poll(int force)
{
    if (!live_on()) return;
    if (!__atomic_load_n(&fork_registered, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&mu);
        if (!fork_registered) cc_fork_child_register(fork_child);
        __atomic_store_n(&fork_registered, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&mu);
    }
    char path[CC_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/%s", cc_cfg.state_dir, CC_LIMITS_FILE);
    pthread_mutex_lock(&mu);
    struct stat st;
    /* Gone: the caps stay (a container never loses its caps to a removed
     * file; `cudacap set` always replaces it whole). */
    if (cc_os_lstat(path, &st) != 0 || (!force && same_file(&st))) {
        pthread_mutex_unlock(&mu);
        return;
    }
    seen.have = 1, seen.dev = st.st_dev, seen.ino = st.st_ino, seen.size = st.st_size;
    seen.mtim = st.st_mtim, seen.ctim = st.st_ctim;
    cc_limits_t l;
    char why[256];
    int rc = cc_limits_read(cc_cfg.state_dir, &l, why, sizeof why);
    if (rc < 0) {
        /* Once per file seen (its identity is remembered above). */
        cc_error("limits file %s changed but cannot be trusted: %s; the caps stay those of "
                 "generation %" PRIu64, path, why,
                 __atomic_load_n(&cc_cfg.limits_generation, __ATOMIC_RELAXED));
        cc_ml_count_config_errors(cc_cfg.state_dir, 1, 0);
    } else if (rc > 0 && (l.generation != __atomic_load_n(&cc_cfg.limits_generation, __ATOMIC_RELAXED) ||
                          !cc_cfg.limits_path[0])) {
        if (!cc_cfg.limits_path[0]) /* caps came from the environment until now */
            snprintf(cc_cfg.limits_path, sizeof cc_cfg.limits_path, "%s", path);
        cc_info("limits file %s: generation %" PRIu64 " applied", path, l.generation);
        apply_locked(&l);
    }
    pthread_mutex_unlock(&mu);
}

void cc_live_word_moved(int h)
{
    uint32_t w = cc_ml_limits_gen(h);
    cc_live_poll(0);
    __atomic_store_n(&cc_live_word, w, __ATOMIC_RELAXED);
}
