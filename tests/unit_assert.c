/* The invariant checks (src/common/assert.h). Built twice:
 *   unit_assert_on  (CC_ASSERTS): a false cc_assert and a cc_assert_held
 *                   on a free mutex each abort the process (SIGABRT) after
 *                   saying "assertion failed" with the condition; true ones
 *                   and a held mutex pass.
 *   unit_assert_off (no CC_ASSERTS, as the release library): neither
 *                   aborts, and the condition is not even evaluated.
 * ctest unit.assert.on / unit.assert.off (tests/CMakeLists.txt). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "common/assert.h"

static int evaluated;
__attribute__((unused)) static int touch(int v)
{
    evaluated++;
    return v;
}

/* Runs fn in a child with stderr to a pipe: its wait status, and what it
 * said in *said. */
static int in_child(void (*fn)(void), char *said, size_t n)
{
    int p[2];
    if (pipe(p) != 0) return -1;
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        dup2(p[1], 2);
        close(p[0]);
        fn();
        _exit(0);
    }
    close(p[1]);
    ssize_t k, got = 0;
    while ((k = read(p[0], said + got, n - 1 - (size_t)got)) > 0) got += k;
    said[got] = 0;
    close(p[0]);
    int st = 0;
    waitpid(c, &st, 0);
    return st;
}

static void false_assert(void) { cc_assert(touch(0) == 1); }
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void free_mutex(void) { cc_assert_held(&mu); }
static void held_mutex(void)
{
    pthread_mutex_lock(&mu);
    cc_assert_held(&mu);
    cc_assert(touch(1) == 1);
    pthread_mutex_unlock(&mu);
}

int main(void)
{
    char said[512];
    int st = in_child(held_mutex, said, sizeof said);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a held mutex and a true check: status %d (%s)", st, said);
    st = in_child(false_assert, said, sizeof said);
    int st2 = in_child(free_mutex, said + strlen(said), sizeof said - strlen(said));
#ifdef CC_ASSERTS
    printf("on: false check status %d, free mutex status %d, said: %s", st, st2, said);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "a false check did not abort (status %d)", st);
    CHECK(WIFSIGNALED(st2) && WTERMSIG(st2) == SIGABRT, "a free mutex passed cc_assert_held (status %d)", st2);
    CHECK(strstr(said, "assertion failed: touch(0) == 1") != NULL, "no message naming the check: %s", said);
    CHECK(strstr(said, "&mu held") != NULL, "no message naming the mutex: %s", said);
#else
    printf("off: false check status %d, free mutex status %d\n", st, st2);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a check in a release build aborted (status %d)", st);
    CHECK(WIFEXITED(st2) && WEXITSTATUS(st2) == 0, "cc_assert_held in a release build aborted");
    /* (Children's counts are their own: evaluate here too.) */
    cc_assert(touch(0) == 1);
    CHECK(evaluated == 0, "the condition was evaluated %d times", evaluated);
#endif
    CHECK_EXIT();
}
