/* HTTP/1.0 loop of cudacap metrics --listen (httpd.h). Each connection has
 * one deadline for its request and one for the whole exchange, counted from
 * accept, not per read: a client trickling a byte a second is dropped at
 * HTTPD_REQUEST_MS like a silent one. When the table is full a new
 * connection evicts the oldest one that has not finished its request, so
 * idle connections cannot lock a scraper out. */
#include "cli/httpd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/controls.h"

enum { READING, WRITING };

struct conn {
    int fd;
    int state;
    long long t0; /* accept time, ms */
    unsigned long long seq; /* accept order */
    size_t got;
    char req[4096];
    char *out;
    size_t len, off;
};

static struct conn conns[HTTPD_MAX_CONN];
static int nconn;
static unsigned long long accepted;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void drop(int i)
{
    close(conns[i].fd);
    free(conns[i].out);
    conns[i] = conns[--nconn];
}

/* The connection to drop for a new one: the oldest that has sent nothing,
 * else the oldest still sending its request; -1 when all are answering. */
static int oldest_reading(void)
{
    int o = -1;
    for (int i = 0; i < nconn; i++) {
        const struct conn *c = &conns[i];
        if (c->state != READING) continue;
        if (o < 0 || (!c->got && conns[o].got) || (!c->got == !conns[o].got && c->seq < conns[o].seq)) o = i;
    }
    return o;
}

static char *fixed(const char *s, size_t *len)
{
    *len = strlen(s);
    return strdup(s);
}

/* The response to a complete request (body: the exposition, made on first
 * need this round, shared by the requests of the round). */
static char *respond(struct conn *c, char *(*body)(const void *, size_t *), const void *arg,
                     char **cache, size_t *clen, size_t *len)
{
    c->req[c->got] = 0;
    if (strncmp(c->req, "GET ", 4) != 0)
        return fixed("HTTP/1.0 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", len);
    const char *path = c->req + 4;
    size_t plen = strcspn(path, " ?\r\n");
    /* Liveness (a kubelet probe, a load balancer): the exporter answers.
     * It does not render the exposition: a probe every few seconds must
     * not read every container's state. */
    if (plen == 7 && !strncmp(path, "/health", 7))
        return fixed("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
                     "Connection: close\r\n\r\nOK\n", len);
    if (!((plen == 8 && !strncmp(path, "/metrics", 8)) || (plen == 1 && path[0] == '/')))
        return fixed("HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 32\r\n"
                     "Connection: close\r\n\r\ntry GET /metrics or GET /health\n", len);
    if (!*cache) *cache = body(arg, clen);
    if (!*cache) return fixed("HTTP/1.0 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n", len);
    char hdr[256];
    int h = snprintf(hdr, sizeof hdr,
                     "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     *clen);
    char *r = malloc((size_t)h + *clen);
    if (!r) return NULL;
    memcpy(r, hdr, (size_t)h);
    memcpy(r + h, *cache, *clen);
    *len = (size_t)h + *clen;
    return r;
}

/* Sends what the socket takes now; 1 when the connection is done. */
static int push(struct conn *c)
{
    while (c->off < c->len) {
        ssize_t w = send(c->fd, c->out + c->off, c->len - c->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        if (w <= 0) return 1;
        c->off += (size_t)w;
    }
    return 1;
}

struct round { /* the exposition, made at most once per poll round */
    char *(*body)(const void *, size_t *);
    const void *arg;
    char *cache;
    size_t clen;
};

/* Reads what the client sent; answers once the headers are complete.
 * Returns 1 when the connection is done. */
static int pull(struct conn *c, struct round *rd)
{
    ssize_t got = recv(c->fd, c->req + c->got, sizeof c->req - 1 - c->got, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return 1;
    if (got < 0) return 0;
    c->got += (size_t)got;
    c->req[c->got] = 0;
    if (!strstr(c->req, "\r\n\r\n") && !strstr(c->req, "\n\n") && c->got < sizeof c->req - 1) return 0;
    c->out = respond(c, rd->body, rd->arg, &rd->cache, &rd->clen, &c->len);
    c->state = WRITING;
    return !c->out || push(c);
}

/* Whether the listener is served: always, a full table evicting the oldest
 * connection still reading its request for the newcomer. */
static int CC_CONTROL_POINT(may_accept)(void) { return 1; }

static void accept_all(int lfd, long long now, long long *paused_until, struct round *rd)
{
    for (;;) {
        if (!may_accept()) return;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE) {
                int o = oldest_reading();
                if (o >= 0) {
                    drop(o);
                    continue;
                }
                *paused_until = now + 100; /* no descriptor to spare: no busy loop */
            }
            return;
        }
        if (nconn == HTTPD_MAX_CONN) {
            int o = oldest_reading();
            if (o < 0) { /* every slot is sending a response: this one waits its turn elsewhere */
                close(fd);
                continue;
            }
            drop(o);
        }
        struct conn *c = &conns[nconn++];
        memset(c, 0, sizeof *c);
        c->fd = fd;
        c->state = READING;
        c->t0 = now;
        c->seq = ++accepted;
        /* A scraper's request usually came with its connection: answer it
         * before later arrivals can push it out. */
        if (pull(c, rd)) drop(nconn - 1);
    }
}

int httpd_serve(int lfd, char *(*body)(const void *arg, size_t *len), const void *arg,
                volatile sig_atomic_t *stop)
{
    static struct pollfd pf[HTTPD_MAX_CONN + 1];
    long long paused_until = 0;
    while (!*stop) {
        long long now = now_ms();
        int n = 0, wait = 1000;
        int listening = now >= paused_until && may_accept();
        pf[n++] = (struct pollfd){.fd = listening ? lfd : -1, .events = POLLIN};
        for (int i = 0; i < nconn; i++) {
            long long end = conns[i].t0 + (conns[i].state == READING ? HTTPD_REQUEST_MS : HTTPD_RESPONSE_MS);
            if (end - now < wait) wait = end - now < 0 ? 0 : (int)(end - now);
            pf[n++] = (struct pollfd){.fd = conns[i].fd,
                                      .events = conns[i].state == READING ? POLLIN : POLLOUT};
        }
        if (now < paused_until && paused_until - now < wait) wait = (int)(paused_until - now);
        int r = poll(pf, (nfds_t)n, wait);
        if (r < 0 && errno != EINTR) return 0;
        now = now_ms();
        struct round rd = {body, arg, NULL, 0};
        /* Walk the table from its end: drop() moves the last entry into the
         * dropped one's place, which has then been visited already. Only
         * the connections polled this round (i < n - 1) have events. */
        for (int i = nconn - 1; i >= 0; i--) {
            struct conn *c = &conns[i];
            short ev = r > 0 && i + 1 < n ? pf[i + 1].revents : 0;
            int done = 0;
            if (c->state == READING && (ev & (POLLIN | POLLHUP | POLLERR))) {
                done = pull(c, &rd);
            } else if (c->state == WRITING && (ev & (POLLOUT | POLLHUP | POLLERR))) {
                done = push(c);
            }
            long long end = c->t0 + (c->state == READING ? HTTPD_REQUEST_MS : HTTPD_RESPONSE_MS);
            if (done || now >= end) drop(i);
        }
        if (r > 0 && (pf[0].revents & POLLIN)) accept_all(lfd, now, &paused_until, &rd);
        free(rd.cache);
    }
    while (nconn) drop(nconn - 1);
    return 0;
}
