! SPDX-License-Identifier: Apache-2.0
! Which path each copy took, through the Fortran module on the `host` backend: after N copies of
! B bytes the statistics say N copies and N*B bytes on XFER_PATH_HOST_MEMCPY (xfer_get_stats),
! and nothing on any other path; registrations are counted; xfer_context_reset_stats zeroes
! everything; the names of paths and reasons (xfer_path_name, xfer_reason_name); a copy
! observer (a bind(c) subroutine with user_data) sees one record per call, and is removed; the
! slow-path policy is set and read back, and a bad one refused; the calibration that decides the
! CUDA backends' paths: xfer_get_calibration on host is XFER_ERROR_NOT_SUPPORTED (nothing to
! calibrate), and the values a host context uses (xfer_context_get_setting) are the host section
! of xfer_param_get_info's list, value for value, none derived. Prints PASS and stops 0 on success.
module copy_paths_observer
  use, intrinsic :: iso_c_binding
  use xfer
  implicit none
  private
  public :: tally, count_copy

  !> What the observer saw; handed to it as user_data.
  type, bind(c) :: tally
    integer(c_int64_t) :: records, copies, bytes, call_bytes
    integer(c_int) :: last_path, last_reason, last_kind, slow
    character(kind=c_char) :: last_function(32)
  end type

contains

  subroutine count_copy(record, user_data) bind(c)
    type(xfer_copy_record), intent(in) :: record
    type(c_ptr), value :: user_data
    type(tally), pointer :: t
    character(len=:), allocatable :: fn
    integer :: i
    call c_f_pointer(user_data, t)
    t%records = t%records + 1
    t%copies = t%copies + record%copies
    t%bytes = t%bytes + record%bytes
    t%call_bytes = t%call_bytes + record%call_bytes
    t%last_path = record%path
    t%last_reason = record%reason
    t%last_kind = record%kind
    t%slow = t%slow + record%slow
    fn = xfer_f_string(record%function)
    t%last_function = c_null_char
    do i = 1, min(len(fn), size(t%last_function) - 1)
      t%last_function(i) = fn(i:i)
    end do
  end subroutine
end module

program copy_paths
  use, intrinsic :: iso_c_binding
  use xfer
  use xfer_test_checks
  use copy_paths_observer
  implicit none
  integer(c_int), parameter :: N = 7
  integer(c_size_t), parameter :: B = 3000
  type(c_ptr) :: ctx, buf, s, closed
  type(xfer_context_stats) :: st
  type(tally), target :: seen
  integer(c_int8_t), pointer :: host(:), dev(:)
  integer(c_int8_t), allocatable, target :: src(:), dst(:)
  real(c_double), allocatable, target :: reg(:, :)
  integer(c_int) :: policy, i, p, other_copies, status, nparams, nsettings, nhost, derived
  integer(c_int64_t) :: other_bytes
  type(xfer_calibration_info) :: cal
  type(xfer_param_info) :: info
  character(len=64) :: host_names(32), host_envs(32), host_types(32)
  character(len=256) :: host_values(32), host_defaults(32)
  integer(c_int) :: host_sources(32)

  ! Names
  call expect(xfer_path_name(XFER_PATH_HOST_MEMCPY) == "host_memcpy", "xfer_path_name(HOST_MEMCPY)")
  call expect(xfer_path_name(XFER_PATH_DRIVER_PAGEABLE) == "driver_pageable", "xfer_path_name(DRIVER_PAGEABLE)")
  call expect(xfer_path_name(XFER_PATH_COUNT) == "unknown", "xfer_path_name(COUNT) is unknown")
  call expect(xfer_reason_name(XFER_REASON_CACHE_FULL) == "cache_full", "xfer_reason_name(CACHE_FULL)")
  call expect(xfer_reason_name(XFER_REASON_COUNT) == "unknown", "xfer_reason_name(COUNT) is unknown")
  call expect(xfer_reason_name(XFER_REASON_ONE_OFF) == "one_off", "xfer_reason_name(ONE_OFF)")
  call expect(xfer_reason_name(XFER_REASON_REUSE) == "reuse", "xfer_reason_name(REUSE)")
  call expect(xfer_reason_name(XFER_REASON_MEASURED_FASTEST) == "measured_fastest", "xfer_reason_name(MEASURED_FASTEST)")
  do p = 0, XFER_REASON_COUNT - 1
    call expect(xfer_reason_name(p) /= "unknown", "every reason below XFER_REASON_COUNT has a name")
  end do
  call expect(xfer_path_is_slow(XFER_PATH_DRIVER_PAGEABLE, XFER_REASON_NO_FASTER_PATH, XFER_SLOW_PATH_MIN_BYTES) == 1, &
              "the driver's pageable copy of 1 MiB is slow")
  call expect(xfer_path_is_slow(XFER_PATH_DRIVER_PAGEABLE, XFER_REASON_NO_FASTER_PATH, &
                                XFER_SLOW_PATH_MIN_BYTES - 1_c_int64_t) == 0, "one byte less is not")
  call expect(xfer_path_is_slow(XFER_PATH_HOST_MEMCPY, XFER_REASON_MEMORY, 64_c_int64_t * XFER_SLOW_PATH_MIN_BYTES) == 0, &
              "a host memcpy is never slow")
  ! The calibration's reasons say the path is the fastest one measured: never slow.
  call expect(xfer_path_is_slow(XFER_PATH_DRIVER_PAGEABLE, XFER_REASON_ONE_OFF, 64_c_int64_t * XFER_SLOW_PATH_MIN_BYTES) == 0, &
              "one_off is not slow")
  call expect(xfer_path_is_slow(XFER_PATH_NEW_REGISTRATION, XFER_REASON_REUSE, 64_c_int64_t * XFER_SLOW_PATH_MIN_BYTES) == 0, &
              "reuse is not slow")
  call expect(xfer_path_is_slow(XFER_PATH_NEW_REGISTRATION, XFER_REASON_MEASURED_FASTEST, &
                                64_c_int64_t * XFER_SLOW_PATH_MIN_BYTES) == 0, "measured_fastest is not slow")

  call ok(xfer_open_name("host", 0_c_int, ctx), "xfer_open")
  call ok(xfer_stream_create(ctx, s), "xfer_stream_create")
  call ok(xfer_get_stats(ctx, st), "xfer_get_stats (fresh)")
  call expect(st%struct_size == c_sizeof(st), "struct_size is the Fortran type's size")
  call expect(st%version == XFER_CONTEXT_STATS_VERSION, "version")
  call expect(st%path_count == XFER_PATH_COUNT, "path_count")
  call expect(st%calls == 0, "no calls yet")

  ! N copies of B bytes
  call ok(xfer_alloc(ctx, B, XFER_ALLOC_DEFAULT, buf), "xfer_alloc")
  call c_f_pointer(xfer_host_ptr(buf), host, [B])
  call c_f_pointer(xfer_device_ptr(buf), dev, [B])
  host = 42_c_int8_t
  do i = 1, N
    call ok(xfer_copy(buf, XFER_TO_DEVICE, 0_c_size_t, B), "xfer_copy")
  end do
  call expect(all(dev == 42_c_int8_t), "the bytes reached the device view")
  call ok(xfer_get_stats(ctx, st), "xfer_get_stats")
  call expect(st%calls == N, "calls == N")
  call expect(st%paths(XFER_PATH_HOST_MEMCPY)%copies == N, "host_memcpy copies == N")
  call expect(st%paths(XFER_PATH_HOST_MEMCPY)%bytes == N * B, "host_memcpy bytes == N*B")
  call expect(st%paths(XFER_PATH_HOST_MEMCPY)%host_ns > 0, "host_memcpy host time > 0")
  other_copies = 0
  other_bytes = 0
  do p = 0, XFER_PATH_COUNT - 1
    if (p == XFER_PATH_HOST_MEMCPY) cycle
    other_copies = other_copies + int(st%paths(p)%copies)
    other_bytes = other_bytes + st%paths(p)%bytes
  end do
  call expect(other_copies == 0 .and. other_bytes == 0, "no other path taken")
  call expect(st%slow_copies == 0 .and. st%refused_calls == 0, "nothing slow, nothing refused")

  ! A raw copy between Fortran arrays, counted on the same path
  allocate(src(5000), dst(5000))
  src = [(int(mod(i, 100), c_int8_t), i = 1, 5000)]
  dst = 0_c_int8_t
  call ok(xfer_memcpy_async(ctx, c_loc(dst), c_loc(src), 5000_c_size_t, XFER_COPY_HOST_TO_HOST, s), "xfer_memcpy_async")
  call ok(xfer_stream_synchronize(s), "xfer_stream_synchronize")
  call expect(all(dst == src), "raw copy arrived")
  call ok(xfer_get_stats(ctx, st), "xfer_get_stats after the raw copy")
  call expect(st%calls == N + 1, "calls == N + 1")
  call expect(st%paths(XFER_PATH_HOST_MEMCPY)%bytes == N * B + 5000, "host_memcpy bytes == N*B + 5000")

  ! Registrations
  allocate(reg(64, 8))
  call ok(xfer_register_array(ctx, reg), "xfer_register_array")
  call ok(xfer_get_stats(ctx, st), "xfer_get_stats registered")
  call expect(st%registrations == 1, "one registration")
  call expect(st%registered_bytes == 64 * 8 * 8, "registered bytes")
  call ok(xfer_unregister_array(ctx, reg), "xfer_unregister_array")
  call ok(xfer_get_stats(ctx, st), "xfer_get_stats unregistered")
  call expect(st%unregistrations == 1 .and. st%unregistered_bytes == 64 * 8 * 8, "one unregistration")

  ! Reset
  call ok(xfer_context_reset_stats(ctx), "xfer_context_reset_stats")
  call ok(xfer_get_stats(ctx, st), "xfer_get_stats after reset")
  call expect(st%calls == 0 .and. st%registrations == 0 .and. st%unregistrations == 0, "counters zeroed")
  call expect(all(st%paths(:)%copies == 0) .and. all(st%paths(:)%bytes == 0) .and. all(st%paths(:)%host_ns == 0), &
              "every path zeroed")

  ! The observer
  seen = tally(0, 0, 0, 0, -1, -1, -1, 0, c_null_char)
  call ok(xfer_set_copy_observer(ctx, c_funloc(count_copy), c_loc(seen)), "xfer_set_copy_observer")
  call ok(xfer_copy(buf, XFER_TO_HOST, 100_c_size_t, 1000_c_size_t), "xfer_copy observed")
  call expect(seen%records == 1, "one record")
  call expect(seen%copies == 1 .and. seen%bytes == 1000 .and. seen%call_bytes == 1000, "record: 1 copy of 1000 bytes")
  call expect(seen%last_path == XFER_PATH_HOST_MEMCPY, "record: path host_memcpy")
  call expect(seen%last_reason == XFER_REASON_MEMORY, "record: reason memory")
  call expect(seen%last_kind == XFER_COPY_DEVICE_TO_HOST, "record: kind device to host")
  call expect(seen%slow == 0, "record: not slow")
  call expect(xfer_f_string(c_loc(seen%last_function)) == "xfer_copy", "record: function xfer_copy")
  call ok(xfer_set_copy_observer(ctx, c_null_funptr, c_null_ptr), "xfer_set_copy_observer (remove)")
  call ok(xfer_copy(buf, XFER_TO_HOST, 0_c_size_t, B), "xfer_copy unobserved")
  call expect(seen%records == 1, "no record once removed")
  call ok(xfer_get_stats(ctx, st), "xfer_get_stats observed")
  call expect(st%calls == 2 .and. st%paths(XFER_PATH_HOST_MEMCPY)%bytes == 1000 + B, "counted with and without observer")

  ! The slow-path policy
  call ok(xfer_context_get_slow_path(ctx, policy), "xfer_context_get_slow_path")
  call expect(policy == XFER_SLOW_PATH_ALLOW, "default policy allow")
  call ok(xfer_context_set_slow_path(ctx, XFER_SLOW_PATH_REFUSE), "xfer_context_set_slow_path refuse")
  call ok(xfer_context_get_slow_path(ctx, policy), "xfer_context_get_slow_path")
  call expect(policy == XFER_SLOW_PATH_REFUSE, "policy refuse")
  call ok(xfer_copy(buf, XFER_TO_DEVICE, 0_c_size_t, B), "xfer_copy under refuse (host memcpy is never slow)")
  call ok(xfer_get_stats(ctx, st), "xfer_get_stats refuse")
  call expect(st%refused_calls == 0, "nothing refused on host")
  call expect(xfer_context_set_slow_path(ctx, 3_c_int) == XFER_ERROR_INVALID_ARGUMENT, "policy 3 refused")
  call expect(index(xfer_error_message(), "xfer_slow_path") > 0, "the message names xfer_slow_path")
  call ok(xfer_context_get_slow_path(ctx, policy), "xfer_context_get_slow_path")
  call expect(policy == XFER_SLOW_PATH_REFUSE, "policy unchanged by the refusal")

  ! The calibration: host has nothing to calibrate, forced or not.
  status = xfer_get_calibration(ctx, cal)
  call expect(status == XFER_ERROR_NOT_SUPPORTED, "xfer_get_calibration on host is XFER_ERROR_NOT_SUPPORTED")
  call expect(index(xfer_error_message(), "nothing to calibrate") > 0, "the message says so: " // xfer_error_message())
  call expect(cal%struct_size == c_sizeof(cal) .and. c_sizeof(cal) == 40, "struct_size is the Fortran type's size, 40")
  call expect(xfer_get_calibration(ctx, cal, XFER_CALIBRATE_FORCE) == XFER_ERROR_NOT_SUPPORTED, "forced: the same")
  call expect(xfer_get_calibration(ctx, cal, 2_c_int) == XFER_ERROR_INVALID_ARGUMENT, "unknown flag bits refused")
  call expect(index(xfer_error_message(), "unknown flag bits") > 0, "the message names the flag bits")
  cal%struct_size = 0
  call expect(xfer_calibrate(ctx, 0_c_int, cal) == XFER_ERROR_INVALID_ARGUMENT, "struct_size 0 refused")

  ! The values the context uses: the host section of the global list, value for value, none derived.
  call ok(xfer_param_count(nparams), "xfer_param_count")
  nhost = 0
  do i = 0, nparams - 1
    call ok(xfer_param_get_info(i, info), "xfer_param_get_info")
    if (xfer_f_string(info%section) /= "host") cycle
    nhost = nhost + 1
    if (nhost > size(host_names)) exit
    host_names(nhost) = xfer_f_string(info%name)
    host_envs(nhost) = xfer_f_string(info%env)
    host_types(nhost) = xfer_f_string(info%type)
    host_values(nhost) = xfer_f_string(info%value)
    host_defaults(nhost) = xfer_f_string(info%default_value)
    host_sources(nhost) = info%source
  end do
  call expect(nhost >= 2 .and. nhost <= size(host_names), "the host backend has parameters")
  call expect(any(host_names(1:nhost) == "devices") .and. any(host_names(1:nhost) == "device_memory"), &
              "devices and device_memory among them")
  call ok(xfer_context_setting_count(ctx, nsettings), "xfer_context_setting_count")
  call expect(nsettings == nhost, "one setting per host parameter")
  do i = 0, min(nsettings, nhost) - 1
    derived = -1
    call ok(xfer_context_get_setting(ctx, i, info, derived), "xfer_context_get_setting")
    call expect(derived == 0, "a host setting is a parameter, not derived")
    call expect(xfer_f_string(info%section) == "host", "setting of section host")
    call expect(xfer_f_string(info%name) == host_names(i + 1), "setting's name: " // xfer_f_string(info%name))
    call expect(xfer_f_string(info%env) == host_envs(i + 1), "setting's env: " // host_names(i + 1))
    call expect(xfer_f_string(info%type) == host_types(i + 1), "setting's type: " // host_names(i + 1))
    call expect(xfer_f_string(info%value) == host_values(i + 1), "setting's value: " // host_names(i + 1))
    call expect(xfer_f_string(info%default_value) == host_defaults(i + 1), "setting's default: " // host_names(i + 1))
    call expect(info%source == host_sources(i + 1) .and. info%source /= XFER_PARAM_CALIBRATION, &
                "setting's source: " // host_names(i + 1))
  end do
  do i = 1, 2
    status = xfer_context_get_setting(ctx, merge(nsettings, -1_c_int, i == 1), info, derived)
    call expect(status == XFER_ERROR_INVALID_ARGUMENT, "an index out of range is XFER_ERROR_INVALID_ARGUMENT")
    call expect(index(xfer_error_message(), "out of range") > 0, "the message says out of range: " // xfer_error_message())
  end do
  call ok(xfer_context_get_setting(ctx, 0_c_int, info), "xfer_context_get_setting without derived")
  call expect(xfer_f_string(info%name) == host_names(1), "the first setting again")

  ! A closed context
  call ok(xfer_stream_destroy(s), "xfer_stream_destroy")
  call ok(xfer_free(buf), "xfer_free")
  closed = ctx
  call ok(xfer_close(ctx), "xfer_close")
  call expect(xfer_get_stats(closed, st) == XFER_ERROR_INVALID_HANDLE, "stats of a closed context")
  call expect(xfer_context_reset_stats(closed) == XFER_ERROR_INVALID_HANDLE, "reset of a closed context")
  call expect(xfer_context_get_slow_path(closed, policy) == XFER_ERROR_INVALID_HANDLE, "policy of a closed context")
  call expect(xfer_get_calibration(closed, cal) == XFER_ERROR_INVALID_HANDLE, "calibration of a closed context")
  call expect(xfer_context_setting_count(closed, nsettings) == XFER_ERROR_INVALID_HANDLE, "settings of a closed context")

  call finish("PASS: Fortran copy paths")
end program
