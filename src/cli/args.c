/* Argument helpers shared by the subcommands: every bad value ends in one
 * line naming the option and exit status 2. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/options.h"
#include "cudacap/config.h"

const char *cli_cmd = "";

static void vmsg(const char *fmt, va_list ap)
{
    fprintf(stderr, "cudacap%s%s: ", *cli_cmd ? " " : "", cli_cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
    fprintf(stderr, "see 'cudacap %s%s--help'\n", cli_cmd, *cli_cmd ? " " : "");
    exit(CLI_EXIT_USAGE);
}

void cli_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
}

int cli_is_help(const char *a) { return !strcmp(a, "-h") || !strcmp(a, "--help"); }

int cli_opt_val(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != 0) return 0;
    if (*i + 1 >= argc) cli_usage_error("option %s needs a value", name);
    *val = argv[++*i];
    return 1;
}

int cli_opt_flag(char **argv, int i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[i], name, n) != 0) return 0;
    if (argv[i][n] == '=') cli_usage_error("option %s takes no value", name);
    return argv[i][n] == 0;
}

uint64_t cli_parse_size(const char *opt, const char *v)
{
    uint64_t b;
    if (cc_parse_size(v, &b) != 0 || b == 0)
        cli_usage_error("%s: \"%s\" is not a size (examples: 4g, 512m, 1048576)", opt, v);
    return b;
}

uint32_t cli_parse_pct(const char *opt, const char *v, uint32_t lo, uint32_t hi)
{
    uint32_t p;
    if (cc_parse_percent(v, &p) != 0 || p < lo || p > hi)
        cli_usage_error("%s: \"%s\" is not a percentage in %u..%u", opt, v, lo, hi);
    return p;
}

void cli_check_sm(const char *sm, const char *soft)
{
    uint32_t h = sm ? cli_parse_pct("--sm", sm, 1, 100) : 0;
    if (!soft) return;
    uint32_t s = cli_parse_pct("--sm-soft", soft, 1, 100);
    if (!sm) cli_usage_error("--sm-soft %s needs --sm PCT (the share it guarantees)", soft);
    if (s < h)
        cli_usage_error("--sm-soft %s is below --sm %s (a soft limit is at least the hard one)", soft,
                        sm);
}

void cli_check_burst(const char *sm, const char *burst)
{
    uint64_t ms;
    if (!burst) return;
    if (cc_opt_parse(&cc_options[CC_OPT_SM_BURST], burst, &ms) != 0)
        cli_usage_error("--sm-burst: \"%s\" is not a number of milliseconds in %u..%u", burst,
                        CC_SM_BURST_MIN_MS, CC_SM_BURST_MAX_MS);
    if (!sm) cli_usage_error("--sm-burst %s needs --sm PCT (the share it runs ahead of)", burst);
}

double cli_parse_seconds(const char *opt, const char *v, double lo, double hi)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || !(d >= lo && d <= hi))
        cli_usage_error("%s: \"%s\" is not a number of seconds in %g..%g", opt, v, lo, hi);
    return d;
}

long cli_parse_long(const char *opt, const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    long l = strtol(v, &end, 10);
    if (errno || end == v || *end || l < lo || l > hi)
        cli_usage_error("%s: \"%s\" is not a whole number in %ld..%ld", opt, v, lo, hi);
    return l;
}

void cli_check_devices(const char *opt, const char *v)
{
    const char *p = v;
    if (!*p) cli_usage_error("%s: empty device list", opt);
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int ok = n > 0;
        if (ok && (strncmp(p, "GPU-", 4) == 0 || strncmp(p, "MIG-", 4) == 0)) {
            for (size_t k = 4; k < n; k++)
                if (!isxdigit((unsigned char)p[k]) && p[k] != '-' && p[k] != '/') ok = 0;
            if (n < 5) ok = 0;
        } else {
            for (size_t k = 0; k < n; k++)
                if (!isdigit((unsigned char)p[k])) ok = 0;
            if (n > 3) ok = 0;
        }
        if (!ok)
            cli_usage_error("%s: \"%.*s\" in \"%s\" is neither a device index nor a GPU-/MIG- UUID",
                            opt, (int)n, p, v);
        if (!e) break;
        p = e + 1;
        if (!*p) cli_usage_error("%s: \"%s\" ends with a comma", opt, v);
    }
}

const char *cli_default_root(const char *opt)
{
    static char buf[CC_PATH_MAX];
    const char *env = getenv("CUDACAP_ROOT");
    if (opt && *opt) snprintf(buf, sizeof buf, "%s", opt);
    else if (env && *env) snprintf(buf, sizeof buf, "%s", env);
    else if (geteuid() == 0) snprintf(buf, sizeof buf, "/var/lib/cudacap/containers");
    else snprintf(buf, sizeof buf, "/tmp/cudacap-%u/containers", (unsigned)geteuid());
    return buf;
}

/* path made absolute with its folder resolved (realpath) but its last
 * component kept: the plain name libcudacap.so stays a link to the current
 * version, so a spec or environment naming it survives an upgrade. */
static int lib_at(const char *path, char *buf, size_t len)
{
    char d[PATH_MAX + 64];
    if ((size_t)snprintf(d, sizeof d, "%s", path) >= sizeof d) return -1;
    char *slash = strrchr(d, '/');
    const char *base = slash ? slash + 1 : d, *folder = ".";
    if (!*base) return -1;
    if (slash == d) folder = "/";
    else if (slash) *slash = 0, folder = d;
    char *rdir = realpath(folder, NULL);
    if (!rdir) return -1;
    char full[2 * PATH_MAX];
    snprintf(full, sizeof full, "%s/%s", strcmp(rdir, "/") ? rdir : "", base);
    free(rdir);
    struct stat st;
    if (stat(full, &st) != 0 || !S_ISREG(st.st_mode) || access(full, R_OK) != 0) return -1;
    if ((size_t)snprintf(buf, len, "%s", full) >= len) return -1;
    return 0;
}

#ifndef CLI_REL_LIBDIR
#define CLI_REL_LIBDIR "../lib/cudacap"
#endif
#ifndef CLI_MULTIARCH
#define CLI_MULTIARCH ""
#endif

const char *cli_root_arg(const char *pos, const char *opt)
{
    if (pos && opt) cli_usage_error("ROOT given twice (\"%s\" and --root %s)", pos, opt);
    return cli_default_root(pos ? pos : opt);
}

void cli_root_positional(const char *a, const char **pos)
{
    if (a[0] == '-') cli_usage_error("unknown option %s", a);
    if (*pos) cli_usage_error("unexpected argument \"%s\" (one ROOT only)", a);
    *pos = a;
}

int cli_find_library(const char *opt, char *buf, size_t len)
{
    if (opt && *opt) {
        if (lib_at(opt, buf, len) == 0) return 0;
        snprintf(buf, len, "%s", opt);
        return -1;
    }
    /* Beside this binary: the installed tree's libdir (any prefix), then
     * the build tree's lib/; then the usual absolute places. */
    char exe[PATH_MAX], cand[6][PATH_MAX + 64];
    int nc = 0;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(cand[nc++], sizeof cand[0], "%s/" CLI_REL_LIBDIR "/libcudacap.so", exe);
            snprintf(cand[nc++], sizeof cand[0], "%s/../lib/libcudacap.so", exe);
        }
    }
    snprintf(cand[nc++], sizeof cand[0], "%s", CLI_INSTALLED_LIB);
    if (CLI_MULTIARCH[0]) snprintf(cand[nc++], sizeof cand[0], "/usr/lib/%s/cudacap/libcudacap.so", CLI_MULTIARCH);
    snprintf(cand[nc++], sizeof cand[0], "/usr/lib/cudacap/libcudacap.so");
    char tried[8 * PATH_MAX] = "";
    for (int i = 0; i < nc; i++) {
        if (lib_at(cand[i], buf, len) == 0) return 0;
        size_t t = strlen(tried);
        snprintf(tried + t, sizeof tried - t, "%s%s", t ? ", " : "", cand[i]);
    }
    snprintf(buf, len, "%s", tried);
    return -1;
}

int cli_mkdirs(const char *dir, unsigned mode)
{
    char p[CC_PATH_MAX];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) return errno = ENAMETOOLONG, -1;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, mode) != 0 && errno != EEXIST) return -1;
        *s = '/';
    }
    if (mkdir(p, mode) != 0 && errno != EEXIST) return -1;
    struct stat st;
    if (stat(p, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) return errno = ENOTDIR, -1;
    return 0;
}

const char *cli_bytes(uint64_t b, char *buf, size_t len)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) v /= 1024, u++;
    if (u == 0) snprintf(buf, len, "%llu B", (unsigned long long)b);
    else snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, unit[u]);
    return buf;
}
