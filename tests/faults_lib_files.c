/* Fault campaign, library side: the state files spoiled and restored, and
 * the files outside the folder signed (tests/faults_lib.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faults_lib.h"

/* ---- parent: files ---------------------------------------------------------- */

const char *FILES[] = {CC_MEM_REGION_FILE, CC_COMPUTE_FILE, "sampling.lock", "identity.lock"};
const char *KINDS[] = {"random bytes", "truncation", "FIFO", "directory", "hard link",
                              "symbolic link"};

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    return remove(p) == 0 || errno == ENOENT ? 0 : -1;
}
void rm_rf(const char *p) { nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

void path_of(char *out, size_t n, const char *dir, const char *f)
{
    snprintf(out, n, "%s/%s", dir, f);
}

int copy_file(const char *from, const char *to)
{
    int a = open(from, O_RDONLY), b = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char buf[65536];
    ssize_t k;
    int ok = a >= 0 && b >= 0;
    while (ok && (k = read(a, buf, sizeof buf)) > 0) ok = write(b, buf, (size_t)k) == k;
    if (a >= 0) close(a);
    if (b >= 0) close(b);
    return ok ? 0 : -1;
}

/* Random bytes into an existing file (which may be mapped by the workers):
 * the whole file, or a few spans, header included half of the time. */
static void scribble(const char *p, uint64_t *seed)
{
    int fd = open(p, O_WRONLY | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        return;
    }
    uint64_t r = rnd(seed);
    unsigned char buf[4096];
    if (r % 3 == 0) { /* all of it */
        for (off_t o = 0; o < st.st_size; o += (off_t)sizeof buf) {
            for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)rnd(seed);
            if (pwrite(fd, buf, sizeof buf, o) < 0) break;
        }
    } else {
        int spans = 1 + (int)(rnd(seed) % 16);
        for (int s = 0; s < spans; s++) {
            size_t len = 1 + rnd(seed) % 256;
            off_t o = (off_t)(rnd(seed) % (uint64_t)st.st_size);
            if (s == 0 && (r & 1)) o = 0; /* the header */
            for (size_t i = 0; i < len; i++) buf[i] = (unsigned char)rnd(seed);
            if (o + (off_t)len > st.st_size) len = (size_t)(st.st_size - o);
            if (pwrite(fd, buf, len, o) < 0) break;
        }
    }
    close(fd);
}

/* Puts KIND in place of the state file F (atomically where a rename can). */
void spoil(int f, int kind, uint64_t *seed)
{
    char p[1000], tmp[1000], tgt[1000];
    path_of(p, sizeof p, g_state, FILES[f]);
    snprintf(tmp, sizeof tmp, "%s/.spoil", g_state);
    unlink(tmp);
    switch (kind) {
    case K_RANDOM:
        if (access(p, F_OK) != 0) {
            path_of(tgt, sizeof tgt, g_good, FILES[f]);
            copy_file(tgt, p);
        }
        scribble(p, seed);
        return;
    case K_TRUNC: {
        struct stat st;
        if (lstat(p, &st) != 0) {
            path_of(tgt, sizeof tgt, g_good, FILES[f]);
            copy_file(tgt, p);
            lstat(p, &st);
        }
        off_t to = st.st_size > 1 ? (off_t)(rnd(seed) % (uint64_t)st.st_size) : 0;
        if (truncate(p, to) != 0) perror("truncate");
        return;
    }
    case K_FIFO:
        if (mkfifo(tmp, 0600) == 0 && rename(tmp, p) != 0) perror("rename fifo");
        return;
    case K_DIR:
        unlink(p); /* a folder cannot be renamed over a file */
        if (mkdir(p, 0700) != 0) perror("mkdir");
        return;
    case K_HARD:
        snprintf(tgt, sizeof tgt, "%s/hard_target", g_out);
        if (link(tgt, tmp) == 0 && rename(tmp, p) != 0) perror("rename link");
        return;
    case K_SYM:
        snprintf(tgt, sizeof tgt, "%s/sym_target", g_out);
        if (symlink(tgt, tmp) == 0 && rename(tmp, p) != 0) perror("rename symlink");
        return;
    }
}

/* The corruption stops: what replaced the file goes (never what it points
 * to); spoiled content stays, for the library to repair. */
void restore(int f, int kind)
{
    char p[1000];
    path_of(p, sizeof p, g_state, FILES[f]);
    if (kind == K_DIR) rmdir(p);
    else if (kind >= K_FIFO) unlink(p);
}

/* The files outside the folder: content, size, mtime; and the names there. */
void outside_sig(struct outside *o)
{
    size_t n = 0;
    o->sig[0] = 0;
    DIR *d = opendir(g_out);
    if (!d) return;
    struct dirent *e;
    char names[16][64];
    int k = 0;
    while ((e = readdir(d)) && k < 16)
        if (e->d_name[0] != '.' && strlen(e->d_name) < sizeof names[0])
            memcpy(names[k++], e->d_name, strlen(e->d_name) + 1);
    closedir(d);
    for (int i = 0; i < k; i++)
        for (int j = i + 1; j < k; j++)
            if (strcmp(names[i], names[j]) > 0) {
                char t[64];
                memcpy(t, names[i], 64), memcpy(names[i], names[j], 64), memcpy(names[j], t, 64);
            }
    for (int i = 0; i < k; i++) {
        char p[2000], buf[256] = {0};
        snprintf(p, sizeof p, "%s/%s", g_out, names[i]);
        struct stat st;
        if (lstat(p, &st) != 0) continue;
        int fd = open(p, O_RDONLY | O_NOFOLLOW);
        ssize_t r = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0) close(fd);
        uint64_t h = 1469598103934665603ull;
        for (ssize_t j = 0; j < r; j++) h = (h ^ (unsigned char)buf[j]) * 1099511628211ull;
        n += (size_t)snprintf(o->sig + n, sizeof o->sig - n, "%s %lld %ld.%09ld %lu %llx\n",
                              names[i], (long long)st.st_size, (long)st.st_mtim.tv_sec,
                              st.st_mtim.tv_nsec, (unsigned long)st.st_nlink,
                              (unsigned long long)h);
        if (n >= sizeof o->sig) break;
    }
}
