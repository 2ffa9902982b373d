/* Values of the options' kinds (common/options.h): parsing one as its
 * kind, and saying what is wrong with one that does not parse. Here, below
 * the configuration (cap/config.c), because the log level (common/log.c)
 * is parsed with them before anything else. */
#include "common/options.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "cudacap/config.h"

/* s, without surrounding blanks, equals word in any case. */
static int word_is(const char *s, const char *word)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) n--;
    return n == strlen(word) && strncasecmp(s, word, n) == 0;
}

int cc_parse_bool(const char *s, int *out)
{
    static const char *const on[] = {"1", "true", "yes", "on"}, *const off[] = {"0", "false", "no", "off"};
    if (!s) return -1;
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        if (word_is(s, on[i])) return *out = 1, 0;
        if (word_is(s, off[i])) return *out = 0, 0;
    }
    return -1;
}

/* A whole number lo..hi with blanks around it, optionally followed by
 * unit (in any case). 0 and *out, or -1. */
static int parse_whole(const char *s, const char *unit, unsigned long lo, unsigned long hi,
                       uint32_t *out)
{
    if (!s) return -1;
    while (isspace((unsigned char)*s)) s++;
    if (!isdigit((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno) return -1;
    if (strncasecmp(end, unit, strlen(unit)) == 0) end += strlen(unit);
    while (isspace((unsigned char)*end)) end++;
    if (*end || v < lo || v > hi) return -1;
    *out = (uint32_t)v;
    return 0;
}

int cc_parse_percent(const char *s, uint32_t *out) { return parse_whole(s, "%", 0, 100, out); }

/* ---- One option's value, as its kind (common/options.h) ---------------------- */

#define SIZE_WHAT "a size (examples: 4g, 4Gi, 4096m, 1048576k, 4294967296)"
#define BOOL_WHAT "a switch (1/0, true/false, yes/no, on/off)"

/* The seed's CUDA_MEM_RATIO: "2", "1.5", "1.125" (at most 3 decimals, at
 * most 1000), x 1000, so that the split is computed in integers. */
static int parse_ratio(const char *s, uint64_t *out)
{
    uint64_t whole = 0, frac = 0, scale = 1000;
    const char *p = s;
    if (!isdigit((unsigned char)*p)) return -1;
    while (isdigit((unsigned char)*p) && whole <= 1000) whole = whole * 10 + (uint64_t)(*p++ - '0');
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p)) return -1;
        while (isdigit((unsigned char)*p) && scale > 1) scale /= 10, frac += (uint64_t)(*p++ - '0') * scale;
    }
    if (*p || whole > 1000 || (whole == 0 && frac == 0)) return -1;
    uint64_t v = whole * 1000 + frac;
    if (v < 1000 || v > 1000000) return -1;
    return *out = v, 0;
}

int cc_opt_parse(const cc_option_t *o, const char *s, uint64_t *out)
{
    uint32_t p;
    int b;
    switch (o->kind) {
    case CC_KIND_SIZE: return cc_parse_size(s, out);
    case CC_KIND_PERCENT:
        if (cc_parse_percent(s, &p) != 0) return -1;
        return *out = p, 0;
    case CC_KIND_SWITCH:
        if (cc_parse_bool(s, &b) != 0) return -1;
        return *out = (uint64_t)b, 0;
    case CC_KIND_ENUM:
        for (const cc_opt_choice_t *c = o->choices; c->word; c++)
            if (word_is(s, c->word)) return *out = (uint64_t)c->value, 0;
        return -1;
    case CC_KIND_LEVEL: {
        /* strtol's syntax (blanks before, a sign), as the level always had. */
        char *end;
        long l = strtol(s, &end, 10);
        if (*end || l < CC_LOG_ERROR || l > CC_LOG_DEBUG) return -1;
        return *out = (uint64_t)l, 0;
    }
    case CC_KIND_MS:
        if (parse_whole(s, "ms", CC_SM_BURST_MIN_MS, CC_SM_BURST_MAX_MS, &p) != 0) return -1;
        return *out = p, 0;
    case CC_KIND_RATIO: return parse_ratio(s, out);
    case CC_KIND_PATH:
    case CC_KIND_TEXT:
    case CC_KIND_IGNORED: break; /* any text */
    }
    return 0;
}

/* What o's values are, for "is not WHAT" (buf: room for an enum's words). */
static const char *kind_what(const cc_option_t *o, char *buf, size_t size)
{
    switch (o->kind) {
    case CC_KIND_SIZE: return SIZE_WHAT;
    case CC_KIND_PERCENT: return "a percentage 0..100";
    case CC_KIND_SWITCH: return BOOL_WHAT;
    case CC_KIND_LEVEL: return "a log level 0..4";
    case CC_KIND_MS: return "a number of milliseconds 1..1000";
    case CC_KIND_RATIO: return "a ratio of at least 1 (examples: 2, 1.5)";
    case CC_KIND_ENUM: {
        size_t n = (size_t)snprintf(buf, size, "one of");
        for (const cc_opt_choice_t *c = o->choices; c->word && n < size; c++)
            n += (size_t)snprintf(buf + n, size - n, "%s %s", c == o->choices ? "" : ",", c->word);
        return buf;
    }
    case CC_KIND_PATH:
    case CC_KIND_TEXT:
    case CC_KIND_IGNORED: break;
    }
    return "a value";
}

void cc_opt_report(const cc_option_t *o, const char *name, const char *v, int rc, const char *tail)
{
    char what[128];
    if (rc == CC_SIZE_TOO_LARGE)
        cc_error("%s=\"%s\" is larger than the largest size, %llu bytes (16 EiB - 1); %s", name, v,
                 (unsigned long long)UINT64_MAX, tail);
    else if (rc == CC_SIZE_BELOW_BYTE)
        cc_error("%s=\"%s\" is not 0 but less than one byte; %s", name, v, tail);
    else
        cc_error("%s=\"%s\" is not %s; %s", name, v, kind_what(o, what, sizeof what), tail);
}
