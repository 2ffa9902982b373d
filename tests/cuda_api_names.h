/* What the check of include/cudacap/cuda_api.h against NVIDIA's cuda.h
 * (tests/cuda_api_check.c) reads from each side: what every listed name
 * expands to in the header's current mode, and every listed constant's
 * value. Built twice from the same lists, once beside NVIDIA's header
 * (cuda_api_check.c) and once beside ours (cuda_api_own.c). */
#ifndef CC_TESTS_CUDA_API_NAMES_H
#define CC_TESTS_CUDA_API_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct cc_cuda_name {
    const char *name;      /* as written in the code */
    const char *expansion; /* what the preprocessor makes of it */
};

struct cc_cuda_const {
    const char *name;
    unsigned long long value;
};

#define CC_CUDA_STR(x) #x
#define CC_CUDA_XSTR(x) CC_CUDA_STR(x)
#define CC_CUDA_NAME_F(ret, name, params) {#name, CC_CUDA_XSTR(name)},
#define CC_CUDA_NAME_V(name) {#name, CC_CUDA_XSTR(name)},
#define CC_CUDA_CONST_D(name) {#name, (unsigned long long)(uintptr_t)(name)},

#define CC_CUDA_NAME_TABLE() CC_CUDA_FUNCTIONS(CC_CUDA_NAME_F) CC_CUDA_VERSIONED(CC_CUDA_NAME_V)
#define CC_CUDA_CONST_TABLE() CC_CUDA_CONSTANTS(CC_CUDA_CONST_D)

extern const struct cc_cuda_name cc_cuda_names_own[];
extern const size_t cc_cuda_names_own_len;
extern const struct cc_cuda_const cc_cuda_consts_own[];
extern const size_t cc_cuda_consts_own_len;
#endif
