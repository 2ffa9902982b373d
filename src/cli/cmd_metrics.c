/* cudacap metrics: Prometheus text exposition of every container under
 * ROOT, to stdout, to a file for the node exporter's textfile collector
 * (written whole, then renamed), or over HTTP (--listen, httpd.c: one
 * request per connection, per-request deadlines, a poll loop). Pod labels
 * for CDI containers come from the kubelet's pod-resources socket (podres.h). */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/noderoots.h"
#include "cli/httpd.h"
#include "cli/podres.h"
#include "cli/render.h"

static void usage(FILE *f)
{
    fputs("usage: cudacap metrics [--root ROOT | ROOT | --all-users] [--output FILE | --listen [ADDR]:PORT]\n"
          "                       [--pod-resources PATH | none]\n"
          "\n"
          "Prometheus text exposition (version 0.0.4) of every container under ROOT, with\n"
          "DCGM-exporter style names and labels (cudacap_container, gpu = NVML index, UUID,\n"
          "Hostname): cudacap_fb_used_bytes, cudacap_mem_refusals_total, cudacap_build_info,\n"
          "cudacap_sm_utilization_ratio, cudacap_throttled_seconds_total, ...\n"
          "(docs/cli.md lists them). Read-only, like status.\n"
          "\n"
          "  --output FILE         write FILE atomically (for the node exporter's textfile\n"
          "                        collector: FILE ends in .prom)\n"
          "  --listen [ADDR]:PORT  serve GET /metrics over HTTP until SIGTERM/SIGINT (e.g. :9477;\n"
          "                        9400 is dcgm-exporter's)\n"
          "  --root ROOT           as for cudacap status\n"
          "  --all-users           every container of the node, as for cudacap status\n"
          "  --pod-resources PATH  the kubelet's pod-resources socket, for the namespace,\n"
          "                        pod, container labels of containers a pod's\n"
          "                        device names (default $CUDACAP_POD_RESOURCES, else\n"
          "                        " PODRES_DEFAULT_SOCKET "; none: not read)\n"
          "  --stale-after SECONDS leave out a container with no live process whose state\n"
          "                        was last written longer ago (default 3600; 0: never)\n",
          f);
}

/* The pod-resources socket: NULL when not read. After a failure it is left
 * alone PODRES_RETRY_S (a kubelet that hangs costs the exporter's loop its
 * 1 s deadline once per period, not per scrape); the first failure of a run
 * is reported, once, and metrics go on without pod labels. An absent socket
 * (no kubelet, or not mounted: most nodes) is not a failure. */
#define PODRES_RETRY_S 10
static const char *podres_path;
static int podres_warned, podres_serving; /* serving: --listen */
static time_t podres_retry_at;            /* CLOCK_MONOTONIC seconds */

static time_t mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec;
}

static int pod_resources(struct podres *pr)
{
    char why[512], tail[64] = "";
    if (!podres_path || mono_s() < podres_retry_at) return 0;
    int r = podres_list(podres_path, PODRES_DEADLINE_MS, pr, why, sizeof why);
    if (r == PODRES_FAILED) {
        podres_retry_at = mono_s() + PODRES_RETRY_S;
        if (podres_serving) snprintf(tail, sizeof tail, " (retried every %d s, not reported again)", PODRES_RETRY_S);
        if (!podres_warned++)
            cli_err("warning: pod-resources socket %s: %s; metrics without its pod labels%s", podres_path, why, tail);
        return 0;
    }
    if (r != PODRES_OK) return 0;
    if (pr->dropped && !podres_warned++)
        cli_err("warning: pod-resources socket %s: %d device id(s) left out (past %d, empty or too long, or under "
                "a pod or container name that is empty, too long or not printable ASCII)",
                podres_path, pr->dropped, PODRES_MAX_ENTRIES);
    return 1;
}

/* --stale-after: a folder with no live process whose state files (and the
 * folder itself) were last written longer ago than this is left out. HAMi
 * never removes a container's folder, and the folders of containers long
 * gone exported their caps for ever (and summed into the devices' totals).
 * 0: every folder. */
static long stale_after_s = 3600;

static int stale(const struct snap *x, time_t now)
{
    if (stale_after_s <= 0 || x->nalive > 0) return 0;
    static const char *const files[] = {"", "/memory.region", "/compute.region"};
    time_t newest = 0;
    for (int i = 0; i < 3; i++) {
        char p[sizeof x->dir + 32];
        struct stat st;
        snprintf(p, sizeof p, "%s%s", x->dir, files[i]);
        if (lstat(p, &st) == 0 && st.st_mtime > newest) newest = st.st_mtime;
    }
    return newest && now - newest > stale_after_s;
}

static int all_users; /* --all-users: every root of the node (noderoots.c) */

/* The whole exposition into a malloc'ed buffer. */
static char *expose(const void *arg, size_t *len)
{
    const char *root = arg;
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    struct snap **s = NULL;
    int k = snap_collect_any(root, all_users, &s);
    if (k < 0) k = 0; /* no ROOT yet: no containers (an exporter must not fail) */
    /* The stale ones moved past the end of what is rendered (all released). */
    int shown = 0;
    time_t now = time(NULL);
    for (int c = 0; c < k; c++)
        if (!stale(s[c], now)) {
            struct snap *t = s[shown];
            s[shown++] = s[c];
            s[c] = t;
        }
    struct podres pr;
    int have = shown > 0 && pod_resources(&pr); /* no containers: nothing to label */
    render_prom(f, s, shown, have ? &pr : NULL);
    if (have) podres_free(&pr);
    snap_release(s, k);
    fclose(f);
    return buf;
}

static int write_file(const char *path, const char *buf, size_t len)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f) return -1;
    size_t w = fwrite(buf, 1, len, f);
    if (fclose(f) != 0 || w != len || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

static volatile sig_atomic_t stop; /* set by the signal handler only */
static void on_signal(int sig) { (void)sig; stop = 1; }

static int listen_on(const char *spec)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    if (!colon) cli_usage_error("--listen: \"%s\" is not [ADDR]:PORT", spec);
    size_t hl = (size_t)(colon - spec);
    if (hl >= sizeof host) cli_usage_error("--listen: address too long");
    memcpy(host, spec, hl);
    host[hl] = 0;
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') memmove(host, host + 1, hl - 2), host[hl - 2] = 0;
    long port = cli_parse_long("--listen port", colon + 1, 1, 65535);
    char ps[16];
    snprintf(ps, sizeof ps, "%ld", port);
    struct addrinfo hints, *ai;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int r = getaddrinfo(host[0] ? host : NULL, ps, &hints, &ai);
    if (r != 0) cli_usage_error("--listen: cannot resolve \"%s\": %s", host, gai_strerror(r));
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    int one = 1;
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 256) != 0) {
        cli_err("cannot listen on %s: %s", spec, strerror(errno));
        freeaddrinfo(ai);
        if (fd >= 0) close(fd);
        return -1;
    }
    freeaddrinfo(ai);
    return fd;
}

int cmd_metrics(int argc, char **argv)
{
    const char *root_opt = NULL, *pos = NULL, *out = NULL, *lis = NULL, *pr = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return usage(stdout), 0;
        else if (cli_opt_val(argc, argv, &i, "--root", &v)) root_opt = v;
        else if (cli_opt_flag(argv, i, "--all-users")) all_users = 1;
        else if (cli_opt_val(argc, argv, &i, "--output", &v)) out = v;
        else if (cli_opt_val(argc, argv, &i, "--listen", &v)) lis = v;
        else if (cli_opt_val(argc, argv, &i, "--pod-resources", &v)) pr = v;
        else if (cli_opt_val(argc, argv, &i, "--stale-after", &v))
            stale_after_s = cli_parse_long("--stale-after", v, 0, 10L * 365 * 86400);
        else cli_root_positional(argv[i], &pos);
    }
    if (pos && root_opt) cli_usage_error("ROOT given twice (\"%s\" and --root %s)", pos, root_opt);
    if (all_users && (pos || root_opt)) cli_usage_error("--all-users and a ROOT exclude each other");
    if (out && lis) cli_usage_error("--output and --listen exclude each other");
    if (out && !*out) cli_usage_error("--output: empty path");
    const char *root = cli_default_root(pos ? pos : root_opt);
    if (pr && !*pr) cli_usage_error("--pod-resources: empty path (none turns it off)");
    if (!pr && (pr = getenv("CUDACAP_POD_RESOURCES")) && !*pr) pr = NULL; /* set but empty: the default */
    podres_path = !pr ? PODRES_DEFAULT_SOCKET : strcmp(pr, "none") ? pr : NULL;
    if (!lis) {
        size_t len = 0;
        char *body = expose(root, &len);
        if (!body) return cli_err("out of memory"), 1;
        int rc = 0;
        if (out) {
            if (write_file(out, body, len) != 0) cli_err("cannot write %s: %s", out, strerror(errno)), rc = 1;
        } else if (fwrite(body, 1, len, stdout) != len || fflush(stdout) != 0) {
            rc = 1;
        }
        free(body);
        return rc;
    }
    podres_serving = 1;
    int fd = listen_on(lis);
    if (fd < 0) return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: poll returns EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    fprintf(stderr, "cudacap metrics: serving %s on http://%s/metrics\n", root, lis);
    httpd_serve(fd, expose, root, &stop);
    close(fd);
    return 0;
}
