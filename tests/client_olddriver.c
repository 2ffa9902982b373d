/* A driver without an entry point cudacap intercepts: calling our wrapper
 * must return an error, never call through a NULL pointer, and say so once
 * per entry point however often it is called (src/hook/hook.h). Run
 * preloaded with the "old driver" fixture first on LD_LIBRARY_PATH. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* How many lines of log (fd 2, one write a line) name entry point fn. */
static int said(FILE *log, const char *fn)
{
    char line[512], want[128];
    snprintf(want, sizeof want, "has no %s;", fn);
    int n = 0;
    rewind(log);
    while (fgets(line, sizeof line, log)) n += strstr(line, want) != NULL;
    return n;
}

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    CHECK(h != NULL, "dlopen: %s", dlerror());
    if (!h) CHECK_EXIT();
    __typeof__(&cuInit) init = (__typeof__(&cuInit))dlsym(h, "cuInit");
    CHECK(init && init(0) == CUDA_SUCCESS, "cuInit of the old driver should work");
    /* The library's log goes to a file while the missing entries are called. */
    FILE *log = tmpfile();
    int err = dup(2);
    CHECK(log && err >= 0 && dup2(fileno(log), 2) == 2, "capture fd 2");
    __typeof__(&cuLaunchKernelEx) lex = (__typeof__(&cuLaunchKernelEx))dlsym(h, "cuLaunchKernelEx");
    CHECK(lex != NULL, "cudacap exports cuLaunchKernelEx even if the driver does not");
    __typeof__(&cuMemAlloc_v2) ma = (__typeof__(&cuMemAlloc_v2))dlsym(h, "cuMemAlloc_v2");
    CUdeviceptr d;
    for (int i = 0; i < 3; i++) {
        if (lex) CHECK(lex(NULL, NULL, NULL, NULL) == CUDA_ERROR_NOT_SUPPORTED, "missing -> NOT_SUPPORTED");
        CHECK(ma && ma(&d, 1024) == CUDA_ERROR_NOT_SUPPORTED, "missing cuMemAlloc_v2 -> NOT_SUPPORTED");
    }
    if (err >= 0) dup2(err, 2);
    if (log) {
        /* Once per entry point: each says so once, not once per call, and
         * one entry's line does not silence another's. */
        int nl = said(log, "cuLaunchKernelEx"), nm = said(log, "cuMemAlloc_v2");
        CHECK(nl == 1, "cuLaunchKernelEx missing: said %d times in 3 calls, want 1", nl);
        CHECK(nm == 1, "cuMemAlloc_v2 missing: said %d times in 3 calls, want 1", nm);
        fclose(log);
    }
    /* The 5-argument cuGetProcAddress is missing too; the 4-argument one works. */
    __typeof__(&cuGetProcAddress_v2) gpa2 = (__typeof__(&cuGetProcAddress_v2))dlsym(h, "cuGetProcAddress_v2");
    void *p = NULL;
    CHECK(gpa2 && gpa2("cuInit", &p, 12000, 0, NULL) == CUDA_ERROR_NOT_SUPPORTED, "gpa_v2 missing");
    CHECK_EXIT();
}
