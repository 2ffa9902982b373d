/* Map, validate, rebuild and degrade for the container's shared state files
 * (DESIGN.md §4). One function call per file; failures degrade (NULL and one
 * warning), never kill the process. */
#ifndef CC_REGION_H
#define CC_REGION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cudacap/region.h"

struct cc_region_spec {
    const char *file;        /* name inside the state folder */
    uint32_t magic;
    uint32_t layout_version;
    uint32_t region_size;    /* sizeof the layout */
    uint32_t file_size;      /* PERMANENT: never changes across versions */
    uint32_t device_count;
    /* Fills a zeroed body (everything after the header) on build. */
    void (*init)(void *base, void *arg);
    void *arg;
};

/* Opens or creates DIR/spec->file (one open(O_CREAT), no unlink, no rename),
 * takes the blocking init lock (OFD, else classic POSIX) on byte 0, rebuilds
 * the file in place when its size or header does not match the spec (magic
 * published last with release order), and maps it shared. Returns the
 * mapping (file_size bytes) or NULL after one warning naming the file and the
 * reason. Creates DIR (mode 0700) when missing. */
void *cc_region_open(const char *dir, const struct cc_region_spec *spec);

/* Observers (cudacap status) read the files through region/peek.h. */

void cc_region_close(const void *base, const struct cc_region_spec *spec);

/* True when the header at base matches the spec (acquire on magic). */
int cc_region_valid(const void *base, const struct cc_region_spec *spec);

/* fcntl byte-range lock: OFD when the kernel has it, classic POSIX otherwise
 * (which the kernel drops when the process closes ANY descriptor of the file:
 * hold long-lived classic locks only on files nobody else opens). type is
 * F_WRLCK, F_RDLCK or F_UNLCK. Returns 0, or -1 with errno (EAGAIN/EACCES:
 * held elsewhere, when wait is 0). */
int cc_lock_range(int fd, off_t start, off_t len, short type, int wait);

/* The state folder: made (0700, one level) when missing. 0, or -1 with errno. */
int cc_region_ensure_dir(const char *dir);

#endif
