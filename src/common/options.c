/* The options table (options.h): every variable cudacap reads, with its
 * HAMi/Volcano name, kind, default and the line docs/configuration.md gives
 * it. That table is printed from this one (scripts/gen_config_doc.sh; the
 * test docs.configuration fails when they differ): change a row here, then
 * regenerate the doc. */
#include "common/options.h"

#include <stdio.h>
#include <string.h>

#include "common/controls.h"
#include "common/log.h"
#include "cudacap/config.h"

/* HAMi/Volcano name one cache FILE per container (a random UUID in its
 * name); our per-container folder is that path plus this. */
#define CACHE_DIR_SUFFIX ".d"

static const cc_opt_choice_t controllers[] = {
    {"delta", CC_CTRL_DELTA}, {"aimd", CC_CTRL_AIMD}, {"auto", CC_CTRL_AUTO}, {NULL, 0}};
/* HAMi-core's policy switch. cudacap always enforces a set cap, so default
 * and force are the same here; only disable turns compute capping off. */
static const cc_opt_choice_t policies[] = {
    {"default", 0}, {"force", 0}, {"disable", 1}, {NULL, 0}};

#define HAMI_IGNORED "set by HAMi's device plugin for HAMi-core; **ignored** by cudacap "

const cc_option_t cc_options[CC_OPT_COUNT] = {
    [CC_OPT_MEM_LIMIT] = {
        .name = "CUDACAP_MEM_LIMIT", .alias = "CUDA_DEVICE_MEMORY_LIMIT",
        .seed = "CUDA_MEM_LIMIT",
        .kind = CC_KIND_SIZE, .per_device = 1,
        .doc = "memory cap for every device",
        .doc_dev = "memory cap for device `i` (overrides the above)"},
    [CC_OPT_MEM_OVERSUBSCRIBE] = {
        .name = "CUDACAP_MEM_OVERSUBSCRIBE",
        .kind = CC_KIND_SIZE, .per_device = 1,
        .doc = "memory beyond the cap, every capped device: allocations past the device cap are "
               "served from host memory (managed memory, host preferred) up to this much more; "
               "`cuMemGetInfo` shows cap + this (docs/memory.md, \"Oversubscription\"); needs a "
               "memory cap",
        .doc_dev = "the same for device `i` (overrides the above)"},
    [CC_OPT_MEM_RATIO] = {
        .seed = "CUDA_MEM_RATIO",
        .kind = CC_KIND_RATIO, .per_device = 1,
        .bad = "no oversubscription from it",
        .doc = "the seed's device share: with the memory cap L as the size the container sees, "
               "L / R stays on the device (the cap) and L - L / R is oversubscription; "
               "`CUDACAP_MEM_OVERSUBSCRIBE` wins when both are set",
        .doc_dev = "the same for the device at place `i`"},
    [CC_OPT_MEM_OVERSOLD] = {
        .seed = "CUDA_MEM_OVERSOLD",
        .kind = CC_KIND_SWITCH, .per_device = 1,
        .bad = "not oversold",
        .doc = "the seed's fallback when the card runs out: on, the part of the memory cap that "
               "the card does not have (cap - its total memory) is oversubscription, the rest "
               "stays on the device",
        .doc_dev = "the same for the device at place `i`"},
    [CC_OPT_SM_LIMIT] = {
        .name = "CUDACAP_SM_LIMIT", .alias = "CUDA_DEVICE_SM_LIMIT",
        .seed = "CUDA_CORE_LIMIT",
        .kind = CC_KIND_PERCENT, .per_device = 1,
        .doc = "SM utilization cap, every device",
        .doc_dev = "SM utilization cap for device `i` (overrides the above)"},
    [CC_OPT_SM_SOFT_LIMIT] = {
        .name = "CUDACAP_SM_SOFT_LIMIT", .seed = "CUDA_CORE_SOFT_LIMIT",
        .kind = CC_KIND_PERCENT, .per_device = 1,
        .doc = "elastic limit, every device: at least the SM cap (which stays guaranteed); "
               "idle time is borrowed up to it (docs/compute.md, \"Elastic caps\"); below the "
               "SM cap or without one: an error, the hard cap alone",
        .doc_dev = "elastic limit for device `i` (overrides the above)"},
    [CC_OPT_SM_BURST] = {
        .name = "CUDACAP_SM_BURST_MS",
        .kind = CC_KIND_MS, .def = 0,
        .def_note = "(125 ms x the cap: 37.5 ms of device time at a 30 % cap)",
        .bad = "using the default",
        .doc = "the most device time a container with an SM cap may run ahead of its share "
               "(after an idle spell), and the largest lump its processes are paid in while "
               "several of them wait at once (docs/compute.md, \"Pacing\"); a batch container "
               "may raise it, a latency-bound one with several processes lower it"},
    [CC_OPT_STATE_DIR] = {
        .name = "CUDACAP_STATE_DIR", .alias = "CUDA_DEVICE_MEMORY_SHARED_CACHE",
        .alias_note = "(a file path; the folder is that path + `" CACHE_DIR_SUFFIX "`)",
        .alias_suffix = CACHE_DIR_SUFFIX,
        .kind = CC_KIND_PATH, .def_path = "/tmp/cudacap",
        .doc = "the container's shared state folder (at most 511 bytes; created with its "
               "missing parents)"},
    [CC_OPT_CONTROLLER] = {
        .name = "CUDACAP_CONTROLLER", .seed = "CUDA_SM_CONTROLLER",
        .kind = CC_KIND_ENUM, .choices = controllers, .def = CC_CTRL_AUTO,
        .bad = "using auto",
        .doc = "the compute cap's control law (docs/compute.md)"},
    [CC_OPT_LOG_LEVEL] = {
        .name = "CUDACAP_LOG_LEVEL", .alias = "LIBCUDA_LOG_LEVEL",
        .kind = CC_KIND_LEVEL, .def = CC_LOG_WARN,
        .bad = "using 1",
        .doc = "what is said on stderr: 0 errors, 1 warnings, 2 info, 3 verbose, 4 debug"},
    [CC_OPT_COUNT_CALLS] = {
        .name = "CUDACAP_COUNT_CALLS",
        .kind = CC_KIND_SWITCH, .def = 0,
        .bad = "not counting calls",
        .doc = "on: count calls through each wrapper, print the counts at exit, and with them where capped "
               "launches waited (new shapes waiting for a pending timing, waits for tokens, launches timed) "
               "and where the compute watcher's cycles went (owned, quiet, NVML device-wide and per-process "
               "queries, polls skipped as not due, the period and publication lag learned)"},
    [CC_OPT_SHARED_BUCKET] = {
        .name = "CUDACAP_SHARED_BUCKET", .seed = "CUDA_SM_SHARED_BUCKET",
        .kind = CC_KIND_SWITCH, .def = 1, .def_note = "(shared)",
        .bad = "using the shared bucket",
        .doc = "off: every process gets its own compute bucket (a baseline for comparisons; "
               "the container's processes then pass the cap together)"},
    [CC_OPT_CTX_OVERHEAD] = {
        .name = "CUDACAP_CTX_OVERHEAD",
        .kind = CC_KIND_SIZE, .def = 0,
        .def_note = "(measured from NVML; for the check 512 MiB, at most a quarter of the cap)",
        .bad = "using 0",
        .doc = "context and library memory to charge per process and device when NVML cannot "
               "measure it, and the size a new context is checked against before the "
               "container has measured one"},
    [CC_OPT_CORE_POLICY] = {
        .alias = "GPU_CORE_UTILIZATION_POLICY",
        .kind = CC_KIND_ENUM, .choices = policies, .def = 0,
        .bad = "using default (the SM cap applies)",
        .doc = "`disable` turns the compute cap off; `default` and `force` both leave it on "
               "(cudacap always enforces a set cap, where HAMi's `default` lets its monitor "
               "switch it)"},
    [CC_OPT_TASK_PRIORITY] = {
        .alias = "CUDA_TASK_PRIORITY",
        .kind = CC_KIND_IGNORED,
        .bad = "cudacap has no task priorities (each container gets its SM cap)",
        .doc = HAMI_IGNORED "(no task priorities), with one warning per process when set"},
    [CC_OPT_OVERSUBSCRIBE] = {
        .alias = "CUDA_OVERSUBSCRIBE",
        .kind = CC_KIND_SWITCH, .def = 0,
        .bad = "not oversubscribing",
        .doc = "set by HAMi's device plugin when its memory scaling is above 1 (the cap it gives "
               "in `CUDA_DEVICE_MEMORY_LIMIT` may exceed the card): on, every device as with "
               "`CUDA_MEM_OVERSOLD`: the part of the cap the card does not have is "
               "oversubscription"},
    [CC_OPT_SEED_DEVICES] = {
        .seed = "MANAGER_VISIBLE_DEVICES", .kind = CC_KIND_TEXT,
        .bad = "the seed's names are read by CUDA ordinal",
        .doc = "the seed's (vgpu-manager's) comma-separated GPU UUIDs: `<i>` in a seed name is "
               "the device's place in this list. Mapped to CUDA ordinals through "
               "`CUDA_VISIBLE_DEVICES` when that lists UUIDs; otherwise place `i` is ordinal `i`"},
    [CC_OPT_STRICT] = {
        .name = "CUDACAP_STRICT", .kind = CC_KIND_SWITCH, .def = 0, .bad = "not strict",
        .doc = "on: a configuration error in the environment refuses the GPU (`cuInit` fails "
               "with `CUDA_ERROR_NOT_PERMITTED`) instead of running with that cap absent"},
    [CC_OPT_TEST_FAULT] = {
        .name = "CUDACAP_TEST_FAULT",
        .kind = CC_KIND_TEXT,
        .bad = "no fault is injected",
        .doc = "tests only: `POINT:N` makes the N-th call of an injection point fail, "
               "`POINT:N:sticky` that call and every later one (src/common/fault.h; "
               "docs/testing.md, \"Fault injection\")"},
    [CC_OPT_TEST_FAULT_COUNT] = {
        .name = "CUDACAP_TEST_FAULT_COUNT",
        .kind = CC_KIND_TEXT,
        .bad = "not counting",
        .doc = "tests only: a file to which each process appends, at exit, how many calls it "
               "made of each injection point"},
};

const char *cc_opt_name(const cc_option_t *o, int alias, int dev, char *buf, unsigned size)
{
    const char *base = alias == 2 ? o->seed : alias ? o->alias : o->name;
    if (!base) return NULL;
    if (dev < 0) snprintf(buf, size, "%s", base);
    else snprintf(buf, size, "%s_%d", base, dev);
    return buf;
}

/* The names an option is read under: its own, its alias, the seed
 * system's (alias 0, 1, 2 of cc_opt_name). */
static int CC_CONTROL_POINT(names_read)(void) { return 3; }

void cc_opt_get_seed(const cc_option_t *o, int dev, int seed_dev,
                     const char *(*get)(const char *), cc_opt_value_t *out)
{
    memset(out, 0, sizeof *out);
    int names = names_read();
    for (int alias = 0; alias < names; alias++) {
        char name[sizeof out->name];
        int ix = alias == 2 ? seed_dev : dev;
        if (alias == 2 && dev >= 0 && seed_dev < 0) continue;
        if (!cc_opt_name(o, alias, ix, name, sizeof name)) continue;
        const char *v = get(name);
        if (!v || !*v) continue;
        if (!out->value) {
            out->value = v;
            out->from_alias = alias;
            memcpy(out->name, name, sizeof name);
        } else if (strcmp(v, out->value) != 0 && !out->shadowed) {
            out->shadowed = v;
            memcpy(out->shadowed_name, name, sizeof name);
        }
    }
}

void cc_opt_get(const cc_option_t *o, int dev, const char *(*get)(const char *), cc_opt_value_t *out)
{
    cc_opt_get_seed(o, dev, dev, get, out);
}

void cc_opt_say_shadowed(const cc_opt_value_t *v)
{
    if (v->shadowed)
        cc_warn("%s=\"%s\" differs from %s=\"%s\"; using %s", v->shadowed_name, v->shadowed,
                v->name, v->value, v->name);
}
