/* The controllers (pure functions) and their shared state across processes.
 *
 *   unit   delta and AIMD hold a plant whose cost model is off by 0.6x..1.6x
 *          at its cap; AIMD cuts at most once per cooldown; the idle bypass
 *          targets one nominal period and freezes share; a throttle-free
 *          light load never winds share up; losing exclusivity resets once.
 *   start  a queue after a pause, its samples lagging: the share holds
 *          (start() says how; control compute.controller.start.control).
 *   aimd   4 processes take turns running the refill election and the AIMD
 *          controller on one shared line with a sample that stays over the cap: cuts never
 *          fire on consecutive refills (md_cooldown is shared). Control:
 *          -DCC_TEST_PRIVATE_STATE keeps the controller state per process
 *          (the seed's MD avalanche): consecutive cuts
 *          (compute.controller.aimd.control, WILL_FAIL). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cap/compute/controller.h"
#include "cap/compute/election.h"
#include "check.h"
#include "compute_mp.h"

/* Utilization the plant shows for a share: demand-limited at `demand`,
 * else share / nominal x cap x err (err: how wrong the cost model is). */
static uint32_t plant(int64_t share, int64_t nominal, uint32_t cap_pm, double err, uint32_t demand)
{
    double u = (double)share / (double)nominal * cap_pm * err;
    return u > demand ? demand : (uint32_t)u;
}

static void run_plant(cc_controller_t kind, double err, double *avg_pm)
{
    const uint32_t cap = 300;
    const int64_t nominal = 30000000;
    cc_ctrl_state_t st = cc_ctrl_initial(cap, nominal);
    uint32_t u = plant(st.share, nominal, cap, err, 1000), lag = u;
    double sum = 0;
    int n = 0;
    for (int c = 0; c < 200; c++) {
        cc_ctrl_input_t in = {.kind = kind, .cap_pm = cap, .user_pm = lag, .sys_pm = lag + 100,
                              .sample_valid = 1, .throttled = 1, .nominal = nominal};
        cc_ctrl_output_t out;
        st = cc_ctrl_step(st, &in, &out);
        CHECK(!out.bypass, "bypass under load");
        lag = u; /* one cycle of lag: the sample sees the previous period */
        u = plant(st.share, nominal, cap, err, 1000);
        if (c >= 100) {
            sum += u;
            n++;
        }
    }
    *avg_pm = sum / n;
}

static void unit(void)
{
    const double errs[] = {0.6, 1.0, 1.6};
    for (int k = 0; k < 3; k++) {
        double d, a;
        run_plant(CC_CTRL_DELTA, errs[k], &d);
        run_plant(CC_CTRL_AIMD, errs[k], &a);
        printf("unit: model error %.1fx: delta holds %.1f%%, aimd %.1f%% (cap 30%%)\n", errs[k],
               d / 10, a / 10);
        CHECK(d > 290 && d < 310, "delta average %.0f permille at cap 300 (model %.1fx)", d, errs[k]);
        CHECK(a > 255 && a < 320, "aimd average %.0f permille at cap 300 (model %.1fx)", a, errs[k]);
    }
    /* AIMD: a persistent excess cuts once per cooldown. */
    cc_ctrl_state_t st = cc_ctrl_initial(300, 30000000);
    int last = -10;
    for (int c = 0; c < 40; c++) {
        cc_ctrl_input_t in = {.kind = CC_CTRL_AIMD, .cap_pm = 300, .user_pm = 900, .sys_pm = 900,
                              .sample_valid = 1, .throttled = 1, .nominal = 30000000};
        cc_ctrl_output_t out;
        st = cc_ctrl_step(st, &in, &out);
        if (out.md_fired) {
            CHECK(c - last > CC_CTRL_AIMD_COOLDOWN - 1, "cuts at cycles %d and %d", last, c);
            last = c;
        }
    }
    /* Idle: bypass to one nominal period, share unmoved at nominal; a
     * light load that is never throttled does not wind share up. */
    st = cc_ctrl_initial(500, 50000000);
    for (int c = 0; c < 50; c++) {
        cc_ctrl_input_t in = {.kind = CC_CTRL_DELTA, .cap_pm = 500, .user_pm = c < 25 ? 0 : 200,
                              .sys_pm = 0, .sample_valid = 1, .throttled = 0, .nominal = 50000000};
        cc_ctrl_output_t out;
        st = cc_ctrl_step(st, &in, &out);
        if (c < 25) CHECK(out.bypass && out.bucket_target == 50000000, "idle cycle %d: no bypass", c);
        CHECK(st.share == 50000000, "share moved to %lld without throttling", (long long)st.share);
    }
    /* Auto: exclusive for long enough, then someone arrives: one reset of
     * share to nominal (the one-shot lost-exclusivity flag). */
    st = cc_ctrl_initial(300, 30000000);
    int resets = 0;
    for (int c = 0; c < 40; c++) {
        cc_ctrl_input_t in = {.kind = CC_CTRL_AUTO, .cap_pm = 300, .user_pm = 300,
                              .sys_pm = c < 20 ? 300 : 700, .sample_valid = 1, .throttled = 1,
                              .nominal = 30000000};
        cc_ctrl_output_t out;
        int was = st.excl_debounced;
        st.share = 60000000; /* away from nominal: a reset is visible */
        st = cc_ctrl_step(st, &in, &out);
        if (was && !st.excl_debounced) {
            resets++;
            CHECK(st.share == 30000000, "lost exclusivity without a reset (share %lld)",
                  (long long)st.share);
        }
        CHECK(!st.lost_excl_pending, "reset left armed at cycle %d", c);
        if (c == 15) CHECK(st.excl_debounced, "alone for 15 cycles but not exclusive");
        if (c == 35) CHECK(!st.excl_debounced, "others present for 15 cycles but exclusive");
    }
    CHECK(resets == 1, "%d exclusivity losses (want 1)", resets);
    /* Then NVML names one process per sample (two busy containers on the
     * H200): ours reads the device's whole share in 5 samples of 8, others
     * in the rest. That is not "alone": 300 cycles, never exclusive. */
    uint32_t rnd = 12345;
    for (int c = 0; c < 300; c++) {
        rnd = rnd * 1103515245u + 12345u;
        int ours = (rnd >> 16) % 8 < 5;
        cc_ctrl_input_t in = {.kind = CC_CTRL_AUTO, .cap_pm = 300, .user_pm = ours ? 800 : 0,
                              .sys_pm = 800, .sample_valid = 1, .throttled = 1,
                              .nominal = 30000000};
        cc_ctrl_output_t out;
        st = cc_ctrl_step(st, &in, &out);
        if (st.excl_debounced) {
            CHECK(0, "one-pid samples read as alone at cycle %d", c);
            break;
        }
    }
}

static void aimd_mp(void)
{
    enum { N = 4, ROUNDS = 30, LOG = 256 };
    struct {
        cc_compute_dev_t line __attribute__((aligned(64)));
        uint64_t t0;
        uint32_t nlog;
        uint32_t fired[LOG]; /* refill index, per cut */
    } *s = mp_shared(sizeof *s);
    cc_ctrl_state_t init = cc_ctrl_initial(300, 30000000);
    s->line.share = init.share;
    s->line.up_limit_pm = init.up_limit_pm;
    s->t0 = mp_now() + 100000000ull;
    pid_t pids[N];
    for (int i = 0; i < N; i++)
        if ((pids[i] = fork()) == 0) {
            cc_ctrl_state_t mine = init; /* the control's private storage */
            for (int r = 0; r < ROUNDS; r++) {
                /* The processes take the periods in turn, so consecutive
                 * refills are always made by different processes: with the
                 * state per process (the control) each one cuts on its own
                 * first refill, and the control fails every time. (A random
                 * phase let one process win runs of refills; the control
                 * then passed now and then, e.g. 11 cuts, 0 consecutive.) */
                if (r % N != i) continue;
                mp_sleep_until(s->t0 + (uint64_t)r * CC_PERIOD_NS + 5000000ull);
                uint64_t e;
                if (!cc_refill_try(&s->line, mp_now(), cc_refill_threshold(&s->line, 1, CC_PERIOD_NS), &e))
                    continue;
                cc_refill_begin(&s->line);
                cc_compute_dev_t *l = &s->line;
                cc_ctrl_state_t st = {.share = l->share, .up_limit_pm = l->up_limit_pm,
                                      .md_cooldown = l->md_cooldown};
#ifdef CC_TEST_PRIVATE_STATE
                st = mine;
#endif
                cc_ctrl_input_t in = {.kind = CC_CTRL_AIMD, .cap_pm = 300, .user_pm = 900,
                                      .sys_pm = 900, .sample_valid = 1, .throttled = 1,
                                      .nominal = 30000000};
                cc_ctrl_output_t out;
                st = cc_ctrl_step(st, &in, &out);
                mine = st;
                (void)mine;
                uint32_t idx = __atomic_load_n(&l->refills, __ATOMIC_RELAXED);
                if (out.md_fired) {
                    uint32_t k = __atomic_fetch_add(&s->nlog, 1, __ATOMIC_RELAXED);
                    if (k < LOG) s->fired[k] = idx;
                }
                l->share = st.share;
                l->md_cooldown = st.md_cooldown;
                cc_refill_done(l);
            }
            _exit(0);
        }
    CHECK(mp_wait_all(pids, N) == 0, "a child failed");
    uint32_t n = s->nlog < LOG ? s->nlog : LOG, consecutive = 0;
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = 0; b < n; b++)
            if (s->fired[b] == s->fired[a] + 1) consecutive++;
    printf("aimd: %d processes, %u refills, %u cuts, %u on consecutive refills\n", N,
           s->line.refills, n, consecutive);
    CHECK(n >= 3, "only %u cuts under a persistent excess", n);
    CHECK(consecutive == 0, "%u cuts on consecutive refills (MD avalanche)", consecutive);
}

/* Two containers, caps 30 and 50, saturating, with NVML naming ONE process
 * per sample (the H200 under two busy containers): each sample names A with
 * probability uA / (uA + uB) and gives it the device's whole share; the
 * other reads 0. Exact cost model (util = share / nominal x cap), one cycle
 * of lag, auto controllers. Over cycles 1000..5000 each container's true
 * utilization must average its cap within 2 pp. */
static void noisy(void)
{
    const uint32_t cap[2] = {300, 500};
    const int64_t nominal[2] = {30000000, 50000000};
    cc_ctrl_state_t st[2] = {cc_ctrl_initial(cap[0], nominal[0]), cc_ctrl_initial(cap[1], nominal[1])};
    uint32_t u[2] = {cap[0], cap[1]};
    double sum[2] = {0, 0};
    uint32_t rnd = 2463534242u;
    const int from = 1000, to = 5000;
    for (int c = 0; c < to; c++) {
        uint32_t total = u[0] + u[1] > 1000 ? 1000 : u[0] + u[1];
        rnd ^= rnd << 13;
        rnd ^= rnd >> 17;
        rnd ^= rnd << 5;
        int named = (rnd % (u[0] + u[1] ? u[0] + u[1] : 1)) < u[0] ? 0 : 1;
        for (int i = 0; i < 2; i++) {
            cc_ctrl_input_t in = {.kind = CC_CTRL_AUTO, .cap_pm = cap[i],
                                  .user_pm = named == i ? total : 0, .sys_pm = total,
                                  .sample_valid = 1, .throttled = 1, .nominal = nominal[i]};
            cc_ctrl_output_t out;
            st[i] = cc_ctrl_step(st[i], &in, &out);
        }
        for (int i = 0; i < 2; i++) {
            u[i] = plant(st[i].share, nominal[i], cap[i], 1.0, 1000);
            if (c >= from) sum[i] += u[i];
        }
    }
    for (int i = 0; i < 2; i++) {
        double avg = sum[i] / (to - from);
        printf("noisy: container %d at cap %u permille holds %.0f\n", i, cap[i], avg);
        CHECK(avg > cap[i] - 20 && avg < cap[i] + 20, "container %d: %.0f permille at cap %u", i,
              avg, cap[i]);
    }
}

/* Others' work seen by an elastic line (cc_ctrl_shared): it is on the
 * device, so the samples that follow are read at the shared gain even when
 * NVML names only us with the device's whole share (the H200's sticky
 * one-pid naming, 13 samples in a row seen). Control
 * (compute.controller.contended.control): CC_TEST_STRADDLE_READ, the alone
 * gain until excl_step sees others: a sample cuts 0.69 of a nominal. */
static void contended(void)
{
    const int64_t nom = 30000000;
    cc_ctrl_state_t st = cc_ctrl_initial(300, nom);
    cc_ctrl_output_t out;
    for (int c = 0; c < 40; c++) { /* alone, long enough */
        cc_ctrl_input_t in = {.kind = CC_CTRL_AUTO, .cap_pm = 300, .user_pm = 300, .sys_pm = 300,
                              .sample_valid = 1, .throttled = 1, .nominal = nom};
        st = cc_ctrl_step(st, &in, &out);
    }
    CHECK(st.excl_debounced, "alone for 40 samples but not exclusive");
    st.share = nom; /* (the yield's reset, watcher.c) */
    st = cc_ctrl_shared(st);
    CHECK(st.share == nom && !st.excl_debounced && !st.lost_excl_pending,
          "shared: share %lld (want it kept), exclusive %u", (long long)st.share, st.excl_debounced);
    for (int c = 0; c < 13; c++) {
        cc_ctrl_input_t in = {.kind = CC_CTRL_AUTO, .cap_pm = 300, .user_pm = 990, .sys_pm = 990,
                              .sample_valid = 1, .throttled = 1, .nominal = nom};
        st = cc_ctrl_step(st, &in, &out);
    }
    printf("contended: after 13 samples naming only us at 99 %%: share %.2f nominal, exclusive %u\n",
           (double)st.share / (double)nom, st.excl_debounced);
    /* (Each cuts 0.03 x 69/30 = 0.07 of a nominal: 2.6 s of such samples
     * still cut the share to a tenth, docs/compute.md.) */
    CHECK(!st.excl_debounced, "13 samples naming only us after a yield: read as alone");
    st.share = nom;
    cc_ctrl_input_t one = {.kind = CC_CTRL_AUTO, .cap_pm = 300, .user_pm = 990, .sys_pm = 990,
                           .sample_valid = 1, .throttled = 1, .nominal = nom};
    st = cc_ctrl_step(st, &one, &out);
    CHECK(st.share >= nom * 9 / 10, "one sample naming only us: share %.2f nominal (the shared gain: 0.93)",
          (double)st.share / (double)nom);
}

/* idle: after a wound-up share (1.5 x nominal), back within 5 % of
 * nominal in 25 idle cycles (an eighth of the excess each), most of it
 * kept over a pause of 3; a share under nominal kept. Control: CC_TEST_IDLE_FROZEN (share frozen while
 * idle, as before 2026-12-02): fails, the share still 1.5 x. */
static void idle_decay(void)
{
    cc_ctrl_state_t st = cc_ctrl_initial(500, 50000000);
    st.share = 75000000;
    for (int c = 0; c < 25; c++) {
        cc_ctrl_input_t in = {.kind = CC_CTRL_DELTA, .cap_pm = 500, .user_pm = 0, .sys_pm = 0,
                              .sample_valid = 1, .throttled = 0, .nominal = 50000000};
        cc_ctrl_output_t out;
        st = cc_ctrl_step(st, &in, &out);
        if (c == 2)
            CHECK(st.share > 60000000 && st.share < 75000000, "after 3 idle cycles share %lld",
                  (long long)st.share);
    }
    printf("idle: share %.1f ms after 25 idle cycles (from 75, nominal 50)\n", st.share / 1e6);
    CHECK(st.share < 52500000 && st.share >= 50000000,
          "after 25 idle cycles share %lld (nominal 50 ms)", (long long)st.share);
    /* The same on quiet cycles (the watcher skipped the sample: no sample
     * at all), with the bucket trimmed; a quiet cycle with a waiter holds. */
    st.share = 75000000;
    for (int c = 0; c < 25; c++) {
        cc_ctrl_input_t in = {.kind = CC_CTRL_AUTO, .cap_pm = 500, .quiet = 1,
                              .throttled = c == 0, .nominal = 50000000};
        cc_ctrl_output_t out;
        st = cc_ctrl_step(st, &in, &out);
        if (c == 0) CHECK(!out.bypass && st.share == 75000000, "quiet but throttled: bypass");
        else CHECK(out.bypass && out.bucket_target == 50000000, "quiet cycle %d: no bypass", c);
    }
    printf("quiet: share %.1f ms after 24 quiet cycles\n", st.share / 1e6);
    CHECK(st.share < 52500000, "after 24 quiet cycles share %lld", (long long)st.share);
    /* Under nominal: kept (it holds the cap when the work resumes). */
    st.share = 40000000;
    for (int c = 0; c < 25; c++) {
        cc_ctrl_input_t in = {.kind = CC_CTRL_DELTA, .cap_pm = 500, .quiet = c % 2,
                              .sample_valid = !(c % 2), .nominal = 50000000};
        cc_ctrl_output_t out;
        st = cc_ctrl_step(st, &in, &out);
    }
    CHECK(st.share == 40000000, "a share under nominal moved to %lld while idle", (long long)st.share);
}

/* A saturating queue from state st, the plant's samples lag refills behind
 * (0 % before the queue's first): the share must stay within 5 % of
 * nominal. The first refill comes after a gap in the refills (resumed):
 * for a new line that changes nothing. */
static void queue_after_pause(const char *what, cc_ctrl_state_t st, uint32_t cap, int64_t nominal, int lag)
{
    uint32_t seen[64] = {0}; /* the plant's utilization at each refill */
    int64_t top = st.share;
    for (int c = 0; c < 40; c++) {
        seen[c] = plant(st.share, nominal, cap, 1.0, 1000);
        cc_ctrl_input_t in = {.kind = CC_CTRL_AUTO, .cap_pm = cap, .sample_valid = 1,
                              .user_pm = c >= lag ? seen[c - lag] : 0, .throttled = 1, .nominal = nominal,
                              .resumed = c == 0};
        in.sys_pm = in.user_pm;
        cc_ctrl_output_t out;
        st = cc_ctrl_step(st, &in, &out);
        if (st.share > top) top = st.share;
    }
    printf("%s, samples %d refills behind: share at most %.1f ms a period (nominal %.1f)\n", what, lag,
           top / 1e6, nominal / 1e6);
    CHECK(top <= nominal + nominal / 20, "%s, lag %d: the share rose to %.1f ms on the pause's samples", what,
          lag, top / 1e6);
}

/* A deep queue after a pause, alone on the device, its cost model right
 * (the plant at exactly cap x share / nominal): throttled from the first
 * refill on, and NVML's samples LAG refills behind, so the first ones
 * describe the pause (0 %). On the H200 those samples came 0.1-0.2 s after
 * the first launch and the share rose from 30 to 43.6 ms a period
 * (docs/validation.md, 2026-12-04). The share must stay at nominal, for a
 * lag of 1 to 4 refills. Without the run of throttled refills
 * (compute.controller.start.control: raised on the first) it rises 0.3
 * nominal on the first such sample, every time: no timing decides. */
static void start(void)
{
    const uint32_t cap = 300;
    const int64_t nominal = 30000000;
    for (int lag = 1; lag <= 4; lag++) queue_after_pause("start", cc_ctrl_initial(cap, nominal), cap, nominal, lag);
    /* The run needs the waits to be unbroken: a light load that waits every
     * other period, its samples low, never winds the share up. */
    cc_ctrl_state_t st = cc_ctrl_initial(cap, nominal);
    for (int c = 0; c < 40; c++) {
        cc_ctrl_input_t in = {.kind = CC_CTRL_AUTO, .cap_pm = cap, .sample_valid = 1, .user_pm = 150,
                              .sys_pm = 150, .throttled = c % 2, .nominal = nominal};
        cc_ctrl_output_t out;
        st = cc_ctrl_step(st, &in, &out);
    }
    CHECK(st.share == nominal, "waits every other period wound the share to %.1f ms", st.share / 1e6);
    /* And a model that over-charges (the plant at 0.6x) is still corrected
     * once the waits run on: the share rises after the run. */
    st = cc_ctrl_initial(cap, nominal);
    for (int c = 0; c < CC_CTRL_UP_RUN + 3; c++) {
        cc_ctrl_input_t in = {.kind = CC_CTRL_AUTO, .cap_pm = cap, .sample_valid = 1, .user_pm = 180,
                              .sys_pm = 180, .throttled = 1, .nominal = nominal};
        cc_ctrl_output_t out;
        st = cc_ctrl_step(st, &in, &out);
    }
    CHECK(st.share > nominal, "a held-down container's share did not rise after %d throttled refills",
          CC_CTRL_UP_RUN + 3);
}

/* The same queue, started by a process of a container whose earlier
 * process waited on through its last refills and exited: the line's run of
 * throttled refills (in the region) is at its top, and the first refill
 * comes after a gap (in.resumed). The run starts over: the share stays at
 * nominal on the pause's samples, for a lag of 1 to 4 refills. Without it
 * (compute.controller.restart.control: the run kept) the share rises on
 * the first 0 % sample, every time. */
static void restart(void)
{
    const uint32_t cap = 500;
    const int64_t nominal = 50000000;
    cc_ctrl_state_t st = cc_ctrl_initial(cap, nominal);
    st.throttle_run = 255; /* the earlier process's run */
    for (int lag = 1; lag <= 4; lag++) queue_after_pause("restart", st, cap, nominal, lag);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    if (!strcmp(which, "noisy") || !strcmp(which, "all")) noisy();
    if (!strcmp(which, "unit") || !strcmp(which, "all")) unit();
    if (!strcmp(which, "idle") || !strcmp(which, "all")) idle_decay();
    if (!strcmp(which, "aimd") || !strcmp(which, "all")) aimd_mp();
    if (!strcmp(which, "contended") || !strcmp(which, "all")) contended();
    if (!strcmp(which, "start") || !strcmp(which, "all")) start();
    if (!strcmp(which, "restart") || !strcmp(which, "all")) restart();
    CHECK_EXIT();
}
