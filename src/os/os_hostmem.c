/* Host memory figures for oversubscription (os.h, cc_os_host_memory): the
 * node's MemAvailable and the container's cgroup memory limit and use,
 * cgroup v2 (the process's own cgroup, then the namespace root) or v1.
 * CUDACAP_TEST_HOST_ROOT (tests only) names a folder that stands for "/",
 * so a test can give fake /proc/meminfo and cgroup files. Every figure is
 * parsed strictly: one that does not parse is "unknown", never a guess. */
#include "os/os.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Up to len - 1 bytes of root + path, NUL-ended; -1 when absent. */
static ssize_t slurp(const char *root, const char *path, char *buf, size_t len)
{
    char full[1024];
    if ((size_t)snprintf(full, sizeof full, "%s%s", root, path) >= sizeof full) return -1;
    int fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0) return -1;
    buf[n] = 0;
    return n;
}

/* A decimal number then blanks or a newline; "max" is none. 0 or -1. */
static int number(const char *s, uint64_t *out)
{
    if (!strncmp(s, "max", 3) && (s[3] == 0 || s[3] == '\n')) return *out = UINT64_MAX, 0;
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10) return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (p == s || (*p && *p != '\n' && *p != ' ')) return -1;
    *out = v;
    return 0;
}

static int file_number(const char *root, const char *path, uint64_t *out)
{
    char buf[64];
    return slurp(root, path, buf, sizeof buf) > 0 ? number(buf, out) : -1;
}

/* cgroup v2: the process's own cgroup ("0::/path" in /proc/self/cgroup),
 * else the namespace's root (a container with its own cgroup namespace). */
static int cgroup_v2(const char *root, uint64_t *limit, uint64_t *used)
{
    char cg[512], dir[700], p[800];
    const char *rel = "";
    if (slurp(root, "/proc/self/cgroup", cg, sizeof cg) > 0) {
        char *l = strstr(cg, "0::");
        if (l && (l == cg || l[-1] == '\n')) {
            rel = l + 3;
            char *nl = strchr(l, '\n');
            if (nl) *nl = 0;
            if (!strcmp(rel, "/")) rel = "";
        }
    }
    for (int k = 0; k < 2; k++) {
        snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", k == 0 ? rel : "");
        snprintf(p, sizeof p, "%s/memory.max", dir);
        if (file_number(root, p, limit) != 0) continue;
        snprintf(p, sizeof p, "%s/memory.current", dir);
        if (file_number(root, p, used) != 0) *used = 0;
        return 0;
    }
    return -1;
}

void cc_os_host_memory(struct cc_os_hostmem *m)
{
    const char *root = getenv("CUDACAP_TEST_HOST_ROOT");
    if (!root) root = "";
    m->avail = m->cg_limit = UINT64_MAX;
    m->cg_used = 0;
    m->cg_source = "";
    char buf[4096];
    if (slurp(root, "/proc/meminfo", buf, sizeof buf) > 0) {
        char *l = strstr(buf, "MemAvailable:");
        uint64_t kb;
        if (l) {
            l += strlen("MemAvailable:");
            while (*l == ' ' || *l == '\t') l++;
            if (number(l, &kb) == 0 && kb < UINT64_MAX / 1024) m->avail = kb * 1024;
        }
    }
    if (cgroup_v2(root, &m->cg_limit, &m->cg_used) == 0) {
        m->cg_source = "memory.max";
    } else if (file_number(root, "/sys/fs/cgroup/memory/memory.limit_in_bytes", &m->cg_limit) == 0) {
        m->cg_source = "memory.limit_in_bytes";
        if (m->cg_limit >= (1ull << 62)) m->cg_limit = UINT64_MAX; /* v1's "no limit" */
        if (file_number(root, "/sys/fs/cgroup/memory/memory.usage_in_bytes", &m->cg_used) != 0) m->cg_used = 0;
    } else {
        m->cg_limit = UINT64_MAX;
    }
}
