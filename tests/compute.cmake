# Compute cap suites. Multi-process protocol tests link
# cudacap_core (no CUDA); each negative control is the same test built with a
# -D switch that removes the mechanism, run with WILL_FAIL so a control that
# stops failing turns the suite red.
set(CC_CAP_SRC ${CMAKE_SOURCE_DIR}/src/cap/compute)
# The controls' wrappers (src/common/controls.h), compiled in the place of their sources.
set(CC_CTL ${CMAKE_SOURCE_DIR}/tests/controls)

function(cc_compute_test name src)
  cc_test_exe(${name} ${src})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(${name} PRIVATE cudacap_core pthread)
endfunction()

# name: the control exe; define: the switch; sources: the wrappers
# (tests/controls/, CC_CTL) of the library files whose mechanism the switch
# removes, compiled into the control itself (they take precedence over
# cudacap_core's copies). The bucket's inline admission is compiled into
# its test: that test includes bucket.h's wrapper (tests/controls/bucket.h).
function(cc_compute_control name src define)
  cc_test_exe(${name} ${src} ${ARGN})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_compile_definitions(${name} PRIVATE ${define})
  target_link_libraries(${name} PRIVATE cudacap_core pthread)
endfunction()

cc_compute_test(compute_bucket compute_bucket.c)
add_test(NAME compute.bucket.deductions COMMAND compute_bucket deductions)
add_test(NAME compute.bucket.bypass COMMAND compute_bucket bypass)
cc_compute_control(compute_bucket_plain compute_bucket.c CC_TEST_PLAIN_TAKE)
add_test(NAME compute.bucket.deductions.control COMMAND compute_bucket_plain deductions)
cc_compute_control(compute_bucket_store compute_bucket.c CC_TEST_BYPASS_STORE)
add_test(NAME compute.bucket.bypass.control COMMAND compute_bucket_store bypass)
# Who waits (pacing or lumps, bucket.c). Control: never lumps.
add_test(NAME compute.bucket.pace COMMAND compute_bucket pace)
cc_compute_control(compute_bucket_nodetect compute_bucket.c CC_TEST_NO_PACE_DETECT
                   ${CC_CTL}/bucket.c)
add_test(NAME compute.bucket.pace.control COMMAND compute_bucket_nodetect pace)
set_tests_properties(compute.bucket.pace.control PROPERTIES WILL_FAIL TRUE)
set_tests_properties(compute.bucket.pace compute.bucket.pace.control PROPERTIES
                     TIMEOUT 60 LABELS "compute;concurrency")

cc_compute_test(compute_election compute_election.c)
foreach(c election death stall slow)
  add_test(NAME compute.election.${c} COMMAND compute_election ${c})
endforeach()
cc_compute_control(compute_election_nocas compute_election.c CC_TEST_NO_CAS ${CC_CTL}/election.c)
add_test(NAME compute.election.election.control COMMAND compute_election_nocas election)
set_tests_properties(compute.election.election compute.election.election.control PROPERTIES SKIP_RETURN_CODE 77)
cc_compute_control(compute_election_noforget compute_election.c CC_TEST_NO_FORGET
                   ${CC_CTL}/sampling_lock.c)
add_test(NAME compute.election.death.control COMMAND compute_election_noforget death)
cc_compute_control(compute_election_fixed compute_election.c CC_TEST_FIXED_CADENCE
                   ${CC_CTL}/election.c)
add_test(NAME compute.election.slow.control COMMAND compute_election_fixed slow)
set_tests_properties(compute.election.stall compute.election.slow compute.election.slow.control
                     PROPERTIES SKIP_RETURN_CODE 77)

cc_compute_test(compute_controller compute_controller.c)
add_test(NAME compute.controller.unit COMMAND compute_controller unit)
add_test(NAME compute.controller.aimd COMMAND compute_controller aimd)
# Idle: a wound-up share goes back to nominal. Control: share frozen.
add_test(NAME compute.controller.idle COMMAND compute_controller idle)
cc_compute_control(compute_controller_frozen compute_controller.c CC_TEST_IDLE_FROZEN
                   ${CC_CTL}/controller.c)
add_test(NAME compute.controller.idle.control COMMAND compute_controller_frozen idle)
cc_compute_control(compute_controller_private compute_controller.c CC_TEST_PRIVATE_STATE)
add_test(NAME compute.controller.aimd.control COMMAND compute_controller_private aimd)
# Two containers, NVML naming one process per sample. Control: the first
# auto controller (guarded AIMD cut, symmetric exclusivity debounce).
add_test(NAME compute.controller.noisy COMMAND compute_controller noisy)
cc_compute_control(compute_controller_first compute_controller.c CC_TEST_FIRST_CONTROLLER
                   ${CC_CTL}/controller.c)
add_test(NAME compute.controller.noisy.control COMMAND compute_controller_first noisy)
# After an elastic yield: the shared gain at once. Control: the alone gain
# until the controller's own debounce sees others.
add_test(NAME compute.controller.contended COMMAND compute_controller contended)
cc_compute_control(compute_controller_straddle compute_controller.c CC_TEST_STRADDLE_READ
                   ${CC_CTL}/controller.c)
add_test(NAME compute.controller.contended.control COMMAND compute_controller_straddle contended)

# A queue after a pause, its samples lagging: the share must not rise on the
# samples of the pause. Control: raised on the first throttled refill.
add_test(NAME compute.controller.start COMMAND compute_controller start)
cc_compute_control(compute_controller_up_at_once compute_controller.c CC_TEST_UP_AT_ONCE
                   ${CC_CTL}/controller.c)
add_test(NAME compute.controller.start.control COMMAND compute_controller_up_at_once start)
set_tests_properties(compute.controller.start.control PROPERTIES WILL_FAIL TRUE)

# The same queue started by a process after a gap in the refills (an earlier
# process of the container had waited on and exited): the run of throttled
# refills starts over. Control: the run kept over the gap.
add_test(NAME compute.controller.restart COMMAND compute_controller restart)
cc_compute_control(compute_controller_run_kept compute_controller.c CC_TEST_RUN_KEPT
                   ${CC_CTL}/controller.c)
add_test(NAME compute.controller.restart.control COMMAND compute_controller_run_kept restart)
set_tests_properties(compute.controller.restart.control PROPERTIES WILL_FAIL TRUE)

cc_compute_test(compute_lock compute_lock.c)
add_test(NAME compute.lock.exclusive COMMAND compute_lock exclusive)
add_test(NAME compute.lock.fork COMMAND compute_lock fork)
cc_compute_control(compute_lock_noforget compute_lock.c CC_TEST_NO_FORGET ${CC_CTL}/sampling_lock.c)
add_test(NAME compute.lock.fork.control COMMAND compute_lock_noforget fork)

set_tests_properties(compute.bucket.deductions.control compute.bucket.bypass.control
  compute.election.election.control compute.election.death.control
  compute.election.slow.control compute.controller.aimd.control compute.lock.fork.control
  compute.controller.noisy.control compute.controller.contended.control
  compute.controller.idle.control PROPERTIES WILL_FAIL TRUE)
# The two lost-update controls race plain loads and stores; a sanitizer slows
# each access enough that, on two cores, a run may lose nothing. They prove the
# test's power in the plain build; under a sanitizer they would only be noise.
# They need the two cores to themselves to race at all: run them alone.
set_tests_properties(compute.bucket.deductions.control compute.bucket.bypass.control
  PROPERTIES RUN_SERIAL TRUE)
if(CUDACAP_SANITIZE OR CUDACAP_TSAN)
  set_tests_properties(compute.bucket.deductions.control compute.bucket.bypass.control
    PROPERTIES DISABLED TRUE)
endif()
set_tests_properties(compute.bucket.deductions compute.bucket.bypass compute.election.election
  compute.election.death compute.election.stall compute.election.slow compute.controller.unit
  compute.controller.aimd compute.lock.exclusive compute.lock.fork
  compute.bucket.deductions.control compute.bucket.bypass.control
  compute.election.election.control compute.election.death.control
  compute.election.slow.control compute.controller.aimd.control compute.lock.fork.control
  PROPERTIES TIMEOUT 60 LABELS "compute;concurrency")

# Preloaded clients on the simulator: the library itself.
cc_sim_client(compute_client compute_client.c)
foreach(c fork corrupt unwritable)
  cc_add_preloaded_test(compute.client.${c} compute_client ${c})
  set_tests_properties(compute.client.${c} PROPERTIES LABELS "compute;concurrency")
  set_property(TEST compute.client.${c} APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30")
endforeach()
# The gate's host time (cudacap_gate_ns): counted exactly with
# CUDACAP_COUNT_CALLS=1, nothing without it (the test's other branch).
cc_add_preloaded_test(compute.client.gatetime compute_client gatetime)
cc_add_preloaded_test(compute.client.gatetime.off compute_client gatetime)
set_tests_properties(compute.client.gatetime compute.client.gatetime.off PROPERTIES LABELS compute)
set_property(TEST compute.client.gatetime APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30" "CUDACAP_COUNT_CALLS=1")
set_property(TEST compute.client.gatetime.off APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30" "CUDACAP_COUNT_CALLS=0")
# Control: per-process buckets; parent and fork child together take ~2x.
cc_add_preloaded_test(compute.client.fork.control compute_client fork)
set_tests_properties(compute.client.fork.control PROPERTIES WILL_FAIL TRUE LABELS compute)
set_property(TEST compute.client.fork.control APPEND PROPERTY ENVIRONMENT
             "CUDACAP_SM_LIMIT=30" "CUDACAP_SHARED_BUCKET=0")
if(CUDACAP_TSAN)
  # The fork child starts its own watcher thread; TSan refuses new threads
  # after a multi-threaded fork unless told this is intended.
  set_property(TEST compute.client.fork compute.client.fork.control APPEND PROPERTY ENVIRONMENT
               "TSAN_OPTIONS=die_after_fork=0")
endif()

# A negative control: the same test against the library built with MACRO,
# run with WILL_FAIL (it must fail without the mechanism MACRO removes).
# Usage: cc_preload_control(TEST EXE LIBNAME MACRO ENV...), for tests run
# under the preloaded library (the unit-level ones use cc_compute_control).
function(cc_preload_control test exe lib macro)
  cc_preload_control_mode(${test} "${exe}" "" ${lib} ${macro} ${ARGN})
endfunction()
# The same with an argument for the test program (MODE; "" for none). The
# control library is built once, whatever the number of tests using it.
function(cc_preload_control_mode test exe mode lib macro)
  if(NOT COMMAND cc_memory_control_lib)
    return()
  endif()
  if(NOT TARGET ${lib})
    cc_memory_control_lib(${lib} ${macro})
  endif()
  cc_control_dep(${exe} ${lib})
  if(mode STREQUAL "")
    cc_add_preloaded_test(${test} ${exe})
  else()
    cc_add_preloaded_test(${test} ${exe} ${mode})
  endif()
  string(REPLACE "${CUDACAP_LIB_DIR}/libcudacap.so" "${CUDACAP_TEST_DIR}/${lib}/libcudacap.so"
         _pre "${CUDACAP_PRELOAD}")
  set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT ${ARGN} "LD_PRELOAD=${_pre}")
  set_tests_properties(${test} PROPERTIES WILL_FAIL TRUE LABELS compute)
endfunction()

# Host pid discovery (src/hook/hostpid.c) and the NVML join: NVML reports
# pid + offset. Control: the library with the old NSpid-only discovery.
cc_sim_client(compute_hostpid compute_hostpid.c)
cc_add_preloaded_test(compute.hostpid.join compute_hostpid)
set_tests_properties(compute.hostpid.join PROPERTIES LABELS "compute;concurrency")
set_property(TEST compute.hostpid.join APPEND PROPERTY ENVIRONMENT
             "CUDACAP_SM_LIMIT=30" "CUDACAP_SIM_PID_OFFSET=1000000" "CUDACAP_SIM_CTX_CREATE_MS=50")
cc_preload_control(compute.hostpid.join.control compute_hostpid cudacap_nspid_only CC_TEST_NSPID_ONLY
                   "CUDACAP_SM_LIMIT=30" "CUDACAP_SIM_PID_OFFSET=1000000" "CUDACAP_SIM_CTX_CREATE_MS=50")
# Control: no identity.lock, the four context creations overlap (400 ms
# each, as a slow driver's: with 50 ms a process starved past the others'
# creations resolved its pid alone, and the control passed once in a
# fresh-root suite beside CI and a suite loop, 2026-12-06), every NVML diff
# sees several new pids.
cc_preload_control(compute.hostpid.join.control_lock compute_hostpid cudacap_no_id_lock
                   CC_TEST_NO_ID_LOCK
                   "CUDACAP_SM_LIMIT=30" "CUDACAP_SIM_PID_OFFSET=1000000" "CUDACAP_SIM_CTX_CREATE_MS=400")

# The watcher's cheap query while the container is alone on the device.
# Control: the library that never takes it.
cc_sim_client(compute_cheap compute_cheap.c)
cc_add_preloaded_test(compute.watcher.cheap compute_cheap)
set_tests_properties(compute.watcher.cheap PROPERTIES LABELS "compute;concurrency")
set_property(TEST compute.watcher.cheap APPEND PROPERTY ENVIRONMENT "CUDACAP_SIM_PROC_SAMPLE_MS=200")
cc_preload_control(compute.watcher.cheap.control compute_cheap cudacap_no_device_query
                   CC_TEST_NO_DEVICE_QUERY "CUDACAP_SIM_PROC_SAMPLE_MS=200")

# NVML samples per process every 1/6 s (real GPUs; simulator setting
# CUDACAP_SIM_PROC_SAMPLE_MS) while the watcher polls every 100 ms. Control:
# the library reading an empty poll as 0 % (CC_TEST_EMPTY_IS_IDLE) holds ~2x.
cc_sim_client(compute_nvmlperiod compute_nvmlperiod.c)
cc_add_preloaded_test(compute.nvmlperiod compute_nvmlperiod)
set_tests_properties(compute.nvmlperiod PROPERTIES LABELS compute)
set_property(TEST compute.nvmlperiod APPEND PROPERTY ENVIRONMENT
             "CUDACAP_SM_LIMIT=30" "CUDACAP_SIM_PROC_SAMPLE_MS=167")
cc_preload_control(compute.nvmlperiod.control compute_nvmlperiod cudacap_empty_idle CC_TEST_EMPTY_IS_IDLE
                   "CUDACAP_SM_LIMIT=30" "CUDACAP_SIM_PROC_SAMPLE_MS=167")

# The cap over windows shorter than a refill period (NVML's window on a real
# GPU is not aligned with ours). Control: tokens only at the period refill
# (CC_TEST_NO_DRIP) spend in one burst per period.
cc_sim_client(compute_smooth compute_smooth.c)
cc_add_preloaded_test(compute.smooth compute_smooth)
set_tests_properties(compute.smooth PROPERTIES LABELS compute)
set_property(TEST compute.smooth APPEND PROPERTY ENVIRONMENT
             "CUDACAP_SM_LIMIT=30")
cc_preload_control(compute.smooth.control compute_smooth cudacap_no_drip CC_TEST_NO_DRIP
                   "CUDACAP_SM_LIMIT=30")

# Two containers on one device with NVML attributing each sample to one pid
# (the H200 under two saturating containers). Its control is at the unit
# level (compute.controller.noisy.control): on this noisy signal a control
# here would flake.
cc_sim_client(compute_twocont compute_twocont.c)
cc_add_preloaded_test(compute.twocont compute_twocont)
set_tests_properties(compute.twocont PROPERTIES LABELS compute)
set_property(TEST compute.twocont APPEND PROPERTY ENVIRONMENT
             "CUDACAP_SIM_PROC_SAMPLE_MS=167" "CUDACAP_SIM_PROC_SAMPLE_ONE=1")
# Four saturating processes on 2 cores next to CPU-bound tests change who
# gets the device: a timing lane of its own (tests/schedule.cmake).

# Step latency: a decode loop alone in its container, each step
# paced to what the cap allows. Control: every waiter paid in lumps
# (CC_TEST_LUMP_ALWAYS), the stall of 5 ms / cap the pacing removed.
cc_sim_client(compute_step compute_step.c)
foreach(m plain graph eager shapes)
  cc_add_preloaded_test(compute.step.${m} compute_step ${m})
  set_tests_properties(compute.step.${m} PROPERTIES LABELS compute)
  set_property(TEST compute.step.${m} APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30")
endforeach()
foreach(m plain graph)
  cc_preload_control_mode(compute.step.${m}.control compute_step ${m} cudacap_lump_always
                          CC_TEST_LUMP_ALWAYS "CUDACAP_SM_LIMIT=30")
endforeach()
# An eager step (four launches) sleeps once. Control: every launch paced
# alone (CC_TEST_NO_GROUP).
cc_preload_control_mode(compute.step.eager.control compute_step eager cudacap_no_group
                        CC_TEST_NO_GROUP "CUDACAP_SM_LIMIT=30")
# CUDACAP_SM_BURST_MS bounds the run-ahead after idle; the default lets
# about one nominal period run. Control: the knob ignored (CC_TEST_NO_BURST).
cc_add_preloaded_test(compute.step.burst compute_step burst)
cc_add_preloaded_test(compute.step.burst.default compute_step burst)
set_tests_properties(compute.step.burst compute.step.burst.default PROPERTIES LABELS compute)
set_property(TEST compute.step.burst APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30"
             "CUDACAP_SM_BURST_MS=2")
set_property(TEST compute.step.burst.default APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30")
cc_preload_control_mode(compute.step.burst.control compute_step burst cudacap_no_burst
                        CC_TEST_NO_BURST "CUDACAP_SM_LIMIT=30" "CUDACAP_SM_BURST_MS=2")
# New shapes below the cap run beside the probe. Control: they wait for it
# (CC_TEST_NO_HEADROOM).
cc_preload_control_mode(compute.step.shapes.control compute_step shapes cudacap_no_headroom
                        CC_TEST_NO_HEADROOM "CUDACAP_SM_LIMIT=30")
# A stream query that fails (a context's sticky error, fault point
# stream_query) counts the stream as busy: every new shape waits for the
# probe, as in the control (checked: 15 of 16 wait, every run).
cc_add_preloaded_test(compute.step.shapes.fault_query compute_step shapes)
set_property(TEST compute.step.shapes.fault_query APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30"
             "CUDACAP_TEST_FAULT=stream_query:1:sticky")
set_tests_properties(compute.step.shapes.fault_query PROPERTIES LABELS compute WILL_FAIL TRUE)

# Stream capture and deep queues of never-timed shapes.
cc_sim_client(compute_deepq compute_deepq.c)
foreach(m long short new warm warmnew warmstreams)
  cc_add_preloaded_test(compute.deepq.${m} compute_deepq ${m})
  set_tests_properties(compute.deepq.${m} PROPERTIES LABELS compute)
  set_property(TEST compute.deepq.${m} APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30")
  # Control: every launch before a shape's first timing is free.
  cc_preload_control_mode(compute.deepq.${m}.control compute_deepq ${m} cudacap_free_untimed
                          CC_TEST_FREE_UNTIMED "CUDACAP_SM_LIMIT=30")
endforeach()
# The deep queue after a pause, under NVML's real sampling (167 ms periods,
# each shown 50 ms after it ends: CUDACAP_SIM_NVML_LAG_MS). The first
# samples after the queue starts describe the pause; read while throttled
# they raised the share (controller.c, up_allowed). 28.6-31.9 % over the
# run in 6 runs; with the share raised on the first throttled refill
# (CC_TEST_UP_AT_ONCE) 31.5-41.4 % in 4, not a control that fails every
# time: compute.controller.start is that (the law itself, deterministic).
cc_add_preloaded_test(compute.deepq.warm.lag compute_deepq warm)
set_tests_properties(compute.deepq.warm.lag PROPERTIES LABELS compute)
set_property(TEST compute.deepq.warm.lag APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30"
             "CUDACAP_SIM_PROC_SAMPLE_MS=167" "CUDACAP_SIM_NVML_LAG_MS=30")
# The same with each period shown 300 ms late, longer than the watcher's
# poll interval: the watcher learns the lag from the samples it sees
# (nvml_sample.c, nvml_lag_us) and an empty answer leaves lastSeen where the
# late samples can still be read (empty_seen). Control: lastSeen moved to
# now on every empty answer (CC_TEST_EMPTY_SEEN_NOW): no sample is ever
# read, the container reads 0 % while it runs, and the queue takes 70-87 %
# of the device.
cc_add_preloaded_test(compute.deepq.warm.lag300 compute_deepq warm)
set_tests_properties(compute.deepq.warm.lag300 PROPERTIES LABELS compute)
set_property(TEST compute.deepq.warm.lag300 APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30"
             "CUDACAP_SIM_PROC_SAMPLE_MS=167" "CUDACAP_SIM_NVML_LAG_MS=300")
cc_preload_control_mode(compute.deepq.warm.lag300.control compute_deepq warm cudacap_empty_seen_now
                        CC_TEST_EMPTY_SEEN_NOW "CUDACAP_SM_LIMIT=30" "CUDACAP_SIM_PROC_SAMPLE_MS=167"
                        "CUDACAP_SIM_NVML_LAG_MS=300")
# The same after a pause on two devices at once, caps 30 and 60, NVML's
# samples 30 and 300 ms late: each device's line holds its own cap (the
# run rule's run and the learned lag are per device).
cc_sim_client(compute_deepq2 compute_deepq2.c)
# (300 ms at caps 30 and 30: a cap-60 queue overshoots there, see the test.)
foreach(lag 30 300)
  if(lag EQUAL 30)
    set(_cap1 60)
  else()
    set(_cap1 30)
  endif()
  cc_add_preloaded_test(compute.deepq2.lag${lag} compute_deepq2)
  set_tests_properties(compute.deepq2.lag${lag} PROPERTIES LABELS compute)
  set_property(TEST compute.deepq2.lag${lag} APPEND PROPERTY ENVIRONMENT "CUDACAP_SIM_DEVICES=2"
               "CUDACAP_SM_LIMIT_0=30" "CUDACAP_SM_LIMIT_1=${_cap1}" "CUDACAP_SIM_PROC_SAMPLE_MS=167"
               "CUDACAP_SIM_NVML_LAG_MS=${lag}")
endforeach()
cc_preload_control_mode(compute.deepq2.lag300.control compute_deepq2 "" cudacap_empty_seen_now
                        CC_TEST_EMPTY_SEEN_NOW "CUDACAP_SIM_DEVICES=2" "CUDACAP_SM_LIMIT_0=30"
                        "CUDACAP_SM_LIMIT_1=30" "CUDACAP_SIM_PROC_SAMPLE_MS=167" "CUDACAP_SIM_NVML_LAG_MS=300")
# Control of the one-launch-per-shape rule (gate.c, shape_pending): a
# launch of a shape in flight untimed takes another slot beside the probe,
# on each of the 16 streams (each idle at its first launch).
cc_preload_control_mode(compute.deepq.warmstreams.control_dup compute_deepq warmstreams cudacap_dup_slots
                        CC_TEST_DUP_SLOTS "CUDACAP_SM_LIMIT=30")
# Control of the drained-stream rule (gate.c, stream_drained): new shapes
# queued on a busy stream take the slots beside the probe, 16 x 40 ms run
# free after the refill and the first second reads ~72 %.
cc_preload_control_mode(compute.deepq.warmnew.control_busy compute_deepq warmnew cudacap_busy_slots
                        CC_TEST_BUSY_SLOTS "CUDACAP_SM_LIMIT=30")
# The gate's counts printed at exit (CUDACAP_COUNT_CALLS=1, src/hook/stats.c):
# the deep queue's second launch waits for the probe of its own shape, every
# launch is timed or charged, and the queue waits for tokens.
cc_add_preloaded_test(compute.gate.counts compute_deepq long)
set_property(TEST compute.gate.counts APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30;CUDACAP_COUNT_CALLS=1;DEEPQ_NO_SKIP=1")
set_tests_properties(compute.gate.counts PROPERTIES LABELS compute PASS_REGULAR_EXPRESSION
  "gate new shapes [1-9][0-9]* \\(waited [1-9][0-9]*, [1-9][0-9]* of them for the same shape; [0-9]+\\.[0-9]+ ms\\), timed [1-9][0-9]*, token waits [1-9][0-9]* \\([0-9]+\\.[0-9]+ ms\\), settled [1-9][0-9]*\\.[0-9]+ ms \\([0-9]+\\.[0-9]+ ms forgiven\\)")
# Where the watcher's cycles went, printed at exit with the gate's counts:
# under NVML's real sampling (167 ms periods) the owner learns the period
# and reads the device-wide value (the cheap path) once per period.
cc_add_preloaded_test(compute.watch.counts compute_deepq long)
set_property(TEST compute.watch.counts APPEND PROPERTY ENVIRONMENT
             "CUDACAP_SM_LIMIT=30;CUDACAP_COUNT_CALLS=1;CUDACAP_SIM_PROC_SAMPLE_MS=167;DEEPQ_NO_SKIP=1")
set_tests_properties(compute.watch.counts PROPERTIES LABELS compute PASS_REGULAR_EXPRESSION
  "watcher cycles [1-9][0-9]* \\(owner [1-9][0-9]*, quiet [0-9]+\\), NVML device-wide [1-9][0-9]* \\(period read already [1-9][0-9]*\\), per-process [1-9][0-9]* \\(empty [0-9]+, not due [0-9]+\\), period 16[0-9]\\.[0-9] ms, lag [0-9]+\\.[0-9] ms, cpu ([1-9][0-9]*\\.[0-9]+|0\\.[0-9]*[1-9][0-9]*) ms")
# NVML's period learned right where a period has no sample, or NVML answers
# at the poll's pace, on a model of NVML's answers and the watcher's polls
# (tests/compute_period_unit.c). Controls: the period trusted on one gap;
# only the newest timestamps of successive polls teach the period.
cc_compute_test(compute_period_unit compute_period_unit.c)
add_test(NAME compute.period.unit COMMAND compute_period_unit)
cc_compute_control(compute_period_unit_one compute_period_unit.c CC_TEST_ONE_GAP_GRID ${CC_CTL}/nvml_clock.c)
add_test(NAME compute.period.unit.control_one COMMAND compute_period_unit_one)
cc_compute_control(compute_period_unit_newest compute_period_unit.c CC_TEST_NEWEST_GAPS_ONLY ${CC_CTL}/nvml_clock.c)
add_test(NAME compute.period.unit.control_newest COMMAND compute_period_unit_newest)
set_tests_properties(compute.period.unit.control_one compute.period.unit.control_newest PROPERTIES WILL_FAIL TRUE)
set_tests_properties(compute.period.unit compute.period.unit.control_one compute.period.unit.control_newest
                     PROPERTIES LABELS compute)
# The same end to end on the simulator, as the H200 samples (200 ms periods
# shown 30 ms late), the warm-up kernel then a pause: the period printed at
# exit is 200 ms.
cc_add_preloaded_test(compute.watch.period compute_deepq warm)
set_property(TEST compute.watch.period APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30" "CUDACAP_COUNT_CALLS=1"
             "CUDACAP_SIM_PROC_SAMPLE_MS=200" "CUDACAP_SIM_NVML_LAG_MS=30" "DEEPQ_NO_SKIP=1")
set_tests_properties(compute.watch.period PROPERTIES LABELS compute PASS_REGULAR_EXPRESSION
  "watcher cycles [0-9]+ .*, period 20[0-9]\\.[0-9] ms, lag [0-9]+\\.[0-9] ms")
cc_sim_client(compute_capture compute_capture.c)
cc_add_preloaded_test(compute.capture.invalidation compute_capture invalidation)
cc_add_preloaded_test(compute.capture.time compute_capture time)
set_tests_properties(compute.capture.invalidation compute.capture.time PROPERTIES LABELS "compute;concurrency")
set_property(TEST compute.capture.invalidation compute.capture.time APPEND PROPERTY ENVIRONMENT
             "CUDACAP_SM_LIMIT=30")
# Controls: timing events polled in the thread's default (global) mode;
# captured launches charged and delayed like eager ones.
cc_preload_control_mode(compute.capture.invalidation.control compute_capture invalidation
                        cudacap_no_relaxed CC_TEST_NO_RELAXED "CUDACAP_SM_LIMIT=30")
cc_preload_control_mode(compute.capture.time.control compute_capture time
                        cudacap_charge_capture CC_TEST_CHARGE_CAPTURE "CUDACAP_SM_LIMIT=30")
# No NVML query while the container is idle.
cc_sim_client(compute_idle compute_idle.c)
cc_add_preloaded_test(compute.idle compute_idle)
set_tests_properties(compute.idle PROPERTIES LABELS compute)
set_property(TEST compute.idle APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30")
cc_preload_control(compute.idle.control compute_idle cudacap_sample_idle CC_TEST_SAMPLE_IDLE
                   "CUDACAP_SM_LIMIT=30")
# Forged counters and stamps in a live region. Control:
# the clamps removed (CC_TEST_NO_CLAMP in bucket.c and election.c).
cc_compute_test(compute_forged compute_forged.c)
add_test(NAME compute.forged COMMAND compute_forged ${CMAKE_BINARY_DIR}/state/compute.forged)
cc_compute_control(compute_forged_noclamp compute_forged.c CC_TEST_NO_CLAMP
                   ${CC_CTL}/bucket.c ${CC_CTL}/election.c)
add_test(NAME compute.forged.control COMMAND compute_forged_noclamp
         ${CMAKE_BINARY_DIR}/state/compute.forged.nc)
set_tests_properties(compute.forged.control PROPERTIES WILL_FAIL TRUE)
set_tests_properties(compute.forged compute.forged.control PROPERTIES TIMEOUT 120
                     LABELS "compute;concurrency")
# Two processes of one container whose clocks differ by 2 s (the fault
# loop's clock point; time namespaces). Control: every stamp ahead "now".
cc_compute_test(compute_skew compute_skew.c)
add_test(NAME compute.skew COMMAND compute_skew ${CMAKE_BINARY_DIR}/state/compute.skew)
cc_compute_control(compute_skew_stampnow compute_skew.c CC_TEST_STAMP_NOW ${CC_CTL}/bucket.c)
add_test(NAME compute.skew.control COMMAND compute_skew_stampnow ${CMAKE_BINARY_DIR}/state/compute.skew.nc)
set_tests_properties(compute.skew.control PROPERTIES WILL_FAIL TRUE)
set_tests_properties(compute.skew compute.skew.control PROPERTIES TIMEOUT 60
                     LABELS "compute;concurrency")
# Elastic caps: soft limits borrowing idle time, given back when
# others' work arrives. Several processes saturating the simulated device in
# 2-3 containers: timing lanes (tests/schedule.cmake), never beside a
# CPU-bound test. The 20 s bursts run is the normal build's;
# sanitizer builds run 8 s of it (two bursts); its control 16 s (four).
cc_sim_client(compute_elastic compute_elastic.c compute_elastic_run.c)
if(CUDACAP_SANITIZE OR CUDACAP_TSAN)
  set(_bursts 8)
else()
  set(_bursts 20)
endif()
foreach(m alone newcomer two bursts)
  if(m STREQUAL "bursts")
    cc_add_preloaded_test(compute.elastic.${m} compute_elastic ${m} ${_bursts})
  else()
    cc_add_preloaded_test(compute.elastic.${m} compute_elastic ${m})
  endif()
  set_tests_properties(compute.elastic.${m} PROPERTIES LABELS "compute;elastic" TIMEOUT 240)
endforeach()
# Controls: the soft limit ignored; others' work never seen; beside others
# no borrowing; the seed's debounced exclusivity (16 s: four bursts; a run
# with a starved onset is run again, and skipped after three: with two of
# four starved it once passed, 2026-12-04).
cc_preload_control_mode(compute.elastic.alone.control compute_elastic alone cudacap_no_elastic
                        CC_TEST_NO_ELASTIC)
cc_preload_control_mode(compute.elastic.newcomer.control compute_elastic newcomer cudacap_no_yield
                        CC_TEST_NO_YIELD)
cc_preload_control_mode(compute.elastic.two.control compute_elastic two cudacap_no_yield
                        CC_TEST_NO_YIELD)
cc_preload_control_mode(compute.elastic.two.control_grow compute_elastic two cudacap_no_grow
                        CC_TEST_NO_GROW)
cc_preload_control_mode(compute.elastic.bursts.control compute_elastic "bursts;16" cudacap_seed_yield
                        CC_TEST_SEED_YIELD)
# NVML as the H200 gives it at worst (one sample per 200 ms naming one
# process, sticky: the borrower, named while it runs, stays named): the yield
# must not wait for NVML to name the neighbour (the device saturating beside
# its idle context says it first). Control: arrivals only as NVML names them
# (with the draw of mode 1 it passed when NVML happened to name the
# neighbour at once at every onset: 1 run in 3; sticky, it never yields).
# The control runs 12 s, two onsets judged (the test's least); it never
# yields, so the first one fails it (26 s before 2026-12-03).
cc_add_preloaded_test(compute.elastic.bursts.h200 compute_elastic yields 26)
set_property(TEST compute.elastic.bursts.h200 APPEND PROPERTY ENVIRONMENT
             "CUDACAP_SIM_PROC_SAMPLE_MS=200" "CUDACAP_SIM_PROC_SAMPLE_ONE=2")
cc_preload_control_mode(compute.elastic.bursts.h200.control compute_elastic "yields;12" cudacap_no_sat_arrival
                        CC_TEST_NO_SAT_ARRIVAL "CUDACAP_SIM_PROC_SAMPLE_MS=200" "CUDACAP_SIM_PROC_SAMPLE_ONE=2")
# Beside an idle foreign context: the guard, and no yields on its own lumps
# (also as the H200 samples, the context made at 1 s, while the borrower
# saturates the device alone: one provisional yield then). Control: no guard.
cc_add_preloaded_test(compute.elastic.guard compute_elastic guard)
cc_add_preloaded_test(compute.elastic.guard.h200 compute_elastic guard late)
set_property(TEST compute.elastic.guard.h200 APPEND PROPERTY ENVIRONMENT
             "CUDACAP_SIM_PROC_SAMPLE_MS=200" "CUDACAP_SIM_PROC_SAMPLE_ONE=1")
cc_preload_control_mode(compute.elastic.guard.control compute_elastic guard cudacap_no_sat_arrival
                        CC_TEST_NO_SAT_ARRIVAL)
# The same on a device whose kernels slow down under load (the H200's power
# limit, CUDACAP_SIM_SLOWDOWN_PCT) with the idle context there from the start:
# the guard reached by growth, no yield. Its control is the unit's slow plant
# (compute.elastic.unit.guard_jump_control): here the former jump to the
# guard yielded again and again in 2 runs of 4 (4-8 yields in 6 s), not every
# time, so it is not registered as a control.
cc_add_preloaded_test(compute.elastic.guard.slow compute_elastic guard cold)
set_property(TEST compute.elastic.guard.slow APPEND PROPERTY ENVIRONMENT "CUDACAP_SIM_SLOWDOWN_PCT=90"
             "CUDACAP_SIM_PROC_SAMPLE_MS=200" "CUDACAP_SIM_PROC_SAMPLE_ONE=1")
# guard.h200 against the library built with CC_TEST_STRADDLE_READ (the
# samples around a provisional yield read by the controller: its restore,
# read against the target restored, wound the share up, the device
# saturated, and the borrower yielded again every 0.75 s) failed in 26 runs
# of 28 (63-67 %, 7 yields): where it passed, the yield's tail sample was
# saturated and confirmed the yield, so no restore. Not registered (a
# control must fail every time); compute.elastic.unit.straddle_control and
# compute.controller.contended.control are the mechanism's controls.
foreach(t alone.control newcomer.control two.control two.control_grow bursts.control bursts.h200 bursts.h200.control
        guard guard.h200 guard.control guard.slow)
  if(TEST compute.elastic.${t})
    set_tests_properties(compute.elastic.${t} PROPERTIES LABELS "compute;elastic" TIMEOUT 240)
  endif()
endforeach()
# The elastic step's rules and two model plants (two containers; a borrower
# on a device whose kernels slow down under load). Controls, each the unit
# built with elastic.c's switch: others never seen (no yield, no split); no
# provisional yield; the samples around one read by the controller; the
# guard's target at once, at the start and after a false alarm (the slow
# plant: a yield every 0.8 s, as the H200 in the 2026-12-02 guard run).
cc_compute_test(compute_elastic_unit compute_elastic_unit.c)
add_test(NAME compute.elastic.unit COMMAND compute_elastic_unit)
set_tests_properties(compute.elastic.unit PROPERTIES LABELS "compute;elastic" TIMEOUT 60)
foreach(c noyield:control:CC_TEST_NO_YIELD nosat:sat_control:CC_TEST_NO_SAT_ARRIVAL
        straddle:straddle_control:CC_TEST_STRADDLE_READ jump:guard_jump_control:CC_TEST_GUARD_JUMP)
  string(REPLACE ":" ";" c "${c}")
  list(GET c 0 exe)
  list(GET c 1 name)
  list(GET c 2 macro)
  cc_compute_control(compute_elastic_unit_${exe} compute_elastic_unit.c ${macro} ${CC_CTL}/elastic.c)
  add_test(NAME compute.elastic.unit.${name} COMMAND compute_elastic_unit_${exe})
  set_tests_properties(compute.elastic.unit.${name} PROPERTIES WILL_FAIL TRUE LABELS "compute;elastic"
                       TIMEOUT 60)
endforeach()
# The compute rejoin: compute.region a FIFO or a directory while
# 3 processes capped at 30 % start, removed after 1 s; within seconds all
# three are on one shared line (the region's process table), the container
# at <= 35 %. Control: the library that never retries
# (CC_TEST_NO_COMPUTE_REJOIN) leaves them on their own buckets (~90 %).
cc_sim_client(compute_rejoin compute_rejoin.c)
foreach(m fifo dir)
  cc_add_preloaded_test(compute.rejoin.${m} compute_rejoin ${m})
  set_tests_properties(compute.rejoin.${m} PROPERTIES LABELS "compute;concurrency" TIMEOUT 90)
  set_property(TEST compute.rejoin.${m} APPEND PROPERTY ENVIRONMENT "CUDACAP_SM_LIMIT=30")
  cc_preload_control_mode(compute.rejoin.${m}.control compute_rejoin ${m} cudacap_no_rejoin
                          CC_TEST_NO_COMPUTE_REJOIN "CUDACAP_SM_LIMIT=30")
endforeach()

# A launching thread preempted after its kernel was queued (simulator:
# CUDACAP_SIM_LAUNCH_STALL_US) must not make the kernel look shorter: the
# cost model's gap cut stops at the launch call when the call was slow.
# Control: the gap taken to the launch's return (CC_TEST_GAP_TO_RETURN).
cc_sim_client(compute_preempt compute_preempt.c)
cc_add_preloaded_test(compute.cost.preempted compute_preempt)
set_tests_properties(compute.cost.preempted PROPERTIES LABELS "compute;concurrency")
set_property(TEST compute.cost.preempted APPEND PROPERTY ENVIRONMENT "CUDACAP_SIM_PROC_SAMPLE_MS=200")
cc_preload_control(compute.cost.preempted.control compute_preempt cudacap_gap_to_return
                   CC_TEST_GAP_TO_RETURN "CUDACAP_SIM_PROC_SAMPLE_MS=200")
