! SPDX-License-Identifier: Apache-2.0
program example_roundtrip
  use, intrinsic :: iso_c_binding
  use xfer
  implicit none
  type(c_ptr) :: ctx, buf, s
  real(c_double) :: a(512, 256), back(512, 256)
  integer :: i

  a = reshape([(real(i, c_double), i = 1, size(a))], shape(a))
  call check(xfer_open_name("", -1_c_int, ctx))                     ! backend from XFER_BACKEND / XFER_CONFIG
  call check(xfer_alloc(ctx, c_sizeof(a), XFER_ALLOC_DEFAULT, buf)) ! device memory for a
  call check(xfer_stream_create(ctx, s))
  call check(xfer_copy_to_device(ctx, buf, a, s))                   ! the whole array: any rank, any kind
  call check(xfer_copy_to_host(ctx, back, buf, s))                  ! returns once back holds it
  if (any(back /= a)) error stop "mismatch"
  print "(a, i0, a)", "fortran: ", size(a), " doubles round-tripped intact"
  call check(xfer_close(ctx))                                       ! frees the buffer and the stream too
contains
  subroutine check(st)
    integer(c_int), intent(in) :: st
    if (st /= XFER_SUCCESS) then
      print "(a)", xfer_status_name(st) // ": " // xfer_error_message()
      error stop 1
    end if
  end subroutine
end program
