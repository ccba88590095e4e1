// SPDX-License-Identifier: Apache-2.0
//! The memory-safety rule on the `host` backend: a forgotten guard cannot make safe code race
//! with a queued copy (the host view waits), copies of one buffer run in queue order across
//! streams, slices round-trip byte for byte through `Stream::scope`, bad sizes are errors.
//!
//! Copies are held up on purpose behind a gate: a host function on the stream that blocks until
//! a helper thread opens it, some time later. A call that waits for such a copy therefore
//! returns after the gate opened; one that did not wait would return before.
// Forgetting a Pending (a type without Drop) is what these tests are about.
#![allow(clippy::forget_non_drop)]
use std::os::raw::c_void;
use std::sync::{Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use xfer::{sys, Buffer, Context, Direction, Stream};

const MIB: usize = 1 << 20;
const HOLD_MS: u64 = 200;

fn host() -> Context {
    Context::open(Some("host"), 0).expect("open host")
}

struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

unsafe extern "C" fn wait_at_gate(gate: *mut c_void) {
    let gate = &*(gate as *const Gate);
    let mut open = gate.open.lock().unwrap();
    while !*open {
        open = gate.opened.wait(open).unwrap();
    }
}

// Holds up the work queued on `s` after this call until a helper thread opens the gate,
// HOLD_MS from now; joining the helper gives the time it opened it.
fn hold(s: &Stream<'_>) -> JoinHandle<Instant> {
    // Leaked: the stream's worker may still read it after the test is done with it.
    let gate: &'static Gate = Box::leak(Box::new(Gate { open: Mutex::new(false), opened: Condvar::new() }));
    let ptr = gate as *const Gate as *mut c_void;
    let st = unsafe { sys::xfer_stream_launch_host_func(s.as_raw(), Some(wait_at_gate), ptr) };
    assert_eq!(st, sys::XFER_SUCCESS, "{}", xfer::last_error());
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(HOLD_MS));
        let at = Instant::now();
        *gate.open.lock().unwrap() = true;
        gate.opened.notify_all();
        at
    })
}

// Asserts that something that returned at `returned` waited for the gate `opened`.
fn waited_for(opened: JoinHandle<Instant>, returned: Instant, what: &str) {
    let opened = opened.join().unwrap();
    assert!(returned >= opened, "{what} returned {:?} before the held-up copy could run", opened - returned);
}

// The host backend's device view is host memory: read it directly (nothing is queued then).
fn device_bytes<'a>(buf: &'a Buffer<'_>) -> &'a [u8] {
    buf.synchronize().unwrap();
    unsafe { std::slice::from_raw_parts(buf.device_ptr() as *const u8, buf.len()) }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 12) as u8).collect()
}

#[test]
fn forgotten_copy_to_device_makes_host_mut_wait() {
    let ctx = host();
    let s = ctx.stream().unwrap();
    let mut buf = ctx.alloc(64 * MIB, 0).unwrap();
    let a = pattern(64 * MIB, 1);
    buf.host_mut().unwrap().copy_from_slice(&a);
    let gate = hold(&s);
    std::mem::forget(buf.copy_async(Direction::ToDevice, &s).unwrap());
    assert!(!buf.query().unwrap(), "the copy should still be held up");
    buf.host_mut().unwrap().fill(0xee); // must wait for the copy before handing out the memory
    waited_for(gate, Instant::now(), "host_mut");
    assert!(buf.query().unwrap());
    // The device got every byte of what was there when the copy was queued, none of the 0xee.
    let dev = device_bytes(&buf);
    assert!(dev == &a[..], "device view differs from the copied data at byte {:?}",
            dev.iter().zip(&a).position(|(x, y)| x != y));
    assert!(buf.host().unwrap().iter().all(|&b| b == 0xee));
}

#[test]
fn forgotten_copy_to_host_makes_host_wait() {
    let ctx = host();
    let s = ctx.stream().unwrap();
    let mut buf = ctx.alloc(64 * MIB, 0).unwrap();
    let a = pattern(64 * MIB, 2);
    buf.host_mut().unwrap().copy_from_slice(&a);
    buf.copy(Direction::ToDevice, 0, buf.len()).unwrap();
    buf.host_mut().unwrap().fill(0);
    let gate = hold(&s);
    let pending = buf.copy_async(Direction::ToHost, &s).unwrap();
    assert!(!pending.query().unwrap());
    std::mem::forget(pending);
    let h = buf.host().unwrap(); // waits: the copy is still writing this memory otherwise
    waited_for(gate, Instant::now(), "host");
    assert!(h == &a[..]);
    // A dropped Pending is the same: the next access waits.
    buf.host_mut().unwrap().fill(0);
    let gate = hold(&s);
    drop(buf.copy_async(Direction::ToHost, &s).unwrap());
    assert!(buf.host_as::<u8>().unwrap() == &a[..]);
    waited_for(gate, Instant::now(), "host_as");
    // Buffer::copy waits for the forgotten copy before its own.
    buf.host_mut().unwrap().fill(0);
    let gate = hold(&s);
    std::mem::forget(buf.copy_async(Direction::ToHost, &s).unwrap());
    buf.copy(Direction::ToDevice, 0, buf.len()).unwrap(); // sends what the forgotten copy wrote
    waited_for(gate, Instant::now(), "copy");
    assert!(device_bytes(&buf) == &a[..]);
}

#[test]
fn copies_of_one_buffer_keep_queue_order_across_streams() {
    let ctx = host();
    let (s1, s2) = (ctx.stream().unwrap(), ctx.stream().unwrap());
    let mut buf = ctx.alloc(16 * MIB, 0).unwrap();
    let a = pattern(16 * MIB, 3);
    buf.host_mut().unwrap().copy_from_slice(&a);
    let gate = hold(&s1);
    std::mem::forget(buf.copy_async(Direction::ToDevice, &s1).unwrap());
    // Queued on another stream after the forgotten copy: it must run after it, so the host view
    // comes back with `a`, not with whatever the device view held before.
    buf.copy_async(Direction::ToHost, &s2).unwrap().wait().unwrap();
    waited_for(gate, Instant::now(), "the copy on the other stream");
    assert!(buf.host().unwrap() == &a[..]);
    // Slice copies take part in the order too.
    let b = pattern(16 * MIB, 4);
    let gate = hold(&s1);
    std::mem::forget(buf.copy_async(Direction::ToHost, &s1).unwrap()); // reads the device view: `a`
    buf.write_device(0, &b, &s2).unwrap(); // must wait for that read before overwriting it
    waited_for(gate, Instant::now(), "write_device");
    assert!(buf.host().unwrap() == &a[..]);
    assert!(device_bytes(&buf) == &b[..]);
}

#[test]
fn slices_round_trip_byte_for_byte() {
    let ctx = host();
    let s = ctx.stream().unwrap();
    let mut buf = ctx.alloc(8 * MIB + 24, 0).unwrap();

    // u8 at an odd offset, sync forms.
    let src = pattern(3 * MIB + 5, 5);
    buf.write_device(7, &src, &s).unwrap();
    let mut back = vec![0u8; src.len()];
    buf.read_device(7, &mut back, &s).unwrap();
    assert!(back == src);
    assert!(device_bytes(&buf)[7..7 + src.len()] == src[..]);

    // f32, u64 and arrays in one scope: to the device and back in stream order.
    let f: Vec<f32> = (0..100_003).map(|i| (i as f32).sin() * 1e3).collect();
    let q: Vec<u64> = (0..4099u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    let rgb: Vec<[u16; 3]> = (0..777u16).map(|i| [i, i ^ 0x5a5a, !i]).collect();
    let (mut f2, mut q2, mut rgb2) = (vec![0f32; f.len()], vec![0u64; q.len()], vec![[0u16; 3]; rgb.len()]);
    let (fo, qo, ro) = (3 * MIB + 16, 4 * MIB, 6 * MIB + 2); // clear of `src` at 7
    s.scope(|sc| {
        sc.copy_to_device(&f, &mut buf, fo)?;
        sc.copy_to_device(&q, &mut buf, qo)?;
        sc.copy_to_device(&rgb, &mut buf, ro)?;
        sc.copy_from_device(&buf, fo, &mut f2)?;
        sc.copy_from_device(&buf, qo, &mut q2)?;
        sc.copy_from_device(&buf, ro, &mut rgb2)
    })
    .unwrap();
    assert_eq!(f2, f);
    assert_eq!(q2, q);
    assert_eq!(rgb2, rgb);
    let bytes = |v: &[u8], at: usize| device_bytes(&buf)[at..at + v.len()] == *v;
    assert!(bytes(&f.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<_>>(), fo));
    assert!(bytes(&q.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<_>>(), qo));

    // The device view of one buffer into the host view of another, and a buffer copy back.
    let mut other = ctx.alloc(3 * MIB + 5, 0).unwrap();
    s.scope(|sc| sc.copy_from_device(&buf, 7, other.host_mut()?)).unwrap();
    assert!(other.host().unwrap() == &src[..]);
    other.copy_async(Direction::ToDevice, &s).unwrap().wait().unwrap();
    assert!(device_bytes(&other) == &src[..]);

    // Through a registration of the program's memory.
    let mut data = pattern(MIB, 6);
    let expect = data.clone();
    let reg = ctx.register(&mut data, 0).unwrap();
    buf.write_device(0, &reg, &s).unwrap();
    let mut back = vec![0u8; MIB];
    buf.read_device(0, &mut back, &s).unwrap();
    assert!(back == expect);
}

#[test]
fn slice_sizes_are_checked() {
    let ctx = host();
    let s = ctx.stream().unwrap();
    let mut buf = ctx.alloc(4096, 0).unwrap();
    buf.write_device(0, &[0x11u8; 4096], &s).unwrap();
    let big = vec![0u8; 4097];
    let err = buf.write_device(0, &big, &s).unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_OUT_OF_BOUNDS, "{err}");
    assert_eq!(err.call(), "xfer::Scope::copy_to_device");
    assert!(err.message().contains("4097 bytes at offset 0") && err.message().contains("4096-byte"), "{err}");
    let err = buf.write_device(4000, &[0u32; 25], &s).unwrap_err(); // 100 bytes at 4000
    assert_eq!(err.status(), sys::XFER_ERROR_OUT_OF_BOUNDS, "{err}");
    let mut out = [0u64; 2];
    let err = buf.read_device(4081, &mut out, &s).unwrap_err(); // 16 bytes at 4081
    assert_eq!(err.status(), sys::XFER_ERROR_OUT_OF_BOUNDS, "{err}");
    assert_eq!(err.call(), "xfer::Scope::copy_from_device");
    let err = buf.read_device(usize::MAX - 3, &mut out, &s).unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_INVALID_SIZE, "{err}");
    // Nothing was written by the refused calls; the exact fit and the empty slice work.
    assert!(device_bytes(&buf).iter().all(|&b| b == 0x11));
    buf.write_device(4092, &[0xabcd_ef01u32], &s).unwrap();
    buf.write_device::<u8>(4096, &[], &s).unwrap();
    let err = buf.write_device::<u8>(4097, &[], &s).unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_OUT_OF_BOUNDS, "{err}");
    let mut last = [0u32];
    buf.read_device(4092, &mut last, &s).unwrap();
    assert_eq!(last[0], 0xabcd_ef01);
    // A buffer of another context: refused by the library, nothing queued.
    let ctx2 = host();
    let mut foreign = ctx2.alloc(64, 0).unwrap();
    let err = foreign.write_device(0, &[1u8; 64], &s).unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_INVALID_HANDLE, "{err}");
    assert!(foreign.host().is_ok());
    // Typed host views refuse sizes that are not whole elements.
    let odd = ctx.alloc(6, 0).unwrap();
    assert_eq!(odd.host_as::<[f32; 1]>().unwrap_err().status(), sys::XFER_ERROR_INVALID_ARGUMENT);
}

#[test]
fn scope_waits_before_returning_on_error_and_panic() {
    let ctx = host();
    let s = ctx.stream().unwrap();
    let mut buf = ctx.alloc(8 * MIB, 0).unwrap();
    let a = pattern(8 * MIB, 7);
    buf.write_device(0, &a, &s).unwrap();

    // The closure's error comes back, after the copy queued before it completed.
    let mut out = vec![0u8; 8 * MIB];
    let mut spare = vec![0u8; 8 * MIB];
    let mut gate = None;
    let err = s
        .scope(|sc| {
            gate = Some(hold(sc.stream()));
            sc.copy_from_device(&buf, 0, &mut out)?;
            sc.copy_from_device(&buf, 1, &mut spare) // one byte past the end
        })
        .unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_OUT_OF_BOUNDS);
    waited_for(gate.take().unwrap(), Instant::now(), "scope (closure error)");
    assert!(out == a);
    assert!(s.query().unwrap());

    // A panic in the closure resumes only after the stream was synchronised.
    let mut out2 = vec![0u8; 8 * MIB];
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.scope(|sc| -> xfer::Result<()> {
            gate = Some(hold(sc.stream()));
            sc.copy_from_device(&buf, 0, &mut out2)?;
            panic!("inside the scope");
        })
    }));
    assert!(caught.is_err());
    waited_for(gate.take().unwrap(), Instant::now(), "scope (panic)");
    assert!(s.query().unwrap(), "the stream was not synchronised before the panic resumed");
    assert!(out2 == a);
}

#[test]
fn threads_share_a_buffer_through_scopes() {
    let ctx = host();
    let mut buf = ctx.alloc(4 * MIB, 0).unwrap();
    let a = pattern(4 * MIB, 8);
    let s = ctx.stream().unwrap();
    buf.write_device(0, &a, &s).unwrap();
    let (buf, a) = (&buf, &a);
    std::thread::scope(|ts| {
        for t in 0..4usize {
            let ctx = &ctx;
            ts.spawn(move || {
                let s = ctx.stream().unwrap();
                let mut part = vec![0u8; MIB];
                buf.read_device(t * MIB, &mut part, &s).unwrap();
                assert!(part[..] == a[t * MIB..(t + 1) * MIB]);
                assert!(buf.host().is_ok()); // concurrent host reads alongside
            });
        }
    });
}
