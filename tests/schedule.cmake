# How ctest schedules the suite (included last). Most tests sleep: on the
# 2-core machine of 2026-12-03 the suite's ~250 tests took 85 s of CPU in
# ~550 s, so scripts/test.sh runs 3 tests a core. What must not share the
# machine freely:
#  - timing tests (a share of the simulated device measured against the
#    wall clock; their workers must be run when they wake; and the loop's
#    controls, which lose their power when the device idles): two lanes,
#    RESOURCE_LOCK cc_lane_a / cc_lane_b, so at most two run at once, each
#    beside tests that sleep;
#  - CPU-bound tests (a core or more while they run): both lanes' locks, so
#    none runs beside a timing test;
#  - the two lost-update controls, which need both cores to race
#    (compute.cmake), and the timing tests a lane was not enough for
#    (below): RUN_SERIAL.
# Sanitizer builds keep the timing tests RUN_SERIAL (every access slowed,
# their CPU is no longer small). COST: the seconds a test took (2026-12-03),
# so that a clean build directory, which has no Testing/Temporary/
# CTestCostData.txt yet, starts the lanes and the longest tests first.
set(_lane_a
  compute.elastic.bursts.h200 compute.elastic.bursts.control compute.elastic.guard.slow
  compute.elastic.guard compute.elastic.two.control_grow
  compute.elastic.alone compute.watcher.cheap faults.loop.control.event_elapsed config.live.sm)
set(_lane_b
  compute.elastic.bursts.h200.control compute.twocont
  compute.elastic.guard.h200 compute.elastic.guard.control compute.elastic.newcomer
  compute.elastic.newcomer.control compute.elastic.two.control compute.elastic.alone.control
  faults.loop.control.nvml_procs config.live.sm2)
# Alone on the machine (RUN_SERIAL), as before 2026-12-03, because a lane
# was not enough: compute.elastic.bursts judges the neighbour's first on
# window, run-ahead included, against 50 +- 3 (beside bursts.h200 it
# reached 54.1 % twice, holding both lanes beside a second suite 54.5 %,
# alone 52.3-52.5 %); compute.elastic.two's device fell to 83.4 % in its
# least starved windows in a suite run at load 2-7; the step latencies'
# p99 (compute.step.graph 17 ms against 6.7 in a suite run) need the cores
# when a step wakes.
set(_alone compute.elastic.bursts compute.elastic.two compute.step.plain compute.step.graph
  compute.step.eager compute.step.burst compute.step.burst.default compute.step.shapes)
set(_cpu_bound
  mem.ledger.kill_storm mem.ledger.kill_storm.negative_control mem.preload.kill_storm
  mem.preload.kill_storm.negative_control mem.ledger.race mem.ledger.race.negative_control
  mem.preload.race mem.preload.race.negative_control layers.includes compute.bucket.deductions
  compute.bucket.bypass)

foreach(t ${_lane_a} ${_lane_b} ${_alone} ${_cpu_bound})
  if(NOT TEST ${t})
    message(FATAL_ERROR "tests/schedule.cmake names ${t}, which is not registered")
  endif()
endforeach()
if(CUDACAP_SANITIZE OR CUDACAP_TSAN)
  set_tests_properties(${_lane_a} ${_lane_b} ${_alone} PROPERTIES RUN_SERIAL TRUE)
else()
  set_tests_properties(${_lane_a} PROPERTIES RUN_SERIAL FALSE RESOURCE_LOCK cc_lane_a)
  set_tests_properties(${_lane_b} PROPERTIES RUN_SERIAL FALSE RESOURCE_LOCK cc_lane_b)
  set_tests_properties(${_alone} PROPERTIES RUN_SERIAL TRUE)
  set_tests_properties(${_cpu_bound} PROPERTIES RESOURCE_LOCK "cc_lane_a;cc_lane_b")
endif()

# Seconds measured (tests of 4 s or more; the rest start in their order).
# The lanes' tests are started before any other (1000 + their seconds).
set(_costs
  compute.elastic.bursts.h200:28 compute.elastic.bursts.h200.control:14
  compute.elastic.bursts.control:18 compute.twocont:15 compute.elastic.guard.slow:10
  compute.watcher.cheap:10 compute.elastic.guard.control:8 compute.elastic.guard:8
  compute.elastic.guard.h200:10 compute.elastic.two.control:6
  compute.elastic.two.control_grow:6 compute.elastic.newcomer:6 compute.elastic.newcomer.control:6
  compute.elastic.alone:4 compute.elastic.alone.control:4 faults.loop.control.event_elapsed:3
  faults.loop.control.nvml_procs:3 config.live.sm:7 config.live.sm2:7)
foreach(c ${_costs})
  string(REPLACE ":" ";" c "${c}")
  list(GET c 0 t)
  list(GET c 1 s)
  math(EXPR s "1000 + ${s}")
  set_tests_properties(${t} PROPERTIES COST ${s})
endforeach()
set(_costs
  faults.loop:44 compute.forged.control:42 faults.lib.2dev:25 faults.lib.4dev:25 faults.lib:25
  cli.podres.negative_control:22 mem.pidns.control:20 mem.region.lock.control:20 cli.podres:19
  compute.rejoin.dir.control:14 compute.rejoin.fifo.control:14 deploy.install:13
  cli.status.unusable.negative_control:10 cli.metrics.stall.negative_control:10
  compute.watcher.cheap.control:10 cli.metrics.stall:9 config.env:7 compute.rejoin.dir:7
  compute.rejoin.fifo:7 faults.node:6 mem.region.lock:6 compute.nvmlperiod:6
  compute.nvmlperiod.control:6 cli.node:5 compute.smooth:5 compute.smooth.control:5
  compute.election.death:5 compute.election.death.control:5)
foreach(c ${_costs})
  string(REPLACE ":" ";" c "${c}")
  list(GET c 0 t)
  list(GET c 1 s)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES COST ${s})
  endif()
endforeach()
