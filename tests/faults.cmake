# Fault campaign, library side (issue 10): tests/faults_lib.c. Short mode
# here (one round); FAULTS_LONG=N build/tests/faults_lib DIR for N rounds by
# hand (with this test's environment: ctest -R faults.lib -V shows it).
# The parent is not preloaded (it reads the simulator's NVML as the witness);
# it hands FAULTS_PRELOAD to the clients it starts.
cc_sim_client(faults_lib faults_lib.c)
target_link_libraries(faults_lib PRIVATE pthread)
add_test(NAME faults.lib COMMAND faults_lib ${CMAKE_BINARY_DIR}/state/faults.lib)
cc_preload_env(env faults.lib)
list(FILTER env EXCLUDE REGEX "^(LD_PRELOAD|CUDACAP_STATE_DIR)=")
list(APPEND env "FAULTS_PRELOAD=${CUDACAP_PRELOAD}" CUDACAP_SIM_CTX_MEM=16m CUDACAP_SIM_MEM=8g)
set_tests_properties(faults.lib PROPERTIES ENVIRONMENT "${env}" TIMEOUT 180 LABELS faults)

# Negative control: the library without the two fixes the campaign found
# (a process that found memory.region unusable at start never joins the
# container's cap; a forged device key splits the container). Each case
# fails every time without its fix: nothing there depends on timing.
cc_memory_control_lib(cudacap_faults_control "CC_ML_TEST_NO_REJOIN;CC_ML_TEST_NO_REKEY")
add_dependencies(faults_lib cudacap_faults_control)
string(REPLACE "${CUDACAP_LIB_DIR}/libcudacap.so" "${CUDACAP_TEST_DIR}/cudacap_faults_control/libcudacap.so"
       ctl_pre "${CUDACAP_PRELOAD}")
foreach(c rejoin rekey)
  if(c STREQUAL rejoin)
    set(only "before: FIFO in place of memory.region")
  else()
    set(only "device entry's key changed")
  endif()
  add_test(NAME faults.lib.control.${c} COMMAND faults_lib ${CMAKE_BINARY_DIR}/state/faults.lib.nc.${c}
           --only ${only})
  cc_preload_env(env faults.lib.control.${c})
  list(FILTER env EXCLUDE REGEX "^(LD_PRELOAD|CUDACAP_STATE_DIR)=")
  list(APPEND env "FAULTS_PRELOAD=${ctl_pre}" CUDACAP_SIM_CTX_MEM=16m CUDACAP_SIM_MEM=8g FAULTS_RECOVER_S=1)
  set_tests_properties(faults.lib.control.${c} PROPERTIES ENVIRONMENT "${env}" TIMEOUT 60 WILL_FAIL TRUE
                       LABELS faults)
endforeach()
