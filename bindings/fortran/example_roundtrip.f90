! SPDX-License-Identifier: Apache-2.0
program example_roundtrip
  use, intrinsic :: iso_c_binding
  use xfer
  implicit none
  type(c_ptr) :: ctx, buf, s
  real(c_double), pointer :: a(:, :)
  integer(c_size_t) :: bytes
  integer :: i

  call check(xfer_open_name("", -1_c_int, ctx))          ! backend from XFER_BACKEND / XFER_CONFIG
  bytes = 512_c_size_t * 256_c_size_t * c_sizeof(0.0_c_double)
  call check(xfer_alloc(ctx, bytes, XFER_ALLOC_DEFAULT, buf))
  call check(xfer_stream_create(ctx, s))
  call check(xfer_host_view(buf, a, [512, 256]))          ! the host view as a 512 x 256 array
  a = reshape([(real(i, c_double), i = 1, size(a))], shape(a))
  call check(xfer_copy_async(buf, XFER_TO_DEVICE, 0_c_size_t, bytes, s))
  call check(xfer_copy_async(buf, XFER_TO_HOST, 0_c_size_t, bytes, s))
  call check(xfer_stream_synchronize(s))
  if (any(a /= reshape([(real(i, c_double), i = 1, size(a))], shape(a)))) error stop "mismatch"
  print "(a, i0, a)", "fortran: ", size(a), " doubles round-tripped intact"
  call check(xfer_free(buf))
  call check(xfer_stream_destroy(s))
  call check(xfer_close(ctx))
contains
  subroutine check(st)
    integer(c_int), intent(in) :: st
    if (st /= XFER_SUCCESS) then
      print "(a)", xfer_status_name(st) // ": " // xfer_error_message()
      error stop 1
    end if
  end subroutine
end program
