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

#endif
