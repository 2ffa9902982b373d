/* The memory cap's policy (src/cap/mem/mem.h) through a scripted port
 * (fake_port.c), on libcudacap_core alone: no driver, no NVML, no hook
 * layer. One device (ordinal 0) capped at 1 GiB, ordinal 1 uncapped.
 * Checks: the binding and its overhead measured from NVML's per-process
 * figure; the reserve at the cap and its one retry after the port's
 * mem_refresh_own (a retry only when something of ours shrank); the view
 * cuMemGetInfo shows; an allocation whose device the port cannot tell
 * charged to the only capped device; context admission and the context
 * size the container learns. Usage: unit_mem_policy STATE_DIR */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cap/cfg.h"
#include "cap/mem/mem.h"
#include "cap/memledger.h"
#include "check.h"
#include "fake_port.h"

#define MIB (1ull << 20)

static int g_h;
static uint64_t g_shrink; /* what the next refresh gives back */
static void shrink(void)
{
    if (g_shrink) cc_ml_release(g_h, g_shrink);
    g_shrink = 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    /* A fresh container each run: the region keeps what the last run learned. */
    DIR *dir = opendir(argv[1]);
    for (struct dirent *e; dir && (e = readdir(dir)) != NULL;) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
        if (e->d_name[0] != '.') unlink(path);
    }
    if (dir) closedir(dir);
    mkdir(argv[1], 0700);
    snprintf(cc_cfg.state_dir, sizeof cc_cfg.state_dir, "%s", argv[1]);
    cc_cfg.mem_limit[0] = 1024 * MIB;
    cc_cfg.ctx_overhead = 0;
    fake_port_install();
    fake.host_pid = 4242;
    fake.proc_mem_known = 1;
    fake.proc_mem = 100 * MIB; /* NVML: this process holds 100 MiB, none of it tracked */
    fake.on_refresh = shrink;

    /* Binding: the overhead measured once, at the first use. */
    CHECK(cc_mem_dev(1) == NULL, "ordinal 1 has no cap: passed through");
    const struct cc_mem_device *m = cc_mem_dev(0);
    CHECK(m && m->cap == 1024 * MIB, "device 0 bound with its cap");
    if (!m) CHECK_EXIT();
    g_h = m->h;
    CHECK(cc_ml_overhead(m->h) == 100 * MIB, "overhead %llu MiB, NVML said 100",
          (unsigned long long)(cc_ml_overhead(m->h) / MIB));

    /* The reserve up to the cap, then refused; each refusal asks the port to
     * drop what shrank, and retries only when something did. NVML's figure
     * (fake.proc_mem) is what the process holds: tracked + overhead. */
    int o = -1;
    CHECK(cc_mem_here(&o) == m && o == 0, "the current device is 0");
    CHECK(cc_mem_reserve(m, 0, 900 * MIB) == 0, "900 MiB fit beside 100 of overhead");
    CHECK(cc_ml_used(m->h) == 1000 * MIB, "used %llu MiB", (unsigned long long)(cc_ml_used(m->h) / MIB));
    fake.proc_mem = 1000 * MIB;
    int before = fake.refreshes;
    CHECK(cc_mem_reserve(m, 0, 100 * MIB) == -1, "100 MiB more passed the 1 GiB cap");
    CHECK(fake.refreshes == before + 1, "a refusal did not refresh (%d)", fake.refreshes - before);
    CHECK(cc_ml_overhead(m->h) == 100 * MIB, "the refusal's re-measure: %llu MiB",
          (unsigned long long)(cc_ml_overhead(m->h) / MIB));
    g_shrink = 200 * MIB; /* a pool trimmed meanwhile: the retry finds room */
    CHECK(cc_mem_reserve(m, 0, 100 * MIB) == 0, "the retry after a shrink was refused");
    CHECK(cc_ml_used(m->h) == 900 * MIB, "used %llu MiB after the shrink and the retry",
          (unsigned long long)(cc_ml_used(m->h) / MIB));
    fake.proc_mem = 900 * MIB;

    /* The view: total = min(cap, physical), free = total - used, never
     * above the device's own free. */
    uint64_t f, t, u;
    cc_mem_info(0, 80000 * MIB, 81920 * MIB, &f, &t, &u);
    CHECK(t == 1024 * MIB && u == 900 * MIB && f == 124 * MIB, "view %llu/%llu/%llu MiB",
          (unsigned long long)(f / MIB), (unsigned long long)(t / MIB), (unsigned long long)(u / MIB));
    cc_mem_info(0, 50 * MIB, 81920 * MIB, &f, &t, &u);
    CHECK(f == 50 * MIB, "free %llu MiB above the device's 50", (unsigned long long)(f / MIB));
    cc_mem_info(1, 7 * MIB, 9 * MIB, &f, &t, &u);
    CHECK(f == 7 * MIB && t == 9 * MIB && u == 2 * MIB, "uncapped view not the device's");

    /* A device the port cannot tell: charged to the only capped one. */
    fake.no_current = 1;
    CHECK(cc_mem_here(&o) == m && o == 0, "an untold device passed uncounted (ordinal %d)", o);
    fake.no_current = 0;

    /* A module's growth: marked stale, re-measured before the next reserve. */
    fake.proc_mem = cc_ml_own(m->h) + 150 * MIB;
    cc_mem_overhead_stale(0);
    CHECK(cc_mem_reserve(m, 0, 100 * MIB) == -1, "the grown overhead was not seen: 800 + 150 + 100 > 1024");
    CHECK(cc_ml_overhead(m->h) == 150 * MIB, "overhead %llu MiB, NVML said 150",
          (unsigned long long)(cc_ml_overhead(m->h) / MIB));

    /* Context admission: the container's first context is expected at a
     * quarter of the cap at most, admitted against the cap, and its measured
     * size is learned (from a process's first context) for the next. */
    cc_ml_release(m->h, cc_ml_own(m->h));
    fake.proc_mem = 0;
    cc_mem_refresh_overhead(0);
    CHECK(cc_ml_used(m->h) == 0, "used %llu MiB with nothing held", (unsigned long long)(cc_ml_used(m->h) / MIB));
    CHECK(cc_mem_ctx_unlearned(0), "a context size known before any was measured");
    CHECK(cc_mem_ctx_expected(m) == 256 * MIB, "expected %llu MiB, not a quarter of the cap",
          (unsigned long long)(cc_mem_ctx_expected(m) / MIB));
    struct cc_ctx_adm a;
    CHECK(cc_mem_ctx_admit(0, 1, &a) == 0 && !a.armed, "an existing context was admitted again");
    CHECK(cc_mem_ctx_admit(0, 0, &a) == 0 && a.armed, "a new context not admitted");
    CHECK(cc_ml_used(m->h) == 256 * MIB, "admission reserved %llu MiB", (unsigned long long)(cc_ml_used(m->h) / MIB));
    fake.proc_mem = 300 * MIB; /* the context took 300 MiB */
    cc_mem_ctx_settle(&a, 1);
    CHECK(cc_ml_overhead(m->h) == 300 * MIB, "overhead %llu MiB after the context",
          (unsigned long long)(cc_ml_overhead(m->h) / MIB));
    CHECK(!cc_mem_ctx_unlearned(0) && cc_mem_ctx_expected(m) == 300 * MIB, "the context size was not learned");
    CHECK(cc_mem_reserve(m, 0, 800 * MIB) == -1, "800 MiB passed beside 300 of overhead");
    CHECK(cc_mem_ctx_admit(0, 0, &a) == 0 && a.armed, "a second context (300 MiB) refused");
    cc_mem_ctx_settle(&a, 0); /* the driver failed it: the reservation given back */
    CHECK(cc_ml_used(m->h) == 300 * MIB, "a failed context kept %llu MiB",
          (unsigned long long)(cc_ml_used(m->h) / MIB - 300));
    CHECK(cc_mem_reserve(m, 0, 500 * MIB) == 0, "500 MiB refused beside 300 of overhead");
    fake.proc_mem = 800 * MIB;
    CHECK(cc_mem_ctx_admit(0, 0, &a) == -1, "a 300 MiB context admitted into 224 MiB");
    CHECK_EXIT();
}
