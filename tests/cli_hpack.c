/* HPACK decoding (src/cli/hpack.c), the pod-resources client's reader of
 * the kubelet's trailers: blocks encoded by Debian's python3-hpack 4.0.0
 * (Huffman strings, incremental indexing, a later block naming the dynamic
 * table, a 256-byte table with evictions as in RFC 7541 C.6), then
 * malformed blocks (truncated, bad indices, EOS inside a string, bad
 * padding, oversized integers, random bytes), which must each be refused
 * without reading past the block. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli/hpack.h"

/* Generated with /usr/bin/python3 and hpack.Encoder(huffman=True). */
static const uint8_t grpc_0[] = {0x88, 0x5f, 0x8b, 0x1d, 0x75, 0xd0, 0x62, 0x0d, 0x26, 0x3d, 0x4c, 0x4d, 0x65, 0x64};
static const uint8_t grpc_1[] = {0x40, 0x88, 0x9a, 0xca, 0xc8, 0xb2, 0x12, 0x34, 0xda, 0x8f, 0x81, 0x77, 0x40, 0x89, 0x9a, 0xca, 0xc8, 0xb5, 0x25, 0x42, 0x07, 0x31, 0x7f, 0xa2, 0xac, 0xb6, 0x52, 0x64, 0x20, 0xc7, 0xa9, 0x49, 0x0b, 0x51, 0x8b, 0x25, 0xc5, 0x2a, 0x3a, 0x83, 0x21, 0x0a, 0x84, 0x28, 0x93, 0xa8, 0xc7, 0x71, 0xd8, 0xc5, 0x06, 0x8d, 0x8e, 0xb6, 0xc6, 0x5a, 0x0a, 0x9f};
static const uint8_t grpc_2[] = {0xbf, 0x7e, 0x84, 0x1c, 0xc3, 0x35, 0x5f};
static const uint8_t rfc_0[] = {0x3f, 0xe1, 0x01, 0x48, 0x82, 0x64, 0x02, 0x58, 0x85, 0xae, 0xc3, 0x77, 0x1a, 0x4b, 0x61, 0x96, 0xd0, 0x7a, 0xbe, 0x94, 0x10, 0x54, 0xd4, 0x44, 0xa8, 0x20, 0x05, 0x95, 0x04, 0x0b, 0x81, 0x66, 0xe0, 0x82, 0xa6, 0x2d, 0x1b, 0xff, 0x6e, 0x91, 0x9d, 0x29, 0xad, 0x17, 0x18, 0x63, 0xc7, 0x8f, 0x0b, 0x97, 0xc8, 0xe9, 0xae, 0x82, 0xae, 0x43, 0xd3};
static const uint8_t rfc_1[] = {0x48, 0x83, 0x64, 0x0e, 0xff, 0xc1, 0xc0, 0xbf};
static const uint8_t rfc_2[] = {0x88, 0xc1, 0x61, 0x96, 0xd0, 0x7a, 0xbe, 0x94, 0x10, 0x54, 0xd4, 0x44, 0xa8, 0x20, 0x05, 0x95, 0x04, 0x0b, 0x81, 0x66, 0xe0, 0x84, 0xa6, 0x2d, 0x1b, 0xff, 0xc0, 0x5a, 0x83, 0x9b, 0xd9, 0xab, 0x77, 0xad, 0x94, 0xe7, 0x82, 0x1d, 0xd7, 0xf2, 0xe6, 0xc7, 0xb3, 0x35, 0xdf, 0xdf, 0xcd, 0x5b, 0x39, 0x60, 0xd5, 0xaf, 0x27, 0x08, 0x7f, 0x36, 0x72, 0xc1, 0xab, 0x27, 0x0f, 0xb5, 0x29, 0x1f, 0x95, 0x87, 0x31, 0x60, 0x65, 0xc0, 0x03, 0xed, 0x4e, 0xe5, 0xb1, 0x06, 0x3d, 0x50, 0x07};

static char got[2048];
static void collect(const char *name, const char *value, size_t len, void *arg)
{
    (void)len, (void)arg;
    size_t l = strlen(got);
    snprintf(got + l, sizeof got - l, "%s=%s;", name, value);
}

static int dec(struct hpack *h, const uint8_t *b, size_t n)
{
    char why[96];
    got[0] = 0;
    return hpack_decode(h, b, n, collect, NULL, why, sizeof why);
}

#define EXPECT(h, arr, want)                                                                    \
    do {                                                                                        \
        CHECK(dec(h, arr, sizeof arr) == 0, "%s refused", #arr);                                \
        CHECK(!strcmp(got, want), "%s: got '%s', want '%s'", #arr, got, want);                  \
    } while (0)

int main(void)
{
    struct hpack h;
    memset(&h, 0, sizeof h);
    EXPECT(&h, grpc_0, ":status=200;content-type=application/grpc;");
    EXPECT(&h, grpc_1, "grpc-status=7;grpc-message=permission denied: no access to /var/lib/kubelet;");
    EXPECT(&h, grpc_2, "grpc-status=7;grpc-message=again;");
    hpack_free(&h);

    memset(&h, 0, sizeof h);
    h.max = 256, h.max_set = 1; /* as SETTINGS_HEADER_TABLE_SIZE 256 would */
    EXPECT(&h, rfc_0, ":status=302;cache-control=private;date=Mon, 21 Oct 2013 20:13:21 GMT;"
                      "location=https://www.example.com;");
    EXPECT(&h, rfc_1, ":status=307;cache-control=private;date=Mon, 21 Oct 2013 20:13:21 GMT;"
                      "location=https://www.example.com;");
    EXPECT(&h, rfc_2, ":status=200;cache-control=private;date=Mon, 21 Oct 2013 20:13:22 GMT;"
                      "location=https://www.example.com;content-encoding=gzip;"
                      "set-cookie=foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1;");
    CHECK(h.size <= 256, "table of %zu bytes over its 256", h.size);
    hpack_free(&h);

    /* Malformed: each refused. */
    static const uint8_t idx0[] = {0x80};                   /* index 0 */
    static const uint8_t idx_far[] = {0xff, 0x80, 0x01};    /* index 255: no such entry */
    static const uint8_t trunc_int[] = {0xff, 0xff, 0xff};  /* an integer cut short */
    static const uint8_t huge_int[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t trunc_str[] = {0x40, 0x05, 'a', 'b'}; /* a name of 5 bytes, 2 there */
    static const uint8_t eos[] = {0x40, 0x84, 0xff, 0xff, 0xff, 0xff, 0x00}; /* EOS inside a name */
    static const uint8_t pad0[] = {0x40, 0x81, 0x00, 0x00}; /* '0' (00000) then 000 padding: not ones */
    static const uint8_t big_size[] = {0x3f, 0xe1, 0xff, 0x03}; /* table size past 4096 */
    struct {
        const uint8_t *b;
        size_t n;
        const char *what;
    } badb[] = {{idx0, sizeof idx0, "index 0"},           {idx_far, sizeof idx_far, "index 255"},
                {trunc_int, sizeof trunc_int, "cut integer"}, {huge_int, sizeof huge_int, "huge integer"},
                {trunc_str, sizeof trunc_str, "cut string"},  {eos, sizeof eos, "EOS in a string"},
                {pad0, sizeof pad0, "zero padding"},          {big_size, sizeof big_size, "table size"}};
    for (size_t k = 0; k < sizeof badb / sizeof badb[0]; k++) {
        memset(&h, 0, sizeof h);
        CHECK(dec(&h, badb[k].b, badb[k].n) == -1, "%s accepted: '%s'", badb[k].what, got);
        hpack_free(&h);
    }
    /* Random blocks: refused or decoded, never a crash or a read past the
     * block (the sanitizer builds run this too). Each block is copied to a
     * heap buffer of its exact size, so a read past it is caught there. */
    uint64_t x = 0x9e3779b97f4a7c15ull;
    int ok = 0;
    memset(&h, 0, sizeof h);
    for (int it = 0; it < 20000; it++) {
        size_t n = 1 + (size_t)(x % 64);
        uint8_t *b = malloc(n);
        for (size_t i = 0; i < n; i++) x ^= x << 13, x ^= x >> 7, x ^= x << 17, b[i] = (uint8_t)x;
        if (dec(&h, b, n) == 0) ok++;
        free(b);
        if (it % 100 == 99) hpack_free(&h), memset(&h, 0, sizeof h);
    }
    hpack_free(&h);
    printf("hpack: vectors decoded, 8 malformed blocks refused, %d of 20000 random blocks decoded\n", ok);
    CHECK_EXIT();
}
