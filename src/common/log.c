#include "common/log.h"
#include "common/assert.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/options.h"

/* Default 1: errors and warnings (the options table's default for the
 * level). Before cc_log_init runs (a failure very early in loading) errors
 * and warnings still print. */
int cc_log_level = CC_LOG_WARN;

static const char *env_get(const char *name) { return getenv(name); }

/* The level is a row of the options table (common/options.h), read here rather
 * than with the others in cap/config.c: it runs first, so that the
 * configuration's own messages already follow it. */
void cc_log_init(void)
{
    const cc_option_t *o = &cc_options[CC_OPT_LOG_LEVEL];
    cc_opt_value_t v;
    uint64_t l;
    cc_opt_get(o, -1, env_get, &v);
    if (!v.value) return;
    if (cc_opt_parse(o, v.value, &l) != 0) {
        cc_opt_report(o, v.name, v.value, -1, o->bad);
        return;
    }
    cc_log_level = (int)l;
    /* As for every other name: ours wins, a differing HAMi value is said
     * (at the new level). */
    cc_opt_say_shadowed(&v);
}

void cc_log_write(int level, const char *fmt, ...)
{
    static const char *tag[] = {"error", "warning", "info", "verbose", "debug"};
    char raw[1024], buf[1024];
    int n = snprintf(raw, sizeof raw, "cudacap[%d]: %s: ", (int)getpid(),
                     tag[level < 0 ? 0 : level > 4 ? 4 : level]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof raw) n += vsnprintf(raw + n, sizeof raw - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    size_t len = (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1, o = 0, i = 0;
    /* Messages echo values from the environment and from files: every byte
     * but printable ASCII goes out as \xNN (and \ as \\), so a value can
     * neither drive the terminal nor forge a line of its own. */
    for (; i < len; i++) {
        unsigned char c = (unsigned char)raw[i];
        size_t need = (c >= 0x20 && c < 0x7f) ? (c == '\\' ? 2 : 1) : 4;
        if (o + need > sizeof buf - 1) break; /* room for the newline */
        if (need == 1) buf[o++] = (char)c;
        else if (need == 2) buf[o++] = '\\', buf[o++] = '\\';
        else o += (size_t)snprintf(buf + o, 5, "\\x%02x", c);
    }
    if ((i < len || (size_t)n >= sizeof raw) && o >= 3) memcpy(buf + o - 3, "...", 3);
    buf[o++] = '\n';
    /* One write(2): lines from several processes do not interleave. */
    ssize_t w = write(2, buf, o);
    (void)w;
}

void cc_assert_fail(const char *cond, const char *file, int line)
{
    cc_log_write(CC_LOG_ERROR, "assertion failed: %s (%s:%d)", cond, file, line);
    abort();
}
