/* cudacap prepare DIR: the pre-start cleanup of a container's state folder.
 * A stale region from an earlier run would be rebuilt by the library anyway,
 * but a folder shared across runs could carry a dead run's bytes into the
 * next; emptying it before the container starts is the control plane's job. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cap/sampling_lock.h"
#include "cli/cli.h"
#include "cli/snapshot.h"

/* Empties the folder open at dfd; depth bounds the recursion. */
static int empty_at(int dfd, int depth, int keep_lock, long uid, long gid)
{
    DIR *d = fdopendir(dfd);
    if (!d) return close(dfd), -1;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (keep_lock && S_ISREG(st.st_mode) && !strcmp(e->d_name, CC_SAMPLING_LOCK_FILE)) {
            /* Never deleted (sampling_lock.h): a new inode would not exclude
             * a holder of the old one. It holds no data, so keeping it is
             * harmless; it only gets the folder's owner and mode 0600. */
            if (uid >= 0 || gid >= 0)
                if (fchownat(dirfd(d), e->d_name, (uid_t)uid, (gid_t)gid, AT_SYMLINK_NOFOLLOW) != 0)
                    rc = -1;
            if (fchmodat(dirfd(d), e->d_name, 0600, 0) != 0) rc = -1;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            int sub = depth < 16 ? openat(dirfd(d), e->d_name,
                                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
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

/* A state folder holds only cudacap's files: "*.region", "*.lock" and the
 * like. Anything else suggests a wrong DIR (a typo, a home folder): emptying
 * it needs --force. Returns the first foreign name, or NULL. */
static const char *foreign_entry(const char *dir)
{
    static char name[256];
    DIR *d = opendir(dir);
    if (!d) return NULL;
    struct dirent *e;
    const char *bad = NULL;
    while (!bad && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t n = strlen(e->d_name);
        static const char *const ok[] = {".region", ".lock", ".tmp", ".json", NULL};
        int known = 0;
        for (int k = 0; ok[k]; k++) {
            size_t m = strlen(ok[k]);
            if (n > m && !strcmp(e->d_name + n - m, ok[k])) known = 1;
        }
        if (!known) bad = strncpy(name, e->d_name, sizeof name - 1);
    }
    closedir(d);
    return bad;
}

int cli_prepare_force;

int cli_prepare_dir(const char *dir, unsigned mode, long uid, long gid)
{
    struct stat st;
    if (lstat(dir, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            cli_err("%s is a symbolic link; a state folder must be a real folder", dir);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            cli_err("%s exists and is not a folder", dir);
            return 1;
        }
        long pids[8];
        int n = snap_live_pids(dir, pids, 8);
        if (n > 0) {
            char list[128] = "";
            for (int i = 0; i < n; i++) {
                char one[24];
                snprintf(one, sizeof one, "%s%ld", i ? ", " : "", pids[i]);
                strncat(list, pids[i] < 0 ? "a holder of sampling.lock" : one,
                        sizeof list - strlen(list) - 1);
            }
            cli_err("%s is in use by process(es) %s: emptying it now would split their cap; "
                    "stop the container first",
                    dir, list);
            return CLI_PREPARE_BUSY;
        }
        const char *bad = cli_prepare_force ? NULL : foreign_entry(dir);
        if (bad) {
            cli_err("%s holds \"%s\", which is not a cudacap state file: is DIR right? "
                    "(--force empties it anyway)", dir, bad);
            return 1;
        }
    } else if (errno == ENOENT) {
        /* Parents we create: traversable, not listable, so one container's
         * user cannot see the others' names. */
        char parent[1024];
        snprintf(parent, sizeof parent, "%s", dir);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = 0;
            if (cli_mkdirs(parent, 0711) != 0) {
                cli_err("cannot create %s: %s", parent, strerror(errno));
                return 1;
            }
        }
        if (mkdir(dir, mode) != 0 && errno != EEXIST) {
            cli_err("cannot create %s: %s", dir, strerror(errno));
            return 1;
        }
    } else {
        cli_err("cannot use %s: %s", dir, strerror(errno));
        return 1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        cli_err("cannot open %s: %s", dir, strerror(errno));
        return 1;
    }
    /* Owner and mode on the descriptor: no window for a swapped path. */
    if ((uid >= 0 || gid >= 0) && fchown(fd, (uid_t)uid, (gid_t)gid) != 0) {
        cli_err("cannot give %s to %ld:%ld: %s", dir, uid, gid, strerror(errno));
        close(fd);
        return 1;
    }
    if (fchmod(fd, mode) != 0) {
        cli_err("cannot set the mode of %s: %s", dir, strerror(errno));
        close(fd);
        return 1;
    }
    if (empty_at(fd, 0, 1, uid, gid) != 0) {
        cli_err("cannot empty %s completely: %s", dir, strerror(errno));
        return 1;
    }
    return 0;
}

static void usage(FILE *f)
{
    fputs("usage: cudacap prepare [--owner UID[:GID]] [--mode MODE] [--force] DIR\n"
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
          "  --force            empty DIR even when it holds files cudacap did not write\n",
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
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return usage(stdout), 0;
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
    if (!strcmp(dir, "/")) cli_usage_error("refusing to empty /");
    /* A cudacap run on DIR holds a shared flock on it while its CMD lives. */
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        cli_err("%s is in use by a running 'cudacap run'; stop it first", dir);
        close(fd);
        return CLI_PREPARE_BUSY;
    }
    int rc = cli_prepare_dir(dir, mode, uid, gid);
    if (fd >= 0) close(fd);
    return rc;
}
