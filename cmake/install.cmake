# Install rules and the Debian package (CPack DEB). Layout under the prefix:
#   ${libdir}/cudacap/libcudacap.so.<version>, .so.<major>, .so (links)
#   ${bindir}/cudacap
#   ${mandir}/man1/cudacap*.1.gz
#   ${docdir}/copyright, changelog.gz (Debian's), ${datadir}/lintian/overrides/cudacap
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
# The package's maintainer (the Maintainer field, the changelog, the
# copyright's contact): a distributor sets its own.
set(CUDACAP_MAINTAINER "Seed 88768899 maintainers <maintainers@users.noreply.a-seed-88768899.example>"
    CACHE STRING "Maintainer of the Debian package (name <address>)")
# Man pages and the changelog gzipped with -9n (no name, no time stamp: the
# same bytes every build), as Debian policy wants them; the copyright file
# in Debian's machine-readable format. Built into ${CMAKE_BINARY_DIR}/pkg.
set(_cc_pkg ${CMAKE_BINARY_DIR}/pkg)
configure_file(${CMAKE_SOURCE_DIR}/packaging/debian/changelog.in ${_cc_pkg}/changelog @ONLY)
configure_file(${CMAKE_SOURCE_DIR}/packaging/debian/copyright.in ${_cc_pkg}/copyright @ONLY)
file(GLOB _cc_man ${CMAKE_SOURCE_DIR}/man/*.1)
set(_cc_gz ${_cc_pkg}/changelog.gz)
add_custom_command(OUTPUT ${_cc_pkg}/changelog.gz
                   COMMAND sh -c "gzip -9nc changelog > changelog.gz" WORKING_DIRECTORY ${_cc_pkg}
                   DEPENDS ${_cc_pkg}/changelog VERBATIM)
foreach(_m ${_cc_man})
  get_filename_component(_n ${_m} NAME)
  add_custom_command(OUTPUT ${_cc_pkg}/${_n}.gz COMMAND sh -c "gzip -9nc \"$0\" > \"$1\"" ${_m} ${_cc_pkg}/${_n}.gz
                     DEPENDS ${_m} VERBATIM)
  list(APPEND _cc_man_gz ${_cc_pkg}/${_n}.gz)
endforeach()
add_custom_target(cudacap_pkg_files ALL DEPENDS ${_cc_gz} ${_cc_man_gz})
install(FILES ${_cc_man_gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${_cc_pkg}/changelog.gz ${_cc_pkg}/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${CMAKE_SOURCE_DIR}/packaging/debian/lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME cudacap)
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
set(CPACK_PACKAGE_CONTACT "${CUDACAP_MAINTAINER}")
# Stripped in the package, the debug information split off into
# cudacap-dbgsym (.ddeb, by build id). CPack's DEB generator strips itself
# what it finds unstripped; CPACK_STRIP_FILES would strip first and leave it
# nothing to split.
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "caps GPU memory and SM utilization per container (LD_PRELOAD)")
set(CPACK_PACKAGE_DESCRIPTION "An LD_PRELOAD library capping what a container may take of an NVIDIA\n GPU (device memory, SM utilization), and the cudacap command for the node\n side: run, prepare, set, status, top, metrics, cdi, doctor.")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The Homepage field: the project has no public page to name, so none
# unless a distributor gives one (a placeholder URL is worse than none).
set(CUDACAP_HOMEPAGE "" CACHE STRING "Homepage field of the Debian package (empty: none)")
if(CUDACAP_HOMEPAGE)
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${CUDACAP_HOMEPAGE}")
endif()
include(CPack)
