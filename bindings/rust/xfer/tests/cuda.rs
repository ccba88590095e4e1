// SPDX-License-Identifier: Apache-2.0
//! The same rules on every available CUDA backend (nothing to check, and said so, on a machine
//! without a GPU): a forgotten guard cannot race with a real DMA, slices round-trip through
//! xfer-created and wrapped native streams, native events exist.
// Forgetting a Pending (a type without Drop) is what these tests are about.
#![allow(clippy::forget_non_drop)]
use xfer::{sys, Context, Direction};

const MIB: usize = 1 << 20;

fn cuda_contexts() -> Vec<Context> {
    let found: Vec<_> = xfer::backends()
        .unwrap()
        .into_iter()
        .filter(|b| b.available && b.device_kind == sys::XFER_DEVICE_KIND_CUDA && b.device_count > 0)
        .filter_map(|b| Context::open(Some(&b.name), 0).ok())
        .collect();
    if found.is_empty() {
        eprintln!("no CUDA backend available: nothing to check here");
    }
    found
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed) ^ (i >> 11) as u8).collect()
}

#[test]
fn forgotten_guard_cannot_race_a_dma() {
    for ctx in cuda_contexts() {
        let s = ctx.stream().unwrap();
        let mut buf = ctx.alloc(256 * MIB, 0).unwrap();
        let a = pattern(256 * MIB, 1);
        buf.host_mut().unwrap().copy_from_slice(&a);
        std::mem::forget(buf.copy_async(Direction::ToDevice, &s).unwrap());
        buf.host_mut().unwrap().fill(0xee); // waits for the copy: the device must hold `a`
        buf.copy_async(Direction::ToHost, &s).unwrap().wait().unwrap();
        let shared = ctx.caps() & sys::XFER_CAP_SHARED_VIEW != 0; // one memory: the fill is the data
        let h = buf.host().unwrap();
        let bad = if shared { h.iter().position(|&b| b != 0xee) } else { h.iter().zip(&a).position(|(x, y)| x != y) };
        assert_eq!(bad, None, "{}: first wrong byte", ctx.backend());
        eprintln!("{}: forgotten guard: 256 MiB intact", ctx.backend());
    }
}

#[test]
fn slices_through_own_and_wrapped_streams() {
    for ctx in cuda_contexts() {
        let mut buf = ctx.alloc(64 * MIB, 0).unwrap();
        let src = pattern(64 * MIB, 2);
        let mut back = vec![0u8; src.len()];
        let s = ctx.stream().unwrap();
        s.scope(|sc| {
            sc.copy_to_device(&src, &mut buf, 0)?;
            sc.copy_from_device(&buf, 0, &mut back)
        })
        .unwrap();
        assert!(back == src, "{}", ctx.backend());

        // The legacy default stream, and a native stream that another context owns.
        let legacy = ctx.legacy_stream().unwrap();
        assert!(legacy.is_wrapped());
        assert_eq!(legacy.native() as usize, 1, "cudaStreamLegacy");
        assert_eq!(ctx.legacy_stream().unwrap_err().status(), sys::XFER_ERROR_INVALID_STATE);
        back.fill(0);
        buf.write_device(8, &src[..MIB], &legacy).unwrap();
        buf.read_device(8, &mut back[..MIB], &legacy).unwrap();
        assert!(back[..MIB] == src[..MIB]);
        let mut expect = src.clone(); // what the device view holds now
        expect[8..8 + MIB].copy_from_slice(&src[..MIB]);
        // A stream xfer made for this context is no application stream to wrap.
        let err = unsafe { ctx.wrap_stream(s.native()) }.unwrap_err();
        assert_eq!(err.status(), sys::XFER_ERROR_INVALID_STATE, "{err}");
        let owner = Context::open(Some(ctx.backend()), 0).unwrap();
        let native = owner.stream().unwrap();
        {
            // SAFETY: `native` outlives the wrapper (dropped at the end of this block).
            let wrapped = unsafe { ctx.wrap_stream(native.native()) }.unwrap();
            assert_eq!(wrapped.native(), native.native());
            let ev = ctx.event(0).unwrap();
            assert!(!ev.native().is_null());
            back.fill(0);
            wrapped
                .scope(|sc| {
                    ev.record(sc.stream())?;
                    sc.copy_from_device(&buf, 0, &mut back)
                })
                .unwrap();
            assert!(back == expect, "{}", ctx.backend());
        }
        native.synchronize().unwrap(); // the native stream survived its wrapper
        eprintln!("{}: slices through own, legacy and wrapped streams intact", ctx.backend());
    }
}
