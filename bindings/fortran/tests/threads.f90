! SPDX-License-Identifier: Apache-2.0
! xfer_error_message() is per thread for the helpers' own refusals too, as xfer_last_error() is
! for the library's: four OpenMP threads each have xfer_host_view refuse a shape of their own,
! wait for one another, then each finds its own refusal's message, many times over. (Were the
! note shared, every thread would read the last writer's.) The messages are read with
! xfer_get_error_message: the function form is not safe from threads under gfortran 12.
! Prints PASS and stops 0 on success.
program threads
  use, intrinsic :: iso_c_binding
  use omp_lib
  use xfer
  implicit none
  integer, parameter :: nthreads = 4, rounds = 200
  type(c_ptr) :: ctx, buf
  integer :: failures

  failures = 0
  if (xfer_open_name("host", 0_c_int, ctx) /= XFER_SUCCESS) error stop "xfer_open"
  if (xfer_alloc(ctx, 64_c_size_t, XFER_ALLOC_DEFAULT, buf) /= XFER_SUCCESS) error stop "xfer_alloc"
  !$omp parallel num_threads(nthreads) reduction(+:failures)
  call refuse_and_read(omp_get_thread_num(), failures)
  !$omp end parallel
  if (xfer_close(ctx) /= XFER_SUCCESS) error stop "xfer_close"
  if (failures /= 0) then
    print *, "FAIL:", failures, "checks failed"
    error stop 1
  end if
  print "(a)", "PASS: Fortran helper messages are per thread"

contains

  ! One thread's rounds; its locals are its own (a procedure's, not a construct's).
  subroutine refuse_and_read(thread, failures)
    integer, intent(in) :: thread
    integer, intent(inout) :: failures
    real(c_double), pointer :: v(:)
    character(len=40) :: want
    character(len=:), allocatable :: msg
    integer :: round, extent
    do round = 1, rounds
      extent = 1000 * (thread + 1) + round
      write (want, "(a, i0, a)") "a ", extent, " real(c_double) view"
      if (xfer_host_view(buf, v, [extent]) /= XFER_ERROR_OUT_OF_BOUNDS) failures = failures + 1
      !$omp barrier
      call xfer_get_error_message(msg) ! not the function: see xfer_get_error_message
      if (index(msg, trim(want)) == 0) then
        !$omp critical
        print "(a)", "check failed: a thread wanted '" // trim(want) // "', read: " // msg
        !$omp end critical
        failures = failures + 1
      end if
      !$omp barrier
    end do
  end subroutine
end program
