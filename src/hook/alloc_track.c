/* The allocation map (alloc_track.h). Chained buckets with a byte spin lock
 * each; cost of a put or take: a hash, an uncontended lock, a malloc/free
 * of one small node, a short chain walk (64 K buckets). */
#include "alloc_track.h"

#include <sched.h>
#include <stdlib.h>

#include "common/fork.h"

#define NBUCKETS (1u << 16)

struct node {
    struct node *next;
    uint64_t key;
    int kind;
    struct cc_at_val v;
};

static struct bucket {
    struct node *head;
    uint8_t lock;
} g_b[NBUCKETS];
static uint64_t g_count;
/* Entries per kind: cc_at_each skips a kind with none without walking the
 * 64 K buckets (1 MiB of heads: 60 us, the whole cost of a refusal at the
 * memory cap, which refreshes the pools). */
#define KINDS 16
static uint64_t g_kind[KINDS];

static inline void count(int kind, int delta)
{
    __atomic_add_fetch(&g_count, (uint64_t)(int64_t)delta, __ATOMIC_RELAXED);
    if (kind >= 0 && kind < KINDS)
        __atomic_add_fetch(&g_kind[kind], (uint64_t)(int64_t)delta, __ATOMIC_RELAXED);
}

static inline struct bucket *bucket_of(int kind, uint64_t key)
{
    uint64_t x = (key ^ ((uint64_t)kind << 56)) * 0x9e3779b97f4a7c15ull;
    return &g_b[x >> 48];
}

static inline void lock(struct bucket *b)
{
    while (__atomic_exchange_n(&b->lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&b->lock, __ATOMIC_RELAXED)) sched_yield();
}

static inline void unlock(struct bucket *b) { __atomic_store_n(&b->lock, 0, __ATOMIC_RELEASE); }

static struct node **find(struct bucket *b, int kind, uint64_t key)
{
    struct node **p = &b->head;
    while (*p && ((*p)->key != key || (*p)->kind != kind)) p = &(*p)->next;
    return p;
}

static int fork_registered; /* relaxed: registering twice is a no-op */

int cc_at_put(int kind, uint64_t key, const struct cc_at_val *v)
{
    /* The map's fork reset, registered before its first entry (a fork
     * child owns none of its parent's memory). One load once done. */
    if (__builtin_expect(!__atomic_load_n(&fork_registered, __ATOMIC_RELAXED), 0)) {
        cc_fork_child_register(cc_at_reset);
        __atomic_store_n(&fork_registered, 1, __ATOMIC_RELAXED);
    }
    struct bucket *b = bucket_of(kind, key);
    struct node *n = malloc(sizeof *n);
    lock(b);
    struct node **p = find(b, kind, key);
    if (*p) { /* the driver reused a key we still hold: replace */
        (*p)->v = *v;
        unlock(b);
        free(n);
        return 0;
    }
    if (!n) {
        unlock(b);
        return -1;
    }
    n->key = key;
    n->kind = kind;
    n->v = *v;
    n->next = b->head;
    b->head = n;
    count(kind, 1);
    unlock(b);
    return 0;
}

int cc_at_get(int kind, uint64_t key, struct cc_at_val *v)
{
    struct bucket *b = bucket_of(kind, key);
    lock(b);
    struct node *n = *find(b, kind, key);
    if (n && v) *v = n->v;
    unlock(b);
    return n != NULL;
}

int cc_at_take(int kind, uint64_t key, struct cc_at_val *v)
{
    struct bucket *b = bucket_of(kind, key);
    lock(b);
    struct node **p = find(b, kind, key), *n = *p;
    if (n) {
        *p = n->next;
        if (v) *v = n->v;
        count(kind, -1);
    }
    unlock(b);
    free(n);
    return n != NULL;
}

int cc_at_ref(int kind, uint64_t key, int delta, struct cc_at_val *v)
{
    struct bucket *b = bucket_of(kind, key);
    lock(b);
    struct node **p = find(b, kind, key), *n = *p;
    int r = -1;
    if (n) {
        n->v.refs += delta;
        r = 0;
        if (n->v.refs <= 0) {
            *p = n->next;
            if (v) *v = n->v;
            count(kind, -1);
            r = 1;
        }
    }
    unlock(b);
    if (r == 1) free(n);
    return r;
}

void cc_at_each(int kind, void (*fn)(uint64_t, struct cc_at_val *, void *), void *arg)
{
    /* Relaxed: an entry put concurrently may be missed, as it may be by the
     * walk itself (its bucket already passed). */
    if (kind >= 0 && kind < KINDS && !__atomic_load_n(&g_kind[kind], __ATOMIC_RELAXED)) return;
    for (unsigned i = 0; i < NBUCKETS; i++) {
        struct bucket *b = &g_b[i];
        if (!__atomic_load_n(&b->head, __ATOMIC_RELAXED)) continue;
        lock(b);
        for (struct node *n = b->head; n; n = n->next)
            if (n->kind == kind) fn(n->key, &n->v, arg);
        unlock(b);
    }
}

void cc_at_reset(void)
{
    /* Fork child, single-threaded: a lock held by a parent thread at fork
     * time is void here. */
    for (unsigned i = 0; i < NBUCKETS; i++) {
        struct node *n = g_b[i].head;
        while (n) {
            struct node *x = n->next;
            free(n);
            n = x;
        }
        g_b[i].head = NULL;
        g_b[i].lock = 0;
    }
    g_count = 0;
    for (int k = 0; k < KINDS; k++) g_kind[k] = 0;
}

uint64_t cc_at_count(void) { return __atomic_load_n(&g_count, __ATOMIC_RELAXED); }
