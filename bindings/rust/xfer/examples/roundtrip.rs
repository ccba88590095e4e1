// SPDX-License-Identifier: Apache-2.0
use xfer::{Context, Direction};

fn main() -> Result<(), xfer::Error> {
    let ctx = Context::open(None, -1)?; // backend from XFER_BACKEND / XFER_CONFIG
    let stream = ctx.stream()?;
    let mut buf = ctx.alloc(1 << 24, xfer::sys::XFER_ALLOC_DEFAULT)?;
    for (i, x) in buf.host_as_mut::<f32>()?.iter_mut().enumerate() {
        *x = i as f32 * 0.5;
    }
    buf.copy_async(Direction::ToDevice, &stream)?.wait()?; // the buffer is borrowed until done
    if ctx.caps() & xfer::sys::XFER_CAP_SHARED_VIEW == 0 {
        buf.host_as_mut::<f32>()?.fill(0.0); // only the copy back can restore the host view
    }
    buf.copy_async(Direction::ToHost, &stream)?.wait()?;
    let host = buf.host_as::<f32>()?;
    assert!(host.iter().enumerate().all(|(i, &x)| x == i as f32 * 0.5));
    // The program's own memory to the device view and back; scope() waits before it returns.
    let src: Vec<u64> = (0..1 << 20).collect();
    let mut dst = vec![0u64; src.len()];
    stream.scope(|s| {
        s.copy_to_device(&src, &mut buf, 0)?;
        s.copy_from_device(&buf, 0, &mut dst)
    })?;
    assert_eq!(src, dst);
    let err = buf.copy_range_async(Direction::ToDevice, 1 << 24, 1, &stream).unwrap_err();
    assert_eq!(err.status(), xfer::sys::XFER_ERROR_OUT_OF_BOUNDS); // status and message
    println!("rust: {} f32 round-tripped intact on {}", 1 << 22, ctx.backend());
    Ok(())
}
