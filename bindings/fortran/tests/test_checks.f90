! SPDX-License-Identifier: Apache-2.0
! The checks the Fortran tests share: a call that must succeed (else the test stops with its
! status and message), a condition that must hold (counted, the test goes on), and the end.
module xfer_test_checks
  use, intrinsic :: iso_c_binding
  use xfer
  implicit none
  private
  public :: ok, expect, finish, failures

  integer, save :: failures = 0 ! conditions that did not hold so far

contains

  subroutine ok(status, what)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= XFER_SUCCESS) then
      print "(a)", what // ": " // xfer_status_name(status) // ": " // xfer_error_message()
      error stop 1
    end if
  end subroutine

  subroutine expect(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print "(a)", "check failed: " // what
      failures = failures + 1
    end if
  end subroutine

  ! Stops with status 1 when a check failed, else prints `pass` (what the test's ctest entry
  ! looks for).
  subroutine finish(pass)
    character(len=*), intent(in) :: pass
    if (failures /= 0) then
      print *, "FAIL:", failures, "checks failed"
      error stop 1
    end if
    print "(a)", pass
  end subroutine
end module
