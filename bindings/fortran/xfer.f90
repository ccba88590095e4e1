! SPDX-License-Identifier: Apache-2.0
!
! xfer -- Fortran module over the C API in <xfer/xfer.h>, through iso_c_binding.
!
! Every C function is bound under its own name with kinds that match C exactly:
!   size_t -> integer(c_size_t), int and enums and statuses -> integer(c_int), unsigned flags ->
!   integer(c_int) (same size; the values are small), handles and pointers -> type(c_ptr),
!   const char * -> type(c_ptr) (see xfer_f_string), float -> real(c_float), callbacks ->
!   type(c_funptr). Output handles and counts are passed by reference (no `value`).
! Every enum value and flag of xfer.h is a named integer(c_int) constant of the same name.
! Helpers for Fortran programs (not in C): xfer_open_name (backend as a Fortran string),
! xfer_host_view (the host view as a Fortran array pointer of any rank), xfer_copy_to_device /
! xfer_copy_to_host (a whole array of any rank and of the common kinds to a buffer's device view
! and back) and xfer_memcpy_to_device / xfer_memcpy_to_host (the same with a raw device pointer),
! xfer_f_string, xfer_status_name and xfer_error_message / xfer_get_error_message (C strings as
! Fortran strings; the message also covers the helpers' own refusals), xfer_register_array and
! xfer_unregister_array (register an existing Fortran array of any type and rank),
! xfer_get_stats (xfer_context_get_stats with struct_size set), xfer_get_calibration
! (xfer_calibrate with struct_size set), xfer_path_name and xfer_reason_name (the names of
! XFER_PATH_* and XFER_REASON_* values). Each helper
! returns an xfer_status like the C calls; when it fails, xfer_error_message() says why.
!
! Semantics, units, statuses and thread-safety of each function are those written in xfer.h.
! To bind a new xfer.h function: add one interface block below (check_coverage.py fails CI
! until you do).
module xfer
  use, intrinsic :: iso_c_binding
  implicit none
  private :: view_c_int8, view_c_int16, view_c_int, view_c_int64, view_c_float, view_c_double, &
             view_c_float_complex, view_c_double_complex
  private :: copy_to_device_int8, copy_to_device_int16, copy_to_device_int32, copy_to_device_int64, &
             copy_to_device_float, copy_to_device_double, copy_to_device_float_complex, &
             copy_to_device_double_complex
  private :: copy_to_host_int8, copy_to_host_int16, copy_to_host_int32, copy_to_host_int64, &
             copy_to_host_float, copy_to_host_double, copy_to_host_float_complex, copy_to_host_double_complex
  private :: memcpy_to_device_int8, memcpy_to_device_int16, memcpy_to_device_int32, memcpy_to_device_int64, &
             memcpy_to_device_float, memcpy_to_device_double, memcpy_to_device_float_complex, &
             memcpy_to_device_double_complex
  private :: memcpy_to_host_int8, memcpy_to_host_int16, memcpy_to_host_int32, memcpy_to_host_int64, &
             memcpy_to_host_float, memcpy_to_host_double, memcpy_to_host_float_complex, &
             memcpy_to_host_double_complex
  private :: array_address, get_c_string, note_failure, from_library, decimal, shape_text, view_bytes, whole_array, &
             copy_whole_array, memcpy_whole_array
  private :: message_capacity, noted_message, noted_length, library_message_then, library_length_then

  ! ------------------------------------------------------------------ constants (xfer.h)
  integer(c_int), parameter :: XFER_VERSION_MAJOR = 1
  integer(c_int), parameter :: XFER_VERSION_MINOR = 0
  integer(c_int), parameter :: XFER_VERSION_PATCH = 0

  ! enum xfer_status
  integer(c_int), parameter :: XFER_SUCCESS = 0
  integer(c_int), parameter :: XFER_ERROR_INVALID_ARGUMENT = 1
  integer(c_int), parameter :: XFER_ERROR_INVALID_HANDLE = 2
  integer(c_int), parameter :: XFER_ERROR_INVALID_SIZE = 3
  integer(c_int), parameter :: XFER_ERROR_OUT_OF_BOUNDS = 4
  integer(c_int), parameter :: XFER_ERROR_OUT_OF_MEMORY = 5
  integer(c_int), parameter :: XFER_ERROR_NOT_READY = 6
  integer(c_int), parameter :: XFER_ERROR_NOT_SUPPORTED = 7
  integer(c_int), parameter :: XFER_ERROR_NO_DEVICE = 8
  integer(c_int), parameter :: XFER_ERROR_BACKEND_NOT_FOUND = 9
  integer(c_int), parameter :: XFER_ERROR_BACKEND_UNAVAILABLE = 10
  integer(c_int), parameter :: XFER_ERROR_BACKEND_ABI = 11
  integer(c_int), parameter :: XFER_ERROR_CONFIG = 12
  integer(c_int), parameter :: XFER_ERROR_BACKEND = 13
  integer(c_int), parameter :: XFER_ERROR_INVALID_STATE = 14
  integer(c_int), parameter :: XFER_ERROR_INTERNAL = 15
  integer(c_int), parameter :: XFER_ERROR_SLOW_PATH = 16

  ! enum xfer_direction
  integer(c_int), parameter :: XFER_TO_DEVICE = 1
  integer(c_int), parameter :: XFER_TO_HOST = 2

  ! enum xfer_copy_kind
  integer(c_int), parameter :: XFER_COPY_HOST_TO_HOST = 0
  integer(c_int), parameter :: XFER_COPY_HOST_TO_DEVICE = 1
  integer(c_int), parameter :: XFER_COPY_DEVICE_TO_HOST = 2
  integer(c_int), parameter :: XFER_COPY_DEVICE_TO_DEVICE = 3
  integer(c_int), parameter :: XFER_COPY_DEFAULT = 4

  ! enum xfer_device_kind
  integer(c_int), parameter :: XFER_DEVICE_KIND_HOST = 0
  integer(c_int), parameter :: XFER_DEVICE_KIND_CUDA = 1

  ! enum xfer_param_source
  integer(c_int), parameter :: XFER_PARAM_DEFAULT = 0
  integer(c_int), parameter :: XFER_PARAM_FILE = 1
  integer(c_int), parameter :: XFER_PARAM_ENV = 2
  integer(c_int), parameter :: XFER_PARAM_CALIBRATION = 3

  ! enum xfer_copy_path (which path a copy took)
  integer(c_int), parameter :: XFER_PATH_UNREPORTED = 0
  integer(c_int), parameter :: XFER_PATH_HOST_MEMCPY = 1
  integer(c_int), parameter :: XFER_PATH_PINNED_DMA = 2
  integer(c_int), parameter :: XFER_PATH_CACHED_REGISTRATION = 3
  integer(c_int), parameter :: XFER_PATH_NEW_REGISTRATION = 4
  integer(c_int), parameter :: XFER_PATH_DRIVER_PAGEABLE = 5
  integer(c_int), parameter :: XFER_PATH_STAGED = 6
  integer(c_int), parameter :: XFER_PATH_STAGED_SYNC = 7
  integer(c_int), parameter :: XFER_PATH_PACKED = 8
  integer(c_int), parameter :: XFER_PATH_DEVICE_COPY = 9
  integer(c_int), parameter :: XFER_PATH_PEER = 10
  integer(c_int), parameter :: XFER_PATH_MANAGED_MIGRATE = 11
  integer(c_int), parameter :: XFER_PATH_MANAGED_STAGED = 12
  integer(c_int), parameter :: XFER_PATH_MANAGED_COPY = 13
  integer(c_int), parameter :: XFER_PATH_MAPPED = 14
  integer(c_int), parameter :: XFER_PATH_COUNT = 15

  ! enum xfer_path_reason
  integer(c_int), parameter :: XFER_REASON_MEMORY = 0
  integer(c_int), parameter :: XFER_REASON_BELOW_CROSSOVER = 1
  integer(c_int), parameter :: XFER_REASON_NO_FASTER_PATH = 2
  integer(c_int), parameter :: XFER_REASON_FIRST_USE = 3
  integer(c_int), parameter :: XFER_REASON_CACHE_HIT = 4
  integer(c_int), parameter :: XFER_REASON_CACHE_FULL = 5
  integer(c_int), parameter :: XFER_REASON_REGISTRATION_FAILED = 6
  integer(c_int), parameter :: XFER_REASON_CONFIGURED = 7
  integer(c_int), parameter :: XFER_REASON_SPLIT = 8
  integer(c_int), parameter :: XFER_REASON_ONE_OFF = 9
  integer(c_int), parameter :: XFER_REASON_REUSE = 10
  integer(c_int), parameter :: XFER_REASON_MEASURED_FASTEST = 11
  integer(c_int), parameter :: XFER_REASON_COUNT = 12

  ! enum xfer_slow_path
  integer(c_int), parameter :: XFER_SLOW_PATH_ALLOW = 0
  integer(c_int), parameter :: XFER_SLOW_PATH_WARN = 1
  integer(c_int), parameter :: XFER_SLOW_PATH_REFUSE = 2
  integer(c_int64_t), parameter :: XFER_SLOW_PATH_MIN_BYTES = 1048576
  integer(c_int), parameter :: XFER_CONTEXT_STATS_VERSION = 1

  ! flags (unsigned in C)
  integer(c_int), parameter :: XFER_ALLOC_DEFAULT = 0
  integer(c_int), parameter :: XFER_ALLOC_READ_MOSTLY = 1
  integer(c_int), parameter :: XFER_ALLOC_PREFER_DEVICE = 2
  integer(c_int), parameter :: XFER_ALLOC_PREFER_HOST = 4
  integer(c_int), parameter :: XFER_ALLOC_SHAREABLE = 8
  integer(c_int), parameter :: XFER_SHARE_HANDLE_MEMFD = 1
  integer(c_int), parameter :: XFER_SHARE_HANDLE_POSIX_FD = 2
  integer(c_int), parameter :: XFER_SHARE_HANDLE_FABRIC = 4
  integer(c_int), parameter :: XFER_EVENT_DEFAULT = 0
  integer(c_int), parameter :: XFER_EVENT_DISABLE_TIMING = 1
  integer(c_int), parameter :: XFER_CAP_SHARED_VIEW = 1
  integer(c_int), parameter :: XFER_CAP_ASYNC_COPY = 2
  integer(c_int), parameter :: XFER_CAP_NO_COPY = 4
  integer(c_int), parameter :: XFER_CAP_MIGRATES = 8
  integer(c_int), parameter :: XFER_REGISTER_DEFAULT = 0
  integer(c_int), parameter :: XFER_REGISTER_READ_ONLY = 1
  integer(c_int), parameter :: XFER_CALIBRATE_FORCE = 1

  ! sharing buffers with other processes and libraries
  integer(c_int), parameter :: XFER_EXPORT_VERSION = 1
  integer(c_int), parameter :: XFER_EXPORT_MAX_FDS = 4
  integer(c_int), parameter :: XFER_EXPORT_BLOB_BYTES = 256
  ! enum xfer_memory_event_kind
  integer(c_int), parameter :: XFER_MEMORY_ALLOCATED = 1
  integer(c_int), parameter :: XFER_MEMORY_RELEASING = 2
  integer(c_int), parameter :: XFER_MEMORY_REGISTERED = 3
  integer(c_int), parameter :: XFER_MEMORY_UNREGISTERING = 4

  ! ------------------------------------------------------------------ structs (xfer.h)
  type, bind(c) :: xfer_backend_info
    type(c_ptr) :: name, description, path
    integer(c_int) :: available
    type(c_ptr) :: reason
    integer(c_int) :: device_count
    integer(c_int) :: device_kind
    integer(c_int) :: abi_major, abi_minor   ! unsigned in C
  end type

  type, bind(c) :: xfer_device_info
    character(kind=c_char) :: name(256)
    integer(c_int) :: ordinal
    integer(c_int) :: kind
    integer(c_int64_t) :: total_memory, free_memory   ! uint64_t in C
    integer(c_int) :: compute_major, compute_minor, multiprocessors, pcie_generation, pcie_width
    character(kind=c_char) :: pci_bus_id(32)
    integer(c_int) :: async_engine_count, concurrent_managed_access, can_map_host_memory, &
                      unified_addressing, driver_version, runtime_version
  end type

  type, bind(c) :: xfer_context_info
    type(c_ptr) :: backend
    integer(c_int) :: device
    integer(c_int) :: device_kind
    integer(c_int) :: caps   ! unsigned in C
  end type

  type, bind(c) :: xfer_param_info
    type(c_ptr) :: section, name, env, type, value, default_value, help
    integer(c_int) :: source
  end type

  !> What xfer_calibrate did: set struct_size = c_sizeof(info) first (xfer_get_calibration does).
  !> file and json are C strings (xfer_f_string), valid until this thread's next xfer_calibrate.
  type, bind(c) :: xfer_calibration_info
    integer(c_size_t) :: struct_size
    integer(c_int) :: measured
    real(c_double) :: seconds
    type(c_ptr) :: file, json
  end type

  type, bind(c) :: xfer_registration_stats   ! every field uint64_t in C
    integer(c_int64_t) :: registered_ranges, registered_bytes
    integer(c_int64_t) :: cache_hits, cache_misses, cache_evictions
    integer(c_int64_t) :: cache_ranges, cache_bytes, cache_limit_bytes
  end type

  type, bind(c) :: xfer_path_stats   ! every field uint64_t in C
    integer(c_int64_t) :: copies, bytes, host_ns
  end type

  !> Set struct_size = c_sizeof(stats) before xfer_context_get_stats (xfer_get_stats does).
  type, bind(c) :: xfer_context_stats
    integer(c_size_t) :: struct_size
    integer(c_int32_t) :: version, path_count   ! uint32_t in C
    integer(c_int64_t) :: calls, slow_copies, refused_calls   ! uint64_t in C, as the rest
    integer(c_int64_t) :: registrations, registered_bytes, registration_ns
    integer(c_int64_t) :: unregistrations, unregistered_bytes, unregistration_ns
    type(xfer_path_stats) :: paths(0:XFER_PATH_COUNT - 1)   ! indexed by XFER_PATH_*
  end type

  !> A buffer's export (xfer_buffer_export): set struct_size = c_sizeof(exp) before filling it.
  type, bind(c) :: xfer_export
    integer(c_size_t) :: struct_size
    integer(c_int32_t) :: version, fd_count   ! uint32_t in C
    integer(c_int) :: fds(XFER_EXPORT_MAX_FDS)
    integer(c_int32_t) :: blob_bytes   ! uint32_t in C
    integer(c_int8_t) :: blob(XFER_EXPORT_BLOB_BYTES)   ! unsigned char in C
  end type

  !> What a buffer's memory is (xfer_buffer_get_share_info): set struct_size = c_sizeof(info).
  !> The kinds are static C strings (c_f_pointer them to read).
  type, bind(c) :: xfer_share_info
    integer(c_size_t) :: struct_size
    integer(c_int) :: handle_types   ! unsigned in C
    integer(c_int) :: rdma_capable
    integer(c_size_t) :: granularity, device_view_bytes
    type(c_ptr) :: host_memory_kind, device_memory_kind
    integer(c_int) :: host_dlpack_device_type, host_dlpack_device_id
    integer(c_int) :: device_dlpack_device_type, device_dlpack_device_id
  end type

  !> What a memory observer (xfer_set_memory_observer) receives, by reference.
  type, bind(c) :: xfer_memory_event
    integer(c_size_t) :: struct_size
    type(c_ptr) :: ctx
    integer(c_int) :: event
    type(c_ptr) :: buffer, host_ptr, device_ptr
    integer(c_size_t) :: bytes
    integer(c_int) :: imported
  end type

  !> What a copy observer (xfer_set_copy_observer) receives, by reference.
  type, bind(c) :: xfer_copy_record
    integer(c_size_t) :: struct_size
    type(c_ptr) :: ctx, stream, function   ! function: a C string (xfer_f_string)
    integer(c_int) :: path, reason, kind, slow
    integer(c_int64_t) :: copies, bytes, host_ns, call_bytes   ! uint64_t in C
  end type

  ! ------------------------------------------------------------------ functions (xfer.h)
  interface
    integer(c_int) function xfer_get_version(major, minor, patch) bind(c, name="xfer_get_version")
      import :: c_int
      integer(c_int), intent(out) :: major, minor, patch
    end function
    type(c_ptr) function xfer_status_string(st) bind(c, name="xfer_status_string")
      import :: c_ptr, c_int
      integer(c_int), value :: st
    end function
    type(c_ptr) function xfer_last_error() bind(c, name="xfer_last_error")
      import :: c_ptr
    end function
    integer(c_int) function xfer_backend_count(count) bind(c, name="xfer_backend_count")
      import :: c_int
      integer(c_int), intent(out) :: count
    end function
    integer(c_int) function xfer_backend_get_info(index, info) bind(c, name="xfer_backend_get_info")
      import :: c_int, xfer_backend_info
      integer(c_int), value :: index
      type(xfer_backend_info), intent(out) :: info
    end function
    integer(c_int) function xfer_param_count(count) bind(c, name="xfer_param_count")
      import :: c_int
      integer(c_int), intent(out) :: count
    end function
    integer(c_int) function xfer_param_get_info(index, info) bind(c, name="xfer_param_get_info")
      import :: c_int, xfer_param_info
      integer(c_int), value :: index
      type(xfer_param_info), intent(out) :: info
    end function
    ! backend: a NUL-terminated C string or c_null_ptr (see xfer_open_name for Fortran strings)
    integer(c_int) function xfer_open(backend, device, ctx) bind(c, name="xfer_open")
      import :: c_int, c_ptr
      type(c_ptr), value :: backend
      integer(c_int), value :: device
      type(c_ptr), intent(out) :: ctx
    end function
    integer(c_int) function xfer_close(ctx) bind(c, name="xfer_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
    end function
    integer(c_int) function xfer_context_get_info(ctx, info) bind(c, name="xfer_context_get_info")
      import :: c_int, c_ptr, xfer_context_info
      type(c_ptr), value :: ctx
      type(xfer_context_info), intent(out) :: info
    end function
    integer(c_int) function xfer_device_get_info(ctx, info) bind(c, name="xfer_device_get_info")
      import :: c_int, c_ptr, xfer_device_info
      type(c_ptr), value :: ctx
      type(xfer_device_info), intent(out) :: info
    end function
    integer(c_int) function xfer_calibrate(ctx, flags, info) bind(c, name="xfer_calibrate")
      import :: c_int, c_ptr, xfer_calibration_info
      type(c_ptr), value :: ctx
      integer(c_int), value :: flags
      type(xfer_calibration_info), intent(inout) :: info   ! struct_size in, the rest out
    end function
    integer(c_int) function xfer_context_setting_count(ctx, count) bind(c, name="xfer_context_setting_count")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), intent(out) :: count
    end function
    !> index: 0 <= index < xfer_context_setting_count (C numbering); derived may be left out (NULL).
    integer(c_int) function xfer_context_get_setting(ctx, index, info, derived) bind(c, name="xfer_context_get_setting")
      import :: c_int, c_ptr, xfer_param_info
      type(c_ptr), value :: ctx
      integer(c_int), value :: index
      type(xfer_param_info), intent(out) :: info
      integer(c_int), intent(out), optional :: derived
    end function
    integer(c_int) function xfer_alloc(ctx, bytes, flags, buf) bind(c, name="xfer_alloc")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: ctx
      integer(c_size_t), value :: bytes
      integer(c_int), value :: flags
      type(c_ptr), intent(out) :: buf
    end function
    integer(c_int) function xfer_free(buf) bind(c, name="xfer_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: buf
    end function
    type(c_ptr) function xfer_host_ptr(buf) bind(c, name="xfer_host_ptr")
      import :: c_ptr
      type(c_ptr), value :: buf
    end function
    type(c_ptr) function xfer_device_ptr(buf) bind(c, name="xfer_device_ptr")
      import :: c_ptr
      type(c_ptr), value :: buf
    end function
    integer(c_size_t) function xfer_buffer_size(buf) bind(c, name="xfer_buffer_size")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: buf
    end function
    integer(c_int) function xfer_copy_async(buf, dir, offset, bytes, s) bind(c, name="xfer_copy_async")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: buf
      integer(c_int), value :: dir
      integer(c_size_t), value :: offset, bytes
      type(c_ptr), value :: s
    end function
    integer(c_int) function xfer_copy(buf, dir, offset, bytes) bind(c, name="xfer_copy")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: buf
      integer(c_int), value :: dir
      integer(c_size_t), value :: offset, bytes
    end function
    integer(c_int) function xfer_memcpy_async(ctx, dst, src, bytes, kind, s) bind(c, name="xfer_memcpy_async")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: ctx, dst, src
      integer(c_size_t), value :: bytes
      integer(c_int), value :: kind
      type(c_ptr), value :: s
    end function
    integer(c_int) function xfer_memcpy_batch_async(ctx, dsts, srcs, sizes, count, kind, s) &
        bind(c, name="xfer_memcpy_batch_async")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: ctx
      type(c_ptr), intent(in) :: dsts(*), srcs(*)
      integer(c_size_t), intent(in) :: sizes(*)
      integer(c_size_t), value :: count
      integer(c_int), value :: kind
      type(c_ptr), value :: s
    end function
    ! ptr: c_loc of memory the program owns (see xfer_register_array for Fortran arrays)
    integer(c_int) function xfer_register(ctx, ptr, bytes, flags) bind(c, name="xfer_register")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: ctx, ptr
      integer(c_size_t), value :: bytes
      integer(c_int), value :: flags
    end function
    integer(c_int) function xfer_unregister(ctx, ptr) bind(c, name="xfer_unregister")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx, ptr
    end function
    integer(c_int) function xfer_registration_get_stats(ctx, stats) bind(c, name="xfer_registration_get_stats")
      import :: c_int, c_ptr, xfer_registration_stats
      type(c_ptr), value :: ctx
      type(xfer_registration_stats), intent(out) :: stats
    end function
    integer(c_int) function xfer_stream_create(ctx, s) bind(c, name="xfer_stream_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr), intent(out) :: s
    end function
    integer(c_int) function xfer_stream_destroy(s) bind(c, name="xfer_stream_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: s
    end function
    integer(c_int) function xfer_stream_synchronize(s) bind(c, name="xfer_stream_synchronize")
      import :: c_int, c_ptr
      type(c_ptr), value :: s
    end function
    integer(c_int) function xfer_stream_query(s) bind(c, name="xfer_stream_query")
      import :: c_int, c_ptr
      type(c_ptr), value :: s
    end function
    integer(c_int) function xfer_stream_wait_event(s, e) bind(c, name="xfer_stream_wait_event")
      import :: c_int, c_ptr
      type(c_ptr), value :: s, e
    end function
    ! fn: c_funloc of a bind(c) subroutine taking (type(c_ptr), value :: user_data)
    integer(c_int) function xfer_stream_launch_host_func(s, fn, user_data) bind(c, name="xfer_stream_launch_host_func")
      import :: c_int, c_ptr, c_funptr
      type(c_ptr), value :: s
      type(c_funptr), value :: fn
      type(c_ptr), value :: user_data
    end function
    type(c_ptr) function xfer_stream_native(s) bind(c, name="xfer_stream_native")
      import :: c_ptr
      type(c_ptr), value :: s
    end function
    ! native: a cudaStream_t the program owns (CUDA backends); the wrapper never destroys it
    integer(c_int) function xfer_stream_wrap(ctx, native, s) bind(c, name="xfer_stream_wrap")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr), value :: native
      type(c_ptr), intent(out) :: s
    end function
    type(c_ptr) function xfer_event_native(e) bind(c, name="xfer_event_native")
      import :: c_ptr
      type(c_ptr), value :: e
    end function
    integer(c_int) function xfer_event_create(ctx, flags, e) bind(c, name="xfer_event_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: flags
      type(c_ptr), intent(out) :: e
    end function
    integer(c_int) function xfer_event_destroy(e) bind(c, name="xfer_event_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: e
    end function
    integer(c_int) function xfer_event_record(e, s) bind(c, name="xfer_event_record")
      import :: c_int, c_ptr
      type(c_ptr), value :: e, s
    end function
    integer(c_int) function xfer_event_synchronize(e) bind(c, name="xfer_event_synchronize")
      import :: c_int, c_ptr
      type(c_ptr), value :: e
    end function
    integer(c_int) function xfer_event_query(e) bind(c, name="xfer_event_query")
      import :: c_int, c_ptr
      type(c_ptr), value :: e
    end function
    integer(c_int) function xfer_event_elapsed_ms(start, end, ms) bind(c, name="xfer_event_elapsed_ms")
      import :: c_int, c_ptr, c_float
      type(c_ptr), value :: start, end
      real(c_float), intent(out) :: ms
    end function
    type(c_ptr) function xfer_copy_path_name(path) bind(c, name="xfer_copy_path_name")
      import :: c_ptr, c_int
      integer(c_int), value :: path
    end function
    type(c_ptr) function xfer_path_reason_name(reason) bind(c, name="xfer_path_reason_name")
      import :: c_ptr, c_int
      integer(c_int), value :: reason
    end function
    integer(c_int) function xfer_path_is_slow(path, reason, bytes) bind(c, name="xfer_path_is_slow")
      import :: c_int, c_int64_t
      integer(c_int), value :: path, reason
      integer(c_int64_t), value :: bytes   ! uint64_t in C
    end function
    integer(c_int) function xfer_context_get_stats(ctx, stats) bind(c, name="xfer_context_get_stats")
      import :: c_int, c_ptr, xfer_context_stats
      type(c_ptr), value :: ctx
      type(xfer_context_stats), intent(inout) :: stats   ! struct_size in, the rest out
    end function
    integer(c_int) function xfer_context_reset_stats(ctx) bind(c, name="xfer_context_reset_stats")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
    end function
    !> fn: c_funloc of a `subroutine f(record, user_data) bind(c)` with `type(xfer_copy_record),
    !> intent(in) :: record` and `type(c_ptr), value :: user_data`; c_null_funptr removes it.
    integer(c_int) function xfer_set_copy_observer(ctx, fn, user_data) bind(c, name="xfer_set_copy_observer")
      import :: c_int, c_ptr, c_funptr
      type(c_ptr), value :: ctx
      type(c_funptr), value :: fn
      type(c_ptr), value :: user_data
    end function
    integer(c_int) function xfer_context_set_slow_path(ctx, policy) bind(c, name="xfer_context_set_slow_path")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), value :: policy
    end function
    integer(c_int) function xfer_context_get_slow_path(ctx, policy) bind(c, name="xfer_context_get_slow_path")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int), intent(out) :: policy
    end function
    integer(c_int) function xfer_memcpy_peer_async(dst_ctx, dst, src_ctx, src, bytes, s) &
        bind(c, name="xfer_memcpy_peer_async")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: dst_ctx, dst, src_ctx, src
      integer(c_size_t), value :: bytes
      type(c_ptr), value :: s
    end function
    integer(c_int) function xfer_copy_peer_async(dst, dst_offset, src, src_offset, bytes, s) &
        bind(c, name="xfer_copy_peer_async")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dst_offset
      type(c_ptr), value :: src
      integer(c_size_t), value :: src_offset, bytes
      type(c_ptr), value :: s
    end function
    integer(c_int) function xfer_device_can_access_peer(ctx, peer, can_access) bind(c, name="xfer_device_can_access_peer")
      import :: c_int, c_ptr
      type(c_ptr), value :: ctx, peer
      integer(c_int), intent(out) :: can_access
    end function
    integer(c_int) function xfer_buffer_export(buf, out) bind(c, name="xfer_buffer_export")
      import :: c_int, c_ptr, xfer_export
      type(c_ptr), value :: buf
      type(xfer_export), intent(inout) :: out   ! struct_size in, the rest out
    end function
    integer(c_int) function xfer_buffer_get_share_info(buf, info) bind(c, name="xfer_buffer_get_share_info")
      import :: c_int, c_ptr, xfer_share_info
      type(c_ptr), value :: buf
      type(xfer_share_info), intent(inout) :: info   ! struct_size in, the rest out
    end function
    integer(c_int) function xfer_buffer_import(ctx, in, out) bind(c, name="xfer_buffer_import")
      import :: c_int, c_ptr, xfer_export
      type(c_ptr), value :: ctx
      type(xfer_export), intent(in) :: in
      type(c_ptr), intent(out) :: out
    end function
    integer(c_int) function xfer_export_send(socket, in) bind(c, name="xfer_export_send")
      import :: c_int, xfer_export
      integer(c_int), value :: socket
      type(xfer_export), intent(in) :: in
    end function
    integer(c_int) function xfer_export_receive(socket, out) bind(c, name="xfer_export_receive")
      import :: c_int, xfer_export
      integer(c_int), value :: socket
      type(xfer_export), intent(inout) :: out   ! struct_size in, the rest out
    end function
    subroutine xfer_export_close(exp) bind(c, name="xfer_export_close")
      import :: xfer_export
      type(xfer_export), intent(inout) :: exp
    end subroutine
    integer(c_int) function xfer_set_memory_observer(ctx, fn, user_data) bind(c, name="xfer_set_memory_observer")
      import :: c_int, c_ptr, c_funptr
      type(c_ptr), value :: ctx
      type(c_funptr), value :: fn   ! c_funloc of a bind(c) subroutine(event, user_data); c_null_funptr removes it
      type(c_ptr), value :: user_data
    end function
  end interface

  ! ------------------------------------------------------------------ helpers
  !> st = xfer_host_view(buf, a, shape): points the array pointer `a` (rank 0..7, one of the
  !> kinds xfer_copy_to_device takes) at the buffer's host view with the given shape, through
  !> c_f_pointer. Returns XFER_ERROR_INVALID_ARGUMENT (size(shape) /= rank(a)),
  !> XFER_ERROR_INVALID_SIZE (a negative extent), XFER_ERROR_INVALID_HANDLE (buf invalid),
  !> XFER_ERROR_OUT_OF_BOUNDS (the shape needs more bytes than the buffer has); `a` is then left
  !> as it was, and xfer_error_message() says what was wrong with this call. `a` is valid until
  !> xfer_free(buf). Thread-safe.
  interface xfer_host_view
    module procedure view_c_int8, view_c_int16, view_c_int, view_c_int64, view_c_float, view_c_double, &
                     view_c_float_complex, view_c_double_complex
  end interface

  !> st = xfer_copy_to_device(ctx, buf, a, s [, offset]): copies the whole array `a` into the
  !> device view of buffer `buf`, at byte `offset` (default 0), on stream `s` of context `ctx`
  !> (the buffer's), after the work queued on `s` before, and waits for the copy
  !> (xfer_memcpy_async, then xfer_stream_synchronize): on return `a` may be changed or
  !> deallocated, and the device view holds it. The host view is not touched.
  !> st = xfer_copy_to_host(ctx, a, buf, s [, offset]): the other way: the device view's bytes
  !> from `offset` into the whole of `a`, which holds them on return.
  !> a: any rank (a scalar too), any of integer(c_int8_t), integer(c_int16_t), integer(c_int32_t),
  !>   integer(c_int64_t), real(c_float), real(c_double), complex(c_float_complex),
  !>   complex(c_double_complex); size(a) * storage_size(a) / 8 bytes move. It must be contiguous:
  !>   a strided section or a pointer to one is refused, never copied through a temporary.
  !> Returns XFER_ERROR_INVALID_ARGUMENT (`a` not contiguous), XFER_ERROR_INVALID_SIZE (`a` empty,
  !> or of unknown size), XFER_ERROR_INVALID_HANDLE (buf invalid; from the library: ctx or s
  !> invalid, or s of another context), XFER_ERROR_OUT_OF_BOUNDS (offset negative, or the array
  !> runs past the end of the buffer: nothing is read or written), and the statuses of
  !> xfer_memcpy_async and xfer_stream_synchronize. A refused call (any status but
  !> XFER_ERROR_BACKEND) copies nothing; xfer_error_message() says what was wrong with it.
  !> Thread-safe (as the C calls; `a` and the buffer's range must not be used by another thread
  !> meanwhile).
  interface xfer_copy_to_device
    module procedure copy_to_device_int8, copy_to_device_int16, copy_to_device_int32, copy_to_device_int64, &
                     copy_to_device_float, copy_to_device_double, copy_to_device_float_complex, &
                     copy_to_device_double_complex
  end interface
  interface xfer_copy_to_host
    module procedure copy_to_host_int8, copy_to_host_int16, copy_to_host_int32, copy_to_host_int64, &
                     copy_to_host_float, copy_to_host_double, copy_to_host_float_complex, &
                     copy_to_host_double_complex
  end interface

  !> st = xfer_memcpy_to_device(ctx, dst, a, s): copies the whole array `a` to device memory at
  !> `dst` (a device pointer of ctx's device: xfer_device_ptr of a buffer, or memory the program
  !> allocated itself) on stream `s` of `ctx`, after the work queued on `s` before, and waits
  !> for it (xfer_memcpy_async with XFER_COPY_HOST_TO_DEVICE, then xfer_stream_synchronize).
  !> st = xfer_memcpy_to_host(ctx, a, src, s): device memory at `src` into the whole of `a`.
  !> The device memory must hold size(a) * storage_size(a) / 8 bytes: xfer knows no size for a
  !> raw pointer (xfer_copy_to_device checks a buffer's). Kinds, ranks, contiguity, errors and
  !> thread-safety as xfer_copy_to_device (no XFER_ERROR_OUT_OF_BOUNDS; a NULL pointer is the
  !> library's XFER_ERROR_INVALID_ARGUMENT).
  interface xfer_memcpy_to_device
    module procedure memcpy_to_device_int8, memcpy_to_device_int16, memcpy_to_device_int32, &
                     memcpy_to_device_int64, memcpy_to_device_float, memcpy_to_device_double, &
                     memcpy_to_device_float_complex, memcpy_to_device_double_complex
  end interface
  interface xfer_memcpy_to_host
    module procedure memcpy_to_host_int8, memcpy_to_host_int16, memcpy_to_host_int32, memcpy_to_host_int64, &
                     memcpy_to_host_float, memcpy_to_host_double, memcpy_to_host_float_complex, &
                     memcpy_to_host_double_complex
  end interface

  ! The latest failure that a helper found itself (a shape that does not fit, an array that is
  ! not contiguous), for xfer_error_message: no C call failed, so xfer_last_error() still holds
  ! an older message. It stays the latest until the library's message changes (the library
  ! failed since). Fixed-length: setting it never allocates. Per thread where the module is
  ! compiled with OpenMP (thread-local storage; the CMake build does so for gfortran, which
  ! needs no OpenMP run time for it); without, the threads of a program share it.
  integer, parameter :: message_capacity = 1024
  character(len=message_capacity) :: noted_message = ""
  integer :: noted_length = -1                               ! -1: no note
  character(len=message_capacity) :: library_message_then = "" ! xfer_last_error() when noted
  integer :: library_length_then = 0
  !$omp threadprivate(noted_message, noted_length, library_message_then, library_length_then)

contains

  !> A C string (const char *) as a Fortran string; "" for c_null_ptr.
  function xfer_f_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    call get_c_string(p, s)
  end function

  !> "XFER_ERROR_OUT_OF_BOUNDS" for a status (xfer_status_string).
  function xfer_status_name(st) result(s)
    integer(c_int), intent(in) :: st
    character(len=:), allocatable :: s
    call get_c_string(xfer_status_string(st), s)
  end function

  !> "host_memcpy", "pinned_dma", ... for an XFER_PATH_* value (xfer_copy_path_name).
  function xfer_path_name(path) result(s)
    integer(c_int), intent(in) :: path
    character(len=:), allocatable :: s
    call get_c_string(xfer_copy_path_name(path), s)
  end function

  !> "below_crossover", "cache_full", ... for an XFER_REASON_* value (xfer_path_reason_name).
  function xfer_reason_name(reason) result(s)
    integer(c_int), intent(in) :: reason
    character(len=:), allocatable :: s
    call get_c_string(xfer_path_reason_name(reason), s)
  end function

  !> st = xfer_get_stats(ctx, stats): xfer_context_get_stats with stats%struct_size set first.
  integer(c_int) function xfer_get_stats(ctx, stats) result(st)
    type(c_ptr), intent(in) :: ctx
    type(xfer_context_stats), intent(out) :: stats
    stats%struct_size = c_sizeof(stats)
    st = xfer_context_get_stats(ctx, stats)
  end function

  !> st = xfer_get_calibration(ctx, info [, flags]): xfer_calibrate with info%struct_size set
  !> first; flags: XFER_CALIBRATE_* (default 0: a kept calibration that still holds is read).
  !> XFER_ERROR_NOT_SUPPORTED on host (nothing to calibrate); xfer_error_message() says why.
  integer(c_int) function xfer_get_calibration(ctx, info, flags) result(st)
    type(c_ptr), intent(in) :: ctx
    type(xfer_calibration_info), intent(out) :: info
    integer(c_int), intent(in), optional :: flags
    integer(c_int) :: f
    f = 0
    if (present(flags)) f = flags
    info%struct_size = c_sizeof(info)
    info%measured = 0
    info%seconds = 0
    info%file = c_null_ptr
    info%json = c_null_ptr
    st = from_library(xfer_calibrate(ctx, f, info))
  end function

  !> What the calling thread's latest failure was: that of a library call (xfer_last_error), or
  !> of one of this module's helpers (xfer_host_view, xfer_copy_to_device, ...) that refused
  !> its arguments itself, whichever came later; "" when nothing failed yet. A successful call
  !> leaves it as it was (as xfer_last_error). Thread-safe where the module is compiled with
  !> OpenMP (see noted_message); from threads, prefer xfer_get_error_message.
  function xfer_error_message() result(s)
    character(len=:), allocatable :: s
    call xfer_get_error_message(s)
  end function

  !> call xfer_get_error_message(message): xfer_error_message() as a subroutine. gfortran (12
  !> at least) keeps the length of a deferred-length function result in a static variable at
  !> each place a program calls the function, so threads calling xfer_error_message() from the
  !> same line at the same time can garble each other's result; this form has no such variable.
  subroutine xfer_get_error_message(message)
    character(len=:), allocatable, intent(out) :: message
    character(len=:), allocatable :: library
    integer :: n
    call get_c_string(xfer_last_error(), library)
    if (noted_length >= 0) then
      ! The library's message is what it was when the helper failed: no library call failed
      ! since (one that failed with, to the letter, that same message cannot be told apart).
      n = min(len(library), message_capacity)
      if (len(library) == library_length_then .and. library(1:n) == library_message_then(1:n)) then
        message = noted_message(1:noted_length)
        return
      end if
      noted_length = -1
    end if
    call move_alloc(library, message)
  end subroutine

  !> xfer_open with the backend as a Fortran string; "" takes it from XFER_BACKEND / XFER_CONFIG.
  integer(c_int) function xfer_open_name(backend, device, ctx) result(st)
    character(len=*), intent(in) :: backend
    integer(c_int), intent(in) :: device
    type(c_ptr), intent(out) :: ctx
    character(kind=c_char, len=len_trim(backend) + 1), target :: cname
    if (len_trim(backend) == 0) then
      st = from_library(xfer_open(c_null_ptr, device, ctx))
    else
      cname = trim(backend) // c_null_char
      st = from_library(xfer_open(c_loc(cname), device, ctx))
    end if
  end function

  !> st = xfer_register_array(ctx, a [, flags]): xfer_register of the whole array `a` (any type,
  !> kind and rank, including derived types): c_loc(a), size(a) * storage_size(a) / 8 bytes;
  !> flags: XFER_REGISTER_* (default XFER_REGISTER_DEFAULT). `a` must be contiguous (not a strided
  !> section: XFER_ERROR_INVALID_ARGUMENT, nothing registered) and not empty
  !> (XFER_ERROR_INVALID_SIZE); give it the TARGET attribute (or ALLOCATABLE, TARGET) and keep it
  !> allocated until xfer_unregister_array(ctx, a) or xfer_close. Other statuses: xfer_register's.
  !> xfer_error_message() says what was wrong.
  integer(c_int) function xfer_register_array(ctx, a, flags) result(st)
    type(c_ptr), intent(in) :: ctx
    class(*), target, intent(in) :: a(..)
    integer(c_int), intent(in), optional :: flags
    type(c_ptr) :: p
    logical :: contiguous
    integer(c_int) :: f
    integer(c_size_t) :: bytes
    f = XFER_REGISTER_DEFAULT
    if (present(flags)) f = flags
    p = array_address(a, contiguous)
    bytes = size(a, kind=c_size_t) * (storage_size(a, kind=c_size_t) / 8_c_size_t)
    if (.not. contiguous) then
      st = note_failure(XFER_ERROR_INVALID_ARGUMENT, "xfer_register_array: the array is not contiguous " // &
                        "(a strided section?): nothing registered")
    else if (bytes <= 0) then
      st = note_failure(XFER_ERROR_INVALID_SIZE, "xfer_register_array: the array is empty: nothing registered")
    else
      st = from_library(xfer_register(ctx, p, bytes, f))
    end if
  end function

  !> st = xfer_unregister_array(ctx, a): xfer_unregister of an array registered with
  !> xfer_register_array (the same array, whole).
  integer(c_int) function xfer_unregister_array(ctx, a) result(st)
    type(c_ptr), intent(in) :: ctx
    class(*), target, intent(in) :: a(..)
    logical :: contiguous
    st = from_library(xfer_unregister(ctx, array_address(a, contiguous)))
  end function

  ! ------------------------------------------------------------ private to the module

  ! The address of an array of any type and rank, and whether it is contiguous. Asked through an
  ! assumed-type dummy: c_loc accepts it (not a polymorphic one), and is_contiguous is reliable
  ! there for array sections (gfortran 12 reports a strided section passed as class(*)
  ! assumed-rank as contiguous).
  type(c_ptr) function array_address(x, contiguous) result(p)
    type(*), target, intent(in) :: x(..)
    logical, intent(out) :: contiguous
    contiguous = is_contiguous(x)
    p = c_null_ptr
    if (size(x) > 0) p = c_loc(x)
  end function

  ! The C string at p (const char *) into s; "" for c_null_ptr. A subroutine, not a function:
  ! see xfer_get_error_message for why the module calls no deferred-length character function.
  subroutine get_c_string(p, s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable, intent(out) :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    interface
      integer(c_size_t) function c_strlen(str) bind(c, name="strlen")
        import :: c_ptr, c_size_t
        type(c_ptr), value :: str
      end function
    end interface
    if (.not. c_associated(p)) then
      s = ""
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end subroutine

  ! A refusal a helper found itself: `text` becomes xfer_error_message()'s answer (see
  ! noted_message). Returns `status`.
  integer(c_int) function note_failure(status, text) result(st)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: text
    character(len=:), allocatable :: now
    call get_c_string(xfer_last_error(), now)
    library_message_then = now
    library_length_then = len(now)
    noted_message = text
    noted_length = min(len(text), message_capacity)
    st = status
  end function

  ! The status of a library call a helper made: when it failed, its own message
  ! (xfer_last_error) is this failure's, not a note of an earlier one.
  integer(c_int) function from_library(status) result(st)
    integer(c_int), intent(in) :: status
    if (status /= XFER_SUCCESS) noted_length = -1
    st = status
  end function

  ! n in decimal, left-aligned (callers trim it), for messages. A fixed-length result: see
  ! xfer_get_error_message for why the module calls no deferred-length character function.
  character(len=20) function decimal(n) result(s)
    integer(c_int64_t), intent(in) :: n
    write (s, "(i0)") n
  end function

  ! "300 x 7" for a shape, "scalar" for rank 0; left-aligned (callers trim it).
  character(len=160) function shape_text(shape) result(s)
    integer, intent(in) :: shape(:)
    integer :: i
    if (size(shape) == 0) then
      s = "scalar"
      return
    end if
    s = decimal(int(shape(1), c_int64_t))
    do i = 2, size(shape)
      s = trim(s) // " x " // trim(decimal(int(shape(i), c_int64_t)))
    end do
  end function

  ! Bytes of a view of `shape` with elements of `elem_bytes` bytes, or -1 when that is more than
  ! `limit` (checked before each product, so it never overflows).
  integer(c_size_t) function view_bytes(shape, elem_bytes, limit) result(need)
    integer, intent(in) :: shape(:)
    integer(c_size_t), intent(in) :: elem_bytes, limit
    integer :: i
    need = elem_bytes
    if (any(shape == 0)) then
      need = 0
      return
    end if
    do i = 1, size(shape)
      if (need > limit / int(shape(i), c_size_t)) then
        need = -1
        return
      end if
      need = need * int(shape(i), c_size_t)
    end do
    if (need > limit) need = -1
  end function

  ! The address and byte length of a whole array `x` (any rank) of elements of `elem_bits` bits,
  ! or a refusal noted for `helper`: not contiguous, empty, or of unknown size.
  integer(c_int) function whole_array(helper, x, elem_bits, type_name, p, bytes) result(st)
    character(len=*), intent(in) :: helper, type_name
    type(*), target, intent(in) :: x(..)
    integer(c_size_t), intent(in) :: elem_bits
    type(c_ptr), intent(out) :: p
    integer(c_size_t), intent(out) :: bytes
    logical :: contiguous
    integer(c_size_t) :: n
    p = array_address(x, contiguous)
    n = size(x, kind=c_size_t)
    bytes = n * (elem_bits / 8_c_size_t)
    st = XFER_SUCCESS
    if (.not. contiguous) then
      st = note_failure(XFER_ERROR_INVALID_ARGUMENT, helper // ": the " // type_name // " array is not " // &
                        "contiguous (a strided section, or a pointer to one): pass a contiguous array " // &
                        "(copy the section into one first); nothing was copied")
    else if (n == 0) then
      st = note_failure(XFER_ERROR_INVALID_SIZE, helper // ": the " // type_name // " array is empty: " // &
                        "no bytes to copy")
    else if (n < 0) then
      st = note_failure(XFER_ERROR_INVALID_SIZE, helper // ": the " // type_name // " array's size is " // &
                        "not known (an assumed-size array): pass a section with a last bound")
    end if
  end function

  ! xfer_copy_to_device (dir XFER_TO_DEVICE) and xfer_copy_to_host (XFER_TO_HOST) for an array
  ! `x` of any kind and rank. `x` has no intent: the same worker reads it or writes it (through
  ! C), as the specific's intent says.
  integer(c_int) function copy_whole_array(dir, ctx, buf, x, elem_bits, type_name, s, offset) result(st)
    integer(c_int), intent(in) :: dir
    type(c_ptr), intent(in) :: ctx, buf, s
    type(*), target :: x(..)
    integer(c_size_t), intent(in) :: elem_bits
    character(len=*), intent(in) :: type_name
    integer(c_size_t), intent(in), optional :: offset
    character(len=:), allocatable :: helper
    type(c_ptr) :: p, dev
    integer(c_size_t) :: bytes, off, have
    integer(c_int8_t), pointer :: view(:)
    if (dir == XFER_TO_DEVICE) then
      helper = "xfer_copy_to_device"
    else
      helper = "xfer_copy_to_host"
    end if
    st = whole_array(helper, x, elem_bits, type_name, p, bytes)
    if (st /= XFER_SUCCESS) return
    off = 0
    if (present(offset)) off = offset
    dev = xfer_device_ptr(buf)
    if (.not. c_associated(dev)) then
      st = from_library(XFER_ERROR_INVALID_HANDLE) ! xfer_device_ptr said why
      return
    end if
    have = xfer_buffer_size(buf)
    if (off < 0 .or. off > have .or. bytes > have - off) then
      st = note_failure(XFER_ERROR_OUT_OF_BOUNDS, helper // ": the " // type_name // " array's " // &
                        trim(decimal(int(bytes, c_int64_t))) // " bytes at offset " // &
                        trim(decimal(int(off, c_int64_t))) // " run past the end of the " // &
                        trim(decimal(int(have, c_int64_t))) // "-byte buffer; nothing was copied")
      return
    end if
    call c_f_pointer(dev, view, [have])
    dev = c_loc(view(off + 1))
    if (dir == XFER_TO_DEVICE) then
      st = from_library(xfer_memcpy_async(ctx, dev, p, bytes, XFER_COPY_HOST_TO_DEVICE, s))
    else
      st = from_library(xfer_memcpy_async(ctx, p, dev, bytes, XFER_COPY_DEVICE_TO_HOST, s))
    end if
    ! Waiting makes the array the program's again on return: it may be a temporary, or be
    ! deallocated or changed right after the call.
    if (st == XFER_SUCCESS) st = from_library(xfer_stream_synchronize(s))
  end function

  ! xfer_memcpy_to_device (kind XFER_COPY_HOST_TO_DEVICE: x -> device) and xfer_memcpy_to_host
  ! (XFER_COPY_DEVICE_TO_HOST: device -> x); `x` has no intent, as in copy_whole_array.
  integer(c_int) function memcpy_whole_array(kind, ctx, device, x, elem_bits, type_name, s) result(st)
    integer(c_int), intent(in) :: kind
    type(c_ptr), intent(in) :: ctx, device, s
    type(*), target :: x(..)
    integer(c_size_t), intent(in) :: elem_bits
    character(len=*), intent(in) :: type_name
    character(len=:), allocatable :: helper
    type(c_ptr) :: p
    integer(c_size_t) :: bytes
    if (kind == XFER_COPY_HOST_TO_DEVICE) then
      helper = "xfer_memcpy_to_device"
    else
      helper = "xfer_memcpy_to_host"
    end if
    st = whole_array(helper, x, elem_bits, type_name, p, bytes)
    if (st /= XFER_SUCCESS) return
    if (kind == XFER_COPY_HOST_TO_DEVICE) then
      st = from_library(xfer_memcpy_async(ctx, device, p, bytes, kind, s))
    else
      st = from_library(xfer_memcpy_async(ctx, p, device, bytes, kind, s))
    end if
    if (st == XFER_SUCCESS) st = from_library(xfer_stream_synchronize(s)) ! as in copy_whole_array
  end function

  ! ---------------------------------------------- xfer_host_view, one specific per type

  integer(c_int) function view_c_int8(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    integer(c_int8_t), pointer, intent(inout) :: a(..)
    integer, intent(in) :: shape(:)
    integer(c_int8_t) :: elem
    character(len=*), parameter :: type_name = "integer(c_int8_t)"
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_int16(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    integer(c_int16_t), pointer, intent(inout) :: a(..)
    integer, intent(in) :: shape(:)
    integer(c_int16_t) :: elem
    character(len=*), parameter :: type_name = "integer(c_int16_t)"
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_int(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    integer(c_int), pointer, intent(inout) :: a(..)
    integer, intent(in) :: shape(:)
    integer(c_int) :: elem
    character(len=*), parameter :: type_name = "integer(c_int)"
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_int64(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    integer(c_int64_t), pointer, intent(inout) :: a(..)
    integer, intent(in) :: shape(:)
    integer(c_int64_t) :: elem
    character(len=*), parameter :: type_name = "integer(c_int64_t)"
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_float(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    real(c_float), pointer, intent(inout) :: a(..)
    integer, intent(in) :: shape(:)
    real(c_float) :: elem
    character(len=*), parameter :: type_name = "real(c_float)"
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_double(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    real(c_double), pointer, intent(inout) :: a(..)
    integer, intent(in) :: shape(:)
    real(c_double) :: elem
    character(len=*), parameter :: type_name = "real(c_double)"
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_float_complex(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    complex(c_float_complex), pointer, intent(inout) :: a(..)
    integer, intent(in) :: shape(:)
    complex(c_float_complex) :: elem
    character(len=*), parameter :: type_name = "complex(c_float_complex)"
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_double_complex(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    complex(c_double_complex), pointer, intent(inout) :: a(..)
    integer, intent(in) :: shape(:)
    complex(c_double_complex) :: elem
    character(len=*), parameter :: type_name = "complex(c_double_complex)"
    include "xfer_view_body.inc"
  end function

  ! ------------------- xfer_copy_to_device / _to_host, xfer_memcpy_to_device / _to_host
  ! One specific per type for each, any rank: each hands the array, its element size and
  ! its type's name to the one worker of its kind (copy_whole_array, memcpy_whole_array).

  integer(c_int) function copy_to_device_int8(ctx, buf, a, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    integer(c_int8_t), intent(in) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_DEVICE, ctx, buf, a, storage_size(a, c_size_t), "integer(c_int8_t)", &
                          s, offset)
  end function

  integer(c_int) function copy_to_host_int8(ctx, a, buf, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    integer(c_int8_t), intent(inout) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_HOST, ctx, buf, a, storage_size(a, c_size_t), "integer(c_int8_t)", &
                          s, offset)
  end function

  integer(c_int) function memcpy_to_device_int8(ctx, dst, a, s) result(st)
    type(c_ptr), intent(in) :: ctx, dst, s
    integer(c_int8_t), intent(in) :: a(..)
    st = memcpy_whole_array(XFER_COPY_HOST_TO_DEVICE, ctx, dst, a, storage_size(a, c_size_t), &
                            "integer(c_int8_t)", s)
  end function

  integer(c_int) function memcpy_to_host_int8(ctx, a, src, s) result(st)
    type(c_ptr), intent(in) :: ctx, src, s
    integer(c_int8_t), intent(inout) :: a(..)
    st = memcpy_whole_array(XFER_COPY_DEVICE_TO_HOST, ctx, src, a, storage_size(a, c_size_t), &
                            "integer(c_int8_t)", s)
  end function

  integer(c_int) function copy_to_device_int16(ctx, buf, a, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    integer(c_int16_t), intent(in) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_DEVICE, ctx, buf, a, storage_size(a, c_size_t), "integer(c_int16_t)", &
                          s, offset)
  end function

  integer(c_int) function copy_to_host_int16(ctx, a, buf, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    integer(c_int16_t), intent(inout) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_HOST, ctx, buf, a, storage_size(a, c_size_t), "integer(c_int16_t)", &
                          s, offset)
  end function

  integer(c_int) function memcpy_to_device_int16(ctx, dst, a, s) result(st)
    type(c_ptr), intent(in) :: ctx, dst, s
    integer(c_int16_t), intent(in) :: a(..)
    st = memcpy_whole_array(XFER_COPY_HOST_TO_DEVICE, ctx, dst, a, storage_size(a, c_size_t), &
                            "integer(c_int16_t)", s)
  end function

  integer(c_int) function memcpy_to_host_int16(ctx, a, src, s) result(st)
    type(c_ptr), intent(in) :: ctx, src, s
    integer(c_int16_t), intent(inout) :: a(..)
    st = memcpy_whole_array(XFER_COPY_DEVICE_TO_HOST, ctx, src, a, storage_size(a, c_size_t), &
                            "integer(c_int16_t)", s)
  end function

  integer(c_int) function copy_to_device_int32(ctx, buf, a, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    integer(c_int32_t), intent(in) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_DEVICE, ctx, buf, a, storage_size(a, c_size_t), "integer(c_int32_t)", &
                          s, offset)
  end function

  integer(c_int) function copy_to_host_int32(ctx, a, buf, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    integer(c_int32_t), intent(inout) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_HOST, ctx, buf, a, storage_size(a, c_size_t), "integer(c_int32_t)", &
                          s, offset)
  end function

  integer(c_int) function memcpy_to_device_int32(ctx, dst, a, s) result(st)
    type(c_ptr), intent(in) :: ctx, dst, s
    integer(c_int32_t), intent(in) :: a(..)
    st = memcpy_whole_array(XFER_COPY_HOST_TO_DEVICE, ctx, dst, a, storage_size(a, c_size_t), &
                            "integer(c_int32_t)", s)
  end function

  integer(c_int) function memcpy_to_host_int32(ctx, a, src, s) result(st)
    type(c_ptr), intent(in) :: ctx, src, s
    integer(c_int32_t), intent(inout) :: a(..)
    st = memcpy_whole_array(XFER_COPY_DEVICE_TO_HOST, ctx, src, a, storage_size(a, c_size_t), &
                            "integer(c_int32_t)", s)
  end function

  integer(c_int) function copy_to_device_int64(ctx, buf, a, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    integer(c_int64_t), intent(in) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_DEVICE, ctx, buf, a, storage_size(a, c_size_t), "integer(c_int64_t)", &
                          s, offset)
  end function

  integer(c_int) function copy_to_host_int64(ctx, a, buf, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    integer(c_int64_t), intent(inout) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_HOST, ctx, buf, a, storage_size(a, c_size_t), "integer(c_int64_t)", &
                          s, offset)
  end function

  integer(c_int) function memcpy_to_device_int64(ctx, dst, a, s) result(st)
    type(c_ptr), intent(in) :: ctx, dst, s
    integer(c_int64_t), intent(in) :: a(..)
    st = memcpy_whole_array(XFER_COPY_HOST_TO_DEVICE, ctx, dst, a, storage_size(a, c_size_t), &
                            "integer(c_int64_t)", s)
  end function

  integer(c_int) function memcpy_to_host_int64(ctx, a, src, s) result(st)
    type(c_ptr), intent(in) :: ctx, src, s
    integer(c_int64_t), intent(inout) :: a(..)
    st = memcpy_whole_array(XFER_COPY_DEVICE_TO_HOST, ctx, src, a, storage_size(a, c_size_t), &
                            "integer(c_int64_t)", s)
  end function

  integer(c_int) function copy_to_device_float(ctx, buf, a, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    real(c_float), intent(in) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_DEVICE, ctx, buf, a, storage_size(a, c_size_t), "real(c_float)", &
                          s, offset)
  end function

  integer(c_int) function copy_to_host_float(ctx, a, buf, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    real(c_float), intent(inout) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_HOST, ctx, buf, a, storage_size(a, c_size_t), "real(c_float)", &
                          s, offset)
  end function

  integer(c_int) function memcpy_to_device_float(ctx, dst, a, s) result(st)
    type(c_ptr), intent(in) :: ctx, dst, s
    real(c_float), intent(in) :: a(..)
    st = memcpy_whole_array(XFER_COPY_HOST_TO_DEVICE, ctx, dst, a, storage_size(a, c_size_t), &
                            "real(c_float)", s)
  end function

  integer(c_int) function memcpy_to_host_float(ctx, a, src, s) result(st)
    type(c_ptr), intent(in) :: ctx, src, s
    real(c_float), intent(inout) :: a(..)
    st = memcpy_whole_array(XFER_COPY_DEVICE_TO_HOST, ctx, src, a, storage_size(a, c_size_t), &
                            "real(c_float)", s)
  end function

  integer(c_int) function copy_to_device_double(ctx, buf, a, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    real(c_double), intent(in) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_DEVICE, ctx, buf, a, storage_size(a, c_size_t), "real(c_double)", &
                          s, offset)
  end function

  integer(c_int) function copy_to_host_double(ctx, a, buf, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    real(c_double), intent(inout) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_HOST, ctx, buf, a, storage_size(a, c_size_t), "real(c_double)", &
                          s, offset)
  end function

  integer(c_int) function memcpy_to_device_double(ctx, dst, a, s) result(st)
    type(c_ptr), intent(in) :: ctx, dst, s
    real(c_double), intent(in) :: a(..)
    st = memcpy_whole_array(XFER_COPY_HOST_TO_DEVICE, ctx, dst, a, storage_size(a, c_size_t), &
                            "real(c_double)", s)
  end function

  integer(c_int) function memcpy_to_host_double(ctx, a, src, s) result(st)
    type(c_ptr), intent(in) :: ctx, src, s
    real(c_double), intent(inout) :: a(..)
    st = memcpy_whole_array(XFER_COPY_DEVICE_TO_HOST, ctx, src, a, storage_size(a, c_size_t), &
                            "real(c_double)", s)
  end function

  integer(c_int) function copy_to_device_float_complex(ctx, buf, a, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    complex(c_float_complex), intent(in) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_DEVICE, ctx, buf, a, storage_size(a, c_size_t), "complex(c_float_complex)", &
                          s, offset)
  end function

  integer(c_int) function copy_to_host_float_complex(ctx, a, buf, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    complex(c_float_complex), intent(inout) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_HOST, ctx, buf, a, storage_size(a, c_size_t), "complex(c_float_complex)", &
                          s, offset)
  end function

  integer(c_int) function memcpy_to_device_float_complex(ctx, dst, a, s) result(st)
    type(c_ptr), intent(in) :: ctx, dst, s
    complex(c_float_complex), intent(in) :: a(..)
    st = memcpy_whole_array(XFER_COPY_HOST_TO_DEVICE, ctx, dst, a, storage_size(a, c_size_t), &
                            "complex(c_float_complex)", s)
  end function

  integer(c_int) function memcpy_to_host_float_complex(ctx, a, src, s) result(st)
    type(c_ptr), intent(in) :: ctx, src, s
    complex(c_float_complex), intent(inout) :: a(..)
    st = memcpy_whole_array(XFER_COPY_DEVICE_TO_HOST, ctx, src, a, storage_size(a, c_size_t), &
                            "complex(c_float_complex)", s)
  end function

  integer(c_int) function copy_to_device_double_complex(ctx, buf, a, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    complex(c_double_complex), intent(in) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_DEVICE, ctx, buf, a, storage_size(a, c_size_t), "complex(c_double_complex)", &
                          s, offset)
  end function

  integer(c_int) function copy_to_host_double_complex(ctx, a, buf, s, offset) result(st)
    type(c_ptr), intent(in) :: ctx, buf, s
    complex(c_double_complex), intent(inout) :: a(..)
    integer(c_size_t), intent(in), optional :: offset
    st = copy_whole_array(XFER_TO_HOST, ctx, buf, a, storage_size(a, c_size_t), "complex(c_double_complex)", &
                          s, offset)
  end function

  integer(c_int) function memcpy_to_device_double_complex(ctx, dst, a, s) result(st)
    type(c_ptr), intent(in) :: ctx, dst, s
    complex(c_double_complex), intent(in) :: a(..)
    st = memcpy_whole_array(XFER_COPY_HOST_TO_DEVICE, ctx, dst, a, storage_size(a, c_size_t), &
                            "complex(c_double_complex)", s)
  end function

  integer(c_int) function memcpy_to_host_double_complex(ctx, a, src, s) result(st)
    type(c_ptr), intent(in) :: ctx, src, s
    complex(c_double_complex), intent(inout) :: a(..)
    st = memcpy_whole_array(XFER_COPY_DEVICE_TO_HOST, ctx, src, a, storage_size(a, c_size_t), &
                            "complex(c_double_complex)", s)
  end function

end module xfer
