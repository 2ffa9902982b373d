/* cudacap metrics: Prometheus text exposition of every container under
 * ROOT, to stdout, to a file for the node exporter's textfile collector
 * (written whole, then renamed), or over HTTP (--listen): a single-threaded
 * HTTP/1.0 loop, one request per connection, bounded by socket timeouts so
 * a slow client cannot hold it. */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/render.h"

static void usage(FILE *f)
{
    fputs("usage: cudacap metrics [--root ROOT | ROOT] [--output FILE | --listen [ADDR]:PORT]\n"
          "\n"
          "Prometheus text exposition (version 0.0.4) of every container under ROOT, with\n"
          "DCGM-exporter style names and labels (container, gpu, UUID): cudacap_fb_used_bytes,\n"
          "cudacap_fb_limit_bytes, cudacap_sm_util_percent, cudacap_sm_limit_percent, ...\n"
          "(docs/cli.md lists them). Read-only, like status.\n"
          "\n"
          "  --output FILE         write FILE atomically (for the node exporter's textfile\n"
          "                        collector: FILE ends in .prom)\n"
          "  --listen [ADDR]:PORT  serve GET /metrics over HTTP until SIGTERM/SIGINT\n"
          "  --root ROOT           as for cudacap status\n",
          f);
}

/* The whole exposition into a malloc'ed buffer. */
static char *expose(const char *root, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) return NULL;
    struct snap **s = NULL;
    int k = snap_collect(root, &s);
    if (k < 0) k = 0; /* no ROOT yet: no containers (an exporter must not fail) */
    render_prom(f, s, k);
    snap_release(s, k);
    fclose(f);
    return buf;
}

static int write_file(const char *path, const char *buf, size_t len)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "we");
    if (!f) return -1;
    size_t w = fwrite(buf, 1, len, f);
    if (fclose(f) != 0 || w != len || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

static volatile sig_atomic_t stop; /* set by the signal handler only */
static void on_signal(int sig) { (void)sig; stop = 1; }

static void send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) return;
        p += w, n -= (size_t)w;
    }
}

static void serve_one(int c, const char *root)
{
    struct timeval tv = {2, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    char req[4096];
    size_t got = 0;
    while (got < sizeof req - 1) {
        ssize_t r = recv(c, req + got, sizeof req - 1 - got, 0);
        if (r <= 0) break;
        got += (size_t)r;
        req[got] = 0;
        if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n")) break;
    }
    req[got] = 0;
    char hdr[256];
    if (strncmp(req, "GET ", 4) != 0) {
        const char *m = "HTTP/1.0 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        send_all(c, m, strlen(m));
        return;
    }
    const char *path = req + 4;
    size_t plen = strcspn(path, " ?\r\n");
    if (!((plen == 8 && !strncmp(path, "/metrics", 8)) || (plen == 1 && path[0] == '/'))) {
        const char *m = "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 21\r\n"
                        "Connection: close\r\n\r\ntry GET /metrics ...\n";
        send_all(c, m, strlen(m));
        return;
    }
    size_t len = 0;
    char *body = expose(root, &len);
    if (!body) {
        const char *m = "HTTP/1.0 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n";
        send_all(c, m, strlen(m));
        return;
    }
    int h = snprintf(hdr, sizeof hdr,
                     "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     len);
    send_all(c, hdr, (size_t)h);
    send_all(c, body, len);
    free(body);
}

static int listen_on(const char *spec)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    if (!colon) cli_usage_error("--listen: \"%s\" is not [ADDR]:PORT", spec);
    size_t hl = (size_t)(colon - spec);
    if (hl >= sizeof host) cli_usage_error("--listen: address too long");
    memcpy(host, spec, hl);
    host[hl] = 0;
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') memmove(host, host + 1, hl - 2), host[hl - 2] = 0;
    long port = cli_parse_long("--listen port", colon + 1, 1, 65535);
    char ps[16];
    snprintf(ps, sizeof ps, "%ld", port);
    struct addrinfo hints, *ai;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int r = getaddrinfo(host[0] ? host : NULL, ps, &hints, &ai);
    if (r != 0) cli_usage_error("--listen: cannot resolve \"%s\": %s", host, gai_strerror(r));
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    int one = 1;
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 16) != 0) {
        cli_err("cannot listen on %s: %s", spec, strerror(errno));
        freeaddrinfo(ai);
        if (fd >= 0) close(fd);
        return -1;
    }
    freeaddrinfo(ai);
    return fd;
}

int cmd_metrics(int argc, char **argv)
{
    const char *root_opt = NULL, *pos = NULL, *out = NULL, *lis = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return usage(stdout), 0;
        else if (cli_opt_val(argc, argv, &i, "--root", &v)) root_opt = v;
        else if (cli_opt_val(argc, argv, &i, "--output", &v)) out = v;
        else if (cli_opt_val(argc, argv, &i, "--listen", &v)) lis = v;
        else if (argv[i][0] == '-') cli_usage_error("unknown option %s", argv[i]);
        else if (pos) cli_usage_error("unexpected argument \"%s\" (one ROOT only)", argv[i]);
        else pos = argv[i];
    }
    if (pos && root_opt) cli_usage_error("ROOT given twice (\"%s\" and --root %s)", pos, root_opt);
    if (out && lis) cli_usage_error("--output and --listen exclude each other");
    if (out && !*out) cli_usage_error("--output: empty path");
    const char *root = cli_default_root(pos ? pos : root_opt);
    if (!lis) {
        size_t len = 0;
        char *body = expose(root, &len);
        if (!body) return cli_err("out of memory"), 1;
        int rc = 0;
        if (out) {
            if (write_file(out, body, len) != 0) cli_err("cannot write %s: %s", out, strerror(errno)), rc = 1;
        } else if (fwrite(body, 1, len, stdout) != len || fflush(stdout) != 0) {
            rc = 1;
        }
        free(body);
        return rc;
    }
    int fd = listen_on(lis);
    if (fd < 0) return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: accept returns EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    fprintf(stderr, "cudacap metrics: serving %s on http://%s/metrics\n", root, lis);
    while (!stop) {
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno != EINTR) usleep(100000); /* EMFILE and the like: no busy loop */
            continue;
        }
        serve_one(c, root);
        close(c);
    }
    close(fd);
    return 0;
}
