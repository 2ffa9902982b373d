/* The kubelet's pod-resources API (v1.PodResourcesLister/List), as
 * dcgm-exporter's Kubernetes mode reads it: which pod and container each
 * allocated device id belongs to. podres.c speaks gRPC over HTTP/2 (h2c)
 * on the kubelet's unix socket, podres_pb.c decodes the protobuf answer;
 * no library beyond libc. Every byte from the socket is untrusted. */
#ifndef CC_CLI_PODRES_H
#define CC_CLI_PODRES_H

#include <stddef.h>
#include <stdint.h>

#define PODRES_DEFAULT_SOCKET "/var/lib/kubelet/pod-resources/kubelet.sock"
#define PODRES_DEADLINE_MS 1000          /* the whole request: connect to the last frame */
#define PODRES_MAX_RESPONSE (16u << 20)  /* the gRPC message, bytes */
#define PODRES_MAX_ENTRIES 65536         /* device ids kept; the rest are dropped (counted) */
#define PODRES_NS_MAX 63                 /* DNS-1123 label */
#define PODRES_POD_MAX 253               /* DNS-1123 subdomain */
#define PODRES_CTR_MAX 63
#define PODRES_ID_MAX 1024

/* One allocated device: its id (a device plugin's device id, or a CDI
 * device name a DRA driver returned) and where it is allocated. */
struct podres_entry {
    const char *id, *ns, *pod, *ctr;
};

struct podres {
    struct podres_entry *e;
    int n;
    int dropped; /* device ids not kept: past PODRES_MAX_ENTRIES, or under a
                  * name that is empty, too long or not printable ASCII */
    char *arena; /* the strings */
};

/* Outcome of podres_list. */
enum { PODRES_OK = 0, PODRES_ABSENT = 1, PODRES_FAILED = 2 };

/* Asks the kubelet at socket path for every pod's devices, within
 * deadline_ms. PODRES_OK fills *out (free with podres_free); PODRES_ABSENT:
 * nothing at path (no kubelet, or the folder is not mounted); PODRES_FAILED:
 * why[] says what failed (refused, timed out, not HTTP/2, a gRPC error,
 * malformed protobuf, ...). */
int podres_list(const char *path, int deadline_ms, struct podres *out, char *why, size_t whylen);
void podres_free(struct podres *p);

/* The low layers, for podres_list and tests. */
/* The List response's gRPC message (malloc'ed, *len bytes) or NULL with why. */
uint8_t *podres_call(const char *path, int deadline_ms, size_t *len, int *absent, char *why, size_t whylen);
/* Decodes a ListPodResourcesResponse. 0, or -1 with why. */
int podres_decode(const uint8_t *msg, size_t len, struct podres *out, char *why, size_t whylen);

#endif
