/* dlsym(RTLD_NEXT, ...) must keep meaning "the next definition after the
 * CALLER" while cudacap overrides dlsym. Libraries that wrap others (malloc
 * wrappers, profilers, other interposers) depend on it; getting it wrong
 * hands them their own symbol back and they recurse forever.
 *
 * Negative control (checked by hand when this test was written): building
 * libcudacap with the C wrapper of hook/dlsym.c instead of the assembly stub
 * (and -fno-optimize-sibling-calls, so the C call is not turned into a tail
 * jump by luck) makes both CHECKs below fail: A and B each get A's cc_probe,
 * the next definition after cudacap. The fixtures themselves must not
 * tail-call dlsym either (see fixtures/next_a.c). */
#include <dlfcn.h>

#include "check.h"

void *probe_next_from_a(void);
void *probe_next_from_b(void);

int main(void)
{
    if (!dlsym(RTLD_DEFAULT, "cudacap_call_count")) {
        fprintf(stderr, "libcudacap.so is not preloaded\n");
        return 1;
    }
    int (*after_a)(void) = (int (*)(void))probe_next_from_a();
    CHECK(after_a && after_a() == 2, "RTLD_NEXT from A should find B's cc_probe, got %s",
          after_a ? (after_a() == 1 ? "A's own" : "another") : "NULL");
    CHECK(probe_next_from_b() == NULL, "RTLD_NEXT from B should find nothing");
    /* Intercepted names resolve to cudacap whatever the handle. */
    CHECK(dlsym(RTLD_NEXT, "cuLaunchKernel") == dlsym(RTLD_DEFAULT, "cuLaunchKernel"),
          "RTLD_NEXT cuLaunchKernel is not cudacap's");
    CHECK_EXIT();
}
