/* The elastic step (src/cap/compute/elastic.c) against its rules, and two elastic
 * containers against a model plant: a time-sliced device where each gets
 * what its target allows and the rest idles. Control
 * (compute.elastic.unit.control): CC_TEST_NO_YIELD, others never seen. */
#include <stdio.h>
#include <stdlib.h>

#include "cap/compute/controller.h"
#include "cap/compute/elastic.h"
#include "check.h"

static int foreign_ctx; /* the input's foreign flag for step() */

static cc_elastic_state_t step(cc_elastic_state_t st, uint32_t hard, uint32_t soft, uint32_t user,
                               uint32_t sys, int thr, cc_elastic_output_t *o)
{
    cc_elastic_input_t in = {hard, soft, user, sys, 1, thr, foreign_ctx};
    return cc_elastic_step(st, &in, o);
}

/* Beside a foreign context whose work is not seen (elastic.h): the guard,
 * the provisional yield on a saturated sample, its judgement both ways.
 * Control (compute.elastic.unit.sat_control): CC_TEST_NO_SAT_ARRIVAL; the
 * restore sample held: compute.elastic.unit.straddle_control
 * (CC_TEST_STRADDLE_READ). */
static void guard(void)
{
    cc_elastic_output_t o;
    cc_elastic_state_t st = cc_elastic_initial(300, 1000);
    foreign_ctx = 0;
    st = step(st, 300, 1000, 1000, 1000, 1, &o);
    CHECK(st.up_pm == 1000, "alone, no foreign context: soft (%u)", st.up_pm);
    st = step(st, 300, 1000, 1000, 1000, 1, &o);
    CHECK(!o.yield && st.up_pm == 1000, "alone and saturated: no yield without a foreign context");
    foreign_ctx = 1;
    /* A foreign context appears while we saturate the device: a
     * provisional yield at once, then (nobody's work) back, to the guard. */
    st = step(st, 300, 1000, 1000, 1000, 1, &o);
    CHECK(o.yield && st.up_pm == 300 && st.prov == CC_ELASTIC_PROV, "saturated beside a foreign context: "
          "provisional yield (%d, %u, %u)", o.yield, st.up_pm, st.prov);
    CHECK(!o.contended, "a provisional yield: the controller's gain kept");
    st = step(st, 300, 1000, 640, 640, 1, &o); /* the old target's tail */
    CHECK(!o.yield && st.up_pm == 300 && st.prov == 1 && o.hold, "first judging sample: held, the controller "
          "too (%u, %u, %d)", st.up_pm, st.prov, o.hold);
    st = step(st, 300, 1000, 330, 330, 1, &o);
    CHECK(o.hold, "restored: its sample (at the hard share) held from the controller too");
    CHECK(!o.contended, "restored: not contended");
#ifndef CC_TEST_GUARD_JUMP
    /* Our own lump: back by growth from the hard share, 0.5 x hard x
     * (idle - 15 %) a sample (elastic.h), up to the guard. */
    CHECK(st.up_pm == 300 && !st.prov && !st.contended, "own lump: growing back from the hard share "
          "(%u, %u, %u)", st.up_pm, st.prov, st.contended);
    st = step(st, 300, 1000, 300, 300, 1, &o);
    CHECK(st.up_pm == 383, "growing back: %u (want 383)", st.up_pm);
    /* Read above its target (the cost model lagging), it stops at 15 %
     * idle as NVML reads it. */
    {
        cc_elastic_state_t c = st;
        c.up_pm = 780;
        c = step(c, 300, 1000, 850, 850, 1, &o);
        CHECK(c.up_pm == 780, "read at 85 %% at a target of 78: %u (want 780)", c.up_pm);
    }
    for (int i = 0; i < 40; i++) st = step(st, 300, 1000, st.up_pm, st.up_pm, 1, &o);
    CHECK(!o.yield && st.up_pm >= 1000 - CC_ELASTIC_GUARD_PM - 10 && st.up_pm <= 1000 - CC_ELASTIC_GUARD_PM,
          "grown back to the guard (%u)", st.up_pm);
#endif
    st = step(st, 300, 1000, 850, 850, 1, &o);
    CHECK(!o.yield && st.up_pm >= 840 && st.up_pm <= 850, "at the guard, our own work: no yield (%u)", st.up_pm);
    /* The context's work arrives; NVML names us with the device's whole
     * share (one pid per sample): saturated, yield; the old target's tail
     * unsaturated; then us read at 80 % under a 30 % target: confirmed. */
    st = step(st, 300, 1000, 1000, 1000, 1, &o);
    CHECK(o.yield && st.up_pm == 300, "arrival seen as saturation: yield (%d, %u)", o.yield, st.up_pm);
    st = step(st, 300, 1000, 900, 900, 1, &o);
    CHECK(st.prov == 1 && st.up_pm == 300, "tail: judged on the next (%u)", st.prov);
    st = step(st, 300, 1000, 800, 800, 1, &o);
    CHECK(!st.prov && st.contended && st.up_pm == 300, "read above the hard share: confirmed (%u, %u, %u)",
          st.prov, st.contended, st.up_pm);
    CHECK(!o.hold, "confirmed on the second: the controller reads it (at the hard share)");
    CHECK(!o.contended, "confirmed by our reading alone: no others' work named, the controller's gain kept");
    /* Contended, others' work not seen since: growth stops at the guard. */
    st.up_pm = 845;
    st = step(st, 300, 1000, 500, 500, 1, &o);
    CHECK(st.up_pm == 850, "growth beside a foreign context: at most the guard (%u)", st.up_pm);
    /* Confirmed by others' work named in the first judging sample. */
    st = step(st, 300, 1000, 1000, 1000, 1, &o);
    CHECK(o.yield && st.prov == CC_ELASTIC_PROV, "yield again");
    st = step(st, 300, 1000, 0, 1000, 1, &o);
    CHECK(!st.prov && st.contended && st.up_pm == 300, "others named: confirmed (%u, %u)", st.prov, st.up_pm);
    /* Named at once after the provisional yield: an arrival, and its
     * sample (the old target's tail) held from the controller, as a
     * judging sample is (read against the hard share, it cut the share
     * 42 -> 26 M on the simulator). Checked by hand: with the arrival's
     * hold removed from elastic.c, this fails. */
    CHECK(o.hold, "named arrival on the first judging sample: the controller held");
    CHECK(o.contended, "others named: the controller at its shared gain");
    st = step(st, 300, 1000, 300, 1000, 1, &o);
    CHECK(!o.hold, "the sample after it: the controller reads it");
    /* Others' work seen lately (two elastic containers): saturation is
     * not an arrival, and the guard does not apply. */
    st = step(st, 300, 1000, 0, 1000, 1, &o);
    st.up_pm = 900;
    st = step(st, 300, 1000, 900, 1000, 1, &o);
    CHECK(!o.yield && !st.prov && st.up_pm == 600, "others' level high: no provisional yield, the "
          "saturated halving (%u)", st.up_pm);
    /* A busy neighbour paused for 8 samples: its level still over 1 %
     * (it remembers about ten), but its work named again is an arrival.
     * (Checked by hand: with the level alone, as before, this fails.) */
    foreign_ctx = 0;
    st = cc_elastic_initial(300, 1000);
    st.contended = 1, st.seen = 200, st.up_pm = 700;
    for (int i = 0; i < CC_ELASTIC_QUIET; i++) st = step(st, 300, 1000, 700, 700, 1, &o);
    CHECK(st.seen * 4u >= CC_ELASTIC_GONE_PM && st.calm == CC_ELASTIC_QUIET, "paused: level %u, calm %u",
          st.seen * 4u, st.calm);
    st.up_pm = 700;
    st = step(st, 300, 1000, 0, 1000, 1, &o);
    CHECK(o.yield && st.up_pm == 300, "named after %d quiet samples: an arrival (%d, %u)", CC_ELASTIC_QUIET,
          o.yield, st.up_pm);
    foreign_ctx = 1;
    /* Forged: clamped. */
    cc_elastic_state_t f = cc_elastic_initial(300, 1000);
    f.prov = 200, f.restore_pm = 60000;
    f = step(f, 300, 600, 330, 330, 1, &o);
    CHECK(f.prov <= CC_ELASTIC_PROV && f.restore_pm >= 300 && f.restore_pm <= 600, "forged prov %u restore %u",
          f.prov, f.restore_pm);
    foreign_ctx = 0;
}

static void rules(void)
{
    cc_elastic_output_t o;
    cc_elastic_state_t st = cc_elastic_initial(300, 1000);
    CHECK(st.up_pm == 300, "starts at the hard share: %u", st.up_pm);
    cc_elastic_input_t none = {300, 1000, 0, 0, 0, 1, 0};
    st = cc_elastic_step(st, &none, &o);
    CHECK(st.up_pm == 300, "no sample: hold");
    st = step(st, 300, 1000, 300, 300, 1, &o);
    CHECK(st.up_pm == 1000 && !st.contended, "alone and throttled: soft (%u)", st.up_pm);
    st = step(st, 300, 1000, 950, 950, 1, &o);
    CHECK(o.borrowing && st.up_pm == 1000 && o.borrowed_pm == 650, "borrowing at soft (%u)", o.borrowed_pm);
    /* Others' work appears: the hard share at once. */
    st = step(st, 300, 1000, 900, 950, 1, &o);
    CHECK(o.yield && st.up_pm == 300 && st.contended, "arrival: yield (%u, %d)", st.up_pm, o.yield);
    CHECK(o.contended, "arrival: contended for the controller too");
    /* NVML naming only us, with the device's whole share, while our target
     * is the hard share (one pid per sample): nothing borrowed. */
    {
        cc_elastic_output_t b;
        cc_elastic_state_t c = st;
        c.contended = 1, c.seen = 200; /* others' work seen lately: no arrival */
        c = step(c, 300, 1000, 990, 990, 1, &b);
        CHECK(!b.borrowing && b.borrowed_pm == 0, "at the hard target, read at 99 %%: borrowed %u",
              b.borrowed_pm);
    }
    /* Beside others: grow into idle time, 0.5 x hard x (idle - 5 %). */
    st = step(st, 300, 1000, 300, 800, 1, &o);
    CHECK(!o.yield && st.up_pm == 323, "growth %u (want 323)", st.up_pm);
    /* One saturated sample: a small step down; two: half the borrowed. */
    st.up_pm = 500;
    st = step(st, 300, 1000, 500, 1000, 1, &o);
    CHECK(st.up_pm == 493, "one saturated sample: %u", st.up_pm);
    st = step(st, 300, 1000, 500, 1000, 1, &o);
    CHECK(st.up_pm == 396, "two: half of what is borrowed: %u", st.up_pm);
    /* Hysteresis: others at 1.5 % after 2 %: still there, no new arrival. */
    st = step(st, 300, 1000, 400, 415, 1, &o);
    CHECK(!o.yield && st.seen, "others at 1.5 %%: still seen");
    /* 30 samples without others: alone, the soft limit. */
    for (int i = 0; i < CC_ELASTIC_ALONE; i++) st = step(st, 300, 1000, 400, 400, 1, &o);
    CHECK(!st.contended && st.up_pm == 1000, "alone again: %u %u", st.contended, st.up_pm);
    /* Demand under the hard share, nobody waiting, for a second: nothing
     * borrowed (one such sample alone changes nothing). */
    st = step(st, 300, 1000, 100, 100, 0, &o);
    CHECK(st.up_pm == 1000, "one idle sample: soft still (%u)", st.up_pm);
    for (int i = 1; i < CC_ELASTIC_LOW; i++) st = step(st, 300, 1000, 100, 100, 0, &o);
    CHECK(st.up_pm == 300, "idle: hard (%u)", st.up_pm);
    /* NVML naming one process per sample (the H200 under two saturating
     * containers): others' work in every other sample is one arrival, not
     * one per sample; after a second without it, an arrival again. */
    st = cc_elastic_initial(300, 1000);
    st = step(st, 300, 1000, 1000, 1000, 1, &o); /* alone: soft */
    int yields = 0;
    for (int i = 0; i < 20; i++) {
        st = step(st, 300, 1000, i % 2 ? 1000 : 0, 1000, 1, &o);
        yields += o.yield;
    }
    CHECK(yields == 1, "alternating samples: %d yields (want 1)", yields);
    for (int i = 0; i < 10; i++) st = step(st, 300, 1000, 900, 900, 1, &o);
    st.up_pm = 700;
    st = step(st, 300, 1000, 700, 1000, 1, &o);
    CHECK(o.yield && st.up_pm == 300, "back after a second: an arrival (%d, %u)", o.yield, st.up_pm);
    /* Forged state: clamped. */
    cc_elastic_state_t f = {5000, 7, 255, 1, 9, 200, 0, 0};
    f = step(f, 300, 600, 400, 900, 1, &o);
    CHECK(f.up_pm >= 300 && f.up_pm <= 600 && f.contended == 1 && f.calm <= CC_ELASTIC_ALONE &&
              f.saturated <= 2 && f.low <= CC_ELASTIC_LOW, "forged: %u %u %u", f.up_pm, f.contended, f.calm);
    cc_elastic_state_t g = {100, 0, 0, 1, 0, 0, 0, 0};
    g = step(g, 300, 600, 400, 900, 1, &o);
    CHECK(g.contended == 1 && g.up_pm >= 300 && g.up_pm <= 600, "seen, not contended: %u", g.contended);
}

/* Two elastic containers (30/100, 20/100), both with unbounded demand, on
 * a device that gives each its target while the targets fit and scales
 * them down when they do not (time slicing): each keeps its hard share, the
 * device ends 90-96 % busy, the borrowed time splits about 3:2. With
 * one_pid, NVML names one container per sample; the rule of the first
 * version (an arrival whenever the last sample showed no others; checked by
 * building its elastic.c, commit 1a697cf, against this test) kept both
 * yielding: the device at 599 permille, under the 900 asked. */
static void plant(int one_pid)
{
    cc_elastic_output_t o;
    cc_elastic_state_t a = cc_elastic_initial(300, 1000), b = cc_elastic_initial(200, 1000);
    uint32_t ua = 300, ub = 200;
    uint64_t lcg = 42;
    int named_a = 1;
    double sa = 0, sb = 0;
    int n = 0;
    foreign_ctx = 1; /* each lists the other's context */
    for (int i = 0; i < 300; i++) {
        uint32_t sys = ua + ub > 1000 ? 1000 : ua + ub;
        /* With one_pid, each sample names one container, in proportion to
         * its time (a fixed sequence, every 7th sample...), with the
         * device's whole share, as the H200 reports two saturating ones. */
        uint32_t ra = ua, rb = ub;
        if (one_pid == 2) {
            /* Sticky (the H200 with two elastic containers, the 2026-12-02 elastic-yield run):
             * the one named stays named for runs of samples (13 in a row
             * seen); switching with the chance of the other's share / 2. */
            lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t other = named_a ? ub : ua, r = (uint32_t)(lcg >> 33) % 1000u;
            if (r < other * 500u / (ua + ub ? ua + ub : 1)) named_a = !named_a;
            ra = named_a ? sys : 0, rb = named_a ? 0 : sys;
        } else if (one_pid) {
            int names_a = (uint32_t)((i * 389u) % 1000u) < (ua * 1000u) / (ua + ub ? ua + ub : 1);
            ra = names_a ? sys : 0, rb = names_a ? 0 : sys;
        }
        a = step(a, 300, 1000, ra, sys, 1, &o);
        b = step(b, 200, 1000, rb, sys, 1, &o);
        ua = a.up_pm, ub = b.up_pm;
        if (ua + ub > 1000) { /* saturated: time slicing by queue, half each */
            uint32_t x = ua > 500 ? 500 : ua, y = 1000 - x;
            ua = x, ub = y < ub ? y : ub;
        }
        if (i >= 100) sa += ua, sb += ub, n++;
        CHECK(a.up_pm >= 300 && b.up_pm >= 200, "below hard at %d: %u %u", i, a.up_pm, b.up_pm);
    }
    foreign_ctx = 0;
    sa /= n, sb /= n;
    printf("plant%s: 30/100 %.1f, 20/100 %.1f, device %.1f permille\n",
           one_pid == 2 ? " (one pid, sticky)" : one_pid ? " (one pid per sample)" : "", sa, sb, sa + sb);
    CHECK(sa >= 300 && sb >= 200, "hard shares: %.0f %.0f", sa, sb);
    CHECK(sa + sb >= 900 && sa + sb <= 960, "device %.0f", sa + sb);
    double r = (sa - 300) / (sb - 200);
    /* One pid per sample: each reading is 0 or the device; the split is
     * noisier (1.15 measured) but still favours the larger hard share.
     * Sticky: it follows the naming, not the hard shares (0.44 here; the
     * H200: 43/46 and 37/49 % for 30/100 and 20/100), and is not checked. */
    if (one_pid < 2)
        CHECK(one_pid ? r > 1.0 && r < 1.8 : r > 1.2 && r < 1.8, "borrowed split %.2f (3:2 = 1.5)", r);
}

/* A borrower beside an idle foreign context on a device whose kernels run
 * slower the busier it was (the H200 under its power limit: ~1.15 ms
 * matmuls at a 30 % duty cycle, ~1.7 ms at 87-100 %), under a cost model
 * that times kernels with a lag (the cheapest of the last 0.4 s: two
 * samples): the watcher's elastic bookkeeping (cc_elastic_step, the
 * controller's gain, cc_elastic_share, cc_ctrl_step) closed over that
 * plant, one refill per 200 ms sample, and one of its own lumps read as a
 * saturated sample at sample 24 (a false alarm: one yield). Checks: no
 * other yield, and the guard's target held once grown. Control
 * (compute.elastic.unit.guard_jump_control, CC_TEST_GUARD_JUMP: the guard
 * at once, at the start and after the false alarm): the kernels timed at
 * the hard share's duty cycle, the jump saturates the device and the
 * borrower yields every 0.8 s, as the H200 did in the 2026-12-02 guard run (10-13 yields
 * in 50 samples). shared: the controller at its shared gain from the start
 * (others' work named once, at the context's creation: the H200's run E). */
static void slow_plant(int shared)
{
    const int64_t period = 100000000; /* ns: the nominal supply is target x period */
    cc_elastic_state_t es = cc_elastic_initial(300, 1000);
    cc_ctrl_state_t cs = cc_ctrl_initial(300, 30000000);
    if (shared) cs = cc_ctrl_shared(cs);
    double duty[3] = {0.3, 0.3, 0.3}; /* the device's busy share, last three samples */
    int yields = 0, n = 0;
    double target_sum = 0;
    foreign_ctx = 1;
    for (int i = 0; i < 50; i++) {
        /* This sample: kernels at the speed of the last sample's duty,
         * charged at the cheapest of the last two samples' speeds. */
        double k_true = 1.0 + 0.9 * duty[0];
        double k_est = 1.0 + 0.9 * (duty[1] < duty[2] ? duty[1] : duty[2]);
        double busy = (double)cs.share / (double)period * k_true / k_est;
        if (busy > 1.0) busy = 1.0;
        duty[2] = duty[1], duty[1] = duty[0], duty[0] = busy;
        uint32_t pm = (uint32_t)(busy * 1000.0 + 0.5);
        if (i == 24) pm = 1000; /* one of our own lumps read as a saturated sample */
        uint32_t prev = es.up_pm;
        int64_t nominal_prev = period * prev / 1000;
        cc_elastic_output_t o;
        cc_elastic_input_t in = {300, 1000, pm, pm, 1, 1, 1};
        es = cc_elastic_step(es, &in, &o);
        if (o.contended) cs = cc_ctrl_shared(cs);
        int64_t nominal = period * es.up_pm / 1000;
        cs.share = cc_elastic_share(cs.share, nominal_prev, nominal, period * 300 / 1000, &o);
        cc_ctrl_input_t ci = {CC_CTRL_AUTO, es.up_pm, pm, pm, !(o.hold || o.yield), 1, nominal, 0, 0};
        cc_ctrl_output_t co;
        cs = cc_ctrl_step(cs, &ci, &co);
        yields += o.yield;
        if (getenv("CC_TEST_TRACE"))
            printf("%2d busy %4u target %4u share %5.1f M%s\n", i, pm, es.up_pm, cs.share / 1e6,
                   o.yield ? " yield" : "");
        if (i >= 40) target_sum += es.up_pm, n++;
    }
    foreign_ctx = 0;
    printf("slow plant%s: %d yields in 50 samples, mean target %.0f permille over the last 20\n",
           shared ? " (shared gain)" : "", yields, target_sum / n);
    CHECK(yields == 1, "%d yields beside an idle context (want 1: the false alarm)", yields);
    CHECK(target_sum / n >= 800, "mean target %.0f permille", target_sum / n);
}

int main(void)
{
    rules();
    guard();
    slow_plant(0);
    slow_plant(1);
    plant(0);
    plant(1);
    plant(2);
    CHECK_EXIT();
}
