# install + export: find_package(symmoe CONFIG) gives symmoe::symmoe.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS symmoe EXPORT symmoeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/symmoe DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET symmoe_cli)
  install(TARGETS symmoe_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(SYMMOE_CONFIG_WITH_MPI ${_symmoe_mpi})
configure_package_config_file(cmake/symmoeConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/symmoeConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/symmoe)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/symmoeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(EXPORT symmoeTargets NAMESPACE symmoe:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/symmoe)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/symmoeConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/symmoeConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/symmoe)
