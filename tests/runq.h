/* How long the calling thread has been runnable without a core: the
 * second field of /proc/thread-self/schedstat. A test that bounds a
 * container's share from below judges that bound only when its launching
 * threads had a core: beside two suites on 2 cores, containers got 1-11 %
 * at cap 30 (docs/testing.md, 2026-12-04), and a cap that holds a
 * container down by sleeping never leaves it waiting on a run queue.
 * Upper bounds, which the negative controls must exceed, are always
 * judged. */
#ifndef CC_TEST_RUNQ_H
#define CC_TEST_RUNQ_H

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Over this share of a window runnable without a core, a run says nothing
 * about a lower bound. */
#define RUNQ_STARVED_FRACTION 0.2

/* The calling thread's schedstat, open (-1 where it cannot be), for loops
 * that read it often (runq_fd_ns): one pread a read. */
static inline int runq_open(void) { return open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC); }

/* Nanoseconds runnable without a core so far, from runq_open's fd; 0 where
 * it cannot be read (a kernel without schedstats: every bound is then
 * judged, as before). */
static inline uint64_t runq_fd_ns(int fd)
{
    char b[128];
    ssize_t n = fd >= 0 ? pread(fd, b, sizeof b - 1, 0) : -1;
    if (n <= 0) return 0;
    b[n] = 0;
    unsigned long long run, wait;
    return sscanf(b, "%llu %llu", &run, &wait) == 2 ? (uint64_t)wait : 0;
}

/* The same, s, opening the file each time. */
static inline double runq_s(void)
{
    int fd = runq_open();
    uint64_t w = runq_fd_ns(fd);
    if (fd >= 0) close(fd);
    return (double)w * 1e-9;
}

/* Summed over the threads of process pid (0: this one), only those named
 * name where one is given (its /proc comm), s; 0 where none can be read. */
static inline double runq_tasks_s(int pid, const char *name)
{
    char dir[64];
    if (pid) snprintf(dir, sizeof dir, "/proc/%d/task", pid);
    else snprintf(dir, sizeof dir, "/proc/self/task");
    double sum = 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char p[400], comm[64] = "";
        if (name) {
            snprintf(p, sizeof p, "%s/%s/comm", dir, e->d_name);
            FILE *f = fopen(p, "r");
            size_t k = strlen(name);
            int named = f && fgets(comm, sizeof comm, f) && !strncmp(comm, name, k) &&
                        (comm[k] == '\n' || comm[k] == 0);
            if (f) fclose(f);
            if (!named) continue;
        }
        snprintf(p, sizeof p, "%s/%s/schedstat", dir, e->d_name);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        sum += (double)runq_fd_ns(fd) * 1e-9;
        if (fd >= 0) close(fd);
    }
    closedir(d);
    return sum;
}

/* The same summed over every thread of process pid (0: this process, the
 * library's watcher thread too), s; 0 where it cannot be read. */
static inline double runq_pid_s(int pid) { return runq_tasks_s(pid, NULL); }

static inline double runq_proc_s(void) { return runq_pid_s(0); }

/* The same for this process's threads named name (/proc/self/task/N/comm:
 * the library's watcher is "cudacap-watch"), s; 0 where none is. */
static inline double runq_named_s(const char *name) { return runq_tasks_s(0, name); }

/* Whether a window of window_s, in which a thread was runnable without a
 * core for waited_s, judges a lower bound; says so when it does not. */
static inline int runq_judged(const char *what, double waited_s, double window_s)
{
    if (waited_s <= RUNQ_STARVED_FRACTION * window_s) return 1;
    printf("%s: runnable without a core %.2f s of %.2f s: starved, the lower bound not judged\n", what,
           waited_s, window_s);
    return 0;
}

#endif
