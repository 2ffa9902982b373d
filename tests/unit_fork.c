/* The fork-child registry (src/common/fork.h): resets run in registration
 * order, a second registration of one reset is a no-op, the registry is
 * bounded, and a real fork child runs them (the hook layer's handler is
 * cc_fork_child_run; here the test calls it from its own atfork). */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "common/fork.h"

static char order[CC_FORK_MAX + 8];
static int n;

static void a(void) { order[n++] = 'a'; }
static void b(void) { order[n++] = 'b'; }
/* Distinct resets to fill the table with. */
#define FILLER(i) static void f##i(void) { order[n++] = '0' + i; }
FILLER(0) FILLER(1) FILLER(2) FILLER(3) FILLER(4) FILLER(5) FILLER(6) FILLER(7)
FILLER(8) FILLER(9) FILLER(10) FILLER(11) FILLER(12) FILLER(13) FILLER(14) FILLER(15)
static void (*const fillers[])(void) = {f0, f1, f2,  f3,  f4,  f5,  f6,  f7,
                                        f8, f9, f10, f11, f12, f13, f14, f15};

int main(void)
{
    cc_fork_child_register(a);
    cc_fork_child_register(b);
    cc_fork_child_register(a); /* again: still once, still first */
    cc_fork_child_run();
    CHECK(n == 2 && order[0] == 'a' && order[1] == 'b', "ran %d: %.2s", n, order);

    /* In a real child, from an atfork handler as hook/init.c installs it. */
    pthread_atfork(NULL, NULL, cc_fork_child_run);
    n = 0;
    pid_t pid = fork();
    if (pid == 0) _exit(n == 2 && order[0] == 'a' && order[1] == 'b' ? 0 : 1);
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "the child did not run the resets in order (status %d)", st);
    CHECK(n == 0, "the parent ran resets at fork (%d)", n);

    /* Bounded: a and b hold two slots; past CC_FORK_MAX resets in all, more
     * are dropped (an error logged), never written past the table. */
    _Static_assert(sizeof fillers / sizeof fillers[0] == CC_FORK_MAX, "one filler per slot");
    for (int i = 0; i < CC_FORK_MAX; i++) cc_fork_child_register(fillers[i]);
    n = 0;
    cc_fork_child_run();
    CHECK(n == CC_FORK_MAX, "ran %d resets, want %d", n, CC_FORK_MAX);
    CHECK(order[0] == 'a' && order[1] == 'b' && order[2] == '0' &&
              order[CC_FORK_MAX - 1] == '0' + 13,
          "order %.*s", n, order);
    CHECK_EXIT();
}
