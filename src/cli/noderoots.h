/* Every container of the node: the system root and every user's default
 * root (noderoots.c). */
#ifndef CC_CLI_NODEROOTS_H
#define CC_CLI_NODEROOTS_H

#include "cli/snapshot.h"

/* The system root: $CUDACAP_SYSTEM_ROOT, else /var/lib/cudacap/containers. */
const char *node_system_root(void);

/* Snapshots of the system root's containers, then of each user's under
 * $CUDACAP_USER_ROOTS (default /tmp)/cudacap-<uid>/containers, named
 * "<user>/<container>". A root that cannot be read is said on stderr and
 * skipped. Free with snap_release. The count, or -1 (no memory). */
int snap_collect_node(struct snap ***out);

/* snap_collect_node when all_users, else snap_collect(root). */
int snap_collect_any(const char *root, int all_users, struct snap ***out);

#endif
