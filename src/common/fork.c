/* The registry of fork-child resets (fork.h). */
#include "common/fork.h"

#include <stddef.h>

#include "common/log.h"

/* Filled in order, never emptied: the first NULL slot ends the list. */
static void (*resets[CC_FORK_MAX])(void);

void cc_fork_child_register(void (*fn)(void))
{
    for (int i = 0; i < CC_FORK_MAX; i++) {
        void (*cur)(void) = NULL;
        /* Acq-rel: a runner that loads the slot (acquire) sees fn's module
         * as it was when registered; a failed CAS reads the slot's owner. */
        if (__atomic_compare_exchange_n(&resets[i], &cur, fn, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE) ||
            cur == fn)
            return;
    }
    cc_error("too many fork handlers registered (internal error)");
}

void cc_fork_child_run(void)
{
    for (int i = 0; i < CC_FORK_MAX; i++) {
        void (*fn)(void) = __atomic_load_n(&resets[i], __ATOMIC_ACQUIRE);
        if (!fn) break;
        fn();
    }
}
