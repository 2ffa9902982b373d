#include "cap/bucket.h"

#include <stdint.h>
#include <time.h>

int64_t cc_bucket_add(int64_t *b, int64_t delta, int64_t hi)
{
    int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED), next;
    do {
        if (delta >= 0) {
            next = cur > INT64_MAX - delta ? INT64_MAX : cur + delta;
            if (next > hi) next = cur > hi ? cur : hi;
        } else {
            next = cur < CC_BUCKET_MIN - delta ? CC_BUCKET_MIN : cur + delta;
            if (next > cur) next = cur; /* cur already below the floor */
        }
    } while (!__atomic_compare_exchange_n(b, &cur, next, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return next;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t cc_bucket_take(int64_t *b, int64_t cost, uint32_t *throttled, int64_t rate_ns_per_s)
{
    if (cc_bucket_try_take(b, cost)) return 0;
    uint64_t t0 = mono_ns();
    /* Only store when clear: a line every waiter writes every wake would
     * bounce between processes for nothing. */
    if (throttled && !__atomic_load_n(throttled, __ATOMIC_RELAXED))
        __atomic_store_n(throttled, 1, __ATOMIC_RELAXED);
    for (;;) {
        int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);
        /* Sleep about the time the refill takes to repay the debt, between
         * 0.2 ms (latency) and 5 ms (a refill period is 100 ms; finer steps
         * keep equal waiters equally likely to win the next tokens). */
        int64_t ns = 5000000;
        if (rate_ns_per_s > 0 && cur <= 0) {
            double need = (double)(1 - cur) * 1e9 / (double)rate_ns_per_s;
            ns = need > 5e6 ? 5000000 : need < 2e5 ? 200000 : (int64_t)need;
        }
        /* Jitter (x0.5..1.5): equal waiters must not keep the same phase
         * against the refill grid, or the same one always wins. */
        static __thread uint32_t rnd;
        if (!rnd) rnd = (uint32_t)(uintptr_t)&rnd ^ (uint32_t)t0 ^ 0x9e3779b9u;
        rnd ^= rnd << 13;
        rnd ^= rnd >> 17;
        rnd ^= rnd << 5;
        ns = ns / 2 + (int64_t)((uint64_t)ns * (rnd % 1024) / 1024);
        /* Aging: the longer a waiter has waited, the more often it looks, so
         * that among many waiters at a low cap none starves behind luckier
         * ones (8 processes at 10 %: Jain's index 0.72 without it in one
         * run). 20 ms of waiting halves the sleep. */
        uint64_t waited = mono_ns() - t0;
        ns = (int64_t)((double)ns * 20e6 / (20e6 + (double)waited));
        if (ns < 100000) ns = 100000;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
        if (cc_bucket_try_take(b, cost)) break;
        /* The refill winner clears the flag each period: a waiter that is
         * still waiting says so again, or the controller would see an idle
         * container and bypass. */
        if (throttled && !__atomic_load_n(throttled, __ATOMIC_RELAXED))
            __atomic_store_n(throttled, 1, __ATOMIC_RELAXED);
    }
    return mono_ns() - t0;
}
