# The cudacap command (issue 5). Suites are shell scripts driving the real
# binary on the simulator with the demo worker as the capped program.
cc_sim_client(cudacap_demo_worker ${CMAKE_SOURCE_DIR}/src/cli/demo_worker.c)

# Negative control build of the command: counts the bytes of dead processes'
# slots (-DCLI_TEST_COUNT_DEAD); cli.status.dead.negative_control must fail.
get_target_property(_cli_srcs cudacap_cli SOURCES)
list(TRANSFORM _cli_srcs PREPEND ${CMAKE_SOURCE_DIR}/src/)
add_executable(cudacap_countdead ${_cli_srcs})
target_include_directories(cudacap_countdead PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(cudacap_countdead PRIVATE cudacap_core dl)
target_compile_definitions(cudacap_countdead PRIVATE CUDACAP_VERSION_STRING="${PROJECT_VERSION}"
                           CLI_TEST_COUNT_DEAD)
set_target_properties(cudacap_countdead PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CUDACAP_TEST_DIR})

function(cc_cli_test name script)
  add_test(NAME ${name}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/${script} ${ARGN})
  # The preload environment minus LD_PRELOAD (cudacap run sets it) and the
  # state folder (each script makes its own ROOT).
  cc_preload_env(env ${name})
  list(FILTER env EXCLUDE REGEX "^(LD_PRELOAD|CUDACAP_STATE_DIR|CUDACAP_COUNT_CALLS)=")
  # A sanitized library needs its runtime first in the child: cudacap run
  # keeps a sanitizer runtime found in LD_PRELOAD in front.
  if(CUDACAP_SANITIZE OR CUDACAP_TSAN)
    string(REPLACE ":${CUDACAP_LIB_DIR}/libcudacap.so" "" _rt "${CUDACAP_PRELOAD}")
    list(APPEND env "CLI_TEST_SAN_PRELOAD=${_rt}")
  endif()
  list(APPEND env "CLI_TEST_TMP=${CMAKE_BINARY_DIR}/clitest/${name}"
                  "CUDACAP=${CUDACAP_BIN_DIR}/cudacap" "WORKER=${CUDACAP_TEST_DIR}/cudacap_demo_worker")
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}" TIMEOUT 60 SKIP_RETURN_CODE 77)
endfunction()

cc_cli_test(cli.args cli_args.sh)
cc_cli_test(cli.prepare cli_prepare.sh)
cc_cli_test(cli.run cli_run.sh)
cc_cli_test(cli.status.memory cli_status_mem.sh)
cc_cli_test(cli.status.dead cli_status_dead.sh)
cc_cli_test(cli.status.dead.negative_control cli_status_dead.sh)
set_property(TEST cli.status.dead.negative_control APPEND PROPERTY ENVIRONMENT
             "CUDACAP=${CUDACAP_TEST_DIR}/cudacap_countdead")
set_tests_properties(cli.status.dead.negative_control PROPERTIES WILL_FAIL TRUE)
cc_cli_test(cli.status.compute cli_status_sm.sh)
cc_cli_test(cli.status.nodata cli_status_nodata.sh)
cc_cli_test(cli.metrics cli_metrics.sh)
cc_cli_test(cli.top cli_top.sh)
cc_cli_test(cli.cdi cli_cdi.sh)
cc_cli_test(cli.doctor cli_doctor.sh)
add_dependencies(cudacap_demo_worker cudacap_cli cudacap_countdead)
