/* The names and constants of include/cudacap/cuda_api.h as our header makes
 * them, for tests/cuda_api_check.c to compare with NVIDIA's. */
#include "cudacap/cuda_api.h"

#include "cuda_api_names.h"

/* Control (CC_CUDA_API_CONTROL=names): one versioned name mapped wrongly here. */
#if defined(CC_CUDA_API_CONTROL_NAMES)
#undef cuMemAlloc
#define cuMemAlloc cuMemAlloc_v3
#endif

const struct cc_cuda_name cc_cuda_names_own[] = {CC_CUDA_NAME_TABLE()};
const size_t cc_cuda_names_own_len = sizeof cc_cuda_names_own / sizeof cc_cuda_names_own[0];
const struct cc_cuda_const cc_cuda_consts_own[] = {CC_CUDA_CONST_TABLE()};
const size_t cc_cuda_consts_own_len = sizeof cc_cuda_consts_own / sizeof cc_cuda_consts_own[0];
