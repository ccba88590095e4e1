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
    buf.host_as_mut::<f32>()?.fill(0.0);
    buf.copy_async(Direction::ToHost, &stream)?.wait()?;
    let host = buf.host_as::<f32>()?;
    assert!(host.iter().enumerate().all(|(i, &x)| x == i as f32 * 0.5));
    let err = buf.copy_range_async(Direction::ToDevice, 1 << 24, 1, &stream).unwrap_err();
    assert_eq!(err.status(), xfer::sys::XFER_ERROR_OUT_OF_BOUNDS); // status and message
    println!("rust: {} f32 round-tripped intact on {}", 1 << 22, ctx.backend());
    Ok(())
}
