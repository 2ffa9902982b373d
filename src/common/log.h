/* Logging: stderr, one line per message, prefixed "cudacap[pid]:".
 * Level from CUDACAP_LOG_LEVEL (or LIBCUDA_LOG_LEVEL, HAMi's name):
 * 0 errors, 1 +warnings... see docs/configuration.md. The level is read once
 * (cc_log_init) so no getenv ever runs on a hot path. */
#ifndef CC_LOG_H
#define CC_LOG_H

enum { CC_LOG_ERROR = 0, CC_LOG_WARN = 1, CC_LOG_INFO = 2, CC_LOG_VERBOSE = 3, CC_LOG_DEBUG = 4 };

extern int cc_log_level; /* plain int: written once before any reader */

void cc_log_init(void);
void cc_log_write(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define cc_log(level, ...)                                                     \
    do {                                                                       \
        if ((level) <= cc_log_level) cc_log_write((level), __VA_ARGS__);       \
    } while (0)
#define cc_error(...) cc_log(CC_LOG_ERROR, __VA_ARGS__)
#define cc_warn(...) cc_log(CC_LOG_WARN, __VA_ARGS__)
#define cc_info(...) cc_log(CC_LOG_INFO, __VA_ARGS__)
#define cc_debug(...) cc_log(CC_LOG_DEBUG, __VA_ARGS__)

/* Log at most once per call site (per process). */
#define cc_log_once(level, ...)                                                \
    do {                                                                       \
        static int once_;                                                      \
        if (!__atomic_exchange_n(&once_, 1, __ATOMIC_RELAXED))                 \
            cc_log((level), __VA_ARGS__);                                      \
    } while (0)

#endif
