/* The transport of podres.h: one unary gRPC call, /v1.PodResourcesLister/List,
 * over HTTP/2 with prior knowledge (h2c: what gRPC speaks on a unix socket),
 * the least of RFC 9113 a client of one request needs. Non-blocking socket,
 * every wait a poll bounded by one deadline for the whole call, so a kubelet
 * (or anything else at the path) that accepts and never answers costs at
 * most that. Every length from the peer is checked before it is used. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/podres.h"

#include "cli/hpack.h"
#include "common/controls.h"

#define H2_MAX_FRAME 16384 /* SETTINGS_MAX_FRAME_SIZE's default: we announce no other */
/* Raised once, on the connection and the stream, past the largest response
 * we accept: big nodes answer more than the default 64 KiB window, and with
 * this no further WINDOW_UPDATE is ever due. */
#define H2_WINDOW (PODRES_MAX_RESPONSE + 65536u)
#define GRPC_PREFIX 5 /* compressed flag, 4-byte big-endian length */

enum { F_DATA, F_HEADERS, F_PRIORITY, F_RST_STREAM, F_SETTINGS, F_PUSH_PROMISE, F_PING, F_GOAWAY,
       F_WINDOW_UPDATE, F_CONTINUATION };
#define FL_END_STREAM 0x1 /* DATA, HEADERS */
#define FL_ACK 0x1        /* SETTINGS, PING */
#define FL_END_HEADERS 0x4
#define FL_PADDED 0x8
#define FL_PRIORITY 0x20 /* HEADERS */
#define H2_MAX_BLOCK 16384 /* a response's header block (HEADERS + CONTINUATIONs) */

struct conn {
    int fd;
    int64_t deadline_ms; /* CLOCK_MONOTONIC */
    int budget_ms;
    uint64_t got;        /* bytes received, for messages */
    const char *phase;
    char *why;
    size_t whylen;
    struct hpack hp;   /* the response's header blocks, in order */
    int status;        /* grpc-status from the trailers; -1 none seen */
    char message[160]; /* grpc-message (percent-encoded as sent) */
};

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int fail(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct conn *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, c->whylen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Until fd is ready for events, or the deadline. */
static int wait_io(struct conn *c, short events)
{
    for (;;) {
        int64_t left = c->deadline_ms - now_ms();
        if (left <= 0)
            return fail(c, "no answer within %d ms (%s, %llu bytes received)", c->budget_ms, c->phase,
                        (unsigned long long)c->got);
        struct pollfd p = {.fd = c->fd, .events = events};
        int r = poll(&p, 1, (int)left);
        if (r > 0) return 0;
        if (r < 0 && errno != EINTR) return fail(c, "poll: %s", strerror(errno));
    }
}

static int send_all(struct conn *c, const uint8_t *b, size_t n)
{
    while (n) {
        ssize_t w = send(c->fd, b, n, MSG_NOSIGNAL);
        if (w > 0) b += w, n -= (size_t)w;
        else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (wait_io(c, POLLOUT)) return -1;
        } else return fail(c, "send (%s): %s", c->phase, w < 0 ? strerror(errno) : "nothing written");
    }
    return 0;
}

static int recv_full(struct conn *c, uint8_t *b, size_t n)
{
    while (n) {
        ssize_t r = recv(c->fd, b, n, 0);
        if (r > 0) b += r, n -= (size_t)r, c->got += (uint64_t)r;
        else if (r == 0)
            return fail(c, "the server closed the connection (%s, %llu bytes received)", c->phase,
                        (unsigned long long)c->got);
        else if (errno == EAGAIN || errno == EINTR) {
            if (wait_io(c, POLLIN)) return -1;
        } else return fail(c, "recv (%s): %s", c->phase, strerror(errno));
    }
    return 0;
}

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put32(uint8_t *p, uint32_t v) { p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v; }

/* A frame header at b; returns 9. */
static size_t frame(uint8_t *b, uint32_t len, int type, int flags, uint32_t stream)
{
    b[0] = len >> 16, b[1] = len >> 8, b[2] = len;
    b[3] = (uint8_t)type, b[4] = (uint8_t)flags;
    put32(b + 5, stream);
    return 9;
}

/* HPACK integer with an n-bit prefix (RFC 7541 5.1), the prefix's other bits 0. */
static size_t hpack_int(uint8_t *b, size_t v, int n)
{
    size_t max = ((size_t)1 << n) - 1, k = 0;
    if (v < max) return b[0] = (uint8_t)v, 1;
    b[k++] = (uint8_t)max;
    for (v -= max; v >= 128; v >>= 7) b[k++] = (uint8_t)(v % 128 + 128);
    b[k++] = (uint8_t)v;
    return k;
}

/* "Literal Header Field without Indexing, New Name" (0x00), both strings
 * raw (no Huffman): the server's decoder keeps no state from us. */
static size_t hpack_field(uint8_t *b, const char *name, const char *val)
{
    size_t k = 0, nl = strlen(name), vl = strlen(val);
    b[k++] = 0;
    k += hpack_int(b + k, nl, 7);
    memcpy(b + k, name, nl), k += nl;
    k += hpack_int(b + k, vl, 7);
    memcpy(b + k, val, vl), k += vl;
    return k;
}

/* The WINDOW_UPDATEs raising the connection's and the stream's windows to
 * H2_WINDOW (without them a response over 64 KiB stalls); their length. */
static size_t CC_CONTROL_POINT(window_updates)(uint8_t *b)
{
    size_t k = 0;
    for (uint32_t s = 0; s <= 1; s++) k += frame(b + k, 4, F_WINDOW_UPDATE, 0, s), put32(b + k, H2_WINDOW), k += 4;
    return k;
}

/* Preface, SETTINGS, HEADERS, the two WINDOW_UPDATEs, and the DATA frame
 * ending the stream: one write. */
static size_t request(uint8_t *b, int deadline_ms)
{
    char timeout[16];
    snprintf(timeout, sizeof timeout, "%dm", deadline_ms); /* the server may give up when we do */
    const char *const hdr[][2] = {
        {":method", "POST"}, {":scheme", "http"}, {":path", "/v1.PodResourcesLister/List"},
        {":authority", "localhost"}, {"content-type", "application/grpc"}, {"te", "trailers"},
        {"grpc-timeout", timeout},
    };
    size_t k = 0;
    memcpy(b, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24), k = 24;
    k += frame(b + k, 6, F_SETTINGS, 0, 0);
    b[k++] = 0, b[k++] = 2, put32(b + k, 0), k += 4; /* SETTINGS_ENABLE_PUSH = 0 */
    size_t h = k;
    k += 9;
    for (size_t i = 0; i < sizeof hdr / sizeof hdr[0]; i++) k += hpack_field(b + k, hdr[i][0], hdr[i][1]);
    frame(b + h, (uint32_t)(k - h - 9), F_HEADERS, FL_END_HEADERS, 1);
    k += window_updates(b + k);
    k += frame(b + k, GRPC_PREFIX, F_DATA, FL_END_STREAM, 1);
    memset(b + k, 0, GRPC_PREFIX); /* uncompressed, length 0: the empty ListPodResourcesRequest */
    return k + GRPC_PREFIX;
}

static int connect_unix(struct conn *c, const char *path, int *absent)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) return fail(c, "the path is longer than a socket path may be (%zu bytes)", sizeof a.sun_path - 1);
    memcpy(a.sun_path, path, strlen(path) + 1);
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) return fail(c, "socket: %s", strerror(errno));
    if (connect(c->fd, (struct sockaddr *)&a, sizeof a) == 0) return 0;
    int e = errno;
    if (e == ENOENT || e == ENOTDIR) return *absent = 1, fail(c, "no such socket");
    if (e == EAGAIN) return fail(c, "connect: the listener's backlog is full (a server that does not accept)");
    if (e == ECONNREFUSED) return fail(c, "connect: refused (no server listening, or not a socket)");
    if (e != EINPROGRESS) return fail(c, "connect: %s", strerror(e));
    if (wait_io(c, POLLOUT)) return -1;
    socklen_t l = sizeof e;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &l) != 0 || e)
        return fail(c, "connect: %s", strerror(e ? e : errno));
    return 0;
}

/* Appends DATA bytes to the message, checking the gRPC prefix as soon as it is in. */
static int take_data(struct conn *c, uint8_t **msg, size_t *len, size_t *cap, const uint8_t *d, size_t n)
{
    if (*len + n > PODRES_MAX_RESPONSE + GRPC_PREFIX)
        return fail(c, "the response exceeds %u bytes", PODRES_MAX_RESPONSE);
    if (*len + n > *cap) {
        size_t nc = *cap ? *cap : 65536;
        while (nc < *len + n) nc *= 2;
        if (nc > PODRES_MAX_RESPONSE + GRPC_PREFIX) nc = PODRES_MAX_RESPONSE + GRPC_PREFIX; /* still >= *len + n */
        uint8_t *m = realloc(*msg, nc);
        if (!m) return fail(c, "out of memory for a %zu-byte response", nc);
        *msg = m, *cap = nc;
    }
    memcpy(*msg + *len, d, n);
    *len += n;
    if (*len >= GRPC_PREFIX) {
        uint32_t want = be32(*msg + 1);
        if ((*msg)[0] != 0) return fail(c, "a compressed gRPC message (flag %u), though none was asked for", (*msg)[0]);
        if (want > PODRES_MAX_RESPONSE)
            return fail(c, "the gRPC message declares %u bytes, more than the %u accepted", want, PODRES_MAX_RESPONSE);
        if (*len > GRPC_PREFIX + (size_t)want) return fail(c, "more than one gRPC message in a unary response");
    }
    return 0;
}

static void on_field(const char *name, const char *value, size_t len, void *arg)
{
    struct conn *c = arg;
    (void)len;
    if (!strcmp(name, "grpc-status")) {
        char *end;
        long v = strtol(value, &end, 10);
        c->status = *value && !*end && v >= 0 && v < 100 ? (int)v : 2; /* unparsable: UNKNOWN */
    } else if (!strcmp(name, "grpc-message")) {
        snprintf(c->message, sizeof c->message, "%s", value);
        for (char *p = c->message; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e) *p = '?';
    }
}

/* A header block's fragment: HEADERS less its padding and priority fields,
 * or a CONTINUATION's payload, appended to blk (decoded at END_HEADERS). */
static int block_add(struct conn *c, uint8_t *blk, size_t *bl, const uint8_t *p, size_t n, int fl, int type)
{
    size_t pad = 0, skip = 0;
    if (type == F_HEADERS && (fl & FL_PADDED)) {
        if (n < 1) return fail(c, "a padded HEADERS frame without its pad length");
        pad = p[0], skip = 1;
    }
    if (type == F_HEADERS && (fl & FL_PRIORITY)) skip += 5;
    if (skip + pad > n) return fail(c, "HEADERS padding or priority longer than the frame");
    size_t k = n - skip - pad;
    if (*bl + k > H2_MAX_BLOCK) return fail(c, "a header block of more than %d bytes", H2_MAX_BLOCK);
    memcpy(blk + *bl, p + skip, k);
    *bl += k;
    return 0;
}

static int block_end(struct conn *c, const uint8_t *blk, size_t bl)
{
    char why[96];
    if (hpack_decode(&c->hp, blk, bl, on_field, c, why, sizeof why))
        return fail(c, "the response headers cannot be read (%s)", why);
    return 0;
}

/* Reads frames until stream 1 ends; the DATA payloads into *msg. */
static int read_response(struct conn *c, uint8_t **msg, size_t *len)
{
    static uint8_t pay[H2_MAX_FRAME]; /* one call at a time (single-threaded command) */
    static uint8_t blk[H2_MAX_BLOCK];
    size_t bl = 0;
    uint8_t h[9];
    size_t cap = 0;
    int settings = 0, in_block = 0, block_ends_stream = 0;
    c->phase = "waiting for the server's SETTINGS";
    for (;;) {
        if (recv_full(c, h, 9)) return -1;
        uint32_t n = (uint32_t)h[0] << 16 | (uint32_t)h[1] << 8 | h[2], sid = be32(h + 5) & 0x7fffffff;
        int type = h[3], fl = h[4];
        if (!settings && !memcmp(h, "HTTP/", 5)) return fail(c, "an HTTP/1 server, not HTTP/2 (gRPC)");
        if (n > H2_MAX_FRAME && !settings)
            return fail(c, "the first frame declares %u bytes (type %d): not an HTTP/2 (gRPC) server", n, type);
        if (n > H2_MAX_FRAME) return fail(c, "a frame of %u bytes (type %d), more than the %d allowed", n, type, H2_MAX_FRAME);
        if (!settings && type != F_SETTINGS)
            return fail(c, "the server's first frame is of type %d, not SETTINGS: not an HTTP/2 (gRPC) server", type);
        if (in_block && (type != F_CONTINUATION || sid != 1))
            return fail(c, "a header block interrupted by a frame of type %d", type);
        if (recv_full(c, pay, n)) return -1;
        switch (type) {
        case F_DATA: {
            if (sid != 1) return fail(c, "DATA on stream %u", sid);
            const uint8_t *d = pay;
            size_t dl = n;
            if (fl & FL_PADDED) {
                if (n < 1 || pay[0] >= n) return fail(c, "DATA padding longer than its frame");
                d = pay + 1, dl = n - 1 - pay[0];
            }
            if (take_data(c, msg, len, &cap, d, dl)) return -1;
            if (fl & FL_END_STREAM) return 0;
            break;
        }
        case F_HEADERS: /* the response headers or the trailers */
            if (sid != 1) return fail(c, "HEADERS on stream %u", sid);
            c->phase = "reading the response";
            block_ends_stream = fl & FL_END_STREAM;
            bl = 0;
            if (block_add(c, blk, &bl, pay, n, fl, type)) return -1;
            if (!(fl & FL_END_HEADERS)) in_block = 1;
            else if (block_end(c, blk, bl)) return -1;
            else if (block_ends_stream) return 0;
            break;
        case F_CONTINUATION:
            if (!in_block) return fail(c, "CONTINUATION without HEADERS");
            if (block_add(c, blk, &bl, pay, n, fl, type)) return -1;
            if (fl & FL_END_HEADERS) {
                in_block = 0;
                if (block_end(c, blk, bl)) return -1;
                if (block_ends_stream) return 0;
            }
            break;
        case F_SETTINGS:
            if (sid != 0) return fail(c, "SETTINGS on stream %u", sid);
            if (fl & FL_ACK) {
                if (n) return fail(c, "a SETTINGS acknowledgement with a payload");
                break;
            }
            if (n % 6) return fail(c, "SETTINGS of %u bytes, not a multiple of 6", n);
            if (!settings) c->phase = "waiting for the response";
            settings = 1;
            if (send_all(c, h, frame(h, 0, F_SETTINGS, FL_ACK, 0))) return -1;
            break;
        case F_PING:
            if (sid != 0 || n != 8) return fail(c, "a PING of %u bytes on stream %u", n, sid);
            if (!(fl & FL_ACK)) {
                uint8_t b[17];
                frame(b, 8, F_PING, FL_ACK, 0);
                memcpy(b + 9, pay, 8);
                if (send_all(c, b, sizeof b)) return -1;
            }
            break;
        case F_GOAWAY:
            if (sid != 0 || n < 8) return fail(c, "a GOAWAY of %u bytes on stream %u", n, sid);
            /* Last stream 1 or more: the server still finishes ours. */
            if ((be32(pay) & 0x7fffffff) < 1)
                return fail(c, "the server went away before taking the request (GOAWAY, error code %u)", be32(pay + 4));
            break;
        case F_RST_STREAM:
            if (n != 4) return fail(c, "a RST_STREAM of %u bytes", n);
            if (sid == 1) return fail(c, "the server reset the stream (RST_STREAM, error code %u)", be32(pay));
            break;
        case F_PUSH_PROMISE:
            return fail(c, "PUSH_PROMISE, though push is disabled");
        default: /* WINDOW_UPDATE, PRIORITY, unknown types: nothing to do (RFC 9113 4.1) */
            break;
        }
    }
}

/* gRPC's status codes (grpc/doc/statuscodes.md). */
static const char *grpc_code_name(int s)
{
    static const char *const names[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
                                        "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
                                        "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
                                        "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
                                        "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
    return s >= 0 && s < (int)(sizeof names / sizeof names[0]) ? names[s] : "unknown code";
}

uint8_t *podres_call(const char *path, int deadline_ms, size_t *len, int *absent, char *why, size_t whylen)
{
    struct conn c = {.fd = -1, .deadline_ms = now_ms() + deadline_ms, .budget_ms = deadline_ms,
                     .phase = "connecting", .why = why, .whylen = whylen, .status = -1};
    uint8_t req[512], *msg = NULL;
    *len = 0, *absent = 0;
    int r = connect_unix(&c, path, absent);
    if (!r) c.phase = "sending the request", r = send_all(&c, req, request(req, deadline_ms));
    if (!r) r = read_response(&c, &msg, len);
    if (c.fd >= 0) close(c.fd);
    hpack_free(&c.hp);
    /* The trailers' grpc-status: 0 or absent with one complete message is
     * success; any other status is the call's error, named. */
    if (!r && c.status > 0)
        r = fail(&c, "the kubelet answered gRPC status %d (%s)%s%s", c.status, grpc_code_name(c.status),
                 c.message[0] ? ": " : "", c.message);
    if (!r && *len < GRPC_PREFIX)
        r = fail(&c, "the call ended without a response message (%zu bytes) and without an error status",
                 *len);
    if (!r && *len != GRPC_PREFIX + (size_t)be32(msg + 1))
        r = fail(&c, "the gRPC message is truncated: %zu of %u bytes", *len - GRPC_PREFIX, be32(msg + 1));
    if (r) {
        free(msg);
        return NULL;
    }
    *len -= GRPC_PREFIX;
    memmove(msg, msg + GRPC_PREFIX, *len);
    return msg;
}

int podres_list(const char *path, int deadline_ms, struct podres *out, char *why, size_t whylen)
{
    size_t len;
    int absent;
    memset(out, 0, sizeof *out);
    uint8_t *msg = podres_call(path, deadline_ms, &len, &absent, why, whylen);
    if (!msg) return absent ? PODRES_ABSENT : PODRES_FAILED;
    int r = podres_decode(msg, len, out, why, whylen);
    free(msg);
    return r ? PODRES_FAILED : PODRES_OK;
}
