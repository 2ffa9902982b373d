/* The negative controls: every test-only switch (CC_TEST_*, CC_ML_TEST_*,
 * and the cudacap command's CLI_TEST_*), the production files whose
 * mechanism it removes, and the tests that must fail with it (WILL_FAIL in
 * tests/, the proof that the test can see the mechanism). No production
 * build defines any of them.
 *
 * Where a control lives (docs/design.md, "Negative controls"): production
 * code names the mechanism a control removes as a function of its own, a
 * control point, defined as `static ... CC_CONTROL_POINT(name)(...)`. The
 * control is a wrapper under tests/controls/ named like the file: under
 * `#ifdef SWITCH` it defines `name(...)` as a function-like macro (its own
 * version), then includes the production source. The parentheses the
 * macro below puts around the name keep the definition out of that macro,
 * so only the calls are redirected; a production build compiles the same
 * code as without it (a static function called once is inlined). The
 * control libraries and executables, and the command's variants, compile
 * the wrapper in the place of the source (tests/memory.cmake and
 * tests/cli.cmake, cc_control_reach); a header's inline control points are
 * redirected by a wrapper header that the tests compiling it include
 * (tests/controls/bucket.h). No production file holds an #ifdef of a
 * switch.
 *
 * This list is checked, not just read: scripts/check_controls.sh (ctest
 * layers.controls, and .ci/run) fails when a switch appears in src/ or
 * tests/controls/ without a row, when a row names a file that has no
 * control point a wrapper redirects under it, when a wrapper redirects a
 * name that is not a control point of its file, when a production file
 * holds a branch of a switch, or when a row's test is not registered
 * WILL_FAIL. A new control is one row here, one control point in the named
 * file, its version in the file's wrapper, and a WILL_FAIL test.
 *
 * X(SWITCH, "files under src/ (space separated)", "ctest names (space separated)") */
#ifndef CC_COMMON_CONTROLS_H
#define CC_COMMON_CONTROLS_H

#define CC_CONTROL_POINT(name) (name)

#define CC_CONTROLS(X)                                                                                                 \
    /* memory */                                                                                                       \
    X(CC_TEST_ARRAY_AFTER, "hook/memory_vmm.c", "mem.arrays.before.control")                                           \
    X(CC_TEST_CTX_CONTROL, "cap/mem/ctx_admit.c hook/memory_code.c",                                                     \
      "mem.ctx.late.control mem.ctx.fork.control mem.ctx.learn.control mem.ctx.code.control")                          \
    X(CC_TEST_CTX_UNCHARGED, "cap/mem/ctx_admit.c", "faults.loop.control.nvml_procs")                                    \
    X(CC_TEST_CURRENT_DEVICE, "hook/devices.c hook/memory_pool.c", "route.2dev.kernel.control route.2dev.pool.control") \
    X(CC_TEST_DEEPBIND_UNBOUND, "hook/deepbind.c", "route.deepbind.alloc.control route.deepbind.launch.control") \
    X(CC_ML_TEST_LOCAL_ONLY, "cap/mem/ledger_reserve.c", "mem.ledger.race.negative_control mem.preload.race.negative_control mem.over.share.control")                           \
    X(CC_ML_TEST_NO_SWEEP, "cap/mem/ledger_slots.c", "mem.ledger.kill_storm.negative_control mem.preload.kill_storm.negative_control mem.over.kill.control")                        \
    X(CC_ML_TEST_NO_REJOIN, "cap/mem/ledger_attach.c", "faults.lib.control.rejoin")                                    \
    X(CC_ML_TEST_NO_REKEY, "cap/mem/ledger_rebuild.c", "faults.lib.control.rekey")                                       \
    X(CC_ML_TEST_NO_REPUBLISH, "cap/mem/ledger_rebuild.c", "mem.state.rebuild.control")                                \
    X(CC_TEST_OVER_DEVICE, "hook/memory_over.c", "mem.over.fill.control")                                              \
    X(CC_TEST_OVER_NO_CHECKS, "cap/mem/over.c", "mem.over.safety.control")                                             \
    X(CC_ML_TEST_TRUST_HW, "cap/mem/ledger_reserve.c cap/mem/ledger_internal.h", "mem.state.slots.control")                                        \
    X(CC_ML_TEST_WRAP_ADD, "cap/mem/ledger_reserve.c", "mem.state.wrap.control")                                                                   \
    /* configuration */                                                                                                \
    X(CC_TEST_NO_SEED_NAMES, "common/options.c", "config.seed.control mem.over.seed.control")                                                \
    X(CC_TEST_STRICT_OPEN, "hook/init.c", "config.strict.control")                                                     \
    X(CC_TEST_ENV_OVER_LIMITS, "cap/config.c", "config.limits.file.control")                                           \
    X(CC_TEST_TRUST_BAD_LIMITS, "cap/config.c", "config.limits.bad.control config.limits.faults.control")              \
    X(CC_TEST_NO_INIT_ENV, "hook/init.c", "config.initenv.control")                                                    \
    X(CC_TEST_NO_LIVE, "cap/live.c", "config.live.mem.control config.live.sm.control")                                 \
    /* state files */                                                                                                  \
    X(CC_TEST_PID_KEY, "region/proc_key.c", "mem.pidns.control")                                                       \
    X(CC_TEST_NO_FILE_CHECKS, "region/region.c", "mem.state.files.control")                                            \
    X(CC_TEST_NO_PATH_RECHECK, "region/region.c", "mem.state.relink.control")                                          \
    X(CC_TEST_UNBOUNDED_INIT_LOCK, "region/region.c", "mem.region.lock.control")                                       \
    X(CC_TEST_NO_SIGBUS_GUARD, "region/guard.c", "mem.state.sigbus.control")                                           \
    /* host pid */                                                                                                     \
    X(CC_TEST_NSPID_ONLY, "hook/hostpid.c", "compute.hostpid.join.control")                                            \
    X(CC_TEST_NO_ID_LOCK, "hook/identity_lock.c", "compute.hostpid.join.control_lock")                                 \
    /* compute: bucket and pacing */                                                                                   \
    X(CC_TEST_PLAIN_TAKE, "cap/compute/bucket.h", "compute.bucket.deductions.control")                                 \
    X(CC_TEST_BYPASS_STORE, "cap/compute/bucket.h", "compute.bucket.bypass.control")                                   \
    X(CC_TEST_NO_PACE_DETECT, "cap/compute/bucket.c", "compute.bucket.pace.control")                                   \
    X(CC_TEST_NO_DRIP, "cap/compute/bucket.c", "compute.smooth.control")                                               \
    X(CC_TEST_LUMP_ALWAYS, "cap/compute/bucket.c", "compute.step.plain.control compute.step.graph.control")            \
    X(CC_TEST_NO_GROUP, "cap/compute/bucket.c", "compute.step.eager.control")                                          \
    X(CC_TEST_NO_BURST, "cap/compute/compute_setup.c", "compute.step.burst.control")                                   \
    X(CC_TEST_NO_CLAMP, "cap/compute/bucket.c cap/compute/election.h", "compute.forged.control")                       \
    X(CC_TEST_STAMP_NOW, "cap/compute/election.h", "compute.skew.control")                                            \
    /* compute: election and sampling */                                                                               \
    X(CC_TEST_NO_CAS, "cap/compute/election.c", "compute.election.election.control")                                   \
    X(CC_TEST_FIXED_CADENCE, "cap/compute/election.c", "compute.election.slow.control")                                \
    X(CC_TEST_NO_FORGET, "cap/compute/sampling_lock.c", "compute.election.death.control compute.lock.fork.control")    \
    X(CC_TEST_SAMPLE_IDLE, "cap/compute/watcher.c", "compute.idle.control")                                            \
    X(CC_TEST_NO_DEVICE_QUERY, "cap/compute/nvml_sample.c", "compute.watcher.cheap.control")                           \
    X(CC_TEST_EMPTY_IS_IDLE, "cap/compute/nvml_clock.c", "compute.nvmlperiod.control")                                \
    /* compute: controller */                                                                                          \
    X(CC_TEST_FIRST_CONTROLLER, "cap/compute/controller.c", "compute.controller.noisy.control")                        \
    X(CC_TEST_IDLE_FROZEN, "cap/compute/controller.c", "compute.controller.idle.control")                              \
    X(CC_TEST_RUN_KEPT, "cap/compute/controller.c", "compute.controller.restart.control")                            \
    X(CC_TEST_UP_AT_ONCE, "cap/compute/controller.c", "compute.controller.start.control")                               \
    X(CC_TEST_ONE_GAP_GRID, "cap/compute/nvml_clock.c", "compute.period.unit.control_one")                            \
    X(CC_TEST_NEWEST_GAPS_ONLY, "cap/compute/nvml_clock.c", "compute.period.unit.control_newest")                     \
    X(CC_TEST_EMPTY_SEEN_NOW, "cap/compute/nvml_clock.c", "compute.deepq.warm.lag300.control compute.deepq2.lag300.control") \
    X(CC_TEST_STRADDLE_READ, "cap/compute/controller.c cap/compute/elastic.c",                                         \
      "compute.controller.contended.control compute.elastic.unit.straddle_control")                                    \
    /* compute: cost model and admission */                                                                            \
    X(CC_TEST_GAP_CHARGED, "cap/compute/cost.c", "unit.port.gap_control")                                              \
    X(CC_TEST_GAP_TO_RETURN, "cap/compute/cost.c", "compute.cost.preempted.control")                                 \
    X(CC_TEST_NO_RELAXED, "cap/compute/cost.c", "compute.capture.invalidation.control")                                \
    X(CC_TEST_UNTIMED_FREE, "cap/compute/cost.c", "faults.loop.control.event_elapsed")                                 \
    X(CC_TEST_FREE_UNTIMED, "cap/compute/gate.c", "compute.deepq.long.control compute.deepq.short.control compute.deepq.new.control")              \
    X(CC_TEST_NO_HEADROOM, "cap/compute/gate.c", "compute.step.shapes.control")                                        \
    X(CC_TEST_CHARGE_CAPTURE, "cap/compute/gate.c", "compute.capture.time.control")                                    \
    X(CC_TEST_DUP_SLOTS, "cap/compute/gate.c", "compute.deepq.warmstreams.control_dup")                                    \
    X(CC_TEST_BUSY_SLOTS, "cap/compute/gate.c", "compute.deepq.warmnew.control_busy")                               \
    X(CC_TEST_NO_COMPUTE_REJOIN, "cap/compute/compute_setup.c", "compute.rejoin.fifo.control compute.rejoin.dir.control") \
    /* compute: elastic caps */                                                                                        \
    X(CC_TEST_NO_ELASTIC, "cap/compute/compute_setup.c", "compute.elastic.alone.control")                              \
    X(CC_TEST_NO_YIELD, "cap/compute/elastic.c",                                                                       \
      "compute.elastic.newcomer.control compute.elastic.two.control compute.elastic.unit.control")                     \
    X(CC_TEST_NO_GROW, "cap/compute/elastic.c", "compute.elastic.two.control_grow")                                    \
    X(CC_TEST_SEED_YIELD, "cap/compute/elastic.c", "compute.elastic.bursts.control")                                   \
    X(CC_TEST_NO_SAT_ARRIVAL, "cap/compute/elastic.c",                                                                 \
      "compute.elastic.bursts.h200.control compute.elastic.guard.control compute.elastic.unit.sat_control")            \
    X(CC_TEST_GUARD_JUMP, "cap/compute/elastic.c", "compute.elastic.unit.guard_jump_control")                       \
    /* the cudacap command (variants built by tests/cli.cmake, cc_cli_variant) */                                      \
    X(CLI_TEST_COUNT_DEAD, "cli/snapshot.c", "cli.status.dead.negative_control")                                       \
    X(CLI_TEST_NO_VALIDATE, "cli/snapshot.c", "cli.status.corrupt.negative_control")                                   \
    X(CLI_TEST_BLOCKING_OPEN, "region/peek.c", "cli.status.unusable.negative_control")                                 \
    X(CLI_TEST_MMAP_PEEK, "region/peek.c", "cli.status.truncate.negative_control")                                     \
    X(CLI_TEST_FOLLOW_LINKS, "cli/statedir.c", "cli.prepare.paths.negative_control")                                   \
    X(CLI_TEST_NO_PROC_SCAN, "cli/liveness.c", "cli.prepare.live.negative_control")                                    \
    X(CLI_TEST_NO_LIVE_BYTES, "cli/liveness.c", "cli.prepare.livebytes.negative_control")                              \
    X(CLI_TEST_NO_EVICT, "cli/httpd.c", "cli.metrics.stall.negative_control")                                          \
    X(CLI_TEST_NO_WINDOW_UPDATE, "cli/podres.c", "cli.podres.negative_control")

/* Test hooks: switches that add what a test needs to its build (a pause at
 * a known point), not controls: their tests, the real ones included, pass
 * with them. Held like controls (a control point and a wrapper), checked
 * the same way but for WILL_FAIL.
 * X(SWITCH, "files under src/", "ctest names that run a build with it") */
#define CC_TEST_HOOKS(X)                                                                                               \
    X(CLI_TEST_PEEK_PAUSE, "region/peek.c", "cli.status.truncate cli.status.truncate.negative_control")

#endif
