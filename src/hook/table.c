/* The hook table and the real-pointer table, generated from hooks.def. */
#include "hook.h"

const struct cc_hook cc_hooks[CC_FN_COUNT] = {
#define CC_CU(name, base, ver, pt) {#name, #base, (void *)&name, ver, pt, CC_LIB_CUDA},
#define CC_NVML(name) {#name, #name, (void *)&name, 0, 0, CC_LIB_NVML},
#include "hooks.def"
#undef CC_CU
#undef CC_NVML
};

void *cc_real[CC_FN_COUNT];
uint64_t cc_calls[CC_FN_COUNT];
