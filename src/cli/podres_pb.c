/* The decoder of podres.h: a ListPodResourcesResponse (the kubelet's
 * k8s.io/kubelet/pkg/apis/podresources/v1/api.proto) by hand, into a table
 * of (device id, namespace, pod, container) sorted by id. Only the fields
 * that name a device's owner are read:
 *   ListPodResourcesResponse { 1: repeated PodResources pod_resources }
 *   PodResources             { 1: name, 2: namespace, 3: repeated ContainerResources }
 *   ContainerResources       { 1: name, 2: repeated ContainerDevices devices,
 *                              5: repeated DynamicResource dynamic_resources }
 *   ContainerDevices         { 1: resource_name, 2: repeated string device_ids }
 *   DynamicResource          { 4: repeated ClaimResource claim_resources }
 *   ClaimResource            { 1: repeated CDIDevice cdi_devices }
 *   CDIDevice                { 1: name (a full CDI name, vendor/class=name) }
 * Everything else (cpu_ids, memory, topology, claim names, fields newer
 * kubelets add) is skipped by wire type. Fields may come in any order and
 * a scalar may repeat (the last one counts), as protobuf allows. Every
 * length is checked against what is left of its enclosing message. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/podres.h"

#define GROUP_DEPTH 16 /* nested groups skipped; deeper is refused */

struct rd {
    const uint8_t *p, *end;
};
struct field {
    uint32_t num;
    int wt;
    struct rd val; /* wire type 2: the bytes */
};
struct dec {
    struct podres *out;
    char *ap, *aend; /* the arena's free part */
    int cap;         /* of out->e */
    char *why;
    size_t whylen;
};

static int bad(struct dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct dec *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(d->why, d->whylen, "malformed protobuf: ");
    if (k > 0 && (size_t)k < d->whylen) vsnprintf(d->why + k, d->whylen - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

static int varint(struct rd *r, uint64_t *v)
{
    uint64_t x = 0;
    for (int i = 0; i < 10 && r->p < r->end; i++) {
        uint8_t b = *r->p++;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) return *v = x, 0;
    }
    return -1; /* past the end, or more than 10 bytes */
}

static int next(struct dec *d, struct rd *r, struct field *f, const char *msg, int depth);

/* Skips the value of a field of wire type wt (the key already read). */
static int skip(struct dec *d, struct rd *r, const struct field *f, const char *msg, int depth)
{
    uint64_t v;
    size_t left = (size_t)(r->end - r->p);
    switch (f->wt) {
    case 0:
        if (varint(r, &v)) return bad(d, "%s field %u: a varint runs past the end", msg, f->num);
        return 0;
    case 1:
    case 5: {
        size_t w = f->wt == 1 ? 8 : 4;
        if (left < w) return bad(d, "%s field %u: %zu-byte fixed value, %zu bytes left", msg, f->num, w, left);
        r->p += w;
        return 0;
    }
    case 3: { /* a group (deprecated, but a valid wire type): up to its END_GROUP */
        if (depth >= GROUP_DEPTH) return bad(d, "%s field %u: groups nested deeper than %d", msg, f->num, GROUP_DEPTH);
        struct field g;
        int k;
        while ((k = next(d, r, &g, msg, depth + 1)) > 0) {
            if (g.wt == 4) {
                if (g.num != f->num) return bad(d, "%s: group %u ended by END_GROUP %u", msg, f->num, g.num);
                return 0;
            }
        }
        return k < 0 ? -1 : bad(d, "%s field %u: a group without its END_GROUP", msg, f->num);
    }
    }
    return 0; /* 2 and 4: nothing left to skip */
}

/* The next field of r: 1 (its value in f->val for wire type 2, others
 * skipped), 0 at the end, -1 malformed. END_GROUP is returned to the group
 * skipper inside one, refused outside. */
static int next(struct dec *d, struct rd *r, struct field *f, const char *msg, int depth)
{
    uint64_t key, len;
    if (r->p == r->end) return 0;
    if (varint(r, &key)) return bad(d, "%s: a field key runs past the end", msg);
    f->num = (uint32_t)(key >> 3), f->wt = (int)(key & 7);
    if (key >> 3 == 0 || key >> 3 > 0x1fffffff) return bad(d, "%s: field number %llu", msg, (unsigned long long)(key >> 3));
    if (f->wt > 5) return bad(d, "%s field %u: wire type %d does not exist", msg, f->num, f->wt);
    if (f->wt == 4) return depth ? 1 : bad(d, "%s field %u: END_GROUP outside a group", msg, f->num);
    if (f->wt != 2) return skip(d, r, f, msg, depth) ? -1 : 1;
    if (varint(r, &len)) return bad(d, "%s field %u: its length runs past the end", msg, f->num);
    if (len > (uint64_t)(r->end - r->p))
        return bad(d, "%s field %u declares %llu bytes, %zu left", msg, f->num, (unsigned long long)len,
                   (size_t)(r->end - r->p));
    f->val.p = r->p, f->val.end = r->p + len;
    r->p += len;
    return 1;
}

/* A name fit for a label value: 1..max printable ASCII bytes. */
static int label_ok(const struct rd *v, size_t max)
{
    size_t n = (size_t)(v->end - v->p);
    if (!n || n > max) return 0;
    for (size_t i = 0; i < n; i++)
        if (v->p[i] < 0x21 || v->p[i] > 0x7e) return 0;
    return 1;
}

/* A copy of v in the arena, NUL-terminated. podres_decode sized the arena
 * at the message + 1: each string kept (the last name of a message, each id)
 * is copied once, from bytes of its own in the message that also held at
 * least a key and a length, so copies and NULs never outgrow it. */
static const char *keep(struct dec *d, const struct rd *v)
{
    size_t n = (size_t)(v->end - v->p);
    if ((size_t)(d->aend - d->ap) < n + 1) return NULL; /* cannot happen (see above); refused, not overrun */
    char *s = d->ap;
    memcpy(s, v->p, n);
    s[n] = 0;
    d->ap += n + 1;
    return s;
}

struct owner {
    const char *ns, *pod, *ctr; /* NULL: not a fit label value */
};

static int add(struct dec *d, const struct owner *o, const struct rd *id)
{
    size_t n = (size_t)(id->end - id->p);
    if (!o->ns || !o->pod || !o->ctr || !n || n > PODRES_ID_MAX || memchr(id->p, 0, n) || d->out->n >= PODRES_MAX_ENTRIES)
        return d->out->dropped++, 0;
    if (d->out->n == d->cap) {
        int nc = d->cap ? d->cap * 2 : 64;
        struct podres_entry *e = realloc(d->out->e, (size_t)nc * sizeof *e);
        if (!e) return bad(d, "out of memory for %d entries", nc);
        d->out->e = e, d->cap = nc;
    }
    struct podres_entry *e = &d->out->e[d->out->n++];
    e->id = keep(d, id), e->ns = o->ns, e->pod = o->pod, e->ctr = o->ctr;
    if (!e->id) return bad(d, "arena exhausted");
    return 0;
}

/* Every field numbered num (wire type 2) of message r, each passed to fn;
 * the others skipped. */
typedef int (*each_fn)(struct dec *, const struct owner *, const struct rd *);
static int each(struct dec *d, struct rd r, const char *msg, uint32_t num, each_fn fn, const struct owner *o)
{
    struct field f = {0};
    int k;
    while ((k = next(d, &r, &f, msg, 0)) > 0)
        if (f.num == num && f.wt == 2 && fn(d, o, &f.val)) return -1;
    return k;
}

/* The last field numbered num (wire type 2) of r, kept when it is a fit
 * label value of at most max bytes: *out, else NULL. */
static int scalar(struct dec *d, struct rd r, const char *msg, uint32_t num, size_t max, const char **out)
{
    struct field f = {0};
    struct rd v = {0};
    int k, seen = 0;
    while ((k = next(d, &r, &f, msg, 0)) > 0)
        if (f.num == num && f.wt == 2) v = f.val, seen = 1;
    if (k < 0) return -1;
    *out = seen && label_ok(&v, max) ? keep(d, &v) : NULL;
    return 0;
}

static int cdi_device(struct dec *d, const struct owner *o, const struct rd *m)
{
    struct field f = {0};
    struct rd r = *m, v = {0};
    int k;
    while ((k = next(d, &r, &f, "CDIDevice", 0)) > 0)
        if (f.num == 1 && f.wt == 2) v = f.val;
    return k < 0 ? -1 : v.p ? add(d, o, &v) : 0;
}
static int claim_resource(struct dec *d, const struct owner *o, const struct rd *m)
{
    return each(d, *m, "ClaimResource", 1, cdi_device, o);
}
static int dynamic_resource(struct dec *d, const struct owner *o, const struct rd *m)
{
    return each(d, *m, "DynamicResource", 4, claim_resource, o);
}
static int container_devices(struct dec *d, const struct owner *o, const struct rd *m)
{
    return each(d, *m, "ContainerDevices", 2, add, o);
}
static int container(struct dec *d, const struct owner *pod, const struct rd *m)
{
    struct owner o = *pod;
    if (scalar(d, *m, "ContainerResources", 1, PODRES_CTR_MAX, &o.ctr)) return -1;
    if (each(d, *m, "ContainerResources", 2, container_devices, &o)) return -1;
    return each(d, *m, "ContainerResources", 5, dynamic_resource, &o);
}
static int pod(struct dec *d, const struct owner *none, const struct rd *m)
{
    struct owner o = *none;
    if (scalar(d, *m, "PodResources", 1, PODRES_POD_MAX, &o.pod)) return -1;
    if (scalar(d, *m, "PodResources", 2, PODRES_NS_MAX, &o.ns)) return -1;
    return each(d, *m, "PodResources", 3, container, &o);
}

static int by_id(const void *a, const void *b)
{
    const struct podres_entry *x = a, *y = b;
    return strcmp(x->id, y->id);
}

int podres_decode(const uint8_t *msg, size_t len, struct podres *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    if (len > PODRES_MAX_RESPONSE) return snprintf(why, whylen, "a message of %zu bytes", len), -1;
    out->arena = malloc(len + 1);
    if (!out->arena) return snprintf(why, whylen, "out of memory"), -1;
    struct dec d = {.out = out, .ap = out->arena, .aend = out->arena + len + 1, .why = why, .whylen = whylen};
    struct owner none = {0};
    struct rd r = {msg, msg + len};
    if (each(&d, r, "ListPodResourcesResponse", 1, pod, &none)) {
        podres_free(out);
        return -1;
    }
    if (out->n) qsort(out->e, (size_t)out->n, sizeof *out->e, by_id);
    return 0;
}

void podres_free(struct podres *p)
{
    free(p->e);
    free(p->arena);
    memset(p, 0, sizeof *p);
}
