/* cli.podres.decode: the pod-resources protobuf decoder (src/cli/podres_pb.c)
 * on hand-built messages: what it keeps (last scalar, unknown fields of
 * every wire type skipped, DRA CDI names, sorted ids), what it leaves out
 * (unfit names, empty ids), each malformation refused with a message naming
 * it, and 200000 deterministic mutations of a valid message that must
 * neither crash (CI runs this under ASan/UBSan) nor yield a half-made entry. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli/podres.h"

struct buf {
    uint8_t b[8192];
    size_t n;
};

static void raw(struct buf *o, const void *p, size_t n)
{
    if (o->n + n > sizeof o->b) abort();
    memcpy(o->b + o->n, p, n);
    o->n += n;
}
static void varint(struct buf *o, uint64_t v)
{
    uint8_t c;
    for (; v >= 0x80; v >>= 7) c = (uint8_t)(v | 0x80), raw(o, &c, 1);
    c = (uint8_t)v, raw(o, &c, 1);
}
static void key(struct buf *o, uint32_t num, int wt) { varint(o, (uint64_t)num << 3 | (uint64_t)wt); }
static void ld(struct buf *o, uint32_t num, const void *p, size_t n) { key(o, num, 2), varint(o, n), raw(o, p, n); }
static void str(struct buf *o, uint32_t num, const char *s) { ld(o, num, s, strlen(s)); }
static void sub(struct buf *o, uint32_t num, const struct buf *m) { ld(o, num, m->b, m->n); }

/* One unknown field of every wire type, a group holding two more. */
static void unknown(struct buf *o)
{
    key(o, 90, 0), varint(o, UINT64_MAX);
    key(o, 91, 1), raw(o, "12345678", 8);
    key(o, 92, 5), raw(o, "1234", 4);
    key(o, 93, 3), str(o, 1, "in a group"), key(o, 2, 0), varint(o, 7), key(o, 93, 4);
    str(o, 94, "skipped");
}

/* PodResources{pod, ns, containers: {ctr, devices{ids}, dynamic{cdi}}} */
static void pod(struct buf *o, const char *ns, const char *name, const char *ctr, const char *id, const char *cdi)
{
    struct buf devs = {0}, c = {0}, p = {0}, dyn = {0}, claim = {0}, cd = {0};
    str(&devs, 1, "cudacap.io/cap"), unknown(&devs);
    if (id) str(&devs, 2, id);
    unknown(&c), sub(&c, 2, &devs);
    if (cdi) {
        str(&cd, 1, cdi), sub(&claim, 1, &cd), str(&claim, 2, "cap.cudacap.io");
        str(&dyn, 2, "claim"), sub(&dyn, 4, &claim), sub(&c, 5, &dyn);
    }
    str(&c, 1, ctr); /* after the devices: order is free */
    sub(&p, 3, &c), str(&p, 1, "not-this-name"), unknown(&p), str(&p, 2, ns), str(&p, 1, name);
    sub(o, 1, &p);
}

static int decode(const struct buf *m, struct podres *p, char *why)
{
    return podres_decode(m->b, m->n, p, why, 256);
}

static void expect_bad(const char *what, const struct buf *m, const char *phrase)
{
    struct podres p;
    char why[256] = "";
    int r = decode(m, &p, why);
    CHECK(r == -1 && strstr(why, phrase), "%s: rc %d, \"%s\", want \"%s\"", what, r, why, phrase);
    if (!r) podres_free(&p);
}

int main(void)
{
    struct buf m = {0};
    struct podres p;
    char why[256];
    pod(&m, "ml", "trainer-0", "main", "cudacap.io/cap=job1", NULL);
    pod(&m, "ml", "eval-0", "eval", NULL, "cudacap.io/cap=job2");
    pod(&m, "a", "bad name", "c", "dropped-1", NULL);  /* a space: no label value */
    pod(&m, "a", "p", "c", "", NULL);                  /* an empty id */
    pod(&m, "b", "p", "c", "aaa-first", NULL);
    unknown(&m);
    CHECK(decode(&m, &p, why) == 0, "valid: %s", why);
    CHECK(p.n == 3 && p.dropped == 2, "n %d dropped %d", p.n, p.dropped);
    if (p.n == 3) {
        CHECK(!strcmp(p.e[0].id, "aaa-first"), "sorted: %s", p.e[0].id);
        CHECK(!strcmp(p.e[1].id, "cudacap.io/cap=job1") && !strcmp(p.e[1].ns, "ml") &&
                  !strcmp(p.e[1].pod, "trainer-0") && !strcmp(p.e[1].ctr, "main"),
              "job1: %s %s/%s/%s", p.e[1].id, p.e[1].ns, p.e[1].pod, p.e[1].ctr);
        CHECK(!strcmp(p.e[2].id, "cudacap.io/cap=job2") && !strcmp(p.e[2].pod, "eval-0"), "DRA: %s %s", p.e[2].id,
              p.e[2].pod);
    }
    podres_free(&p);
    struct buf empty = {0};
    CHECK(decode(&empty, &p, why) == 0 && p.n == 0, "empty message");
    podres_free(&p);

    struct buf b = {0};
    raw(&b, "\x0a\x05", 2), raw(&b, "abc", 3);
    expect_bad("length past the end", &b, "declares 5 bytes, 3 left");
    b.n = 0, raw(&b, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
    expect_bad("an 11-byte varint", &b, "varint runs past the end");
    b.n = 0, raw(&b, "\x0e\x00", 2);
    expect_bad("wire type 6", &b, "wire type 6");
    b.n = 0, raw(&b, "\x00\x00", 2);
    expect_bad("field number 0", &b, "field number 0");
    b.n = 0, key(&b, 7, 4);
    expect_bad("END_GROUP outside a group", &b, "outside a group");
    b.n = 0, key(&b, 7, 3), key(&b, 8, 4);
    expect_bad("a group closed by another number", &b, "ended by END_GROUP 8");
    b.n = 0, key(&b, 7, 3);
    expect_bad("a group never closed", &b, "without its END_GROUP");
    b.n = 0;
    for (int i = 0; i < 40; i++) key(&b, 7, 3);
    expect_bad("groups nested 40 deep", &b, "deeper than 16");
    b.n = 0, key(&b, 7, 1), raw(&b, "1234", 4);
    expect_bad("a short fixed64", &b, "8-byte fixed value, 4 bytes left");
    b.n = 0, raw(&b, "\x0a", 1);
    expect_bad("a length missing", &b, "its length runs past the end");
    /* Inside a nested message: the pod's declared length fits, its container's does not. */
    struct buf inner = {0}, outer = {0};
    raw(&inner, "\x1a\x40", 2), raw(&inner, "short", 5);
    sub(&outer, 1, &inner);
    expect_bad("nested length past its message", &outer, "PodResources field 3 declares 64 bytes, 5 left");

    /* Mutations: flipped bytes and cuts; every result a clean answer. */
    uint64_t x = 0x9e3779b97f4a7c15u;
    long okn = 0, badn = 0;
    for (int it = 0; it < 200000; it++) {
        struct buf t = m;
        int flips = 1 + (int)(x % 6);
        for (int j = 0; j < flips; j++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            t.b[x % t.n] = (uint8_t)(x >> 32);
        }
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (x % 4 == 0) t.n = (size_t)(x >> 8) % t.n;
        uint8_t *exact = malloc(t.n ? t.n : 1); /* exact size: ASan sees any overread */
        memcpy(exact, t.b, t.n);
        if (podres_decode(exact, t.n, &p, why, sizeof why) == 0) {
            okn++;
            for (int i = 0; i < p.n; i++) {
                const struct podres_entry *e = &p.e[i];
                CHECK(e->id && e->ns && e->pod && e->ctr && *e->id && strlen(e->id) <= PODRES_ID_MAX &&
                          strlen(e->ns) <= PODRES_NS_MAX && strlen(e->pod) <= PODRES_POD_MAX,
                      "mutation %d: entry %d half-made", it, i);
                if (i) CHECK(strcmp(p.e[i - 1].id, e->id) <= 0, "mutation %d: unsorted", it);
            }
            podres_free(&p);
        } else {
            badn++;
            CHECK(!strncmp(why, "malformed protobuf: ", 20) && !strstr(why, "arena"), "mutation %d: %s", it, why);
        }
        free(exact);
    }
    printf("mutations: %ld decoded, %ld refused\n", okn, badn);
    CHECK(okn > 1000 && badn > 1000, "both outcomes seen");
    CHECK_EXIT();
}
