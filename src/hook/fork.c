/* Fork children: shared mappings stay, private state registered here resets. */
#include "common/log.h"
#include "hook/process.h"

#define CC_FORK_MAX 16
static void (*resets[CC_FORK_MAX])(void);
static int nresets;

void cc_fork_child_register(void (*fn)(void))
{
    int i = __atomic_fetch_add(&nresets, 1, __ATOMIC_ACQ_REL);
    if (i >= CC_FORK_MAX) {
        cc_error("too many fork handlers registered (internal error)");
        return;
    }
    __atomic_store_n(&resets[i], fn, __ATOMIC_RELEASE);
}

void cc_fork_child_run(void)
{
    int n = __atomic_load_n(&nresets, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n && i < CC_FORK_MAX; i++) {
        void (*fn)(void) = __atomic_load_n(&resets[i], __ATOMIC_ACQUIRE);
        if (fn) fn();
    }
}
