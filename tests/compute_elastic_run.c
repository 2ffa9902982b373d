/* Elastic caps on the simulator: the harness (tests/compute_elastic.h). */
#include <cuda.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compute_elastic.h"
#include "runq.h"
#include "spin_setup.h"

char self[512];
const char *base;
struct cont C[3];
int nc;
uint64_t t0;

/* MS of lost time over bins a..b (inclusive), evenly: a stall is counted
 * in the bins it lasted, not in the one where the worker ran again (a
 * worker held off its core for 4.3 s of 6 once put it all in the last bin,
 * and the windows it starved counted, at 0 %). */
static void spread(double *lost, uint64_t a, uint64_t b, double ms)
{
    if (b >= MAX_BINS) b = MAX_BINS - 1;
    if (a > b) a = b;
    for (uint64_t i = a; i <= b; i++) lost[i] += ms / (double)(b - a + 1);
}

/* --worker OUT T0 START_NS END_NS TOGGLE_NS DEPTH: from T0 + START (context
 * made then: a container starting) to T0 + END, DEPTH kernels in flight;
 * with TOGGLE, on for TOGGLE, off (asleep) for TOGGLE, from START on. */
int worker(const char *out, uint64_t t0, uint64_t start, uint64_t end, uint64_t toggle,
           unsigned depth)
{
    static double bins[MAX_BINS], lost[MAX_BINS];
    /* A toggling neighbour is a running container whose work comes and
     * goes: made, and one batch run, at T0; then asleep until START. A
     * plain one starts at START (what starting costs is the newcomer's). */
    mp_sleep_until(t0 + (toggle ? 0 : start));
    CUfunction fn;
    CUstream stream;
    int sms;
    spin_setup("spin_1500us", &fn, &stream, &sms);
    if (check_failures) return 1;
    if (toggle) {
        for (int i = 0; i < BATCH; i++)
            CHECK_CU(cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
        CHECK_CU(cuStreamSynchronize(stream));
        mp_sleep_until(t0 + start);
    }
    /* depth kernels in flight, each followed by an event: a kernel is
     * counted in the bin where its event completes (a whole batch counted
     * at its sync made windows of 0.5 s uncertain by 2 batches a process). */
    CUevent ev[MAX_DEPTH];
    if (depth == IDLE_DEPTH) mp_sleep_until(t0 + end); /* (the loop below then ends at once) */
    if (depth < 1 || depth > MAX_DEPTH) depth = BATCH;
    for (unsigned i = 0; i < depth; i++) CHECK_CU(cuEventCreate(&ev[i], CU_EVENT_DEFAULT));
    unsigned head = 0, inflight = 0;
    /* The worker does nothing between its CUDA calls: a gap of over 1 ms
     * between one call's return and the next call is the machine not running
     * it (counted per bin, for the parent's starved windows). */
    /* And inside a call: the simulator counts its waits for its shared lock
     * whose holder the machine stopped (cuSimTestLockStallNs). */
    uint64_t (*lock_stall)(void) = (uint64_t (*)(void))dlsym(RTLD_DEFAULT, "cuSimTestLockStallNs");
    uint64_t stall0 = lock_stall ? lock_stall() : 0;
    /* And the time the kernel kept it waiting for a core while it was
     * runnable (woken from a sync or from the cap's pacing sleep, where
     * the gaps above do not see it): read at each new bin, what passes 3 ms
     * a bin counted (a worker keeps 4.5-6 ms of kernels in flight: shorter
     * waits, spread over a bin's wake-ups, leave the device busy; counting
     * every wait over 2 ms a bin flagged windows in which the device was
     * 92-95 % busy beside load 17, and the test skipped). */
    int rq = runq_open();
    uint64_t rd0 = runq_fd_ns(rq), rd_lost = 0, rd_bin = 0;
    uint64_t back = mp_now();
    for (;;) {
        uint64_t now = mp_now();
        if (now - back > 1000000ull && now > t0)
            spread(lost, back > t0 ? (back - t0) / BIN_NS : 0, (now - t0) / BIN_NS,
                   (double)(now - back) / 1e6);
        uint64_t stall = lock_stall ? lock_stall() : 0;
        if (stall != stall0 && now > t0 && (now - t0) / BIN_NS < MAX_BINS)
            lost[(now - t0) / BIN_NS] += (double)(stall - stall0) / 1e6;
        stall0 = stall;
        uint64_t bin = now > t0 ? (now - t0) / BIN_NS : 0;
        if (bin != rd_bin && now > t0 && bin < MAX_BINS) {
            uint64_t rd = runq_fd_ns(rq), d = rd - rd0;
            uint64_t allow = (bin - rd_bin) * 3000000ull;
            if (d > allow) spread(lost, rd_bin + 1, bin, (double)(d - allow) / 1e6), rd_lost += d - allow;
            rd0 = rd, rd_bin = bin;
        }
        int off = toggle && ((now - t0 - start) / toggle) % 2 == 1;
        if (inflight == depth || ((now >= t0 + end || off) && inflight)) {
            CHECK_CU(cuEventSynchronize(ev[(head + depth - inflight) % depth]));
            back = mp_now();
            inflight--;
            uint64_t b = (mp_now() - t0) / BIN_NS;
            if (b < MAX_BINS) bins[b] += KERNEL_NS;
            if (check_failures) return 1;
            continue;
        }
        if (now >= t0 + end) break;
        if (off) {
            uint64_t next = t0 + start + ((now - t0 - start) / toggle + 1) * toggle;
            mp_sleep_until(next < t0 + end ? next : t0 + end);
            back = mp_now();
            continue;
        }
        CHECK_CU(cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
        CHECK_CU(cuEventRecord(ev[head], stream));
        back = mp_now();
        head = (head + 1) % depth;
        inflight++;
        if (check_failures) return 1;
    }
    if (lock_stall && lock_stall() > 10000000ull)
        printf("worker %d: %.0f ms waiting for the simulator's lock (counted as starved)\n",
               (int)getpid(), lock_stall() / 1e6);
    if (!lock_stall) printf("worker %d: the simulator has no lock-stall hook\n", (int)getpid());
    if (rd_lost > 10000000ull)
        printf("worker %d: %.0f ms runnable without a core (counted as starved)\n", (int)getpid(),
               rd_lost / 1e6);
    if (rq >= 0) close(rq);
    FILE *f = fopen(out, "w");
    if (!f) return 1;
    for (unsigned i = 0; i < MAX_BINS; i++) fprintf(f, "%.0f %.2f\n", bins[i], lost[i]);
    return fclose(f) != 0;
}


/* Per bin, ms the machine did not run the test: the parent's late wake-ups
 * and the workers' gaps between CUDA calls (wait_watching, worker). */
static double late_ms[MAX_BINS];

static pid_t spawn(struct cont *c, int k, const char *t0s)
{
    char out[700], a[24], b[24], t[24], dp[8];
    snprintf(out, sizeof out, "%s/bins.%d", c->state, k);
    unlink(out);
    snprintf(a, sizeof a, "%llu", (unsigned long long)c->start * 1000000ull);
    snprintf(b, sizeof b, "%llu", (unsigned long long)c->end * 1000000ull);
    snprintf(t, sizeof t, "%llu", (unsigned long long)c->toggle * 1000000ull);
    snprintf(dp, sizeof dp, "%d", c->depth ? c->depth : BATCH);
    pid_t p = fork();
    if (p == 0) {
        char cap[8], soft[8];
        snprintf(cap, sizeof cap, "%d", c->hard);
        setenv("CUDACAP_STATE_DIR", c->state, 1);
        setenv("CUDACAP_SM_LIMIT", cap, 1);
        if (c->soft) {
            snprintf(soft, sizeof soft, "%d", c->soft);
            setenv("CUDACAP_SM_SOFT_LIMIT", soft, 1);
        } else {
            unsetenv("CUDACAP_SM_SOFT_LIMIT");
        }
        execl(self, self, "--worker", out, t0s, a, b, t, dp, (char *)NULL);
        _exit(127);
    }
    return p;
}

static void collect(struct cont *c)
{
    memset(c->bins, 0, sizeof c->bins);
    for (int k = 0; k < c->nproc; k++) {
        char out[700];
        snprintf(out, sizeof out, "%s/bins.%d", c->state, k);
        FILE *f = fopen(out, "r");
        CHECK(f != NULL, "no result from %s", out);
        if (!f) continue;
        double x, l;
        for (unsigned i = 0; i < MAX_BINS && fscanf(f, "%lf %lf", &x, &l) == 2; i++) {
            c->bins[i] += x;
            late_ms[i] += l; /* the worker's own lost time (worker) */
        }
        fclose(f);
    }
}

/* Percent of the device the container completed in [a, b) ms. */
double share(const struct cont *c, uint64_t a, uint64_t b)
{
    double s = 0;
    for (uint64_t i = a * 1000000ull / BIN_NS; i < b * 1000000ull / BIN_NS && i < MAX_BINS; i++)
        s += c->bins[i];
    return s / ((double)(b - a) * 1e6) * 100.0;
}


struct cont *add(int hard, int soft, int nproc, uint64_t start, uint64_t end, uint64_t toggle)
{
    struct cont *c = &C[nc];
    memset(c, 0, sizeof *c);
    c->hard = hard, c->soft = soft, c->nproc = nproc;
    c->start = start, c->end = end, c->toggle = toggle;
    snprintf(c->state, sizeof c->state, "%s/c%d", base, nc);
    mkdir(c->state, 0700);
    /* A fresh container, as cudacap prepare leaves it: no region of an
     * earlier run (its counters and elastic state would carry over). */
    DIR *d = opendir(c->state);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') unlinkat(dirfd(d), e->d_name, 0);
    if (d) closedir(d);
    nc++;
    return c;
}

static pid_t pids[16];
static int np;

void start_all(void)
{
    char t0s[32];
    t0 = mp_now() + 300000000ull; /* every worker exec'd before T0 */
    snprintf(t0s, sizeof t0s, "%llu", (unsigned long long)t0);
    for (int i = 0; i < nc; i++)
        for (int k = 0; k < C[i].nproc; k++) {
            pids[np] = spawn(&C[i], k, t0s);
            CHECK(pids[np] > 0, "fork failed");
            np++;
        }
}

/* The machine's own lateness: while the workers run, the parent sleeps
 * 2 ms at a time and adds up, per bin, the wake-ups more than 5 ms late;
 * the workers add their gaps between calls (worker). A window with 2 % of
 * its time lost so is one in which the machine did not run our processes (other suites on 2 cores: load averages of 10
 * were seen; the device then idled, both containers at a third), and a
 * share measured in it says nothing about the cap: such windows are not
 * counted (and at least half of them must count). */
double lost_ms(uint64_t a, uint64_t b)
{
    double lost = 0;
    for (uint64_t i = a * 1000000ull / BIN_NS; i < b * 1000000ull / BIN_NS && i < MAX_BINS; i++)
        lost += late_ms[i];
    return lost;
}

int starved(uint64_t a, uint64_t b) { return lost_ms(a, b) >= 0.02 * (double)(b - a); }

static void wait_watching(void)
{
    int left = np, bad = 0;
    /* The probe also writes a page of a shared file mapping in the state
     * folder, as the simulator and the library do theirs: a write-back stall
     * of the file system (a write fault waiting for the page's I/O) stalls
     * the probe as it stalls them (seen: both containers of two runs at
     * once at 3-20 % for a second, the sleeping parent on time). */
    char pf[700];
    snprintf(pf, sizeof pf, "%s/probe", base);
    int fd = open(pf, O_RDWR | O_CREAT, 0600);
    uint64_t *page = NULL;
    if (fd >= 0 && ftruncate(fd, 4096) == 0) {
        void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        page = m == MAP_FAILED ? NULL : m;
    }
    if (fd >= 0) close(fd);
    while (left > 0) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0) {
            left--;
            bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
            continue;
        }
        if (p < 0) break;
        uint64_t t = mp_now();
        usleep(2000);
        if (page) __atomic_add_fetch(page, 1, __ATOMIC_RELAXED);
        uint64_t now = mp_now();
        double late = (double)(now - t) / 1e6 - 2.0;
        uint64_t b = now > t0 ? (now - t0) / BIN_NS : MAX_BINS;
        if (late > 5.0 && b < MAX_BINS) late_ms[b] += late;
    }
    if (page) munmap(page, 4096);
    CHECK(bad == 0 && left == 0, "a worker failed");
}

void finish(void)
{
    wait_watching();
    for (int i = 0; i < nc; i++) collect(&C[i]);
    uint64_t end = 0;
    for (int i = 0; i < nc; i++)
        if (C[i].end > end) end = C[i].end;
    printf("  t(s)");
    for (int i = 0; i < nc; i++) printf("   c%d(%d/%d)", i, C[i].hard, C[i].soft);
    printf("   device   lost ms\n");
    for (uint64_t a = 0; a < end; a += 500) {
        double tot = 0;
        printf("%6.1f", a / 1000.0);
        for (int i = 0; i < nc; i++) {
            double x = share(&C[i], a, a + 500);
            tot += x;
            printf("   %9.1f", x);
        }
        printf("   %6.1f   %7.1f\n", tot, lost_ms(a, a + 500));
    }
}

/* The elastic state of the container's (only) device line, mid-run. */
const cc_compute_elastic_t *elastic_of(const struct cont *c, uint32_t *target)
{
    /* Mapped once per container (the polls ask every 10 ms). */
    static const cc_compute_region_t *mapped[sizeof C / sizeof C[0]];
    int i = (int)(c - C);
    const cc_compute_region_t *r = i >= 0 && i < (int)(sizeof C / sizeof C[0]) ? mapped[i] : NULL;
    if (!r) r = mp_map_compute_region(c->state);
    if (!r) return NULL;
    if (i >= 0 && i < (int)(sizeof C / sizeof C[0])) mapped[i] = r;
    *target = __atomic_load_n(&r->dev[0].up_limit_pm, __ATOMIC_RELAXED);
    return &r->elastic[0];
}

/* The mean share of the container over the 0.5 s windows of [a, b) that
 * count (not starved); *n, *of: windows counted, windows. */
double share_counted(const struct cont *c, uint64_t a, uint64_t b, int *n, int *of)
{
    double s = 0;
    *n = *of = 0;
    for (uint64_t w = a; w + 500 <= b; w += 500) {
        (*of)++;
        if (starved(w, w + 500)) continue;
        (*n)++;
        s += share(c, w, w + 500);
    }
    return *n ? s / *n : 0;
}

/* Fewer than half the windows counted: this attempt cannot judge the cap
 * (main runs another, up to 4 in all, then reports a skip). */
int short_of_windows;
int loaded_failures;

void check_counted(const char *what, int n, int of)
{
    if (n < of) printf("%s: %d of %d windows counted (the others starved)\n", what, n, of);
    if (2 * n < of) short_of_windows = 1;
}

/* Quantization of the bins: a kernel per process at each end of a window. */
double slack(const struct cont *c, uint64_t ms)
{
    return 2.0 * c->nproc * KERNEL_NS / ((double)ms * 1e6) * 100.0;
}
