/* The size parser (cudacap/config.h: cc_parse_size), alone in its file
 * with no dependency but libc: the simulator links it too (sim/config.c),
 * so that both accept and reject the same strings. */
#include "cudacap/config.h"

#include <ctype.h>

int cc_parse_size(const char *s, uint64_t *out)
{
    if (!s) return -1;
    while (isspace((unsigned char)*s)) s++;
    if (!isdigit((unsigned char)*s)) return -1; /* no sign, no hex: sizes are decimal */
    /* Syntax first, so that "not a size" wins over "too large". */
    const char *w0 = s;
    while (isdigit((unsigned char)*s)) s++;
    const char *w1 = s, *f0 = s, *f1 = s;
    if (*s == '.') {
        f0 = ++s;
        if (!isdigit((unsigned char)*s)) return -1;
        while (isdigit((unsigned char)*s)) s++;
        f1 = s;
    }
    unsigned shift = 0;
    switch (tolower((unsigned char)*s)) {
    case 'k': shift = 10; s++; break;
    case 'm': shift = 20; s++; break;
    case 'g': shift = 30; s++; break;
    case 't': shift = 40; s++; break;
    default: break;
    }
    /* Accept the spellings people write: 4G, 4Gi, 4GB, 4GiB, 4b (bytes). */
    if (shift && tolower((unsigned char)*s) == 'i') s++;
    if (tolower((unsigned char)*s) == 'b') s++;
    while (isspace((unsigned char)*s)) s++;
    if (*s) return -1;
    if (f1 > f0 && !shift) return -1; /* fractional bytes make no sense */

    uint64_t v = 0;
    for (const char *p = w0; p < w1; p++)
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
            return CC_SIZE_TOO_LARGE;
    if (v > (UINT64_MAX >> shift)) return CC_SIZE_TOO_LARGE;
    v <<= shift;
    /* The fraction 0.d1..dn of a unit U, exactly rounded down, for any n:
     * from the last digit back, acc = floor((dk * U + acc) / 10). Taking the
     * floor at each step loses nothing (floor((m + f) / 10) = floor(m / 10)
     * for an integer m and 0 <= f < 1), and acc < U <= 2^40 keeps every
     * intermediate below 10 * 2^40. */
    uint64_t acc = 0;
    for (const char *p = f1; p > f0; p--) acc = (((uint64_t)(p[-1] - '0') << shift) + acc) / 10;
    if (__builtin_add_overflow(v, acc, &v)) return CC_SIZE_TOO_LARGE;
    if (v == 0)
        for (const char *p = w0; p < f1; p++)
            if (*p > '0') return CC_SIZE_BELOW_BYTE; /* 0.0000001k: not "no cap" */
    *out = v;
    return 0;
}
