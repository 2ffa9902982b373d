/* The frozen header every cudacap state file starts with. This is ABI
 * between every library version that may meet the file: the offsets below
 * never move, whatever follows them changes with layout_version. */
#ifndef CUDACAP_REGION_H
#define CUDACAP_REGION_H

#include <stddef.h>
#include <stdint.h>

typedef struct cc_region_hdr {
    uint32_t magic;          /* per region kind; written LAST (release) on build */
    uint32_t layout_version; /* bumped on any change after the header */
    uint32_t region_size;    /* bytes the layout uses (<= the file size) */
    uint32_t device_count;   /* device slots in this file */
} cc_region_hdr_t;

_Static_assert(sizeof(cc_region_hdr_t) == 16, "frozen header is 16 bytes");
_Static_assert(offsetof(cc_region_hdr_t, magic) == 0, "frozen header: magic");
_Static_assert(offsetof(cc_region_hdr_t, layout_version) == 4, "frozen header: layout_version");
_Static_assert(offsetof(cc_region_hdr_t, region_size) == 8, "frozen header: region_size");
_Static_assert(offsetof(cc_region_hdr_t, device_count) == 12, "frozen header: device_count");

/* Process keys (src/region/proc_key.h): who a process is in a region that
 * has liveness bytes (memory.region, compute.region). Each attached process
 * holds a write lock on the byte at the region's live base + its key for as
 * long as it is attached; slot owners name keys. A key below CC_KEY_PIDS is
 * the taker's pid (the common case); when that byte is held already (a
 * process of another pid namespace with the same pid shares the folder), a
 * key in [CC_KEY_PIDS, CC_KEY_END) is probed instead. Such a key is no pid
 * anywhere: only its lock byte tells whether its process lives. Keys stay
 * below 2^23, under the memory region's reaping bit. */
#define CC_KEY_PIDS (1u << 22) /* pid_max's ceiling on Linux */
#define CC_KEY_END (1u << 23)

#endif
