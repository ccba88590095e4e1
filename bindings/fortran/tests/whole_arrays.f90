! SPDX-License-Identifier: Apache-2.0
! Whole-array copies on the `host` backend (whose device view is host memory, so what arrived
! there can be read back directly):
!  - real(c_double) and integer(c_int32_t) arrays of rank 1, 2 and 3 to the device and back,
!    through a buffer (xfer_copy_to_device / _to_host, at offset 0 and further in) and through
!    a raw device pointer (xfer_memcpy_to_device / _to_host), every element checked on the
!    device view and after the way back; the other kinds at rank 2, a scalar, an expression,
!    a contiguous section;
!  - refusals: an array larger than what the buffer has left, a strided section, a pointer to
!    one, an empty array, a negative offset, a freed buffer, a stream of another context; each
!    with its status, nothing written, and xfer_error_message() giving this failure's message
!    (not an earlier one's), including a library failure right after a refusal.
! Prints PASS and stops 0 on success.
program whole_arrays
  use, intrinsic :: iso_c_binding
  use xfer
  use xfer_test_checks
  implicit none
  type(c_ptr) :: ctx, ctx2, s, s2, big, small, gone, dptr
  real(c_double), allocatable, target :: d1(:), d2(:, :), d3(:, :, :)
  real(c_double), allocatable :: b1(:), b2(:, :), b3(:, :, :), empty(:)
  real(c_double), pointer :: strided(:, :)
  real(c_double) :: scalar, scalar_back
  integer(c_int32_t), allocatable :: i1(:), i2(:, :), i3(:, :, :), j1(:), j2(:, :), j3(:, :, :)
  integer(c_int8_t), allocatable :: k8(:, :), k8_back(:, :)
  integer(c_int16_t), allocatable :: k16(:, :), k16_back(:, :)
  integer(c_int64_t), allocatable :: k64(:, :), k64_back(:, :)
  real(c_float), allocatable :: f2(:, :), f2_back(:, :)
  complex(c_float_complex), allocatable :: c2(:, :), c2_back(:, :)
  complex(c_double_complex), allocatable :: z2(:, :), z2_back(:, :)
  integer(c_int8_t), pointer :: small_dev(:)
  integer(c_int) :: st
  integer :: i, j, k
  character(len=:), allocatable :: msg

  call ok(xfer_open_name("host", 0_c_int, ctx), "xfer_open")
  call ok(xfer_stream_create(ctx, s), "xfer_stream_create")
  call ok(xfer_alloc(ctx, 1048576_c_size_t, XFER_ALLOC_DEFAULT, big), "xfer_alloc 1 MiB")

  ! ---------------------------------------------------------------- real(c_double), ranks 1-3
  allocate(d1(1000), b1(1000))
  d1 = [(real(i, c_double) * 0.25_c_double - 3.0_c_double, i = 1, 1000)]
  call ok(xfer_copy_to_device(ctx, big, d1, s), "xfer_copy_to_device rank-1 double")
  call expect(device_holds_double(big, 0_c_size_t, d1), "rank-1 doubles are on the device")
  b1 = -1
  call ok(xfer_copy_to_host(ctx, b1, big, s), "xfer_copy_to_host rank-1 double")
  call expect(all(b1 == d1), "rank-1 doubles came back")

  allocate(d2(37, 11), b2(37, 11))
  do j = 1, 11
    do i = 1, 37
      d2(i, j) = real(i, c_double) * 1.0e3_c_double + real(j, c_double) / 7.0_c_double
    end do
  end do
  call ok(xfer_copy_to_device(ctx, big, d2, s, 8192_c_size_t), "xfer_copy_to_device rank-2 double at 8192")
  call expect(device_holds_double(big, 8192_c_size_t, pack(d2, .true.)), "rank-2 doubles are on the device at 8192")
  call expect(device_holds_double(big, 0_c_size_t, d1), "the copy at 8192 left the bytes before it alone")
  b2 = -1
  call ok(xfer_copy_to_host(ctx, b2, big, s, 8192_c_size_t), "xfer_copy_to_host rank-2 double at 8192")
  call expect(all(b2 == d2), "rank-2 doubles came back")

  allocate(d3(5, 6, 7), b3(5, 6, 7))
  do k = 1, 7
    do j = 1, 6
      do i = 1, 5
        d3(i, j, k) = sin(real(i + 10 * j + 100 * k, c_double)) * 1.0e6_c_double
      end do
    end do
  end do
  dptr = device_at(big, 65536_c_size_t)
  call ok(xfer_memcpy_to_device(ctx, dptr, d3, s), "xfer_memcpy_to_device rank-3 double")
  call expect(device_holds_double(big, 65536_c_size_t, pack(d3, .true.)), "rank-3 doubles are at the raw pointer")
  b3 = 0
  call ok(xfer_memcpy_to_host(ctx, b3, dptr, s), "xfer_memcpy_to_host rank-3 double")
  call expect(all(b3 == d3), "rank-3 doubles came back through the raw pointer")

  ! --------------------------------------------------------------- integer(c_int32_t), ranks 1-3
  allocate(i1(4099), j1(4099))
  i1 = [(int(i, c_int32_t) * 65521_c_int32_t - 100000000_c_int32_t, i = 1, 4099)]
  dptr = device_at(big, 200000_c_size_t)
  call ok(xfer_memcpy_to_device(ctx, dptr, i1, s), "xfer_memcpy_to_device rank-1 int32")
  call expect(device_holds_int32(big, 200000_c_size_t, i1), "rank-1 int32 are at the raw pointer")
  j1 = 0
  call ok(xfer_memcpy_to_host(ctx, j1, dptr, s), "xfer_memcpy_to_host rank-1 int32")
  call expect(all(j1 == i1), "rank-1 int32 came back")

  allocate(i2(100, 3), j2(100, 3))
  i2 = reshape([(int(-i * 31, c_int32_t), i = 1, 300)], shape(i2))
  call ok(xfer_copy_to_device(ctx, big, i2, s, 4_c_size_t), "xfer_copy_to_device rank-2 int32 at 4")
  call expect(device_holds_int32(big, 4_c_size_t, pack(i2, .true.)), "rank-2 int32 are on the device at 4")
  j2 = 0
  call ok(xfer_copy_to_host(ctx, j2, big, s, 4_c_size_t), "xfer_copy_to_host rank-2 int32 at 4")
  call expect(all(j2 == i2), "rank-2 int32 came back")

  allocate(i3(8, 9, 10), j3(8, 9, 10))
  i3 = reshape([(int(i, c_int32_t) ** 2, i = 1, 720)], shape(i3))
  call ok(xfer_copy_to_device(ctx, big, i3, s), "xfer_copy_to_device rank-3 int32")
  call expect(device_holds_int32(big, 0_c_size_t, pack(i3, .true.)), "rank-3 int32 are on the device")
  j3 = 0
  call ok(xfer_copy_to_host(ctx, j3, big, s), "xfer_copy_to_host rank-3 int32")
  call expect(all(j3 == i3), "rank-3 int32 came back")

  ! --------------------------------------------------------- the other kinds, a scalar, more
  allocate(k8(33, 3), k8_back(33, 3), k16(33, 3), k16_back(33, 3), k64(33, 3), k64_back(33, 3))
  allocate(f2(33, 3), f2_back(33, 3), c2(33, 3), c2_back(33, 3), z2(33, 3), z2_back(33, 3))
  k8 = reshape([(int(mod(i * 37, 256) - 128, c_int8_t), i = 1, 99)], shape(k8))
  k16 = reshape([(int(i * 331 - 16000, c_int16_t), i = 1, 99)], shape(k16))
  k64 = reshape([(int(i, c_int64_t) * 100000000007_c_int64_t, i = 1, 99)], shape(k64))
  f2 = reshape([(real(i, c_float) / 3.0_c_float, i = 1, 99)], shape(f2))
  c2 = reshape([(cmplx(i, -i, c_float_complex), i = 1, 99)], shape(c2))
  z2 = reshape([(cmplx(real(i, c_double) / 7, -real(i, c_double), c_double_complex), i = 1, 99)], shape(z2))
  k8_back = 0
  k16_back = 0
  k64_back = 0
  f2_back = 0
  c2_back = 0
  z2_back = 0
  call ok(xfer_copy_to_device(ctx, big, k8, s, 1_c_size_t), "int8 to device")
  call ok(xfer_copy_to_host(ctx, k8_back, big, s, 1_c_size_t), "int8 to host")
  call expect(all(k8_back == k8), "int8 came back")
  call ok(xfer_copy_to_device(ctx, big, k16, s), "int16 to device")
  call ok(xfer_copy_to_host(ctx, k16_back, big, s), "int16 to host")
  call expect(all(k16_back == k16), "int16 came back")
  call ok(xfer_copy_to_device(ctx, big, k64, s), "int64 to device")
  call ok(xfer_copy_to_host(ctx, k64_back, big, s), "int64 to host")
  call expect(all(k64_back == k64), "int64 came back")
  call ok(xfer_copy_to_device(ctx, big, f2, s), "float to device")
  call ok(xfer_copy_to_host(ctx, f2_back, big, s), "float to host")
  call expect(all(f2_back == f2), "float came back")
  call ok(xfer_copy_to_device(ctx, big, c2, s), "complex(c_float_complex) to device")
  call ok(xfer_copy_to_host(ctx, c2_back, big, s), "complex(c_float_complex) to host")
  call expect(all(c2_back == c2), "complex(c_float_complex) came back")
  call ok(xfer_copy_to_device(ctx, big, z2, s, 16_c_size_t), "complex(c_double_complex) to device")
  call expect(device_holds_double(big, 16_c_size_t, [(real(z2(i, 1)), aimag(z2(i, 1)), i = 1, 33)]), &
              "complex(c_double_complex) on the device as (re, im) pairs")
  call ok(xfer_copy_to_host(ctx, z2_back, big, s, 16_c_size_t), "complex(c_double_complex) to host")
  call expect(all(z2_back == z2), "complex(c_double_complex) came back")

  scalar = 42.125_c_double
  scalar_back = 0
  call ok(xfer_copy_to_device(ctx, big, scalar, s, 1048568_c_size_t), "a scalar into the last 8 bytes")
  call ok(xfer_copy_to_host(ctx, scalar_back, big, s, 1048568_c_size_t), "the scalar back")
  call expect(scalar_back == 42.125_c_double, "a scalar came back")

  ! An expression's temporary: the copy is done when the call returns, so it is safe.
  call ok(xfer_copy_to_device(ctx, big, 2.0_c_double * d1 + 1.0_c_double, s), "an expression to device")
  b1 = 0
  call ok(xfer_copy_to_host(ctx, b1, big, s), "the expression back")
  call expect(all(b1 == 2.0_c_double * d1 + 1.0_c_double), "an expression's values came back")

  ! A contiguous section is fine, into a contiguous section of another array.
  call ok(xfer_copy_to_device(ctx, big, d2(:, 3:5), s), "a contiguous section to device")
  b2 = -1
  call ok(xfer_copy_to_host(ctx, b2(:, 7:9), big, s), "into a contiguous section")
  call expect(all(b2(:, 7:9) == d2(:, 3:5)) .and. all(b2(:, 1:6) == -1) .and. all(b2(:, 10:) == -1), &
              "a section came back into its place only")

  ! ------------------------------------------------------------------------------ refusals
  call ok(xfer_alloc(ctx, 100_c_size_t, XFER_ALLOC_DEFAULT, small), "xfer_alloc 100 bytes")
  call c_f_pointer(xfer_device_ptr(small), small_dev, [100])
  small_dev = 90_c_int8_t

  ! A library failure first, so that a stale message would show.
  st = xfer_open_name("no-such-backend", 0_c_int, ctx2)
  call expect(st == XFER_ERROR_BACKEND_NOT_FOUND, "unknown backend refused")
  call expect(index(xfer_error_message(), "no-such-backend") > 0, "library message names the backend")

  ! 8000 bytes into a 100-byte buffer.
  st = xfer_copy_to_device(ctx, small, d1, s)
  msg = xfer_error_message()
  call expect(st == XFER_ERROR_OUT_OF_BOUNDS, "an array larger than the buffer is XFER_ERROR_OUT_OF_BOUNDS")
  call expect(index(msg, "xfer_copy_to_device: ") == 1, "the message names xfer_copy_to_device: " // msg)
  call expect(index(msg, "8000 bytes") > 0 .and. index(msg, "100-byte buffer") > 0, "the message gives sizes: " // msg)
  call expect(index(msg, "no-such-backend") == 0, "the message is not the earlier failure's: " // msg)
  call expect(all(small_dev == 90_c_int8_t), "a refused copy wrote nothing")
  b1 = -5
  st = xfer_copy_to_host(ctx, b1, small, s)
  msg = xfer_error_message()
  call expect(st == XFER_ERROR_OUT_OF_BOUNDS, "an array larger than the buffer is refused to host too")
  call expect(index(msg, "xfer_copy_to_host: ") == 1 .and. index(msg, "8000 bytes") > 0, "to-host message: " // msg)
  call expect(all(b1 == -5), "a refused copy to the host wrote nothing")
  ! 25 int32 (100 bytes) fit at offset 0, not at 4; a negative offset never does.
  call ok(xfer_copy_to_device(ctx, small, i1(1:25), s), "exactly the buffer's size")
  st = xfer_copy_to_device(ctx, small, i1(1:25), s, 4_c_size_t)
  call expect(st == XFER_ERROR_OUT_OF_BOUNDS, "100 bytes at offset 4 of 100 are refused")
  call expect(index(xfer_error_message(), "at offset 4 ") > 0, "the message gives the offset: " // xfer_error_message())
  st = xfer_copy_to_host(ctx, j1(1:1), small, s, -8_c_size_t)
  call expect(st == XFER_ERROR_OUT_OF_BOUNDS, "a negative offset is refused")
  st = xfer_copy_to_host(ctx, j1(1:1), small, s, 100_c_size_t)
  call expect(st == XFER_ERROR_OUT_OF_BOUNDS, "an offset at the end is refused")

  ! Not contiguous: a strided section and a pointer to one, never copied through a temporary.
  st = xfer_copy_to_device(ctx, big, d1(1:1000:2), s)
  msg = xfer_error_message()
  call expect(st == XFER_ERROR_INVALID_ARGUMENT, "a strided section is XFER_ERROR_INVALID_ARGUMENT")
  call expect(index(msg, "xfer_copy_to_device: ") == 1 .and. index(msg, "not contiguous") > 0, &
              "the message says not contiguous: " // msg)
  call expect(index(msg, "real(c_double)") > 0, "the message names the type: " // msg)
  strided => d2(2:3, :)
  b2 = -7
  st = xfer_copy_to_host(ctx, b2(1:37:3, :), big, s)
  call expect(st == XFER_ERROR_INVALID_ARGUMENT, "a strided section to host is refused")
  call expect(all(b2 == -7), "a refused copy into a section wrote nothing")
  st = xfer_memcpy_to_device(ctx, xfer_device_ptr(big), strided, s)
  call expect(st == XFER_ERROR_INVALID_ARGUMENT, "a pointer to a strided section is refused")
  msg = xfer_error_message()
  call expect(index(msg, "xfer_memcpy_to_device: ") == 1, "raw form's message: " // msg)
  st = xfer_memcpy_to_host(ctx, i2(1:100:2, :), xfer_device_ptr(big), s)
  call expect(st == XFER_ERROR_INVALID_ARGUMENT, "a strided int32 section to host is refused")
  call expect(index(xfer_error_message(), "integer(c_int32_t) array is not contiguous") > 0, &
              "int32 message: " // xfer_error_message())

  allocate(empty(0))
  st = xfer_copy_to_device(ctx, big, empty, s)
  call expect(st == XFER_ERROR_INVALID_SIZE, "an empty array is XFER_ERROR_INVALID_SIZE")
  call expect(index(xfer_error_message(), "empty") > 0, "the message says empty: " // xfer_error_message())

  ! A library failure inside a helper: the library's message, not the note before it.
  call ok(xfer_alloc(ctx, 64_c_size_t, XFER_ALLOC_DEFAULT, gone), "xfer_alloc")
  call ok(xfer_free(gone), "xfer_free")
  st = xfer_copy_to_device(ctx, gone, i1(1:4), s)
  msg = xfer_error_message()
  call expect(st == XFER_ERROR_INVALID_HANDLE, "a freed buffer is XFER_ERROR_INVALID_HANDLE")
  call expect(msg == xfer_f_string(xfer_last_error()) .and. len(msg) > 0, "the library's message: " // msg)
  call expect(index(msg, "empty") == 0, "not the earlier refusal's message: " // msg)
  call ok(xfer_open_name("host", 0_c_int, ctx2), "a second context")
  call ok(xfer_stream_create(ctx2, s2), "its stream")
  st = xfer_copy_to_device(ctx, big, d1, s2)
  msg = xfer_error_message()
  call expect(st == XFER_ERROR_INVALID_HANDLE, "a stream of another context is XFER_ERROR_INVALID_HANDLE")
  call expect(len(msg) > 0 .and. index(msg, "empty") == 0, "the library's message for the foreign stream: " // msg)

  ! A raw library call failing after a refusal: its message is the latest.
  st = xfer_copy_to_device(ctx, big, d1(1:10:3), s)
  call expect(index(xfer_error_message(), "not contiguous") > 0, "the refusal's message")
  st = xfer_copy_async(big, XFER_TO_DEVICE, 1048570_c_size_t, 16_c_size_t, s)
  msg = xfer_error_message()
  call expect(st == XFER_ERROR_OUT_OF_BOUNDS, "raw copy past the end")
  call expect(msg == xfer_f_string(xfer_last_error()) .and. index(msg, "not contiguous") == 0, &
              "a later library failure's message wins: " // msg)
  ! A success changes nothing (as xfer_last_error): the message stays.
  call ok(xfer_copy_to_device(ctx, big, d1, s), "a copy that works")
  call expect(xfer_error_message() == msg, "a success leaves the message as it was")

  call ok(xfer_close(ctx2), "xfer_close second context")
  call ok(xfer_close(ctx), "xfer_close")
  call finish("PASS: Fortran whole arrays: ranks 0-3, eight kinds, buffers and raw pointers, refusals and messages")

contains

  ! The address `offset` bytes into buffer b's device view.
  type(c_ptr) function device_at(b, offset) result(p)
    type(c_ptr), intent(in) :: b
    integer(c_size_t), intent(in) :: offset
    integer(c_int8_t), pointer :: bytes(:)
    call c_f_pointer(xfer_device_ptr(b), bytes, [xfer_buffer_size(b)])
    p = c_loc(bytes(offset + 1))
  end function

  ! Buffer b's device view holds `expect` from byte `offset` (host: the device view is host memory).
  logical function device_holds_double(b, offset, expect) result(same)
    type(c_ptr), intent(in) :: b
    integer(c_size_t), intent(in) :: offset
    real(c_double), intent(in) :: expect(:)
    real(c_double), pointer :: v(:)
    call c_f_pointer(device_at(b, offset), v, [size(expect)])
    same = all(v == expect)
  end function

  logical function device_holds_int32(b, offset, expect) result(same)
    type(c_ptr), intent(in) :: b
    integer(c_size_t), intent(in) :: offset
    integer(c_int32_t), intent(in) :: expect(:)
    integer(c_int32_t), pointer :: v(:)
    call c_f_pointer(device_at(b, offset), v, [size(expect)])
    same = all(v == expect)
  end function
end program
