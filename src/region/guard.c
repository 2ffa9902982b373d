/* The SIGBUS guard (region.h): a truncated state file must not kill the
 * process that maps it.
 *
 * A shared file mapping past the end of its file faults with SIGBUS on the
 * next touch, and anything that can write the state folder can truncate a
 * region (`truncate -s 2M`, a crashed editor, a full disk at copy time). The
 * guard is a process-wide SIGBUS handler (SA_SIGINFO), installed once when the
 * first region is mapped, that keeps the handler it replaced:
 *  - a fault inside one of our mappings: map anonymous zeroed memory over the
 *    whole mapping (MAP_FIXED, same size) and return, so the faulting access
 *    runs again on memory that is there; the mapping is marked faulted. The
 *    owner of the mapping notices (cc_region_faulted) outside the handler,
 *    warns once and recovers or degrades (memory: re-maps the file and
 *    re-publishes its own counts; compute: runs on the private copy);
 *  - any other SIGBUS goes to the previous handler unchanged (SA_SIGINFO or
 *    not), or, when that was SIG_DFL or SIG_IGN, is re-raised with the default
 *    action, so an unrelated fault still kills the process as it would have.
 * Only async-signal-safe work in the handler: loads of a fixed table, mmap
 * (a bare system call; not in POSIX's list, but it touches no user-space
 * state), sigaction, raise. The table is written before a mapping is used
 * (release) and read with acquire loads. */
#include "region/region.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "common/controls.h"
#include "common/log.h"

#define CC_GUARD_MAX 16

static struct guard_slot {
    uintptr_t base; /* 0: free (release store when filled) */
    uintptr_t size;
    uint32_t faulted; /* set by the handler */
    uint32_t warned;
    const char *name;
} g_slots[CC_GUARD_MAX];

static struct sigaction g_prev;
static uint32_t g_faults; /* faults handled, ever (one load to ask "any?") */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_installed;

/* 1 when the fault is in a guarded mapping, now replaced by zeroed private
 * memory (the access runs again on it). */
static int CC_CONTROL_POINT(guarded_fault)(const siginfo_t *si)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    if (si->si_code > 0) { /* a fault, not a kill() or raise() */
        for (int i = 0; i < CC_GUARD_MAX; i++) {
            uintptr_t b = __atomic_load_n(&g_slots[i].base, __ATOMIC_ACQUIRE);
            if (!b || a < b || a - b >= g_slots[i].size) continue;
            /* mmap itself, not the OS layer (os/os.h): we are in a signal
             * handler, where a fault point (it may log) must not run. */
            void *p = mmap((void *)b, g_slots[i].size, PROT_READ | PROT_WRITE,
                           MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) break; /* cannot help: the default below */
            __atomic_store_n(&g_slots[i].faulted, 1, __ATOMIC_RELEASE);
            __atomic_add_fetch(&g_faults, 1, __ATOMIC_RELEASE);
            return 1;
        }
    }
    return 0;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    if (guarded_fault(si)) return; /* the access runs again, on zeroed private memory */
    if (g_prev.sa_flags & SA_SIGINFO) {
        if (g_prev.sa_sigaction) g_prev.sa_sigaction(sig, si, uc);
        return;
    }
    if (g_prev.sa_handler != SIG_DFL && g_prev.sa_handler != SIG_IGN) {
        g_prev.sa_handler(sig);
        return;
    }
    /* SIG_DFL (or SIG_IGN, which the kernel overrides for a fault): the
     * default action. A fault repeats on return and kills; a sent signal
     * is raised again (blocked while we run, delivered when we return). */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGBUS, &dfl, NULL);
    if (si->si_code <= 0) raise(SIGBUS);
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &g_prev) != 0) {
        cc_warn("cannot install the SIGBUS guard (%s): a truncated state file would kill "
                "this process", strerror(errno));
        return;
    }
    g_installed = 1;
}

void cc_region_guard(void *base, size_t size, const char *name)
{
    pthread_once(&g_once, install);
    for (int i = 0; i < CC_GUARD_MAX; i++) {
        uintptr_t b = __atomic_load_n(&g_slots[i].base, __ATOMIC_ACQUIRE);
        if (b == (uintptr_t)base) return; /* re-mapped at the same address */
    }
    for (int i = 0; i < CC_GUARD_MAX; i++) {
        uintptr_t zero = 0;
        /* Claim the slot with a placeholder, fill it, then publish base. */
        if (!__atomic_compare_exchange_n(&g_slots[i].base, &zero, (uintptr_t)1, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            continue;
        g_slots[i].size = size;
        g_slots[i].name = name;
        __atomic_store_n(&g_slots[i].faulted, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&g_slots[i].warned, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&g_slots[i].base, (uintptr_t)base, __ATOMIC_RELEASE);
        return;
    }
    cc_warn("%s: too many guarded mappings; a truncation of it would kill this process", name);
}

static struct guard_slot *slot_of(const void *base)
{
    for (int i = 0; i < CC_GUARD_MAX; i++)
        if (__atomic_load_n(&g_slots[i].base, __ATOMIC_ACQUIRE) == (uintptr_t)base) return &g_slots[i];
    return NULL;
}

int cc_region_faulted(const void *base)
{
    struct guard_slot *s = slot_of(base);
    if (!s || !__atomic_load_n(&s->faulted, __ATOMIC_ACQUIRE)) return 0;
    if (!__atomic_exchange_n(&s->warned, 1, __ATOMIC_RELAXED))
        cc_warn("%s was truncated under this process (SIGBUS caught); this process now runs on a "
                "private copy of it", s->name ? s->name : "a state file");
    return 1;
}

void cc_region_unfault(const void *base)
{
    struct guard_slot *s = slot_of(base);
    if (s) __atomic_store_n(&s->faulted, 0, __ATOMIC_RELEASE);
}

int cc_region_faults_pending(void)
{
    if (__builtin_expect(!__atomic_load_n(&g_faults, __ATOMIC_ACQUIRE), 1)) return 0;
    for (int i = 0; i < CC_GUARD_MAX; i++) {
        uintptr_t b = __atomic_load_n(&g_slots[i].base, __ATOMIC_ACQUIRE);
        if (b > 1 && __atomic_load_n(&g_slots[i].faulted, __ATOMIC_ACQUIRE)) {
            cc_region_faulted((const void *)b); /* warns once */
            return 1;
        }
    }
    return 0;
}

int cc_region_guard_installed(void) { return g_installed; }
