# Memory cap suites (issue 3). Ledger tests link cudacap_core (no CUDA); the
# negative controls compile the ledger again with a -D that removes one
# mechanism, and are registered WILL_FAIL: ctest fails if they pass.
set(CC_ML_SRCS ${CMAKE_SOURCE_DIR}/src/cap/memledger.c ${CMAKE_SOURCE_DIR}/src/region/region.c
               ${CMAKE_SOURCE_DIR}/src/common/log.c)
function(cc_ledger_test name)
  cc_test_exe(${name} ${ARGN})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src)
endfunction()

cc_ledger_test(mem_ledger_mp mem_ledger_mp.c)
target_link_libraries(mem_ledger_mp PRIVATE cudacap_core)
add_test(NAME mem.ledger.race COMMAND mem_ledger_mp race ${CMAKE_BINARY_DIR}/state/mem.ledger.race)
add_test(NAME mem.ledger.kill_storm COMMAND mem_ledger_mp kill ${CMAKE_BINARY_DIR}/state/mem.ledger.kill)

cc_ledger_test(mem_ledger_mp_localonly mem_ledger_mp.c ${CC_ML_SRCS})
target_compile_definitions(mem_ledger_mp_localonly PRIVATE CC_ML_TEST_LOCAL_ONLY)
add_test(NAME mem.ledger.race.negative_control
         COMMAND mem_ledger_mp_localonly race ${CMAKE_BINARY_DIR}/state/mem.ledger.race.nc)
cc_ledger_test(mem_ledger_mp_nosweep mem_ledger_mp.c ${CC_ML_SRCS})
target_compile_definitions(mem_ledger_mp_nosweep PRIVATE CC_ML_TEST_NO_SWEEP)
add_test(NAME mem.ledger.kill_storm.negative_control
         COMMAND mem_ledger_mp_nosweep kill ${CMAKE_BINARY_DIR}/state/mem.ledger.kill.nc)
set_tests_properties(mem.ledger.race.negative_control mem.ledger.kill_storm.negative_control
                     PROPERTIES WILL_FAIL TRUE)
set_tests_properties(mem.ledger.race mem.ledger.kill_storm mem.ledger.race.negative_control
                     mem.ledger.kill_storm.negative_control PROPERTIES TIMEOUT 60)

cc_ledger_test(mem_region_faults mem_region_faults.c)
target_link_libraries(mem_region_faults PRIVATE cudacap_core)
add_test(NAME mem.region.faults COMMAND mem_region_faults ${CMAKE_BINARY_DIR}/state/mem.region.faults)

# --- preloaded on the simulator --------------------------------------------
cc_sim_client(mem_families mem_families.c)
cc_add_preloaded_test(mem.families mem_families)
set_property(TEST mem.families APPEND PROPERTY ENVIRONMENT
  CUDACAP_MEM_LIMIT=1g CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=256m)
cc_add_preloaded_test(mem.garbage_limit mem_families uncapped)
set_property(TEST mem.garbage_limit APPEND PROPERTY ENVIRONMENT
  CUDACAP_MEM_LIMIT=lots CUDACAP_SIM_MEM=8g)
