# Install rules and the Debian package (CPack DEB). Layout under the prefix:
#   ${libdir}/cudacap/libcudacap.so.<version>, .so.<major>, .so (links)
#   ${bindir}/cudacap
#   ${mandir}/man1/cudacap*.1
#   ${datadir}/bash-completion/completions/cudacap
#   ${docdir}/LICENSE, README.md, docs/*.md
#   ${datadir}/cudacap/node-install.sh (the node installer, deploy/)
#   ${includedir}/cudacap/cudacap.h (the library's introspection entry points)
#   ${prefix}/lib/systemd/system/cudacap-metrics.service (the exporter's unit, not enabled)
#   ${localstatedir}/lib/cudacap/containers (the default root, 0711; /var for prefix /usr)
# The simulator, tests and benches are never installed (a simulated
# libcuda.so.1 on a node would shadow the driver).
install(TARGETS cudacap LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/cudacap NAMELINK_SKIP)
# The plain name as a link to the soname (a runtime file here: LD_PRELOAD and
# CDI specs name it, so it is not a development-only link).
install(CODE "
  set(_d \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/cudacap\")
  execute_process(COMMAND \${CMAKE_COMMAND} -E create_symlink libcudacap.so.${PROJECT_VERSION_MAJOR} \"\${_d}/libcudacap.so\")
  message(STATUS \"Installing: \${_d}/libcudacap.so -> libcudacap.so.${PROJECT_VERSION_MAJOR}\")")
install(TARGETS cudacap_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
file(GLOB _cc_man ${CMAKE_SOURCE_DIR}/man/*.1)
install(FILES ${_cc_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/bash-completion/cudacap
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${CMAKE_SOURCE_DIR}/LICENSE ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(PROGRAMS ${CMAKE_SOURCE_DIR}/deploy/node-install.sh DESTINATION ${CMAKE_INSTALL_DATADIR}/cudacap)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")
install(FILES ${CMAKE_SOURCE_DIR}/include/cudacap/cudacap.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cudacap)
# The exporter's unit and the default root are placed at install time, from
# the prefix then in force (cmake --install --prefix, CPack's /usr): a path
# computed at configure time would name the configured prefix instead.
# The unit names the installed command; the root is /var/lib/cudacap/
# containers for the prefix /usr, else <prefix>/var/lib/... (0711: others
# may reach a container's folder they know, not list them). Before, the
# root did not exist after an install and status exited 1.
install(CODE "
  set(_p \"\${CMAKE_INSTALL_PREFIX}\")
  if(_p STREQUAL \"/usr\")
    set(_var \"/var\")
  else()
    set(_var \"\${_p}/var\")
  endif()
  set(_root \"\$ENV{DESTDIR}\${_var}/lib/cudacap/containers\")
  file(MAKE_DIRECTORY \"\${_root}\")
  file(CHMOD \"\${_root}\" DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_EXECUTE WORLD_EXECUTE)
  message(STATUS \"Installing: \${_root}\")
  set(CUDACAP_FULL_BINDIR \"\${_p}/${CMAKE_INSTALL_BINDIR}\")
  set(CUDACAP_FULL_STATEDIR \"\${_var}\")
  configure_file(\"${CMAKE_SOURCE_DIR}/packaging/systemd/cudacap-metrics.service.in\"
                 \"\$ENV{DESTDIR}\${_p}/lib/systemd/system/cudacap-metrics.service\" @ONLY)
  message(STATUS \"Installing: \$ENV{DESTDIR}\${_p}/lib/systemd/system/cudacap-metrics.service\")")

set(CPACK_GENERATOR DEB)
# Staged with DESTDIR under the real prefix (/usr): the install-time code
# above then sees the prefix the package installs to.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGE_NAME cudacap)
set(CPACK_PACKAGE_VENDOR "cudacap")
set(CPACK_PACKAGE_CONTACT "cudacap maintainers <cudacap@example.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "caps GPU memory and SM utilization per container (LD_PRELOAD)")
set(CPACK_PACKAGE_DESCRIPTION "An LD_PRELOAD library capping what a container may take of an NVIDIA\n GPU (device memory, SM utilization), and the cudacap command for the node\n side: run, prepare, status, top, metrics, cdi, doctor.")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.invalid/cudacap")
include(CPack)
