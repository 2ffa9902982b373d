/* The container's identity turn: identity.lock in the state folder, taken
 * around a context creation so that processes of the container starting at
 * once take turns (each sees only its own pid appear in NVML's list, and
 * the first measures the context size for the others: cap/mem/ctx_admit.c). */
#ifndef CC_HOOK_IDENTITY_LOCK_H
#define CC_HOOK_IDENTITY_LOCK_H

/* Takes the turn: creates the state folder and the lock file if needed and
 * locks it, waiting at most 2 s for another process's turn. The descriptor
 * holding the turn, or -1 without one (no state folder, cannot open, not
 * granted in time): the caller goes ahead anyway. */
int cc_identity_lock_take(void);

/* Gives the turn back (fd from take; -1: nothing). */
void cc_identity_lock_drop(int fd);

#endif
