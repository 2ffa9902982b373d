/* The fault injection's countdown and census (src/common/fault.h) and the
 * port wrapped with it (src/cap/port_fault.c), against a scripted fake
 * port: no simulator. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cap/port_fault.h"
#include "check.h"
#include "common/clock.h"
#include "common/fault.h"
#include "fake_port.h"

static int fires(cc_fault_point_t p, int calls, int *pattern)
{
    int n = 0;
    for (int i = 0; i < calls; i++) {
        pattern[i] = cc_fault(p);
        n += pattern[i];
    }
    return n;
}

int main(void)
{
    int pat[16];
    /* Unarmed: nothing fires, nothing is counted. */
    cc_fault_configure(NULL, NULL);
    CHECK(cc_fault_active == 0, "unarmed by default");
    CHECK(fires(CC_FP_OPEN, 8, pat) == 0, "unarmed never fires");

    /* Once: the N-th call only; other points untouched. */
    cc_fault_configure("open:3", NULL);
    CHECK(fires(CC_FP_MKDIR, 5, pat) == 0, "another point does not fire");
    CHECK(fires(CC_FP_OPEN, 6, pat) == 1 && pat[2] == 1, "open:3 fires at the 3rd call only");

    /* Sticky: the N-th and every later call. */
    cc_fault_configure("event_query:2:sticky", NULL);
    CHECK(fires(CC_FP_EVENT_QUERY, 6, pat) == 5 && pat[0] == 0 && pat[5] == 1, "sticky from the 2nd call on");

    /* Malformed specs: a warning, and nothing armed. */
    const char *bad[] = {"open", "open:", "open:0", "open:x", "nosuch:1", "open:1:often", ":1", "open:1x"};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cc_fault_configure(bad[i], NULL);
        CHECK(cc_fault_active == 0, "\"%s\" arms nothing", bad[i]);
        CHECK(fires(CC_FP_OPEN, 3, pat) == 0, "\"%s\": open never fires", bad[i]);
    }
    for (int p = 0; p < CC_FP_COUNT; p++) CHECK(cc_fault_name((cc_fault_point_t)p) != NULL, "point %d named", p);
    CHECK(cc_fault_name(CC_FP_COUNT) == NULL, "no name past the last point");

    /* The clock jumps 2 s once, sticky or not, and stays monotonic. */
    cc_fault_configure("clock:2:sticky", NULL);
    uint64_t a = cc_mono_ns(), b = cc_mono_ns(), c = cc_mono_ns();
    CHECK(b - a >= 2000000000ull && b - a < 3000000000ull, "the 2nd reading jumped 2 s (%llu ns)",
          (unsigned long long)(b - a));
    CHECK(c >= b && c - b < 1000000000ull, "and no further jump (%llu ns)", (unsigned long long)(c - b));

    /* The port: a fired entry returns its documented failure, an unfired
     * one reaches the inner port. */
    fake_port_install();
    const cc_port_t *inner = cc_port();
    const cc_port_t *f = cc_port_with_faults(inner);
    CHECK(f != inner && cc_port_with_faults(inner) == f, "one wrapper per process");
    cc_fault_configure("device_current:1", NULL);
    CHECK(f->device_current() == -1, "device_current fired: -1");
    CHECK(f->device_current() == inner->device_current(), "then the inner port's answer");
    cc_fault_configure("event_create:1", NULL);
    CUevent ev;
    CHECK(f->event_create(&ev, 0) == CUDA_ERROR_OUT_OF_MEMORY, "event_create fired: out of memory");
    CHECK(f->event_create(&ev, 0) == CUDA_SUCCESS, "then created");
    cc_fault_configure("device_info:2", NULL);
    char uuid[CC_PORT_UUID_LEN];
    nvmlDevice_t h;
    CHECK(f->device_info(0, uuid, &h) == 0, "device_info's 1st call reaches the fake");
    CHECK(f->device_info(0, uuid, &h) == -1, "its 2nd fired: -1");

    /* The census: a child counts and writes at exit, one line per point. */
    char path[] = "/tmp/cc-unit-fault-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "census file");
    close(fd);
    pid_t kid = fork();
    if (kid == 0) {
        cc_fault_configure(NULL, path);
        for (int i = 0; i < 7; i++) cc_fault(CC_FP_LOCK);
        cc_fault(CC_FP_NSPID);
        exit(0);
    }
    int st;
    waitpid(kid, &st, 0);
    FILE *cf = fopen(path, "r");
    char name[32];
    unsigned long long k;
    int lock7 = 0, nspid1 = 0, lines = 0;
    while (cf && fscanf(cf, "%31s %llu", name, &k) == 2) {
        lines++;
        lock7 |= !strcmp(name, "lock") && k == 7;
        nspid1 |= !strcmp(name, "nspid") && k == 1;
    }
    if (cf) fclose(cf);
    unlink(path);
    CHECK(lines == 2 && lock7 && nspid1, "census: lock 7, nspid 1 (%d lines)", lines);
    cc_fault_configure(NULL, NULL);
    CHECK_EXIT();
}
