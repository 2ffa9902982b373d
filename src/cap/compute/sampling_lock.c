#include "cap/compute/sampling_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/controls.h"
#include "common/log.h"
#include "os/os.h"
#include "region/region.h"

int cc_slock_open(cc_slock_t *l, const char *dir)
{
    char path[1024];
    l->fd = -1;
    l->owned = 0;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, CC_SAMPLING_LOCK_FILE) >= sizeof path) {
        cc_warn("%s/%s: path too long; every process samples NVML by election", dir,
                CC_SAMPLING_LOCK_FILE);
        return -1;
    }
    const char *why = NULL;
    int fd = cc_state_open(path, O_RDWR | O_CREAT, 0600, &why);
    if (fd < 0) {
        cc_warn("%s: %s (%s); every process samples NVML by election", path, why,
                strerror(errno));
        return -1;
    }
    l->fd = fd;
    return 0;
}

int cc_slock_claim(cc_slock_t *l, unsigned idx)
{
    if (l->fd < 0 || idx >= 32) return 0;
    if (cc_slock_owned(l, idx)) return 1;
    if (cc_os_lock(l->fd, (off_t)idx, 1, F_WRLCK, 0) != 0) return 0;
    l->owned |= 1u << idx;
    return 1;
}

/* A fork child's inherited descriptor closed (kept, the parent's file
 * stays open in the child: compute.election.death, compute.lock.fork). */
static void CC_CONTROL_POINT(close_lock_file)(cc_slock_t *l)
{
    if (l->fd >= 0) close(l->fd);
    l->fd = -1;
}

void cc_slock_forget(cc_slock_t *l)
{
    close_lock_file(l);
    l->owned = 0;
}
