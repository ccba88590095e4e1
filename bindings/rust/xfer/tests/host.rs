// SPDX-License-Identifier: Apache-2.0
//! The safe layer on the `host` backend: values round-tripped and compared, errors with status
//! and message, sizes above 4 GiB intact.
use xfer::{sys, Context, Direction};

fn host() -> Context {
    Context::open(Some("host"), 0).expect("open host")
}

#[test]
fn round_trips_f32_and_f64() {
    let ctx = host();
    assert_eq!(ctx.backend(), "host");
    assert_eq!(ctx.device_kind(), sys::XFER_DEVICE_KIND_HOST);
    let s = ctx.stream().unwrap();
    let mut a = ctx.alloc(100_003 * 4, sys::XFER_ALLOC_DEFAULT).unwrap();
    let expect: Vec<f32> = (0..100_003).map(|i| (i as f32).sin() * 1e3).collect();
    a.host_as_mut::<f32>().unwrap().copy_from_slice(&expect);
    a.copy_async(Direction::ToDevice, &s).unwrap().wait().unwrap();
    // The host backend's device view is host memory: the bytes are there.
    let dev = unsafe { std::slice::from_raw_parts(a.device_ptr() as *const f32, 100_003) };
    assert_eq!(dev, &expect[..]);
    a.host_as_mut::<f32>().unwrap().fill(0.0);
    a.copy_async(Direction::ToHost, &s).unwrap().wait().unwrap();
    assert_eq!(a.host_as::<f32>().unwrap(), &expect[..]);

    let mut d = ctx.alloc(4099 * 8, 0).unwrap();
    for (i, x) in d.host_as_mut::<f64>().unwrap().iter_mut().enumerate() {
        *x = i as f64 / 7.0;
    }
    d.copy(Direction::ToDevice, 0, 4099 * 8).unwrap();
    d.host_mut().unwrap().fill(0);
    {
        // Dropped without waiting: the buffer's next host access waits for the copy instead.
        let _pending = d.copy_range_async(Direction::ToHost, 8, 16, &s).unwrap();
    }
    let v = d.host_as::<f64>().unwrap();
    assert_eq!(v[0], 0.0);
    assert_eq!(v[1], 1.0 / 7.0);
    assert_eq!(v[2], 2.0 / 7.0);
    assert_eq!(v[3], 0.0);
}

#[test]
fn errors_carry_status_and_message() {
    let ctx = host();
    let s = ctx.stream().unwrap();
    let mut b = ctx.alloc(64, 0).unwrap();
    let err = b.copy_range_async(Direction::ToDevice, 60, 8, &s).err().unwrap();
    assert_eq!(err.status(), sys::XFER_ERROR_OUT_OF_BOUNDS);
    assert_eq!(err.call(), "xfer_copy_async");
    assert!(err.to_string().starts_with("xfer_copy_async: XFER_ERROR_OUT_OF_BOUNDS: "), "{err}");
    // 5 GiB passes as a 64-bit size_t (truncation to 32 bits would leave 1 GiB).
    let five_gib = 5usize << 30;
    let err = b.copy_range_async(Direction::ToDevice, five_gib, 1, &s).err().unwrap();
    assert!(err.message().contains(&format!("offset {five_gib} + bytes 1")), "{err}");
    let err = Context::open(Some("no-such-backend"), 0).err().unwrap();
    assert_eq!(err.status(), sys::XFER_ERROR_BACKEND_NOT_FOUND);
    assert!(err.message().contains("no-such-backend"), "{err}");
    assert_eq!(ctx.alloc(0, 0).err().unwrap().status(), sys::XFER_ERROR_INVALID_SIZE);
    assert_eq!(ctx.alloc(8, 0x100).err().unwrap().status(), sys::XFER_ERROR_INVALID_ARGUMENT);
    // misaligned typed view refused, buffer intact
    let odd = ctx.alloc(6, 0).unwrap();
    assert_eq!(odd.host_as::<f32>().err().unwrap().status(), sys::XFER_ERROR_INVALID_ARGUMENT);
    b.host_mut().unwrap()[0] = 0xa5;
    b.copy(Direction::ToDevice, 0, 64).unwrap();
    assert_eq!(unsafe { *(b.device_ptr() as *const u8) }, 0xa5);
}

#[test]
fn streams_events_and_raw_copies() {
    let ctx = host();
    let a = ctx.stream().unwrap();
    let b = ctx.stream().unwrap();
    let start = ctx.event(sys::XFER_EVENT_DEFAULT).unwrap();
    let end = ctx.event(sys::XFER_EVENT_DEFAULT).unwrap();
    start.record(&a).unwrap();
    let src: Vec<u8> = (0..65536u32).map(|i| (i * 7 + 3) as u8).collect();
    let mut dst = vec![0u8; src.len()];
    ctx.memcpy_host(&mut dst, &src, &a).unwrap();
    assert_eq!(dst, src);
    end.record(&a).unwrap();
    b.wait_event(&end).unwrap();
    b.synchronize().unwrap();
    end.synchronize().unwrap();
    assert!(end.query().unwrap() && a.query().unwrap());
    assert!(start.elapsed_ms(&end).unwrap() >= 0.0);
    assert!(!a.native().is_null());
    let untimed = ctx.event(sys::XFER_EVENT_DISABLE_TIMING).unwrap();
    untimed.record(&a).unwrap();
    untimed.synchronize().unwrap();
    assert_eq!(start.elapsed_ms(&untimed).err().unwrap().status(), sys::XFER_ERROR_INVALID_STATE);
}

#[test]
fn library_queries_and_threads() {
    assert_eq!(xfer::version().unwrap().0, sys::XFER_VERSION_MAJOR);
    assert!(xfer::backends().unwrap().iter().any(|b| b.name == "host" && b.available));
    assert!(xfer::params().unwrap().iter().any(|p| p.section.is_empty() && p.name == "backend"));
    let ctx = host();
    assert!(ctx.device_info().unwrap().total_memory > 0);
    // Context is Sync: buffers allocated and round-tripped from several threads at once.
    std::thread::scope(|scope| {
        for t in 0..4u8 {
            let ctx = &ctx;
            scope.spawn(move || {
                let s = ctx.stream().unwrap();
                let mut b = ctx.alloc(4096, 0).unwrap();
                b.host_mut().unwrap().fill(t + 1);
                b.copy_async(Direction::ToDevice, &s).unwrap().wait().unwrap();
                b.host_mut().unwrap().fill(0);
                b.copy_async(Direction::ToHost, &s).unwrap().wait().unwrap();
                assert!(b.host().unwrap().iter().all(|&x| x == t + 1));
            });
        }
    });
}

#[test]
fn calibrate_on_host_is_not_supported() {
    // host measures no copy path to choose between: refused, forced or not.
    let ctx = host();
    for force in [false, true] {
        let err = ctx.calibrate(force).unwrap_err();
        assert_eq!(err.status(), sys::XFER_ERROR_NOT_SUPPORTED, "{err}");
        assert_eq!(err.call(), "xfer_calibrate");
        assert!(err.message().contains("nothing to calibrate"), "{err}");
        assert!(xfer::last_error().contains("nothing to calibrate"));
    }
    // The raw call: struct_size and the flags checked.
    let mut info = sys::xfer_calibration_info { struct_size: 0, ..Default::default() };
    assert_eq!(unsafe { sys::xfer_calibrate(ctx.as_raw(), 0, &mut info) }, sys::XFER_ERROR_INVALID_ARGUMENT);
    assert!(xfer::last_error().contains("40 in this xfer.h"), "{}", xfer::last_error());
    let mut info = sys::xfer_calibration_info::default();
    assert_eq!(unsafe { sys::xfer_calibrate(ctx.as_raw(), 0x2, &mut info) }, sys::XFER_ERROR_INVALID_ARGUMENT);
    assert!(xfer::last_error().contains("unknown flag bits"));
    assert_eq!(unsafe { sys::xfer_calibrate(ctx.as_raw(), sys::XFER_CALIBRATE_FORCE, &mut info) },
               sys::XFER_ERROR_NOT_SUPPORTED);
}

#[test]
fn settings_of_a_host_context_are_its_backends_parameters() {
    // host derives nothing: the values a context uses are the host section of params(), value for
    // value, none of them derived.
    let ctx = host();
    let settings = ctx.settings().unwrap();
    let params: Vec<_> = xfer::params().unwrap().into_iter().filter(|p| p.section == "host").collect();
    assert!(params.iter().any(|p| p.name == "devices") && params.iter().any(|p| p.name == "device_memory"));
    assert_eq!(settings.iter().map(|s| &s.name).collect::<Vec<_>>(), params.iter().map(|p| &p.name).collect::<Vec<_>>());
    for (s, p) in settings.iter().zip(&params) {
        assert!(!s.derived, "{s:?}");
        assert_eq!(s.section, "host");
        assert_eq!((&s.env, &s.type_, &s.value, &s.default_value, &s.help, s.source),
                   (&p.env, &p.type_, &p.value, &p.default_value, &p.help, p.source), "{}", s.name);
        assert_ne!(s.source, sys::XFER_PARAM_CALIBRATION);
    }
    // The raw calls: the count, an index out of range either way, `derived` may be null.
    let mut count = -1;
    assert_eq!(unsafe { sys::xfer_context_setting_count(ctx.as_raw(), &mut count) }, sys::XFER_SUCCESS);
    assert_eq!(count as usize, settings.len());
    let mut info = std::mem::MaybeUninit::<sys::xfer_param_info>::zeroed();
    let mut derived = -1;
    for index in [count, -1] {
        let st = unsafe { sys::xfer_context_get_setting(ctx.as_raw(), index, info.as_mut_ptr(), &mut derived) };
        assert_eq!(st, sys::XFER_ERROR_INVALID_ARGUMENT);
        assert!(xfer::last_error().contains(&format!("index {index} is out of range")), "{}", xfer::last_error());
    }
    let st = unsafe { sys::xfer_context_get_setting(ctx.as_raw(), 0, std::ptr::null_mut(), &mut derived) };
    assert_eq!(st, sys::XFER_ERROR_INVALID_ARGUMENT);
    let st = unsafe { sys::xfer_context_get_setting(ctx.as_raw(), 0, info.as_mut_ptr(), std::ptr::null_mut()) };
    assert_eq!(st, sys::XFER_SUCCESS);
    let name = unsafe { std::ffi::CStr::from_ptr(info.assume_init().name) };
    assert_eq!(name.to_str().unwrap(), settings[0].name);
    assert_eq!(unsafe { sys::xfer_context_setting_count(ctx.as_raw(), std::ptr::null_mut()) },
               sys::XFER_ERROR_INVALID_ARGUMENT);
    // The same values each time.
    assert_eq!(ctx.settings().unwrap(), settings);
}

#[test]
fn registers_host_memory_and_unregisters() {
    let ctx = host();
    let zero = ctx.registration_stats().unwrap();
    assert_eq!(zero, sys::xfer_registration_stats::default());
    let mut data: Vec<f64> = (0..100_000).map(|i| i as f64 * 0.5).collect();
    let bytes = data.len() * 8;
    let base = data.as_mut_ptr();
    {
        let mut reg = ctx.register(&mut data, sys::XFER_REGISTER_DEFAULT).unwrap();
        assert_eq!(reg.as_ptr(), base);
        assert_eq!(reg.bytes(), bytes);
        let st = ctx.registration_stats().unwrap();
        assert_eq!((st.registered_ranges, st.registered_bytes), (1, bytes as u64));
        assert_eq!(st.cache_limit_bytes, 0); // host has no registration cache
        // the memory stays usable through the registration
        reg[7] = -1.0;
        let s = ctx.stream().unwrap();
        let mut dst = vec![0u8; 64];
        let src: Vec<u8> = reg[..8].iter().flat_map(|x| x.to_ne_bytes()).collect();
        ctx.memcpy_host(&mut dst, &src, &s).unwrap();
        assert_eq!(dst, src);
        // the same range, or a part of it, again: XFER_ERROR_INVALID_STATE (no new range)
        let err = unsafe { ctx.register_raw(base.cast(), bytes, 0) }.unwrap_err();
        assert_eq!(err.status(), sys::XFER_ERROR_INVALID_STATE, "{err}");
        assert_eq!(err.call(), "xfer_register");
        let err = unsafe { ctx.register_raw(base.add(512).cast(), 4096, 0) }.unwrap_err();
        assert_eq!(err.status(), sys::XFER_ERROR_INVALID_STATE, "{err}");
        // a second, read-only range
        let mut other = [1u32; 1024];
        let ro = ctx.register(&mut other, sys::XFER_REGISTER_READ_ONLY).unwrap();
        let st = ctx.registration_stats().unwrap();
        assert_eq!((st.registered_ranges, st.registered_bytes), (2, bytes as u64 + 4096));
        ctx.unregister(ro).unwrap();
        assert_eq!(ctx.registration_stats().unwrap().registered_ranges, 1);
    } // dropped: unregistered
    assert_eq!(data[7], -1.0);
    assert_eq!(ctx.registration_stats().unwrap(), zero);
    // registered again, explicitly unregistered
    let reg = ctx.register(&mut data[..10], 0).unwrap();
    assert_eq!(ctx.registration_stats().unwrap().registered_bytes, 80);
    reg.unregister().unwrap();
    assert_eq!(ctx.registration_stats().unwrap(), zero);
}

#[test]
fn register_refuses_bad_arguments() {
    let ctx = host();
    let mut empty: [u8; 0] = [];
    let err = ctx.register(&mut empty, 0).unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_INVALID_SIZE, "{err}");
    let err = unsafe { ctx.register_raw(std::ptr::null_mut(), 4096, 0) }.unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_INVALID_ARGUMENT, "{err}");
    let mut data = vec![0u8; 8192];
    let err = ctx.register(&mut data, 0x80).unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_INVALID_ARGUMENT, "{err}");
    // not registered: XFER_ERROR_INVALID_ARGUMENT
    let err = unsafe { ctx.unregister_raw(data.as_mut_ptr().cast()) }.unwrap_err();
    assert_eq!(err.status(), sys::XFER_ERROR_INVALID_ARGUMENT, "{err}");
    // a registration is unregistered through its own context only
    let other = host();
    let reg = other.register(&mut data, 0).unwrap();
    assert_eq!(ctx.unregister(reg).unwrap_err().status(), sys::XFER_ERROR_INVALID_ARGUMENT);
    // (the refused Registration was dropped, which unregistered it from `other`)
    assert_eq!(other.registration_stats().unwrap().registered_ranges, 0);
    assert_eq!(ctx.registration_stats().unwrap().registered_ranges, 0);
}
