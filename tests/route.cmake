# Which device (docs/interception.md, "Which device"): launches
# and stream-ordered allocations are charged to the device they run on, on
# 2 and 4 simulated devices, the last one capped, device 0's context
# current. Controls: the library reading the current device instead
# (CC_TEST_CURRENT_DEVICE); for the deprecated launches that take no stream
# and for VMM handles (charged to their location), no cudacap at all.
cc_sim_client(route_device route_device.c)
set(ROUTE_FAMILIES kernel kernel_ex coop grid_async multi graph)
foreach(nd 2 4)
  math(EXPR last "${nd} - 1")
  set(env_sm CUDACAP_SIM_DEVICES=${nd} CUDACAP_SM_LIMIT_${last}=30)
  set(env_mem CUDACAP_SIM_DEVICES=${nd} CUDACAP_MEM_LIMIT_${last}=1g CUDACAP_SIM_MEM=8g
      CUDACAP_SIM_CTX_MEM=64m)
  foreach(f ${ROUTE_FAMILIES} grid launch)
    cc_add_preloaded_test(route.${nd}dev.${f} route_device launch ${f})
    set_property(TEST route.${nd}dev.${f} APPEND PROPERTY ENVIRONMENT ${env_sm})
  endforeach()
  foreach(m alloc pool vmm)
    cc_add_preloaded_test(route.${nd}dev.${m} route_device ${m})
    set_property(TEST route.${nd}dev.${m} APPEND PROPERTY ENVIRONMENT ${env_mem})
  endforeach()
  # A driver without cuStreamGetDevice (before CUDA 12.8): the context route.
  cc_add_preloaded_test(route.${nd}dev.kernel.oldapi route_device launch kernel)
  set_property(TEST route.${nd}dev.kernel.oldapi APPEND PROPERTY ENVIRONMENT ${env_sm}
               CUDACAP_SIM_NO_STREAM_DEVICE=1)
  cc_add_preloaded_test(route.${nd}dev.alloc.oldapi route_device alloc)
  set_property(TEST route.${nd}dev.alloc.oldapi APPEND PROPERTY ENVIRONMENT ${env_mem}
               CUDACAP_SIM_NO_STREAM_DEVICE=1)
  if(nd EQUAL 2)
    foreach(f ${ROUTE_FAMILIES})
      cc_preload_control_mode(route.${nd}dev.${f}.control route_device "launch;${f}"
                              cudacap_current_device CC_TEST_CURRENT_DEVICE ${env_sm})
    endforeach()
    foreach(m alloc pool)
      cc_preload_control_mode(route.${nd}dev.${m}.control route_device ${m}
                              cudacap_current_device CC_TEST_CURRENT_DEVICE ${env_mem})
    endforeach()
    # VMM is charged to the handle's location, never to a context: its
    # control is no cudacap at all (T then grants 8 GiB).
    cc_add_preloaded_test(route.${nd}dev.vmm.control route_device vmm)
    set_property(TEST route.${nd}dev.vmm.control APPEND PROPERTY ENVIRONMENT ${env_mem} "LD_PRELOAD=")
    set_tests_properties(route.${nd}dev.vmm.control PROPERTIES WILL_FAIL TRUE)
    foreach(f grid launch)
      cc_add_preloaded_test(route.${nd}dev.${f}.control route_device launch ${f})
      set_property(TEST route.${nd}dev.${f}.control APPEND PROPERTY ENVIRONMENT ${env_sm}
                   "LD_PRELOAD=")
      set_tests_properties(route.${nd}dev.${f}.control PROPERTIES WILL_FAIL TRUE)
    endforeach()
  endif()
endforeach()


# Libraries opened with RTLD_DEEPBIND (docs/interception.md): a
# plugin linked against the driver, found by its bare name through the
# program's RUNPATH only (a folder of its own, not on LD_LIBRARY_PATH).
# Control: the library with the flag honoured and nothing bound
# (CC_TEST_DEEPBIND_UNBOUND).
add_library(ccdeep SHARED fixtures/deepbind_plugin.c)
target_include_directories(ccdeep PRIVATE ${CUDACAP_CUDA_INCLUDE_DIR})
target_link_libraries(ccdeep PRIVATE ${SIM_CUDA} dl)
add_dependencies(ccdeep ${CUDACAP_SIM_TARGETS})
set_target_properties(ccdeep PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CUDACAP_TEST_DIR}/deepbind)
cc_sim_client(route_deepbind route_deepbind.c)
add_dependencies(route_deepbind ccdeep)
# The build's RPATH is off project-wide (tests find the simulator through
# LD_LIBRARY_PATH): this one program gets a RUNPATH of its own.
target_link_options(route_deepbind PRIVATE "-Wl,--enable-new-dtags,-rpath,${CUDACAP_TEST_DIR}/deepbind")
set(env_deep_mem CUDACAP_MEM_LIMIT=1g CUDACAP_SIM_MEM=8g CUDACAP_SIM_CTX_MEM=64m)
foreach(b now lazy)
  cc_add_preloaded_test(route.deepbind.alloc.${b} route_deepbind alloc ${b})
  set_property(TEST route.deepbind.alloc.${b} APPEND PROPERTY ENVIRONMENT ${env_deep_mem})
endforeach()
cc_add_preloaded_test(route.deepbind.ctor route_deepbind ctor)
set_property(TEST route.deepbind.ctor APPEND PROPERTY ENVIRONMENT ${env_deep_mem} DEEP_CTOR_MIB=768)
cc_add_preloaded_test(route.deepbind.launch route_deepbind launch)
set_property(TEST route.deepbind.launch APPEND PROPERTY ENVIRONMENT CUDACAP_SM_LIMIT=30)
cc_add_preloaded_test(route.deepbind.runpath route_deepbind runpath)
cc_add_preloaded_test(route.deepbind.own route_deepbind own)
cc_preload_control_mode(route.deepbind.alloc.control route_deepbind "alloc;now"
                        cudacap_deepbind_unbound CC_TEST_DEEPBIND_UNBOUND ${env_deep_mem})
cc_preload_control_mode(route.deepbind.launch.control route_deepbind launch
                        cudacap_deepbind_unbound CC_TEST_DEEPBIND_UNBOUND CUDACAP_SM_LIMIT=30)
