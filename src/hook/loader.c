/* Finding the real dlsym and the real driver libraries. Never binds to the
 * driver at link time: everything goes through dlopen + the real dlsym, so a
 * missing entry point is a NULL we can report, not a failed program start. */
#include <dlfcn.h>
#include <stddef.h>

#include "common/log.h"
#include "hook.h"

static void *handles[2];

void *cc_lib_sym(enum cc_lib lib, const char *name)
{
    void *h = __atomic_load_n(&handles[lib], __ATOMIC_ACQUIRE);
    return h ? cc_real_dlsym(h, name) : NULL;
}

void *cc_open_lib(enum cc_lib lib)
{
    const char *name = lib == CC_LIB_CUDA ? "libcuda.so.1" : "libnvidia-ml.so.1";
    void *h = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (h) __atomic_store_n(&handles[lib], h, __ATOMIC_RELEASE);
    if (!h) {
        cc_warn("cannot load %s (%s); its entry points will return errors", name, dlerror());
        return NULL;
    }
    cc_resolve_real_dlsym();
    for (int i = 0; i < CC_FN_COUNT; i++) {
        if (cc_hooks[i].lib != lib) continue;
        void *p = cc_real_dlsym(h, cc_hooks[i].name);
        if (p == cc_hooks[i].hook) p = NULL; /* never call ourselves */
        if (!p) cc_info("%s has no %s", name, cc_hooks[i].name);
        cc_real[i] = p;
    }
    return h;
}
