#include "region/specs.h"

#include "cudacap/abi_compute_region.h"
#include "cudacap/abi_mem_region.h"

const struct cc_region_spec cc_mem_region_spec = {
    .file = CC_MEM_REGION_FILE,
    .magic = CC_MEM_MAGIC,
    .layout_version = CC_MEM_LAYOUT,
    .region_size = sizeof(cc_mem_region_t),
    .file_size = CC_MEM_FILE_SIZE,
    .device_count = CC_MEM_DEVS,
};

const struct cc_region_spec cc_compute_region_spec = {
    .file = CC_COMPUTE_FILE,
    .magic = CC_COMPUTE_MAGIC,
    .layout_version = CC_COMPUTE_LAYOUT,
    .region_size = sizeof(cc_compute_region_t),
    .file_size = CC_COMPUTE_FILE_SIZE,
    .device_count = CC_COMPUTE_DEVICES,
};
