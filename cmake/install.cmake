# Install (`cmake --install build --prefix P`, `make install PREFIX=P`) and a Debian package
# (`make deb`, CPack): the paraxis executable (the planner) with paraxis-run, which it starts
# for train, bench and config (cli/runtime.cpp looks in ../libexec/paraxis), its documentation, and the cluster and model
# files scripts/ ships (the cluster presets are built into the executable).
include(GNUInstallDirs)
install(TARGETS paraxis RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS paraxis_run RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/paraxis)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY scripts/clusters/ DESTINATION ${CMAKE_INSTALL_DATADIR}/paraxis/clusters)
install(DIRECTORY scripts/models/ DESTINATION ${CMAKE_INSTALL_DATADIR}/paraxis/models)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME paraxis)
set(CPACK_PACKAGE_VENDOR "paraxis")
set(CPACK_PACKAGE_CONTACT "paraxis maintainers <paraxis@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "plans, predicts and runs hybrid-parallel training of convolutional networks")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Depends: from the shared libraries the executable links (dpkg-shlibdeps), so that apt
# installs LibTorch, Open MPI, GLPK, yaml-cpp and fmt with it.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
