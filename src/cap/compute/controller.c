#include "cap/compute/controller.h"

#include <string.h>

#include "common/controls.h"

static int64_t clamp_share(int64_t s, int64_t nominal)
{
    int64_t lo = nominal / CC_CTRL_SHARE_MIN_DIV, hi = nominal * CC_CTRL_SHARE_MAX_MUL;
    if (lo < 1) lo = 1;
    return s < lo ? lo : s > hi ? hi : s;
}

/* A new line's exclusivity: alone until others are seen (excl_step). */
static inline uint8_t CC_CONTROL_POINT(initially_alone)(void) { return 1; }

cc_ctrl_state_t cc_ctrl_initial(uint32_t cap_pm, int64_t nominal)
{
    cc_ctrl_state_t st;
    memset(&st, 0, sizeof st);
    st.share = nominal;
    st.up_limit_pm = cap_pm;
    st.excl_debounced = initially_alone();
    return st;
}

/* The samples in a row that flip the exclusivity: more to enter it than to
 * leave it (excl_step says why). */
static inline unsigned CC_CONTROL_POINT(excl_debounce)(uint8_t raw)
{
    return raw ? CC_CTRL_EXCL_ENTER : CC_CTRL_EXCL_LEAVE;
}

/* A reading under the target may raise the share only once the container
 * has been throttled for CC_CTRL_UP_RUN refills in a row: a sample covers
 * a window that ended before it was read (NVML shows a period some time
 * after it ends), so the first samples after a queue starts describe the
 * idle time before it. Read while throttled, they raised the share at
 * once: on the H200 a deep queue after a 0.5 s pause wound the share from
 * 30 to 43.6 ms a period on a 0 % sample 0.2 s after its first launch, and
 * its 30 matmuls ran at 36.8-39.7 % of the device (CUPTI) under a 30 % cap
 * (docs/validation.md, 2026-12-04). Five periods: the H200's samples
 * showed a queue's work 0.3-0.6 s after it began. A correction the model
 * needs (a container held under its cap) waits those periods once. */
static inline int CC_CONTROL_POINT(up_allowed)(const cc_ctrl_state_t *st, const cc_ctrl_input_t *in)
{
    return in->throttled && st->throttle_run >= CC_CTRL_UP_RUN;
}

/* Delta: an integral law on the relative error, in units of nominal.
 * Tokens are device time, so utilization is proportional to share while
 * demand exceeds supply; a gain of 0.3 per cycle closes a model error in a
 * few cycles and stays stable with the one or two cycles of lag of queued
 * work and of the sample. Additive, not multiplicative: a multiplicative
 * step drifts down on a noisy signal (x0.75 then x1.25 is 0.94). Upward steps need evidence of demand
 * over the whole window the sample covers (up_allowed): otherwise an idle or light container would wind share up
 * and burst when it wakes.
 * The gain is 0.3 while the container is alone on the device and
 * CC_CTRL_SHARED_GAIN while others use it too: then NVML's per-process
 * samples can be right only on average (on the H200, with two containers
 * saturating the device, each sample named one process with the device's
 * whole share: a container read 0 % or 99 %), and a reading that noisy moved
 * share by half a nominal period a cycle; two containers at caps 30 and 50
 * held 20-37 % and 37-60 % on the simulator's model of it. The cost model
 * (tokens are device time) keeps a container near its cap meanwhile; the
 * low gain corrects its bias over a few seconds of samples. */
static int64_t delta_law(int64_t share, const cc_ctrl_input_t *in, uint32_t target, double gain, int up)
{
    int32_t err = (int32_t)target - (int32_t)in->user_pm;
    if (err > -CC_CTRL_DEADBAND_PM && err < CC_CTRL_DEADBAND_PM) return share;
    if (err > 0 && !up) return share;
    /* No clamp inside the normal range: on a quantized signal (a 50 ms
     * kernel makes 100 ms samples of 0 or 50 %) an asymmetric clamp biases
     * the average. Only a gross excess (over 4x the cap) is clamped. */
    double step = gain * (double)err / (double)(target ? target : 1);
    if (step < -1.0) step = -1.0;
    return share + (int64_t)(step * (double)in->nominal);
}

/* AIMD: additive increase while below the band and throttled, multiplicative
 * decrease above it, then CC_CTRL_AIMD_COOLDOWN cycles during which no cut
 * may fire: the sample lags the cut, and without the cooldown every cycle
 * would cut again on the same stale excess (the MD avalanche). The cooldown
 * is state, so it is shared with the bucket: the refill winner changes from
 * cycle to cycle. */
static int64_t aimd_law(cc_ctrl_state_t *st, const cc_ctrl_input_t *in, uint32_t target,
                        cc_ctrl_output_t *out)
{
    int64_t share = st->share;
    if (st->md_cooldown) st->md_cooldown--;
    if (in->user_pm > target + CC_CTRL_AIMD_BAND_PM) {
        if (st->md_cooldown == 0) {
            share = share * 17 / 20;
            st->md_cooldown = CC_CTRL_AIMD_COOLDOWN;
            out->md_fired = 1;
        }
    } else if (in->user_pm + CC_CTRL_AIMD_BAND_PM < target && up_allowed(st, in)) {
        share += in->nominal / 16;
    }
    return share;
}

/* Exclusivity: alone on the device when the others use under 1 %. Lost after
 * CC_CTRL_EXCL_LEAVE samples that show others, regained only after
 * CC_CTRL_EXCL_ENTER that show none: when each NVML sample names one process
 * (the H200 under two busy containers), many samples show only ours, and a
 * symmetric 10-cycle debounce flipped to "alone" every few seconds (and the
 * alone gain then ran on that noise). Losing it arms a one-shot reset. */
static void excl_step(cc_ctrl_state_t *st, const cc_ctrl_input_t *in)
{
    uint32_t others = in->sys_pm > in->user_pm ? in->sys_pm - in->user_pm : 0;
    uint8_t raw = others < CC_CTRL_EXCL_PM;
    if (raw == st->excl_debounced) {
        st->excl_streak = 0;
        return;
    }
    if (++st->excl_streak < excl_debounce(raw)) return;
    if (st->excl_debounced && !raw) st->lost_excl_pending = 1;
    st->excl_debounced = raw;
    st->excl_streak = 0;
}

/* Others' work named: not alone from now on, without the debounce. */
static inline void CC_CONTROL_POINT(not_alone)(cc_ctrl_state_t *st)
{
    st->excl_debounced = 0;
    st->excl_streak = 0;
    st->lost_excl_pending = 0; /* (its reset of the share: the yield's is enough) */
}

cc_ctrl_state_t cc_ctrl_shared(cc_ctrl_state_t st)
{
    not_alone(&st);
    return st;
}

/* An idle cycle's share: one above nominal an eighth of the way back to it
 * (cc_ctrl_step says why), one under nominal kept. */
static inline int64_t CC_CONTROL_POINT(idle_share)(int64_t share, int64_t nominal)
{
    return share > nominal ? share - (share - nominal) / 8 : share;
}

/* auto: the delta law, its gain by exclusivity. (It also had AIMD's
 * guarded cut while others share the device; on samples that read 0 % or
 * 99 % at random, every high reading fired it, and readings under the cap
 * raised share in its cooldown: 47 % at cap 30 on the H200.) */
static inline int64_t CC_CONTROL_POINT(auto_law)(cc_ctrl_state_t *st, const cc_ctrl_input_t *in)
{
    if (st->md_cooldown) st->md_cooldown--;
    double gain = st->excl_debounced ? 0.3 : CC_CTRL_SHARED_GAIN;
    return delta_law(st->share, in, st->up_limit_pm, gain, up_allowed(st, in));
}

/* The run of throttled refills after a gap in the refills: it starts over.
 * The run lives in the container's region, and the gap means no process
 * watched the line (all had exited, or were stopped): a run counted by an
 * earlier process says nothing about a queue that starts now, whose first
 * samples describe the pause before it. Kept, it let a restarted
 * process's share rise on its first 0 % samples (a hard 50 wound to 53.7
 * ms a period and ran 54.6 % beside a suite, compute.watcher.cheap,
 * 2026-12-06). */
static inline uint8_t CC_CONTROL_POINT(run_after_gap)(uint8_t run, int resumed)
{
    return resumed ? 0 : run;
}

cc_ctrl_state_t cc_ctrl_step(cc_ctrl_state_t st, const cc_ctrl_input_t *in,
                             cc_ctrl_output_t *out)
{
    memset(out, 0, sizeof *out);
    /* The state comes from the shared line: clamp it to what this function
     * could have returned (share is clamped below). */
    if (st.md_cooldown > CC_CTRL_AIMD_COOLDOWN) st.md_cooldown = CC_CTRL_AIMD_COOLDOWN;
    if (st.excl_streak > CC_CTRL_EXCL_ENTER) st.excl_streak = CC_CTRL_EXCL_ENTER;
    st.excl_debounced = st.excl_debounced != 0;
    st.lost_excl_pending = st.lost_excl_pending != 0;
    /* Every refill, whatever the sample: the run is of refills. */
    st.throttle_run = run_after_gap(st.throttle_run, in->resumed);
    st.throttle_run = !in->throttled ? 0 : st.throttle_run < 255 ? (uint8_t)(st.throttle_run + 1) : 255;
    st.up_limit_pm = in->cap_pm;
    if (in->nominal <= 0) return st;
    if (st.share <= 0) st.share = in->nominal;
    /* Before any law: share = INT64_MAX from the file overflowed in
     * delta_law (share + step) and aimd_law (share * 17), UB that aborts
     * under UBSan (faults.lib, "forged, compute: share = INT64_MAX"). Every
     * share this function returns is inside the clamp, so this changes
     * nothing for what the code wrote. */
    st.share = clamp_share(st.share, in->nominal);
    if (!in->sample_valid && !in->quiet) return st;
    if (in->sample_valid) excl_step(&st, in);
    /* Anti-jitter bypass: an idle container (under a tenth of its cap) that
     * nobody is throttled in gets its bucket brought to one nominal period,
     * so the first heavy kernels after idle cannot burst past the cap on a
     * full bucket. Never while throttled: that would starve a real workload
     * whose utilization the sample has not caught yet.
     * A share above nominal goes an eighth of the way back to it each idle
     * cycle: one learned under load survives a pause of a few cycles (0.67
     * of the excess after 3), but not a long idle. Frozen, a share wound up
     * by a start (a first timing queued behind another container's kernels
     * charged a batch several times its cost, the wait read as demand:
     * 1.23 x nominal) was still there 2 s later, and a hard 50 container's
     * first burst after that idle ran 59 % for a second
     * (compute.elastic.bursts, CI of 2026-12-02). A share under nominal is
     * kept: it is what holds the cap on resuming (decayed up, the bursts'
     * later onsets ran 0.5 point higher). A quiet cycle (the watcher
     * skipped the sample: a full bucket, nobody waiting) is idle too,
     * without a sample. */
    uint32_t idle = in->cap_pm / 10 > 10 ? in->cap_pm / 10 : 10;
    if (!in->throttled && (in->quiet || (in->sample_valid && in->user_pm < idle))) {
        out->bypass = 1;
        out->bucket_target = in->nominal;
        if (st.md_cooldown) st.md_cooldown--;
        st.share = idle_share(st.share, in->nominal);
        st.share = clamp_share(st.share, in->nominal);
        return st;
    }
    if (!in->sample_valid) return st; /* quiet yet throttled: no data */
    /* auto: delta's law, its gain by exclusivity (delta_law). */
    int aimd = in->kind == CC_CTRL_AIMD;
    if (in->kind == CC_CTRL_AUTO && st.lost_excl_pending) {
        /* Someone else arrived: restart from the model's estimate rather
         * than from a share tuned for an empty device. */
        st.lost_excl_pending = 0;
        st.share = in->nominal;
        st.md_cooldown = 0;
    }
    out->used_aimd = aimd;
    st.share = aimd ? aimd_law(&st, in, st.up_limit_pm, out) : auto_law(&st, in);
    st.share = clamp_share(st.share, in->nominal);
    return st;
}
