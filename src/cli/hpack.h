/* HPACK header-block decoding (RFC 7541) for the pod-resources client:
 * enough to read a gRPC response's trailers (grpc-status, grpc-message). */
#ifndef CC_CLI_HPACK_H
#define CC_CLI_HPACK_H

#include <stddef.h>
#include <stdint.h>

#define HPACK_MAX_TABLE 4096 /* SETTINGS_HEADER_TABLE_SIZE's default; we never raise it */
#define HPACK_MAX_ENTRIES (HPACK_MAX_TABLE / 32)

/* The dynamic table: one per connection, zeroed before the first block. */
struct hpack {
    char *name[HPACK_MAX_ENTRIES], *value[HPACK_MAX_ENTRIES]; /* [head] newest */
    int head, count;
    size_t size, max; /* bytes as RFC 7541 4.1 counts them */
    int max_set;      /* 0: max is still the default, HPACK_MAX_TABLE */
};

/* Called for each decoded field; names and values are NUL-terminated
 * copies valid during the call (a value may hold NUL bytes: len). */
typedef void (*hpack_field_fn)(const char *name, const char *value, size_t len, void *arg);

/* Decodes one complete header block (HEADERS + CONTINUATIONs). 0, or -1
 * with why filled (a malformed block: the connection cannot go on). */
int hpack_decode(struct hpack *h, const uint8_t *b, size_t n, hpack_field_fn fn, void *arg, char *why,
                 size_t wlen);

/* Frees the table's entries. */
void hpack_free(struct hpack *h);

#endif
