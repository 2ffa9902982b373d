/* Fork children: the registry of child resets. A module that keeps private
 * per-process state (locks, descriptors, its pid, pending work) registers
 * its own reset when it initialises; the hook layer runs them all in the
 * child (hook/init.c, pthread_atfork). Shared mappings stay as they are.
 *
 * Bounded (CC_FORK_MAX resets, all modules together) and lock-free: a
 * registration is one CAS on a slot, so it is safe from any thread and
 * inside another lock. A registration racing a fork may miss that fork's
 * child: register before the state it resets is first written. */
#ifndef CC_COMMON_FORK_H
#define CC_COMMON_FORK_H

#define CC_FORK_MAX 16

/* fn runs in every later fork child, in registration order. Registering fn
 * again is a no-op (a module may register from an init a fork child runs
 * again). Past CC_FORK_MAX: dropped, with an error logged. */
void cc_fork_child_register(void (*fn)(void));

/* In the child, single-threaded: every registered reset, in order. */
void cc_fork_child_run(void);

#endif
