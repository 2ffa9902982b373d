/* Libraries opened with RTLD_DEEPBIND (docs/interception.md, "Libraries
 * opened with RTLD_DEEPBIND"). Such a library, and every library loaded
 * with it, looks its symbols up in its own dependencies before the global
 * scope where the preloaded cudacap sits: its cuMemAlloc binds to libcuda
 * itself, and a plugin's calls passed every cap (8 GiB under a 2 GiB cap,
 * 94-98 % busy under 30 %). The flag is kept (the plugin asked for its own
 * symbols first, for reasons of its own); after the open, the import slots
 * of the libraries it loaded that name an entry point cudacap wraps (and
 * dlsym and dlopen, the routes to the others) are pointed at cudacap.
 *
 * Code that runs inside the open, the new libraries' constructors, still
 * reaches the driver directly: what they allocate is found after the open,
 * in the process's memory as NVML reports it (the overhead measure, marked
 * stale here), so the next allocation sees the container's true use and is
 * refused beyond the cap. Their launches are not seen.
 *
 * Not a hot path: this runs once per RTLD_DEEPBIND open. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "caller_path.h"
#include "common/controls.h"
#include "common/log.h"
#include "hook.h"
#include "memory_track.h"

extern void *(*cc_real_dlopen)(const char *, int);
void *cc_dlopen_target(const char *file, int mode);
extern char cc_dlsym_stub[], cc_dlopen_stub[]; /* dl_stubs_<arch>.S */
void *cc_dlsym_lookup(void *handle, const char *name);

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT R_X86_64_GLOB_DAT
#define R_ABS64 R_X86_64_64
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT R_AARCH64_GLOB_DAT
#define R_ABS64 R_AARCH64_ABS64
#endif

/* ---- the objects loaded before the open ----------------------------------- */

#define SEEN_MAX 2048
struct seen {
    const void *phdr[SEEN_MAX]; /* an object's program headers: one address per object */
    int n, overflow;
};

static int note_seen(struct dl_phdr_info *i, size_t size, void *arg)
{
    (void)size;
    struct seen *s = arg;
    if (s->n < SEEN_MAX) s->phdr[s->n++] = i->dlpi_phdr;
    else s->overflow = 1;
    return 0;
}

static int was_seen(const struct seen *s, const void *phdr)
{
    for (int k = 0; k < s->n; k++)
        if (s->phdr[k] == phdr) return 1;
    return 0;
}

#ifdef R_JUMP_SLOT
/* ---- rebinding one object's imports --------------------------------------- */

/* The loader relocates these in place on the platforms above; an object
 * whose dynamic section holds link-time addresses still needs its base. */
static uintptr_t dyn_ptr(ElfW(Addr) base, ElfW(Addr) v) { return v < base ? base + v : v; }

/* What an import named `name` should be bound to, or NULL to leave it. */
static void *ours(const char *name)
{
    if (strcmp(name, "dlsym") == 0) return cc_dlsym_stub;
    if (strcmp(name, "dlopen") == 0) return cc_dlopen_stub;
    return cc_dlsym_lookup(NULL, name); /* a wrapped cu* or nvml* name, or NULL */
}

struct object {
    ElfW(Addr) base;
    const ElfW(Sym) *sym;
    const char *str;
    size_t strsz;
    uintptr_t relro, relro_end; /* page-rounded; 0 when none */
    int relro_open;             /* made writable for this pass */
    int bound;                  /* slots pointed at cudacap */
    int failed;                 /* mprotect refused */
};

static void bind_slot(struct object *o, const ElfW(Rela) *r)
{
    unsigned long type = ELF64_R_TYPE(r->r_info), si = ELF64_R_SYM(r->r_info);
    if (si == 0 || (type != R_JUMP_SLOT && type != R_GLOB_DAT && !(type == R_ABS64 && r->r_addend == 0)))
        return;
    /* Imports only: a name the object defines itself (a plugin with its
     * own dlsym, say) keeps its own definition, as the flag asked. */
    if (o->sym[si].st_shndx != SHN_UNDEF) return;
    size_t at = o->sym[si].st_name;
    if (at >= o->strsz) return;
    void *to = ours(o->str + at);
    if (!to) return;
    void **slot = (void **)(o->base + r->r_offset);
    uintptr_t a = (uintptr_t)slot;
    if (__atomic_load_n(slot, __ATOMIC_RELAXED) == to) return;
    if (a >= o->relro && a < o->relro_end && !o->relro_open) {
        /* Read-only after relocation (RELRO): writable for this pass. */
        if (mprotect((void *)o->relro, o->relro_end - o->relro, PROT_READ | PROT_WRITE) != 0) {
            if (!o->failed++)
                cc_warn("RTLD_DEEPBIND: cannot make an import table writable (%s); "
                        "some CUDA calls of this library stay uncapped", strerror(errno));
            return;
        }
        o->relro_open = 1;
    }
    /* Another thread may be calling through the slot: either pointer is a
     * valid function, so a plain atomic store is all it needs. */
    __atomic_store_n(slot, to, __ATOMIC_RELAXED);
    o->bound++;
}

static void bind_table(struct object *o, uintptr_t rela, size_t bytes)
{
    if (!rela) return;
    const ElfW(Rela) *r = (const ElfW(Rela) *)rela;
    for (size_t k = 0; k < bytes / sizeof *r; k++) bind_slot(o, &r[k]);
}

/* 1 for the driver, NVML, and us: their own imports stay as they are. */
static int leave_alone(const struct dl_phdr_info *i)
{
    if (cc_dl_contains(i, (const void *)cc_dlopen_target)) return 1;
    const char *name = i->dlpi_name, *b = strrchr(name, '/');
    b = b ? b + 1 : name;
    return strncmp(b, "libcuda.so", 10) == 0 || strncmp(b, "libnvidia-ml.so", 15) == 0;
}

static int bind_object(struct dl_phdr_info *i, size_t size, void *arg)
{
    (void)size;
    const struct seen *s = arg;
    if (s && !s->overflow && was_seen(s, i->dlpi_phdr)) return 0;
    if (!i->dlpi_name || leave_alone(i)) return 0;
    struct object o = {.base = i->dlpi_addr};
    const ElfW(Dyn) *dyn = NULL;
    long pagesz = sysconf(_SC_PAGESIZE);
    for (int k = 0; k < i->dlpi_phnum; k++) {
        const ElfW(Phdr) *p = &i->dlpi_phdr[k];
        if (p->p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(i->dlpi_addr + p->p_vaddr);
        if (p->p_type == PT_GNU_RELRO && pagesz > 0) {
            uintptr_t lo = i->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;
            o.relro = lo & ~((uintptr_t)pagesz - 1);
            o.relro_end = (hi + (uintptr_t)pagesz - 1) & ~((uintptr_t)pagesz - 1);
        }
    }
    if (!dyn) return 0;
    uintptr_t jmprel = 0, rela = 0;
    size_t pltsz = 0, relasz = 0;
    long pltrel = DT_RELA;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: o.sym = (const ElfW(Sym) *)dyn_ptr(o.base, d->d_un.d_ptr); break;
        case DT_STRTAB: o.str = (const char *)dyn_ptr(o.base, d->d_un.d_ptr); break;
        case DT_STRSZ: o.strsz = d->d_un.d_val; break;
        case DT_JMPREL: jmprel = dyn_ptr(o.base, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: pltsz = d->d_un.d_val; break;
        case DT_PLTREL: pltrel = (long)d->d_un.d_val; break;
        case DT_RELA: rela = dyn_ptr(o.base, d->d_un.d_ptr); break;
        case DT_RELASZ: relasz = d->d_un.d_val; break;
        default: break;
        }
    }
    if (!o.sym || !o.str) return 0;
    if (pltrel == DT_RELA) bind_table(&o, jmprel, pltsz);
    bind_table(&o, rela, relasz);
    if (o.relro_open) mprotect((void *)o.relro, o.relro_end - o.relro, PROT_READ);
    if (o.bound)
        cc_info("%s (opened with RTLD_DEEPBIND): %d CUDA imports bound to cudacap",
                *i->dlpi_name ? i->dlpi_name : "(program)", o.bound);
    return 0;
}
#endif

/* ---- the open ------------------------------------------------------------- */

#if defined(R_JUMP_SLOT)
/* After an open: the objects not in s (NULL: every object) bound to us. */
static void CC_CONTROL_POINT(bind_opened)(struct seen *s)
{
    /* Two threads' binding passes never overlap: glibc runs each
     * dl_iterate_phdr under its loader lock, so one pass's RELRO page is
     * read-only again before another's callback runs. */
    dl_iterate_phdr(bind_object, s);
    cc_mem_overhead_stale_all(); /* what the constructors allocated */
}
#endif

__attribute__((visibility("hidden"))) void *cc_dlopen_deep(const char *file, int mode, void *caller)
{
    void *(*real)(const char *, int) = __atomic_load_n(&cc_real_dlopen, __ATOMIC_ACQUIRE);
    /* The C library takes the caller from its return address, which is now
     * ours: find the file where the caller's own search path would. */
    char path[PATH_MAX];
    const char *use = cc_caller_path(file, caller, path, sizeof path) ? path : file;
    /* Without memory for the list: every object but the driver's is bound
     * (each slot bound is one cudacap would have had without the flag). */
    struct seen *s = calloc(1, sizeof *s);
    if (s) dl_iterate_phdr(note_seen, s);
    void *h = real(use, mode);
    if (!h && use != file) h = real(file, mode); /* what we found was not loadable */
#if defined(R_JUMP_SLOT)
    if (h) bind_opened(s);
#else
    if (h) cc_warn("%s opened with RTLD_DEEPBIND: this platform cannot bind its CUDA calls to cudacap",
                   file ? file : "(program)");
#endif
    free(s);
    return h;
}
