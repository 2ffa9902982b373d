/* Opening a state folder given by an operator (cli.h): the path is resolved
 * one component at a time from "/" with O_NOFOLLOW, so no symbolic link at
 * any component (a parent, the folder itself, "link/.") can lead prepare
 * out of the folder it was given. Because no component may be a link, ".."
 * and "." mean their lexical parent and self, which lets the final folder
 * be known, and refused when it is / or a system folder, before anything is
 * opened or created. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/controls.h"

int cli_canon_path(const char *dir, char *out, size_t len)
{
    char buf[2 * PATH_MAX];
    if (dir[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) return -1;
        if ((size_t)snprintf(buf, sizeof buf, "%s/%s", cwd, dir) >= sizeof buf) return errno = ENAMETOOLONG, -1;
    } else if ((size_t)snprintf(buf, sizeof buf, "%s", dir) >= sizeof buf) {
        return errno = ENAMETOOLONG, -1;
    }
    size_t o = 0;
    out[0] = 0;
    for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (!strcmp(c, ".")) continue;
        if (!strcmp(c, "..")) { /* drop the last component; "/.." is "/" */
            while (o > 0 && out[o - 1] != '/') o--;
            if (o > 0) o--;
            out[o] = 0;
            continue;
        }
        size_t n = strlen(c);
        if (o + 1 + n + 1 > len) return errno = ENAMETOOLONG, -1;
        out[o++] = '/';
        memcpy(out + o, c, n + 1);
        o += n;
    }
    if (o == 0) snprintf(out, len, "/");
    return 0;
}

const char *cli_system_folder(const char *canon)
{
    static const char *const sys[] = {"/", "/etc", "/usr", "/usr/local", "/usr/lib", "/bin",
                                      "/sbin", "/boot", "/dev", "/proc", "/sys", "/var",
                                      "/var/lib", "/var/run", "/var/tmp", "/var/log", "/root",
                                      "/home", "/run", "/tmp", "/opt", "/srv", "/mnt", "/media",
                                      "/snap", NULL};
    for (int i = 0; sys[i]; i++)
        if (!strcmp(canon, sys[i])) return sys[i];
    if (!strncmp(canon, "/lib", 4) && !strchr(canon + 1, '/')) return canon; /* /lib, /lib64, ... */
    return NULL;
}

/* The folder at the canonical path, walked from "/" one component at a
 * time with O_NOFOLLOW (created when create says so). dir, the path as
 * given, is not opened: the kernel would follow its links. */
static int CC_CONTROL_POINT(open_walked)(const char *dir, char *path, int create, unsigned mode)
{
    (void)dir;
    int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        cli_err("cannot open /: %s", strerror(errno));
        return -1;
    }
    /* Walk the canonical form: the same folders as the given one, since a
     * link anywhere is refused (a link ended by ".." is not even reached). */
    for (char *c = path + 1; *c && fd >= 0;) {
        char *slash = strchr(c, '/');
        if (slash) *slash = 0;
        int last = !slash;
        int nfd = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (nfd < 0 && errno == ENOENT && create) {
            /* Parents we create: traversable, not listable, so one
             * container's user cannot see the others' names. */
            if (mkdirat(fd, c, last ? mode : 0711) != 0 && errno != EEXIST) {
                cli_err("cannot create %s: %s", path, strerror(errno));
                close(fd);
                return -1;
            }
            nfd = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (nfd < 0) {
            int e = errno;
            struct stat st;
            if (fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                cli_err("%s is a symbolic link; a state folder is given by a path without links "
                        "(links at any component are refused, so nothing outside it is touched)",
                        path);
            else if (e == ENOTDIR || e == ELOOP)
                cli_err("%s exists and is not a folder", path);
            else
                cli_err("cannot open %s: %s", path, strerror(e));
            close(fd);
            return -1;
        }
        close(fd);
        fd = nfd;
        if (slash) *slash = '/', c = slash + 1;
        else break;
    }
    return fd;
}

int cli_open_state_dir(const char *dir, int create, unsigned mode, char *canon, size_t len)
{
    char path[2 * PATH_MAX];
    if (cli_canon_path(dir, canon, len) != 0) {
        cli_err("cannot resolve %s: %s", dir, strerror(errno));
        return -1;
    }
    if ((size_t)snprintf(path, sizeof path, "%s", canon) >= sizeof path) return -1;
    return open_walked(dir, path, create, mode);
}
