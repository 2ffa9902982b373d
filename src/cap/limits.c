/* The limits file (limits.h): parse, format, read. */
#include "cap/limits.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "os/os.h"

static uint64_t fnv1a64(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

void cc_limits_effective(const cc_limits_t *l, uint64_t mem[CC_MAX_DEVICES],
                         uint32_t sm[CC_MAX_DEVICES], uint32_t soft[CC_MAX_DEVICES])
{
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        uint32_t h = l->sm_dev[i] ? l->sm_dev[i] : l->sm_all;
        uint32_t s = l->soft_dev[i] ? l->soft_dev[i] : l->soft_all;
        mem[i] = l->mem_dev[i] ? l->mem_dev[i] : l->mem_all;
        sm[i] = h >= 100 ? 0 : h;
        soft[i] = sm[i] && s > h ? s : 0;
    }
}

void cc_limits_over_effective(const cc_limits_t *l, uint64_t over[CC_MAX_DEVICES])
{
    for (int i = 0; i < CC_MAX_DEVICES; i++) over[i] = l->over_set_dev[i] ? l->over_dev[i] : l->over_all;
}

/* A decimal number of at most 20 digits, no sign, no blanks, that fits. */
static int number(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0 || n > 20) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

#define WHY(...) (snprintf(why, wlen, __VA_ARGS__), -1)

/* key is "name" or "name.<i>": *dev -1 or i (0..15, no leading zero). */
static int key_dev(const char *k, size_t kn, const char *name, int *dev)
{
    size_t n = strlen(name);
    if (kn < n || memcmp(k, name, n) != 0) return 0;
    if (kn == n) return *dev = -1, 1;
    if (k[n] != '.' || kn - n - 1 < 1 || kn - n - 1 > 2 || (kn - n - 1 == 2 && k[n + 1] == '0'))
        return 0;
    uint64_t v;
    if (number(k + n + 1, kn - n - 1, &v) != 0 || v >= CC_MAX_DEVICES) return 0;
    return *dev = (int)v, 1;
}

int cc_limits_parse(const char *text, size_t len, cc_limits_t *out, char *why, size_t wlen)
{
    memset(out, 0, sizeof *out);
    static const char head[] = "cudacap-limits ";
    if (len > CC_LIMITS_MAX) return WHY("larger than %d bytes", CC_LIMITS_MAX);
    if (len < sizeof head - 1 || memcmp(text, head, sizeof head - 1) != 0)
        return WHY("does not begin with \"cudacap-limits %d\"", CC_LIMITS_VERSION);
    int have_gen = 0, have_sum = 0, lineno = 0;
    uint8_t seen[4][CC_MAX_DEVICES + 1] = {{0}};
    size_t at = 0;
    while (at < len) {
        const char *line = text + at, *nl = memchr(line, '\n', len - at);
        lineno++;
        if (!nl) return WHY("line %d: not ended by a newline (truncated?)", lineno);
        size_t n = (size_t)(nl - line);
        if (have_sum) return WHY("line %d: text after the checksum", lineno);
        const char *sp = memchr(line, ' ', n);
        if (!sp) return WHY("line %d: not \"key value\"", lineno);
        size_t kn = (size_t)(sp - line), vn = n - kn - 1;
        const char *v = sp + 1;
        uint64_t x;
        int dev;
        if (lineno == 1) {
            if (number(v, vn, &x) != 0 || x != CC_LIMITS_VERSION)
                return WHY("version \"%.*s\": this library reads version %d", (int)(vn > 20 ? 20 : vn), v,
                           CC_LIMITS_VERSION);
        } else if (kn == 8 && !memcmp(line, "checksum", 8)) {
            char want[40];
            snprintf(want, sizeof want, "fnv1a64:%016" PRIx64, fnv1a64(text, at));
            if (vn != strlen(want) || memcmp(v, want, vn) != 0)
                return WHY("field checksum: does not match the file's text (a partial or edited file)");
            have_sum = 1;
        } else if (kn == 10 && !memcmp(line, "generation", 10)) {
            if (have_gen || number(v, vn, &x) != 0) return WHY("field generation: not one decimal number");
            out->generation = x;
            have_gen = 1;
        } else {
            int which = key_dev(line, kn, "sm_soft", &dev) ? 2 : key_dev(line, kn, "sm", &dev) ? 1
                        : key_dev(line, kn, "mem", &dev)    ? 0
                        : key_dev(line, kn, "mem_over", &dev) ? 3 : -1;
            if (which < 0) return WHY("line %d: unknown field \"%.*s\"", lineno, (int)(kn > 40 ? 40 : kn), line);
            if (seen[which][dev + 1]++) return WHY("field %.*s: given twice", (int)kn, line);
            if (number(v, vn, &x) != 0) return WHY("field %.*s: \"%.*s\" is not a decimal number", (int)kn, line,
                                                   (int)(vn > 24 ? 24 : vn), v);
            if (which == 3) { /* oversubscription: 0 says none */
                if (dev < 0) out->over_all = x, out->over_set_all = 1;
                else out->over_dev[dev] = x, out->over_set_dev[dev] = 1;
            } else if (which == 0) {
                if (!x) return WHY("field %.*s: 0 bytes (leave the field out for no cap)", (int)kn, line);
                if (dev < 0) out->mem_all = x;
                else out->mem_dev[dev] = x;
            } else {
                if (x < 1 || x > 100) return WHY("field %.*s: %" PRIu64 " is not a percentage 1..100", (int)kn, line, x);
                uint32_t *slot = which == 1 ? (dev < 0 ? &out->sm_all : &out->sm_dev[dev])
                                            : (dev < 0 ? &out->soft_all : &out->soft_dev[dev]);
                *slot = (uint32_t)x;
            }
        }
        at += n + 1;
    }
    if (!have_sum) return WHY("no checksum line (truncated?)");
    if (!have_gen) return WHY("no generation field");
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        uint32_t h = out->sm_dev[i] ? out->sm_dev[i] : out->sm_all;
        uint32_t s = out->soft_dev[i] ? out->soft_dev[i] : out->soft_all;
        if (s && (!h || h >= 100))
            return WHY("field sm_soft%s: an elastic limit on device %d without an SM cap (sm 1..99)",
                       out->soft_dev[i] ? "" : "", i);
        if (s && s < h)
            return WHY("field sm_soft: %u is below the SM cap %u on device %d", s, h, i);
    }
    return 0;
}

int cc_limits_format(const cc_limits_t *l, char *buf, size_t len)
{
    size_t at = 0;
#define PUT(...)                                                              \
    do {                                                                      \
        int n_ = snprintf(buf + at, at < len ? len - at : 0, __VA_ARGS__);    \
        if (n_ < 0 || (size_t)n_ >= (at < len ? len - at : 0)) return -1;     \
        at += (size_t)n_;                                                     \
    } while (0)
    PUT("cudacap-limits %d\ngeneration %" PRIu64 "\n", CC_LIMITS_VERSION, l->generation);
    if (l->mem_all) PUT("mem %" PRIu64 "\n", l->mem_all);
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        if (l->mem_dev[i]) PUT("mem.%d %" PRIu64 "\n", i, l->mem_dev[i]);
    if (l->sm_all) PUT("sm %u\n", l->sm_all);
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        if (l->sm_dev[i]) PUT("sm.%d %u\n", i, l->sm_dev[i]);
    if (l->soft_all) PUT("sm_soft %u\n", l->soft_all);
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        if (l->soft_dev[i]) PUT("sm_soft.%d %u\n", i, l->soft_dev[i]);
    if (l->over_set_all) PUT("mem_over %" PRIu64 "\n", l->over_all);
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        if (l->over_set_dev[i]) PUT("mem_over.%d %" PRIu64 "\n", i, l->over_dev[i]);
    PUT("checksum fnv1a64:%016" PRIx64 "\n", fnv1a64(buf, at));
#undef PUT
    return (int)at;
}

int cc_limits_read(const char *dir, cc_limits_t *out, char *why, size_t wlen)
{
    char path[CC_PATH_MAX + 32];
    struct stat st, ls;
    int at = 0;
    if (!dir || !dir[0]) return 0;
    snprintf(path, sizeof path, "%s/%s", dir, CC_LIMITS_DIR);
    int dfd = cc_os_open_dir(path);
    if (dfd < 0) {
        int e = errno;
        /* No folder (or no state folder): no file. Anything else by that
         * name (a link, a file, a FIFO) is a limits folder we cannot trust;
         * a failed open (EIO, EMFILE) of a name that is not there, none. */
        if (e == ENOENT || cc_os_lstat(path, &ls) != 0) return 0;
        if (S_ISLNK(ls.st_mode)) return WHY("%s is a symbolic link (never followed)", CC_LIMITS_DIR);
        if (!S_ISDIR(ls.st_mode)) return WHY("%s is not a folder", CC_LIMITS_DIR);
        return WHY("%s cannot be opened: %s", CC_LIMITS_DIR, strerror(e));
    }
    int fd = cc_os_open_regular_at(dfd, CC_LIMITS_NAME, O_RDONLY, 0, &st, &at);
    if (fd < 0) {
        int e = errno;
        /* An open that failed otherwise (EIO, EMFILE...) on a name that is
         * not there is no file either; on one that is, it is a file we
         * cannot trust. */
        int gone = at == CC_OS_AT_OPEN && (e == ENOENT || e == ENOTDIR ||
                   (e != ELOOP && cc_os_lstat(strcat(path, "/" CC_LIMITS_NAME), &ls) != 0 &&
                    errno == ENOENT));
        close(dfd);
        if (gone) return 0;
        errno = e;
        if (at == CC_OS_AT_TYPE) return WHY("not a plain file (a FIFO, a device or a folder)");
        if (at == CC_OS_AT_OPEN && errno == ELOOP) return WHY("a symbolic link (never followed)");
        return WHY("cannot be opened: %s", strerror(errno));
    }
    close(dfd);
    char buf[CC_LIMITS_MAX + 1];
    ssize_t n = -1;
    if (st.st_size > CC_LIMITS_MAX) errno = EFBIG;
    else n = pread(fd, buf, sizeof buf, 0);
    close(fd);
    if (n < 0) return WHY("cannot be read: %s", errno == EFBIG ? "larger than 4096 bytes" : strerror(errno));
    if (st.st_mode & 022) return WHY("writable by others than its owner (mode %03o)", (unsigned)(st.st_mode & 0777));
    return cc_limits_parse(buf, (size_t)n, out, why, wlen) == 0 ? 1 : -1;
}
