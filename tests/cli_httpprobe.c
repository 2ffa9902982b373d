/* cudacap_httpprobe: hostile and normal clients of cudacap metrics --listen
 * (tests/cli_metrics_stall.sh, tests/faults_node.sh). Written in C: the CI
 * image has no python.
 *   idle PORT N SECONDS       open N connections, send nothing, hold them;
 *                             reports how many the server closed
 *   slowloris PORT N SECONDS  N connections, each sending its request one
 *                             byte a second; reports when the server closed
 *                             them ("closed K of N, last after MS ms")
 *   scrape PORT MAXMS         GET /metrics; exit 0 when a 200 came back whole
 *                             within MAXMS ms (prints the time either way)
 * Prints "ready" once its connections are open. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

static int scrape(int port, long maxms)
{
    long long t0 = now_ms();
    int fd = dial(port);
    if (fd < 0) return perror("connect"), 1;
    const char *req = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n";
    if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) return perror("send"), 1;
    static char buf[1 << 20];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof buf - 1 && (r = recv(fd, buf + got, sizeof buf - 1 - got, 0)) > 0) got += (size_t)r;
    buf[got] = 0;
    close(fd);
    long long ms = now_ms() - t0;
    int ok = !strncmp(buf, "HTTP/1.0 200 OK", 15) && strstr(buf, "cudacap_processes");
    printf("scrape: %s after %lld ms (%zu bytes)\n", ok ? "200" : "no 200", ms, got);
    return ok && ms <= maxms ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s idle|slowloris PORT N SECONDS | scrape PORT MAXMS\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[2]);
    if (!strcmp(argv[1], "scrape")) return scrape(port, atol(argv[3]));
    if (argc < 5) return 2;
    int n = atoi(argv[3]), slow = !strcmp(argv[1], "slowloris");
    long long secs = atoll(argv[4]);
    int *fd = calloc((size_t)n, sizeof *fd);
    long long *closed = calloc((size_t)n, sizeof *closed);
    if (!fd || !closed) return 1;
    for (int i = 0; i < n; i++)
        if ((fd[i] = dial(port)) < 0) return fprintf(stderr, "connection %d: %s\n", i, strerror(errno)), 1;
    printf("ready\n");
    fflush(stdout);
    const char *req = "GET /metrics HTTP/1.0\r\nHost: slow\r\n\r\n";
    long long t0 = now_ms(), next = t0;
    size_t sent = 0;
    int nclosed = 0;
    long long last = 0;
    while (now_ms() - t0 < secs * 1000) {
        if (slow && now_ms() >= next && sent < strlen(req) - 1) { /* never the final byte */
            for (int i = 0; i < n; i++)
                if (!closed[i] && send(fd[i], req + sent, 1, MSG_NOSIGNAL) != 1) closed[i] = now_ms() - t0;
            sent++;
            next += 1000;
        }
        int open_n = 0;
        for (int i = 0; i < n; i++) {
            if (closed[i]) continue;
            struct pollfd p = {.fd = fd[i], .events = POLLIN};
            char c;
            if (poll(&p, 1, 0) == 1 && recv(fd[i], &c, 1, MSG_DONTWAIT) <= 0) closed[i] = now_ms() - t0;
            else open_n++;
        }
        if (slow && !open_n) break; /* every one dropped: nothing more to see */
        usleep(20000);
    }
    for (int i = 0; i < n; i++)
        if (closed[i]) nclosed++, last = closed[i] > last ? closed[i] : last;
    printf("closed %d of %d, last after %lld ms\n", nclosed, n, last);
    return 0;
}
