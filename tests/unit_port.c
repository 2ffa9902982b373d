/* Policy through the port (src/cap/port.h), without driver or hook layer:
 * the default port fails cleanly (no timing, "cannot tell" for captures),
 * and with a scripted port the cost model times a launch and the capture
 * bookkeeping asks the right variant. */
#include <time.h>

#include "cap/compute/capture.h"
#include "common/clock.h"
#include "cap/compute/compute.h"
#include "check.h"
#include "fake_port.h"

int main(void)
{
    int key, measure = 0;
    /* The default port. */
    CHECK(cc_port() == &cc_port_default, "a port installed before any install");
    CHECK(cc_capture_stream_busy(NULL, 0) == 1, "default port: a capture must read 'cannot tell'");
    CUstreamCaptureMode saved;
    CHECK(cc_capture_relaxed_enter(&saved) == -1, "default port: no capture-mode exchange");
    CHECK(cc_cost_begin(NULL, 0, NULL) == NULL, "default port: no timing");

    fake_port_install();
    CHECK(cc_port() != &cc_port_default, "the fake port is installed");
    cc_port_t other = cc_port_default;
    CHECK(cc_port_install(&other) == -1, "a second port replaced the first");

    /* Capture status: the variant the launch used. */
    fake.capture = CU_STREAM_CAPTURE_STATUS_NONE;
    fake.capture_ptsz = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    CHECK(cc_capture_stream_busy(NULL, 0) == 0, "legacy stream not capturing");
    CHECK(cc_capture_stream_busy(NULL, 1) == 1, "per-thread stream capturing");
    fake.capture_ptsz = CU_STREAM_CAPTURE_STATUS_NONE;

    /* Relaxed mode entered and left. */
    CHECK(cc_capture_relaxed_enter(&saved) == 0, "exchange failed");
    CHECK(fake.mode == CU_STREAM_CAPTURE_MODE_RELAXED && saved == CU_STREAM_CAPTURE_MODE_GLOBAL,
          "mode %d saved %d", (int)fake.mode, (int)saved);
    cc_capture_relaxed_leave(&saved);
    CHECK(fake.mode == CU_STREAM_CAPTURE_MODE_GLOBAL, "mode not restored: %d", (int)fake.mode);

    /* A never-timed shape is timed once and then estimated from the timing. */
    CHECK(cc_cost_estimate(&key, 64, &measure, 0) == 0 && measure == 2, "untimed shape: measure %d", measure);
    fake.elapsed_ms = 2.5f;
    void *m = cc_cost_begin(NULL, 0, NULL);
    CHECK(m != NULL, "no timing with the fake port");
    fake.not_ready = 1; /* work queued before the start event: the timing is the kernel's */
    cc_cost_end(m, NULL, 0, &key, 64, 0, NULL, 1);
    /* The context's first timing makes 16 pairs' events (cost.c, premake). */
    CHECK(fake.events_made == 32 && fake.records == 2, "events %d records %d", fake.events_made,
          fake.records);
    int exchanges = fake.exchanges;
    cc_cost_poll(0);
    CHECK(fake.exchanges == exchanges + 2, "the poll did not run relaxed (%d exchanges)",
          fake.exchanges - exchanges);
    int64_t est = cc_cost_estimate(&key, 64, &measure, 0);
    CHECK(est == 2500000, "estimate %lld ns, want 2500000", (long long)est);
    CHECK(cc_cost_fallback() == 2500000, "fallback %lld", (long long)cc_cost_fallback());

    /* Sampling: a timed shape is timed again 25 ms after its last timing,
     * or 250 ms while the bucket holds half its capacity (below_cap). 30 ms
     * after the timing above: due at the full rate only (the below-cap
     * check is left out if this thread was held up past 250 ms). */
    uint64_t t_then = cc_mono_ns();
    struct timespec nap = {0, 30 * 1000000L};
    nanosleep(&nap, NULL);
    cc_cost_estimate(&key, 64, &measure, 1);
    int below = measure;
    if (cc_mono_ns() - t_then < 200 * 1000000ull)
        CHECK(below == CC_MEASURE_NO, "below the cap, a shape timed 30 ms ago was timed again");
    cc_cost_estimate(&key, 64, &measure, 0);
    CHECK(measure == CC_MEASURE_SAMPLE, "at the cap, a shape timed 30 ms ago was not timed again (%d)", measure);

    /* An idle stream (the start event done when the launch returned): the
     * host's gap comes off, at most half (cc_cost_kernel_ns). */
    CHECK(cc_cost_kernel_ns(10000, 6000) == 5000 && cc_cost_kernel_ns(10000, 2000) == 8000 &&
              cc_cost_kernel_ns(10000, 20000) == 10000 && cc_cost_kernel_ns(10000, 0) == 10000,
          "kernel_ns: %lld %lld %lld %lld", (long long)cc_cost_kernel_ns(10000, 6000),
          (long long)cc_cost_kernel_ns(10000, 2000), (long long)cc_cost_kernel_ns(10000, 20000),
          (long long)cc_cost_kernel_ns(10000, 0));
    static int key2;
    cc_cost_estimate(&key2, 64, &measure, 0);
    m = cc_cost_begin(NULL, 0, NULL);
    CHECK(fake.events_made == 32, "a second shape's timing made events (%d)", fake.events_made);
    exchanges = fake.exchanges;
    cc_cost_end(m, NULL, 0, &key2, 64, 0, NULL, 1);
    CHECK(fake.exchanges == exchanges + 2, "the start query did not run relaxed (%d exchanges)",
          fake.exchanges - exchanges);
    cc_cost_poll(0);
    est = cc_cost_estimate(&key2, 64, &measure, 0);
    CHECK(est < 2500000 && est >= 1250000, "idle stream: estimate %lld ns", (long long)est);

    /* A launch's poll asks a bounded number of pending timings, the next
     * ones the poll after: 16 timings in flight (16 new shapes, no sync)
     * must not cost every later launch 16 queries (cost.c, CC_POLL_QUERIES).
     * Checked against the unbounded poll (CC_POLL_QUERIES set to 64): the
     * first CHECK fails with 16 queries. */
    static int keys[16];
    void *ms[16];
    for (int i = 0; i < 16; i++) {
        cc_cost_estimate(&keys[i], 64, &measure, 0);
        ms[i] = cc_cost_begin(NULL, 0, NULL);
        CHECK(ms[i] != NULL, "timing %d not begun", i);
    }
    fake.not_ready = 1 << 20;
    for (int i = 0; i < 16; i++) cc_cost_end(ms[i], NULL, 0, &keys[i], 64, 0, NULL, 1);
    int queries = fake.queries;
    cc_cost_poll(2);
    CHECK(fake.queries - queries <= 4, "one launch's poll asked %d timings", fake.queries - queries);
    fake.not_ready = 0;
    for (int i = 0; i < 8 && cc_cost_pending; i++) cc_cost_poll(2);
    CHECK(cc_cost_pending == 0, "%d timings still pending after 8 bounded polls", cc_cost_pending);

    /* Into a capture: no timing (an event recorded there could not be queried). */
    fake.capture = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    CHECK(cc_cost_begin(NULL, 0, NULL) == NULL, "timed a launch into a capture");
    CHECK_EXIT();
}
