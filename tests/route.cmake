# Which device (issue 25; docs/interception.md, "Which device"): launches
# and stream-ordered allocations are charged to the device they run on, on
# 2 and 4 simulated devices, the last one capped, device 0's context
# current. Controls: the library reading the current device instead
# (CC_TEST_CURRENT_DEVICE); for the deprecated launches that take no stream,
# no cudacap at all (their route is interception itself).
cc_sim_client(route_device route_device.c)
set(ROUTE_FAMILIES kernel kernel_ex coop grid_async multi)
foreach(nd 2 4)
  math(EXPR last "${nd} - 1")
  set(env_sm CUDACAP_SIM_DEVICES=${nd} CUDACAP_SM_LIMIT_${last}=30)
  set(env_mem CUDACAP_SIM_DEVICES=${nd} CUDACAP_MEM_LIMIT_${last}=1g CUDACAP_SIM_MEM=8g
      CUDACAP_SIM_CTX_MEM=64m)
  foreach(f ${ROUTE_FAMILIES} grid launch)
    cc_add_preloaded_test(route.${nd}dev.${f} route_device launch ${f})
    set_property(TEST route.${nd}dev.${f} APPEND PROPERTY ENVIRONMENT ${env_sm})
  endforeach()
  foreach(m alloc pool)
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
    foreach(f grid launch)
      cc_add_preloaded_test(route.${nd}dev.${f}.control route_device launch ${f})
      set_property(TEST route.${nd}dev.${f}.control APPEND PROPERTY ENVIRONMENT ${env_sm}
                   "LD_PRELOAD=")
      set_tests_properties(route.${nd}dev.${f}.control PROPERTIES WILL_FAIL TRUE)
    endforeach()
  endif()
endforeach()

