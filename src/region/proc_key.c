/* Process keys (proc_key.h). */
#include "region/proc_key.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/controls.h"
#include "os/os.h"

#define PROBES 64

static int try_key(int fd, uint64_t base, uint32_t key)
{
    return cc_os_lock(fd, (off_t)(base + key), 1, F_WRLCK, 0);
}

/* Our pid's key is held: a process of another pid namespace has our pid.
 * A start that differs by namespace, so two pid 1s do not probe the same
 * keys. */
static int CC_CONTROL_POINT(probe_keys)(struct cc_pkey *k, int fd, uint64_t base, uint32_t pid)
{
    uint64_t ns = 0;
    if (cc_os_pidns(&ns) != 0) ns = 0;
    uint64_t h = (ns * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)pid * 0xc2b2ae3d27d4eb4full);
    h ^= h >> 29;
    const uint32_t span = CC_KEY_END - CC_KEY_PIDS;
    for (uint32_t i = 0; i < PROBES; i++) {
        uint32_t key = CC_KEY_PIDS + (uint32_t)((h + i) % span);
        if (try_key(fd, base, key) == 0) return k->key = key, 0;
        if (errno != EAGAIN && errno != EACCES) return -1;
    }
    return errno = EAGAIN, -1;
}

int cc_pkey_take(struct cc_pkey *k, int fd, uint64_t base)
{
    k->fd = fd, k->base = base, k->key = 0;
    if (fd < 0) return errno = EBADF, -1;
    uint32_t pid = (uint32_t)getpid();
    if (pid > 0 && pid < CC_KEY_PIDS) {
        if (try_key(fd, base, pid) == 0) return k->key = pid, 0;
        /* Not "held": a failure of the lock itself, which the caller retries. */
        if (errno != EAGAIN && errno != EACCES) return -1;
    }
    return probe_keys(k, fd, base, pid);
}

int cc_pkey_held(const struct cc_pkey *k, uint32_t key)
{
    if (!k || k->fd < 0 || key == 0 || key >= CC_KEY_END) return -1;
    if (key == k->key) return 1; /* our own lock never conflicts with us */
    return cc_os_lock_query(k->fd, (off_t)(k->base + key), 1, NULL, NULL);
}

int cc_pkey_alive(const struct cc_pkey *k, uint32_t key)
{
    if (key == 0 || key >= CC_KEY_END) return 0; /* no key: garbage */
    int held = cc_pkey_held(k, key);
    if (held >= 0) return held;
    return key < CC_KEY_PIDS ? cc_os_pid_alive((pid_t)key) : 1;
}

int cc_pkey_scan(int fd, uint64_t base, uint32_t *out, int max)
{
    /* Held bytes are found range by range (one query gives the first lock
     * in a range), the rest split around it. */
    off_t lo_s[64], hi_s[64];
    int top = 0, n = 0;
    lo_s[top] = (off_t)base + 1;
    hi_s[top++] = (off_t)(base + CC_KEY_END);
    while (top > 0 && n < max) {
        off_t lo = lo_s[--top], hi = hi_s[top];
        if (lo >= hi) continue;
        off_t at, len;
        if (cc_os_lock_query(fd, lo, hi - lo, &at, &len) != 1) continue;
        if (at < lo) at = lo;
        off_t end = at + len > hi ? hi : at + len;
        for (off_t p = at; p < end && n < max; p++) out[n++] = (uint32_t)(p - (off_t)base);
        if (top + 2 > 64) break; /* bounded: never more than 64 ranges pending */
        lo_s[top] = lo, hi_s[top++] = at;
        lo_s[top] = end, hi_s[top++] = hi;
    }
    return n;
}
