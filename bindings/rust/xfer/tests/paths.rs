// SPDX-License-Identifier: Apache-2.0
//! Which path each copy took, through the safe layer on the `host` backend: statistics counted
//! exactly and reset, the copy observer (its records, its lifetime, its panics kept out of the
//! C library, copies it makes itself, several threads), the slow-path policy.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use xfer::{path_is_slow, sys, Context, CopyPath, CopyRecord, Direction, PathReason, SlowPath};

fn host() -> Context {
    Context::open(Some("host"), 0).expect("open host")
}

#[test]
fn names_of_paths_and_reasons() {
    assert_eq!(CopyPath::HostMemcpy.name(), "host_memcpy");
    assert_eq!(CopyPath::DriverPageable.to_string(), "driver_pageable");
    assert_eq!(CopyPath::from_raw(sys::XFER_PATH_STAGED), CopyPath::Staged);
    assert_eq!(CopyPath::from_raw(sys::XFER_PATH_COUNT), CopyPath::Other(sys::XFER_PATH_COUNT));
    assert_eq!(CopyPath::Other(sys::XFER_PATH_COUNT).name(), "unknown");
    assert_eq!(CopyPath::ALL.len(), sys::XFER_PATH_COUNT as usize);
    for (i, p) in CopyPath::ALL.iter().enumerate() {
        assert_eq!(p.raw(), i as i32);
        assert_ne!(p.name(), "unknown", "{p:?}");
        assert_eq!(CopyPath::ALL.iter().filter(|q| q.name() == p.name()).count(), 1, "{p:?}");
    }
    assert_eq!(PathReason::CacheFull.name(), "cache_full");
    assert_eq!(PathReason::from_raw(sys::XFER_REASON_SPLIT), PathReason::Split);
    assert_eq!(PathReason::ALL.len(), sys::XFER_REASON_COUNT as usize);
    for (i, r) in PathReason::ALL.iter().enumerate() {
        assert_eq!(r.raw(), i as i32);
        assert_ne!(r.name(), "unknown", "{r:?}");
        assert_eq!(PathReason::ALL.iter().filter(|q| q.name() == r.name()).count(), 1, "{r:?}");
    }
    // The calibration's reasons.
    assert_eq!(PathReason::OneOff.name(), "one_off");
    assert_eq!(PathReason::Reuse.to_string(), "reuse");
    assert_eq!(PathReason::MeasuredFastest.name(), "measured_fastest");
    assert_eq!(PathReason::from_raw(sys::XFER_REASON_MEASURED_FASTEST), PathReason::MeasuredFastest);
    assert_eq!(PathReason::from_raw(sys::XFER_REASON_COUNT), PathReason::Other(sys::XFER_REASON_COUNT));
    assert_eq!(PathReason::Other(sys::XFER_REASON_COUNT).name(), "unknown");
    assert_eq!(PathReason::Other(99).name(), "unknown");
    let big = sys::XFER_SLOW_PATH_MIN_BYTES;
    assert!(path_is_slow(CopyPath::DriverPageable, PathReason::NoFasterPath, big));
    assert!(!path_is_slow(CopyPath::DriverPageable, PathReason::NoFasterPath, big - 1));
    assert!(!path_is_slow(CopyPath::DriverPageable, PathReason::BelowCrossover, 64 * big));
    assert!(!path_is_slow(CopyPath::HostMemcpy, PathReason::Memory, 64 * big));
    // A reason that says the path is the fastest one measured for the copy makes nothing slow.
    for reason in [PathReason::OneOff, PathReason::Reuse, PathReason::MeasuredFastest] {
        for path in [CopyPath::DriverPageable, CopyPath::NewRegistration] {
            assert!(!path_is_slow(path, reason, 64 * big), "{path:?} {reason:?}");
        }
    }
    assert!(path_is_slow(CopyPath::NewRegistration, PathReason::FirstUse, big));
    assert_eq!(SlowPath::from_raw(sys::XFER_SLOW_PATH_REFUSE), Some(SlowPath::Refuse));
    assert_eq!(SlowPath::from_raw(3), None);
    assert_eq!(SlowPath::Warn.name(), "warn");
}

#[test]
fn stats_count_every_host_copy_exactly_and_reset() {
    let ctx = host();
    let st = ctx.stats().unwrap();
    assert_eq!(st.version, sys::XFER_CONTEXT_STATS_VERSION);
    assert_eq!(st.calls, 0);
    assert!(st.taken().is_empty());

    let (n, bytes) = (5u64, 3000usize);
    let s = ctx.stream().unwrap();
    let mut buf = ctx.alloc(bytes, 0).unwrap();
    buf.host_mut().unwrap().fill(0x3c);
    for _ in 0..n {
        buf.copy_async(Direction::ToDevice, &s).unwrap().wait().unwrap();
    }
    buf.copy(Direction::ToHost, 96, 1000).unwrap();
    let src: Vec<u8> = (0..70_000u32).map(|i| i as u8).collect();
    let mut dst = vec![0u8; src.len()];
    ctx.memcpy_host(&mut dst, &src, &s).unwrap();
    assert_eq!(dst, src);

    let st = ctx.stats().unwrap();
    assert_eq!(st.calls, n + 2);
    let memcpy = st.path(CopyPath::HostMemcpy);
    assert_eq!(memcpy.copies, n + 2);
    assert_eq!(memcpy.bytes, n * bytes as u64 + 1000 + src.len() as u64);
    assert!(memcpy.host_ns > 0);
    assert_eq!(st.taken(), vec![(CopyPath::HostMemcpy, memcpy)]); // the one path taken
    assert_eq!(st.paths[sys::XFER_PATH_HOST_MEMCPY as usize], memcpy);
    assert_eq!((st.slow_copies, st.refused_calls), (0, 0));
    assert_eq!(st.path(CopyPath::Other(99)), xfer::PathStats::default());

    // Registrations are counted too (the host backend keeps bookkeeping only).
    let mut data = vec![0f64; 3 * 512];
    {
        let _reg = ctx.register(&mut data, 0).unwrap();
        let st = ctx.stats().unwrap();
        assert_eq!((st.registrations, st.registered_bytes, st.unregistrations), (1, 3 * 512 * 8, 0));
    }
    let st = ctx.stats().unwrap();
    assert_eq!((st.unregistrations, st.unregistered_bytes), (1, 3 * 512 * 8));

    ctx.reset_stats().unwrap();
    let st = ctx.stats().unwrap();
    assert_eq!((st.calls, st.registrations, st.unregistrations), (0, 0, 0));
    assert!(st.paths.iter().all(|p| *p == xfer::PathStats::default()));
    buf.copy(Direction::ToDevice, 0, 17).unwrap();
    let st = ctx.stats().unwrap();
    assert_eq!((st.calls, st.path(CopyPath::HostMemcpy).copies, st.path(CopyPath::HostMemcpy).bytes), (1, 1, 17));
}

#[test]
fn observer_gets_one_record_per_call_and_can_be_removed() {
    let ctx = host();
    let seen: Arc<Mutex<Vec<CopyRecord>>> = Arc::default();
    let sink = Arc::clone(&seen);
    ctx.set_copy_observer(Some(Box::new(move |r: &CopyRecord| sink.lock().unwrap().push(*r)))).unwrap();
    let s = ctx.stream().unwrap();
    let mut buf = ctx.alloc(8192, 0).unwrap();
    buf.host_mut().unwrap().fill(9);
    buf.copy_range_async(Direction::ToDevice, 0, 5000, &s).unwrap().wait().unwrap();
    buf.copy(Direction::ToHost, 8, 100).unwrap();
    {
        let r = seen.lock().unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].function, "xfer_copy_async");
        assert_eq!((r[0].path, r[0].reason), (CopyPath::HostMemcpy, PathReason::Memory));
        assert_eq!(r[0].kind, sys::XFER_COPY_HOST_TO_DEVICE);
        assert_eq!((r[0].slow, r[0].copies, r[0].bytes, r[0].call_bytes), (false, 1, 5000, 5000));
        assert_eq!(r[0].stream, s.as_raw());
        assert_eq!(r[1].function, "xfer_copy");
        assert!(r[1].stream.is_null()); // the context's internal stream
        assert_eq!((r[1].kind, r[1].bytes), (sys::XFER_COPY_DEVICE_TO_HOST, 100));
    }
    assert_eq!(unsafe { *(buf.device_ptr() as *const u8).add(4999) }, 9);

    ctx.set_copy_observer(None).unwrap();
    buf.copy(Direction::ToDevice, 0, 8192).unwrap();
    assert_eq!(seen.lock().unwrap().len(), 2);
    assert_eq!(ctx.stats().unwrap().calls, 3); // the statistics go on without an observer
    assert_eq!(Arc::strong_count(&seen), 1); // the removed closure was dropped
    assert!(ctx.take_observer_panic().is_none());
}

#[test]
fn the_context_keeps_the_observer_until_it_is_dropped() {
    let bytes = Arc::new(AtomicU64::new(0));
    {
        let ctx = host();
        let b = Arc::clone(&bytes);
        ctx.set_copy_observer(Some(Box::new(move |r: &CopyRecord| {
            b.fetch_add(r.bytes, Ordering::Relaxed);
        })))
        .unwrap();
        let mut buf = ctx.alloc(4096, 0).unwrap();
        buf.copy(Direction::ToDevice, 0, 1234).unwrap();
        buf.copy(Direction::ToHost, 0, 4096).unwrap();
        assert_eq!(Arc::strong_count(&bytes), 2);
        // Replaced: the new closure sees the next copies, the old one is dropped.
        let b2 = Arc::clone(&bytes);
        ctx.set_copy_observer(Some(Box::new(move |r: &CopyRecord| {
            b2.fetch_add(1_000_000 * r.copies, Ordering::Relaxed);
        })))
        .unwrap();
        assert_eq!(Arc::strong_count(&bytes), 2);
        buf.copy(Direction::ToHost, 0, 1).unwrap();
    }
    assert_eq!(bytes.load(Ordering::Relaxed), 1234 + 4096 + 1_000_000);
    assert_eq!(Arc::strong_count(&bytes), 1); // dropped with the context
}

#[test]
fn a_panic_of_the_observer_stays_out_of_the_copy() {
    let ctx = host();
    let calls = Arc::new(AtomicU64::new(0));
    let c = Arc::clone(&calls);
    ctx.set_copy_observer(Some(Box::new(move |r: &CopyRecord| {
        c.fetch_add(1, Ordering::Relaxed);
        panic!("observer saw {} bytes", r.bytes);
    })))
    .unwrap();
    let mut buf = ctx.alloc(256, 0).unwrap();
    for (i, x) in buf.host_mut().unwrap().iter_mut().enumerate() {
        *x = i as u8;
    }
    buf.copy(Direction::ToDevice, 0, 200).unwrap(); // Ok: the copy itself went ahead
    buf.copy(Direction::ToDevice, 200, 56).unwrap();
    assert_eq!(calls.load(Ordering::Relaxed), 2);
    let dev = unsafe { std::slice::from_raw_parts(buf.device_ptr() as *const u8, 256) };
    assert!(dev.iter().enumerate().all(|(i, &x)| x == i as u8));
    assert_eq!(ctx.stats().unwrap().path(CopyPath::HostMemcpy).bytes, 256);
    let payload = ctx.take_observer_panic().expect("the panic is kept");
    assert_eq!(payload.downcast_ref::<String>().map(String::as_str), Some("observer saw 56 bytes")); // the latest
    assert!(ctx.take_observer_panic().is_none()); // taken once
    // The observer still runs after a panic (its lock is not left poisoned for good).
    buf.copy(Direction::ToHost, 0, 8).unwrap();
    assert_eq!(calls.load(Ordering::Relaxed), 3);
    assert!(ctx.take_observer_panic().is_some());
}

#[test]
fn an_observer_may_copy_and_runs_on_every_thread() {
    // The closure must be 'static: it holds the context through an Arc (taken off at the end).
    let ctx = Arc::new(host());

    // Copies the observer makes itself are counted, not delivered to it.
    let ctx2 = Arc::clone(&ctx);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let scratch = Arc::new(Mutex::new((vec![1u8; 8], vec![0u8; 8])));
    ctx.set_copy_observer(Some(Box::new(move |r: &CopyRecord| {
        sink.lock().unwrap().push(r.bytes);
        let s = ctx2.stream().unwrap();
        let mut g = scratch.lock().unwrap();
        let (src, dst) = &mut *g;
        ctx2.memcpy_host(dst, src, &s).unwrap();
        assert_eq!(dst, src);
    })))
    .unwrap();
    let mut outer = ctx.alloc(64, 0).unwrap();
    outer.copy(Direction::ToDevice, 0, 64).unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![64]);
    assert_eq!(ctx.stats().unwrap().calls, 2); // the observer's own copy counted
    assert!(ctx.take_observer_panic().is_none());
    drop(outer);

    // Several threads at once: every record arrives once.
    let copies = Arc::new(AtomicU64::new(0));
    let bytes = Arc::new(AtomicU64::new(0));
    let (c, b) = (Arc::clone(&copies), Arc::clone(&bytes));
    ctx.set_copy_observer(Some(Box::new(move |r: &CopyRecord| {
        c.fetch_add(r.copies, Ordering::Relaxed);
        b.fetch_add(r.bytes, Ordering::Relaxed);
    })))
    .unwrap();
    ctx.reset_stats().unwrap();
    const THREADS: u64 = 4;
    const COPIES: u64 = 300;
    std::thread::scope(|sc| {
        for _ in 0..THREADS {
            let ctx = &ctx;
            sc.spawn(move || {
                let mut mine = ctx.alloc(512, 0).unwrap();
                for i in 0..COPIES {
                    mine.copy(Direction::ToDevice, 0, (1 + i % 512) as usize).unwrap();
                }
            });
        }
    });
    let expect: u64 = THREADS * (0..COPIES).map(|i| 1 + i % 512).sum::<u64>();
    assert_eq!(copies.load(Ordering::Relaxed), THREADS * COPIES);
    assert_eq!(bytes.load(Ordering::Relaxed), expect);
    assert_eq!(ctx.stats().unwrap().path(CopyPath::HostMemcpy).bytes, expect);
    // The closure holds a clone of the context: take it off so that the context can go.
    ctx.set_copy_observer(None).unwrap();
}

#[test]
fn slow_path_policy_is_set_and_read() {
    let ctx = host();
    assert_eq!(ctx.slow_path().unwrap(), SlowPath::Allow);
    ctx.set_slow_path(SlowPath::Refuse).unwrap();
    assert_eq!(ctx.slow_path().unwrap(), SlowPath::Refuse);
    // The host backend's memcpy is never slow: strict mode refuses none of its copies.
    let big = 4 * sys::XFER_SLOW_PATH_MIN_BYTES as usize;
    let mut buf = ctx.alloc(big, 0).unwrap();
    buf.host_mut().unwrap().fill(0x11);
    buf.copy(Direction::ToDevice, 0, big).unwrap();
    let dev = unsafe { std::slice::from_raw_parts(buf.device_ptr() as *const u8, big) };
    assert!(dev.iter().all(|&x| x == 0x11));
    assert_eq!(ctx.stats().unwrap().refused_calls, 0);
    ctx.set_slow_path(SlowPath::Warn).unwrap();
    assert_eq!(ctx.slow_path().unwrap(), SlowPath::Warn);
    // A value that is no policy, through the raw layer: refused, nothing changes.
    let st = unsafe { sys::xfer_context_set_slow_path(ctx.as_raw(), 3) };
    assert_eq!(st, sys::XFER_ERROR_INVALID_ARGUMENT);
    assert_eq!(ctx.slow_path().unwrap(), SlowPath::Warn);
    ctx.set_slow_path(SlowPath::Allow).unwrap();
    assert_eq!(ctx.slow_path().unwrap(), SlowPath::Allow);
}
