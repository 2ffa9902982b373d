# Where caps come from (docs/configuration.md, "Where caps come from"): the
# seed system's names, bad configuration reported to the node and, under
# CUDACAP_STRICT=1, refused. Each test has its negative control, the same
# script against a library built without the mechanism (WILL_FAIL).
function(cc_limits_test name script mode lib)
  add_test(NAME ${name} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/${script} ${mode})
  cc_preload_env(env ${name})
  list(FILTER env EXCLUDE REGEX "^(LD_PRELOAD|CUDACAP_STATE_DIR|CUDACAP_COUNT_CALLS)=")
  if(lib STREQUAL "")
    set(pre "${CUDACAP_PRELOAD}")
  else()
    if(NOT TARGET ${lib})
      cc_memory_control_lib(${lib} ${ARGN})
    endif()
    cc_control_dep(cudacap_demo_worker ${lib})
    string(REPLACE "${CUDACAP_LIB_DIR}/libcudacap.so" "${CUDACAP_TEST_DIR}/${lib}/libcudacap.so"
           pre "${CUDACAP_PRELOAD}")
    set_tests_properties(${name} PROPERTIES WILL_FAIL TRUE)
  endif()
  list(APPEND env "PRELOAD=${pre}" "WORKER=${CUDACAP_TEST_DIR}/cudacap_demo_worker"
                  "CLI=${CUDACAP_BIN_DIR}/cudacap" "CUDACAP=${CUDACAP_BIN_DIR}/cudacap"
                  "CONFIG_TEST_TMP=${CMAKE_BINARY_DIR}/limitstest/${name}")
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}" TIMEOUT 120 LABELS limits)
endfunction()

cc_limits_test(config.seed config_seed.sh seed "")
cc_limits_test(config.seed.control config_seed.sh seed cudacap_noseed CC_TEST_NO_SEED_NAMES)
cc_limits_test(config.strict config_seed.sh strict "")
cc_limits_test(config.strict.control config_seed.sh strict cudacap_strictopen CC_TEST_STRICT_OPEN)
cc_limits_test(config.limits.file config_limits.sh file "")
cc_limits_test(config.limits.file.control config_limits.sh file cudacap_envwins CC_TEST_ENV_OVER_LIMITS)
cc_limits_test(config.limits.set config_limits.sh set "")
cc_limits_test(config.limits.faults config_limits.sh faults "")
cc_limits_test(config.limits.faults.control config_limits.sh faults cudacap_trustlimits CC_TEST_TRUST_BAD_LIMITS)
cc_limits_test(config.limits.bad config_limits.sh bad "")
cc_limits_test(config.limits.bad.control config_limits.sh bad cudacap_trustlimits CC_TEST_TRUST_BAD_LIMITS)
cc_limits_test(config.initenv config_initenv.sh - "")
cc_limits_test(config.initenv.control config_initenv.sh - cudacap_noinitenv CC_TEST_NO_INIT_ENV)
set_tests_properties(config.initenv config.initenv.control PROPERTIES SKIP_RETURN_CODE 77)

# Caps changed while the container runs (cudacap set): memory at the next
# allocation (raised, lowered below use), SM within a period. Control: the
# library reads its caps once (CC_TEST_NO_LIVE).
cc_sim_client(config_live config_live.c)
foreach(mode mem mem2 over over2 sm sm2)
  cc_add_preloaded_test(config.live.${mode} config_live ${mode})
  cc_add_preloaded_test(config.live.${mode}.control config_live ${mode})
  cc_preload_env(env config.live.${mode}.control)
  string(REPLACE "${CUDACAP_LIB_DIR}/libcudacap.so" "${CUDACAP_TEST_DIR}/cudacap_nolive/libcudacap.so"
         pre "${CUDACAP_PRELOAD}")
  list(FILTER env EXCLUDE REGEX "^LD_PRELOAD=")
  set_tests_properties(config.live.${mode}.control PROPERTIES WILL_FAIL TRUE
                       ENVIRONMENT "${env};LD_PRELOAD=${pre};CLI=${CUDACAP_BIN_DIR}/cudacap")
  set_property(TEST config.live.${mode} APPEND PROPERTY ENVIRONMENT "CLI=${CUDACAP_BIN_DIR}/cudacap")
  # concurrency: the TSan suite runs them (the watcher applies the SM caps
  # while launches read them).
  set_property(TEST config.live.${mode} config.live.${mode}.control APPEND PROPERTY LABELS limits concurrency)
  if(mode MATCHES 2$)
    set_property(TEST config.live.${mode} config.live.${mode}.control APPEND PROPERTY ENVIRONMENT
                 CUDACAP_SIM_DEVICES=2)
  endif()
endforeach()
if(NOT TARGET cudacap_nolive)
  cc_memory_control_lib(cudacap_nolive CC_TEST_NO_LIVE)
endif()
cc_control_dep(config_live cudacap_nolive)
