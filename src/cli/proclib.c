/* Which cudacap library a process loaded (proclib.h). Read at status
 * time only: a few KiB of maps, then the library file (about 1 MiB)
 * scanned for its version tag once per file (device, inode) and command. */
#include "cli/proclib.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAG "cudacap-library-version: "

static int is_ours(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    return strncmp(b, "libcudacap.so", 13) == 0 || strcmp(b, "libvgpu.so") == 0;
}

/* The version tag in the file at fd, or "" (a library without the tag:
 * HAMi's own, or one built before 2026-12-03). Bounded: at most 64 MiB
 * read; the tag may straddle two reads. */
static void read_tag(int fd, char *out, size_t len)
{
    static char buf[65536 + 64];
    size_t keep = 0, tl = sizeof TAG - 1;
    out[0] = 0;
    for (size_t total = 0; total < (64u << 20);) {
        ssize_t n = read(fd, buf + keep, sizeof buf - 64 - keep);
        if (n <= 0) return;
        total += (size_t)n;
        size_t have = keep + (size_t)n;
        char *hit = memmem(buf, have, TAG, tl);
        if (hit) {
            size_t at = (size_t)(hit - buf) + tl, k = 0;
            /* The rest of the tag may be in the next read: ask for it. */
            if (have - at < 32) {
                ssize_t m = read(fd, buf + have, 64 - 1);
                if (m > 0) have += (size_t)m;
            }
            while (at + k < have && k + 1 < len && k < 32) {
                char c = buf[at + k];
                if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      c == '.' || c == '-' || c == '+' || c == '~'))
                    break;
                out[k] = c, k++;
            }
            out[k] = 0;
            return;
        }
        keep = have < tl ? have : tl - 1;
        memmove(buf, buf + have - keep, keep);
    }
}

int proclib_of(uint32_t host_pid, char *path, size_t plen, char *version, size_t vlen)
{
    if (!host_pid || plen < 2 || vlen < 1) return 0;
    version[0] = 0;
    char p[64];
    snprintf(p, sizeof p, "/proc/%u/maps", host_pid);
    FILE *f = fopen(p, "re");
    if (!f) return 0;
    char line[4352];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *slash = strchr(line, '/');
        if (!slash) continue;
        line[strcspn(line, "\n")] = 0;
        /* " (deleted)": replaced on disk since it was loaded; still it. */
        char *del = strstr(slash, " (deleted)");
        if (del && del[10] == 0) *del = 0;
        if (!is_ours(slash)) continue;
        snprintf(path, plen, "%s", slash);
        found = 1;
    }
    fclose(f);
    if (!found) return 0;
    /* Through the process's root: its path names a file in its own mount
     * namespace. O_NONBLOCK: never wait on a FIFO put there. */
    char rp[4160];
    snprintf(rp, sizeof rp, "/proc/%u/root%s", host_pid, path);
    int fd = open(rp, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0) {
        static struct {
            dev_t dev;
            ino_t ino;
            char v[40];
        } seen[16];
        static int nseen;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
            int k = 0;
            while (k < nseen && !(seen[k].dev == st.st_dev && seen[k].ino == st.st_ino)) k++;
            if (k == nseen) {
                read_tag(fd, seen[k % 16].v, sizeof seen[0].v);
                seen[k % 16].dev = st.st_dev, seen[k % 16].ino = st.st_ino;
                if (nseen < 16) nseen++;
                k %= 16;
            }
            snprintf(version, vlen, "%s", seen[k].v);
        }
        close(fd);
    }
    return 1;
}
