/* Lazy, once-only initialisation. Nothing runs in a constructor: a process
 * that never touches CUDA (a shell under /etc/ld.so.preload) pays nothing.
 * The first intercepted call initialises the process, then its library. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/controls.h"
#include "common/fork.h"
#include "common/options.h"
#include "common/fault.h"
#include "common/log.h"
#include "cudacap/config.h"
#include "hook.h"
#include "hook/process.h"
#include "os/os.h"
#include "cap/cfg.h"
#include "cap/memledger.h"

int cc_cuda_ready, cc_nvml_ready;
int cc_cuda_refused;
int cc_count_calls;
/* cc_cfg is the cap layer's (cap/cfg.c); loaded here. */

/* Set while this thread runs an init: a re-entrant call (the driver's own
 * loading calling back into an intercepted symbol) must not wait on the once
 * it is inside of; it proceeds with whatever is resolved so far. */
static __thread int tls_in_init;

/* A variable missing from this process's environment is looked up in the
 * container's init process's (/proc/1/environ), as the seed system does: a
 * shell exec'd into the container, an SSH session, a preload from
 * /etc/ld.so.preload with no variables still find the container's state
 * folder and caps. Read once; said (info) per variable taken from it. */
static char init_env[64 << 10];
static ssize_t init_env_len = -1;

/* The init process's environment, read into init_env: its length, or -1. */
static ssize_t CC_CONTROL_POINT(read_init_env)(void)
{
    return getpid() == 1 ? 0 : cc_os_proc_environ(1, init_env, sizeof init_env);
}

static const char *init_env_get(const char *name)
{
    if (init_env_len < 0) {
        init_env_len = read_init_env();
        if (init_env_len < 0) init_env_len = 0;
    }
    size_t n = strlen(name);
    for (ssize_t at = 0; at < init_env_len;) {
        const char *e = init_env + at;
        size_t len = strlen(e);
        if (len > n && e[n] == '=' && memcmp(e, name, n) == 0) {
            cc_info("%s=\"%s\" taken from the container's init process (/proc/1/environ): this "
                    "process's environment has no %s", name, e + n + 1, name);
            return e + n + 1;
        }
        at += (ssize_t)len + 1;
    }
    return NULL;
}

static const char *env_get(const char *name)
{
    const char *v = getenv(name);
    return v ? v : init_env_get(name);
}

static void child_after_fork(void)
{
    /* Private per-process state that must not be shared with the parent
     * resets here; shared mappings stay. Each module registers its own
     * reset (common/fork.h). */
    cc_fork_child_run();
}

/* HAMi's device plugin sets names for HAMi-core that cudacap has no
 * equivalent of (the table's CC_KIND_IGNORED rows; docs/kubernetes.md, "HAMi
 * coexistence"): said once per process, never silently a different
 * behaviour. */
static int quiet_value(const cc_option_t *o, const char *v)
{
    for (const char *const *q = o->quiet; q && *q; q++)
        if (strcmp(v, *q) == 0) return 1;
    return 0;
}

static void warn_hami_ignored(void)
{
    for (int id = 0; id < CC_OPT_COUNT; id++) {
        const cc_option_t *o = &cc_options[id];
        cc_opt_value_t v;
        if (o->kind != CC_KIND_IGNORED) continue;
        cc_opt_get(o, -1, env_get, &v);
        if (v.value && !quiet_value(o, v.value))
            cc_warn("%s=\"%s\" is ignored: %s", v.name, v.value, o->bad);
    }
}

static void process_init_once(void)
{
    cc_log_init();
    cc_fault_init(); /* test builds arm faults by the environment (common/fault.h) */
    cc_config_load(&cc_cfg, env_get, environ);
    cc_config_limits(&cc_cfg, env_get);
    warn_hami_ignored();
    cc_count_calls = cc_cfg.count_calls;
    if (cc_count_calls) cc_stats_register_exit_report();
    pthread_atfork(NULL, NULL, child_after_fork);
}

void cc_process_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, process_init_once);
}

/* Bad configuration is never silent (docs/configuration.md, "Bad values"):
 * the container's counters say it to the node, and under CUDACAP_STRICT=1
 * the GPU is refused (cuInit fails) rather than run with a cap absent. */
static int CC_CONTROL_POINT(refused)(void) { return cc_cfg.strict || cc_cfg.limits_bad; }

static void config_verdict(void)
{
    if (!cc_cfg.errors) return;
    int refuse = refused(); /* a bad limits file: always closed */
    if (refuse && !cc_cfg.limits_bad) /* a bad limits file said why, naming it */
        cc_error("CUDACAP_STRICT=1 and %d configuration error(s) above: this process is refused "
                 "the GPU (cuInit fails with CUDA_ERROR_NOT_PERMITTED)", cc_cfg.errors);
    __atomic_store_n(&cc_cuda_refused, refuse, __ATOMIC_RELEASE);
    cc_ml_count_config_errors(cc_cfg.state_dir, (unsigned)cc_cfg.errors, refuse);
}

static void cuda_init_once(void)
{
    cc_process_init();
    config_verdict();
    cc_open_lib(CC_LIB_CUDA);
    cc_route_build();
    cc_port_real_install(); /* the cap layer's way to the driver (cap/port.h) */
    __atomic_store_n(&cc_cuda_ready, 1, __ATOMIC_RELEASE);
}

static void nvml_init_once(void)
{
    cc_process_init();
    cc_open_lib(CC_LIB_NVML);
    __atomic_store_n(&cc_nvml_ready, 1, __ATOMIC_RELEASE);
}

static void run_once(pthread_once_t *once, void (*fn)(void))
{
    if (tls_in_init) return;
    tls_in_init = 1;
    pthread_once(once, fn);
    tls_in_init = 0;
}

void cc_cuda_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    run_once(&once, cuda_init_once);
}

void cc_nvml_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    run_once(&once, nvml_init_once);
}

/* A missing entry point is said once per entry point (hook.h), not once per
 * call: a program that polls one in a loop would otherwise fill its log.
 * cc_log_once would say it once for all of them (one call site), hence a
 * flag per entry. Relaxed: the flag orders nothing, and two threads racing
 * on the first miss still print one line. */
static unsigned char missing_said[CC_FN_COUNT];

static int first_miss(enum cc_fn id)
{
    return !__atomic_exchange_n(&missing_said[id], 1, __ATOMIC_RELAXED);
}

CUresult cc_cuda_missing(enum cc_fn id)
{
    if (first_miss(id))
        cc_warn("the installed driver has no %s; returning CUDA_ERROR_NOT_SUPPORTED",
                cc_hooks[id].name);
    return CUDA_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t cc_nvml_missing(enum cc_fn id)
{
    if (first_miss(id))
        cc_warn("the installed NVML has no %s; returning NVML_ERROR_FUNCTION_NOT_FOUND",
                cc_hooks[id].name);
    return NVML_ERROR_FUNCTION_NOT_FOUND;
}
