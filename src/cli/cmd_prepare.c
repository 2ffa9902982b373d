/* cudacap prepare DIR: the pre-start cleanup of a container's state folder.
 * A stale region from an earlier run would be rebuilt by the library anyway,
 * but a folder shared across runs could carry a dead run's bytes into the
 * next; emptying it before the container starts is the control plane's job. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cap/compute/sampling_lock.h"
#include "cli/cli.h"
#include "cli/limits_cli.h"
#include "cli/liveness.h"

/* Names cudacap gives the entries of a state folder: regular files
 * "*.region" (memory, compute), "*.lock" (sampling, identity), "*.tmp"
 * (doctor's probe, the limits file being written), "limits" in the
 * "limits.d" folder, and the HAMi layout's "*.cache.d" folder of them. */
static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && !strcmp(s + n - m, suffix);
}
static int ours_name(const char *n)
{
    return ends_with(n, ".region") || ends_with(n, ".lock") || ends_with(n, ".tmp") ||
           !strcmp(n, CC_LIMITS_NAME);
}

/* Empties the folder open at dfd (closed here); depth bounds the recursion
 * and nothing on another file system (a mount point) is entered. */
static int empty_at(int dfd, int depth, int keep_lock, long uid, long gid)
{
    struct stat top;
    DIR *d = fstat(dfd, &top) == 0 ? fdopendir(dfd) : NULL;
    if (!d) return close(dfd), -1;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (keep_lock && !strcmp(e->d_name, CC_SAMPLING_LOCK_FILE)) {
            /* Never deleted (sampling_lock.h): a new inode would not exclude
             * a holder of the old one. It holds no data, so keeping it is
             * harmless; it only gets the folder's owner and mode 0600, set
             * through a descriptor of a plain file with one link (a hard
             * link could be any file). Anything else by that name is not
             * ours, and goes. */
            struct stat ls;
            int lf = openat(dirfd(d), e->d_name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
            if (lf >= 0 && fstat(lf, &ls) == 0 && S_ISREG(ls.st_mode) && ls.st_nlink == 1) {
                if ((uid >= 0 || gid >= 0) && fchown(lf, (uid_t)uid, (gid_t)gid) != 0) rc = -1;
                if (fchmod(lf, 0600) != 0) rc = -1;
                close(lf);
                continue;
            }
            if (lf >= 0) close(lf);
        }
        if (keep_lock && S_ISDIR(st.st_mode) && !strcmp(e->d_name, CC_LIMITS_DIR)) {
            /* Emptied, never removed: a container runtime may have it
             * mounted (the CDI spec mounts it read-only), and a new folder
             * would not show through that mount (cap/limits.h). */
            int sub = st.st_dev == top.st_dev
                          ? openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                          : -1;
            if (sub < 0 || empty_at(sub, depth + 1, 0, -1, -1) != 0) rc = -1;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            int sub = depth < 16 && st.st_dev == top.st_dev
                          ? openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                          : -1;
            if (sub < 0 || empty_at(sub, depth + 1, 0, -1, -1) != 0 ||
                unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) != 0)
                rc = -1;
        } else if (unlinkat(dirfd(d), e->d_name, 0) != 0) {
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

int cli_remove_tree(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    if (empty_at(fd, 0, 0, -1, -1) != 0) return -1;
    return rmdir(dir);
}

/* What the folder at dfd holds: *ours counts regular files by cudacap's
 * names; the first other entry (a file cudacap does not write, a folder
 * other than *.cache.d) goes into bad, as a path relative to the folder. */
static void classify(int dfd, int depth, const char *prefix, int *ours, char *bad, size_t len)
{
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* own offset, unlike dup */
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        if (!bad[0]) snprintf(bad, len, "%s (unreadable)", prefix[0] ? prefix : ".");
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        struct stat st;
        char rel[560];
        snprintf(rel, sizeof rel, "%.280s%s", prefix, e->d_name);
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode) && depth == 0 &&
            (ends_with(e->d_name, ".cache.d") || !strcmp(e->d_name, CC_LIMITS_DIR))) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            char pre[600];
            snprintf(pre, sizeof pre, "%s/", rel);
            if (sub >= 0) classify(sub, depth + 1, pre, ours, bad, len), close(sub);
            else if (!bad[0]) snprintf(bad, len, "%s", rel);
        } else if (!S_ISDIR(st.st_mode) && ours_name(e->d_name)) {
            /* A FIFO or link by one of our names is a broken state file:
             * removing the name is what repairs the folder. */
            if (S_ISREG(st.st_mode)) (*ours)++;
        } else if (!bad[0]) {
            snprintf(bad, len, "%s", rel);
        }
    }
    closedir(d);
}

int cli_prepare_force;

int cli_prepare_at(int dfd, const char *dir, unsigned mode, long uid, long gid)
{
    long pids[8];
    int n = live_users(dfd, pids, 8);
    if (n > 0) {
        char list[160] = "";
        for (int i = 0; i < n; i++) {
            char one[24];
            snprintf(one, sizeof one, "%s%ld", i ? ", " : "", pids[i]);
            strncat(list, pids[i] < 0 ? "a holder of a lock file" : one, sizeof list - strlen(list) - 1);
        }
        cli_err("%s is in use by process(es) %s: emptying it now would split their cap; "
                "stop the container first",
                dir, list);
        return CLI_PREPARE_BUSY;
    }
    int ours = 0;
    char bad[600] = "";
    classify(dfd, 0, "", &ours, bad, sizeof bad);
    /* --force empties leftovers of a state folder, never a folder that is
     * not one: a mistyped DIR must not cost someone their files. */
    if (bad[0] && !ours) {
        cli_err("%s holds \"%s\" and no file cudacap writes: it is not a state folder, and "
                "prepare empties only those (--force does not change that)", dir, bad);
        return 1;
    }
    if (bad[0] && !cli_prepare_force) {
        cli_err("%s holds \"%s\", which is not a cudacap state file: is DIR right? "
                "(--force empties it anyway)", dir, bad);
        return 1;
    }
    /* Owner and mode on the descriptor: no window for a swapped path. */
    if ((uid >= 0 || gid >= 0) && fchown(dfd, (uid_t)uid, (gid_t)gid) != 0) {
        cli_err("cannot give %s to %ld:%ld: %s", dir, uid, gid, strerror(errno));
        return 1;
    }
    if (fchmod(dfd, mode) != 0) {
        cli_err("cannot set the mode of %s: %s", dir, strerror(errno));
        return 1;
    }
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* own offset, unlike dup */
    if (fd < 0 || empty_at(fd, 0, 1, uid, gid) != 0) {
        cli_err("cannot empty %s completely: %s", dir, strerror(errno));
        return 1;
    }
    return 0;
}

int cli_prepare_dir(const char *dir, unsigned mode, long uid, long gid)
{
    char canon[PATH_MAX];
    if (cli_canon_path(dir, canon, sizeof canon) == 0 && cli_system_folder(canon)) {
        cli_err("refusing to prepare %s (%s): a system folder", canon, dir);
        return 1;
    }
    int fd = cli_open_state_dir(dir, 1, mode, canon, sizeof canon);
    if (fd < 0) return 1;
    int rc = cli_prepare_at(fd, canon, mode, uid, gid);
    close(fd);
    return rc;
}

static void usage(FILE *f)
{
    fputs("usage: cudacap prepare [--owner UID[:GID]] [--mode MODE] [--force]\n"
          "                       [--mem SIZE] [--mem-<i> SIZE] [--sm PCT] [--sm-<i> PCT]\n"
          "                       [--sm-soft PCT] [--sm-soft-<i> PCT]\n"
          "                       [--mem-oversubscribe SIZE] [--mem-oversubscribe-<i> SIZE] DIR\n"
          "\n"
          "Creates or empties a container's state folder before the container starts\n"
          "(the control plane's pre-start step). Keeps sampling.lock (it holds no data,\n"
          "and a new file would not exclude a process still holding the old one).\n"
          "Refuses, with exit status 3, while a process of the container may still run.\n"
          "\n"
          "  --owner UID[:GID]  give the folder (and sampling.lock) to the container's user;\n"
          "                     names or numbers\n"
          "  --mode MODE        octal mode of the folder, default 0700; never writable by\n"
          "                     others\n"
          "  --force            empty DIR even when it holds files cudacap did not write,\n"
          "                     if it is a state folder (holds a file cudacap writes)\n"
          "  --mem SIZE         write the container's limits file (DIR/limits.d/limits,\n"
          "                     mode 0644, owned by the caller): memory cap per device;\n"
          "                     --mem-<i> for device i (0..15) alone. With a limits file\n"
          "                     the container's caps come from it, never from its\n"
          "                     processes' environment\n"
          "  --sm PCT           SM cap, 1..100, in the limits file; --sm-<i> for device i\n"
          "  --sm-soft PCT      elastic limit, at least --sm; --sm-soft-<i> for device i\n"
          "  --mem-oversubscribe SIZE\n"
          "                     memory beyond the cap, served from host memory (0: none);\n"
          "                     --mem-oversubscribe-<i> for device i\n"
          "\n"
          "DIR is resolved without following symbolic links at any component; /, system\n"
          "folders and folders holding nothing cudacap writes are refused.\n",
          f);
}

static long parse_id(const char *what, const char *v, int group)
{
    char *end;
    long id = strtol(v, &end, 10);
    if (*v && !*end && id >= 0 && id < 0x7fffffff) return id;
    if (group) {
        struct group *g = getgrnam(v);
        if (g) return (long)g->gr_gid;
    } else {
        struct passwd *p = getpwnam(v);
        if (p) return (long)p->pw_uid;
    }
    cli_usage_error("--owner: no %s named \"%s\"", what, v);
}

int cmd_prepare(int argc, char **argv)
{
    const char *dir = NULL, *v;
    unsigned mode = 0700;
    long uid = -1, gid = -1;
    struct cli_limits lim = {0};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return usage(stdout), 0;
        else if (cli_limits_opt(argc, argv, &i, &lim)) continue;
        else if (cli_opt_val(argc, argv, &i, "--owner", &v)) {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            char *colon = strchr(buf, ':');
            if (colon) *colon = 0;
            if (!buf[0]) cli_usage_error("--owner: \"%s\" has no user", v);
            uid = parse_id("user", buf, 0);
            if (colon) gid = parse_id("group", colon + 1, 1);
        } else if (cli_opt_val(argc, argv, &i, "--mode", &v)) {
            char *end;
            unsigned long m = strtoul(v, &end, 8);
            if (!*v || *end || m > 0777 || (m & 0700) != 0700 || (m & 0002))
                cli_usage_error("--mode: \"%s\" must be octal, give the owner rwx and others no "
                                "write (e.g. 0700, 0711, 0770)", v);
            mode = (unsigned)m;
        } else if (cli_opt_flag(argv, i, "--force")) {
            cli_prepare_force = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) cli_usage_error("unknown option %s", argv[i]);
        else if (dir) cli_usage_error("unexpected argument \"%s\" (one DIR only)", argv[i]);
        else dir = argv[i];
    }
    if (!dir) cli_usage_error("missing DIR (the container's state folder)");
    if (!*dir) cli_usage_error("DIR is empty");
    cli_limits_check(&lim);
    char canon[PATH_MAX];
    if (cli_canon_path(dir, canon, sizeof canon) != 0)
        cli_usage_error("cannot resolve DIR \"%s\": %s", dir, strerror(errno));
    /* Before anything is opened: "//", "/tmp/..", "/." are / as well. */
    const char *sys = cli_system_folder(canon);
    if (sys) cli_usage_error("refusing to empty %s%s%s%s: a system folder, never a state folder", sys,
                             strcmp(dir, sys) ? " (\"" : "", strcmp(dir, sys) ? dir : "",
                             strcmp(dir, sys) ? "\")" : "");
    int fd = cli_open_state_dir(dir, 1, mode, canon, sizeof canon);
    if (fd < 0) return 1;
    /* A cudacap run on DIR holds a shared flock on it while its CMD lives. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        cli_err("%s is in use by a running 'cudacap run'; stop it first", canon);
        close(fd);
        return CLI_PREPARE_BUSY;
    }
    int rc = cli_prepare_at(fd, canon, mode, uid, gid);
    if (rc == 0 && lim.any) {
        lim.lim.generation = 1;
        rc = cli_limits_write(fd, canon, &lim.lim);
    }
    close(fd);
    return rc;
}
