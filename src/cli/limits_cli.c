/* The limits file from the command line (cap/limits.h): the cap options of
 * prepare, run, cdi and set, and its atomic write. */
#include "cli/limits_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* "--mem-3": 3; -1 when name is not prefix-<i> with i in 0..15. */
static int suffix_dev(const char *a, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(a, prefix, n) != 0 || a[n] != '-') return -1;
    const char *d = a + n + 1, *eq = strchr(d, '=');
    size_t len = eq ? (size_t)(eq - d) : strlen(d);
    if (len < 1 || len > 2 || (len == 2 && d[0] == '0')) return -1;
    int v = 0;
    for (size_t k = 0; k < len; k++) {
        if (d[k] < '0' || d[k] > '9') return -1;
        v = v * 10 + (d[k] - '0');
    }
    return v < CC_MAX_DEVICES ? v : -1;
}

int cli_limits_opt(int argc, char **argv, int *i, struct cli_limits *l)
{
    const char *v;
    char name[32];
    if (cli_opt_val(argc, argv, i, "--mem", &v)) {
        l->mem = v;
        l->lim.mem_all = cli_parse_size("--mem", v);
        return l->any = 1;
    }
    if (cli_opt_val(argc, argv, i, "--sm", &v)) {
        l->sm = v;
        l->lim.sm_all = cli_parse_pct("--sm", v, 1, 100);
        return l->any = 1;
    }
    if (cli_opt_val(argc, argv, i, "--sm-soft", &v)) {
        l->soft = v;
        l->lim.soft_all = cli_parse_pct("--sm-soft", v, 1, 100);
        return l->any = 1;
    }
    if (cli_opt_val(argc, argv, i, "--mem-oversubscribe", &v)) {
        l->lim.over_all = cli_parse_size("--mem-oversubscribe", v);
        l->lim.over_set_all = 1;
        return l->any = 1;
    }
    int d;
    if ((d = suffix_dev(argv[*i], "--mem-oversubscribe")) >= 0) {
        snprintf(name, sizeof name, "--mem-oversubscribe-%d", d);
        if (cli_opt_val(argc, argv, i, name, &v)) {
            l->lim.over_dev[d] = cli_parse_size(name, v);
            l->lim.over_set_dev[d] = 1;
        }
        return l->any = l->per_dev = 1;
    }
    if ((d = suffix_dev(argv[*i], "--sm-soft")) >= 0) {
        snprintf(name, sizeof name, "--sm-soft-%d", d);
        if (cli_opt_val(argc, argv, i, name, &v)) l->lim.soft_dev[d] = cli_parse_pct(name, v, 1, 100);
        return l->any = l->per_dev = 1;
    }
    if ((d = suffix_dev(argv[*i], "--sm")) >= 0) {
        snprintf(name, sizeof name, "--sm-%d", d);
        if (cli_opt_val(argc, argv, i, name, &v)) l->lim.sm_dev[d] = cli_parse_pct(name, v, 1, 100);
        return l->any = l->per_dev = 1;
    }
    if ((d = suffix_dev(argv[*i], "--mem")) >= 0) {
        snprintf(name, sizeof name, "--mem-%d", d);
        if (cli_opt_val(argc, argv, i, name, &v)) {
            l->lim.mem_dev[d] = cli_parse_size(name, v);
            if (!l->lim.mem_dev[d]) cli_usage_error("%s: 0 is no cap; leave the flag out", name);
        }
        return l->any = l->per_dev = 1;
    }
    return 0;
}

void cli_limits_check(const struct cli_limits *l)
{
    const cc_limits_t *x = &l->lim;
    if (l->mem && !x->mem_all) cli_usage_error("--mem: 0 is no cap; leave the flag out");
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        uint64_t over = x->over_set_dev[i] ? x->over_dev[i] : x->over_all;
        if (over && !(x->mem_dev[i] ? x->mem_dev[i] : x->mem_all))
            cli_usage_error("--mem-oversubscribe on device %d needs a memory cap there (--mem or --mem-%d): "
                            "oversubscription is memory beyond a cap", i, i);
    }
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        uint32_t h = x->sm_dev[i] ? x->sm_dev[i] : x->sm_all;
        uint32_t s = x->soft_dev[i] ? x->soft_dev[i] : x->soft_all;
        const char *sf = x->soft_dev[i] ? "--sm-soft-<i>" : "--sm-soft";
        if (s && (!h || h >= 100))
            cli_usage_error("%s %u on device %d needs --sm PCT below 100 (the share it guarantees)",
                            sf, s, i);
        if (s && s < h)
            cli_usage_error("%s %u is below the SM cap %u on device %d (a soft limit is at least the "
                            "hard one)", sf, s, h, i);
    }
}

int cli_limits_write(int dfd, const char *dir, const cc_limits_t *l)
{
    char text[CC_LIMITS_MAX];
    int n = cc_limits_format(l, text, sizeof text);
    if (n < 0) {
        cli_err("the limits do not fit in %d bytes", CC_LIMITS_MAX);
        return 1;
    }
    int ldfd = cli_limits_dir(dfd, dir);
    if (ldfd < 0) return 1;
    static const char tmp[] = ".limits.tmp";
    unlinkat(ldfd, tmp, 0); /* a leftover of an interrupted write */
    int fd = openat(ldfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        cli_err("cannot create %s/%s/%s: %s", dir, CC_LIMITS_DIR, tmp, strerror(errno));
        close(ldfd);
        return 1;
    }
    /* Readable by the container's user, writable by the writer (root) only. */
    int ok = fchmod(fd, 0644) == 0 && write(fd, text, (size_t)n) == n && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || renameat(ldfd, tmp, ldfd, CC_LIMITS_NAME) != 0) {
        cli_err("cannot write %s/%s: %s", dir, CC_LIMITS_FILE, strerror(errno));
        unlinkat(ldfd, tmp, 0);
        close(ldfd);
        return 1;
    }
    fsync(ldfd);
    close(ldfd);
    return 0;
}

int cli_limits_dir(int dfd, const char *dir)
{
    /* Kept, never replaced: a container runtime may have it mounted (the
     * CDI spec mounts it read-only), and a new folder would not show
     * through that mount. */
    if (mkdirat(dfd, CC_LIMITS_DIR, 0755) != 0 && errno != EEXIST) {
        cli_err("cannot create %s/%s: %s", dir, CC_LIMITS_DIR, strerror(errno));
        return -1;
    }
    int fd = openat(dfd, CC_LIMITS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        cli_err("%s/%s: not a folder (a link is never followed): %s", dir, CC_LIMITS_DIR, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    /* Readable by the container, writable by the writer alone. */
    if ((st.st_mode & 0777) != 0755 && st.st_uid == geteuid() && fchmod(fd, 0755) != 0) {
        cli_err("cannot make %s/%s mode 0755: %s", dir, CC_LIMITS_DIR, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int cli_limits_load(int dfd, const char *dir, cc_limits_t *out)
{
    char why[256];
    (void)dfd;
    int rc = cc_limits_read(dir, out, why, sizeof why);
    if (rc < 0) cli_err("%s/%s: %s", dir, CC_LIMITS_FILE, why);
    return rc;
}
