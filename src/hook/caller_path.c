/* The part of dlopen's search that depends on who calls it (dlopen(3),
 * ld.so(8)): a bare name is looked for in the caller's DT_RPATH when it
 * has no DT_RUNPATH, then in LD_LIBRARY_PATH, then in the caller's
 * DT_RUNPATH, then in the cache and default folders. cudacap's RTLD_DEEPBIND
 * path (deepbind.c) calls the C library's dlopen itself, which then sees
 * cudacap as the caller; this finds the file the real caller would have
 * got, so that a plugin opened by a bare name from its host's $ORIGIN still
 * loads. Only $ORIGIN is expanded; entries with other tokens are skipped
 * (the loader would look there, we do not). The loader chain's RPATHs
 * (the caller's loaders') are not searched. */
#include "caller_path.h"

#include <elf.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

int cc_dl_contains(const struct dl_phdr_info *i, const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    for (int k = 0; k < i->dlpi_phnum; k++) {
        const ElfW(Phdr) *p = &i->dlpi_phdr[k];
        uintptr_t lo = i->dlpi_addr + p->p_vaddr;
        if (p->p_type == PT_LOAD && a >= lo && a - lo < p->p_memsz) return 1;
    }
    return 0;
}

struct caller {
    const void *addr;
    int found;
    char origin[PATH_MAX]; /* the caller's folder; "" unknown */
    const char *rpath, *runpath;
};

static void set_origin(struct caller *c, const char *name)
{
    char exe[PATH_MAX];
    if (!name || !*name) { /* the program itself */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) return;
        exe[n] = 0;
        name = exe;
    }
    const char *slash = strrchr(name, '/');
    if (name[0] != '/' || !slash) return; /* relative: no reliable $ORIGIN */
    size_t len = (size_t)(slash - name);
    if (len == 0) len = 1; /* "/lib.so": the root */
    if (len >= sizeof c->origin) return;
    memcpy(c->origin, name, len);
    c->origin[len] = 0;
}

static int find_caller(struct dl_phdr_info *i, size_t size, void *arg)
{
    (void)size;
    struct caller *c = arg;
    if (!cc_dl_contains(i, c->addr)) return 0;
    c->found = 1;
    set_origin(c, i->dlpi_name);
    const ElfW(Dyn) *dyn = NULL;
    for (int k = 0; k < i->dlpi_phnum; k++)
        if (i->dlpi_phdr[k].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(i->dlpi_addr + i->dlpi_phdr[k].p_vaddr);
    if (!dyn) return 1;
    const char *str = NULL;
    size_t rp = SIZE_MAX, rn = SIZE_MAX;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_STRTAB) {
            ElfW(Addr) v = d->d_un.d_ptr; /* relocated in place by the loader, or not */
            str = (const char *)(v < i->dlpi_addr ? i->dlpi_addr + v : v);
        }
        if (d->d_tag == DT_RPATH) rp = d->d_un.d_val;
        if (d->d_tag == DT_RUNPATH) rn = d->d_un.d_val;
    }
    if (!str) return 1;
    if (rn != SIZE_MAX) c->runpath = str + rn;
    else if (rp != SIZE_MAX) c->rpath = str + rp;
    return 1;
}

/* The first folder of the colon list holding `file`, expanded into out. */
static int search(const char *list, const char *origin, const char *file, char *out, size_t outsz)
{
    for (const char *at = list; at && *at;) {
        const char *end = strchr(at, ':');
        size_t len = end ? (size_t)(end - at) : strlen(at);
        char dir[PATH_MAX];
        size_t n = 0;
        int ok = len > 0;
        for (size_t k = 0; ok && k < len;) {
            const char *t = at + k;
            size_t tl = 0;
            if (strncmp(t, "$ORIGIN", 7) == 0) tl = 7;
            else if (strncmp(t, "${ORIGIN}", 9) == 0) tl = 9;
            if (tl) {
                size_t ol = strlen(origin);
                ok = ol > 0 && n + ol < sizeof dir;
                if (ok) memcpy(dir + n, origin, ol), n += ol;
                k += tl;
            } else if (*t == '$') {
                ok = 0; /* $LIB, $PLATFORM: left to the loader */
            } else {
                ok = n + 1 < sizeof dir;
                if (ok) dir[n++] = *t;
                k++;
            }
        }
        if (ok) {
            dir[n] = 0;
            size_t need = n + 1 + strlen(file) + 1;
            if (need <= outsz) {
                memcpy(out, dir, n);
                out[n] = '/';
                strcpy(out + n + 1, file);
                if (access(out, R_OK) == 0) return 1;
            }
        }
        at = end ? end + 1 : NULL;
    }
    return 0;
}

int cc_caller_path(const char *file, const void *caller, char *out, size_t outsz)
{
    if (!file || !*file || strchr(file, '/') || !caller) return 0;
    struct caller *c = calloc(1, sizeof *c); /* PATH_MAX bytes: not on an unknown stack */
    if (!c) return 0;
    c->addr = caller;
    dl_iterate_phdr(find_caller, c);
    int got = 0;
    if (c->found && (c->rpath || c->runpath)) {
        if (c->rpath) got = search(c->rpath, c->origin, file, out, outsz);
        /* LD_LIBRARY_PATH comes before DT_RUNPATH, and is the same for
         * every caller (ignored in secure mode, as the loader does). */
        const char *llp = getauxval(AT_SECURE) ? NULL : getenv("LD_LIBRARY_PATH");
        if (!got && c->runpath && !search(llp, "", file, out, outsz))
            got = search(c->runpath, c->origin, file, out, outsz);
    }
    free(c);
    return got;
}
