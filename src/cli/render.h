/* Printers of container snapshots: the status table, JSON, Prometheus. */
#ifndef CC_CLI_RENDER_H
#define CC_CLI_RENDER_H

#include <stdio.h>

#include "cli/snapshot.h"

/* Status table: one line per container and device, then its processes
 * (unless brief). hist: per-container utilization history for top (NULL
 * for status), a string drawn after the device line. width: the
 * terminal's columns (0: unlimited). Under RENDER_FULL_WIDTH the
 * container lines drop the SAMPLER column and cut names to 12 columns, so
 * that memory, SM and PROCS stay on a 60-column terminal. */
#define RENDER_FULL_WIDTH 88
void render_table(FILE *f, struct snap *const *s, int n, int brief, const char *const *hist, int width);
void render_json(FILE *f, const char *root, struct snap *const *s, int n);
/* pr: the kubelet's pod-resources table (NULL: none), for pod labels. */
struct podres;
void render_prom(FILE *f, struct snap *const *s, int n, const struct podres *pr);

/* "12.3%" or "-" */
const char *render_pct(int have, uint32_t pm, char *buf, size_t len);

/* Writes s as a JSON string literal (quotes, backslashes, control bytes escaped). */
void json_str(FILE *f, const char *s);
/* Length of the well-formed UTF-8 sequence at s (RFC 3629), or 0 when the
 * byte at s does not start one (it is then replaced by U+FFFD on output). */
int cc_utf8_len(const unsigned char *s);

#endif
