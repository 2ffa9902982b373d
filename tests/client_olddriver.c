/* A driver without an entry point cudacap intercepts: calling our wrapper
 * must return an error, never call through a NULL pointer. Run preloaded
 * with the "old driver" fixture first on LD_LIBRARY_PATH. */
#include <cuda.h>
#include <dlfcn.h>

#include "check.h"

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    CHECK(h != NULL, "dlopen: %s", dlerror());
    if (!h) CHECK_EXIT();
    __typeof__(&cuInit) init = (__typeof__(&cuInit))dlsym(h, "cuInit");
    CHECK(init && init(0) == CUDA_SUCCESS, "cuInit of the old driver should work");
    __typeof__(&cuLaunchKernelEx) lex = (__typeof__(&cuLaunchKernelEx))dlsym(h, "cuLaunchKernelEx");
    CHECK(lex != NULL, "cudacap exports cuLaunchKernelEx even if the driver does not");
    if (lex) CHECK(lex(NULL, NULL, NULL, NULL) == CUDA_ERROR_NOT_SUPPORTED, "missing -> NOT_SUPPORTED");
    __typeof__(&cuMemAlloc_v2) ma = (__typeof__(&cuMemAlloc_v2))dlsym(h, "cuMemAlloc_v2");
    CUdeviceptr d;
    CHECK(ma && ma(&d, 1024) == CUDA_ERROR_NOT_SUPPORTED, "missing cuMemAlloc_v2 -> NOT_SUPPORTED");
    /* The 5-argument cuGetProcAddress is missing too; the 4-argument one works. */
    __typeof__(&cuGetProcAddress_v2) gpa2 = (__typeof__(&cuGetProcAddress_v2))dlsym(h, "cuGetProcAddress_v2");
    void *p = NULL;
    CHECK(gpa2 && gpa2("cuInit", &p, 12000, 0, NULL) == CUDA_ERROR_NOT_SUPPORTED, "gpa_v2 missing");
    CHECK_EXIT();
}
