/* cudacap status and cudacap top: every container under ROOT, read-only. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/render.h"

#define MAX_CONTAINERS SNAP_MAX_CONTAINERS

static void status_usage(FILE *f)
{
    fputs("usage: cudacap status [--json] [--brief] [--root ROOT | ROOT]\n"
          "\n"
          "Shows every container under ROOT (one state folder each): per device, memory\n"
          "used / cap, SM utilization / cap, the process sampling NVML, and the\n"
          "container's processes. Reads the state files only: never locks, never\n"
          "blocks a running container; a region being rebuilt or of another layout\n"
          "shows as \"no data\".\n"
          "\n"
          "  --json        one JSON document (docs/cli.md describes its fields)\n"
          "  --brief       no process lines\n"
          "  --root ROOT   the folder of state folders (default: $CUDACAP_ROOT, else\n"
          "                /var/lib/cudacap/containers as root, /tmp/cudacap-<uid>/containers\n"
          "                otherwise)\n",
          f);
}

static const char *parse_root(int argc, char **argv, int i, const char *root_opt, const char *pos)
{
    (void)argc, (void)argv, (void)i;
    if (pos && root_opt) cli_usage_error("ROOT given twice (\"%s\" and --root %s)", pos, root_opt);
    return cli_default_root(pos ? pos : root_opt);
}

int cmd_status(int argc, char **argv)
{
    int json = 0, brief = 0;
    const char *root_opt = NULL, *pos = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return status_usage(stdout), 0;
        else if (cli_opt_flag(argv, i, "--json")) json = 1;
        else if (cli_opt_flag(argv, i, "--brief")) brief = 1;
        else if (cli_opt_val(argc, argv, &i, "--root", &v)) root_opt = v;
        else if (argv[i][0] == '-') cli_usage_error("unknown option %s", argv[i]);
        else if (pos) cli_usage_error("unexpected argument \"%s\" (one ROOT only)", argv[i]);
        else pos = argv[i];
    }
    const char *root = parse_root(argc, argv, 0, root_opt, pos);
    struct snap **s;
    int n = snap_collect(root, &s);
    if (n < 0) {
        cli_err("cannot read %s: %s", root, strerror(errno));
        return 1;
    }
    if (json) render_json(stdout, root, s, n);
    else if (n == 0) printf("no containers under %s\n", root);
    else render_table(stdout, s, n, brief, NULL);
    snap_release(s, n);
    return 0;
}

/* ---- top ----------------------------------------------------------------- */

#define HIST 40
struct hist {
    char name[256];
    int len;
    int v[HIST]; /* permille, -1: no sample */
    int seen;
};

static volatile sig_atomic_t stop; /* set by the signal handler only */
static void on_signal(int sig) { (void)sig; stop = 1; }

static void top_usage(FILE *f)
{
    fputs("usage: cudacap top [--interval SEC] [--iterations N] [--root ROOT | ROOT]\n"
          "\n"
          "cudacap status, live: refreshes every SEC seconds (default 1) with a short\n"
          "utilization history per container (the highest of its devices). Ctrl-C\n"
          "quits. Read-only, like status.\n"
          "\n"
          "  --interval SEC   refresh period, 0.1..60\n"
          "  --iterations N   stop after N frames (default: until interrupted)\n"
          "  --brief          no process lines\n"
          "  --root ROOT      as for cudacap status\n",
          f);
}

/* One character per frame: the level in ninths (ASCII) or eighths (block
 * characters); blank where the container had no sample. */
static void draw_hist(const struct hist *h, char *out, size_t len, int utf8)
{
    static const char *bars[] = {"_", "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
                                 "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88"};
    static const char ascii[] = "_.:-=+*#%@";
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < h->len && o + 4 < len; i++) {
        int v = h->v[i];
        if (v < 0) {
            out[o++] = ' ';
        } else if (utf8) {
            int k = (v * 8 + 500) / 1000;
            size_t bl = strlen(bars[k]);
            memcpy(out + o, bars[k], bl);
            o += bl;
        } else {
            out[o++] = ascii[(v * 9 + 500) / 1000];
        }
    }
    out[o] = 0;
}

int cmd_top(int argc, char **argv)
{
    double interval = 1.0;
    long iterations = 0;
    int brief = 0;
    const char *root_opt = NULL, *pos = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return top_usage(stdout), 0;
        else if (cli_opt_val(argc, argv, &i, "--interval", &v))
            interval = cli_parse_seconds("--interval", v, 0.1, 60);
        else if (cli_opt_val(argc, argv, &i, "--iterations", &v))
            iterations = cli_parse_long("--iterations", v, 1, 1000000000L);
        else if (cli_opt_flag(argv, i, "--brief")) brief = 1;
        else if (cli_opt_val(argc, argv, &i, "--root", &v)) root_opt = v;
        else if (argv[i][0] == '-') cli_usage_error("unknown option %s", argv[i]);
        else if (pos) cli_usage_error("unexpected argument \"%s\" (one ROOT only)", argv[i]);
        else pos = argv[i];
    }
    const char *root = parse_root(argc, argv, 0, root_opt, pos);
    int tty = isatty(STDOUT_FILENO);
    const char *lang = getenv("LC_ALL");
    if (!lang || !*lang) lang = getenv("LC_CTYPE");
    if (!lang || !*lang) lang = getenv("LANG");
    int utf8 = lang && (strstr(lang, "UTF-8") || strstr(lang, "utf8") || strstr(lang, "UTF8"));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    static struct hist hs[MAX_CONTAINERS];
    int nh = 0;
    if (tty) fputs("\033[?25l", stdout); /* hide the cursor while drawing */
    int rc = 0;
    for (long it = 0; !stop && (iterations == 0 || it < iterations); it++) {
        struct snap **s;
        int n = snap_collect(root, &s);
        if (n < 0) {
            cli_err("cannot read %s: %s", root, strerror(errno));
            rc = 1;
            break;
        }
        static char bufs[MAX_CONTAINERS][HIST * 3 + 8];
        static const char *hp[MAX_CONTAINERS];
        for (int c = 0; c < n; c++) {
            struct hist *h = NULL;
            for (int k = 0; k < nh; k++)
                if (!strcmp(hs[k].name, s[c]->name)) h = &hs[k];
            if (!h && nh < MAX_CONTAINERS) {
                h = &hs[nh++];
                memset(h, 0, sizeof *h);
                snprintf(h->name, sizeof h->name, "%s", s[c]->name);
            }
            hp[c] = NULL;
            if (!h) continue;
            int u = -1;
            for (int i = 0; i < s[c]->ndev; i++)
                if (s[c]->dev[i].has_sample && (int)s[c]->dev[i].util_pm > u) u = (int)s[c]->dev[i].util_pm;
            if (h->len == HIST) memmove(h->v, h->v + 1, sizeof h->v[0] * (HIST - 1)), h->len--;
            h->v[h->len++] = u;
            draw_hist(h, bufs[c], sizeof bufs[c], utf8);
            hp[c] = bufs[c];
        }
        time_t now = time(NULL);
        char ts[32];
        strftime(ts, sizeof ts, "%H:%M:%S", localtime(&now));
        if (tty) fputs("\033[H\033[2J", stdout);
        else if (it) fputc('\n', stdout);
        printf("cudacap top  %s  %s  (%d container%s)\n", root, ts, n, n == 1 ? "" : "s");
        if (n) render_table(stdout, s, n, brief, hp);
        fflush(stdout);
        snap_release(s, n);
        if (iterations && it + 1 >= iterations) break;
        struct timespec d = {(time_t)interval, (long)((interval - (double)(time_t)interval) * 1e9)};
        while (!stop && nanosleep(&d, &d) != 0 && errno == EINTR) {}
    }
    if (tty) fputs("\033[?25h", stdout);
    fflush(stdout);
    return rc;
}
