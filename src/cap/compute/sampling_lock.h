/* Sampling ownership: CUDACAP_STATE_DIR/sampling.lock, its own file, one
 * byte per device line, claimed with a non-blocking OFD write lock and held
 * for the process lifetime (the kernel releases it when the owner dies).
 * Its own file because classic POSIX locks (the fallback without OFD) drop
 * when the process closes ANY descriptor of the file, and the region file is
 * closed after mapping. Never deleted: a new inode would not exclude holders
 * of the old one. A fork child must close the inherited descriptor: an OFD
 * lock belongs to the open file description, which fork shares, so the child
 * would co-own it and keep it alive after the owner dies. */
#ifndef CC_CAP_SAMPLING_LOCK_H
#define CC_CAP_SAMPLING_LOCK_H

#include <stdint.h>

#define CC_SAMPLING_LOCK_FILE "sampling.lock"

typedef struct cc_slock {
    int fd;         /* -1: no lock file (everyone samples by election) */
    uint32_t owned; /* bit i: this process holds byte i */
} cc_slock_t;

/* Opens (creating) DIR/sampling.lock. 0, or -1 after one warning; then
 * fd stays -1. */
int cc_slock_open(cc_slock_t *l, const char *dir);

/* Non-blocking claim of byte idx. 1: this process owns it (now or already),
 * 0: someone else does, or there is no lock file. */
int cc_slock_claim(cc_slock_t *l, unsigned idx);

static inline int cc_slock_owned(const cc_slock_t *l, unsigned idx)
{
    return idx < 32 && ((l->owned >> idx) & 1u);
}

/* Fork child: close the inherited descriptor, forget ownership. */
void cc_slock_forget(cc_slock_t *l);

#endif
