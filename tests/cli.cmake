# The cudacap command. Suites are shell scripts driving the real
# binary on the simulator with the demo worker as the capped program.
cc_sim_client(cudacap_demo_worker ${CMAKE_SOURCE_DIR}/src/cli/demo_worker.c)

# Variants of the command for negative controls and test hooks: the
# sources a variant's switches reach (cc_control_reach, memory.cmake: their
# wrappers in tests/controls/) compiled per variant, the rest once.
get_target_property(_cli_srcs cudacap_cli SOURCES)
list(TRANSFORM _cli_srcs PREPEND ${CMAKE_SOURCE_DIR}/src/)
add_library(cudacap_cli_objs OBJECT ${_cli_srcs})
target_include_directories(cudacap_cli_objs PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/include
                           ${CUDACAP_CUDA_INCLUDE_DIR})
target_compile_definitions(cudacap_cli_objs PRIVATE CUDACAP_VERSION_STRING="${PROJECT_VERSION}" ${CUDACAP_CLI_PATH_DEFS})
# What each variant recompiles, for scripts/check_controls.sh (as the
# control libraries' in control_sources/).
cc_write_sources(${CMAKE_CURRENT_BINARY_DIR}/control_sources/cli/sources.list ${_cli_srcs})
function(cc_cli_variant target)
  cc_control_reach(own "${ARGN}" "${_cli_srcs}")
  cc_objects_less(rest cudacap_cli_objs "${own_over}")
  add_executable(${target} ${own} ${rest})
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/include
                             ${CUDACAP_CUDA_INCLUDE_DIR})
  target_link_libraries(${target} PRIVATE cudacap_core dl)
  target_compile_definitions(${target} PRIVATE ${ARGN})
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CUDACAP_TEST_DIR})
  cc_control_dep(cudacap_demo_worker ${target})
  cc_write_sources(${CMAKE_CURRENT_BINARY_DIR}/control_sources/cli/${target}.txt ${ARGN} ${own})
endfunction()
cc_cli_variant(cudacap_countdead CLI_TEST_COUNT_DEAD)       # dead slots' bytes counted
cc_cli_variant(cudacap_blocking CLI_TEST_BLOCKING_OPEN)     # state files opened blocking
cc_cli_variant(cudacap_peekpause CLI_TEST_PEEK_PAUSE)       # hook: pause inside a region read
cc_cli_variant(cudacap_peekmmap CLI_TEST_PEEK_PAUSE CLI_TEST_MMAP_PEEK) # ... read through mmap
cc_cli_variant(cudacap_novalidate CLI_TEST_NO_VALIDATE)     # region fields not checked
cc_cli_variant(cudacap_followlinks CLI_TEST_FOLLOW_LINKS)   # prepare's path through the kernel
cc_cli_variant(cudacap_noprocscan CLI_TEST_NO_PROC_SCAN)    # liveness from regions and locks only
cc_cli_variant(cudacap_noevict CLI_TEST_NO_EVICT)           # exporter: a full table waits
cc_cli_variant(cudacap_nolivebytes CLI_TEST_NO_PROC_SCAN CLI_TEST_NO_LIVE_BYTES) # ... nor liveness bytes
cc_cli_variant(cudacap_nowindow CLI_TEST_NO_WINDOW_UPDATE)  # pod-resources: HTTP/2's 64 KiB windows kept
cc_test_exe(cudacap_httpprobe ${CMAKE_CURRENT_SOURCE_DIR}/cli_httpprobe.c)

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
                  "CUDACAP=${CUDACAP_BIN_DIR}/cudacap" "WORKER=${CUDACAP_TEST_DIR}/cudacap_demo_worker"
                  "HTTPPROBE=${CUDACAP_TEST_DIR}/cudacap_httpprobe")
  # A hang guard, not a speed bound: beside a suite loop and a CI run on 2
  # cores, cli.podres, deploy.install, faults.node and
  # cli.status.over.control took 36-52 s and timed out at 60 (2026-12-05).
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}" TIMEOUT 180 SKIP_RETURN_CODE 77)
endfunction()

cc_cli_test(cli.args cli_args.sh)
cc_cli_test(cli.prepare cli_prepare.sh)
cc_cli_test(cli.run cli_run.sh)
cc_cli_test(cli.status.memory cli_status_mem.sh)
cc_cli_test(cli.status.over cli_status_over.sh)
cc_cli_test(cli.status.over.control cli_status_over.sh 1m) # 1 MiB beyond the cap: b (300 MiB) is refused
set_tests_properties(cli.status.over.control PROPERTIES WILL_FAIL TRUE)
cc_cli_test(cli.status.dead cli_status_dead.sh)
cc_cli_test(cli.status.dead.negative_control cli_status_dead.sh)
set_property(TEST cli.status.dead.negative_control APPEND PROPERTY ENVIRONMENT
             "CUDACAP=${CUDACAP_TEST_DIR}/cudacap_countdead")
set_tests_properties(cli.status.dead.negative_control PROPERTIES WILL_FAIL TRUE)
cc_cli_test(cli.status.compute cli_status_sm.sh)
cc_cli_test(cli.status.elastic cli_status_elastic.sh)
cc_cli_test(cli.status.nodata cli_status_nodata.sh)
cc_cli_test(cli.metrics cli_metrics.sh)

# node side: each test and its negative control, the same script
# run against a build without the mechanism (WILL_FAIL).
function(cc_cli_control name script binary)
  cc_cli_test(${name} ${script})
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT "CUDACAP=${CUDACAP_TEST_DIR}/${binary}" ${ARGN})
endfunction()
cc_cli_test(cli.status.unusable cli_status_unusable.sh)
cc_cli_control(cli.status.unusable.negative_control cli_status_unusable.sh cudacap_blocking CLI_HANG_S=1)
cc_cli_test(cli.status.corrupt cli_status_corrupt.sh)
cc_cli_control(cli.status.corrupt.negative_control cli_status_corrupt.sh cudacap_novalidate)
cc_cli_control(cli.status.truncate cli_status_truncate.sh cudacap_peekpause)
cc_cli_control(cli.status.truncate.negative_control cli_status_truncate.sh cudacap_peekmmap)
cc_cli_test(cli.prepare.paths cli_prepare_paths.sh)
cc_cli_control(cli.prepare.paths.negative_control cli_prepare_paths.sh cudacap_followlinks)
cc_cli_test(cli.prepare.live cli_prepare_live.sh)
cc_cli_control(cli.prepare.live.negative_control cli_prepare_live.sh cudacap_noprocscan)
cc_cli_control(cli.prepare.livebytes cli_prepare_livebytes.sh cudacap_noprocscan)
cc_cli_control(cli.prepare.livebytes.negative_control cli_prepare_livebytes.sh cudacap_nolivebytes)
cc_cli_test(cli.metrics.stall cli_metrics_stall.sh)
cc_cli_control(cli.metrics.stall.negative_control cli_metrics_stall.sh cudacap_noevict)
set_tests_properties(cli.status.unusable.negative_control cli.status.corrupt.negative_control
                     cli.status.truncate.negative_control cli.prepare.paths.negative_control
                     cli.prepare.live.negative_control cli.metrics.stall.negative_control
                     cli.prepare.livebytes.negative_control
                     PROPERTIES WILL_FAIL TRUE)
# The campaign (short mode; FAULTS_LONG=1 by hand for ten times the rounds).
cc_cli_test(faults.node faults_node.sh)
cc_cli_test(cli.top cli_top.sh)
cc_cli_test(cli.cdi cli_cdi.sh)
cc_cli_test(cli.doctor cli_doctor.sh)
add_dependencies(cudacap_demo_worker cudacap_cli cudacap_httpprobe)
# the installed tree (cmake --install into a scratch prefix).
cc_cli_test(install.tree install_tree.sh)
set_property(TEST install.tree APPEND PROPERTY ENVIRONMENT "BUILD=${CMAKE_BINARY_DIR}")
# A real runtime through the CDI spec (root, podman and runc; else skipped).
cc_cli_test(cli.cdi.podman cli_cdi_podman.sh)
set_tests_properties(cli.cdi.podman PROPERTIES RUN_SERIAL FALSE TIMEOUT 120)
# Its control: the spec without the read-only mount of limits.d: the
# container can then replace its caps (WILL_FAIL).
cc_cli_test(cli.cdi.podman.control cli_cdi_podman.sh rw-limits)
set_tests_properties(cli.cdi.podman.control PROPERTIES TIMEOUT 120 WILL_FAIL TRUE)
cc_cli_test(cli.metrics.counters cli_metrics_counters.sh)
cc_cli_test(cli.metrics.node cli_metrics_node.sh)
# A real Prometheus server scrapes the exporter beside a non-UTF-8 folder
# (and, as its control, a target with a raw 0xff: down).
cc_cli_test(cli.metrics.scrape cli_metrics_scrape.sh)
cc_cli_test(cli.node cli_node.sh)
cc_cli_test(cli.allusers cli_allusers.sh)
# glibc 2.17+ images: the library needs no GLIBC_ version above 2.17
# (scripts/check-glibc.sh); the control: the same check at 2.16 must fail.
if(CUDACAP_GLIBC_COMPAT)
  add_test(NAME install.glibc COMMAND ${CMAKE_SOURCE_DIR}/scripts/check-glibc.sh ${CUDACAP_LIB_DIR}/libcudacap.so 2.17)
  add_test(NAME install.glibc.negative_control
           COMMAND ${CMAKE_SOURCE_DIR}/scripts/check-glibc.sh ${CUDACAP_LIB_DIR}/libcudacap.so 2.16)
  set_tests_properties(install.glibc.negative_control PROPERTIES WILL_FAIL TRUE)
endif()
cc_cli_test(deploy.install deploy_install.sh)
# The Helm chart, rendered by Helm's engine built from Debian's Go packages
# (tests/helm_render.go; golang-go, Sprig, yaml.v2, else skipped): lint
# subset, deploy/daemonset.yaml its default rendering, the schema check, an
# override. The control: a misspelled field in the chart, rendered into the
# expected manifest too, must fail the schema check.
cc_cli_test(deploy.helm deploy_helm.sh)
cc_cli_test(deploy.helm.negative_control deploy_helm.sh)
set_property(TEST deploy.helm.negative_control APPEND PROPERTY ENVIRONMENT DEPLOY_HELM_CONTROL=1)
set_tests_properties(deploy.helm deploy.helm.negative_control PROPERTIES TIMEOUT 300)
set_tests_properties(deploy.helm.negative_control PROPERTIES WILL_FAIL TRUE)
# Pod labels from the kubelet's pod-resources socket, against a real gRPC
# server (python3-grpcio, python3-protobuf; else skipped). The control: a
# build without the WINDOW_UPDATE, whose >64 KiB answer stalls.
cc_cli_test(cli.podres cli_podres.sh)
cc_cli_control(cli.podres.negative_control cli_podres.sh cudacap_nowindow)
set_tests_properties(cli.podres cli.podres.negative_control PROPERTIES LABELS cli)
set_tests_properties(cli.podres.negative_control PROPERTIES WILL_FAIL TRUE)
# The decoder alone: malformations named, 200000 mutations (ASan in CI).
cc_test_exe(cli_podres_decode ${CMAKE_CURRENT_SOURCE_DIR}/cli_podres_decode.c ${CMAKE_SOURCE_DIR}/src/cli/podres_pb.c)
target_include_directories(cli_podres_decode PRIVATE ${CMAKE_SOURCE_DIR}/src)
add_dependencies(cudacap_demo_worker cli_podres_decode)
add_test(NAME cli.podres.decode COMMAND cli_podres_decode)
# HPACK decoding of the kubelet's trailers (grpc-status): vectors, malformed
# and random blocks (tests/cli_hpack.c).
cc_test_exe(cli_hpack ${CMAKE_CURRENT_SOURCE_DIR}/cli_hpack.c ${CMAKE_SOURCE_DIR}/src/cli/hpack.c)
target_include_directories(cli_hpack PRIVATE ${CMAKE_SOURCE_DIR}/src)
add_dependencies(cudacap_demo_worker cli_hpack)
add_test(NAME cli.podres.hpack COMMAND cli_hpack)
set_tests_properties(cli.podres.hpack PROPERTIES LABELS cli)
set_tests_properties(cli.podres.decode PROPERTIES LABELS cli TIMEOUT 60)
cc_cli_test(deploy.podres deploy_podres.sh)
# The node image built (podman build --network none, local Debian bases made
# with debootstrap, cached in the build folder) and run under runc: the
# exporter, node-install.sh. Root, podman, runc and debootstrap, else
# skipped. The control: the image without the library (WILL_FAIL), its build
# stage from the layer cache deploy.image leaves (the lock orders them).
cc_cli_test(deploy.image deploy_image.sh)
cc_cli_test(deploy.image.negative_control deploy_image.sh)
set_property(TEST deploy.image deploy.image.negative_control APPEND PROPERTY ENVIRONMENT
             "DEPLOY_IMAGE_CACHE=${CMAKE_BINARY_DIR}/deploy-image-cache")
set_property(TEST deploy.image.negative_control APPEND PROPERTY ENVIRONMENT DEPLOY_IMAGE_CONTROL=1)
set_tests_properties(deploy.image deploy.image.negative_control PROPERTIES
                     RESOURCE_LOCK deploy_image_storage TIMEOUT 900 LABELS image)
set_tests_properties(deploy.image.negative_control PROPERTIES WILL_FAIL TRUE DEPENDS deploy.image)
# README's two commands in a fresh Debian 12 root holding only README's
# packages, under podman and runc (label image: about 5 minutes). Its root
# is deploy.image's build-stage root when that test made it (the same
# packages), else its own debootstrap from the .debs deploy.image cached
# (the lock keeps them apart; DEPENDS runs deploy.image first).
cc_cli_test(readme.fresh readme_fresh.sh)
set_property(TEST readme.fresh APPEND PROPERTY ENVIRONMENT
             "DEBS=${CMAKE_BINARY_DIR}/deploy-image-cache/debs"
             "DEPLOY_IMAGE_CACHE=${CMAKE_BINARY_DIR}/deploy-image-cache")
set_tests_properties(readme.fresh PROPERTIES RESOURCE_LOCK deploy_image_storage TIMEOUT 1200
                     LABELS image SKIP_RETURN_CODE 77 DEPENDS deploy.image)
