/* The identity turn (identity_lock.h). */
#include "identity_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/controls.h"
#include "common/log.h"
#include "hook/process.h"
#include "os/os.h"
#include "region/region.h"

#define CC_ID_LOCK_FILE "identity.lock"

/* The turns' file, open (-1: no turns). The folder may not exist yet: the
 * regions are made at the first allocation or launch, after this. Without
 * it there were no turns, and processes starting together resolved nothing
 * (compute.hostpid.join, from a clean clone). No folder (""): no turns, and
 * never a lock file in some other folder. */
static int CC_CONTROL_POINT(open_turns)(const char *path)
{
    if (!cc_cfg.state_dir[0]) return -1;
    cc_region_ensure_dir(cc_cfg.state_dir);
    const char *why = NULL;
    int fd = cc_state_open(path, O_RDWR | O_CREAT, 0666, &why);
    if (fd < 0)
        cc_log_once(CC_LOG_WARN, "%s: %s (%s); processes starting together may not resolve "
                                 "their host pids", path, why, strerror(errno));
    return fd;
}

int cc_identity_lock_take(void)
{
    char path[CC_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", cc_cfg.state_dir, CC_ID_LOCK_FILE);
    int fd = open_turns(path);
    if (fd >= 0) {
        int ok = 0, errors = 0;
        for (int i = 0; i < 2000 && !ok; i++) {
            ok = cc_lock_range(fd, 0, 1, F_WRLCK, 0) == 0;
            /* Busy: wait for the turn. Another error: retried a few times
             * (a transient one), then the turn is given up, said. */
            if (!ok && errno != EAGAIN && errno != EACCES && ++errors > 3) {
                cc_log_once(CC_LOG_WARN, "%s: cannot lock (%s); processes starting together may "
                                         "not resolve their host pids", path, strerror(errno));
                break;
            }
            if (!ok) {
                cc_os_sleep_ns(1000000);
            }
        }
        if (!ok) { /* no turn: the diff may see others; cc_hostpid() retries */
            close(fd);
            fd = -1;
        }
    }
    return fd;
}

void cc_identity_lock_drop(int fd)
{
    if (fd >= 0) close(fd); /* drops the lock (OFD and POSIX alike) */
}
