/* Environment configuration of the simulator. */
#include "sim_shared.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cudacap/config.h"

static struct sim_config g_cfg;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_loaded; /* g_mu */

/* A size from the environment, read by the library's parser
 * (cudacap/config.h, src/common/size.c): the simulator accepts exactly the
 * strings a cap accepts ("80g", "1.5GiB", "4096m"). Unset or empty: dflt;
 * anything else that is not a size: dflt, said once on stderr. */
uint64_t sim_env_size(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    uint64_t v;
    if (!s || !*s)
        return dflt;
    if (cc_parse_size(s, &v) == 0)
        return v;
    fprintf(stderr, "cudacap simulator: %s=\"%s\" is not a size; using %llu bytes\n", name, s,
            (unsigned long long)dflt);
    return dflt;
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    long r = strtol(v, &end, 10);
    return end == v ? dflt : r;
}

static void load(void)
{
    long n = env_long("CUDACAP_SIM_DEVICES", 1);
    g_cfg.ndev = (uint32_t)(n < 1 ? 1 : n > SIM_MAX_DEV ? SIM_MAX_DEV : n);
    long sms = env_long("CUDACAP_SIM_SMS", 132);
    g_cfg.sms = (uint32_t)(sms < 1 ? 1 : sms);
    g_cfg.mem = sim_env_size("CUDACAP_SIM_MEM", 80ull << 30);
    g_cfg.ctx_mem = sim_env_size("CUDACAP_SIM_CTX_MEM", 256ull << 20);
    for (int i = 0; i < SIM_MAX_DEV; i++) { /* CUDACAP_SIM_CTX_MEM_<i>: one device's */
        char name[40];
        snprintf(name, sizeof name, "CUDACAP_SIM_CTX_MEM_%d", i);
        g_cfg.ctx_mem_dev[i] = sim_env_size(name, g_cfg.ctx_mem);
    }
    g_cfg.module_mem = sim_env_size("CUDACAP_SIM_MODULE_MEM", 0);
    long w = env_long("CUDACAP_SIM_UTIL_WINDOW_MS", 1000);
    g_cfg.util_window_ns = (uint64_t)(w < 1 ? 1 : w) * 1000000ull;
    g_cfg.pid_offset = env_long("CUDACAP_SIM_PID_OFFSET", 0);
    long ps = env_long("CUDACAP_SIM_PROC_SAMPLE_MS", 0);
    g_cfg.proc_sample_us = (uint64_t)(ps < 0 ? 0 : ps) * 1000ull;
    long lag = env_long("CUDACAP_SIM_NVML_LAG_MS", 0);
    g_cfg.nvml_lag_us = (uint64_t)(lag < 0 ? 0 : lag > 10000 ? 10000 : lag) * 1000ull;
    g_cfg.proc_sample_one = (int)env_long("CUDACAP_SIM_PROC_SAMPLE_ONE", 0);
    if (g_cfg.proc_sample_one < 0 || g_cfg.proc_sample_one > 2)
        g_cfg.proc_sample_one = 1;
    long cc = env_long("CUDACAP_SIM_CTX_CREATE_MS", 0);
    g_cfg.ctx_create_ns = (uint64_t)(cc < 0 ? 0 : cc) * 1000000ull;
    long sd = env_long("CUDACAP_SIM_SLOWDOWN_PCT", 0);
    g_cfg.slowdown_pct = (uint32_t)(sd < 0 ? 0 : sd > 200 ? 200 : sd);
    long ls = env_long("CUDACAP_SIM_LAUNCH_STALL_US", 0);
    g_cfg.launch_stall_ns = (uint64_t)(ls < 0 ? 0 : ls > 100000 ? 100000 : ls) * 1000ull;
    long le = env_long("CUDACAP_SIM_LAUNCH_STALL_EVERY", 1);
    g_cfg.launch_stall_every = (uint32_t)(le < 1 ? 1 : le > 1000000 ? 1000000 : le);
    g_cfg.no_stream_device = env_long("CUDACAP_SIM_NO_STREAM_DEVICE", 0) == 1;
    g_cfg.no_concurrent_managed = env_long("CUDACAP_SIM_NO_CONCURRENT_MANAGED", 0) == 1;
}

const struct sim_config *sim_config(void)
{
    pthread_mutex_lock(&g_mu);
    if (!g_loaded) {
        load();
        g_loaded = 1;
    }
    pthread_mutex_unlock(&g_mu);
    return &g_cfg;
}

/* In a fork child: read the environment again at the next use, so that a
 * child's setenv (e.g. CUDACAP_SIM_PID_OFFSET) applies to it. */
void sim_config_reset(void)
{
    pthread_mutex_init(&g_mu, NULL);
    g_loaded = 0;
}
