# SPDX-License-Identifier: GPL-2.0-only
# Installing replayq: `cmake --install build [--prefix P]` (GNUInstallDirs
# paths under the prefix) and its Debian package (`cpack -G DEB` in a build
# configured with -DCMAKE_INSTALL_PREFIX=/usr; deploy/build-deb does both).
#
#   bin/replayq                                  the program
#   libexec/replayq/redis-tls-tunnel             the TLS tunnel to Redis
#   share/man/man1/replayq*.1, man5/replayq-jobs.5  the manual pages (gzip)
#   lib/systemd/system/replayq-worker@.service,
#   lib/systemd/system/replayq-redis-tunnel.service  the units, with this
#                                                install's paths written in
#   SYSCONFDIR/replayq/worker.env                the worker's settings (from
#                                                worker.env.example; never
#                                                overwritten once there)
#   share/doc/replayq/                           README, docs/, schema, the
#                                                examples (env files, the
#                                                Python client), copyright
#
# The .deb: its Depends come from dpkg-shlibdeps (the Debian packages of
# the libraries the binary links: libc6, libhiredis0.14, libjansson4,
# libdeflate0, zlib1g with the static libgit2) and adduser; its postinst
# makes the system user replayq, gives /etc/replayq to it and makes
# /srv/git (deploy/debian/).

set(RQ_SYSTEMD_UNITDIR "${CMAKE_INSTALL_PREFIX}/lib/systemd/system"
    CACHE PATH "where the systemd units are installed")
set(RQ_LIBEXECDIR "${CMAKE_INSTALL_LIBEXECDIR}/replayq")
set(RQ_DOCDIR "${CMAKE_INSTALL_DATADIR}/doc/replayq")

install(TARGETS replayq RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS deploy/redis-tls-tunnel DESTINATION ${RQ_LIBEXECDIR})

# the units name /usr/bin, /usr/libexec and /etc: this install's instead
foreach(unit systemd/replayq-worker@.service tls/replayq-redis-tunnel.service)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/deploy/${unit})
  file(READ ${CMAKE_SOURCE_DIR}/deploy/${unit} text)
  string(REPLACE "/usr/bin/replayq" "${CMAKE_INSTALL_FULL_BINDIR}/replayq" text "${text}")
  string(REPLACE "/usr/libexec/replayq/" "${CMAKE_INSTALL_FULL_LIBEXECDIR}/replayq/" text "${text}")
  string(REPLACE "/etc/replayq/" "${CMAKE_INSTALL_FULL_SYSCONFDIR}/replayq/" text "${text}")
  get_filename_component(name ${unit} NAME)
  file(WRITE ${CMAKE_BINARY_DIR}/install/${name} "${text}")
  install(FILES ${CMAKE_BINARY_DIR}/install/${name} DESTINATION ${RQ_SYSTEMD_UNITDIR})
endforeach()

# the manual pages, compressed (reproducibly: gzip -n)
file(GLOB RQ_MAN_PAGES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/man/*.[15])
set(RQ_MAN_GZ)
foreach(page ${RQ_MAN_PAGES})
  get_filename_component(name ${page} NAME)
  string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section ${name})
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/man/${name}.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND gzip -9nc ${page} > ${CMAKE_BINARY_DIR}/man/${name}.gz
    DEPENDS ${page} VERBATIM)
  list(APPEND RQ_MAN_GZ ${CMAKE_BINARY_DIR}/man/${name}.gz)
  install(FILES ${CMAKE_BINARY_DIR}/man/${name}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()
add_custom_target(rq_man ALL DEPENDS ${RQ_MAN_GZ})

# /etc/replayq/worker.env: the example, unless the file is there already
# (the .deb makes it a conffile: dpkg keeps the admin's edits)
install(DIRECTORY DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/replayq)
install(CODE "
  set(env \"\$ENV{DESTDIR}${CMAKE_INSTALL_FULL_SYSCONFDIR}/replayq/worker.env\")
  if(NOT EXISTS \"\${env}\")
    message(STATUS \"Installing: \${env}\")
    configure_file(\"${CMAKE_SOURCE_DIR}/deploy/systemd/worker.env.example\" \"\${env}\" COPYONLY)
  else()
    message(STATUS \"Kept: \${env}\")
  endif()")

install(FILES README.md DESTINATION ${RQ_DOCDIR})
install(FILES LICENSE DESTINATION ${RQ_DOCDIR} RENAME copyright)
install(DIRECTORY docs/ DESTINATION ${RQ_DOCDIR}/docs PATTERN man EXCLUDE)
install(FILES deploy/systemd/worker.env.example deploy/tls/redis-tunnel.env.example
              deploy/systemd/redis-override.conf clients/python/replayq_client.py
        DESTINATION ${RQ_DOCDIR}/examples)

# --- the Debian package -------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME replayq)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_PACKAGE_CONTACT "replayq maintainers <replayq@example.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "replay git commits without a worktree, at fleet scale")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "replayq replays commits onto a new base (rebase, cherry-pick, revert,
merge trains) without a worktree or an index, byte for byte as upstream
git replay does, and runs those replays from a Redis queue with forked
workers (replayq-worker@.service).")
set(CPACK_DEBIAN_PACKAGE_SECTION vcs)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.com/replayq")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "redis-server")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "stunnel4")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_SOURCE_DIR}/deploy/debian/postinst ${CMAKE_SOURCE_DIR}/deploy/debian/postrm
    ${CMAKE_SOURCE_DIR}/deploy/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
