/* Read-only access to a container's state files for observers (the cudacap
 * command): never creates, locks, rebuilds or maps anything. A region is
 * read into a private copy with pread, so a file truncated or swapped while
 * it is read gives a short read or a bad header, never a signal; and every
 * open is non-blocking, so a FIFO planted in the folder cannot hang us. */
#ifndef CC_REGION_PEEK_H
#define CC_REGION_PEEK_H

#include <stddef.h>
#include <sys/stat.h>

#include "region/region.h"

/* Opens the state file at path read-only (O_NONBLOCK | O_NOFOLLOW |
 * O_CLOEXEC) and fstats it into *st; refuses anything but a regular file
 * with one link. Returns the descriptor, or -1 with errno (ENOENT: absent)
 * and, unless ENOENT, a reason naming path in why. */
int cc_peek_open(const char *path, struct stat *st, char *why, size_t len);

enum {
    CC_PEEK_OK = 0,
    CC_PEEK_ABSENT,    /* no such file */
    CC_PEEK_UNUSABLE,  /* not a regular file, hard-linked, unreadable */
    CC_PEEK_NODATA,    /* other size or layout, empty, mid-rebuild, rebuilt while read */
    CC_PEEK_TRUNCATED, /* shorter than the region's permanent size */
};

struct cc_peek {
    int state;      /* CC_PEEK_* */
    char why[1280]; /* what was wrong, naming the file (empty when OK) */
};

/* A private copy of DIR/spec->file (spec->file_size bytes, malloc'ed; free
 * with cc_region_unpeek) when its header matches spec and stayed so while
 * it was read; else NULL, with res saying why. */
void *cc_region_peek(const char *dir, const struct cc_region_spec *spec, struct cc_peek *res);
void cc_region_unpeek(void *copy);

#endif
