/* dlsym interception, and the first step of dlopen's. The exported dlsym is
 * a few instructions of assembly (dl_stubs_<arch>.S) that ask
 * cc_dlsym_lookup first and otherwise JUMP to the
 * C library's dlsym, so the real dlsym sees the caller's return address:
 * dlsym(RTLD_NEXT, ...) keeps meaning "next after the caller", which a C
 * wrapper calling on would silently change to "next after cudacap".
 *
 * Any intercepted name resolves to our wrapper whatever the handle, including
 * RTLD_NEXT and a handle of libcuda itself: a program that dlopens the driver
 * and looks entries up by name is capped like one that links it.
 *
 * This file is built without sanitizers and calls nothing a sanitizer
 * intercepts (no strcmp, no qsort, no pthread_once): sanitizer runtimes call
 * dlsym while initialising themselves, before their shadow memory and their
 * own interceptors exist. */
#include <dlfcn.h>
#include <stddef.h>

#include "common/log.h"
#include "hook.h"

void *(*cc_real_dlsym)(void *, const char *);

static void *null_dlsym(void *h, const char *n)
{
    (void)h;
    (void)n;
    return NULL;
}

void cc_resolve_real_dlsym(void)
{
    if (__atomic_load_n(&cc_real_dlsym, __ATOMIC_ACQUIRE)) return;
    /* dlsym itself is what we override, so find glibc's through dlvsym. The
     * versions: 2.34 (libc.so.6 since the libdl merge), 2.2.5 (x86-64
     * before), 2.17 (aarch64 before). Idempotent: racing threads compute the
     * same pointer, so no once-guard is needed. */
    static const char *const vers[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", NULL};
    void *f = NULL;
    for (int i = 0; !f && vers[i]; i++) f = dlvsym(RTLD_NEXT, "dlsym", vers[i]);
    if (!f) {
        void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        for (int i = 0; libc && !f && vers[i]; i++) f = dlvsym(libc, "dlsym", vers[i]);
    }
    if (!f) {
        cc_error("cannot find the C library's dlsym; dlsym of names cudacap does not "
                 "intercept will return NULL");
        f = (void *)null_dlsym;
    }
    __atomic_store_n(&cc_real_dlsym, (void *(*)(void *, const char *))f, __ATOMIC_RELEASE);
}

static int same(const char *a, const char *b)
{
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

__attribute__((visibility("hidden"))) void *cc_dlsym_lookup(void *handle, const char *name)
{
    (void)handle;
    /* Cost: two byte compares for most names; a scan of the hook table (about
     * a hundred entries) for cu* and nv* names. dlsym is not a hot path. */
    if (name && ((name[0] == 'c' && name[1] == 'u') || (name[0] == 'n' && name[1] == 'v')))
        for (int i = 0; i < CC_FN_COUNT; i++)
            if (same(name, cc_hooks[i].name)) return cc_hooks[i].hook;
    cc_resolve_real_dlsym(); /* the stub jumps through cc_real_dlsym next */
    return NULL;
}

/* ---- dlopen --------------------------------------------------------------- */

void *(*cc_real_dlopen)(const char *, int);

static void *no_dlopen(const char *f, int m)
{
    (void)f;
    (void)m;
    return NULL;
}

/* Where the dlopen stub goes: the C library's dlopen, jumped to with the
 * caller's return address in place, for every open but RTLD_DEEPBIND ones;
 * NULL sends those to cc_dlopen_deep (deepbind.c), which binds the opened
 * libraries' CUDA imports to cudacap. Cost: one load and two branches once
 * resolved; dlopen is not a hot path. */
__attribute__((visibility("hidden"))) void *cc_dlopen_target(const char *file, int mode)
{
    (void)file;
    void *(*f)(const char *, int) = __atomic_load_n(&cc_real_dlopen, __ATOMIC_ACQUIRE);
    if (!f) {
        /* As for dlsym: racing threads compute the same pointer. */
        static const char *const vers[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", NULL};
        void *p = NULL;
        for (int i = 0; !p && vers[i]; i++) p = dlvsym(RTLD_NEXT, "dlopen", vers[i]);
        if (!p) {
            cc_error("cannot find the C library's dlopen; dlopen will fail");
            p = (void *)no_dlopen;
        }
        f = (void *(*)(const char *, int))p;
        __atomic_store_n(&cc_real_dlopen, f, __ATOMIC_RELEASE);
    }
#ifdef RTLD_DEEPBIND
    if ((mode & RTLD_DEEPBIND) && f != no_dlopen) return NULL;
#else
    (void)mode;
#endif
    return (void *)f;
}

#if !defined(__x86_64__) && !defined(__aarch64__)
/* Other architectures: a C wrapper. dlsym(RTLD_NEXT) from other libraries
 * then resolves relative to cudacap (documented limitation). */
CC_EXPORT void *dlsym(void *handle, const char *name)
{
    void *p = cc_dlsym_lookup(handle, name);
    return p ? p : cc_real_dlsym(handle, name);
}
#endif
