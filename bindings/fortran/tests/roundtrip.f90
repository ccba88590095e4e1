! SPDX-License-Identifier: Apache-2.0
! The Fortran module on the `host` backend: real(c_float) (rank 2) and real(c_double) (rank 1)
! arrays through the device view and back, every element checked; an error status and its
! message checked; a raw copy between Fortran arrays; Fortran arrays registered with
! xfer_register_array (the host backend keeps bookkeeping only) and the statistics followed;
! xfer_host_view's refusals, each with its own message (not an earlier failure's); views of rank
! 0 and of int16; xfer_stream_wrap (not supported on host) and xfer_event_native.
! Prints PASS and stops 0 on success.
program roundtrip
  use, intrinsic :: iso_c_binding
  use xfer
  use xfer_test_checks
  implicit none
  type(c_ptr) :: ctx, buf, dbuf, s, freed, wrapped, ev, ev2
  real(c_float), pointer :: a(:, :), a_dev(:, :)
  real(c_double), pointer :: d(:), one
  integer(c_int16_t), pointer :: h(:, :)
  integer(c_int16_t), pointer :: h3(:, :, :)
  real(c_double), allocatable, target :: src(:), dst(:)
  real(c_double), pointer :: bad(:)
  integer(c_int) :: st, major, minor, patch
  integer(c_size_t) :: bytes
  integer :: i, j
  type(xfer_context_info) :: info
  type(xfer_registration_stats) :: rs
  real(c_double), allocatable, target :: reg3(:, :, :)
  integer(c_int), target :: regi(1000)
  integer(c_int8_t), allocatable, target :: empty(:)
  character(len=:), allocatable :: msg

  call ok(xfer_get_version(major, minor, patch), "xfer_get_version")
  call expect(major == XFER_VERSION_MAJOR, "library major version matches the module")
  call ok(xfer_open_name("host", 0_c_int, ctx), "xfer_open")
  call ok(xfer_context_get_info(ctx, info), "xfer_context_get_info")
  call expect(xfer_f_string(info%backend) == "host", "backend name is host")
  call ok(xfer_stream_create(ctx, s), "xfer_stream_create")

  ! real(c_float), rank 2: 300 x 7
  bytes = 300_c_size_t * 7_c_size_t * c_sizeof(0.0_c_float)
  call ok(xfer_alloc(ctx, bytes, XFER_ALLOC_DEFAULT, buf), "xfer_alloc float")
  call ok(xfer_host_view(buf, a, [300, 7]), "xfer_host_view float")
  do j = 1, 7
    do i = 1, 300
      a(i, j) = real(i, c_float) * 0.25_c_float - real(j * 1000, c_float)
    end do
  end do
  call ok(xfer_copy_async(buf, XFER_TO_DEVICE, 0_c_size_t, bytes, s), "xfer_copy_async to device")
  call ok(xfer_stream_synchronize(s), "xfer_stream_synchronize")
  ! The host backend's device view is host memory: check the bytes arrived there.
  call c_f_pointer(xfer_device_ptr(buf), a_dev, [300, 7])
  call expect(all(a_dev == a), "device view holds the floats")
  a = -1.0_c_float
  call ok(xfer_copy_async(buf, XFER_TO_HOST, 0_c_size_t, bytes, s), "xfer_copy_async to host")
  call ok(xfer_stream_synchronize(s), "xfer_stream_synchronize")
  do j = 1, 7
    do i = 1, 300
      if (a(i, j) /= real(i, c_float) * 0.25_c_float - real(j * 1000, c_float)) then
        print *, "float mismatch at", i, j, a(i, j)
        failures = failures + 1
      end if
    end do
  end do

  ! real(c_double), rank 1, synchronous copies
  bytes = 100003_c_size_t * c_sizeof(0.0_c_double)
  call ok(xfer_alloc(ctx, bytes, XFER_ALLOC_DEFAULT, dbuf), "xfer_alloc double")
  call ok(xfer_host_view(dbuf, d, [100003]), "xfer_host_view double")
  d = [(sin(real(i, c_double)) * 1.0e6_c_double, i = 1, 100003)]
  call ok(xfer_copy(dbuf, XFER_TO_DEVICE, 0_c_size_t, bytes), "xfer_copy to device")
  d = 0.0_c_double
  call ok(xfer_copy(dbuf, XFER_TO_HOST, 0_c_size_t, bytes), "xfer_copy to host")
  do i = 1, 100003
    if (d(i) /= sin(real(i, c_double)) * 1.0e6_c_double) then
      print *, "double mismatch at", i, d(i)
      failures = failures + 1
    end if
  end do

  ! Errors: a status and a message that says what was wrong; the buffer stays usable.
  st = xfer_copy_async(buf, XFER_TO_DEVICE, 8_c_size_t, bytes, s)
  call expect(st == XFER_ERROR_OUT_OF_BOUNDS, "copy past the end is XFER_ERROR_OUT_OF_BOUNDS")
  call expect(xfer_status_name(st) == "XFER_ERROR_OUT_OF_BOUNDS", "xfer_status_name")
  msg = xfer_error_message()
  call expect(index(msg, "offset 8") > 0, "message names the offset: " // msg)
  st = xfer_copy_async(buf, 3_c_int, 0_c_size_t, 4_c_size_t, s)
  call expect(st == XFER_ERROR_INVALID_ARGUMENT, "unknown direction is XFER_ERROR_INVALID_ARGUMENT")
  st = xfer_host_view(dbuf, bad, [100004])
  call expect(st == XFER_ERROR_OUT_OF_BOUNDS, "a view larger than the buffer is refused")

  ! xfer_host_view's refusals: each says what was wrong with this call, even right after a
  ! library failure whose message is still there; the pointer is left as it was.
  st = xfer_copy_async(buf, XFER_TO_DEVICE, 8_c_size_t, bytes, s)
  call expect(index(xfer_error_message(), "offset 8") > 0, "a library failure first")
  bad => d(1:10)
  st = xfer_host_view(dbuf, bad, [100004])
  msg = xfer_error_message()
  call expect(st == XFER_ERROR_OUT_OF_BOUNDS, "a view larger than the buffer is XFER_ERROR_OUT_OF_BOUNDS")
  call expect(msg == "xfer_host_view: a 100004 real(c_double) view needs 800032 bytes; the buffer has 800024", &
              "the view's own message: " // msg)
  call expect(associated(bad, d(1:10)), "a refused view leaves the pointer as it was")
  st = xfer_host_view(dbuf, bad, [2, 3])
  msg = xfer_error_message()
  call expect(st == XFER_ERROR_INVALID_ARGUMENT, "a shape of another rank is XFER_ERROR_INVALID_ARGUMENT")
  call expect(index(msg, "xfer_host_view: the shape has 2 extents for a rank-1 real(c_double) pointer") == 1, &
              "rank message: " // msg)
  st = xfer_host_view(dbuf, bad, [-4])
  msg = xfer_error_message()
  call expect(st == XFER_ERROR_INVALID_SIZE, "a negative extent is XFER_ERROR_INVALID_SIZE")
  call expect(msg == "xfer_host_view: extent 1 of the shape (-4) is negative", "extent message: " // msg)
  st = xfer_host_view(dbuf, h, [huge(0), huge(0)])
  call expect(st == XFER_ERROR_OUT_OF_BOUNDS, "a huge view is refused")
  call expect(index(xfer_error_message(), "needs 9223372028264841218 bytes") > 0, &
              "the huge view's size, exactly: " // xfer_error_message())
  st = xfer_host_view(dbuf, h3, [huge(0), huge(0), huge(0)])
  call expect(st == XFER_ERROR_OUT_OF_BOUNDS, "a view larger than any address space is refused")
  call expect(index(xfer_error_message(), "more bytes than an address space holds") > 0, &
              "overflow message: " // xfer_error_message())
  call ok(xfer_alloc(ctx, 64_c_size_t, XFER_ALLOC_DEFAULT, freed), "xfer_alloc")
  call ok(xfer_free(freed), "xfer_free")
  st = xfer_host_view(freed, bad, [4])
  msg = xfer_error_message()
  call expect(st == XFER_ERROR_INVALID_HANDLE, "a freed buffer is XFER_ERROR_INVALID_HANDLE")
  call expect(len(msg) > 0 .and. msg == xfer_f_string(xfer_last_error()), "the library's message: " // msg)
  call expect(index(msg, "negative") == 0, "not the earlier refusal's message: " // msg)
  call expect(associated(bad, d(1:10)), "still as it was")
  ! Views that fit: int16 at rank 2, a scalar (rank 0), an empty one.
  call ok(xfer_host_view(dbuf, h, [4, 1000]), "xfer_host_view int16")
  call expect(size(h) == 4000 .and. c_associated(c_loc(h(1, 1)), xfer_host_ptr(dbuf)), "an int16 view")
  call ok(xfer_host_view(dbuf, one, [integer ::]), "xfer_host_view scalar")
  call expect(one == d(1), "a scalar view sees the first element")
  call ok(xfer_host_view(dbuf, h, [0, 5]), "xfer_host_view empty")
  call expect(size(h) == 0, "an empty view")

  ! Streams the program owns cannot be wrapped on host; events have a native object.
  st = xfer_stream_wrap(ctx, c_null_ptr, wrapped)
  call expect(st == XFER_ERROR_NOT_SUPPORTED, "xfer_stream_wrap on host is XFER_ERROR_NOT_SUPPORTED")
  call expect(index(xfer_error_message(), "xfer_stream_wrap") > 0, "the message names the call: " // &
              xfer_error_message())
  call ok(xfer_event_create(ctx, XFER_EVENT_DEFAULT, ev), "xfer_event_create")
  call ok(xfer_event_create(ctx, XFER_EVENT_DISABLE_TIMING, ev2), "xfer_event_create")
  call expect(c_associated(xfer_event_native(ev)), "an event has a native object")
  call expect(.not. c_associated(xfer_event_native(ev), xfer_event_native(ev2)), "one per event")
  call ok(xfer_event_record(ev, s), "xfer_event_record")
  call ok(xfer_event_synchronize(ev), "xfer_event_synchronize")
  call ok(xfer_event_destroy(ev), "xfer_event_destroy")
  call ok(xfer_event_destroy(ev2), "xfer_event_destroy")
  call expect(.not. c_associated(xfer_event_native(ev)), "a destroyed event has none")
  st = xfer_open_name("no-such-backend", 0_c_int, s)
  call expect(st == XFER_ERROR_BACKEND_NOT_FOUND, "unknown backend is XFER_ERROR_BACKEND_NOT_FOUND")
  call expect(index(xfer_error_message(), "no-such-backend") > 0, "message names the backend")

  ! Raw copy between two Fortran arrays.
  allocate(src(4096), dst(4096))
  src = [(real(i, c_double) / 3.0_c_double, i = 1, 4096)]
  dst = 0
  call ok(xfer_memcpy_async(ctx, c_loc(dst), c_loc(src), 4096_c_size_t * c_sizeof(0.0_c_double), &
                            XFER_COPY_HOST_TO_HOST, s), "xfer_memcpy_async")
  call ok(xfer_stream_synchronize(s), "xfer_stream_synchronize")
  call expect(all(dst == src), "raw copy between Fortran arrays")

  ! Registered Fortran arrays: rank 3 real(c_double) and rank 1 integer(c_int).
  call ok(xfer_registration_get_stats(ctx, rs), "xfer_registration_get_stats")
  call expect(rs%registered_ranges == 0 .and. rs%registered_bytes == 0, "no registered ranges at first")
  allocate(reg3(40, 30, 20))
  reg3 = 1.5_c_double
  call ok(xfer_register_array(ctx, reg3), "xfer_register_array rank 3")
  call ok(xfer_register_array(ctx, regi, XFER_REGISTER_READ_ONLY), "xfer_register_array read-only")
  call ok(xfer_registration_get_stats(ctx, rs), "xfer_registration_get_stats")
  call expect(rs%registered_ranges == 2, "two registered ranges")
  call expect(rs%registered_bytes == 40 * 30 * 20 * 8 + 1000 * 4, "registered bytes are the arrays' bytes")
  call expect(rs%cache_limit_bytes == 0, "host has no registration cache")
  st = xfer_register_array(ctx, reg3)
  call expect(st == XFER_ERROR_INVALID_STATE, "registering an array twice is XFER_ERROR_INVALID_STATE")
  st = xfer_register(ctx, c_loc(reg3(1, 1, 2)), 8_c_size_t, XFER_REGISTER_DEFAULT)
  call expect(st == XFER_ERROR_INVALID_STATE, "a part of a registered array is XFER_ERROR_INVALID_STATE")
  st = xfer_register_array(ctx, src(1:4096:2))
  call expect(st == XFER_ERROR_INVALID_ARGUMENT, "a strided section is XFER_ERROR_INVALID_ARGUMENT")
  allocate(empty(0))
  st = xfer_register_array(ctx, empty)
  call expect(st == XFER_ERROR_INVALID_SIZE, "an empty array is XFER_ERROR_INVALID_SIZE")
  st = xfer_register(ctx, c_null_ptr, 64_c_size_t, XFER_REGISTER_DEFAULT)
  call expect(st == XFER_ERROR_INVALID_ARGUMENT, "a NULL pointer is XFER_ERROR_INVALID_ARGUMENT")
  st = xfer_register(ctx, c_loc(src), 0_c_size_t, XFER_REGISTER_DEFAULT)
  call expect(st == XFER_ERROR_INVALID_SIZE, "0 bytes is XFER_ERROR_INVALID_SIZE")
  call ok(xfer_registration_get_stats(ctx, rs), "xfer_registration_get_stats")
  call expect(rs%registered_ranges == 2, "refused registrations add no range")
  call ok(xfer_unregister_array(ctx, reg3), "xfer_unregister_array rank 3")
  call ok(xfer_unregister(ctx, c_loc(regi)), "xfer_unregister integer array")
  st = xfer_unregister_array(ctx, reg3)
  call expect(st == XFER_ERROR_INVALID_ARGUMENT, "unregistering twice is XFER_ERROR_INVALID_ARGUMENT")
  call ok(xfer_registration_get_stats(ctx, rs), "xfer_registration_get_stats")
  call expect(rs%registered_ranges == 0 .and. rs%registered_bytes == 0, "no registered ranges at the end")
  call expect(all(reg3 == 1.5_c_double), "a registered array keeps its values")

  call ok(xfer_free(buf), "xfer_free")
  call ok(xfer_free(dbuf), "xfer_free")
  call ok(xfer_stream_destroy(s), "xfer_stream_destroy")
  call ok(xfer_close(ctx), "xfer_close")
  call finish("PASS: Fortran round trip of real(c_float) and real(c_double) arrays on host")
end program
