// SPDX-License-Identifier: Apache-2.0
//! Native handles on the `host` backend: there is no native stream to wrap (NotSupported, and
//! nothing is created), and events and streams still name their native objects.
use xfer::{sys, Context};

#[test]
fn wrapping_a_stream_is_not_supported_on_host() {
    let ctx = Context::open(Some("host"), 0).expect("open host");
    let err = ctx.legacy_stream().unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_NOT_SUPPORTED, "{err}");
    assert_eq!(err.call(), "xfer_stream_wrap");
    // Any pointer: the host backend refuses before looking at it.
    let mut fake = 0u64;
    let err = unsafe { ctx.wrap_stream((&mut fake as *mut u64).cast()) }.unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_NOT_SUPPORTED, "{err}");
    assert_eq!(fake, 0);
    // The context is unharmed: its own streams work.
    let s = ctx.stream().unwrap();
    assert!(!s.is_wrapped());
    let mut buf = ctx.alloc(4096, 0).unwrap();
    buf.write_device(0, &[9u8; 4096], &s).unwrap();
    let mut back = [0u8; 4096];
    buf.read_device(0, &mut back, &s).unwrap();
    assert!(back.iter().all(|&b| b == 9));
}

#[test]
fn events_and_streams_name_their_native_objects() {
    let ctx = Context::open(Some("host"), 0).expect("open host");
    let (a, b) = (ctx.event(0).unwrap(), ctx.event(sys::XFER_EVENT_DISABLE_TIMING).unwrap());
    let (na, nb) = (a.native(), b.native());
    assert!(!na.is_null() && !nb.is_null());
    assert_ne!(na, nb);
    assert_eq!(a.native(), na); // stable while the event lives
    let s = ctx.stream().unwrap();
    a.record(&s).unwrap();
    a.synchronize().unwrap();
    assert_eq!(a.native(), na); // recording does not replace it
    assert!(!s.native().is_null());
}
