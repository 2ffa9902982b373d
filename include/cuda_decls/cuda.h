/* cudacap's stand-in for NVIDIA's cuda.h: the build puts this folder on the
 * include path (CUDACAP_CUDA_HEADERS=own, the default), so `#include <cuda.h>`
 * reads cudacap's declarations of the driver API subset it uses. With
 * CUDACAP_CUDA_HEADERS=toolkit the toolkit's folder is used instead. */
#include "../cudacap/cuda_api.h"
