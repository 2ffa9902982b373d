/* The container's limits file (docs/configuration.md, "The limits file"):
 * STATE_DIR/limits.d/limits, written by the node (cudacap prepare, run,
 * cdi, set) as root, the one source of a container's caps when present. It
 * has a folder of its own so that a container runtime can mount that folder
 * read-only over the writable state folder (the CDI spec does): the
 * container cannot replace the file, and a new file renamed in by `cudacap
 * set` still shows through the mount (a mount of the file itself would pin
 * the old one). Text, one "key value" per line:
 *
 *   cudacap-limits 1                 the format and its version (first line)
 *   generation N                     bumped by every change (cudacap set)
 *   mem BYTES / mem.<i> BYTES        memory cap, every device / device i
 *   sm PCT / sm.<i> PCT              SM cap 1..100 (100: none)
 *   sm_soft PCT / sm_soft.<i> PCT    elastic limit, at least the SM cap
 *   mem_over BYTES / mem_over.<i> BYTES  oversubscription beyond the memory cap
 *                                    (0: none; added without a version bump:
 *                                    an older library refuses such a file)
 *   checksum fnv1a64:<16 hex>        FNV-1a 64 of every byte before this line
 *
 * Nothing read from it is trusted: the size is bounded, every line checked,
 * and a file that is not a plain file (a link, a FIFO), too large, of
 * another version, with a wrong checksum or an impossible cap is refused,
 * naming what is wrong. Used by the library (cap/config.c) and the CLI. */
#ifndef CC_CAP_LIMITS_H
#define CC_CAP_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "cudacap/config.h"

#define CC_LIMITS_DIR "limits.d" /* in the state folder */
#define CC_LIMITS_NAME "limits"  /* in CC_LIMITS_DIR */
#define CC_LIMITS_FILE CC_LIMITS_DIR "/" CC_LIMITS_NAME
#define CC_LIMITS_VERSION 1
#define CC_LIMITS_MAX 4096 /* bytes: a larger file is refused */

typedef struct cc_limits {
    uint64_t generation;
    /* As written: the all-devices value (0: absent) and each device's own
     * (0: absent). */
    uint64_t mem_all, mem_dev[CC_MAX_DEVICES];
    uint32_t sm_all, sm_dev[CC_MAX_DEVICES];
    uint32_t soft_all, soft_dev[CC_MAX_DEVICES];
    /* Oversubscription beyond the memory cap; the set flags tell a written
     * 0 (none, overriding the all-devices value) from an absent field. */
    uint64_t over_all, over_dev[CC_MAX_DEVICES];
    uint8_t over_set_all, over_set_dev[CC_MAX_DEVICES];
} cc_limits_t;

/* Each device's caps as cc_config_t keeps them: bytes (0 none), SM percent
 * (0 none: 100 is none), elastic percent (0: not elastic). */
void cc_limits_effective(const cc_limits_t *l, uint64_t mem[CC_MAX_DEVICES],
                         uint32_t sm[CC_MAX_DEVICES], uint32_t soft[CC_MAX_DEVICES]);

/* Each device's oversubscription in bytes (0: none). */
void cc_limits_over_effective(const cc_limits_t *l, uint64_t over[CC_MAX_DEVICES]);

/* Parses len bytes of text. 0 and *out, or -1 with why (naming the line's
 * field) filled. */
int cc_limits_parse(const char *text, size_t len, cc_limits_t *out, char *why, size_t wlen);

/* Writes l as the file's text into buf (checksum included). Its length, or
 * -1 if len is too small. */
int cc_limits_format(const cc_limits_t *l, char *buf, size_t len);

/* Reads dir/limits.d/limits through the OS layer (no link followed, the
 * folder's or the file's; a FIFO never blocks): 1 and *out when good, 0
 * when there is none, -1 with why when it is there but cannot be trusted. */
int cc_limits_read(const char *dir, cc_limits_t *out, char *why, size_t wlen);

#endif
