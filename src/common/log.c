#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Default 1: errors and warnings. Before cc_log_init runs (a failure very
 * early in loading) errors and warnings still print. */
int cc_log_level = CC_LOG_WARN;

void cc_log_init(void)
{
    const char *names[] = {"CUDACAP_LOG_LEVEL", "LIBCUDA_LOG_LEVEL"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (!v || !*v) continue;
        char *end;
        long l = strtol(v, &end, 10);
        if (*end || l < 0 || l > 4) {
            cc_log_write(CC_LOG_ERROR, "%s=\"%s\" is not a log level 0..4; using %d",
                         names[i], v, cc_log_level);
            return;
        }
        cc_log_level = (int)l;
        return;
    }
}

void cc_log_write(int level, const char *fmt, ...)
{
    static const char *tag[] = {"error", "warning", "info", "verbose", "debug"};
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "cudacap[%d]: %s: ", (int)getpid(),
                     tag[level < 0 ? 0 : level > 4 ? 4 : level]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof buf) n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof buf - 1) n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    /* One write(2): lines from several processes do not interleave. */
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
}
