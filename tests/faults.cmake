# The fault suites' clients are not preloaded (the parent reads the
# simulator's NVML as the witness); each hands FAULTS_PRELOAD to the workers
# it starts. cc_fault_test(NAME PRELOAD TIMEOUT ARGS...): one such test
# (ARGS: the program and its arguments), its environment completed with
# EXTRA_ENV when set.
function(cc_fault_test name preload timeout)
  add_test(NAME ${name} COMMAND ${ARGN})
  cc_preload_env(env ${name})
  list(FILTER env EXCLUDE REGEX "^(LD_PRELOAD|CUDACAP_STATE_DIR)=")
  list(APPEND env "FAULTS_PRELOAD=${preload}" CUDACAP_SIM_CTX_MEM=16m CUDACAP_SIM_MEM=8g ${EXTRA_ENV})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}" TIMEOUT ${timeout} LABELS faults)
endfunction()
# The preload of control library LIB (cc_memory_control_lib) in OUT.
function(cc_fault_control_preload out lib)
  string(REPLACE "${CUDACAP_LIB_DIR}/libcudacap.so" "${CUDACAP_TEST_DIR}/${lib}/libcudacap.so"
         p "${CUDACAP_PRELOAD}")
  set(${out} "${p}" PARENT_SCOPE)
endfunction()

# Fault campaign, library side: tests/faults_lib.c. Short mode
# here (one round); FAULTS_LONG=N build/tests/faults_lib DIR for N rounds by
# hand (with this test's environment: ctest -R faults.lib -V shows it).
cc_sim_client(faults_lib faults_lib.c faults_lib_worker.c faults_lib_files.c faults_lib_forge.c)
target_link_libraries(faults_lib PRIVATE pthread)
target_include_directories(faults_lib PRIVATE ${CMAKE_SOURCE_DIR}/src) # the bucket's bounds
cc_fault_test(faults.lib "${CUDACAP_PRELOAD}" 180 faults_lib ${CMAKE_BINARY_DIR}/state/faults.lib)
# The same on 2 and 4 simulated devices: the work on the last
# device, device 0's context current in the launching thread.
foreach(nd 2 4)
  set(EXTRA_ENV CUDACAP_SIM_DEVICES=${nd})
  cc_fault_test(faults.lib.${nd}dev "${CUDACAP_PRELOAD}" 180 faults_lib
                ${CMAKE_BINARY_DIR}/state/faults.lib.${nd}dev)
endforeach()
unset(EXTRA_ENV)

# Negative control: the library without the two fixes the campaign found
# (a process that found memory.region unusable at start never joins the
# container's cap; a forged device key splits the container). Each case
# fails every time without its fix: nothing there depends on timing.
cc_memory_control_lib(cudacap_faults_control "CC_ML_TEST_NO_REJOIN;CC_ML_TEST_NO_REKEY")
cc_control_dep(faults_lib cudacap_faults_control)
cc_fault_control_preload(ctl_pre cudacap_faults_control)
set(EXTRA_ENV FAULTS_RECOVER_S=1)
foreach(c rejoin rekey)
  if(c STREQUAL rejoin)
    set(only "before: FIFO in place of memory.region")
  else()
    set(only "device entry's key changed")
  endif()
  cc_fault_test(faults.lib.control.${c} "${ctl_pre}" 60 faults_lib
                ${CMAKE_BINARY_DIR}/state/faults.lib.nc.${c} --only ${only})
  set_tests_properties(faults.lib.control.${c} PROPERTIES WILL_FAIL TRUE)
endforeach()
unset(EXTRA_ENV)

# The fault-injection loop: every injection point of
# common/fault.h failing at its 1st, 2nd, 3rd and last call of a capped run, and
# from its first call on (tests/fault_loop.c, docs/testing.md). By hand:
# build/tests/fault_loop DIR --long (every N up to 16, then doubling).
cc_sim_client(fault_loop fault_loop.c)
cc_fault_test(faults.loop "${CUDACAP_PRELOAD}" 600 fault_loop ${CMAKE_BINARY_DIR}/state/faults.loop)
# Negative control: the library without two fixes the loop found (an
# untimed launch charged nothing when the driver could not time it; a
# context whose memory NVML could not measure charged nothing). Each case
# fails every time without its fix: the device runs at 95-100 % instead of
# 30 %, the two contexts' 32 MiB pass the cap. Nothing there depends on timing.
cc_memory_control_lib(cudacap_faultloop_control "CC_TEST_UNTIMED_FREE;CC_TEST_CTX_UNCHARGED")
cc_control_dep(fault_loop cudacap_faultloop_control)
cc_fault_control_preload(ctl_pre cudacap_faultloop_control)
foreach(p event_elapsed nvml_procs)
  cc_fault_test(faults.loop.control.${p} "${ctl_pre}" 120 fault_loop
                ${CMAKE_BINARY_DIR}/state/faults.loop.nc.${p} --only ${p})
  set_tests_properties(faults.loop.control.${p} PROPERTIES WILL_FAIL TRUE)
endforeach()

