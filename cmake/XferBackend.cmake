# SPDX-License-Identifier: Apache-2.0
# xfer_add_backend(<name> SOURCES ... [LIBRARIES ...])
# Builds one plugin, libxfer-backend-<name>.so, into lib/xfer/ of the build and install trees.
# A plugin sees the plugin ABI header only (xfer::api), never core headers.
set(_xfer_backend_map "${CMAKE_CURRENT_LIST_DIR}/xfer_backend.map")
function(xfer_add_backend name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  set(target xfer-backend-${name})
  # libcudart may be bundled next to libxfer.so (XFER_BUNDLE_RUNTIME) or come from the toolkit.
  set(_xfer_plugin_rpath "$ORIGIN/..")
  if(XFER_HAVE_CUDA AND CUDAToolkit_LIBRARY_DIR)
    list(APPEND _xfer_plugin_rpath "${CUDAToolkit_LIBRARY_DIR}")
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE xfer::api ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "xfer-backend-${name}"
    LIBRARY_OUTPUT_DIRECTORY "${XFER_PLUGIN_OUTPUT_DIR}"
    # One RUNPATH in the build tree, linked directly: CMake pads a separate build RUNPATH with a
    # trailing ':' for later rewriting, and an empty entry means the current directory.
    INSTALL_RPATH "${_xfer_plugin_rpath}"
    BUILD_WITH_INSTALL_RPATH ON)
  # Unresolved symbols in a plugin would only show at load time; fail at link time instead.
  target_link_options(${target} PRIVATE ${XFER_NO_UNDEFINED} "LINKER:--enable-new-dtags"
    "LINKER:--version-script=${_xfer_backend_map}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${_xfer_backend_map}")
  # Plugins that cannot load leave the process alone, but a group- or world-writable plugin is
  # refused by the core: the build tree's copies do not depend on the user's umask.
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND chmod go-w "$<TARGET_FILE:${target}>" "${XFER_PLUGIN_OUTPUT_DIR}" VERBATIM)
  if(XFER_BUILD_TESTS)
    add_test(NAME plugin.${name}.exports_only_the_entry_point
      COMMAND ${CMAKE_COMMAND} -DLIBRARY=$<TARGET_FILE:${target}> -DNM=${CMAKE_NM}
              "-DALLOWED=^xfer_backend_entry$" -DREQUIRED=xfer_backend_entry
              -P "${PROJECT_SOURCE_DIR}/tests/core/check_exports.cmake")
  endif()
  xfer_install_module(${target} "${XFER_PLUGIN_SUBDIR}")
endfunction()

# xfer_install_module(<target> <destination>)
# Installs a plugin-like shared library whose RUNPATH in the install tree is "$ORIGIN/.." alone
# (lib/, where a bundled libcudart may sit): no path of the build machine (e.g. the toolkit's
# lib folder) leaves with it. Installed, libcudart otherwise comes from the system loader path
# (ldconfig, LD_LIBRARY_PATH). file(RPATH_SET) rewrites in place (the new value is never longer).
function(xfer_install_module target destination)
  install(TARGETS ${target} LIBRARY DESTINATION "${destination}")
  install(CODE "file(RPATH_SET FILE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${destination}/$<TARGET_FILE_NAME:${target}>\" NEW_RPATH \"$ORIGIN/..\")")
endfunction()
