/* HPACK decoding (hpack.h). Every length and index read from the peer is
 * checked before use; nothing here can read past the block. */
#include "cli/hpack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/hpack_tables.inc"

#define MAX_STR 4096

static int bad(char *why, size_t wlen, const char *what)
{
    snprintf(why, wlen, "HPACK: %s", what);
    return -1;
}

/* An integer with an N-bit prefix (RFC 7541 5.1); at most 2^28. */
static int get_int(const uint8_t *b, size_t n, size_t *at, int bits, uint32_t *out)
{
    if (*at >= n) return -1;
    uint32_t mask = (1u << bits) - 1, v = b[(*at)++] & mask;
    if (v < mask) return *out = v, 0;
    for (int shift = 0; shift <= 21; shift += 7) {
        if (*at >= n) return -1;
        uint8_t c = b[(*at)++];
        v += (uint32_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) return *out = v, 0;
    }
    return -1; /* longer than any length we accept */
}

/* Huffman (RFC 7541 5.2, Appendix B), bit by bit against the canonical
 * code: codes of one length are consecutive, in symbol order. */
static int huff_decode(const uint8_t *s, size_t n, char *out, size_t cap, size_t *len)
{
    static int ready;
    static uint32_t first[31], count[31], base[31];
    static uint16_t sym[257];
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) { /* the CLI is one thread here; idempotent anyway */
        uint32_t k = 0, code = 0;
        for (int l = 1; l <= 30; l++) {
            base[l] = k, first[l] = code, count[l] = 0;
            for (int i = 0; i < 257; i++)
                if (huff[i].len == l) {
                    if (huff[i].code != code + count[l]) return -1; /* not canonical: the table is wrong */
                    sym[k++] = (uint16_t)i, count[l]++;
                }
            code = (code + count[l]) << 1;
        }
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    uint32_t code = 0;
    int l = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        for (int bit = 7; bit >= 0; bit--) {
            code = code << 1 | ((s[i] >> bit) & 1u), l++;
            if (l > 30) return -1;
            if (count[l] && code >= first[l] && code - first[l] < count[l]) {
                uint16_t c = sym[base[l] + code - first[l]];
                if (c == 256 || o + 1 >= cap) return -1; /* EOS in a string; too long */
                out[o++] = (char)c;
                code = 0, l = 0;
            }
        }
    /* Padding: at most 7 bits, all ones (the EOS code's first bits). */
    if (l > 7 || code != (1u << l) - 1) return -1;
    out[o] = 0;
    *len = o;
    return 0;
}

static int get_str(const uint8_t *b, size_t n, size_t *at, char *out, size_t *len)
{
    if (*at >= n) return -1;
    int h = b[*at] & 0x80;
    uint32_t l;
    if (get_int(b, n, at, 7, &l) || l > n - *at) return -1;
    const uint8_t *s = b + *at;
    *at += l;
    if (h) return huff_decode(s, l, out, MAX_STR, len);
    if (l + 1 > MAX_STR) return -1;
    memcpy(out, s, l);
    out[l] = 0;
    *len = l;
    return 0;
}

static size_t entry_size(const char *nm, const char *v) { return 32 + strlen(nm) + strlen(v); }

static void evict_to(struct hpack *h, size_t max)
{
    while (h->count && h->size > max) {
        int old = (h->head + h->count - 1) % HPACK_MAX_ENTRIES; /* the oldest */
        h->size -= entry_size(h->name[old], h->value[old]);
        free(h->name[old]), free(h->value[old]);
        h->name[old] = h->value[old] = NULL;
        h->count--;
    }
}

/* Adds a field at the front (newest), evicting as 4.4 says; a field larger
 * than the table empties it and is not added. */
static int add(struct hpack *h, const char *nm, const char *v)
{
    size_t max = h->max_set ? h->max : HPACK_MAX_TABLE, sz = entry_size(nm, v);
    evict_to(h, sz > max ? 0 : max - sz);
    if (sz > max) return 0;
    if (h->count == HPACK_MAX_ENTRIES) return -1; /* cannot happen: 32 bytes an entry */
    char *a = strdup(nm), *b = strdup(v);
    if (!a || !b) return free(a), free(b), -1;
    h->head = (h->head + HPACK_MAX_ENTRIES - 1) % HPACK_MAX_ENTRIES;
    h->name[h->head] = a, h->value[h->head] = b;
    h->count++, h->size += sz;
    return 0;
}

/* Index i (1-based) of the static then the dynamic table. */
static int lookup(const struct hpack *h, uint32_t i, const char **nm, const char **v)
{
    if (i >= 1 && i <= 61) return *nm = static_tab[i - 1][0], *v = static_tab[i - 1][1], 0;
    if (i > 61 && i - 62 < (uint32_t)h->count) {
        int k = (h->head + (int)(i - 62)) % HPACK_MAX_ENTRIES;
        return *nm = h->name[k], *v = h->value[k], 0;
    }
    return -1;
}

int hpack_decode(struct hpack *h, const uint8_t *b, size_t n, hpack_field_fn fn, void *arg, char *why,
                 size_t wlen)
{
    char name[MAX_STR], value[MAX_STR];
    size_t at = 0;
    while (at < n) {
        uint8_t c = b[at];
        uint32_t i;
        const char *nm, *v;
        size_t nl, vl;
        if (c & 0x80) { /* indexed field (6.1) */
            if (get_int(b, n, &at, 7, &i) || lookup(h, i, &nm, &v)) return bad(why, wlen, "a bad index");
            fn(nm, v, strlen(v), arg);
            continue;
        }
        if ((c & 0xe0) == 0x20) { /* table size update (6.3) */
            if (get_int(b, n, &at, 5, &i) || i > HPACK_MAX_TABLE) return bad(why, wlen, "a bad table size");
            h->max = i, h->max_set = 1;
            evict_to(h, i);
            continue;
        }
        int incr = (c & 0xc0) == 0x40; /* with incremental indexing (6.2.1), else 6.2.2/6.2.3 */
        if (get_int(b, n, &at, incr ? 6 : 4, &i)) return bad(why, wlen, "a bad field");
        if (i) {
            if (lookup(h, i, &nm, &v)) return bad(why, wlen, "a bad name index");
            snprintf(name, sizeof name, "%s", nm);
        } else if (get_str(b, n, &at, name, &nl)) {
            return bad(why, wlen, "a bad name");
        }
        if (get_str(b, n, &at, value, &vl)) return bad(why, wlen, "a bad value");
        fn(name, value, vl, arg);
        if (incr && add(h, name, value)) return bad(why, wlen, "out of memory");
    }
    return 0;
}

void hpack_free(struct hpack *h)
{
    evict_to(h, 0);
}
