! SPDX-License-Identifier: Apache-2.0
! xfer_fortran_bench: whole Fortran arrays (allocatable, so pageable host memory) to a buffer's
! device memory and back with xfer_copy_to_device / xfer_copy_to_host, through the pageable
! backend and the pinned backend (its registration cache page-locks the array on first use),
! in one process: the backends alternate within each repeat, after warm-up rounds. Each copy
! returns once the bytes are there, so the host clock around the call is the copy's time.
! Prints GB/s (10^9 bytes per second; MiB and GiB are powers of 1024), medians of the repeats,
! and the ratio pageable / pinned; every size's result is checked element for element.
!
!   xfer_fortran_bench [REPEATS [FIRST SECOND]]   (default 7 repeats of pageable against pinned)
program bench_arrays
  use, intrinsic :: iso_c_binding
  use xfer
  implicit none
  character(len=16) :: names(2) = [character(len=16) :: "pageable", "pinned"]
  integer(c_int64_t), parameter :: mib = 1048576_c_int64_t
  integer(c_int64_t), parameter :: sizes(3) = [64_c_int64_t * mib, 256_c_int64_t * mib, 1024_c_int64_t * mib]
  integer, parameter :: warmup = 2
  type(c_ptr) :: ctx(2), s(2), buf(2)
  real(c_float), allocatable :: a(:), back(:)
  real(c_double), allocatable :: h2d(:, :), d2h(:, :)
  real(c_double) :: med_h2d(2), med_d2h(2)
  integer :: repeats, b, k, r, n
  character(len=32) :: arg

  repeats = 7
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) repeats
  end if
  if (command_argument_count() >= 3) then
    call get_command_argument(2, names(1))
    call get_command_argument(3, names(2))
  end if
  allocate (h2d(repeats, 2), d2h(repeats, 2))
  do b = 1, 2
    call check(xfer_open_name(trim(names(b)), 0_c_int, ctx(b)), "xfer_open " // trim(names(b)))
    call check(xfer_stream_create(ctx(b), s(b)), "xfer_stream_create")
  end do
  print "(a)", "| size | backend | H2D GB/s | D2H GB/s | H2D first/second | D2H first/second |"
  print "(a)", "| --- | --- | ---: | ---: | ---: | ---: |"
  do k = 1, size(sizes)
    n = int(sizes(k) / 4)
    allocate (a(n), back(n))
    call random_number(a)
    do b = 1, 2
      call check(xfer_alloc(ctx(b), int(sizes(k), c_size_t), XFER_ALLOC_DEFAULT, buf(b)), "xfer_alloc")
    end do
    do r = 1, warmup + repeats
      do b = 1, 2
        call timed_round(b, r - warmup)
      end do
    end do
    do b = 1, 2
      back = 0
      call check(xfer_copy_to_device(ctx(b), buf(b), a, s(b)), "xfer_copy_to_device")
      call check(xfer_copy_to_host(ctx(b), back, buf(b), s(b)), "xfer_copy_to_host")
      if (any(back /= a)) error stop "bench_arrays: the bytes came back changed"
      med_h2d(b) = median(h2d(:, b))
      med_d2h(b) = median(d2h(:, b))
      call check(xfer_free(buf(b)), "xfer_free")
    end do
    do b = 1, 2
      if (b == 1) then
        print "(a, i0, a, a, a, f6.1, a, f6.1, a, f5.2, a, f5.2, a)", "| ", sizes(k) / mib, " MiB | ", trim(names(b)), &
          " | ", med_h2d(b), " | ", med_d2h(b), " | ", med_h2d(1) / med_h2d(2), "x | ", med_d2h(1) / med_d2h(2), "x |"
      else
        print "(a, i0, a, a, a, f6.1, a, f6.1, a)", "| ", sizes(k) / mib, " MiB | ", trim(names(b)), " | ", &
          med_h2d(b), " | ", med_d2h(b), " |  |  |"
      end if
    end do
    deallocate (a, back)
  end do
  do b = 1, 2
    call check(xfer_close(ctx(b)), "xfer_close")
  end do
contains
  ! One to-device and one to-host copy of the whole array on backend b; repeat r > 0 is kept.
  subroutine timed_round(b, r)
    integer, intent(in) :: b, r
    integer(c_int64_t) :: t0, t1, rate
    call system_clock(t0, rate)
    call check(xfer_copy_to_device(ctx(b), buf(b), a, s(b)), "xfer_copy_to_device")
    call system_clock(t1)
    if (r > 0) h2d(r, b) = real(sizes(k), c_double) / (real(t1 - t0, c_double) / real(rate, c_double)) / 1.0d9
    call system_clock(t0)
    call check(xfer_copy_to_host(ctx(b), back, buf(b), s(b)), "xfer_copy_to_host")
    call system_clock(t1)
    if (r > 0) d2h(r, b) = real(sizes(k), c_double) / (real(t1 - t0, c_double) / real(rate, c_double)) / 1.0d9
  end subroutine

  real(c_double) function median(x)
    real(c_double), intent(in) :: x(:)
    real(c_double) :: y(size(x)), t
    integer :: i, j
    y = x
    do i = 2, size(y)
      t = y(i)
      j = i - 1
      do while (j >= 1)
        if (y(j) <= t) exit
        y(j + 1) = y(j)
        j = j - 1
      end do
      y(j + 1) = t
    end do
    if (mod(size(y), 2) == 1) then
      median = y((size(y) + 1) / 2)
    else
      median = (y(size(y) / 2) + y(size(y) / 2 + 1)) / 2
    end if
  end function

  subroutine check(st, what)
    integer(c_int), intent(in) :: st
    character(len=*), intent(in) :: what
    if (st /= XFER_SUCCESS) then
      print "(a)", what // ": " // xfer_status_name(st) // ": " // xfer_error_message()
      error stop 1
    end if
  end subroutine
end program
