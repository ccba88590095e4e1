// SPDX-License-Identifier: Apache-2.0
//! The program's own pageable memory (a `Vec<u8>`) to the device and back through xfer's
//! slice copies ([`xfer::Stream::scope`]), one backend after another, with the bandwidth of each
//! and the ratio of every backend to the last one named.
//!
//! ```text
//! cargo run --release --example bench_slices -- [BACKEND ...] [--sizes 64MiB,256MiB,1GiB]
//!     [--repeats N] [--warmup N] [--device D] [--register]
//! ```
//!
//! BACKEND: the backends to compare, in order (default `pageable pinned`; the ratio column is
//! each one against the last). Per size, after `--warmup` round trips (default 2), `--repeats`
//! samples (default 10, at least 5): each copies the whole range to the buffer's device view
//! and back into a zeroed `Vec`, both timed, then compares every byte; the two sources
//! alternate between two patterns so that a copy that moved nothing cannot pass. Reported:
//! medians in GB/s (10^9 bytes per second) of the wall time from the call to the end of the
//! scope's synchronisation (what the program waits) and of the stream time between two events
//! recorded around the copy. `--register` page-locks the three `Vec`s with each context first
//! (`xfer_register`); without it the pinned backend reaches them through its registration cache
//! (its counters are printed). Exit status: 0 when every byte of every sample came back intact
//! and every backend opened, 1 otherwise, 2 for bad arguments.
use std::process::exit;
use std::time::Instant;

use xfer::{sys, Context, Event};

struct Args {
    backends: Vec<String>,
    sizes: Vec<usize>,
    repeats: usize,
    warmup: usize,
    device: i32,
    register: bool,
}

fn usage(msg: &str) -> ! {
    eprintln!("bench_slices: {msg}");
    eprintln!("usage: bench_slices [BACKEND ...] [--sizes 64MiB,256MiB,1GiB] [--repeats N] [--warmup N] \
               [--device D] [--register]");
    exit(2)
}

// "64MiB", "1GiB", "1000000", "512KB": KiB/MiB/GiB are powers of 1024, KB/MB/GB of 1000.
fn parse_size(s: &str) -> Option<usize> {
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let mult: usize = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => return None,
    };
    num.parse::<usize>().ok()?.checked_mul(mult).filter(|&n| n > 0)
}

fn parse_args() -> Args {
    let mut a = Args { backends: Vec::new(), sizes: vec![64 << 20, 256 << 20, 1 << 30], repeats: 10, warmup: 2,
                       device: -1, register: false };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().unwrap_or_else(|| usage(&format!("{name} needs a value")));
        match arg.as_str() {
            "--sizes" => {
                a.sizes = value("--sizes")
                    .split(',')
                    .map(|s| parse_size(s).unwrap_or_else(|| usage(&format!("bad size '{s}'"))))
                    .collect()
            }
            "--repeats" => a.repeats = value("--repeats").parse().unwrap_or_else(|_| usage("bad --repeats")),
            "--warmup" => a.warmup = value("--warmup").parse().unwrap_or_else(|_| usage("bad --warmup")),
            "--device" => a.device = value("--device").parse().unwrap_or_else(|_| usage("bad --device")),
            "--register" => a.register = true,
            "-h" | "--help" => usage("help"),
            s if s.starts_with('-') => usage(&format!("unknown option {s}")),
            s => a.backends.push(s.to_string()),
        }
    }
    if a.backends.is_empty() {
        a.backends = vec!["pageable".into(), "pinned".into()];
    }
    if a.repeats < 5 {
        usage("--repeats must be at least 5 (the figures are medians)");
    }
    a
}

fn size_name(n: usize) -> String {
    match n {
        n if n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n => format!("{n} B"),
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = v.len() / 2;
    if v.len() % 2 == 1 { v[m] } else { (v[m - 1] + v[m]) / 2.0 }
}

/// Medians for one backend and size: (H2D wall, D2H wall, H2D events, D2H events), in GB/s.
type Row = [f64; 4];

// Wall seconds since `t0` and stream seconds between `start` and `end`, once both completed.
fn times(t0: Instant, start: &Event<'_>, end: &Event<'_>) -> xfer::Result<(f64, f64)> {
    let wall = t0.elapsed().as_secs_f64();
    Ok((wall, f64::from(start.elapsed_ms(end)?) / 1e3))
}

fn run_backend(ctx: &Context, args: &Args, src: [&[u8]; 2], dst: &mut [u8]) -> xfer::Result<Vec<Row>> {
    let max = *args.sizes.iter().max().unwrap();
    let stream = ctx.stream()?;
    let mut buf = ctx.alloc(max, sys::XFER_ALLOC_DEFAULT)?;
    let (start, end) = (ctx.event(sys::XFER_EVENT_DEFAULT)?, ctx.event(sys::XFER_EVENT_DEFAULT)?);
    let mut rows = Vec::new();
    for &n in &args.sizes {
        let mut samples: [Vec<f64>; 4] = Default::default();
        for i in 0..args.warmup + args.repeats {
            let from = &src[i % 2][..n];
            dst[..n].fill(0);
            // Each copy in a scope of its own: timed from the call to the end of the scope's
            // synchronisation, and on the stream between events recorded around it.
            let t0 = Instant::now();
            stream.scope(|s| {
                start.record(s.stream())?;
                s.copy_to_device(from, &mut buf, 0)?;
                end.record(s.stream())
            })?;
            let (h2d_wall, h2d_ev) = times(t0, &start, &end)?;
            let t0 = Instant::now();
            stream.scope(|s| {
                start.record(s.stream())?;
                s.copy_from_device(&buf, 0, &mut dst[..n])?;
                end.record(s.stream())
            })?;
            let (d2h_wall, d2h_ev) = times(t0, &start, &end)?;
            if let Some(at) = dst[..n].iter().zip(from).position(|(a, b)| a != b) {
                eprintln!("FAIL: {} {}: sample {i}: byte {at} came back as {:#04x}, sent {:#04x}", ctx.backend(),
                          size_name(n), dst[at], from[at]);
                exit(1);
            }
            if i >= args.warmup {
                let gbs = |secs: f64| n as f64 / secs / 1e9;
                for (v, secs) in samples.iter_mut().zip([h2d_wall, d2h_wall, h2d_ev, d2h_ev]) {
                    v.push(gbs(secs));
                }
            }
        }
        let row: Row = [0, 1, 2, 3].map(|k| median(&mut samples[k]));
        println!("{:<10} {:>8}  {:>8.2} {:>8.2}   {:>8.2} {:>8.2}   {} x {} bytes verified", ctx.backend(),
                 size_name(n), row[0], row[1], row[2], row[3], args.warmup + args.repeats, n);
        rows.push(row);
    }
    // Here, while the registrations of --register still hold.
    let st = ctx.registration_stats()?;
    eprintln!("{}: registration cache: {} hits, {} misses, {} evictions, {} bytes held (limit {}); \
               {} bytes registered explicitly",
              ctx.backend(), st.cache_hits, st.cache_misses, st.cache_evictions, st.cache_bytes, st.cache_limit_bytes,
              st.registered_bytes);
    Ok(rows)
}

fn pattern(n: usize, seed: u64) -> Vec<u8> {
    // xorshift: cheap, and no two positions or seeds alike in a way a stuck copy could match.
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_ne_bytes()[..(n - v.len()).min(8)]);
    }
    v
}

fn main() {
    let args = parse_args();
    let max = *args.sizes.iter().max().unwrap();
    let (mut a, mut b, mut dst) = (pattern(max, 1), pattern(max, 2), vec![0u8; max]);
    let version = xfer::version().map(|(x, y, z)| format!("{x}.{y}.{z}")).unwrap_or_default();
    println!("bench_slices: xfer {version}; Vec<u8> (pageable) -> device view -> Vec<u8>; GB/s = 1e9 B/s; \
              medians of {} after {} warm-up{}", args.repeats, args.warmup,
             if args.register { "; Vecs registered (xfer_register)" } else { "" });
    println!("{:<10} {:>8}  {:>8} {:>8}   {:>8} {:>8}", "backend", "size", "H2D", "D2H", "H2D ev", "D2H ev");
    let mut results: Vec<(String, Vec<Row>)> = Vec::new();
    let mut failed = false;
    for name in &args.backends {
        let ctx = match Context::open(Some(name), args.device) {
            Ok(ctx) => ctx,
            Err(e) => {
                eprintln!("{name}: {e}");
                failed = true;
                continue;
            }
        };
        if let Ok(info) = ctx.device_info() {
            let dev = unsafe { std::ffi::CStr::from_ptr(info.name.as_ptr()) }.to_string_lossy().into_owned();
            eprintln!("{name}: device {} ({dev})", ctx.device());
        }
        let outcome = if args.register {
            (|| {
                let ra = ctx.register(&mut a[..], sys::XFER_REGISTER_READ_ONLY)?;
                let rb = ctx.register(&mut b[..], sys::XFER_REGISTER_READ_ONLY)?;
                let mut rd = ctx.register(&mut dst[..], sys::XFER_REGISTER_DEFAULT)?;
                run_backend(&ctx, &args, [&ra[..], &rb[..]], &mut rd[..])
            })()
        } else {
            run_backend(&ctx, &args, [&a[..], &b[..]], &mut dst[..])
        };
        match outcome {
            Ok(rows) => results.push((name.clone(), rows)),
            Err(e) => {
                eprintln!("{name}: {e}");
                failed = true;
            }
        }
    }
    if results.len() >= 2 {
        let (base, base_rows) = results.last().unwrap();
        println!("\nratio to {base} (higher: faster than {base}), wall time");
        println!("{:<10} {:>8}  {:>8} {:>8}", "backend", "size", "H2D", "D2H");
        for (name, rows) in &results[..results.len() - 1] {
            for ((n, row), base_row) in args.sizes.iter().zip(rows).zip(base_rows) {
                println!("{:<10} {:>8}  {:>7.2}x {:>7.2}x", name, size_name(*n), row[0] / base_row[0],
                         row[1] / base_row[1]);
            }
        }
    }
    if failed {
        exit(1);
    }
    println!("PASS: every byte of every sample verified");
}
