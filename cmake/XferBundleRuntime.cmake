# SPDX-License-Identifier: Apache-2.0
# Copies the shared libraries the build depends on but a bare GPU machine may lack into lib/,
# next to libxfer.so: libboost_program_options for xfer-tool's command line (libxfer.so does
# not link it), libcudart for the CUDA backends and the tool's kernels. Binaries find them
# through RUNPATH ($ORIGIN/../lib for bin/xfer-tool, $ORIGIN/.. for the plugins); Debian's
# static Boost is not PIC, so it cannot be linked in instead. Each copy takes the name the
# binaries ask for (the SONAME), with symlinks followed.
set(_xfer_bundle "")
get_target_property(_po Boost::program_options IMPORTED_LOCATION_RELEASE)
if(NOT _po)
  get_target_property(_po Boost::program_options IMPORTED_LOCATION)
endif()
if(_po)
  get_filename_component(_po "${_po}" REALPATH)
  get_filename_component(_po_name "${_po}" NAME)   # libboost_program_options.so.1.74.0 = SONAME
  list(APPEND _xfer_bundle "${_po}|${_po_name}")
endif()
if(XFER_HAVE_CUDA AND EXISTS "${CUDAToolkit_LIBRARY_DIR}/libcudart.so.${CUDAToolkit_VERSION_MAJOR}")
  list(APPEND _xfer_bundle "${CUDAToolkit_LIBRARY_DIR}/libcudart.so.${CUDAToolkit_VERSION_MAJOR}|libcudart.so.${CUDAToolkit_VERSION_MAJOR}")
endif()
# CUPTI, for the test that checks the path statistics against the copies CUPTI saw (build tree
# only: nothing installed links it).
set(_xfer_bundle_build_only "")
if(XFER_HAVE_CUDA AND TARGET CUDA::cupti)
  get_target_property(_cupti CUDA::cupti IMPORTED_LOCATION)
  if(_cupti)
    get_filename_component(_cupti "${_cupti}" REALPATH)
    list(APPEND _xfer_bundle_build_only "${_cupti}|libcupti.so.${CUDAToolkit_VERSION_MAJOR}")
  endif()
endif()
foreach(entry ${_xfer_bundle} ${_xfer_bundle_build_only})
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 src)
  list(GET parts 1 name)
  configure_file("${src}" "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/${name}" COPYONLY)
  message(STATUS "xfer: bundled ${name} into ${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")
endforeach()
# An install made from such a build carries the same libraries in lib/ (plugins and the tool's
# kernels find them through RUNPATH $ORIGIN/..).
foreach(entry ${_xfer_bundle})
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 1 name)
  install(FILES "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/${name}" DESTINATION "${CMAKE_INSTALL_LIBDIR}")
endforeach()
