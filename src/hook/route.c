/* Routing: which of our wrappers stands for a name (dlsym) or for a driver
 * pointer (cuGetProcAddress).
 *
 * cuGetProcAddress is routed by POINTER: we let the real driver choose the
 * entry point for (symbol, cudaVersion, flags) — it knows every version and
 * per-thread rule — and then swap the pointer it chose for our wrapper of the
 * same exported name, i.e. of exactly the same ABI. Only if the driver hands
 * out a pointer it does not export under a name we hook do we fall back to
 * choosing by name, with the version and flag rules of cudaTypedefs.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "hook.h"

/* Names, sorted once for bsearch (dlsym is not hot but is frequent). */
static int by_name[CC_FN_COUNT];

static int cmp_name(const void *a, const void *b)
{
    return strcmp(cc_hooks[*(const int *)a].name, cc_hooks[*(const int *)b].name);
}

static void sort_names(void)
{
    for (int i = 0; i < CC_FN_COUNT; i++) by_name[i] = i;
    qsort(by_name, CC_FN_COUNT, sizeof by_name[0], cmp_name);
}

int cc_hook_by_name(const char *name)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, sort_names);
    int lo = 0, hi = CC_FN_COUNT - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(name, cc_hooks[by_name[mid]].name);
        if (!c) return by_name[mid];
        if (c < 0) hi = mid - 1;
        else lo = mid + 1;
    }
    return -1;
}

/* Real CUDA pointers, sorted by address. Built inside the CUDA init once;
 * read only after cc_cuda_ready is observed. */
static struct route {
    void *real;
    int id;
} routes[CC_FN_COUNT];
static int nroutes;

static int cmp_route(const void *a, const void *b)
{
    const struct route *x = a, *y = b;
    if (x->real != y->real) return (uintptr_t)x->real < (uintptr_t)y->real ? -1 : 1;
    return x->id - y->id;
}

void cc_route_build(void)
{
    nroutes = 0;
    for (int i = 0; i < CC_FN_COUNT; i++)
        if (cc_hooks[i].lib == CC_LIB_CUDA && cc_real[i])
            routes[nroutes++] = (struct route){cc_real[i], i};
    qsort(routes, (size_t)nroutes, sizeof routes[0], cmp_route);
}

static int want_ptsz(cuuint64_t flags)
{
    return (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
}

/* The hook the driver would have chosen by name: same base, per-thread
 * variant per flags, newest ABI introduced at or before cudaVersion. */
static int route_by_name(const char *symbol, int cuda_version, cuuint64_t flags)
{
    int best = -1;
    for (int i = 0; i < CC_FN_COUNT; i++) {
        const struct cc_hook *h = &cc_hooks[i];
        if (h->lib != CC_LIB_CUDA || strcmp(h->base, symbol) != 0) continue;
        if (h->ptsz != want_ptsz(flags) || h->min_version > cuda_version) continue;
        if (best < 0 || h->min_version > cc_hooks[best].min_version) best = i;
    }
    return best;
}

void *cc_route_proc(const char *symbol, void *pfn, int cuda_version, cuuint64_t flags)
{
    if (!pfn || !symbol) return pfn;
    int lo = 0, hi = nroutes;
    while (lo < hi) { /* first route with real >= pfn */
        int mid = (lo + hi) / 2;
        if ((uintptr_t)routes[mid].real < (uintptr_t)pfn) lo = mid + 1;
        else hi = mid;
    }
    int pick = -1;
    /* Several exported names may alias one address; prefer the one whose
     * base and stream variant match the request. */
    for (int i = lo; i < nroutes && routes[i].real == pfn; i++) {
        const struct cc_hook *h = &cc_hooks[routes[i].id];
        if (pick < 0) pick = routes[i].id;
        if (strcmp(h->base, symbol) == 0 && h->ptsz == want_ptsz(flags)) {
            pick = routes[i].id;
            break;
        }
    }
    if (pick >= 0) return cc_hooks[pick].hook;
    for (int i = 0; i < CC_FN_COUNT; i++)
        if (cc_hooks[i].hook == pfn) return pfn; /* already ours */
    pick = route_by_name(symbol, cuda_version, flags);
    if (pick >= 0) {
        if (!cc_real[pick]) return pfn; /* nothing of ours could call on */
        cc_info("cuGetProcAddress(%s, %d, %llu) gave an entry point not exported by name; "
                "routed by name to %s", symbol, cuda_version, (unsigned long long)flags,
                cc_hooks[pick].name);
        return cc_hooks[pick].hook;
    }
    return pfn;
}
