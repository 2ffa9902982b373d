/* Table, JSON and Prometheus printers (render.h). Numbers come from the
 * snapshot as read; nothing here touches the state files. */
#include "cli/render.h"

#include <string.h>

#include "cli/cli.h"
#include "cli/proclib.h"

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
    if (x->config_why[0]) fprintf(f, "%-20s (config error: %s)\n", "", x->config_why);
    if (x->config_errors)
        fprintf(f, "%-20s (config error: its processes found %llu error(s) in their configuration%s%llu "
                   "refused the GPU; see their stderr)\n", "", (unsigned long long)x->config_errors,
                x->config_refused ? ", " : "; none ", (unsigned long long)x->config_refused);
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

/* A live process's command name (/proc/<host pid>/comm, printable ASCII
 * only, at most 15 characters), by its host pid: the pid in the
 * container's namespace may name another process here. "" when the host
 * pid is not known or the file cannot be read. */
static void comm_of(const struct snap_proc *q, char *out, size_t len)
{
    out[0] = 0;
    if (!q->alive || !q->host_pid || len < 2) return;
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/comm", q->host_pid);
    FILE *c = fopen(path, "re");
    if (!c) return;
    size_t n = fread(out, 1, len - 1, c);
    fclose(c);
    out[n] = 0;
    for (size_t i = 0; i < n; i++)
        if (out[i] == '\n') out[i] = 0, n = i;
        else if (out[i] < 0x20 || out[i] > 0x7e) out[i] = '?';
}

/* The cudacap libraries the container's live processes loaded: one line
 * per distinct path and version, with how many processes use it. */
static void libraries(FILE *f, const struct snap *x)
{
    struct {
        char path[512], ver[40];
        int n;
    } lib[8];
    int nl = 0, unseen = 0;
    for (int p = 0; p < x->nproc; p++) {
        const struct snap_proc *q = &x->proc[p];
        char path[512], ver[40];
        if (!q->alive) continue;
        if (!proclib_of(q->host_pid, path, sizeof path, ver, sizeof ver)) {
            unseen++;
            continue;
        }
        int k = 0;
        while (k < nl && (strcmp(lib[k].path, path) || strcmp(lib[k].ver, ver))) k++;
        if (k == nl && nl < 8) {
            snprintf(lib[k].path, sizeof lib[k].path, "%s", path);
            snprintf(lib[k].ver, sizeof lib[k].ver, "%s", ver);
            lib[k].n = 0, nl++;
        }
        if (k < nl) lib[k].n++;
    }
    for (int k = 0; k < nl; k++)
        fprintf(f, "  library %s, version %s (%d process%s)\n", lib[k].path,
                lib[k].ver[0] ? lib[k].ver : "unknown", lib[k].n, lib[k].n == 1 ? "" : "es");
    if (nl && unseen)
        fprintf(f, "  library not seen for %d process%s (another user's, or no /proc access)\n", unseen,
                unseen == 1 ? "" : "es");
}

/* s cut to at most w columns (whole UTF-8 characters; a byte that is not
 * well-formed counts one), into out; returns the columns taken. */
static int cut_cols(const char *s, int w, char *out, size_t len)
{
    size_t at = 0;
    int col = 0;
    for (; s[at] && col < w; col++) {
        int l = cc_utf8_len((const unsigned char *)s + at);
        if (at + (size_t)(l > 0 ? l : 1) >= len) break;
        at += l > 0 ? (size_t)l : 1;
    }
    memcpy(out, s, at);
    out[at] = 0;
    return col;
}

void render_table(FILE *f, struct snap *const *s, int n, int brief, const char *const *hist, int width)
{
    int narrow = width > 0 && width < RENDER_FULL_WIDTH;
    if (narrow)
        fprintf(f, "%-12s %-3s %-20s %-15s %5s%s\n", "CONTAINER", "GPU", "MEMORY USED / CAP",
                "SM UTIL / CAP", "PROCS", hist ? "  UTIL HISTORY" : "");
    else
        fprintf(f, "%-20s %-4s %-27s %-17s %-10s %5s%s\n", "CONTAINER", "GPU", "MEMORY USED / CAP",
                "SM UTIL / CAP", "SAMPLER", "PROCS", hist ? "  UTIL HISTORY" : "");
    for (int c = 0; c < n; c++) {
        const struct snap *x = s[c];
        if (x->ndev == 0) {
            char why[96];
            if (x->config_why[0] || x->config_errors)
                snprintf(why, sizeof why, "config error");
            else if (x->mem_state == SNAP_ABSENT && x->sm_state == SNAP_ABSENT)
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
            char mem[112], a[24], b[24], util[48], u1[16], u2[16], own[32];
            if (d->has_mem && (d->host_limit || d->host_used)) {
                char c[24], e[24];
                snprintf(mem, sizeof mem, "%s / %s + host %s / %s", cli_bytes(d->mem_used, a, sizeof a),
                         d->mem_limit ? cli_bytes(d->mem_limit, b, sizeof b) : "no cap",
                         cli_bytes(d->host_used, c, sizeof c), cli_bytes(d->host_limit, e, sizeof e));
            } else if (d->has_mem)
                snprintf(mem, sizeof mem, "%s / %s", cli_bytes(d->mem_used, a, sizeof a),
                         d->mem_limit ? cli_bytes(d->mem_limit, b, sizeof b) : "no cap");
            else
                snprintf(mem, sizeof mem, "-");
            if (d->has_sm)
                snprintf(util, sizeof util, "%s / %s",
                         d->idle ? "idle" : render_pct(d->has_sample, d->util_pm, u1, sizeof u1),
                         d->sm_limit_pm ? render_pct(1, d->sm_limit_pm, u2, sizeof u2) : "no cap");
            else
                snprintf(util, sizeof util, "-");
            owner_str(d, own, sizeof own);
            char nm[64];
            int taken = cut_cols(i == 0 ? x->name : "", 12, nm, sizeof nm);
            if (narrow) /* padded by hand: %-12s counts bytes, not columns */
                fprintf(f, "%s%*s %-3d %-20s %-15s %5d%s%s\n", nm, 12 - taken, "", d->index, mem,
                        util, d->nproc, hist && i == 0 ? "  " : "", hist && i == 0 && hist[c] ? hist[c] : "");
            else
                fprintf(f, "%-20s %-4d %-27s %-17s %-10s %5d%s%s\n", i == 0 ? x->name : "", d->index,
                        mem, util, own, d->nproc, hist && i == 0 ? "  " : "",
                        hist && i == 0 && hist[c] ? hist[c] : "");
            /* A cap lowered below the use (cudacap set): new allocations are
             * refused until frees bring the container under it. */
            if (d->has_mem && d->mem_limit && d->mem_used > d->mem_limit)
                fprintf(f, "%-20s      memory: over cap after a decrease, by %s; new allocations are "
                        "refused until frees bring it under\n",
                        "", cli_bytes(d->mem_used - d->mem_limit, a, sizeof a));
            if (d->sm_soft_pm) /* elastic: hard cap above, and what it may borrow */
                fprintf(f, "%-20s      elastic: hard %s, soft %s, target %s, %s, %.1f device-s borrowed\n",
                        "", render_pct(1, d->sm_limit_pm, u1, sizeof u1),
                        render_pct(1, d->sm_soft_pm, u2, sizeof u2),
                        render_pct(1, d->sm_target_pm, a, sizeof a),
                        d->borrowing ? "borrowing now" : "not borrowing", (double)d->borrowed_ns / 1e9);
        }
        problems(f, x);
        if (brief) continue;
        for (int p = 0; p < x->nproc; p++) {
            const struct snap_proc *q = &x->proc[p];
            char hp[24] = "", mem[160] = "", util[160] = "", one[64], bb[24], pc[16], name[20];
            if (q->host_pid && q->host_pid != q->pid) snprintf(hp, sizeof hp, " (host %u)", q->host_pid);
            comm_of(q, name, sizeof name);
            if (q->has_mem)
                for (int i = 0; i < x->ndev; i++) {
                    if (!x->dev[i].has_mem) continue;
                    snprintf(one, sizeof one, "%sgpu%d %s", mem[0] ? ", " : "", x->dev[i].index,
                             cli_bytes(q->mem[i], bb, sizeof bb));
                    strncat(mem, one, sizeof mem - strlen(mem) - 1);
                    if (q->host[i]) { /* oversubscribed: its part in host memory */
                        snprintf(one, sizeof one, " + host %s", cli_bytes(q->host[i], bb, sizeof bb));
                        strncat(mem, one, sizeof mem - strlen(mem) - 1);
                    }
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
            /* A probed key is no pid (another pid namespace had this one's
             * pid): named by its host pid where known. */
            char who[40];
            if (q->pid < CC_KEY_PIDS) snprintf(who, sizeof who, "pid %u", q->pid);
            else if (q->host_pid) snprintf(who, sizeof who, "pid - (key %u)", q->pid);
            else snprintf(who, sizeof who, "pid ? (key %u)", q->pid);
            fprintf(f, "  %s%s%s%s  %s%s%s\n", who, hp, name[0] ? " " : "", name,
                    mem[0] ? mem : "memory -", util, q->alive ? "" : "  [exited; not counted]");
        }
        libraries(f, x);
    }
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0. */
int cc_utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80) return 1;
    int n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    if (!n) return 0;
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (s[0] == 0xe0) lo = 0xa0;        /* overlong */
    if (s[0] == 0xed) hi = 0x9f;        /* surrogates */
    if (s[0] == 0xf0) lo = 0x90;        /* overlong */
    if (s[0] == 0xf4) hi = 0x8f;        /* past U+10FFFF */
    if (s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return n;
}

/* A JSON string: quote, backslash and control characters escaped, every
 * byte not part of well-formed UTF-8 written as U+FFFD (JSON is UTF-8: a
 * folder name is any bytes, and one such name made the whole document
 * unreadable to a strict parser). */
void json_str(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        int n = cc_utf8_len(p);
        if (n == 0) fputs("\\ufffd", f), p++;
        else if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p), p++;
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p), p++;
        else fwrite(p, 1, (size_t)n, f), p += n;
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
        fprintf(f, ",\"config_errors\":%llu,\"config_refused\":%llu,\"config_problem\":",
                (unsigned long long)x->config_errors, (unsigned long long)x->config_refused);
        if (x->config_why[0]) json_str(f, x->config_why);
        else fputs("null", f);
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
            if (d->has_mem)
                fprintf(f, ",\"memory_host_used_bytes\":%llu,\"memory_host_limit_bytes\":%llu",
                        (unsigned long long)d->host_used, (unsigned long long)d->host_limit);
            else
                fputs(",\"memory_host_used_bytes\":null,\"memory_host_limit_bytes\":null", f);
            fprintf(f, ",\"memory_over_cap\":%s",
                    d->has_mem && d->mem_limit && d->mem_used > d->mem_limit ? "true" : "false");
            fputs(",\"sm_util_percent\":", f);
            json_pct(f, d->has_sm && d->has_sample, d->util_pm);
            fputs(",\"gpu_util_percent\":", f);
            json_pct(f, d->has_sm && d->has_sample, d->dev_util_pm);
            fputs(",\"sm_limit_percent\":", f);
            json_pct(f, d->has_sm && d->sm_limit_pm, d->sm_limit_pm);
            fputs(",\"sm_soft_limit_percent\":", f);
            json_pct(f, d->sm_soft_pm != 0, d->sm_soft_pm);
            fputs(",\"sm_target_percent\":", f);
            json_pct(f, d->sm_soft_pm != 0, d->sm_target_pm);
            fprintf(f, ",\"borrowing\":%s,\"borrowed_device_seconds\":%.3f",
                    d->borrowing ? "true" : "false", (double)d->borrowed_ns / 1e9);
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
            fprintf(f, ",\"processes\":%d,\"idle\":%s", d->nproc, d->idle ? "true" : "false");
            if (d->has_mem) fprintf(f, ",\"memory_refusals\":%llu", (unsigned long long)d->refusals);
            else fputs(",\"memory_refusals\":null", f);
            if (d->has_sm) fprintf(f, ",\"throttled_seconds\":%.3f}", (double)d->throttled_ns / 1e9);
            else fputs(",\"throttled_seconds\":null}", f);
        }
        fputs("],\"processes\":[", f);
        for (int p = 0; p < x->nproc; p++) {
            const struct snap_proc *q = &x->proc[p];
            fprintf(f, "%s\n  {\"pid\":%u,\"host_pid\":", p ? "," : "", q->pid);
            if (q->host_pid) fprintf(f, "%u", q->host_pid);
            else fputs("null", f);
            fprintf(f, ",\"alive\":%s", q->alive ? "true" : "false");
            /* The library it loaded (proclib.h): null when not seen. */
            char lp[512], lv[40];
            if (q->alive && proclib_of(q->host_pid, lp, sizeof lp, lv, sizeof lv)) {
                fputs(",\"library\":{\"path\":", f);
                json_str(f, lp);
                fputs(",\"version\":", f);
                if (lv[0]) json_str(f, lv);
                else fputs("null", f);
                fputc('}', f);
            } else {
                fputs(",\"library\":null", f);
            }
            if (q->has_mem) fprintf(f, ",\"memory_bytes\":%llu", (unsigned long long)q->mem_total);
            else fputs(",\"memory_bytes\":null", f);
            /* The process's utilization summed over its devices; per device below. */
            uint32_t tot = 0;
            int have = 0;
            for (int i = 0; i < x->ndev; i++)
                if (q->has_util[i]) tot += q->util_pm[i], have = 1;
            fputs(",\"sm_util_percent\":", f);
            json_pct(f, have, tot);
            fprintf(f, ",\"config_errors\":%llu,\"config_refused\":%llu,\"config_problem\":",
                (unsigned long long)x->config_errors, (unsigned long long)x->config_refused);
        if (x->config_why[0]) json_str(f, x->config_why);
        else fputs("null", f);
        fputs(",\"devices\":[", f);
            int first = 1;
            for (int i = 0; i < x->ndev; i++) {
                int m = q->has_mem && x->dev[i].has_mem;
                if (!m && !q->has_util[i]) continue;
                fprintf(f, "%s{\"gpu\":%d,\"memory_bytes\":", first ? "" : ",", x->dev[i].index);
                if (m) fprintf(f, "%llu", (unsigned long long)q->mem[i]);
                else fputs("null", f);
                fputs(",\"memory_host_bytes\":", f);
                if (m) fprintf(f, "%llu", (unsigned long long)q->host[i]);
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
