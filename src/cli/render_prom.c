/* The Prometheus exposition (render.h): names and labels in the style of
 * NVIDIA's DCGM exporter so that dashboards join on them: gpu (the NVML
 * index), UUID, Hostname; the container as cudacap_container (a plain
 * "container" clashes with the scrape target's own label and becomes
 * exported_container); with the HAMi layout (<podUID>_<ctr>) pod_uid,
 * container, and namespace, pod from the kubelet's log folders;
 * other containers namespace, pod, container from the kubelet's
 * pod-resources API (podres.h) when a device allocated to a pod names them.
 * Device figures once per device, ratios in base units (0..1), counters
 * as *_total, no pid as a value (a pid is a label of per-process series). */
#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/gpu_info.h"
#include "cli/podres.h"
#include "cli/render.h"

/* The node's name: NODE_NAME (a DaemonSet sets it from spec.nodeName, as
 * for dcgm-exporter), else the host name. */
static const char *hostname(void)
{
    static char h[256];
    const char *e = getenv("NODE_NAME");
    if (e && *e) snprintf(h, sizeof h, "%s", e);
    else if (gethostname(h, sizeof h - 1) != 0) snprintf(h, sizeof h, "unknown");
    h[sizeof h - 1] = 0;
    return h;
}

/* A label value: backslash, quote and newline escaped, as the exposition
 * format asks, and every byte that is not part of well-formed UTF-8
 * replaced by U+FFFD. One folder whose name is not UTF-8 (a folder name is
 * any bytes) made Prometheus reject the whole scrape ("invalid UTF-8 label
 * value"): every container's series lost. */
static void prom_val(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = cc_utf8_len(p);
        if (n == 0) {
            fputs("\xef\xbf\xbd", f);
            p++;
        } else if (*p == '\\' || *p == '"') {
            fprintf(f, "\\%c", *p);
            p++;
        } else if (*p == '\n') {
            fputs("\\n", f);
            p++;
        } else {
            fwrite(p, 1, (size_t)n, f);
            p += n;
        }
    }
}

/* The pod UID of a HAMi folder name "<36-char pod UID>_<container>", or 0. */
static int pod_uid(const char *name, char *out)
{
    if (strlen(name) < 38 || name[36] != '_') return 0;
    for (int i = 0; i < 36; i++) {
        int dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? name[i] != '-' : !isxdigit((unsigned char)name[i])) return 0;
    }
    memcpy(out, name, 36);
    out[36] = 0;
    return 1;
}

/* Pod namespace and name of a pod UID, from the kubelet's log folders
 * /var/log/pods/<namespace>_<name>_<uid> (CUDACAP_POD_LOGS; namespace and
 * name are DNS-1123, without "_"): read once per exposition. */
struct podname {
    char uid[37], ns[64], name[254];
};
static struct podname pods[512];
static int npods = -1;

static void pods_scan(void)
{
    npods = 0;
    const char *dir = getenv("CUDACAP_POD_LOGS");
    DIR *d = opendir(dir && *dir ? dir : "/var/log/pods");
    if (!d) return;
    struct dirent *e;
    while (npods < (int)(sizeof pods / sizeof pods[0]) && (e = readdir(d))) {
        const char *a = strchr(e->d_name, '_'), *b = a ? strchr(a + 1, '_') : NULL;
        if (!a || !b || strchr(b + 1, '_') || strlen(b + 1) != 36) continue;
        struct podname *p = &pods[npods];
        if ((size_t)(a - e->d_name) >= sizeof p->ns || (size_t)(b - a - 1) >= sizeof p->name) continue;
        snprintf(p->uid, sizeof p->uid, "%s", b + 1);
        snprintf(p->ns, sizeof p->ns, "%.*s", (int)(a - e->d_name), e->d_name);
        snprintf(p->name, sizeof p->name, "%.*s", (int)(b - a - 1), a + 1);
        npods++;
    }
    closedir(d);
}

/* The pod-resources entry naming container x: a device id that is its
 * name (a device plugin handing out cudacap containers by name) or its CDI
 * name (what a CDI-returning device plugin or DRA driver lists), owned by
 * one pod container only: an id two owners claim names neither. An id that
 * is one of x's GPU UUIDs never labels it: several pods share a GPU under
 * cudacap, so a GPU's owner in the kubelet's books is not this container's. */
#define CDI_KIND "cudacap.io/cap="
static const struct podres_entry *lookup(const struct podres *pr, const char *id)
{
    int lo = 0, hi = pr->n;
    while (lo < hi) { /* the first entry >= id (the table is sorted by id) */
        int mid = lo + (hi - lo) / 2;
        if (strcmp(pr->e[mid].id, id) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo == pr->n || strcmp(pr->e[lo].id, id)) return NULL;
    for (int i = lo + 1; i < pr->n && !strcmp(pr->e[i].id, id); i++) {
        const struct podres_entry *a = &pr->e[lo], *b = &pr->e[i];
        if (strcmp(a->ns, b->ns) || strcmp(a->pod, b->pod) || strcmp(a->ctr, b->ctr)) return NULL;
    }
    return &pr->e[lo];
}

static const struct podres_entry *pod_of(const struct podres *pr, const struct snap *x)
{
    char cdi[sizeof CDI_KIND + sizeof x->name];
    if (!pr || !pr->n) return NULL;
    for (int i = 0; i < x->ndev; i++)
        if (!strcmp(x->dev[i].uuid, x->name)) return NULL;
    const struct podres_entry *by_name = lookup(pr, x->name);
    snprintf(cdi, sizeof cdi, CDI_KIND "%s", x->name);
    const struct podres_entry *by_cdi = lookup(pr, cdi);
    if (by_name && by_cdi && (strcmp(by_name->ns, by_cdi->ns) || strcmp(by_name->pod, by_cdi->pod) ||
                              strcmp(by_name->ctr, by_cdi->ctr)))
        return NULL;
    return by_name ? by_name : by_cdi;
}

/* {cudacap_container=..,[pod_uid=..,][namespace=..,pod=..,][container=..,]
 *  [gpu=..,UUID=..,]Hostname=..[,extra]}; pe: x's pod-resources owner. */
static void labels(FILE *f, const struct snap *x, const struct podres_entry *pe, const struct snap_dev *d,
                   const char *extra)
{
    char uid[40];
    fputc('{', f);
    if (x) {
        fputs("cudacap_container=\"", f);
        prom_val(f, x->name);
        fputs("\",", f);
        if (pod_uid(x->name, uid)) {
            fprintf(f, "pod_uid=\"%s\",", uid);
            for (int i = 0; i < npods; i++)
                if (!strcmp(pods[i].uid, uid)) {
                    fputs("namespace=\"", f);
                    prom_val(f, pods[i].ns);
                    fputs("\",pod=\"", f);
                    prom_val(f, pods[i].name);
                    fputs("\",", f);
                    break;
                }
            fputs("container=\"", f);
            prom_val(f, x->name + 37);
            fputs("\",", f);
        } else if (pe) {
            fputs("namespace=\"", f);
            prom_val(f, pe->ns);
            fputs("\",pod=\"", f);
            prom_val(f, pe->pod);
            fputs("\",container=\"", f);
            prom_val(f, pe->ctr);
            fputs("\",", f);
        }
    }
    if (d) {
        fprintf(f, "gpu=\"%d\",UUID=\"", d->index);
        prom_val(f, d->uuid);
        fputs("\",", f);
    }
    fputs("Hostname=\"", f);
    prom_val(f, hostname());
    fprintf(f, "\"%s%s}", extra ? "," : "", extra ? extra : "");
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

enum { M_FB_USED, M_FB_LIMIT, M_HOST_USED, M_HOST_LIMIT, M_SM_UTIL, M_SM_LIMIT, M_SM_SOFT, M_SM_TARGET, M_BORROWING, M_BORROWED,
       M_AGE, M_DEV_PROCS, M_SAMPLER, M_REFUSALS, M_THROTTLED, M_N };
static const struct {
    const char *name, *type, *help;
} metric[M_N] = {
    {"cudacap_fb_used_bytes", "gauge", "Device memory the container uses (allocations + context overhead), bytes."},
    {"cudacap_fb_limit_bytes", "gauge", "Device memory cap of the container, bytes (absent: no cap)."},
    {"cudacap_memory_host_used_bytes", "gauge", "Memory the container allocated beyond its device cap, served from host memory (oversubscription), bytes."},
    {"cudacap_memory_host_limit_bytes", "gauge", "How much the container may allocate beyond its device cap in host memory, bytes (absent: no oversubscription)."},
    {"cudacap_sm_utilization_ratio", "gauge", "SM utilization of the container's processes over the last sample, 0..1 (0 when none is alive)."},
    {"cudacap_sm_limit_ratio", "gauge", "SM utilization cap of the container, 0..1 (absent: no cap); the guaranteed share of an elastic one."},
    {"cudacap_sm_soft_limit_ratio", "gauge", "Elastic container: the share of idle device time it may borrow up to, 0..1 (absent: not elastic)."},
    {"cudacap_sm_target_ratio", "gauge", "Elastic container: the SM utilization it is held to now (hard cap .. soft limit), 0..1."},
    {"cudacap_sm_borrowing", "gauge", "Elastic container: 1 when its last sample used more than its hard cap, under a target above it."},
    {"cudacap_sm_borrowed_seconds_total", "counter", "Elastic container: device time used above its hard cap, seconds."},
    {"cudacap_sample_age_seconds", "gauge", "Age of the container's last published utilization sample, seconds (a stalled sampler shows here)."},
    {"cudacap_device_processes", "gauge", "Live processes of the container on the device."},
    {"cudacap_sampler_active", "gauge", "1 when a process of the container holds the device's NVML sampling, 0 when none does."},
    {"cudacap_mem_refusals_total", "counter", "Allocations refused at the container's memory cap."},
    {"cudacap_throttled_seconds_total", "counter", "Time the container's launches waited for the compute cap, seconds, summed over waiting threads."},
};

static int metric_value(int m, const struct snap_dev *d, double *v)
{
    switch (m) {
    case M_FB_USED: *v = (double)d->mem_used; return d->has_mem;
    case M_FB_LIMIT: *v = (double)d->mem_limit; return d->has_mem && d->mem_limit;
    case M_HOST_USED: *v = (double)d->host_used; return d->has_mem;
    case M_HOST_LIMIT: *v = (double)d->host_limit; return d->has_mem && d->host_limit;
    case M_SM_UTIL: *v = d->idle ? 0 : d->util_pm / 1000.0; return d->has_sm && (d->has_sample || d->idle);
    case M_SM_LIMIT: *v = d->sm_limit_pm / 1000.0; return d->has_sm && d->sm_limit_pm;
    case M_SM_SOFT: *v = d->sm_soft_pm / 1000.0; return d->has_sm && d->sm_soft_pm;
    case M_SM_TARGET: *v = d->sm_target_pm / 1000.0; return d->has_sm && d->sm_soft_pm;
    case M_BORROWING: *v = d->borrowing; return d->has_sm && d->sm_soft_pm;
    case M_BORROWED: *v = (double)d->borrowed_ns / 1e9; return d->has_sm && d->sm_soft_pm;
    case M_AGE: *v = (double)d->sample_age_ns / 1e9; return d->has_sm && d->has_sample;
    case M_DEV_PROCS: *v = d->nproc; return 1;
    case M_SAMPLER: *v = d->owner == OWNER_HELD; return d->has_sm && d->owner != OWNER_UNKNOWN;
    case M_REFUSALS: *v = (double)d->refusals; return d->has_mem;
    case M_THROTTLED: *v = (double)d->throttled_ns / 1e9; return d->has_sm;
    }
    return 0;
}

/* The device's own utilization, once per device: from the freshest sample
 * any container with a live process published for it. */
static void device_util(FILE *f, struct snap *const *s, int n)
{
    head(f, "cudacap_gpu_utilization_ratio", "gauge",
         "SM utilization of the whole device (every user), 0..1, from the freshest sample of any container.");
    struct gpu_total t[64];
    int nt = gpu_totals(s, n, t, 64);
    for (int k = 0; k < nt; k++) {
        if (!t[k].has_util) continue;
        fputs("cudacap_gpu_utilization_ratio", f);
        labels(f, NULL, NULL, t[k].d, NULL);
        fprintf(f, " %.10g\n", t[k].util_pm / 1000.0);
    }
}

/* Per device, over every container listed: the sum of the memory caps and
 * of the SM caps (hard shares), how many containers have a cap there, and
 * with NVML the device's memory and the caps' overcommit of it. The node's
 * question: how much of this GPU has been promised. */
static void device_totals(FILE *f, struct snap *const *s, int n)
{
    struct gpu_total all[64], t[64];
    int na = gpu_totals(s, n, all, 64), nt = 0;
    for (int k = 0; k < na; k++)
        if (all[k].containers) t[nt++] = all[k];
    head(f, "cudacap_gpu_containers", "gauge", "Containers with a memory or SM cap on the device.");
    for (int k = 0; k < nt; k++) {
        fputs("cudacap_gpu_containers", f);
        labels(f, NULL, NULL, t[k].d, NULL);
        fprintf(f, " %d\n", t[k].containers);
    }
    head(f, "cudacap_gpu_fb_limit_sum_bytes", "gauge", "Sum of the containers' memory caps on the device, bytes.");
    for (int k = 0; k < nt; k++) {
        if (!t[k].mem_capped) continue;
        fputs("cudacap_gpu_fb_limit_sum_bytes", f);
        labels(f, NULL, NULL, t[k].d, NULL);
        fprintf(f, " %llu\n", (unsigned long long)t[k].mem_caps);
    }
    head(f, "cudacap_gpu_sm_limit_sum_ratio", "gauge",
         "Sum of the containers' SM caps (an elastic one's hard share) on the device, 0..n (over 1: SM time promised twice).");
    for (int k = 0; k < nt; k++) {
        fputs("cudacap_gpu_sm_limit_sum_ratio", f);
        labels(f, NULL, NULL, t[k].d, NULL);
        fprintf(f, " %.10g\n", t[k].sm_caps_pm / 1000.0);
    }
    uint64_t total[64];
    int known[64];
    for (int k = 0; k < nt; k++) known[k] = gpu_mem_total(t[k].d->uuid, &total[k]);
    head(f, "cudacap_gpu_fb_total_bytes", "gauge", "Device memory of the GPU, bytes (from NVML; absent without it).");
    for (int k = 0; k < nt; k++) {
        if (!known[k]) continue;
        fputs("cudacap_gpu_fb_total_bytes", f);
        labels(f, NULL, NULL, t[k].d, NULL);
        fprintf(f, " %llu\n", (unsigned long long)total[k]);
    }
    head(f, "cudacap_gpu_fb_overcommit_ratio", "gauge",
         "Sum of the memory caps over the device's memory (over 1: memory promised that is not there).");
    for (int k = 0; k < nt; k++) {
        if (!known[k] || !t[k].mem_capped) continue;
        fputs("cudacap_gpu_fb_overcommit_ratio", f);
        labels(f, NULL, NULL, t[k].d, NULL);
        fprintf(f, " %.10g\n", (double)t[k].mem_caps / (double)total[k]);
    }
}

void render_prom(FILE *f, struct snap *const *s, int n, const struct podres *pr)
{
    pods_scan();
    const struct podres_entry *pe[SNAP_MAX_CONTAINERS];
    if (n > SNAP_MAX_CONTAINERS) n = SNAP_MAX_CONTAINERS; /* snap_collect's bound */
    for (int c = 0; c < n; c++) pe[c] = pod_of(pr, s[c]);
    head(f, "cudacap_build_info", "gauge", "cudacap's version (the value is 1).");
    fputs("cudacap_build_info", f);
    labels(f, NULL, NULL, NULL, "version=\"" CUDACAP_VERSION_STRING "\"");
    fputs(" 1\n", f);
    device_util(f, s, n);
    device_totals(f, s, n);
    for (int m = 0; m < M_N; m++) {
        head(f, metric[m].name, metric[m].type, metric[m].help);
        for (int c = 0; c < n; c++)
            for (int i = 0; i < s[c]->ndev; i++) {
                double v;
                if (!metric_value(m, &s[c]->dev[i], &v)) continue;
                fputs(metric[m].name, f);
                labels(f, s[c], pe[c], &s[c]->dev[i], NULL);
                fprintf(f, " %.10g\n", v);
            }
    }
    head(f, "cudacap_processes", "gauge", "Live processes of the container (any device).");
    for (int c = 0; c < n; c++) {
        fputs("cudacap_processes", f);
        labels(f, s[c], pe[c], NULL, NULL);
        fprintf(f, " %d\n", s[c]->nalive);
    }
    char pid[32];
    head(f, "cudacap_process_fb_used_bytes", "gauge", "Device memory of one process of the container, bytes.");
    for (int c = 0; c < n; c++)
        for (int p = 0; p < s[c]->nproc; p++) {
            const struct snap_proc *q = &s[c]->proc[p];
            if (!q->alive || !q->has_mem) continue;
            snprintf(pid, sizeof pid, "pid=\"%u\"", q->pid);
            for (int i = 0; i < s[c]->ndev; i++) {
                if (!s[c]->dev[i].has_mem) continue;
                fputs("cudacap_process_fb_used_bytes", f);
                labels(f, s[c], pe[c], &s[c]->dev[i], pid);
                fprintf(f, " %llu\n", (unsigned long long)q->mem[i]);
            }
        }
    head(f, "cudacap_process_sm_utilization_ratio", "gauge",
         "SM utilization of one process of the container on a device over the sampler's last sample, 0..1.");
    for (int c = 0; c < n; c++)
        for (int p = 0; p < s[c]->nproc; p++) {
            const struct snap_proc *q = &s[c]->proc[p];
            if (!q->alive) continue;
            snprintf(pid, sizeof pid, "pid=\"%u\"", q->pid);
            for (int i = 0; i < s[c]->ndev; i++) {
                if (!q->has_util[i]) continue;
                fputs("cudacap_process_sm_utilization_ratio", f);
                labels(f, s[c], pe[c], &s[c]->dev[i], pid);
                fprintf(f, " %.10g\n", q->util_pm[i] / 1000.0);
            }
        }
    head(f, "cudacap_config_errors_total", "counter",
         "Configuration errors the container's processes found in their environment or limits file, summed over processes.");
    for (int c = 0; c < n; c++) {
        fputs("cudacap_config_errors_total", f);
        labels(f, s[c], pe[c], NULL, NULL);
        fprintf(f, " %llu\n", (unsigned long long)s[c]->config_errors);
    }
    head(f, "cudacap_region_ok", "gauge",
         "Whether a state region of the container could be read (1) or not (0: another layout, being rebuilt, truncated, corrupt, not a plain file). No sample for a region the container does not have.");
    for (int c = 0; c < n; c++) {
        static const char *rn[2] = {"region=\"memory\"", "region=\"compute\""};
        int st[2] = {s[c]->mem_state, s[c]->sm_state};
        for (int r = 0; r < 2; r++) {
            /* A region that does not exist is not broken: a container with
             * a memory cap only has no compute region, and a 0 there fired
             * every naive "region_ok == 0" alert. */
            if (st[r] == SNAP_ABSENT) continue;
            fputs("cudacap_region_ok", f);
            labels(f, s[c], pe[c], NULL, rn[r]);
            fprintf(f, " %d\n", st[r] == SNAP_OK);
        }
    }
}
