/* The OS layer on Linux (os.h): time, threads and futexes. Split from
 * os_linux.c (files, mappings, locks, processes): these are the calls the
 * library's own threads and bounded waits make. */
#include "os/os.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/fault.h"

static struct timespec span(uint64_t ns)
{
    return (struct timespec){(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
}

void cc_os_sleep_ns(uint64_t ns)
{
    struct timespec ts = span(ns);
    nanosleep(&ts, NULL);
}

void cc_os_sleep_until(uint64_t t)
{
    struct timespec ts = span(t);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
}

uint64_t cc_os_thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int cc_os_thread(void *(*fn)(void *), void *arg, const char *name)
{
    if (cc_fault(CC_FP_THREAD)) return errno = EAGAIN, -1;
    /* The thread inherits the mask in force at its creation: set around
     * pthread_create, so no asynchronous signal meant for the application
     * can reach it, not even before its first instruction. */
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_attr_t at;
    pthread_t th;
    int r = pthread_attr_init(&at);
    if (r == 0) {
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        r = pthread_create(&th, &at, fn, arg);
        pthread_attr_destroy(&at);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0) return errno = r, -1;
    /* Named, so its CPU time can be read and top -H tells it apart. */
    if (name && name[0]) pthread_setname_np(th, name);
    return 0;
}

void cc_os_futex_wait(uint32_t *w, uint32_t val, uint64_t timeout_ns)
{
    struct timespec ts = span(timeout_ns);
    syscall(SYS_futex, w, FUTEX_WAIT, val, &ts, NULL, 0);
}

void cc_os_futex_wake_all(uint32_t *w)
{
    syscall(SYS_futex, w, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}
