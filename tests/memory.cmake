# Memory cap suites. Ledger tests link cudacap_core (no CUDA); the
# negative controls compile the ledger again with a -D that removes one
# mechanism, and are registered WILL_FAIL: ctest fails if they pass.
# The ledger's files as src/cap/memory.cmake lists them (src/cap/mem/ledger_*).
get_target_property(CC_ML_SRCS cudacap_core SOURCES)
list(FILTER CC_ML_SRCS INCLUDE REGEX "^cap/mem/ledger_")
list(TRANSFORM CC_ML_SRCS PREPEND ${CMAKE_SOURCE_DIR}/src/)
# And every layer below (region, os, common), compiled with the control's
# -D too: region.c and guard.c hold switches of their own.
foreach(t cudacap_region cudacap_os cudacap_common)
  get_target_property(srcs ${t} SOURCES)
  list(TRANSFORM srcs PREPEND ${CMAKE_SOURCE_DIR}/src/)
  list(APPEND CC_ML_SRCS ${srcs})
endforeach()
# The sources of AMONG that the switches DEFINES reach: those that name
# one, and those that include (directly or through other headers) a header
# under src/ that does (a control compiles these again with the switch; the
# rest of its objects are the normal ones). scripts/check_controls.sh
# follows the same rule.
# OUT: whether the text of FILE names one of DEFINES.
function(cc_names_any out file defines)
  file(READ ${file} text)
  foreach(d ${defines})
    string(FIND "${text}" "${d}" at)
    if(NOT at EQUAL -1)
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} FALSE PARENT_SCOPE)
endfunction()
function(cc_control_reach out defines among)
  file(GLOB_RECURSE files ${CMAKE_SOURCE_DIR}/src/*.c ${CMAKE_SOURCE_DIR}/src/*.h)
  list(FILTER files EXCLUDE REGEX "/src/common/controls\\.h$")
  set(reach "")
  foreach(f ${files})
    cc_names_any(hit ${f} "${defines}")
    if(hit)
      list(APPEND reach ${f})
    endif()
  endforeach()
  set(todo ${reach})
  while(todo)
    list(POP_FRONT todo h)
    if(NOT h MATCHES "\\.h$")
      continue()
    endif()
    get_filename_component(b ${h} NAME)
    string(REPLACE "." "\\." b "${b}")
    foreach(f ${files})
      list(FIND reach ${f} seen)
      if(seen EQUAL -1)
        file(STRINGS ${f} inc REGEX "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*/)?${b}\"")
        if(inc)
          list(APPEND reach ${f})
          list(APPEND todo ${f})
        endif()
      endif()
    endforeach()
  endwhile()
  set(own "")
  foreach(s ${among})
    list(FIND reach ${s} i)
    if(NOT i EQUAL -1)
      list(APPEND own ${s})
    endif()
  endforeach()
  # A control's wrapper (tests/controls/NAME.c: the source it includes with
  # the switch's own version of the mechanism) is compiled in the place of
  # that source. OUT_over: the sources of AMONG whose objects OUT replaces.
  set(over ${own})
  file(GLOB wrappers ${CMAKE_SOURCE_DIR}/tests/controls/*.c)
  foreach(w ${wrappers})
    cc_names_any(hit ${w} "${defines}")
    if(NOT hit)
      continue()
    endif()
    file(READ ${w} text)
    string(REGEX MATCH "#include \"([^\"]+\\.c)\"" m "${text}")
    set(s ${CMAKE_SOURCE_DIR}/src/${CMAKE_MATCH_1})
    list(FIND among ${s} i)
    if(NOT i EQUAL -1)
      list(REMOVE_ITEM own ${s})
      list(APPEND own ${w})
      list(APPEND over ${s})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES over)
  if(NOT own)
    message(FATAL_ERROR "no source of ${among} holds ${defines}")
  endif()
  set(${out} ${own} PARENT_SCOPE)
  set(${out}_over ${over} PARENT_SCOPE)
endfunction()
# OUT: the objects of the object library OBJS less those of SOURCES (the
# ones a control compiles again), as a generator expression.
function(cc_objects_less out objs sources)
  set(skip "")
  foreach(s ${sources})
    file(RELATIVE_PATH r ${CMAKE_SOURCE_DIR} ${s})
    string(REPLACE "." "\\." r "${r}")
    list(APPEND skip "/${r}\\.o$")
  endforeach()
  string(JOIN "|" skip ${skip})
  set(${out} "$<FILTER:$<TARGET_OBJECTS:${objs}>,EXCLUDE,${skip}>" PARENT_SCOPE)
endfunction()
# FILE: the words given, one a line, sources relative to the tree: what a
# control build compiles, for scripts/check_controls.sh.
function(cc_write_sources file)
  set(rel "")
  foreach(s ${ARGN})
    if(IS_ABSOLUTE "${s}")
      file(RELATIVE_PATH s ${CMAKE_SOURCE_DIR} ${s})
    endif()
    list(APPEND rel ${s})
  endforeach()
  string(JOIN "\n" rel ${rel})
  file(WRITE ${file} "${rel}\n")
endfunction()
function(cc_ledger_test name)
  cc_test_exe(${name} ${ARGN})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src)
endfunction()
# A ledger control: SRC with the sources of CC_ML_SRCS that DEFINE reaches
# (cc_control_reach, below) compiled in with it, over cudacap_core (the
# objects compiled in take precedence over the archive's copies).
function(cc_ledger_control name src define)
  cc_control_reach(own "${define}" "${CC_ML_SRCS}")
  cc_ledger_test(${name} ${src} ${own})
  target_compile_definitions(${name} PRIVATE ${define})
  target_link_libraries(${name} PRIVATE cudacap_core pthread)
endfunction()

cc_ledger_test(mem_ledger_mp mem_ledger_mp.c)
target_link_libraries(mem_ledger_mp PRIVATE cudacap_core)
add_test(NAME mem.ledger.race COMMAND mem_ledger_mp race ${CMAKE_BINARY_DIR}/state/mem.ledger.race)
add_test(NAME mem.ledger.kill_storm COMMAND mem_ledger_mp kill ${CMAKE_BINARY_DIR}/state/mem.ledger.kill)

cc_ledger_control(mem_ledger_mp_localonly mem_ledger_mp.c CC_ML_TEST_LOCAL_ONLY)
add_test(NAME mem.ledger.race.negative_control
         COMMAND mem_ledger_mp_localonly race ${CMAKE_BINARY_DIR}/state/mem.ledger.race.nc)
cc_ledger_control(mem_ledger_mp_nosweep mem_ledger_mp.c CC_ML_TEST_NO_SWEEP)
add_test(NAME mem.ledger.kill_storm.negative_control
         COMMAND mem_ledger_mp_nosweep kill ${CMAKE_BINARY_DIR}/state/mem.ledger.kill.nc)
set_tests_properties(mem.ledger.race.negative_control mem.ledger.kill_storm.negative_control
                     PROPERTIES WILL_FAIL TRUE)
set_tests_properties(mem.ledger.race mem.ledger.kill_storm mem.ledger.race.negative_control
                     mem.ledger.kill_storm.negative_control PROPERTIES TIMEOUT 60)

cc_ledger_test(mem_region_faults mem_region_faults.c)
target_link_libraries(mem_region_faults PRIVATE cudacap_core)
add_test(NAME mem.region.faults COMMAND mem_region_faults ${CMAKE_BINARY_DIR}/state/mem.region.faults)
# The init lock held by a stopped or foreign process: a bounded wait, then
# the built region without it (or the per-process cap); a folder that
# cannot back the region. Control: the blocking wait (CC_TEST_UNBOUNDED_INIT_LOCK).
cc_ledger_test(mem_region_lock mem_region_lock.c)
target_link_libraries(mem_region_lock PRIVATE cudacap_core)
add_test(NAME mem.region.lock COMMAND mem_region_lock ${CMAKE_BINARY_DIR}/state/mem.region.lock)
cc_ledger_test(mem_region_lock_unbounded mem_region_lock.c ${CMAKE_SOURCE_DIR}/tests/controls/region.c)
target_compile_definitions(mem_region_lock_unbounded PRIVATE CC_TEST_UNBOUNDED_INIT_LOCK)
target_link_libraries(mem_region_lock_unbounded PRIVATE cudacap_core)
add_test(NAME mem.region.lock.control COMMAND mem_region_lock_unbounded
         ${CMAKE_BINARY_DIR}/state/mem.region.lock.control)
set_tests_properties(mem.region.lock.control PROPERTIES WILL_FAIL TRUE)
set_tests_properties(mem.region.lock mem.region.lock.control PROPERTIES TIMEOUT 120
                     LABELS concurrency)

# --- preloaded on the simulator --------------------------------------------
cc_sim_client(mem_families mem_families.c)
cc_add_preloaded_test(mem.families mem_families)
set_property(TEST mem.families APPEND PROPERTY ENVIRONMENT
  CUDACAP_MEM_LIMIT=1g CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=256m)
cc_add_preloaded_test(mem.garbage_limit mem_families uncapped)
set_property(TEST mem.garbage_limit APPEND PROPERTY ENVIRONMENT
  CUDACAP_MEM_LIMIT=lots CUDACAP_SIM_MEM=8g)

# --- multi-process, through the interposer on the simulator ----------------
# A second and third libcudacap.so, built from the same sources with one
# mechanism removed, for the negative controls of the preloaded suites.
# Only the sources the switch reaches are compiled again with it: those that
# name it, and those that include (directly or through other headers) a
# header that names it; every other object is the one build of the
# library's sources in cudacap_ctl_objs (before 2026-12-03 each of the
# ~30 control libraries compiled all ~60 sources: 1788 of the build's
# 2152 objects). What each library recompiled is written to
# tests/control_sources/<name>.txt; ctest layers.controls compares it with
# the sources as they are now (a switch or an include added since cmake last
# ran: re-run cmake).

get_target_property(_cc_lib_srcs cudacap SOURCES)
get_target_property(_cc_lib_sdir cudacap SOURCE_DIR)
set(CC_LIB_ABS_SOURCES "")
foreach(s ${_cc_lib_srcs})
  if(IS_ABSOLUTE "${s}")
    list(APPEND CC_LIB_ABS_SOURCES "${s}")
  else()
    list(APPEND CC_LIB_ABS_SOURCES "${_cc_lib_sdir}/${s}")
  endif()
endforeach()
# As in src/: the sanitizer runtimes call dlsym while they initialise.
set_source_files_properties(${_cc_lib_sdir}/hook/dlsym.c PROPERTIES COMPILE_OPTIONS "-fno-sanitize=all")
function(cc_copy_lib_props name)
  foreach(p INCLUDE_DIRECTORIES COMPILE_OPTIONS COMPILE_DEFINITIONS ${ARGN})
    get_target_property(v cudacap ${p})
    if(v)
      set_property(TARGET ${name} PROPERTY ${p} "${v}")
    endif()
  endforeach()
endfunction()
add_library(cudacap_ctl_objs OBJECT ${CC_LIB_ABS_SOURCES})
cc_copy_lib_props(cudacap_ctl_objs)
set_target_properties(cudacap_ctl_objs PROPERTIES POSITION_INDEPENDENT_CODE ON)
cc_write_sources(${CMAKE_CURRENT_BINARY_DIR}/control_sources/library.list ${CC_LIB_ABS_SOURCES})

function(cc_memory_control_lib name define)
  cc_control_reach(own "${define}" "${CC_LIB_ABS_SOURCES}")
  cc_objects_less(rest cudacap_ctl_objs "${own_over}")
  add_library(${name} SHARED ${own} ${rest})
  cc_copy_lib_props(${name} LINK_LIBRARIES LINK_OPTIONS)
  target_compile_definitions(${name} PRIVATE ${define})
  set_target_properties(${name} PROPERTIES OUTPUT_NAME cudacap
                        LIBRARY_OUTPUT_DIRECTORY ${CUDACAP_TEST_DIR}/${name})
  cc_write_sources(${CMAKE_CURRENT_BINARY_DIR}/control_sources/${name}.txt ${define} ${own})
endfunction()
cc_memory_control_lib(cudacap_ml_localonly CC_ML_TEST_LOCAL_ONLY)
cc_memory_control_lib(cudacap_ml_nosweep CC_ML_TEST_NO_SWEEP)

# A preloaded test of exe run against control library lib (a negative
# control, WILL_FAIL) when lib is not "": envvar (the name of the caller's
# environment list, in and out) preloads lib instead of the library. (The
# parameter is not called `env`: ${${env}} would then read the parameter
# itself, and the controls lost their whole environment and "failed" on the
# loader: caught by the check at the end of tests/CMakeLists.txt.)
function(cc_preload_control name exe lib envvar)
  if(NOT lib)
    return()
  endif()
  set(e ${${envvar}})
  cc_control_dep(${exe} ${lib})
  string(REPLACE "${CUDACAP_LIB_DIR}/libcudacap.so" "${CUDACAP_TEST_DIR}/${lib}/libcudacap.so"
         pre "${CUDACAP_PRELOAD}")
  list(FILTER e EXCLUDE REGEX "^LD_PRELOAD=")
  list(APPEND e "LD_PRELOAD=${pre}")
  set(${envvar} ${e} PARENT_SCOPE)
  set_tests_properties(${name} PROPERTIES WILL_FAIL TRUE)
endfunction()

# name exe mode control-library|"" extra-env...
function(cc_mem_mp_test name mode lib)
  add_test(NAME ${name} COMMAND mem_preload_mp ${mode})
  cc_preload_env(env ${name} ${ARGN})
  cc_preload_control(${name} mem_preload_mp "${lib}" env)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}" SKIP_RETURN_CODE 77 TIMEOUT 60
                       LABELS concurrency)
endfunction()
cc_sim_client(mem_preload_mp mem_preload_mp.c)
set(MEM_RACE_ENV CUDACAP_MEM_LIMIT=256m CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=16m)
set(MEM_KILL_ENV CUDACAP_MEM_LIMIT=1g CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=16m)
cc_mem_mp_test(mem.preload.race race "" ${MEM_RACE_ENV})
cc_mem_mp_test(mem.preload.race.negative_control race cudacap_ml_localonly ${MEM_RACE_ENV})
cc_mem_mp_test(mem.preload.kill_storm kill "" ${MEM_KILL_ENV})
cc_mem_mp_test(mem.preload.kill_storm.negative_control kill cudacap_ml_nosweep ${MEM_KILL_ENV})
cc_mem_mp_test(mem.preload.unwritable unwritable "" CUDACAP_MEM_LIMIT=512m CUDACAP_SIM_MEM=8g
               CUDACAP_SIM_CTX_MEM=64m)

# Pid namespaces sharing one folder (tests/mem_pidns.c).
# Control: the pid as the only process key (CC_TEST_PID_KEY).
cc_sim_client(mem_pidns mem_pidns.c)
set(MEM_PIDNS_ENV CUDACAP_MEM_LIMIT=1g CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=64m CUDACAP_SM_LIMIT=50)
cc_add_preloaded_test(mem.pidns mem_pidns)
cc_memory_control_lib(cudacap_pid_key CC_TEST_PID_KEY)
cc_control_dep(mem_pidns cudacap_pid_key)
add_test(NAME mem.pidns.control COMMAND mem_pidns)
cc_preload_env(env mem.pidns.control ${MEM_PIDNS_ENV})
string(REPLACE "${CUDACAP_LIB_DIR}/libcudacap.so" "${CUDACAP_TEST_DIR}/cudacap_pid_key/libcudacap.so"
       pre "${CUDACAP_PRELOAD}")
list(FILTER env EXCLUDE REGEX "^LD_PRELOAD=")
list(APPEND env "LD_PRELOAD=${pre}")
set_tests_properties(mem.pidns.control PROPERTIES ENVIRONMENT "${env}" WILL_FAIL TRUE)
set_property(TEST mem.pidns APPEND PROPERTY ENVIRONMENT ${MEM_PIDNS_ENV})
set_tests_properties(mem.pidns mem.pidns.control PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120
                     LABELS "memory;concurrency")

# The ledger suites are concurrency suites too (ThreadSanitizer runs them).
set_tests_properties(mem.ledger.race mem.ledger.kill_storm mem.ledger.race.negative_control
                     mem.ledger.kill_storm.negative_control PROPERTIES LABELS concurrency)

# --- graph memory nodes ------------------------------------------------------
# cuGraphLaunch is wrapped in src/hook/launch.c (compute cap); graph memory is
# counted only once that wrapper calls cc_mem_graph_launch (memory_graph.h).
# Until then the test would fail for a reason outside this area: register it
# only when the call is there.
cc_sim_client(mem_graph mem_graph.c)
file(READ ${CMAKE_SOURCE_DIR}/src/hook/launch.c CC_LAUNCH_C)
string(FIND "${CC_LAUNCH_C}" "cc_mem_graph_launch" CC_LAUNCH_HOOKED)
if(CC_LAUNCH_HOOKED GREATER -1)
  cc_add_preloaded_test(mem.graph mem_graph)
  set_property(TEST mem.graph APPEND PROPERTY ENVIRONMENT
    CUDACAP_MEM_LIMIT=1g CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=256m)
else()
  message(STATUS "mem.graph not registered: src/hook/launch.c does not call cc_mem_graph_launch yet")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/hook/launch.c)

# --- the region's own state under corruption, live processes -----
# Each mode has a control: the same test on the ledger built with the -D
# that removes the mechanism (tests/mem_state_faults.c says what each does).
cc_ledger_test(mem_state_faults mem_state_faults.c)
target_link_libraries(mem_state_faults PRIVATE cudacap_core)
foreach(m slots rebuild sigbus files wrap relink)
  add_test(NAME mem.state.${m} COMMAND mem_state_faults ${m} ${CMAKE_BINARY_DIR}/state/mem.state.${m})
endforeach()
function(cc_state_control mode define)
  cc_ledger_control(mem_state_faults_${mode} mem_state_faults.c ${define})
  add_test(NAME mem.state.${mode}.control
           COMMAND mem_state_faults_${mode} ${mode} ${CMAKE_BINARY_DIR}/state/mem.state.${mode}.nc)
  set_tests_properties(mem.state.${mode}.control PROPERTIES WILL_FAIL TRUE)
endfunction()
cc_state_control(slots CC_ML_TEST_TRUST_HW)
cc_state_control(rebuild CC_ML_TEST_NO_REPUBLISH)
cc_state_control(sigbus CC_TEST_NO_SIGBUS_GUARD)
cc_state_control(files CC_TEST_NO_FILE_CHECKS)
cc_state_control(wrap CC_ML_TEST_WRAP_ADD)
cc_state_control(relink CC_TEST_NO_PATH_RECHECK)
set_tests_properties(mem.state.slots mem.state.rebuild mem.state.sigbus mem.state.files mem.state.wrap
  mem.state.relink mem.state.slots.control mem.state.rebuild.control mem.state.sigbus.control
  mem.state.files.control mem.state.wrap.control mem.state.relink.control PROPERTIES TIMEOUT 60
  LABELS concurrency)

# Context admission (tests/mem_ctx.c); controls: one library, the mechanism
# chosen at run time by CC_TEST_CTX_CONTROL.
cc_memory_control_lib(cudacap_ml_ctxcontrol CC_TEST_CTX_CONTROL)
cc_sim_client(mem_ctx mem_ctx.c)
set(MEM_CTX_ENV CUDACAP_MEM_LIMIT=2g CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=256m)
set(MEM_LEARN_ENV CUDACAP_MEM_LIMIT=1g CUDACAP_SIM_MEM=8g CUDACAP_SIM_DEVICES=2
    CUDACAP_SIM_CTX_MEM_0=64m CUDACAP_SIM_CTX_MEM_1=32m)
function(cc_mem_ctx_test name mode control)
  add_test(NAME ${name} COMMAND mem_ctx ${mode})
  cc_preload_env(env ${name} ${ARGN})
  if(control)
    cc_control_dep(mem_ctx cudacap_ml_ctxcontrol)
    string(REPLACE "${CUDACAP_LIB_DIR}/libcudacap.so"
           "${CUDACAP_TEST_DIR}/cudacap_ml_ctxcontrol/libcudacap.so" pre "${CUDACAP_PRELOAD}")
    list(FILTER env EXCLUDE REGEX "^LD_PRELOAD=")
    list(APPEND env "LD_PRELOAD=${pre}" "CC_TEST_CTX_CONTROL=${control}")
    set_tests_properties(${name} PROPERTIES WILL_FAIL TRUE)
  endif()
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}" TIMEOUT 60 LABELS concurrency)
endfunction()
cc_mem_ctx_test(mem.ctx.late late "" ${MEM_CTX_ENV})
cc_mem_ctx_test(mem.ctx.late.control late noadmit ${MEM_CTX_ENV})
cc_mem_ctx_test(mem.ctx.fork fork "" ${MEM_CTX_ENV})
cc_mem_ctx_test(mem.ctx.fork.control fork noadmit ${MEM_CTX_ENV})
cc_mem_ctx_test(mem.ctx.learn learn "" ${MEM_LEARN_ENV})
cc_mem_ctx_test(mem.ctx.learn.control learn nolearn ${MEM_LEARN_ENV})
set(MEM_CODE_ENV CUDACAP_MEM_LIMIT=1g CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=64m
    CUDACAP_SIM_MODULE_MEM=32m)
cc_mem_ctx_test(mem.ctx.code code "" ${MEM_CODE_ENV})
cc_mem_ctx_test(mem.ctx.code.control code nocode ${MEM_CODE_ENV})
if(CUDACAP_TSAN)
  # The fork child of a process with CUDA up (the keeper thread runs) uses
  # CUDA: TSan refuses that after a multi-threaded fork unless told.
  set_property(TEST mem.ctx.fork mem.ctx.fork.control APPEND PROPERTY ENVIRONMENT
               "TSAN_OPTIONS=die_after_fork=0")
endif()

# Arrays admitted before their creation (memory_vmm.c, array_floor): the
# simulator's high-water mark stays within the cap. Control: created, then
# checked (CC_TEST_ARRAY_AFTER).
cc_sim_client(mem_array_admit mem_array_admit.c)
set(MEM_ARRAY_ENV CUDACAP_MEM_LIMIT=1g CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=64m)
cc_add_preloaded_test(mem.arrays.before mem_array_admit)
set_property(TEST mem.arrays.before APPEND PROPERTY ENVIRONMENT ${MEM_ARRAY_ENV})
cc_memory_control_lib(cudacap_array_after CC_TEST_ARRAY_AFTER)
cc_control_dep(mem_array_admit cudacap_array_after)
cc_add_preloaded_test(mem.arrays.before.control mem_array_admit)
string(REPLACE "${CUDACAP_LIB_DIR}/libcudacap.so" "${CUDACAP_TEST_DIR}/cudacap_array_after/libcudacap.so"
       _array_pre "${CUDACAP_PRELOAD}")
set_property(TEST mem.arrays.before.control APPEND PROPERTY ENVIRONMENT ${MEM_ARRAY_ENV}
             "LD_PRELOAD=${_array_pre}")
set_tests_properties(mem.arrays.before.control PROPERTIES WILL_FAIL TRUE)


# Oversubscription (docs/memory.md, "Oversubscription"; tests/mem_oversub.c):
# 1 GiB on the device + 1 GiB in host memory, 16 MiB contexts, an 8 GiB card.
# Each test has its negative control (WILL_FAIL): the library without the
# mechanism the test claims to see.
cc_sim_client(mem_oversub mem_oversub.c)
set(MEM_OVER_ENV CUDACAP_MEM_LIMIT=1g CUDACAP_MEM_OVERSUBSCRIBE=1g CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=16m)
set(MEM_OVER_SEED_ENV CUDA_MEM_LIMIT_0=2g CUDA_MEM_RATIO_0=2 CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=16m)
cc_memory_control_lib(cudacap_over_device CC_TEST_OVER_DEVICE)
cc_memory_control_lib(cudacap_over_nochecks CC_TEST_OVER_NO_CHECKS)
if(NOT TARGET cudacap_noseed)
  cc_memory_control_lib(cudacap_noseed CC_TEST_NO_SEED_NAMES)
endif()
# name mode control-library|"" extra-env...
function(cc_over_test name mode lib)
  add_test(NAME ${name} COMMAND mem_oversub ${mode} ${ARGN})
  cc_preload_env(env ${name} ${CC_OVER_ENV})
  cc_preload_control(${name} mem_oversub "${lib}" env)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}" TIMEOUT 60 LABELS "memory;concurrency")
endfunction()
set(CC_OVER_ENV ${MEM_OVER_ENV})
cc_over_test(mem.over.fill fill "")
cc_over_test(mem.over.fill.control fill cudacap_over_device)
cc_over_test(mem.over.share share "")
cc_over_test(mem.over.share.control share cudacap_ml_localonly)
cc_over_test(mem.over.kill kill "")
cc_over_test(mem.over.kill.control kill cudacap_ml_nosweep)
cc_over_test(mem.over.families families "")
set(CC_OVER_ENV CUDACAP_MEM_LIMIT=1g CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=16m) # control: none
cc_over_test(mem.over.families.control families "")
set_tests_properties(mem.over.families.control PROPERTIES WILL_FAIL TRUE)
set(CC_OVER_ENV ${MEM_OVER_SEED_ENV})
cc_over_test(mem.over.seed fill "")
cc_over_test(mem.over.seed.control fill cudacap_noseed)
set(CC_OVER_ENV CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=16m)
cc_over_test(mem.over.safety safety "" ${CMAKE_BINARY_DIR}/state/mem.over.safety.d)
cc_over_test(mem.over.safety.control safety cudacap_over_nochecks ${CMAKE_BINARY_DIR}/state/mem.over.safety.control.d)
