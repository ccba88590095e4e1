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
! xfer_host_view (the host view as a Fortran array pointer of any rank), xfer_f_string,
! xfer_status_name and xfer_error_message (C strings as Fortran strings), xfer_register_array
! and xfer_unregister_array (register an existing Fortran array of any type and rank).
!
! Semantics, units, statuses and thread-safety of each function are those written in xfer.h.
! To bind a new xfer.h function: add one interface block below (check_coverage.py fails CI
! until you do).
module xfer
  use, intrinsic :: iso_c_binding
  implicit none
  private :: view_c_float, view_c_double, view_c_int, view_c_int64, view_c_int8, view_c_float_complex, &
             view_c_double_complex, array_address

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

  ! flags (unsigned in C)
  integer(c_int), parameter :: XFER_ALLOC_DEFAULT = 0
  integer(c_int), parameter :: XFER_ALLOC_READ_MOSTLY = 1
  integer(c_int), parameter :: XFER_ALLOC_PREFER_DEVICE = 2
  integer(c_int), parameter :: XFER_ALLOC_PREFER_HOST = 4
  integer(c_int), parameter :: XFER_EVENT_DEFAULT = 0
  integer(c_int), parameter :: XFER_EVENT_DISABLE_TIMING = 1
  integer(c_int), parameter :: XFER_CAP_SHARED_VIEW = 1
  integer(c_int), parameter :: XFER_CAP_ASYNC_COPY = 2
  integer(c_int), parameter :: XFER_CAP_NO_COPY = 4
  integer(c_int), parameter :: XFER_CAP_MIGRATES = 8
  integer(c_int), parameter :: XFER_REGISTER_DEFAULT = 0
  integer(c_int), parameter :: XFER_REGISTER_READ_ONLY = 1

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

  type, bind(c) :: xfer_registration_stats   ! every field uint64_t in C
    integer(c_int64_t) :: registered_ranges, registered_bytes
    integer(c_int64_t) :: cache_hits, cache_misses, cache_evictions
    integer(c_int64_t) :: cache_ranges, cache_bytes, cache_limit_bytes
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
  end interface

  ! ------------------------------------------------------------------ helpers
  !> st = xfer_host_view(buf, a, shape): points the array pointer `a` (rank 1..7, one of the
  !> kinds below) at the buffer's host view with the given shape, through c_f_pointer. Returns
  !> XFER_ERROR_INVALID_ARGUMENT (size(shape) /= rank(a)), XFER_ERROR_INVALID_SIZE (a negative
  !> extent), XFER_ERROR_OUT_OF_BOUNDS (the shape needs more bytes than the buffer has),
  !> XFER_ERROR_INVALID_HANDLE (buf invalid); `a` is then left as it was. `a` is valid until
  !> xfer_free(buf).
  interface xfer_host_view
    module procedure view_c_float, view_c_double, view_c_int, view_c_int64, view_c_int8, &
                     view_c_float_complex, view_c_double_complex
  end interface

contains

  !> A C string (const char *) as a Fortran string; "" for c_null_ptr.
  function xfer_f_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
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
  end function

  !> "XFER_ERROR_OUT_OF_BOUNDS" for a status (xfer_status_string).
  function xfer_status_name(st) result(s)
    integer(c_int), intent(in) :: st
    character(len=:), allocatable :: s
    s = xfer_f_string(xfer_status_string(st))
  end function

  !> The calling thread's last failure message (xfer_last_error).
  function xfer_error_message() result(s)
    character(len=:), allocatable :: s
    s = xfer_f_string(xfer_last_error())
  end function

  !> xfer_open with the backend as a Fortran string; "" takes it from XFER_BACKEND / XFER_CONFIG.
  integer(c_int) function xfer_open_name(backend, device, ctx) result(st)
    character(len=*), intent(in) :: backend
    integer(c_int), intent(in) :: device
    type(c_ptr), intent(out) :: ctx
    character(kind=c_char, len=len_trim(backend) + 1), target :: cname
    if (len_trim(backend) == 0) then
      st = xfer_open(c_null_ptr, device, ctx)
    else
      cname = trim(backend) // c_null_char
      st = xfer_open(c_loc(cname), device, ctx)
    end if
  end function

  !> st = xfer_register_array(ctx, a [, flags]): xfer_register of the whole array `a` (any type,
  !> kind and rank, including derived types): c_loc(a), size(a) * storage_size(a) / 8 bytes;
  !> flags: XFER_REGISTER_* (default XFER_REGISTER_DEFAULT). `a` must be contiguous (not a strided
  !> section: XFER_ERROR_INVALID_ARGUMENT, nothing registered) and not empty
  !> (XFER_ERROR_INVALID_SIZE); give it the TARGET attribute (or ALLOCATABLE, TARGET) and keep it
  !> allocated until xfer_unregister_array(ctx, a) or xfer_close. Other statuses: xfer_register's.
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
      st = XFER_ERROR_INVALID_ARGUMENT
    else if (bytes == 0) then
      st = XFER_ERROR_INVALID_SIZE
    else
      st = xfer_register(ctx, p, bytes, f)
    end if
  end function

  !> st = xfer_unregister_array(ctx, a): xfer_unregister of an array registered with
  !> xfer_register_array (the same array, whole).
  integer(c_int) function xfer_unregister_array(ctx, a) result(st)
    type(c_ptr), intent(in) :: ctx
    class(*), target, intent(in) :: a(..)
    logical :: contiguous
    st = xfer_unregister(ctx, array_address(a, contiguous))
  end function

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

  integer(c_int) function view_c_float(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    real(c_float), pointer, intent(out) :: a(..)
    integer, intent(in) :: shape(:)
    real(c_float) :: elem
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_double(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    real(c_double), pointer, intent(out) :: a(..)
    integer, intent(in) :: shape(:)
    real(c_double) :: elem
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_int(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    integer(c_int), pointer, intent(out) :: a(..)
    integer, intent(in) :: shape(:)
    integer(c_int) :: elem
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_int64(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    integer(c_int64_t), pointer, intent(out) :: a(..)
    integer, intent(in) :: shape(:)
    integer(c_int64_t) :: elem
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_int8(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    integer(c_int8_t), pointer, intent(out) :: a(..)
    integer, intent(in) :: shape(:)
    integer(c_int8_t) :: elem
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_float_complex(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    complex(c_float_complex), pointer, intent(out) :: a(..)
    integer, intent(in) :: shape(:)
    complex(c_float_complex) :: elem
    include "xfer_view_body.inc"
  end function

  integer(c_int) function view_c_double_complex(buf, a, shape) result(st)
    type(c_ptr), intent(in) :: buf
    complex(c_double_complex), pointer, intent(out) :: a(..)
    integer, intent(in) :: shape(:)
    complex(c_double_complex) :: elem
    include "xfer_view_body.inc"
  end function

end module xfer
