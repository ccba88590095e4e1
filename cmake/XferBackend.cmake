# xfer_add_backend(<name> SOURCES ... [LIBRARIES ...])
# Builds one plugin, libxfer-backend-<name>.so, into lib/xfer/ of the build and install trees.
# A plugin sees the plugin ABI header only (xfer::api), never core headers.
function(xfer_add_backend name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  set(target xfer-backend-${name})
  # Installed plugins carry only $ORIGIN/.. (lib/, where a bundled libcudart may sit): no path
  # of the build machine. libcudart otherwise comes from the system loader path (ldconfig,
  # LD_LIBRARY_PATH). The build tree also searches this machine's toolkit; that RUNPATH is the
  # longer one, so CMake rewrites it in place at install without padding it.
  set(_xfer_plugin_build_rpath "$ORIGIN/..")
  if(XFER_HAVE_CUDA AND CUDAToolkit_LIBRARY_DIR)
    list(APPEND _xfer_plugin_build_rpath "${CUDAToolkit_LIBRARY_DIR}")
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE xfer::api ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "xfer-backend-${name}"
    LIBRARY_OUTPUT_DIRECTORY "${XFER_PLUGIN_OUTPUT_DIR}"
    BUILD_RPATH "${_xfer_plugin_build_rpath}"
    INSTALL_RPATH "$ORIGIN/.."
    BUILD_WITH_INSTALL_RPATH OFF)
  # Unresolved symbols in a plugin would only show at load time; fail at link time instead.
  target_link_options(${target} PRIVATE "LINKER:--no-undefined" "LINKER:--enable-new-dtags")
  install(TARGETS ${target} LIBRARY DESTINATION "${XFER_PLUGIN_SUBDIR}")
endfunction()
