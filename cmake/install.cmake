# `cmake --install`: the public headers, the static libraries and a CMake package, so that
#   find_package(reducelab CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE reducelab::cpu)     # the CPU backend, no CUDA needed
#   target_link_libraries(app PRIVATE reducelab::reduce)  # the GPU library (and the CPU backend)

include(CMakePackageConfigHelpers)

set(RL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/reducelab)
install(TARGETS reducelab_cpu reducelab_reduce EXPORT reducelabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/reducelab DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/reducelab/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/reducelab)
install(EXPORT reducelabTargets NAMESPACE reducelab:: DESTINATION ${RL_CMAKE_DIR})

set(RL_PACKAGE_CUDA ${RL_WITH_CUDA})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/reducelabConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/reducelabConfig.cmake INSTALL_DESTINATION ${RL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/reducelabConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/reducelabConfig.cmake ${PROJECT_BINARY_DIR}/reducelabConfigVersion.cmake
        DESTINATION ${RL_CMAKE_DIR})
