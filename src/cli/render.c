/* Table, JSON and Prometheus printers (render.h). Numbers come from the
 * snapshot as read; nothing here touches the state files. */
#include "cli/render.h"

#include <string.h>

#include "cli/cli.h"

const char *render_pct(int have, uint32_t pm, char *buf, size_t len)
{
    if (!have) snprintf(buf, len, "-");
    else snprintf(buf, len, "%u.%u%%", pm / 10, pm % 10);
    return buf;
}

static const char *state_word(int st)
{
    static const char *const w[] = {[SNAP_ABSENT] = "absent", [SNAP_OK] = "ok", [SNAP_NODATA] = "no data",
                                    [SNAP_TRUNCATED] = "truncated", [SNAP_CORRUPT] = "corrupt",
                                    [SNAP_UNUSABLE] = "unusable"};
    return w[st];
}

/* One line per region that could not be read, saying why (the file named). */
static void problems(FILE *f, const struct snap *x)
{
    if (x->mem_why[0]) fprintf(f, "%-20s (memory region: %s: %s)\n", "", state_word(x->mem_state), x->mem_why);
    if (x->sm_why[0]) fprintf(f, "%-20s (compute region: %s: %s)\n", "", state_word(x->sm_state), x->sm_why);
}

static void owner_str(const struct snap_dev *d, char *buf, size_t len)
{
    if (!d->has_sm || d->owner == OWNER_UNKNOWN) snprintf(buf, len, "-");
    else if (d->owner == OWNER_NONE) snprintf(buf, len, "none");
    else if (d->owner_pid) snprintf(buf, len, "pid %ld", d->owner_pid);
    else snprintf(buf, len, "held");
}

void render_table(FILE *f, struct snap *const *s, int n, int brief, const char *const *hist)
{
    fprintf(f, "%-20s %-4s %-27s %-17s %-10s %5s%s\n", "CONTAINER", "GPU", "MEMORY USED / CAP",
            "SM UTIL / CAP", "SAMPLER", "PROCS", hist ? "  UTIL HISTORY" : "");
    for (int c = 0; c < n; c++) {
        const struct snap *x = s[c];
        if (x->ndev == 0) {
            char why[96];
            if (x->mem_state == SNAP_ABSENT && x->sm_state == SNAP_ABSENT)
                snprintf(why, sizeof why, "no data (no process has run capped yet)");
            else
                snprintf(why, sizeof why, "no data (memory region: %s, compute region: %s)",
                         state_word(x->mem_state), state_word(x->sm_state));
            fprintf(f, "%-20s %-4s %s\n", x->name, "-", why);
            problems(f, x);
            continue;
        }
        for (int i = 0; i < x->ndev; i++) {
            const struct snap_dev *d = &x->dev[i];
            char mem[64], a[24], b[24], util[48], u1[16], u2[16], own[32];
            if (d->has_mem)
                snprintf(mem, sizeof mem, "%s / %s", cli_bytes(d->mem_used, a, sizeof a),
                         d->mem_limit ? cli_bytes(d->mem_limit, b, sizeof b) : "no cap");
            else
                snprintf(mem, sizeof mem, "-");
            if (d->has_sm)
                snprintf(util, sizeof util, "%s / %s", render_pct(d->has_sample, d->util_pm, u1, sizeof u1),
                         d->sm_limit_pm ? render_pct(1, d->sm_limit_pm, u2, sizeof u2) : "no cap");
            else
                snprintf(util, sizeof util, "-");
            owner_str(d, own, sizeof own);
            fprintf(f, "%-20s %-4d %-27s %-17s %-10s %5d%s%s\n", i == 0 ? x->name : "", d->index,
                    mem, util, own, d->nproc, hist && i == 0 ? "  " : "",
                    hist && i == 0 && hist[c] ? hist[c] : "");
        }
        problems(f, x);
        if (brief) continue;
        for (int p = 0; p < x->nproc; p++) {
            const struct snap_proc *q = &x->proc[p];
            char hp[24] = "", mem[160] = "", util[160] = "", one[64], bb[24], pc[16];
            if (q->host_pid && q->host_pid != q->pid) snprintf(hp, sizeof hp, " (host %u)", q->host_pid);
            if (q->has_mem)
                for (int i = 0; i < x->ndev; i++) {
                    if (!x->dev[i].has_mem) continue;
                    snprintf(one, sizeof one, "%sgpu%d %s", mem[0] ? ", " : "", x->dev[i].index,
                             cli_bytes(q->mem[i], bb, sizeof bb));
                    strncat(mem, one, sizeof mem - strlen(mem) - 1);
                }
            for (int i = 0; i < x->ndev; i++) {
                if (!q->has_util[i]) continue;
                snprintf(one, sizeof one, "%sgpu%d %s", util[0] ? ", " : "  sm ", x->dev[i].index,
                         render_pct(1, q->util_pm[i], pc, sizeof pc));
                strncat(util, one, sizeof util - strlen(util) - 1);
            }
            for (int i = 0; i < x->ndev; i++) /* the owner of a device's sampling */
                if (x->dev[i].owner == OWNER_HELD && x->dev[i].owner_pid == (long)q->pid) {
                    snprintf(one, sizeof one, "  [samples gpu%d]", x->dev[i].index);
                    strncat(util, one, sizeof util - strlen(util) - 1);
                }
            fprintf(f, "  pid %u%s  %s%s%s\n", q->pid, hp, mem[0] ? mem : "memory -", util,
                    q->alive ? "" : "  [exited; not counted]");
        }
    }
}

void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static void json_pct(FILE *f, int have, uint32_t pm)
{
    if (have) fprintf(f, "%u.%u", pm / 10, pm % 10);
    else fputs("null", f);
}

void render_json(FILE *f, const char *root, struct snap *const *s, int n)
{
    fputs("{\"root\":", f);
    json_str(f, root);
    fputs(",\"containers\":[", f);
    for (int c = 0; c < n; c++) {
        const struct snap *x = s[c];
        fprintf(f, "%s\n {\"name\":", c ? "," : "");
        json_str(f, x->name);
        fputs(",\"state_dir\":", f);
        json_str(f, x->dir);
        fprintf(f, ",\"memory_region\":\"%s\",\"compute_region\":\"%s\"", state_word(x->mem_state),
                state_word(x->sm_state));
        const char *why[2] = {x->mem_why, x->sm_why}, *key[2] = {"memory", "compute"};
        for (int r = 0; r < 2; r++) {
            fprintf(f, ",\"%s_region_problem\":", key[r]);
            if (why[r][0]) json_str(f, why[r]);
            else fputs("null", f);
        }
        fputs(",\"devices\":[", f);
        for (int i = 0; i < x->ndev; i++) {
            const struct snap_dev *d = &x->dev[i];
            fprintf(f, "%s\n  {\"gpu\":%d,\"uuid\":", i ? "," : "", d->index);
            json_str(f, d->uuid);
            if (d->has_mem)
                fprintf(f, ",\"memory_used_bytes\":%llu", (unsigned long long)d->mem_used);
            else
                fputs(",\"memory_used_bytes\":null", f);
            if (d->has_mem && d->mem_limit)
                fprintf(f, ",\"memory_limit_bytes\":%llu", (unsigned long long)d->mem_limit);
            else
                fputs(",\"memory_limit_bytes\":null", f);
            fputs(",\"sm_util_percent\":", f);
            json_pct(f, d->has_sm && d->has_sample, d->util_pm);
            fputs(",\"gpu_util_percent\":", f);
            json_pct(f, d->has_sm && d->has_sample, d->dev_util_pm);
            fputs(",\"sm_limit_percent\":", f);
            json_pct(f, d->has_sm && d->sm_limit_pm, d->sm_limit_pm);
            if (d->has_sm && d->has_sample)
                fprintf(f, ",\"sample_age_ms\":%llu", (unsigned long long)(d->sample_age_ns / 1000000));
            else
                fputs(",\"sample_age_ms\":null", f);
            if (d->sample_interval_us) fprintf(f, ",\"sample_interval_ms\":%u", d->sample_interval_us / 1000);
            else fputs(",\"sample_interval_ms\":null", f);
            fprintf(f, ",\"sampling_owner\":\"%s\"",
                    !d->has_sm || d->owner == OWNER_UNKNOWN ? "unknown"
                    : d->owner == OWNER_NONE                ? "none"
                                                            : "held");
            if (d->owner_pid) fprintf(f, ",\"sampling_owner_pid\":%ld", d->owner_pid);
            else fputs(",\"sampling_owner_pid\":null", f);
            if (d->owner_host_pid) fprintf(f, ",\"sampling_owner_host_pid\":%u", d->owner_host_pid);
            else fputs(",\"sampling_owner_host_pid\":null", f);
            fprintf(f, ",\"processes\":%d}", d->nproc);
        }
        fputs("],\"processes\":[", f);
        for (int p = 0; p < x->nproc; p++) {
            const struct snap_proc *q = &x->proc[p];
            fprintf(f, "%s\n  {\"pid\":%u,\"host_pid\":", p ? "," : "", q->pid);
            if (q->host_pid) fprintf(f, "%u", q->host_pid);
            else fputs("null", f);
            fprintf(f, ",\"alive\":%s", q->alive ? "true" : "false");
            if (q->has_mem) fprintf(f, ",\"memory_bytes\":%llu", (unsigned long long)q->mem_total);
            else fputs(",\"memory_bytes\":null", f);
            /* The process's utilization summed over its devices; per device below. */
            uint32_t tot = 0;
            int have = 0;
            for (int i = 0; i < x->ndev; i++)
                if (q->has_util[i]) tot += q->util_pm[i], have = 1;
            fputs(",\"sm_util_percent\":", f);
            json_pct(f, have, tot);
            fputs(",\"devices\":[", f);
            int first = 1;
            for (int i = 0; i < x->ndev; i++) {
                int m = q->has_mem && x->dev[i].has_mem;
                if (!m && !q->has_util[i]) continue;
                fprintf(f, "%s{\"gpu\":%d,\"memory_bytes\":", first ? "" : ",", x->dev[i].index);
                if (m) fprintf(f, "%llu", (unsigned long long)q->mem[i]);
                else fputs("null", f);
                fputs(",\"sm_util_percent\":", f);
                json_pct(f, q->has_util[i], q->util_pm[i]);
                fputc('}', f);
                first = 0;
            }
            fputs("]}", f);
        }
        fputs("]}", f);
    }
    fputs("\n]}\n", f);
}

/* Prometheus label value: backslash, quote and newline escaped. */
static void prom_val(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"') fprintf(f, "\\%c", *s);
        else if (*s == '\n') fputs("\\n", f);
        else fputc(*s, f);
    }
}

static void labels(FILE *f, const struct snap *x, const struct snap_dev *d, uint32_t pid)
{
    fputs("{container=\"", f);
    prom_val(f, x->name);
    if (d) {
        fprintf(f, "\",gpu=\"%d\",UUID=\"", d->index);
        prom_val(f, d->uuid);
    }
    if (pid) fprintf(f, "\",pid=\"%u", pid);
    fputs("\"}", f);
}

enum { M_FB_USED, M_FB_LIMIT, M_SM_UTIL, M_GPU_UTIL, M_SM_LIMIT, M_AGE, M_DEV_PROCS, M_OWNER, M_N };
static const struct {
    const char *name, *type, *help;
} metric[M_N] = {
    {"cudacap_fb_used_bytes", "gauge", "Device memory the container uses (allocations + context overhead), bytes."},
    {"cudacap_fb_limit_bytes", "gauge", "Device memory cap of the container, bytes (absent: no cap)."},
    {"cudacap_sm_util_percent", "gauge", "SM utilization of the container's processes over the last sample, percent."},
    {"cudacap_gpu_util_percent", "gauge", "SM utilization of the whole device (all users) over the last sample, percent."},
    {"cudacap_sm_limit_percent", "gauge", "SM utilization cap of the container, percent (absent: no cap)."},
    {"cudacap_sample_age_seconds", "gauge", "Age of the last published utilization sample, seconds."},
    {"cudacap_device_processes", "gauge", "Live processes of the container on the device."},
    {"cudacap_sampling_owner_pid", "gauge", "Pid of the container's process sampling NVML for the device (0: none or not found)."},
};

static int metric_value(int m, const struct snap_dev *d, double *v)
{
    switch (m) {
    case M_FB_USED: *v = (double)d->mem_used; return d->has_mem;
    case M_FB_LIMIT: *v = (double)d->mem_limit; return d->has_mem && d->mem_limit;
    case M_SM_UTIL: *v = d->util_pm / 10.0; return d->has_sm && d->has_sample;
    case M_GPU_UTIL: *v = d->dev_util_pm / 10.0; return d->has_sm && d->has_sample;
    case M_SM_LIMIT: *v = d->sm_limit_pm / 10.0; return d->has_sm && d->sm_limit_pm;
    case M_AGE: *v = (double)d->sample_age_ns / 1e9; return d->has_sm && d->has_sample;
    case M_DEV_PROCS: *v = d->nproc; return 1;
    case M_OWNER: *v = (double)d->owner_pid; return d->has_sm && d->owner != OWNER_UNKNOWN;
    }
    return 0;
}

void render_prom(FILE *f, struct snap *const *s, int n)
{
    for (int m = 0; m < M_N; m++) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", metric[m].name, metric[m].help, metric[m].name,
                metric[m].type);
        for (int c = 0; c < n; c++)
            for (int i = 0; i < s[c]->ndev; i++) {
                double v;
                if (!metric_value(m, &s[c]->dev[i], &v)) continue;
                fputs(metric[m].name, f);
                labels(f, s[c], &s[c]->dev[i], 0);
                fprintf(f, " %.10g\n", v);
            }
    }
    fputs("# HELP cudacap_processes Live processes of the container (any device).\n"
          "# TYPE cudacap_processes gauge\n", f);
    for (int c = 0; c < n; c++) {
        fputs("cudacap_processes", f);
        labels(f, s[c], NULL, 0);
        fprintf(f, " %d\n", s[c]->nalive);
    }
    fputs("# HELP cudacap_process_fb_used_bytes Device memory of one process of the container, bytes.\n"
          "# TYPE cudacap_process_fb_used_bytes gauge\n", f);
    for (int c = 0; c < n; c++)
        for (int p = 0; p < s[c]->nproc; p++) {
            const struct snap_proc *q = &s[c]->proc[p];
            if (!q->alive || !q->has_mem) continue;
            for (int i = 0; i < s[c]->ndev; i++) {
                if (!s[c]->dev[i].has_mem) continue;
                fputs("cudacap_process_fb_used_bytes", f);
                labels(f, s[c], &s[c]->dev[i], q->pid);
                fprintf(f, " %llu\n", (unsigned long long)q->mem[i]);
            }
        }
    fputs("# HELP cudacap_process_sm_util_percent SM utilization of one process of the container on a device over the sampler's last sample, percent.\n"
          "# TYPE cudacap_process_sm_util_percent gauge\n", f);
    for (int c = 0; c < n; c++)
        for (int p = 0; p < s[c]->nproc; p++) {
            const struct snap_proc *q = &s[c]->proc[p];
            if (!q->alive) continue;
            for (int i = 0; i < s[c]->ndev; i++) {
                if (!q->has_util[i]) continue;
                fputs("cudacap_process_sm_util_percent", f);
                labels(f, s[c], &s[c]->dev[i], q->pid);
                fprintf(f, " %.10g\n", q->util_pm[i] / 10.0);
            }
        }
    fputs("# HELP cudacap_region_ok Whether a state region of the container could be read (1) or not (0: absent, another layout, being rebuilt, truncated, corrupt, not a plain file).\n"
          "# TYPE cudacap_region_ok gauge\n", f);
    for (int c = 0; c < n; c++) {
        static const char *rn[2] = {"memory", "compute"};
        int st[2] = {s[c]->mem_state, s[c]->sm_state};
        for (int r = 0; r < 2; r++) {
            fputs("cudacap_region_ok{container=\"", f);
            prom_val(f, s[c]->name);
            fprintf(f, "\",region=\"%s\"} %d\n", rn[r], st[r] == SNAP_OK);
        }
    }
}
