/* The HTTP side of cudacap metrics --listen: one thread, a poll loop over
 * non-blocking sockets, so no client can hold the others up. */
#ifndef CC_CLI_HTTPD_H
#define CC_CLI_HTTPD_H

#include <signal.h>
#include <stddef.h>

#define HTTPD_REQUEST_MS 2000   /* from accept to the end of the request's headers */
#define HTTPD_RESPONSE_MS 10000 /* from accept to the last byte of the response */
#define HTTPD_MAX_CONN 64       /* open connections; the oldest still sending its request goes first */

/* Serves GET /metrics (and /) on the listening socket lfd until *stop:
 * body(arg, &len) makes the response body (malloc'ed), once per poll round
 * however many requests are ready. Returns 0. */
int httpd_serve(int lfd, char *(*body)(const void *arg, size_t *len), const void *arg,
                volatile sig_atomic_t *stop);

#endif
