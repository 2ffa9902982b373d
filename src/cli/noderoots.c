/* Every container of the node (--all-users of status, top and metrics):
 * the system root and each user's default root. Bare-metal users without
 * root run `cudacap run` into /tmp/cudacap-<uid>/containers (args.c,
 * cli_default_root); an operator wants them beside the system's. A user's
 * folder counts only when it is a real folder (no link) owned by that uid
 * and not writable by others: anyone can make /tmp/cudacap-0 or a link
 * there, and such a folder names nobody's containers. */
#include "cli/noderoots.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

const char *node_system_root(void)
{
    const char *e = getenv("CUDACAP_SYSTEM_ROOT");
    return e && *e ? e : "/var/lib/cudacap/containers";
}

static const char *user_base(void)
{
    const char *e = getenv("CUDACAP_USER_ROOTS");
    return e && *e ? e : "/tmp";
}

/* uid from "cudacap-<digits>", or -1. */
static long uid_of(const char *n)
{
    if (strncmp(n, "cudacap-", 8) != 0 || !n[8]) return -1;
    char *end;
    errno = 0;
    long u = strtol(n + 8, &end, 10);
    return *end || errno || u < 0 || u > 0x7fffffffL ? -1 : u;
}

static int add_root(const char *root, const char *prefix, struct snap ***all, int *n, int *cap)
{
    static char *names[SNAP_MAX_CONTAINERS];
    int k = snap_list(root, names, SNAP_MAX_CONTAINERS);
    if (k < 0) return -1;
    for (int i = 0; i < k; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        if (*n < SNAP_MAX_CONTAINERS) {
            if (*n == *cap) {
                int nc = *cap ? *cap * 2 : 64;
                struct snap **g = realloc(*all, (size_t)nc * sizeof *g);
                if (!g) {
                    free(names[i]);
                    continue;
                }
                *all = g, *cap = nc;
            }
            struct snap *s = malloc(sizeof *s);
            if (s) {
                snap_read(dir, names[i], s);
                if (prefix) snprintf(s->name, sizeof s->name, "%s/%.200s", prefix, names[i]);
                (*all)[(*n)++] = s;
            }
        }
        free(names[i]);
    }
    return 0;
}

int snap_collect_node(struct snap ***out)
{
    struct snap **all = NULL;
    int n = 0, cap = 0;
    const char *sys = node_system_root();
    if (add_root(sys, NULL, &all, &n, &cap) != 0 && errno != ENOENT)
        cli_err("cannot read %s: %s", sys, strerror(errno));
    const char *base = user_base();
    DIR *d = opendir(base);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            long uid = uid_of(e->d_name);
            struct stat st;
            if (uid < 0 || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
            if (!S_ISDIR(st.st_mode) || (long)st.st_uid != uid || (st.st_mode & S_IWOTH)) continue;
            char root[1024], who[64];
            snprintf(root, sizeof root, "%s/%s/containers", base, e->d_name);
            /* The containers folder too: a real folder of the same owner. */
            if (lstat(root, &st) != 0 || !S_ISDIR(st.st_mode) || (long)st.st_uid != uid) continue;
            struct passwd *pw = getpwuid((uid_t)uid);
            if (pw && pw->pw_name && *pw->pw_name) snprintf(who, sizeof who, "%.60s", pw->pw_name);
            else snprintf(who, sizeof who, "uid%ld", uid);
            if (add_root(root, who, &all, &n, &cap) != 0)
                cli_err("cannot read %s (%s's containers): %s", root, who, strerror(errno));
        }
        closedir(d);
    }
    if (!all) all = calloc(1, sizeof *all);
    *out = all;
    return all ? n : -1;
}

int snap_collect_any(const char *root, int all_users, struct snap ***out)
{
    return all_users ? snap_collect_node(out) : snap_collect(root, out);
}
