/* Fault injection: the countdown, the census (fault.h). */
#include "common/fault.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/options.h"

uint8_t cc_fault_active;
uint64_t cc_fault_clock_skew_ns;

static const char *const names[CC_FP_COUNT] = {
    [CC_FP_OPEN] = "open",
    [CC_FP_FSTAT] = "fstat",
    [CC_FP_FTRUNCATE] = "ftruncate",
    [CC_FP_MAP] = "map",
    [CC_FP_LOCK] = "lock",
    [CC_FP_MKDIR] = "mkdir",
    [CC_FP_PROC_STAT] = "proc_stat",
    [CC_FP_NSPID] = "nspid",
    [CC_FP_ALIVE] = "alive",
    [CC_FP_CLOCK] = "clock",
    [CC_FP_RESERVE] = "reserve",
    [CC_FP_THREAD] = "thread",
    [CC_FP_PROC_ENVIRON] = "proc_environ",
    [CC_FP_EVENT_CREATE] = "event_create",
    [CC_FP_EVENT_RECORD] = "event_record",
    [CC_FP_EVENT_QUERY] = "event_query",
    [CC_FP_EVENT_ELAPSED] = "event_elapsed",
    [CC_FP_EVENT_DESTROY] = "event_destroy",
    [CC_FP_CTX_CURRENT] = "ctx_current",
    [CC_FP_IS_CAPTURING] = "is_capturing",
    [CC_FP_CAPTURE_MODE] = "capture_mode",
    [CC_FP_NVML_OPEN] = "nvml_open",
    [CC_FP_NVML_UTIL] = "nvml_util",
    [CC_FP_NVML_DEVUTIL] = "nvml_devutil",
    [CC_FP_DEVICE_CURRENT] = "device_current",
    [CC_FP_DEVICE_INFO] = "device_info",
    [CC_FP_HOST_PID] = "host_pid",
    [CC_FP_NVML_PROCS] = "nvml_procs",
    [CC_FP_NVML_DEVICE] = "nvml_device",
    [CC_FP_STREAM_QUERY] = "stream_query",
};

static int armed_point = -1;    /* the point that fails, -1: none */
static uint64_t armed_at;       /* its N (1-based) */
static int sticky;              /* every call from the N-th on */
static uint64_t calls[CC_FP_COUNT];
static char count_path[512];

const char *cc_fault_name(cc_fault_point_t p)
{
    return (unsigned)p < CC_FP_COUNT ? names[p] : NULL;
}

int cc_fault_fire_slow(cc_fault_point_t p)
{
    if ((unsigned)p >= CC_FP_COUNT) return 0;
    /* Relaxed: a count, read at exit; the N-th call is the one whose add
     * returns N-1, whichever thread makes it. */
    uint64_t n = __atomic_add_fetch(&calls[p], 1, __ATOMIC_RELAXED);
    if ((int)p != armed_point || n < armed_at || (!sticky && n != armed_at)) return 0;
    if (n == armed_at) cc_debug("fault injected: %s, call %llu%s", names[p], (unsigned long long)n,
                                sticky ? " and every later one" : "");
    if (p == CC_FP_CLOCK) {
        /* The clock jumps once (sticky or not): a clock that kept jumping
         * is not a fault any machine has. */
        if (n == armed_at) __atomic_add_fetch(&cc_fault_clock_skew_ns, 2000000000ull, __ATOMIC_RELAXED);
        return 0;
    }
    return 1;
}

uint64_t cc_fault_clock_slow(uint64_t t)
{
    cc_fault_fire_slow(CC_FP_CLOCK);
    return t + __atomic_load_n(&cc_fault_clock_skew_ns, __ATOMIC_RELAXED);
}

static void write_census(void)
{
    if (!count_path[0]) return;
    /* O_APPEND: the processes of a run share the file; one write each. */
    int fd = open(count_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (fd < 0) return;
    char buf[2048];
    size_t len = 0;
    for (int i = 0; i < CC_FP_COUNT; i++) {
        uint64_t c = __atomic_load_n(&calls[i], __ATOMIC_RELAXED);
        if (!c || len > sizeof buf - 64) continue;
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s %llu\n", names[i], (unsigned long long)c);
    }
    if (len) (void)!write(fd, buf, len);
    close(fd);
}

void cc_fault_configure(const char *spec, const char *count_file)
{
    armed_point = -1;
    armed_at = 0;
    sticky = 0;
    count_path[0] = 0;
    memset(calls, 0, sizeof calls);
    if (count_file && *count_file) {
        if (strlen(count_file) < sizeof count_path) {
            static int registered;
            memcpy(count_path, count_file, strlen(count_file) + 1);
            /* At exit, not in a destructor: the library runs no code at
             * load or unload of its own (docs/design.md). */
            if (!registered++) atexit(write_census);
        } else {
            cc_warn("CUDACAP_TEST_FAULT_COUNT: path over %zu bytes; not counting", sizeof count_path - 1);
        }
    }
    if (spec && *spec) {
        char name[32];
        const char *colon = strchr(spec, ':');
        size_t nl = colon ? (size_t)(colon - spec) : 0;
        int p = -1;
        if (colon && nl < sizeof name) {
            memcpy(name, spec, nl);
            name[nl] = 0;
            for (int i = 0; i < CC_FP_COUNT; i++)
                if (!strcmp(names[i], name)) p = i;
        }
        char *end = NULL;
        unsigned long long n = p >= 0 ? strtoull(colon + 1, &end, 10) : 0;
        int st = end && !strcmp(end, ":sticky");
        if (p < 0 || n == 0 || !end || end == colon + 1 || (*end && !st)) {
            cc_warn("CUDACAP_TEST_FAULT=\"%s\": not POINT:N or POINT:N:sticky with a known point "
                    "and N >= 1; no fault is injected", spec);
        } else {
            armed_point = p;
            armed_at = n;
            sticky = st;
        }
    }
    __atomic_store_n(&cc_fault_active, (uint8_t)(armed_point >= 0 || count_path[0]), __ATOMIC_RELAXED);
}

void cc_fault_init(void)
{
    const char *s = getenv(cc_options[CC_OPT_TEST_FAULT].name);
    const char *c = getenv(cc_options[CC_OPT_TEST_FAULT_COUNT].name);
    if ((s && *s) || (c && *c)) cc_fault_configure(s, c);
}
