/* Runtime checks of the invariants the comments state ("called with mu
 * held", "in range"). On in Debug and sanitizer builds (CC_ASSERTS, set by
 * CMakeLists.txt), where the whole suite runs with them; compiled out of
 * the release library, which must never abort the application it is
 * loaded into (the condition is not even evaluated there). A failed check
 * prints "cudacap[pid]: assertion failed: COND (FILE:LINE)" and aborts.
 * Cost when on: the condition; cc_assert_held a trylock (and an unlock
 * when it was, wrongly, free). */
#ifndef CC_COMMON_ASSERT_H
#define CC_COMMON_ASSERT_H

#include <pthread.h>

void cc_assert_fail(const char *cond, const char *file, int line) __attribute__((noreturn));

#ifdef CC_ASSERTS
#define cc_assert(cond) ((cond) ? (void)0 : cc_assert_fail(#cond, __FILE__, __LINE__))
/* mu, a plain (not recursive) mutex, is held (by someone: it does not say
 * by whom; the callers of a *_locked function are the ones that took it).
 * Not for a recursive mutex: its owner's trylock succeeds, and the check
 * would fail where the invariant holds (memory_pool.c's and
 * memory_graph.c's are recursive, and go unchecked). */
#define cc_assert_held(mu) (cc_mutex_free(mu) ? cc_assert_fail(#mu " held", __FILE__, __LINE__) : (void)0)
static inline int cc_mutex_free(pthread_mutex_t *mu)
{
    if (pthread_mutex_trylock(mu) != 0) return 0;
    pthread_mutex_unlock(mu);
    return 1;
}
#else
#define cc_assert(cond) ((void)0)
#define cc_assert_held(mu) ((void)0)
#endif

#endif
