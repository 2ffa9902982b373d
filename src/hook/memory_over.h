/* Allocations beyond the device cap served from host memory (memory_over.c;
 * docs/memory.md, "Oversubscription"). Called by the linear wrappers
 * (memory.c) when the device cap refused and m->over is set. */
#ifndef CC_HOOK_MEMORY_OVER_H
#define CC_HOOK_MEMORY_OVER_H

#include "cap/mem/mem.h"
#include "hook.h"

/* cuMemAlloc / cuMemAllocManaged beyond the cap: managed memory with the host
 * as its preferred location (flags: the caller's managed flags, 0 for
 * cuMemAlloc). CUDA_ERROR_OUT_OF_MEMORY when it cannot be admitted. */
CUresult cc_mem_over_linear(const struct cc_mem_device *m, int o, CUdeviceptr *dptr, uint64_t bytes,
                            unsigned flags);
/* cuMemAllocPitch beyond the cap: the same, rows padded to 512 bytes. */
CUresult cc_mem_over_pitch(const struct cc_mem_device *m, int o, CUdeviceptr *dptr, size_t *pitch,
                           size_t width, size_t height, unsigned elem);

#endif
