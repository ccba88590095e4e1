# SPDX-License-Identifier: Apache-2.0
# What an installed xfer offers to the programs built against it:
#   <libdir>/cmake/xfer/xferConfig.cmake (+ Version, Targets): find_package(xfer CONFIG) -> xfer::xfer
#   <libdir>/pkgconfig/xfer.pc: pkg-config --cflags --libs xfer
# Both are relocatable: they locate the prefix from their own path, so an install tree copied
# or installed with `cmake --install --prefix` elsewhere still works.
include(CMakePackageConfigHelpers)

set(XFER_CMAKE_PACKAGE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/xfer")
install(EXPORT xferTargets NAMESPACE xfer:: DESTINATION "${XFER_CMAKE_PACKAGE_DIR}")
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/xferConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/package/xferConfig.cmake"
  INSTALL_DESTINATION "${XFER_CMAKE_PACKAGE_DIR}")
# The API keeps source compatibility within a major version (xfer.h's "values never change").
write_basic_package_version_file("${PROJECT_BINARY_DIR}/package/xferConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES "${PROJECT_BINARY_DIR}/package/xferConfig.cmake" "${PROJECT_BINARY_DIR}/package/xferConfigVersion.cmake"
  DESTINATION "${XFER_CMAKE_PACKAGE_DIR}")

# pkg-config: prefix relative to the .pc file (${pcfiledir}), whatever CMAKE_INSTALL_LIBDIR is.
file(RELATIVE_PATH XFER_PC_TO_PREFIX "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
string(REGEX REPLACE "/$" "" XFER_PC_TO_PREFIX "${XFER_PC_TO_PREFIX}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/xfer.pc.in" "${PROJECT_BINARY_DIR}/package/xfer.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/package/xfer.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/xfer")
