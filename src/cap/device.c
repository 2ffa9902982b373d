/* The device records (device.h). */
#include "cap/device.h"

#include <string.h>

#include "common/assert.h"
#include "common/fork.h"

struct cc_devrec cc_devrecs[CC_MAX_DEVICES];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* In the child, single-threaded: a lock a parent thread held at fork is
 * void; identities stay (the same devices); each part resets its own. */
static void fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    mu = fresh;
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        cc_mem_bind_fork(&cc_devrecs[i]);
        cc_compute_dev_fork(&cc_devrecs[i].compute);
    }
}

static void register_fork(void) { cc_fork_child_register(fork_child); }

void cc_device_lock(void)
{
    pthread_once(&fork_once, register_fork);
    pthread_mutex_lock(&mu);
}

void cc_device_unlock(void) { pthread_mutex_unlock(&mu); }

pthread_mutex_t *cc_device_mu(void) { return &mu; }

int cc_device_identify_locked(struct cc_devrec *r, int ordinal)
{
    cc_assert_held(&mu);
    if (__atomic_load_n(&r->known, __ATOMIC_RELAXED)) return 1;
    char uuid[CC_PORT_UUID_LEN];
    nvmlDevice_t nvml = NULL;
    if (cc_port()->device_info(ordinal, uuid, &nvml) != 0) return 0;
    memcpy(r->uuid, uuid, sizeof r->uuid);
    r->uuid[sizeof r->uuid - 1] = 0;
    r->nvml = nvml;
    /* Release: a reader that sees known (acquire) sees the identity. */
    __atomic_store_n(&r->known, 1, __ATOMIC_RELEASE);
    return 1;
}
