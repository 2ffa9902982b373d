/* Observers' reads of the state files (peek.h). */
#include "region/peek.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/controls.h"
#include "os/os.h"

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
         : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
         : S_ISLNK(m) ? "a symbolic link" : "not a plain file";
}

/* A state file opened for reading: O_NONBLOCK (os/os.h), since opening a
 * FIFO would wait for a writer; *at says how far it got. */
static int CC_CONTROL_POINT(open_state)(const char *path, struct stat *st, int *at)
{
    return cc_os_open_regular(path, O_RDONLY, 0, st, at);
}

int cc_peek_open(const char *path, struct stat *st, char *why, size_t len)
{
    int at = 0;
    int fd = open_state(path, st, &at);
    if (fd < 0 && at == CC_OS_AT_OPEN) {
        int e = errno;
        struct stat l;
        if (e == ELOOP && cc_os_lstat(path, &l) == 0 && S_ISLNK(l.st_mode))
            snprintf(why, len, "%s is a symbolic link, not a regular file", path);
        else if (e != ENOENT)
            snprintf(why, len, "%s: cannot open (%s)", path, strerror(e));
        errno = e;
        return -1;
    }
    const char *bad = NULL;
    char links[64];
    if (fd < 0) {
        bad = at == CC_OS_AT_FSTAT ? strerror(errno) : kind_of(st->st_mode);
    } else if (st->st_nlink != 1) {
        /* A hard link could be any file of the same file system (/etc/shadow
         * included): nothing cudacap makes has a second name. */
        snprintf(links, sizeof links, "a file with %lu links (a state file has one)",
                 (unsigned long)st->st_nlink);
        bad = links;
    }
    if (bad) {
        snprintf(why, len, "%s is %s", path, bad);
        if (fd >= 0) close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

/* The whole file into copy with pread, never through a mapping (a file
 * truncated meanwhile would raise SIGBUS); returns the bytes read (short
 * at end of file). path and the size at open: for the tests' pause. */
static size_t CC_CONTROL_POINT(read_all)(int fd, char *copy, size_t size, const char *path, off_t at_open)
{
    (void)path, (void)at_open;
    size_t got = 0;
    while (got < size) {
        ssize_t r = pread(fd, copy + got, size - got, (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    return got;
}

void *cc_region_peek(const char *dir, const struct cc_region_spec *spec, struct cc_peek *res)
{
    char path[1024];
    res->state = CC_PEEK_UNUSABLE;
    res->why[0] = 0;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, spec->file) >= sizeof path) {
        snprintf(res->why, sizeof res->why, "%s/%s: path too long", dir, spec->file);
        return NULL;
    }
    struct stat st;
    int fd = cc_peek_open(path, &st, res->why, sizeof res->why);
    if (fd < 0) {
        if (errno == ENOENT) res->state = CC_PEEK_ABSENT;
        return NULL;
    }
    char *copy = NULL;
    if (st.st_size == 0) {
        res->state = CC_PEEK_NODATA; /* created, not yet sized by its builder */
        snprintf(res->why, sizeof res->why, "%s is empty (being created)", path);
    } else if (st.st_size < (off_t)spec->file_size) {
        res->state = CC_PEEK_TRUNCATED;
        snprintf(res->why, sizeof res->why, "%s is truncated: %lld of %u bytes", path,
                 (long long)st.st_size, spec->file_size);
    } else if (st.st_size > (off_t)spec->file_size) {
        res->state = CC_PEEK_NODATA;
        snprintf(res->why, sizeof res->why, "%s is %lld bytes, not %u", path,
                 (long long)st.st_size, spec->file_size);
    } else if (!(copy = malloc(spec->file_size))) {
        snprintf(res->why, sizeof res->why, "%s: out of memory", path);
    } else {
        size_t got = read_all(fd, copy, spec->file_size, path, st.st_size);
        cc_region_hdr_t now;
        if (got < spec->file_size) {
            res->state = CC_PEEK_TRUNCATED;
            snprintf(res->why, sizeof res->why, "%s was truncated while read (%zu of %u bytes)",
                     path, got, spec->file_size);
        } else if (!cc_region_valid(copy, spec)) {
            res->state = CC_PEEK_NODATA;
            snprintf(res->why, sizeof res->why, "%s: another layout, or being rebuilt", path);
        } else if (pread(fd, &now, sizeof now, 0) != (ssize_t)sizeof now ||
                   !cc_region_valid(&now, spec)) {
            /* Unpublished since we started: the copy may mix two builds. */
            res->state = CC_PEEK_NODATA;
            snprintf(res->why, sizeof res->why, "%s was rebuilt while read", path);
        } else {
            res->state = CC_PEEK_OK;
        }
        if (res->state != CC_PEEK_OK) free(copy), copy = NULL;
    }
    close(fd);
    return copy;
}

void cc_region_unpeek(void *copy) { free(copy); }
