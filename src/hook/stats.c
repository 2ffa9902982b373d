/* Call counters (CUDACAP_COUNT_CALLS=1): proof that a route reaches our
 * wrapper, readable by tests and printed at exit for real-GPU validation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cap/compute/gate.h"
#include "cap/compute/nvml_sample.h"
#include "cudacap/cudacap.h"
#include "hook.h"
#include "hook/process.h"

#ifndef CUDACAP_VERSION_STRING
#define CUDACAP_VERSION_STRING "unknown"
#endif

/* The version as bytes in the file, for `cudacap status` (src/cli/proclib.c),
 * which finds the library a process mapped and reads this tag from it. */
#define CC_VERSION_TAG "cudacap-library-version: "
__attribute__((used)) static const char version_tag[] = CC_VERSION_TAG CUDACAP_VERSION_STRING;

CC_EXPORT const char *cudacap_version(void) { return version_tag + sizeof CC_VERSION_TAG - 1; }

CC_EXPORT long long cudacap_gate_ns(long long *launches)
{
    struct cc_gate_counts g;
    cc_gate_counts(&g);
    if (launches) *launches = (long long)g.host_calls;
    return (long long)g.host_ns;
}

CC_EXPORT long long cudacap_call_count(const char *name)
{
    int id = name ? cc_hook_by_name(name) : -1;
    if (id < 0) return -1;
    return (long long)__atomic_load_n(&cc_calls[id], __ATOMIC_RELAXED);
}

#define LINE 256
static void say(const char *line, int len)
{
    if (len <= 0) return;
    ssize_t w = write(2, line, (size_t)len < LINE ? (size_t)len : LINE - 1);
    (void)w;
}

static void exit_report(void)
{
    char line[LINE];
    for (int i = 0; i < CC_FN_COUNT; i++) {
        uint64_t n = __atomic_load_n(&cc_calls[i], __ATOMIC_RELAXED);
        if (!n) continue;
        int len = snprintf(line, sizeof line, "cudacap[%d]: calls %s %llu\n", (int)getpid(),
                           cc_hooks[i].name, (unsigned long long)n);
        say(line, len);
    }
    struct cc_gate_counts g;
    cc_gate_counts(&g);
    if (g.new_shape || g.timed || g.token_waited)
        say(line, snprintf(line, sizeof line,
                           "cudacap[%d]: gate new shapes %llu (waited %llu, %llu of them for the same shape; "
                           "%.3f ms), timed %llu, token waits %llu (%.3f ms), settled %.3f ms (%.3f ms forgiven)\n",
                           (int)getpid(), (unsigned long long)g.new_shape, (unsigned long long)g.shape_waited,
                           (unsigned long long)g.shape_dup, g.shape_wait_ns / 1e6, (unsigned long long)g.timed,
                           (unsigned long long)g.token_waited, g.token_wait_ns / 1e6, g.settled_ns / 1e6,
                           g.forgiven_ns / 1e6));
    if (g.host_calls)
        say(line, snprintf(line, sizeof line, "cudacap[%d]: gate host time %.3f ms in %llu launches (%.3f us each)\n",
                           (int)getpid(), g.host_ns / 1e6, (unsigned long long)g.host_calls,
                           g.host_ns / 1e3 / (double)g.host_calls));
    struct cc_watch_counts w;
    cc_watch_counts(&w);
    if (w.cycles)
        say(line, snprintf(line, sizeof line,
                           "cudacap[%d]: watcher cycles %llu (owner %llu, quiet %llu), NVML device-wide %llu "
                           "(period read already %llu), per-process %llu (empty %llu, not due %llu), period "
                           "%.1f ms, lag %.1f ms, cpu %.3f ms\n",
                           (int)getpid(), (unsigned long long)w.cycles, (unsigned long long)w.owner,
                           (unsigned long long)w.quiet, (unsigned long long)w.cheap,
                           (unsigned long long)w.cheap_same, (unsigned long long)w.polls,
                           (unsigned long long)w.empty, (unsigned long long)w.not_due, w.period_us / 1e3,
                           w.lag_us / 1e3, w.cpu_us / 1e3));
}

void cc_stats_register_exit_report(void) { atexit(exit_report); }
