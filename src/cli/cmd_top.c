/* cudacap top: cudacap status, live, with a utilization history per
 * container. On a terminal it reads keys (q quits, s cycles the sort, p or
 * space pauses) with the terminal in non-canonical mode (restored on every
 * exit path we control: q, Ctrl-C, SIGTERM, the last iteration), and cuts
 * every line to the terminal's width so the header never scrolls away. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/noderoots.h"
#include "cli/gpu_info.h"
#include "cli/render.h"

#define MAX_CONTAINERS SNAP_MAX_CONTAINERS
#define HIST 40
struct hist {
    char name[256];
    int len;
    int v[HIST]; /* permille, -1: no sample */
};

enum { SORT_NAME, SORT_MEM, SORT_UTIL, SORT_N };
static const char *const sort_word[SORT_N] = {"name", "memory", "utilization"};

static volatile sig_atomic_t stop; /* set by the signal handler only */
static void on_signal(int sig) { (void)sig; stop = 1; }

static void top_usage(FILE *f)
{
    fputs("usage: cudacap top [--interval SEC] [--iterations N] [--brief] [--root ROOT | ROOT |\n"
          "                   --all-users]\n"
          "\n"
          "cudacap status, live: refreshes every SEC seconds (default 1) with a short\n"
          "utilization history per container (the highest of its devices). Read-only,\n"
          "like status. On a terminal: q quits, s cycles the sort (name, memory,\n"
          "utilization), p or space pauses; lines are cut to the terminal's width.\n"
          "\n"
          "  --interval SEC   refresh period, 0.1..60\n"
          "  --iterations N   stop after N frames (default: until q or interrupted)\n"
          "  --brief          no process lines\n"
          "  --root ROOT      as for cudacap status\n"
          "  --all-users      every container of the node, as for cudacap status\n",
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

/* The terminal's size (0: unlimited): TIOCGWINSZ on stdout, else $COLUMNS
 * and $LINES. */
static int env_dim(const char *name)
{
    const char *c = getenv(name);
    long v = c ? strtol(c, NULL, 10) : 0;
    return v > 0 && v < 10000 ? (int)v : 0;
}
static void term_size(int *cols, int *rows)
{
    struct winsize ws;
    int ok = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0;
    *cols = ok && ws.ws_col > 0 ? ws.ws_col : env_dim("COLUMNS");
    *rows = ok && ws.ws_row > 0 ? ws.ws_row : env_dim("LINES");
}

/* Writes buf line by line, each cut to cols display columns (a UTF-8
 * character counts one; continuation bytes none), and at most rows - 1
 * lines (rows 0: all): past that, the last line says how many were left
 * out, so the header never scrolls off a short terminal. */
static void put_cut(const char *buf, size_t len, int cols, int rows)
{
    const char *p = buf, *end = buf + len;
    int total = 0, shown = 0;
    for (const char *q = buf; q < end; q++) total += *q == '\n';
    if (len && buf[len - 1] != '\n') total++;
    while (p < end) {
        if (rows > 1 && total > rows - 1 && shown == rows - 2) {
            char more[64];
            int m = snprintf(more, sizeof more, "... %d more line%s (a taller terminal, or --brief)\n",
                             total - shown, total - shown == 1 ? "" : "s");
            put_cut(more, (size_t)m, cols, 0);
            return;
        }
        shown++;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end, *q = p;
        int w = 0;
        while (q < le && (cols <= 0 || w < cols || ((unsigned char)*q & 0xc0) == 0x80)) {
            if (((unsigned char)*q & 0xc0) != 0x80) {
                if (cols > 0 && w == cols) break;
                w++;
            }
            q++;
        }
        fwrite(p, 1, (size_t)(q - p), stdout);
        if (nl) fputc('\n', stdout);
        p = nl ? nl + 1 : end;
    }
}

static uint64_t mem_of(const struct snap *x)
{
    uint64_t m = 0;
    for (int i = 0; i < x->ndev; i++) m += x->dev[i].mem_used;
    return m;
}

static int util_of(const struct snap *x)
{
    int u = -1;
    for (int i = 0; i < x->ndev; i++)
        if (x->dev[i].has_sample && (int)x->dev[i].util_pm > u) u = (int)x->dev[i].util_pm;
    return u;
}

static void human(uint64_t b, char *out, size_t len)
{
    if (b >= (1ull << 30)) snprintf(out, len, "%.1fG", (double)b / (1ull << 30));
    else snprintf(out, len, "%.0fM", (double)b / (1ull << 20));
}

/* One line per device under the header: the containers' memory in use
 * against the device's (NVML, when it can be loaded) and what their caps
 * promise, the device's utilization (every user) and the sum of the SM
 * caps. */
static void gpu_lines(FILE *f, struct snap *const *s, int n)
{
    struct gpu_total t[16];
    int nt = gpu_totals(s, n, t, 16);
    for (int k = 0; k < nt; k++) {
        char used[16], caps[16], tot[16] = "?", util[16], host[32] = "", hb[16];
        uint64_t total;
        human(t[k].mem_used, used, sizeof used);
        human(t[k].mem_caps, caps, sizeof caps);
        if (gpu_mem_total(t[k].d->uuid, &total)) human(total, tot, sizeof tot);
        render_pct(t[k].has_util, t[k].util_pm, util, sizeof util);
        if (t[k].host_used) {
            human(t[k].host_used, hb, sizeof hb);
            snprintf(host, sizeof host, " + host %s", hb);
        }
        fprintf(f, "GPU %d  mem %s / %s (caps %s)%s  SM %s (caps %u%%)  %d capped  %.20s\n", t[k].d->index,
                used, tot, t[k].mem_capped ? caps : "-", host, util, t[k].sm_caps_pm / 10, t[k].containers,
                t[k].d->uuid);
    }
}

static int sort_key;
static struct snap *const *sort_s;
static int cmp_order(const void *a, const void *b)
{
    const struct snap *x = sort_s[*(const int *)a], *y = sort_s[*(const int *)b];
    if (sort_key == SORT_MEM && mem_of(x) != mem_of(y)) return mem_of(x) < mem_of(y) ? 1 : -1;
    if (sort_key == SORT_UTIL && util_of(x) != util_of(y)) return util_of(x) < util_of(y) ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* Waits up to sec for a key (tty only): returns it, 0 on timeout, -1 when
 * stdin closed. */
static int wait_key(int keys, double sec)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        double left = sec - ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9);
        if (stop || left <= 0) return 0;
        if (!keys) {
            struct timespec d = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
            nanosleep(&d, NULL);
            continue;
        }
        struct pollfd pf = {.fd = STDIN_FILENO, .events = POLLIN};
        int r = poll(&pf, 1, (int)(left * 1000) + 1);
        if (r <= 0) continue;
        char c;
        ssize_t n = read(STDIN_FILENO, &c, 1);
        if (n == 1) return (unsigned char)c;
        if (n == 0) return -1;
    }
}

static struct termios saved;
static int raw_on;
static void raw_off(void)
{
    if (raw_on) tcsetattr(STDIN_FILENO, TCSANOW, &saved), raw_on = 0;
}

int cmd_top(int argc, char **argv)
{
    double interval = 1.0;
    long iterations = 0;
    int brief = 0, all = 0;
    const char *root_opt = NULL, *pos = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return top_usage(stdout), 0;
        else if (cli_opt_val(argc, argv, &i, "--interval", &v))
            interval = cli_parse_seconds("--interval", v, 0.1, 60);
        else if (cli_opt_val(argc, argv, &i, "--iterations", &v))
            iterations = cli_parse_long("--iterations", v, 1, 1000000000L);
        else if (cli_opt_flag(argv, i, "--brief")) brief = 1;
        else if (cli_opt_flag(argv, i, "--all-users")) all = 1;
        else if (cli_opt_val(argc, argv, &i, "--root", &v)) root_opt = v;
        else cli_root_positional(argv[i], &pos);
    }
    if (all && (pos || root_opt)) cli_usage_error("--all-users and a ROOT exclude each other");
    const char *root = all ? "all users" : cli_root_arg(pos, root_opt);
    int tty = isatty(STDOUT_FILENO);
    int keys = tty && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
    if (keys) {
        struct termios t = saved;
        t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        t.c_cc[VMIN] = 1;
        t.c_cc[VTIME] = 0;
        raw_on = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
        keys = raw_on;
    }
    const char *lang = getenv("LC_ALL");
    if (!lang || !*lang) lang = getenv("LC_CTYPE");
    if (!lang || !*lang) lang = getenv("LANG");
    int utf8 = lang && (strstr(lang, "UTF-8") || strstr(lang, "utf8") || strstr(lang, "UTF8"));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    static struct hist hs[MAX_CONTAINERS];
    static char bufs[MAX_CONTAINERS][HIST * 3 + 8];
    static const char *hp[MAX_CONTAINERS], *hp2[MAX_CONTAINERS];
    static int order[MAX_CONTAINERS];
    static struct snap *s2[MAX_CONTAINERS];
    int nh = 0, rc = 0, paused = 0, sortk = SORT_NAME;
    if (tty) fputs("\033[?25l", stdout); /* hide the cursor while drawing */
    for (long it = 0; !stop && (iterations == 0 || it < iterations);) {
        struct snap **s;
        int n = snap_collect_any(root, all, &s);
        if (n < 0) {
            cli_err("cannot read %s: %s", root, strerror(errno));
            rc = 1;
            break;
        }
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
            if (h->len == HIST) memmove(h->v, h->v + 1, sizeof h->v[0] * (HIST - 1)), h->len--;
            h->v[h->len++] = util_of(s[c]);
            draw_hist(h, bufs[c], sizeof bufs[c], utf8);
            hp[c] = bufs[c];
        }
        for (int c = 0; c < n; c++) order[c] = c;
        sort_key = sortk, sort_s = s;
        qsort(order, (size_t)n, sizeof order[0], cmp_order);
        for (int c = 0; c < n; c++) s2[c] = s[order[c]], hp2[c] = hp[order[c]];
        time_t now = time(NULL);
        char ts[32], *frame = NULL;
        size_t flen = 0;
        strftime(ts, sizeof ts, "%H:%M:%S", localtime(&now));
        FILE *f = open_memstream(&frame, &flen);
        if (!f) {
            snap_release(s, n);
            rc = 1;
            break;
        }
        /* What a narrow terminal must keep comes first; ROOT last. */
        fprintf(f, "cudacap top  %s  %d container%s  sort: %s%s%s  %s\n", ts, n, n == 1 ? "" : "s",
                sort_word[sortk], paused ? "  PAUSED" : "", keys ? "  [q quit, s sort, p pause]" : "", root);
        int cols = 0, rows = 0;
        if (tty) term_size(&cols, &rows);
        gpu_lines(f, s2, n);
        if (n) render_table(f, s2, n, brief, hp2, cols);
        fclose(f);
        if (tty) fputs("\033[H\033[2J", stdout);
        else if (it) fputc('\n', stdout);
        put_cut(frame, flen, cols, rows);
        free(frame);
        fflush(stdout);
        snap_release(s, n);
        if (!paused) it++;
        if (iterations && it >= iterations) break;
        /* Keys: the frame is redrawn at once after one (a paused top keeps
         * showing the same history; resumes counting frames after p). */
        int k;
        do {
            k = wait_key(keys, paused ? 3600 : interval);
            if (k == 'q' || k == 'Q' || k == 3 /* ^C in raw mode */) stop = 1;
            else if (k == 's' || k == 'S') sortk = (sortk + 1) % SORT_N;
            else if (k == 'p' || k == 'P' || k == ' ') paused = !paused;
            else if (k == -1) keys = 0; /* stdin closed: no more keys */
        } while (!stop && k > 0 && !strchr("sSpP ", k));
    }
    raw_off();
    if (tty) fputs("\033[?25h", stdout);
    fflush(stdout);
    return rc;
}
