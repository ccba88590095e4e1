// SPDX-License-Identifier: Apache-2.0
//! Strict mode refusing for real: the `host` backend has no slow path, so this runs on the core
//! tests' mock plugin that reports them (a raw copy from 4 MiB goes half staged, half through the
//! driver: slow), where CTest names its folder in XFER_TEST_MOCK_PATHS_DIR. One test in its own
//! binary: it sets XFER_PLUGIN_PATH before any other thread could read the environment.
use std::sync::{Arc, Mutex};

use xfer::{sys, Context, CopyPath, CopyRecord, PathReason, SlowPath};

#[test]
fn refuse_fails_with_slow_path_and_copies_nothing() {
    let dir = match std::env::var("XFER_TEST_MOCK_PATHS_DIR") {
        Ok(d) if !d.is_empty() => d,
        _ => {
            eprintln!("skipped: XFER_TEST_MOCK_PATHS_DIR is not set (this build has no mock plugin with slow paths)");
            return;
        }
    };
    std::env::set_var("XFER_PLUGIN_PATH", &dir);
    std::env::remove_var("XFER_SLOW_PATH");
    let ctx = Context::open(Some("mockpaths"), 0).unwrap_or_else(|e| panic!("{e}"));
    let seen: Arc<Mutex<Vec<CopyRecord>>> = Arc::default();
    let sink = Arc::clone(&seen);
    ctx.set_copy_observer(Some(Box::new(move |r: &CopyRecord| sink.lock().unwrap().push(*r)))).unwrap();
    ctx.set_slow_path(SlowPath::Refuse).unwrap();
    let s = ctx.stream().unwrap();
    let big = 8 * sys::XFER_SLOW_PATH_MIN_BYTES as usize;
    let src = vec![0x5au8; big];
    let mut dst = vec![0u8; big];

    let err = ctx.memcpy_host(&mut dst, &src, &s).unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_SLOW_PATH, "{err}");
    assert_eq!(err.call(), "xfer_memcpy_async");
    assert_eq!(err.status_name(), "XFER_ERROR_SLOW_PATH");
    assert!(err.message().contains("driver_pageable"), "{err}");
    assert!(dst.iter().all(|&x| x == 0)); // nothing was queued
    assert!(seen.lock().unwrap().is_empty());
    let st = ctx.stats().unwrap();
    assert_eq!((st.refused_calls, st.calls), (1, 0));
    assert!(st.taken().is_empty());

    ctx.set_slow_path(SlowPath::Allow).unwrap();
    ctx.memcpy_host(&mut dst, &src, &s).unwrap();
    assert_eq!(dst, src);
    let r = seen.lock().unwrap().clone();
    assert_eq!(r.len(), 2);
    assert_eq!((r[0].path, r[0].reason, r[0].slow, r[0].bytes), (CopyPath::Staged, PathReason::Memory, false,
                                                                  big as u64 / 2));
    assert_eq!((r[1].path, r[1].reason, r[1].slow, r[1].bytes),
               (CopyPath::DriverPageable, PathReason::NoFasterPath, true, big as u64 / 2));
    let st = ctx.stats().unwrap();
    assert_eq!(st.slow_copies, 1);
    assert_eq!(st.path(CopyPath::Staged).bytes, big as u64 / 2);
    assert_eq!(st.path(CopyPath::DriverPageable).bytes, big as u64 / 2);
}
