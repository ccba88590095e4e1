// SPDX-License-Identifier: Apache-2.0
//! Safe Rust layer over xfer's C API (the raw declarations are [`sys`], the `xfer-sys` crate).
//!
//! - [`Context`], [`Buffer`], [`Stream`], [`Event`] own their C handles and release them on
//!   `Drop`; buffers, streams and events borrow their context, so they cannot outlive it.
//! - Every failure is an [`Error`] with the C status, the C function and the library's message.
//! - Host views are slices tied to the buffer: [`Buffer::host`] / [`Buffer::host_mut`] as bytes,
//!   [`Buffer::host_as`] / [`Buffer::host_as_mut`] typed ([`Pod`] element types).
//! - Buffer copies: [`Buffer::copy_async`] returns a [`Pending`] that keeps the buffer borrowed
//!   until [`Pending::wait`]; [`Buffer::copy`] waits itself.
//! - Copies between the program's own slices and a buffer's device view: inside
//!   [`Stream::scope`] ([`Scope::copy_to_device`], [`Scope::copy_from_device`], queued, waited for
//!   when the scope ends), or one at a time, waiting ([`Buffer::write_device`],
//!   [`Buffer::read_device`]).
//! - Streams the application owns (a `cudaStream_t`): [`Context::wrap_stream`] (unsafe: the
//!   caller keeps the native stream alive) and [`Context::legacy_stream`].
//! - [`Context::register`] page-locks memory the program owns for fast copies.
//! - Sharing a buffer with another process: [`Buffer::export`] (a buffer allocated with
//!   `XFER_ALLOC_SHAREABLE`) returns an [`Export`], which owns the descriptors of the memory and
//!   closes them on `Drop`; [`Export::send`] / [`Export::receive`] carry it over a Unix-domain
//!   socket; [`Context::import_buffer`] maps it as a [`Buffer`].
//! - Which path each copy took: [`Context::stats`] / [`Context::reset_stats`] (per [`CopyPath`]:
//!   copies, bytes, host time), [`Context::set_copy_observer`] (a closure that gets one
//!   [`CopyRecord`] per path of each copy call; a panic in it is caught before it reaches the C
//!   library, see [`Context::take_observer_panic`]), and strict mode:
//!   [`Context::set_slow_path`]`(`[`SlowPath::Refuse`]`)` makes a copy that would take a slow path
//!   fail with `XFER_ERROR_SLOW_PATH`, nothing queued.
//! - This machine's calibration, from which the CUDA backends choose each copy's path:
//!   [`Context::calibrate`] (a [`Calibration`]; `XFER_ERROR_NOT_SUPPORTED` on `host`, which has
//!   nothing to calibrate) and [`Context::settings`] (the values the context uses, each a
//!   [`Setting`]: the backend's parameters, then the values it derives, with their source).
//! - `Send`/`Sync`: the C API lets every function be called from any thread with shared handles,
//!   so the handle types are `Send` and `Sync`; host views follow Rust's borrow rules.
//!
//! # Memory safety of queued copies: the rule
//!
//! **Safe code never sees or changes memory that a queued copy still uses, and no destructor has
//! to run for that to hold.** Leaking a guard with [`std::mem::forget`] only leaks; it never
//! races. Two mechanisms carry this, one per kind of memory:
//!
//! - **A buffer's own memory** (its host view, and on `managed` / `zerocopy` the device view,
//!   which is the same memory). Every buffer remembers the last copy queued on it: after each
//!   copy it records an event of its own on the copy's stream, and each new copy is ordered after
//!   the previous one, whatever stream either is on (the new stream waits for that event). Every
//!   way to reach the host view ([`Buffer::host`], [`Buffer::host_mut`], [`Buffer::host_as`],
//!   [`Buffer::host_as_mut`]) and [`Buffer::copy`] first waits for that event. A [`Pending`] is
//!   therefore a convenience (it reports the copy's status and keeps the buffer borrowed so that
//!   touching it too early is a compile error), not what keeps memory safe: dropping or
//!   forgetting one leaves the wait to the next access. The cost: one uncontended mutex lock per
//!   access when nothing is queued, one `xfer_event_synchronize` when something is.
//! - **The program's own slices** (`&[T]`, `&mut [T]`, e.g. a `Vec`'s memory). A slice can be
//!   handed to an asynchronous copy only inside [`Stream::scope`], which works like
//!   [`std::thread::scope`]: the closure gets a [`Scope`] whose methods borrow the slice for the
//!   scope's whole lifetime `'scope`, and `scope` returns (normally, with an error, or by
//!   unwinding a panic) only after it has synchronised the stream. Nothing the closure drops or
//!   forgets ends those borrows early; the borrow checker, not a destructor, keeps the slice
//!   untouched until the copy is done.
//!
//! A wait that fails: a host-view accessor returns the error. A failure the library reports as
//! the copy's own (`XFER_ERROR_BACKEND`, `XFER_ERROR_BACKEND_UNAVAILABLE` after a device fault)
//! comes once, the next access succeeds; any other failure keeps the host view unreachable,
//! because the copy may still run. [`Stream::scope`] cannot keep its slices borrowed after
//! it returns, so where the library says it could not wait at all (`XFER_ERROR_INVALID_STATE`:
//! called from a host function, which `xfer.h` forbids) it aborts the process instead of
//! returning.
//!
//! What stays `unsafe`: raw copies between pointers ([`Context::memcpy_async`]), dereferencing
//! [`Buffer::device_ptr`], wrapping a native stream ([`Context::wrap_stream`]),
//! [`Context::register_raw`], and sharing memory with another mapping ([`Buffer::export`],
//! [`Context::import_buffer`]): the borrow checker sees one buffer, not the other mappings that
//! write the same memory.
//!
//! ```
//! use xfer::{Context, Direction};
//!
//! fn main() -> Result<(), xfer::Error> {
//!     let ctx = Context::open(Some("host"), 0)?;
//!     let stream = ctx.stream()?;
//!     let mut buf = ctx.alloc(1 << 20, 0)?;
//!     for (i, x) in buf.host_as_mut::<f32>()?.iter_mut().enumerate() {
//!         *x = i as f32 * 0.5;
//!     }
//!     buf.copy_async(Direction::ToDevice, &stream)?.wait()?;
//!     buf.host_as_mut::<f32>()?.fill(0.0);
//!     buf.copy_async(Direction::ToHost, &stream)?.wait()?;
//!     assert!(buf.host_as::<f32>()?.iter().enumerate().all(|(i, &x)| x == i as f32 * 0.5));
//!
//!     // The program's own memory, to the device view and back, both queued, waited for at the end.
//!     let src: Vec<u32> = (0..1000).collect();
//!     let mut dst = vec![0u32; 1000];
//!     stream.scope(|s| {
//!         s.copy_to_device(&src, &mut buf, 4096)?;
//!         s.copy_from_device(&buf, 4096, &mut dst)
//!     })?;
//!     assert_eq!(src, dst);
//!
//!     let err = buf.copy_range_async(Direction::ToDevice, 1 << 20, 1, &stream).unwrap_err();
//!     assert_eq!(err.status(), xfer::sys::XFER_ERROR_OUT_OF_BOUNDS);
//!     println!("{err}"); // xfer_copy_async: XFER_ERROR_OUT_OF_BOUNDS: offset 1048576 + bytes 1 ...
//!     Ok(())
//! }
//! ```
//!
//! # Linking
//!
//! `xfer-sys`'s build script finds libxfer through `XFER_LIB_DIR` (a build tree's `build/lib`)
//! or else pkg-config, so against an installed xfer the one variable is
//! `PKG_CONFIG_PATH=<prefix>/lib/pkgconfig` (none when xfer is installed where pkg-config looks
//! by default). This crate's examples and tests get an rpath to that folder and run without
//! `LD_LIBRARY_PATH`. A program's own crate gets the rpath the same way (Cargo passes a build
//! script's link arguments only to its own package's binaries): depend on `xfer-sys` too, which
//! hands the folder to its direct dependents as `DEP_XFER_LIB_DIR`, and add a `build.rs`:
//!
//! ```ignore
//! fn main() {
//!     if let Ok(dir) = std::env::var("DEP_XFER_LIB_DIR") {
//!         println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
//!     }
//! }
//! ```
pub use xfer_sys as sys;

use std::ffi::{CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::os::unix::io::RawFd;
use std::any::Any;
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A failed xfer call: the C status, the C function (or, for a check this layer makes before
/// calling C, the Rust method), and the library's message (`xfer_last_error()`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    status: sys::xfer_status,
    call: &'static str,
    message: String,
}

impl Error {
    fn new(status: sys::xfer_status, call: &'static str, message: String) -> Error {
        Error { status, call, message }
    }
    /// The `xfer_status` (compare with `xfer::sys::XFER_ERROR_*`).
    pub fn status(&self) -> sys::xfer_status {
        self.status
    }
    /// Its name, e.g. "XFER_ERROR_OUT_OF_BOUNDS".
    pub fn status_name(&self) -> String {
        status_string(self.status)
    }
    /// The C function that failed, e.g. "xfer_copy_async", or the method of this crate that
    /// refused the call before reaching C, e.g. "xfer::Scope::copy_to_device".
    pub fn call(&self) -> &'static str {
        self.call
    }
    /// What was wrong, as the library (or this layer) said it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    /// `<call>: <STATUS>: <message>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.call, self.status_name())?;
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// `std::result::Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: the library returns NUL-terminated strings that live at least until the next call.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// "XFER_ERROR_OUT_OF_BOUNDS" for a status (`xfer_status_string`). Thread-safe.
pub fn status_string(st: sys::xfer_status) -> String {
    text(unsafe { sys::xfer_status_string(st) })
}

/// The calling thread's last failure message (`xfer_last_error`); "" before any failure.
pub fn last_error() -> String {
    text(unsafe { sys::xfer_last_error() })
}

fn check(st: sys::xfer_status, call: &'static str) -> Result<()> {
    if st == sys::XFER_SUCCESS {
        return Ok(());
    }
    let mut message = last_error();
    if let Some(rest) = message.strip_prefix(&format!("{call}: ")) {
        message = rest.to_string();
    }
    Err(Error::new(st, call, message))
}

// The *_query calls: XFER_SUCCESS -> true, XFER_ERROR_NOT_READY -> false, anything else an error.
fn ready(st: sys::xfer_status, call: &'static str) -> Result<bool> {
    match st {
        sys::XFER_ERROR_NOT_READY => Ok(false),
        st => check(st, call).map(|_| true),
    }
}

// Statuses of a synchronisation after which the work it waited for runs no more: done
// (XFER_SUCCESS), done with an asynchronous failure reported (XFER_ERROR_BACKEND), or on a
// device that faulted, which runs nothing any more (XFER_ERROR_BACKEND_UNAVAILABLE). Any other
// status (XFER_ERROR_INVALID_STATE from a host function, XFER_ERROR_INVALID_HANDLE) means the
// call did not wait, so the memory may still be in use.
fn settled(st: sys::xfer_status) -> bool {
    matches!(st, sys::XFER_SUCCESS | sys::XFER_ERROR_BACKEND | sys::XFER_ERROR_BACKEND_UNAVAILABLE)
}

/// (major, minor, patch) of the loaded libxfer (`xfer_get_version`). Thread-safe.
pub fn version() -> Result<(i32, i32, i32)> {
    let (mut a, mut b, mut c) = (0, 0, 0);
    check(unsafe { sys::xfer_get_version(&mut a, &mut b, &mut c) }, "xfer_get_version")?;
    Ok((a, b, c))
}

/// One backend on the plugin search path (`xfer_backend_info`).
#[derive(Debug, Clone)]
pub struct BackendInfo {
    /// e.g. "pinned".
    pub name: String,
    /// One line; "" when the plugin could not be loaded.
    pub description: String,
    /// The plugin file.
    pub path: String,
    /// true: [`Context::open`] can use it; false: see `reason`.
    pub available: bool,
    /// Why it is unavailable ("" when available).
    pub reason: String,
    /// Devices the backend can open (0 when unavailable).
    pub device_count: i32,
    /// `XFER_DEVICE_KIND_HOST` or `XFER_DEVICE_KIND_CUDA`.
    pub device_kind: sys::xfer_device_kind,
}

/// Every backend on the plugin search path, available or not, in search order
/// (`xfer_backend_count` / `xfer_backend_get_info`). Errors: `XFER_ERROR_CONFIG`. Thread-safe.
pub fn backends() -> Result<Vec<BackendInfo>> {
    let mut count: c_int = 0;
    check(unsafe { sys::xfer_backend_count(&mut count) }, "xfer_backend_count")?;
    (0..count)
        .map(|i| {
            let mut info = std::mem::MaybeUninit::<sys::xfer_backend_info>::zeroed();
            check(unsafe { sys::xfer_backend_get_info(i, info.as_mut_ptr()) }, "xfer_backend_get_info")?;
            let info = unsafe { info.assume_init() };
            Ok(BackendInfo {
                name: text(info.name),
                description: text(info.description),
                path: text(info.path),
                available: info.available != 0,
                reason: text(info.reason),
                device_count: info.device_count,
                device_kind: info.device_kind,
            })
        })
        .collect()
}

/// One configuration parameter with its effective value (`xfer_param_info`).
#[derive(Debug, Clone)]
pub struct Param {
    /// "" for top-level keys (backend, device, plugin_path), else the backend's name.
    pub section: String,
    /// Key in the configuration file, e.g. "chunk_size".
    pub name: String,
    /// Environment variable that overrides it, e.g. "XFER_PAGEABLE_CHUNK_SIZE".
    pub env: String,
    /// "int", "size" (bytes), "bool" or "string".
    pub type_: String,
    /// Effective value as text (sizes in bytes).
    pub value: String,
    /// The backend's declared default.
    pub default_value: String,
    /// One line of help.
    pub help: String,
    /// `XFER_PARAM_DEFAULT`, `XFER_PARAM_FILE` or `XFER_PARAM_ENV`.
    pub source: sys::xfer_param_source,
}

/// The effective configuration (`xfer_param_count` / `xfer_param_get_info`). Errors:
/// `XFER_ERROR_CONFIG` (the message names the key and line). Thread-safe.
pub fn params() -> Result<Vec<Param>> {
    let mut count: c_int = 0;
    check(unsafe { sys::xfer_param_count(&mut count) }, "xfer_param_count")?;
    (0..count)
        .map(|i| {
            let mut p = std::mem::MaybeUninit::<sys::xfer_param_info>::zeroed();
            check(unsafe { sys::xfer_param_get_info(i, p.as_mut_ptr()) }, "xfer_param_get_info")?;
            let p = unsafe { p.assume_init() };
            Ok(Param {
                section: text(p.section),
                name: text(p.name),
                env: text(p.env),
                type_: text(p.type_),
                value: text(p.value),
                default_value: text(p.default_value),
                help: text(p.help),
                source: p.source,
            })
        })
        .collect()
}

/// What [`Context::calibrate`] did (`xfer_calibration_info`), copied out of the library.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// true: measured by this process (this call, or the first open of a context of the GPU);
    /// false: one kept by an earlier process still held.
    pub measured: bool,
    /// How long the measuring took (of the kept one, when read), in seconds.
    pub seconds: f64,
    /// Where it is kept; "" with calibration = off (measured, not kept).
    pub file: String,
    /// The calibration as JSON: its key (GPU UUID, driver, runtime, xfer version, CPU), the
    /// curves per way and direction, the registration costs, the fill rate.
    pub json: String,
}

/// One value a context uses (`xfer_context_get_setting`): a parameter of its backend or a value
/// the backend derives, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// The backend's name.
    pub section: String,
    /// Key in the configuration file, e.g. "pin_limit".
    pub name: String,
    /// Environment variable that sets it, e.g. "XFER_PINNED_PIN_LIMIT".
    pub env: String,
    /// "int", "size" (bytes), "bool" or "string".
    pub type_: String,
    /// The value the context uses, as text (sizes in bytes).
    pub value: String,
    /// The backend's declared default.
    pub default_value: String,
    /// One line of help.
    pub help: String,
    /// `XFER_PARAM_DEFAULT`, `XFER_PARAM_FILE`, `XFER_PARAM_ENV` or, for a derived value,
    /// `XFER_PARAM_CALIBRATION` (from this machine's calibration).
    pub source: sys::xfer_param_source,
    /// false: a parameter of the backend; true: a value the backend derives (from the
    /// calibration or its declared default, unless the user set it).
    pub derived: bool,
}

/// Direction of a buffer copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// host view -> device view (H2D)
    ToDevice,
    /// device view -> host view (D2H)
    ToHost,
}

impl Direction {
    fn raw(self) -> sys::xfer_direction {
        match self {
            Direction::ToDevice => sys::XFER_TO_DEVICE,
            Direction::ToHost => sys::XFER_TO_HOST,
        }
    }
}

// ------------------------------------------------------------ which path each copy took

fn static_text(p: *const c_char) -> &'static str {
    if p.is_null() {
        return "unknown";
    }
    // SAFETY: xfer_copy_path_name, xfer_path_reason_name and xfer_copy_record.function return
    // NUL-terminated strings of static storage.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("unknown")
}

macro_rules! raw_enum {
    ($(#[$meta:meta])* $name:ident: $raw:ty, $namer:path, { $($(#[$vmeta:meta])* $variant:ident = $value:path,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A value this crate does not know (from a newer library).
            Other($raw),
        }

        impl $name {
            /// Every value this crate knows, in the order of their C values.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The variant of a C value (`Other` for one this crate does not know).
            pub fn from_raw(raw: $raw) -> $name {
                match raw {
                    $(x if x == $value => $name::$variant,)*
                    other => $name::Other(other),
                }
            }
            /// The C value.
            pub fn raw(self) -> $raw {
                match self {
                    $($name::$variant => $value,)*
                    $name::Other(raw) => raw,
                }
            }
            /// The library's name of it (the names the copy log and xfer-tool print); "unknown"
            /// for a value the library does not know.
            pub fn name(self) -> &'static str {
                static_text(unsafe { $namer(self.raw()) })
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

raw_enum! {
    /// How the bytes of a copy (or of one piece of it) moved (`xfer_copy_path`); its
    /// [`name`](CopyPath::name) is `xfer_copy_path_name`'s ("host_memcpy", "pinned_dma", ...).
    CopyPath: sys::xfer_copy_path, sys::xfer_copy_path_name, {
        /// The backend did not say (a plugin built for plugin ABI 1.3 or older).
        Unreported = sys::XFER_PATH_UNREPORTED,
        /// The CPU copies the bytes: the host backend, and host-to-host copies.
        HostMemcpy = sys::XFER_PATH_HOST_MEMCPY,
        /// A copy-engine DMA to or from page-locked memory.
        PinnedDma = sys::XFER_PATH_PINNED_DMA,
        /// A DMA over user memory the registration cache had page-locked before.
        CachedRegistration = sys::XFER_PATH_CACHED_REGISTRATION,
        /// User memory page-locked by this call, then a DMA.
        NewRegistration = sys::XFER_PATH_NEW_REGISTRATION,
        /// The driver's own staging of pageable memory (`cudaMemcpyAsync`).
        DriverPageable = sys::XFER_PATH_DRIVER_PAGEABLE,
        /// The pageable backend's staging engine (staging = async).
        Staged = sys::XFER_PATH_STAGED,
        /// The staging engine with staging = sync.
        StagedSync = sys::XFER_PATH_STAGED_SYNC,
        /// Small copies of a batch packed into one DMA.
        Packed = sys::XFER_PATH_PACKED,
        /// Device memory to device memory of one device.
        DeviceCopy = sys::XFER_PATH_DEVICE_COPY,
        /// Device memory of one device to another's.
        Peer = sys::XFER_PATH_PEER,
        /// Managed memory migrated (`cudaMemPrefetchAsync`).
        ManagedMigrate = sys::XFER_PATH_MANAGED_MIGRATE,
        /// Managed memory moved through a device or page-locked slot.
        ManagedStaged = sys::XFER_PATH_MANAGED_STAGED,
        /// The driver copies managed memory, faulting pages as it goes.
        ManagedCopy = sys::XFER_PATH_MANAGED_COPY,
        /// Zero-copy: nothing moves.
        Mapped = sys::XFER_PATH_MAPPED,
    }
}

raw_enum! {
    /// Why a copy took its path (`xfer_path_reason`); its [`name`](PathReason::name) is
    /// `xfer_path_reason_name`'s ("memory", "below_crossover", ...).
    PathReason: sys::xfer_path_reason, sys::xfer_path_reason_name, {
        /// The path of this memory: nothing else applies.
        Memory = sys::XFER_REASON_MEMORY,
        /// Smaller than the size from which a faster path is measured.
        BelowCrossover = sys::XFER_REASON_BELOW_CROSSOVER,
        /// The backend has no faster path for this memory.
        NoFasterPath = sys::XFER_REASON_NO_FASTER_PATH,
        /// The first copy of a range: the registration cache page-locks it.
        FirstUse = sys::XFER_REASON_FIRST_USE,
        /// A range already in the registration cache.
        CacheHit = sys::XFER_REASON_CACHE_HIT,
        /// The registration cache is at its limit.
        CacheFull = sys::XFER_REASON_CACHE_FULL,
        /// `cudaHostRegister` refused the range.
        RegistrationFailed = sys::XFER_REASON_REGISTRATION_FAILED,
        /// A parameter chose it.
        Configured = sys::XFER_REASON_CONFIGURED,
        /// The part of a copy past the end of a registration made elsewhere.
        Split = sys::XFER_REASON_SPLIT,
        /// By the calibration, the fastest way that page-locks nothing: the range was not copied
        /// before, or not often enough for a registration to pay back.
        OneOff = sys::XFER_REASON_ONE_OFF,
        /// The range is copied again and, by the calibration, its registration pays back.
        Reuse = sys::XFER_REASON_REUSE,
        /// By the calibration, page-locking the range and copying it as DMA is the fastest way
        /// even for this one copy.
        MeasuredFastest = sys::XFER_REASON_MEASURED_FASTEST,
    }
}

/// Whether `bytes` (one piece) taking `path` for `reason` counts as slow (`xfer_path_is_slow`):
/// the driver's pageable copy and a new registration, from `XFER_SLOW_PATH_MIN_BYTES` on, unless
/// the reason says the path is the fastest one measured for the copy
/// ([`PathReason::BelowCrossover`], [`PathReason::OneOff`], [`PathReason::Reuse`],
/// [`PathReason::MeasuredFastest`]).
pub fn path_is_slow(path: CopyPath, reason: PathReason, bytes: u64) -> bool {
    unsafe { sys::xfer_path_is_slow(path.raw(), reason.raw(), bytes) != 0 }
}

/// What a context does with a copy that would take a slow path (`xfer_slow_path`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlowPath {
    /// Copy it (counted in [`Stats::slow_copies`]).
    Allow,
    /// Copy it and report it: to the observer (`slow` set), else the copy log.
    Warn,
    /// Queue nothing and fail with `XFER_ERROR_SLOW_PATH`.
    Refuse,
}

impl SlowPath {
    /// The C value.
    pub fn raw(self) -> sys::xfer_slow_path {
        match self {
            SlowPath::Allow => sys::XFER_SLOW_PATH_ALLOW,
            SlowPath::Warn => sys::XFER_SLOW_PATH_WARN,
            SlowPath::Refuse => sys::XFER_SLOW_PATH_REFUSE,
        }
    }
    /// The policy of a C value; None for one that is no `xfer_slow_path`.
    pub fn from_raw(raw: sys::xfer_slow_path) -> Option<SlowPath> {
        match raw {
            sys::XFER_SLOW_PATH_ALLOW => Some(SlowPath::Allow),
            sys::XFER_SLOW_PATH_WARN => Some(SlowPath::Warn),
            sys::XFER_SLOW_PATH_REFUSE => Some(SlowPath::Refuse),
            _ => None,
        }
    }
    /// "allow", "warn" or "refuse", as the config key slow_path spells them.
    pub fn name(self) -> &'static str {
        match self {
            SlowPath::Allow => "allow",
            SlowPath::Warn => "warn",
            SlowPath::Refuse => "refuse",
        }
    }
}

/// Per path, what a context's copies did (`xfer_path_stats`): copies, bytes, host time in ns.
pub type PathStats = sys::xfer_path_stats;

/// A context's statistics since it was opened or [`Context::reset_stats`]
/// (`xfer_context_stats`; times in nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// `XFER_CONTEXT_STATS_VERSION` of the library.
    pub version: u32,
    /// Copy calls that queued work.
    pub calls: u64,
    /// Pieces that took a slow path and were queued (policy allow or warn).
    pub slow_copies: u64,
    /// Calls refused with `XFER_ERROR_SLOW_PATH` (policy refuse).
    pub refused_calls: u64,
    /// Ranges page-locked: [`Context::register`] and the registration cache.
    pub registrations: u64,
    /// Their bytes.
    pub registered_bytes: u64,
    /// Host time of those registrations.
    pub registration_ns: u64,
    /// Ranges unlocked.
    pub unregistrations: u64,
    /// Their bytes.
    pub unregistered_bytes: u64,
    /// Host time of those.
    pub unregistration_ns: u64,
    /// Indexed by the C value of each [`CopyPath`] (see [`Stats::path`]); entries the library
    /// did not fill are zero.
    pub paths: [PathStats; sys::XFER_PATH_COUNT as usize],
}

impl Stats {
    fn from_raw(raw: &sys::xfer_context_stats) -> Stats {
        let mut paths = [PathStats::default(); sys::XFER_PATH_COUNT as usize];
        let filled = (raw.path_count as usize).min(paths.len());
        paths[..filled].copy_from_slice(&raw.paths[..filled]);
        Stats {
            version: raw.version,
            calls: raw.calls,
            slow_copies: raw.slow_copies,
            refused_calls: raw.refused_calls,
            registrations: raw.registrations,
            registered_bytes: raw.registered_bytes,
            registration_ns: raw.registration_ns,
            unregistrations: raw.unregistrations,
            unregistered_bytes: raw.unregistered_bytes,
            unregistration_ns: raw.unregistration_ns,
            paths,
        }
    }
    /// What took `path` (zeros for a path this crate does not know).
    pub fn path(&self, path: CopyPath) -> PathStats {
        usize::try_from(path.raw()).ok().and_then(|i| self.paths.get(i).copied()).unwrap_or_default()
    }
    /// The paths that were taken (copies or bytes not 0), in the order of their C values.
    pub fn taken(&self) -> Vec<(CopyPath, PathStats)> {
        CopyPath::ALL.iter().map(|&p| (p, self.path(p))).filter(|(_, s)| s.copies != 0 || s.bytes != 0).collect()
    }
}

/// What a copy observer gets, once per path a copy call used (`xfer_copy_record`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyRecord {
    /// The C entry point, e.g. "xfer_copy_async".
    pub function: &'static str,
    /// How these bytes moved.
    pub path: CopyPath,
    /// Why they took that path.
    pub reason: PathReason,
    /// The direction (`XFER_COPY_*`; a buffer copy: host to device or device to host).
    pub kind: sys::xfer_copy_kind,
    /// Whether this path, for this reason and piece size, counts as slow.
    pub slow: bool,
    /// Copies, batch entries or pieces of the call on this path.
    pub copies: u64,
    /// Their bytes.
    pub bytes: u64,
    /// This path's share (by bytes) of the call's host time, ns.
    pub host_ns: u64,
    /// All bytes of the call, on every path.
    pub call_bytes: u64,
    /// The stream it was queued on (compare with [`Stream::as_raw`]); null for [`Buffer::copy`],
    /// which runs on the context's internal stream.
    pub stream: sys::xfer_stream,
}

// SAFETY: the stream handle is a plain value that the C API accepts from any thread; the record
// owns nothing else but static strings. So records may be kept and sent on.
unsafe impl Send for CopyRecord {}
unsafe impl Sync for CopyRecord {}

/// The closure [`Context::set_copy_observer`] installs.
pub type CopyObserver = Box<dyn FnMut(&CopyRecord) + Send>;

type SharedObserver = Arc<Mutex<CopyObserver>>;

// What the C library's observer reaches through its user_data: boxed by the Context so that its
// address never changes, and kept until the Context is gone (a copy call may still deliver to
// it after a replacement, with the observer it found).
#[derive(Default)]
struct ObserverSlot {
    setting: Mutex<()>, // one change at a time, so that C and `current` agree
    current: Mutex<Option<SharedObserver>>,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    installed: AtomicBool, // the C library has `observe` as the observer
}

impl fmt::Debug for ObserverSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObserverSlot").field("installed", &self.installed.load(Ordering::Relaxed)).finish()
    }
}

// A lock whose poisoning means nothing here: the guarded values are replaced whole.
fn lock_value<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

thread_local! {
    // The observers running on this thread (their addresses): a copy an observer makes itself
    // reaches the trampoline again, and an FnMut cannot run inside itself.
    static RUNNING: RefCell<Vec<usize>> = RefCell::new(Vec::new());
}

impl ObserverSlot {
    fn deliver(&self, record: &sys::xfer_copy_record) {
        let observer = match lock_value(&self.current).clone() {
            Some(f) => f,
            None => return, // removed while this call was on its way
        };
        let key = Arc::as_ptr(&observer) as usize;
        if RUNNING.with(|r| r.borrow().contains(&key)) {
            return;
        }
        let r = CopyRecord {
            function: static_text(record.function),
            path: CopyPath::from_raw(record.path),
            reason: PathReason::from_raw(record.reason),
            kind: record.kind,
            slow: record.slow != 0,
            copies: record.copies,
            bytes: record.bytes,
            host_ns: record.host_ns,
            call_bytes: record.call_bytes,
            stream: record.stream,
        };
        RUNNING.with(|r| r.borrow_mut().push(key));
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            let mut f = lock_value(&observer);
            (*f)(&r)
        }));
        RUNNING.with(|r| {
            let mut running = r.borrow_mut();
            if let Some(at) = running.iter().rposition(|&k| k == key) {
                running.remove(at);
            }
        });
        if let Err(payload) = outcome {
            *lock_value(&self.panic) = Some(payload);
        }
    }
}

// The C library's observer: a panic must not unwind into C, so every one stops here.
unsafe extern "C" fn observe(record: *const sys::xfer_copy_record, user_data: *mut c_void) {
    if record.is_null() || user_data.is_null() {
        return;
    }
    let _ = panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: user_data is the Context's ObserverSlot, alive until the Context is dropped,
        // which takes this observer off first; the record is valid during this call.
        let slot = &*(user_data as *const ObserverSlot);
        slot.deliver(&*record)
    }));
}

/// One backend bound to one device (`xfer_open`; `xfer_close` on drop, which synchronises its
/// streams and releases what is left). `Send + Sync`: the C API allows every call from any
/// thread.
#[derive(Debug)]
pub struct Context {
    raw: sys::xfer_context,
    backend: String,
    device: i32,
    device_kind: sys::xfer_device_kind,
    caps: c_uint,
    observer: Box<ObserverSlot>,
}

// SAFETY: xfer.h: every function may be called from any thread at the same time, and handles
// may be shared between threads.
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Context {
    /// Opens `backend` ("host", "pageable", "pinned", "managed", "zerocopy"; None: from
    /// XFER_BACKEND / XFER_CONFIG, else the first available) on `device` (-1: from XFER_DEVICE /
    /// XFER_CONFIG, else 0) (`xfer_open`). Errors: `XFER_ERROR_BACKEND_NOT_FOUND`,
    /// `XFER_ERROR_BACKEND_UNAVAILABLE` (the message says why), `XFER_ERROR_NO_DEVICE`,
    /// `XFER_ERROR_CONFIG`, `XFER_ERROR_INVALID_ARGUMENT` (a name with a NUL byte, device < -1).
    pub fn open(backend: Option<&str>, device: i32) -> Result<Context> {
        let name = match backend {
            Some(b) => Some(CString::new(b).map_err(|_| {
                Error::new(sys::XFER_ERROR_INVALID_ARGUMENT, "xfer_open", "backend name contains a NUL byte".into())
            })?),
            None => None,
        };
        let mut raw = ptr::null_mut();
        check(
            unsafe { sys::xfer_open(name.as_ref().map_or(ptr::null(), |n| n.as_ptr()), device, &mut raw) },
            "xfer_open",
        )?;
        // Owned from here: an early return below closes it.
        let mut ctx = Context {
            raw,
            backend: String::new(),
            device,
            device_kind: 0,
            caps: 0,
            observer: Box::default(),
        };
        let mut info = std::mem::MaybeUninit::<sys::xfer_context_info>::zeroed();
        check(unsafe { sys::xfer_context_get_info(raw, info.as_mut_ptr()) }, "xfer_context_get_info")?;
        let info = unsafe { info.assume_init() };
        ctx.backend = text(info.backend);
        ctx.device = info.device;
        ctx.device_kind = info.device_kind;
        ctx.caps = info.caps;
        Ok(ctx)
    }

    /// The C handle, for calls through [`sys`]. It stays owned by this `Context`.
    pub fn as_raw(&self) -> sys::xfer_context {
        self.raw
    }
    /// The backend's name, e.g. "pinned".
    pub fn backend(&self) -> &str {
        &self.backend
    }
    /// The device index.
    pub fn device(&self) -> i32 {
        self.device
    }
    /// `XFER_DEVICE_KIND_HOST` or `XFER_DEVICE_KIND_CUDA`.
    pub fn device_kind(&self) -> sys::xfer_device_kind {
        self.device_kind
    }
    /// `XFER_CAP_*` bits (e.g. `XFER_CAP_SHARED_VIEW`: host and device view are one memory).
    pub fn caps(&self) -> c_uint {
        self.caps
    }

    /// The device's properties (`xfer_device_get_info`; memory in bytes). Errors: `XFER_ERROR_BACKEND`.
    pub fn device_info(&self) -> Result<sys::xfer_device_info> {
        let mut info = std::mem::MaybeUninit::<sys::xfer_device_info>::zeroed();
        check(unsafe { sys::xfer_device_get_info(self.raw, info.as_mut_ptr()) }, "xfer_device_get_info")?;
        Ok(unsafe { info.assume_init() })
    }

    /// Calibrates the context's device (`xfer_calibrate`): reads the calibration kept for this
    /// GPU if it still holds, else (or with `force`, `XFER_CALIBRATE_FORCE`) measures now (about a
    /// second; the device should be otherwise idle) and keeps it for every later context of this
    /// GPU. This context keeps the derived values it opened with ([`Context::settings`]); contexts
    /// opened afterwards derive theirs from the new calibration. Errors:
    /// `XFER_ERROR_NOT_SUPPORTED` (the backend has nothing to calibrate: host),
    /// `XFER_ERROR_OUT_OF_MEMORY`, `XFER_ERROR_BACKEND` (a CUDA call failed, or the file could not
    /// be written; the message names which).
    pub fn calibrate(&self, force: bool) -> Result<Calibration> {
        let mut info = sys::xfer_calibration_info::default(); // struct_size set
        let flags = if force { sys::XFER_CALIBRATE_FORCE } else { 0 };
        check(unsafe { sys::xfer_calibrate(self.raw, flags, &mut info) }, "xfer_calibrate")?;
        // The strings live until this thread's next xfer_calibrate: copied now.
        Ok(Calibration {
            measured: info.measured != 0,
            seconds: info.seconds,
            file: text(info.file),
            json: text(info.json),
        })
    }

    /// The values this context uses (`xfer_context_setting_count` / `xfer_context_get_setting`):
    /// its backend's parameters (`derived` false, as [`params`] lists them for the backend's
    /// section), then the values the backend derives (`derived` true: crossovers, chunk and slot
    /// sizes, ...), each with where its value came from.
    pub fn settings(&self) -> Result<Vec<Setting>> {
        let mut count: c_int = 0;
        check(unsafe { sys::xfer_context_setting_count(self.raw, &mut count) }, "xfer_context_setting_count")?;
        (0..count)
            .map(|i| {
                let mut p = std::mem::MaybeUninit::<sys::xfer_param_info>::zeroed();
                let mut derived: c_int = 0;
                check(unsafe { sys::xfer_context_get_setting(self.raw, i, p.as_mut_ptr(), &mut derived) },
                      "xfer_context_get_setting")?;
                let p = unsafe { p.assume_init() };
                // The strings live until this thread's next call: copied now.
                Ok(Setting {
                    section: text(p.section),
                    name: text(p.name),
                    env: text(p.env),
                    type_: text(p.type_),
                    value: text(p.value),
                    default_value: text(p.default_value),
                    help: text(p.help),
                    source: p.source,
                    derived: derived != 0,
                })
            })
            .collect()
    }

    /// A buffer of `bytes` bytes with a host and a device view, contents uninitialised
    /// (`xfer_alloc`; flags: `XFER_ALLOC_*`). Errors: `XFER_ERROR_INVALID_SIZE` (0 bytes, more
    /// than `isize::MAX`), `XFER_ERROR_INVALID_ARGUMENT` (unknown flags),
    /// `XFER_ERROR_OUT_OF_MEMORY`, `XFER_ERROR_BACKEND`.
    pub fn alloc(&self, bytes: usize, flags: c_uint) -> Result<Buffer<'_>> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::xfer_alloc(self.raw, bytes, flags, &mut raw) }, "xfer_alloc")?;
        self.own_buffer(raw, bytes)
    }

    // Takes `raw`, a buffer of this context of `bytes` bytes that the C library just made; frees
    // it when its views cannot be read.
    fn own_buffer(&self, raw: sys::xfer_buffer, bytes: usize) -> Result<Buffer<'_>> {
        // The views never move during the buffer's life: read them once.
        let host = unsafe { sys::xfer_host_ptr(raw) }.cast::<u8>();
        let device = unsafe { sys::xfer_device_ptr(raw) };
        if host.is_null() || device.is_null() {
            let err = Error::new(sys::XFER_ERROR_INTERNAL, "xfer_host_ptr", last_error());
            unsafe { sys::xfer_free(raw) };
            return Err(err);
        }
        Ok(Buffer {
            raw,
            ctx: self.raw,
            bytes,
            host,
            device,
            track: Mutex::new(Track { event: ptr::null_mut(), stream: ptr::null_mut(), pending: false, lost: None }),
            _ctx: PhantomData,
        })
    }

    /// A stream: an in-order queue of work (`xfer_stream_create`; CUDA: a non-blocking
    /// `cudaStream_t`, host: a worker thread). Errors: `XFER_ERROR_OUT_OF_MEMORY`, `XFER_ERROR_BACKEND`.
    pub fn stream(&self) -> Result<Stream<'_>> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::xfer_stream_create(self.raw, &mut raw) }, "xfer_stream_create")?;
        Ok(Stream { raw, wrapped: false, _ctx: PhantomData })
    }

    /// Wraps a stream the application owns (`xfer_stream_wrap`), so that xfer's work queues on
    /// it in stream order with the application's own (its kernels, a framework's copies). The
    /// returned [`Stream`] is used like any other; dropping it waits for the work queued on the
    /// native stream so far (the application's too) and never destroys the native stream.
    /// Its [`Stream::native`] is `native` (`cudaStreamLegacy` for null).
    ///
    /// Errors: `XFER_ERROR_NOT_SUPPORTED` (the host backend has no native stream to wrap),
    /// `XFER_ERROR_INVALID_STATE` (`native` already is a live stream of this context, wrapped or
    /// created by xfer), `XFER_ERROR_BACKEND` (not a stream of this context's device).
    ///
    /// # Safety
    /// `native` must be a `cudaStream_t` of this context's device (one the application created,
    /// or null / `cudaStreamLegacy`; [`Context::legacy_stream`] does that one safely) that stays
    /// alive, not destroyed, until the returned `Stream` is dropped: xfer queues work on it and
    /// [`Stream::scope`] relies on synchronising it. For `cudaStreamPerThread` the returned
    /// `Stream`, although `Send + Sync`, must be used from the wrapping thread only: from another
    /// thread it would name another stream, and the ordering the safe layer relies on (a
    /// buffer's copies in queue order) would not hold. The native stream must not be capturing
    /// a CUDA graph while work is queued through the returned `Stream`: a captured copy runs at
    /// every replay of the graph, after the borrows the safe layer gave out have ended.
    pub unsafe fn wrap_stream(&self, native: *mut c_void) -> Result<Stream<'_>> {
        let mut raw = ptr::null_mut();
        check(sys::xfer_stream_wrap(self.raw, native, &mut raw), "xfer_stream_wrap")?;
        Ok(Stream { raw, wrapped: true, _ctx: PhantomData })
    }

    /// The device's legacy default stream (`cudaStreamLegacy`) wrapped as a [`Stream`]
    /// (`xfer_stream_wrap` with null): safe, since that stream lives as long as the process.
    /// Work on it is ordered with the application's default-stream work. Errors:
    /// `XFER_ERROR_NOT_SUPPORTED` (host backend), `XFER_ERROR_INVALID_STATE` (this context has
    /// it wrapped already).
    pub fn legacy_stream(&self) -> Result<Stream<'_>> {
        // SAFETY: the legacy default stream is never destroyed, and it is the same stream from
        // every thread.
        unsafe { self.wrap_stream(ptr::null_mut()) }
    }

    /// An event (`xfer_event_create`; flags: `XFER_EVENT_*`). Errors: `XFER_ERROR_INVALID_ARGUMENT`
    /// (unknown flags), `XFER_ERROR_OUT_OF_MEMORY`, `XFER_ERROR_BACKEND`.
    pub fn event(&self, flags: c_uint) -> Result<Event<'_>> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::xfer_event_create(self.raw, flags, &mut raw) }, "xfer_event_create")?;
        Ok(Event { raw, _ctx: PhantomData })
    }

    /// Queues a raw copy of `bytes` bytes from `src` to `dst` on `stream` (`xfer_memcpy_async`)
    /// and returns without waiting. For the program's slices, [`Stream::scope`] is the safe form.
    ///
    /// # Safety
    /// Both ranges must be memory the backend can reach, and stay alive and untouched by
    /// anything else until the stream, or an event recorded after the copy, says it is done. A
    /// range inside a [`Buffer`]'s views bypasses the buffer's tracking of its copies: no safe
    /// access to that buffer may overlap the copy.
    pub unsafe fn memcpy_async(&self, dst: *mut c_void, src: *const c_void, bytes: usize, kind: sys::xfer_copy_kind,
                               stream: &Stream<'_>) -> Result<()> {
        check(sys::xfer_memcpy_async(self.raw, dst, src, bytes, kind, stream.raw), "xfer_memcpy_async")
    }

    /// Copies `src` into `dst` through the backend on `stream` (host memory on both sides) and
    /// waits for the stream. Errors: `XFER_ERROR_INVALID_SIZE` (the lengths differ, or both are
    /// empty), `XFER_ERROR_INVALID_ARGUMENT` (the slices overlap), the statuses of
    /// `xfer_memcpy_async` and `xfer_stream_synchronize`.
    pub fn memcpy_host(&self, dst: &mut [u8], src: &[u8], stream: &Stream<'_>) -> Result<()> {
        if dst.len() != src.len() {
            return Err(Error::new(sys::XFER_ERROR_INVALID_SIZE, "xfer_memcpy_async",
                                  format!("dst has {} bytes, src {}", dst.len(), src.len())));
        }
        // The scope keeps both slices borrowed until the stream is synchronised.
        stream.scope(|_| unsafe {
            self.memcpy_async(dst.as_mut_ptr().cast(), src.as_ptr().cast(), src.len(), sys::XFER_COPY_HOST_TO_HOST,
                              stream)
        })
    }

    /// Page-locks (registers) the memory of `data` for this context (`xfer_register`; flags:
    /// `XFER_REGISTER_*`), so copies from and to it run as DMA. The returned [`Registration`]
    /// borrows `data` until it is dropped or [`Registration::unregister`]ed, and gives access to
    /// it meanwhile. Registering is slow: register long-lived memory once. Errors:
    /// `XFER_ERROR_INVALID_SIZE` (an empty slice), `XFER_ERROR_INVALID_STATE` (memory registered
    /// already), `XFER_ERROR_OUT_OF_MEMORY` (RLIMIT_MEMLOCK), `XFER_ERROR_NOT_SUPPORTED`.
    pub fn register<'a, T>(&'a self, data: &'a mut [T], flags: c_uint) -> Result<Registration<'a, T>> {
        let bytes = std::mem::size_of_val(data);
        let ptr = data.as_mut_ptr();
        // SAFETY: `data` stays borrowed by the Registration, which unregisters before the borrow ends.
        unsafe { self.register_raw(ptr.cast(), bytes, flags)? };
        Ok(Registration { ctx: self, ptr, len: data.len(), _data: PhantomData })
    }

    /// Unregisters `reg` now, reporting a failure that its `Drop` would ignore (`xfer_unregister`,
    /// which waits for the context's queued work first). Errors: `XFER_ERROR_INVALID_ARGUMENT`
    /// (`reg` belongs to another context; it is dropped, which unregisters it there).
    pub fn unregister<T>(&self, reg: Registration<'_, T>) -> Result<()> {
        if !ptr::eq(reg.ctx, self) {
            return Err(Error::new(sys::XFER_ERROR_INVALID_ARGUMENT, "xfer_unregister",
                                  "the registration belongs to another context".into()));
        }
        reg.unregister()
    }

    /// Registers `bytes` bytes at `ptr` (`xfer_register`), without a guard.
    ///
    /// # Safety
    /// The range must be memory of this process that stays allocated until
    /// [`Context::unregister_raw`] (or the context is dropped, which unregisters what is left).
    pub unsafe fn register_raw(&self, ptr: *mut c_void, bytes: usize, flags: c_uint) -> Result<()> {
        check(sys::xfer_register(self.raw, ptr, bytes, flags), "xfer_register")
    }

    /// Unregisters the range that starts at `ptr` (`xfer_unregister`; waits for queued work first).
    ///
    /// # Safety
    /// `ptr` must not be the start of a range a live [`Registration`] owns.
    pub unsafe fn unregister_raw(&self, ptr: *mut c_void) -> Result<()> {
        check(sys::xfer_unregister(self.raw, ptr), "xfer_unregister")
    }

    /// What the context has registered, explicitly and through its registration cache
    /// (`xfer_registration_get_stats`; counters since the context was opened, sizes in bytes).
    pub fn registration_stats(&self) -> Result<sys::xfer_registration_stats> {
        let mut stats = sys::xfer_registration_stats::default();
        check(unsafe { sys::xfer_registration_get_stats(self.raw, &mut stats) }, "xfer_registration_get_stats")?;
        Ok(stats)
    }

    /// What the context's copies did since it was opened or [`Context::reset_stats`]
    /// (`xfer_context_get_stats`): per path the copies, bytes and host time, the calls, slow and
    /// refused ones, and the registrations.
    pub fn stats(&self) -> Result<Stats> {
        let mut raw = sys::xfer_context_stats::default(); // struct_size set
        check(unsafe { sys::xfer_context_get_stats(self.raw, &mut raw) }, "xfer_context_get_stats")?;
        Ok(Stats::from_raw(&raw))
    }

    /// Sets every counter of [`Context::stats`] to 0 (`xfer_context_reset_stats`).
    pub fn reset_stats(&self) -> Result<()> {
        check(unsafe { sys::xfer_context_reset_stats(self.raw) }, "xfer_context_reset_stats")
    }

    /// Installs `observer` as the copy observer (`xfer_set_copy_observer`), replacing the
    /// previous one or the `XFER_LOG=copies` log; `None` removes it. The context keeps the
    /// closure until it is replaced and no call runs it any more, or the context is dropped.
    ///
    /// It runs inside each copy call, on the caller's thread, after the copies were queued,
    /// once per path the call used. Calls from several threads take turns (an `FnMut` runs once
    /// at a time). It may make copies and read [`Context::stats`]; the records of copies it makes
    /// itself are not delivered to it (it cannot run inside itself), they are counted all the
    /// same. A panic in it is caught before it reaches the C library (the panic hook has printed
    /// it): the copy is unaffected and [`Context::take_observer_panic`] returns the payload.
    pub fn set_copy_observer(&self, observer: Option<CopyObserver>) -> Result<()> {
        let slot = &*self.observer;
        let _setting = lock_value(&slot.setting);
        match observer {
            None => {
                check(unsafe { sys::xfer_set_copy_observer(self.raw, None, ptr::null_mut()) },
                      "xfer_set_copy_observer")?;
                slot.installed.store(false, Ordering::Release);
                let previous = lock_value(&slot.current).take();
                drop(previous); // outside the lock: its Drop may do anything
                Ok(())
            }
            Some(f) => {
                let previous = lock_value(&slot.current).replace(Arc::new(Mutex::new(f)));
                let user_data = slot as *const ObserverSlot as *mut c_void;
                let st = unsafe { sys::xfer_set_copy_observer(self.raw, Some(observe), user_data) };
                if st == sys::XFER_SUCCESS {
                    slot.installed.store(true, Ordering::Release);
                    drop(previous);
                } else {
                    let refused = std::mem::replace(&mut *lock_value(&slot.current), previous);
                    drop(refused);
                }
                check(st, "xfer_set_copy_observer")
            }
        }
    }

    /// The payload of the latest panic of the copy observer since the last call (None: none),
    /// e.g. for [`std::panic::resume_unwind`]; clears it.
    pub fn take_observer_panic(&self) -> Option<Box<dyn Any + Send + 'static>> {
        lock_value(&self.observer.panic).take()
    }

    /// Sets the slow-path policy (`xfer_context_set_slow_path`): with [`SlowPath::Refuse`] (strict
    /// mode) a copy that would take a slow path ([`path_is_slow`]) fails with
    /// `XFER_ERROR_SLOW_PATH` and queues nothing.
    pub fn set_slow_path(&self, policy: SlowPath) -> Result<()> {
        check(unsafe { sys::xfer_context_set_slow_path(self.raw, policy.raw()) }, "xfer_context_set_slow_path")
    }

    /// The policy in force (`xfer_context_get_slow_path`): the config key slow_path /
    /// `XFER_SLOW_PATH` at open, or what [`Context::set_slow_path`] set.
    pub fn slow_path(&self) -> Result<SlowPath> {
        let mut raw: sys::xfer_slow_path = sys::XFER_SLOW_PATH_ALLOW;
        check(unsafe { sys::xfer_context_get_slow_path(self.raw, &mut raw) }, "xfer_context_get_slow_path")?;
        SlowPath::from_raw(raw).ok_or_else(|| {
            Error::new(sys::XFER_ERROR_INTERNAL, "xfer_context_get_slow_path",
                       format!("the library answered {raw}, which is no xfer_slow_path"))
        })
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        if self.observer.installed.load(Ordering::Acquire) {
            // Before the close: nothing it does reaches the closure, which goes after it.
            unsafe { sys::xfer_set_copy_observer(self.raw, None, ptr::null_mut()) };
        }
        unsafe { sys::xfer_close(self.raw) }; // releases even when it reports a failure
    }
}

/// Plain-old-data: element types that xfer may copy as bytes and that host views may be read
/// as. Implemented for the integer and floating-point primitives and for arrays of `Pod` types;
/// not for `bool`, `char`, references or pointers.
///
/// # Safety
/// Implement it (for a `#[repr(C)]` struct, say) only for a type that is `Copy`, has no padding
/// bytes, for which every bit pattern is a valid value, and that holds no pointer, reference or
/// interior mutability (`UnsafeCell`): xfer writes its bytes from memory the compiler does not
/// see, and reads its bytes, padding included.
pub unsafe trait Pod: Copy + Send + Sync + 'static {}
macro_rules! pod { ($($t:ty),*) => { $(unsafe impl Pod for $t {})* }; }
pod!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, usize, isize, f32, f64);
// SAFETY: an array of a padding-free type has no padding and every bit pattern of it is valid.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

fn as_bytes<T: Pod>(s: &[T]) -> (*const c_void, usize) {
    (s.as_ptr().cast(), std::mem::size_of_val(s))
}

// What a buffer knows about the copies queued on it: `event` was recorded after the last one
// (each copy is ordered after the one before it, so this one event covers them all).
struct Track {
    event: sys::xfer_event,   // null until the first copy
    stream: sys::xfer_stream, // where `event` was last recorded
    pending: bool,            // recorded and not yet seen complete
    lost: Option<Error>,      // a copy was queued that could neither be tracked nor waited for
}

// SAFETY: the handles are plain values the C API accepts from any thread.
unsafe impl Send for Track {}

impl Track {
    fn lost_error(&self, call: &'static str) -> Option<Error> {
        self.lost.as_ref().map(|cause| {
            Error::new(sys::XFER_ERROR_INVALID_STATE, call,
                       format!("a copy queued on this buffer could neither be tracked nor waited for ({cause}); \
                                its memory stays unreachable"))
        })
    }

    // Blocks until every copy queued on the buffer is done.
    fn settle(&mut self, call: &'static str) -> Result<()> {
        if let Some(err) = self.lost_error(call) {
            return Err(err);
        }
        if !self.pending {
            return Ok(());
        }
        let st = unsafe { sys::xfer_event_synchronize(self.event) };
        if settled(st) {
            self.pending = false;
        }
        check(st, "xfer_event_synchronize")
    }
}

/// One logical array with a host view and a device view (`xfer_alloc`; `xfer_free` on drop,
/// which the library defers until queued copies that use the buffer are done).
///
/// A buffer tracks the copies queued on it (see the crate docs, "the rule"): they run in the
/// order they were queued, whatever their streams, and every access to the host view waits for
/// them first. That order holds for two reads of one buffer on two streams too; copies meant
/// to overlap go to different buffers. `Send + Sync`; `&self` methods may be called from
/// several threads at once (accesses and queued copies take a lock of the buffer for the
/// duration of the call).
#[derive(Debug)]
pub struct Buffer<'c> {
    raw: sys::xfer_buffer,
    ctx: sys::xfer_context,
    bytes: usize,
    host: *mut u8,
    device: *mut c_void,
    track: Mutex<Track>,
    _ctx: PhantomData<&'c Context>,
}

// SAFETY: see Context; the host view is reached only through &self / &mut self borrows, and the
// tracking state sits behind a Mutex.
unsafe impl Send for Buffer<'_> {}
unsafe impl Sync for Buffer<'_> {}

impl fmt::Debug for Track {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Track").field("pending", &self.pending).field("lost", &self.lost).finish()
    }
}

// The buffer's lock; a panic while it was held (none of the code under it panics) poisons
// nothing that matters: the state is updated only after each C call returns.
fn lock(track: &Mutex<Track>) -> MutexGuard<'_, Track> {
    track.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

// [offset, offset + bytes) must lie inside a buffer of `len` bytes.
fn check_range(offset: usize, bytes: usize, len: usize, call: &'static str) -> Result<()> {
    match offset.checked_add(bytes) {
        None => Err(Error::new(sys::XFER_ERROR_INVALID_SIZE, call,
                               format!("offset {offset} + {bytes} bytes overflows usize"))),
        Some(end) if end > len => Err(Error::new(sys::XFER_ERROR_OUT_OF_BOUNDS, call,
                                                 format!("{bytes} bytes at offset {offset} run past the end of the \
                                                          {len}-byte buffer"))),
        Some(_) => Ok(()),
    }
}

impl<'c> Buffer<'c> {
    /// The C handle, for calls through [`sys`]. It stays owned by this `Buffer`; copies queued
    /// through it directly are not tracked by the buffer.
    pub fn as_raw(&self) -> sys::xfer_buffer {
        self.raw
    }
    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }
    /// Always false: a buffer has at least one byte.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
    /// Address of the device view (a CUDA device pointer on CUDA backends, host memory on
    /// `host`), for kernels. Dereferencing it, or handing it to raw copies, is the caller's
    /// `unsafe` business: the buffer does not track such work.
    pub fn device_ptr(&self) -> *mut c_void {
        self.device
    }

    /// Blocks until every copy queued on this buffer is done (`xfer_event_synchronize` of the
    /// buffer's event), reporting a failure of those copies. Errors: `XFER_ERROR_BACKEND`
    /// (reported once), `XFER_ERROR_INVALID_STATE` (a copy could not be tracked: the host view
    /// stays unreachable).
    pub fn synchronize(&self) -> Result<()> {
        lock(&self.track).settle("xfer::Buffer::synchronize")
    }

    /// true when no copy queued on this buffer is still running; never blocks
    /// (`xfer_event_query`).
    pub fn query(&self) -> Result<bool> {
        let mut t = lock(&self.track);
        if let Some(err) = t.lost_error("xfer::Buffer::query") {
            return Err(err);
        }
        if !t.pending {
            return Ok(true);
        }
        let idle = ready(unsafe { sys::xfer_event_query(t.event) }, "xfer_event_query")?;
        t.pending = !idle;
        Ok(idle)
    }

    /// The host view as bytes, once the copies queued on the buffer are done (waits for them).
    /// Errors: those of [`Buffer::synchronize`].
    pub fn host(&self) -> Result<&[u8]> {
        lock(&self.track).settle("xfer::Buffer::host")?;
        // SAFETY: no queued copy uses the memory any more; copies that write it need &mut self,
        // and those queued through &self meanwhile only read it.
        Ok(unsafe { std::slice::from_raw_parts(self.host, self.bytes) })
    }

    /// The host view as bytes, writable, once the copies queued on the buffer are done (waits
    /// for them). Errors: those of [`Buffer::synchronize`].
    pub fn host_mut(&mut self) -> Result<&mut [u8]> {
        self.track.get_mut().unwrap_or_else(|p| p.into_inner()).settle("xfer::Buffer::host_mut")?;
        // SAFETY: as host(); the &mut self borrow excludes every other access meanwhile.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.host, self.bytes) })
    }

    fn typed_len<T: Pod>(&self, call: &'static str) -> Result<usize> {
        let size = std::mem::size_of::<T>();
        if size == 0 || (self.host as usize) % std::mem::align_of::<T>() != 0 || self.bytes % size != 0 {
            return Err(Error::new(sys::XFER_ERROR_INVALID_ARGUMENT, call,
                                  format!("{} bytes are not a whole, aligned number of {}", self.bytes,
                                          std::any::type_name::<T>())));
        }
        Ok(self.bytes / size)
    }

    /// The host view as `len() / size_of::<T>()` elements, once queued copies are done.
    /// Errors: `XFER_ERROR_INVALID_ARGUMENT` (the size is not a whole number of `T`, or the view
    /// is not aligned for `T`), those of [`Buffer::synchronize`].
    pub fn host_as<T: Pod>(&self) -> Result<&[T]> {
        let n = self.typed_len::<T>("xfer::Buffer::host_as")?;
        let bytes = self.host()?;
        // SAFETY: size and alignment checked; T: Pod is valid for every byte pattern.
        Ok(unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast(), n) })
    }

    /// The host view as `len() / size_of::<T>()` elements, writable, once queued copies are
    /// done. Errors: as [`Buffer::host_as`].
    pub fn host_as_mut<T: Pod>(&mut self) -> Result<&mut [T]> {
        let n = self.typed_len::<T>("xfer::Buffer::host_as_mut")?;
        let bytes = self.host_mut()?;
        // SAFETY: as host_as; exclusive through &mut self.
        Ok(unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), n) })
    }

    // Queues `op` (a C call returning its status; nothing is queued when it fails) on `stream`
    // after every copy already queued on this buffer, and records the buffer's event after it.
    fn enqueue(&self, stream: &Stream<'_>, call: &'static str, op: impl FnOnce() -> sys::xfer_status) -> Result<()> {
        let mut t = lock(&self.track);
        if let Some(err) = t.lost_error(call) {
            return Err(err);
        }
        if t.event.is_null() {
            let mut event = ptr::null_mut();
            check(unsafe { sys::xfer_event_create(self.ctx, sys::XFER_EVENT_DISABLE_TIMING, &mut event) },
                  "xfer_event_create")?;
            t.event = event;
        }
        // Stream order covers a copy on the same stream. A stream with the same handle as a
        // destroyed one needs no wait either: destroying a stream waits for its work.
        if t.pending && t.stream != stream.raw {
            check(unsafe { sys::xfer_stream_wait_event(stream.raw, t.event) }, "xfer_stream_wait_event")?;
        }
        check(op(), call)?;
        let st = unsafe { sys::xfer_event_record(t.event, stream.raw) };
        if st == sys::XFER_SUCCESS {
            t.pending = true;
            t.stream = stream.raw;
            return Ok(());
        }
        let err = check(st, "xfer_event_record").unwrap_err();
        // The copy is queued but untracked: wait for it here, since it is ordered after the
        // earlier ones, that covers them too. Where even that fails, nothing may reach the
        // memory again.
        if settled(unsafe { sys::xfer_stream_synchronize(stream.raw) }) {
            t.pending = false;
        } else {
            t.lost = Some(err.clone());
        }
        Err(err)
    }

    /// Queues a copy of the whole buffer on `stream` (`xfer_copy_async`), ordered after the
    /// copies already queued on the buffer; returns at once. The buffer stays borrowed by the
    /// returned [`Pending`]. Errors: as [`Buffer::copy_range_async`].
    pub fn copy_async(&mut self, dir: Direction, stream: &Stream<'c>) -> Result<Pending<'_>> {
        let n = self.bytes;
        self.copy_range_async(dir, 0, n, stream)
    }

    /// Queues a copy of bytes [offset, offset + bytes) between the host and the device view on
    /// `stream` (`xfer_copy_async`), ordered after the copies already queued on the buffer, and
    /// returns at once. The buffer stays borrowed until the returned [`Pending`] is waited for
    /// or dropped; dropping or forgetting it does not wait, the next access to the host view
    /// does.
    ///
    /// Errors (nothing queued): `XFER_ERROR_OUT_OF_BOUNDS` (offset + bytes > len),
    /// `XFER_ERROR_INVALID_SIZE` (bytes 0, or the sum overflows), `XFER_ERROR_INVALID_HANDLE`
    /// (a stream of another context), `XFER_ERROR_BACKEND`.
    ///
    /// Touching the buffer while the copy is pending does not compile:
    /// ```compile_fail,E0499
    /// # fn main() -> Result<(), xfer::Error> {
    /// # let ctx = xfer::Context::open(Some("host"), 0)?;
    /// # let stream = ctx.stream()?;
    /// let mut buf = ctx.alloc(4096, 0)?;
    /// let pending = buf.copy_async(xfer::Direction::ToHost, &stream)?;
    /// buf.host_mut()?.fill(0); // error: `buf` is still borrowed by `pending`
    /// pending.wait()?;
    /// # Ok(()) }
    /// ```
    /// and forgetting the [`Pending`] compiles but cannot race: the access waits.
    /// ```
    /// # fn main() -> Result<(), xfer::Error> {
    /// # let ctx = xfer::Context::open(Some("host"), 0)?;
    /// # let stream = ctx.stream()?;
    /// let mut buf = ctx.alloc(4096, 0)?;
    /// buf.host_mut()?.fill(7);
    /// std::mem::forget(buf.copy_async(xfer::Direction::ToDevice, &stream)?);
    /// buf.host_mut()?.fill(0); // waits for the copy first
    /// buf.copy_async(xfer::Direction::ToHost, &stream)?.wait()?;
    /// assert!(buf.host()?.iter().all(|&b| b == 7));
    /// # Ok(()) }
    /// ```
    pub fn copy_range_async(&mut self, dir: Direction, offset: usize, bytes: usize, stream: &Stream<'c>)
                            -> Result<Pending<'_>> {
        let raw = self.raw;
        self.enqueue(stream, "xfer_copy_async", || unsafe {
            sys::xfer_copy_async(raw, dir.raw(), offset, bytes, stream.raw)
        })?;
        Ok(Pending { track: &self.track, _exclusive: PhantomData })
    }

    /// Copies bytes [offset, offset + bytes) and waits (`xfer_copy`, on an internal stream of
    /// the context), after waiting for the copies queued on the buffer. Errors: those of
    /// [`Buffer::copy_range_async`] and [`Buffer::synchronize`].
    pub fn copy(&mut self, dir: Direction, offset: usize, bytes: usize) -> Result<()> {
        self.track.get_mut().unwrap_or_else(|p| p.into_inner()).settle("xfer_copy")?;
        check(unsafe { sys::xfer_copy(self.raw, dir.raw(), offset, bytes) }, "xfer_copy")
    }

    /// Copies the program's `src` into the device view at byte `offset` on `stream` and waits
    /// (a [`Stream::scope`] with one [`Scope::copy_to_device`]). Errors: as that method.
    pub fn write_device<T: Pod>(&mut self, offset: usize, src: &[T], stream: &Stream<'c>) -> Result<()> {
        stream.scope(|s| s.copy_to_device(src, self, offset))
    }

    /// Copies the device view from byte `offset` into the program's `dst` on `stream` and waits
    /// (a [`Stream::scope`] with one [`Scope::copy_from_device`]). Errors: as that method.
    pub fn read_device<T: Pod>(&self, offset: usize, dst: &mut [T], stream: &Stream<'c>) -> Result<()> {
        stream.scope(|s| s.copy_from_device(self, offset, dst))
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        let t = self.track.get_mut().unwrap_or_else(|p| p.into_inner());
        if !t.event.is_null() {
            unsafe { sys::xfer_event_destroy(t.event) }; // queued records and waits are unaffected
        }
        unsafe { sys::xfer_free(self.raw) }; // deferred by the library until queued copies are done
    }
}

// ------------------------------------- sharing buffers with other processes and libraries

/// A buffer's export (`xfer_export`): the blob that describes the memory and the file
/// descriptors it lives in, which this value owns and closes on `Drop` (`xfer_export_close`).
/// Made by [`Buffer::export`] or [`Export::receive`]; read by [`Context::import_buffer`] and
/// [`Export::send`], which leave the descriptors here. Not `Clone`: each descriptor has one owner.
/// Whoever holds the descriptors can map the memory: send them only to processes that may.
///
/// ```compile_fail,E0599
/// # fn main() -> Result<(), xfer::Error> {
/// # let ctx = xfer::Context::open(Some("host"), 0)?;
/// # let buf = ctx.alloc(4096, xfer::sys::XFER_ALLOC_SHAREABLE)?;
/// let e = unsafe { buf.export()? };
/// let twice = e.clone(); // error: two owners would close the descriptors twice
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Export {
    raw: sys::xfer_export,
}

impl Export {
    // An export that holds nothing yet, struct_size set for the C call that fills it.
    fn empty() -> Export {
        Export { raw: sys::xfer_export::default() }
    }

    /// Receives an export sent by [`Export::send`] from a connected Unix-domain socket (e.g.
    /// `stream.as_raw_fd()` of a `UnixStream`), blocking until one arrives
    /// (`xfer_export_receive`). The returned `Export` owns the new descriptors. Errors:
    /// `XFER_ERROR_INVALID_ARGUMENT` (a message that is not an export; `socket` negative),
    /// `XFER_ERROR_BACKEND` (recvmsg failed, or the peer closed the socket first); no
    /// descriptor is left open then.
    pub fn receive(socket: RawFd) -> Result<Export> {
        let mut e = Export::empty(); // closes whatever a failed call might leave
        check(unsafe { sys::xfer_export_receive(socket, &mut e.raw) }, "xfer_export_receive")?;
        Ok(e)
    }

    /// Sends the export over a connected Unix-domain socket as one message, the descriptors as
    /// `SCM_RIGHTS` (`xfer_export_send`); this value keeps its own. Errors:
    /// `XFER_ERROR_INVALID_ARGUMENT` (`socket` negative), `XFER_ERROR_BACKEND` (sendmsg failed
    /// or the peer went away).
    pub fn send(&self, socket: RawFd) -> Result<()> {
        check(unsafe { sys::xfer_export_send(socket, &self.raw) }, "xfer_export_send")
    }

    /// The C struct, for calls through [`sys`] that leave the descriptors with their caller
    /// (`xfer_buffer_import`, `xfer_export_send`). They stay owned by this value.
    pub fn as_raw(&self) -> &sys::xfer_export {
        &self.raw
    }
    /// The descriptors (`host`: one memfd); owned by this value, closed when it is dropped.
    pub fn fds(&self) -> &[RawFd] {
        &self.raw.fds[..(self.raw.fd_count as usize).min(sys::XFER_EXPORT_MAX_FDS)]
    }
    /// The description: opaque bytes, checked at import.
    pub fn blob(&self) -> &[u8] {
        &self.raw.blob[..(self.raw.blob_bytes as usize).min(sys::XFER_EXPORT_BLOB_BYTES)]
    }
}

impl Drop for Export {
    fn drop(&mut self) {
        unsafe { sys::xfer_export_close(&mut self.raw) };
    }
}

impl<'c> Buffer<'c> {
    /// Describes this buffer for another process, or another context of this one
    /// (`xfer_buffer_export`): the returned [`Export`] owns new descriptors of its memory. The
    /// buffer stays as it is. Errors: `XFER_ERROR_INVALID_STATE` (allocated without
    /// `XFER_ALLOC_SHAREABLE`), `XFER_ERROR_NOT_SUPPORTED` (the backend cannot export),
    /// `XFER_ERROR_BACKEND`.
    ///
    /// # Safety
    /// Whoever maps the descriptors (an import in this process or another) can write this
    /// buffer's memory behind the borrow checker's back. While a view of this buffer is
    /// borrowed ([`Buffer::host`], [`Buffer::host_mut`] and their typed forms), no other mapping
    /// may write the memory, nor read it while a `host_mut` borrow lives; and the buffer waits
    /// only for its own queued copies, not for those of an import. The processes keep that
    /// order themselves, e.g. one synchronises its copies and then says so over the socket
    /// before the other touches the memory.
    pub unsafe fn export(&self) -> Result<Export> {
        let mut e = Export::empty(); // closes whatever a failed call might leave
        check(sys::xfer_buffer_export(self.raw, &mut e.raw), "xfer_buffer_export")?;
        Ok(e)
    }

    /// What this buffer's memory is, for the libraries it is handed to
    /// (`xfer_buffer_get_share_info`): how it can be shared, and each view's MPI memory kind
    /// and DLPack device.
    pub fn share_info(&self) -> Result<ShareInfo> {
        let mut i = sys::xfer_share_info {
            struct_size: std::mem::size_of::<sys::xfer_share_info>(),
            handle_types: 0,
            rdma_capable: 0,
            granularity: 0,
            device_view_bytes: 0,
            host_memory_kind: std::ptr::null(),
            device_memory_kind: std::ptr::null(),
            host_dlpack_device_type: 0,
            host_dlpack_device_id: 0,
            device_dlpack_device_type: 0,
            device_dlpack_device_id: 0,
        };
        check(unsafe { sys::xfer_buffer_get_share_info(self.raw, &mut i) }, "xfer_buffer_get_share_info")?;
        // The kinds are static strings of the library.
        let kind = |p: *const c_char| unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("").to_owned();
        Ok(ShareInfo {
            handle_types: i.handle_types,
            rdma_capable: i.rdma_capable != 0,
            granularity: i.granularity,
            device_view_bytes: i.device_view_bytes,
            host_memory_kind: kind(i.host_memory_kind),
            device_memory_kind: kind(i.device_memory_kind),
            host_dlpack_device: (i.host_dlpack_device_type, i.host_dlpack_device_id),
            device_dlpack_device: (i.device_dlpack_device_type, i.device_dlpack_device_id),
        })
    }
}

/// What a buffer's memory is ([`Buffer::share_info`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareInfo {
    /// `XFER_SHARE_HANDLE_*` bits its memory can be shared by (0: none).
    pub handle_types: c_uint,
    /// The device view was made GPUDirect RDMA capable.
    pub rdma_capable: bool,
    /// The device view's allocation granularity in bytes (0: not a CUDA virtual-memory allocation).
    pub granularity: usize,
    /// Bytes mapped at the device view.
    pub device_view_bytes: usize,
    /// MPI memory kind of the host view ("system", "cuda:host", "cuda:managed").
    pub host_memory_kind: String,
    /// MPI memory kind of the device view ("cuda:device", "cuda:host", "cuda:managed", "system").
    pub device_memory_kind: String,
    /// DLPack (device_type, device_id) of the host view.
    pub host_dlpack_device: (c_int, c_int),
    /// DLPack (device_type, device_id) of the device view.
    pub device_dlpack_device: (c_int, c_int),
}

impl Context {
    /// A buffer of this context over the memory `export` describes (`xfer_buffer_import`): an
    /// export of a buffer of another process ([`Export::receive`]) or of this one, made by a
    /// context of the same backend. The import and the exported buffer are one memory; the
    /// import keeps it after the exporter freed its buffer. `export` keeps its descriptors
    /// (the buffer holds its own). Errors: `XFER_ERROR_INVALID_ARGUMENT` (not an xfer export,
    /// of another backend, corrupted: the message says which), `XFER_ERROR_NOT_SUPPORTED` (the
    /// backend cannot import), `XFER_ERROR_OUT_OF_MEMORY`.
    ///
    /// # Safety
    /// As [`Buffer::export`], for the returned buffer: while one of its views is borrowed, no
    /// other mapping of the memory (the exporter's buffer, another import, another process) may
    /// write it, nor read it while a `host_mut` borrow lives, and copies queued on another
    /// mapping are not waited for by this buffer's accessors.
    ///
    /// ```
    /// # fn main() -> Result<(), xfer::Error> {
    /// use xfer::{sys, Context, Direction};
    /// let (a, b) = (Context::open(Some("host"), 0)?, Context::open(Some("host"), 0)?);
    /// let mut mine = a.alloc(4096, sys::XFER_ALLOC_SHAREABLE)?;
    /// mine.host_mut()?.fill(7);
    /// // SAFETY: one thread, and no view of either buffer is borrowed while the other writes.
    /// let theirs = unsafe { b.import_buffer(&mine.export()?)? };
    /// assert!(theirs.host()?.iter().all(|&x| x == 7));
    /// # Ok(()) }
    /// ```
    /// Without `unsafe` it does not compile:
    /// ```compile_fail,E0133
    /// # fn main() -> Result<(), xfer::Error> {
    /// # let ctx = xfer::Context::open(Some("host"), 0)?;
    /// # let buf = ctx.alloc(4096, xfer::sys::XFER_ALLOC_SHAREABLE)?;
    /// let e = unsafe { buf.export()? };
    /// let alias = ctx.import_buffer(&e)?; // error: call to unsafe function
    /// # Ok(()) }
    /// ```
    pub unsafe fn import_buffer(&self, export: &Export) -> Result<Buffer<'_>> {
        let mut raw = ptr::null_mut();
        check(sys::xfer_buffer_import(self.raw, &export.raw, &mut raw), "xfer_buffer_import")?;
        self.own_buffer(raw, sys::xfer_buffer_size(raw))
    }
}

/// A queued buffer copy ([`Buffer::copy_async`]): keeps the buffer borrowed, so that using it
/// before [`Pending::wait`] is a compile error. Not what keeps memory safe: dropping or
/// forgetting it does not wait, and the buffer's next host access waits instead.
#[must_use = "dropping a Pending does not wait (the buffer's next access does); call wait() to see the copy's status"]
#[derive(Debug)]
pub struct Pending<'b> {
    track: &'b Mutex<Track>,
    _exclusive: PhantomData<&'b mut ()>,
}

impl Pending<'_> {
    /// Blocks until the copy (and every copy queued on the buffer before it) is done
    /// (`xfer_event_synchronize`), reporting an asynchronous failure (`XFER_ERROR_BACKEND`).
    pub fn wait(self) -> Result<()> {
        lock(self.track).settle("xfer::Pending::wait")
    }
    /// true when the copy is done; never blocks (`xfer_event_query`).
    pub fn query(&self) -> Result<bool> {
        let mut t = lock(self.track);
        if !t.pending {
            return Ok(true);
        }
        let done = ready(unsafe { sys::xfer_event_query(t.event) }, "xfer_event_query")?;
        t.pending = !done;
        Ok(done)
    }
}

/// Memory the program owns, registered with a context ([`Context::register`]); unregistered
/// on `Drop` (`xfer_unregister`, which waits for the context's queued work first). It borrows the
/// memory mutably and derefs to it, so the memory can be used, not freed, while registered.
/// Forgetting it leaves the range registered after the borrow ends (until the context closes).
#[derive(Debug)]
pub struct Registration<'a, T> {
    ctx: &'a Context,
    ptr: *mut T,
    len: usize,
    _data: PhantomData<&'a mut [T]>,
}

// SAFETY: as &mut [T]; the context's functions may be called from any thread.
unsafe impl<T: Send> Send for Registration<'_, T> {}
unsafe impl<T: Sync> Sync for Registration<'_, T> {}

impl<T> Registration<'_, T> {
    /// Start of the registered range (the address given to `xfer_register`).
    pub fn as_ptr(&self) -> *mut T {
        self.ptr
    }
    /// Size of the registered range in bytes.
    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
    /// Unregisters now, reporting a failure that `Drop` would ignore (`xfer_unregister`).
    pub fn unregister(self) -> Result<()> {
        let st = unsafe { sys::xfer_unregister(self.ctx.raw, self.ptr.cast()) };
        std::mem::forget(self);
        check(st, "xfer_unregister")
    }
}

impl<T> std::ops::Deref for Registration<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T> std::ops::DerefMut for Registration<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T> Drop for Registration<'_, T> {
    fn drop(&mut self) {
        unsafe { sys::xfer_unregister(self.ctx.raw, self.ptr.cast()) };
    }
}

/// An in-order queue of work (`xfer_stream_create` or [`Context::wrap_stream`];
/// `xfer_stream_destroy` on drop, which waits for the work queued on it). `Send + Sync`: work
/// may be queued from several threads; it runs in the order the calls were made.
#[derive(Debug)]
pub struct Stream<'c> {
    raw: sys::xfer_stream,
    wrapped: bool,
    _ctx: PhantomData<&'c Context>,
}

unsafe impl Send for Stream<'_> {}
unsafe impl Sync for Stream<'_> {}

impl<'c> Stream<'c> {
    /// The C handle, for calls through [`sys`]. It stays owned by this `Stream`.
    pub fn as_raw(&self) -> sys::xfer_stream {
        self.raw
    }
    /// true for a stream the application owns, wrapped by [`Context::wrap_stream`] or
    /// [`Context::legacy_stream`] (dropping the `Stream` leaves the native stream alive).
    pub fn is_wrapped(&self) -> bool {
        self.wrapped
    }
    /// Blocks until all queued work is done (`xfer_stream_synchronize`). Errors:
    /// `XFER_ERROR_BACKEND` (an earlier asynchronous failure surfaces here).
    pub fn synchronize(&self) -> Result<()> {
        check(unsafe { sys::xfer_stream_synchronize(self.raw) }, "xfer_stream_synchronize")
    }
    /// true when all queued work is done; never blocks (`xfer_stream_query`).
    pub fn query(&self) -> Result<bool> {
        ready(unsafe { sys::xfer_stream_query(self.raw) }, "xfer_stream_query")
    }
    /// Later work on this stream waits for `event`'s last record (`xfer_stream_wait_event`);
    /// an event never recorded is no wait. Errors: `XFER_ERROR_INVALID_HANDLE` (another context).
    pub fn wait_event(&self, event: &Event<'_>) -> Result<()> {
        check(unsafe { sys::xfer_stream_wait_event(self.raw, event.raw) }, "xfer_stream_wait_event")
    }
    /// The backend's stream: a `cudaStream_t` on CUDA backends (the wrapped one for a wrapped
    /// stream), an opaque pointer that only identifies the stream on `host`
    /// (`xfer_stream_native`). Valid while this `Stream` lives.
    pub fn native(&self) -> *mut c_void {
        unsafe { sys::xfer_stream_native(self.raw) }
    }

    /// Runs `f` with a [`Scope`] through which it queues asynchronous copies between the
    /// program's slices and buffers on this stream; then synchronises the stream and returns
    /// `f`'s result (or, when `f` succeeded, the synchronisation's failure). Like
    /// [`std::thread::scope`]: every slice handed to the scope stays borrowed until `scope`
    /// returns, and `scope` returns only after the stream is synchronised, also when `f`
    /// returns an error or panics (the panic then resumes). See the crate docs, "the rule".
    ///
    /// Errors: `f`'s error, else `XFER_ERROR_BACKEND` from the synchronisation. Aborts the
    /// process where the library says it could not wait at all (called from a host function,
    /// which `xfer.h` forbids), since returning would let the slices be used while copies still
    /// run.
    ///
    /// A slice cannot be touched until the scope is over:
    /// ```compile_fail,E0502
    /// # fn main() -> Result<(), xfer::Error> {
    /// # let ctx = xfer::Context::open(Some("host"), 0)?;
    /// # let stream = ctx.stream()?;
    /// # let buf = ctx.alloc(4096, 0)?;
    /// let mut out = vec![0u8; 4096];
    /// stream.scope(|s| {
    ///     s.copy_from_device(&buf, 0, &mut out)?;
    ///     println!("{}", out[0]); // error: `out` is borrowed by the queued copy until the scope ends
    ///     Ok(())
    /// })?;
    /// # Ok(()) }
    /// ```
    /// nor dropped inside it:
    /// ```compile_fail,E0597
    /// # fn main() -> Result<(), xfer::Error> {
    /// # let ctx = xfer::Context::open(Some("host"), 0)?;
    /// # let stream = ctx.stream()?;
    /// # let mut buf = ctx.alloc(4096, 0)?;
    /// stream.scope(|s| {
    ///     let v = vec![1u8; 4096];
    ///     s.copy_to_device(&v, &mut buf, 0) // error: `v` does not live long enough
    /// })?;
    /// # Ok(()) }
    /// ```
    /// and the [`Scope`] cannot leave the closure:
    /// ```compile_fail
    /// # fn main() -> Result<(), xfer::Error> {
    /// # let ctx = xfer::Context::open(Some("host"), 0)?;
    /// # let stream = ctx.stream()?;
    /// let escaped = stream.scope(|s| Ok(s))?; // error: the Scope does not live past the closure
    /// # Ok(()) }
    /// ```
    /// Read it once the scope has returned:
    /// ```
    /// # fn main() -> Result<(), xfer::Error> {
    /// # let ctx = xfer::Context::open(Some("host"), 0)?;
    /// # let stream = ctx.stream()?;
    /// # let mut buf = ctx.alloc(4096, 0)?;
    /// let v = vec![1u8; 4096];
    /// let mut out = vec![0u8; 4096];
    /// stream.scope(|s| {
    ///     s.copy_to_device(&v, &mut buf, 0)?;
    ///     s.copy_from_device(&buf, 0, &mut out)
    /// })?;
    /// assert_eq!(out, v);
    /// # Ok(()) }
    /// ```
    pub fn scope<'env, R, F>(&'env self, f: F) -> Result<R>
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
    {
        let scope = Scope { stream: self, _scope: PhantomData, _env: PhantomData };
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| f(&scope)));
        let st = unsafe { sys::xfer_stream_synchronize(self.raw) };
        if !settled(st) {
            // Returning would end the borrows of slices that queued copies may still use.
            if let Err(e) = check(st, "xfer_stream_synchronize") {
                eprintln!("xfer::Stream::scope: could not wait for the stream ({e}); aborting");
            }
            std::process::abort();
        }
        match outcome {
            Ok(Ok(value)) => check(st, "xfer_stream_synchronize").map(|_| value),
            Ok(Err(err)) => Err(err),
            Err(payload) => panic::resume_unwind(payload),
        }
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        unsafe { sys::xfer_stream_destroy(self.raw) }; // waits; a wrapped native stream stays alive
    }
}

/// Queues copies between the program's slices and buffers on one stream; made by
/// [`Stream::scope`], which synchronises the stream before the borrows of those slices end.
///
/// `'scope` is the lifetime of the scope (every slice handed to it is borrowed for all of it),
/// `'env` that of the stream. Copies run in the order they were queued (stream order), each
/// also after the copies already queued on its buffer. `Sync`: threads spawned inside the
/// closure (with [`std::thread::scope`]) may queue copies through it.
#[derive(Debug)]
pub struct Scope<'scope, 'env: 'scope> {
    stream: &'env Stream<'env>,
    // Invariant in both lifetimes, so that a caller cannot shrink 'scope to fit a shorter
    // borrow (which would then end before the stream is synchronised).
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// The stream the copies go to, e.g. to record an [`Event`] between them.
    pub fn stream(&self) -> &'env Stream<'env> {
        self.stream
    }

    /// Queues a copy of `src` (the program's memory) into `dst`'s device view at byte
    /// `dst_offset` (`xfer_memcpy_async`, host to device) and returns at once; `src` stays
    /// borrowed until the scope ends. An empty `src` queues nothing.
    ///
    /// `dst` is borrowed only for the call: the copy is tracked by the buffer, whose host view
    /// waits for it (on `managed` and `zerocopy` the device view is the host view's memory).
    ///
    /// Errors (nothing queued): `XFER_ERROR_OUT_OF_BOUNDS` (`src` does not fit in `dst` at
    /// `dst_offset`), `XFER_ERROR_INVALID_SIZE` (the end overflows), `XFER_ERROR_INVALID_HANDLE`
    /// (`dst` of another context than the stream), `XFER_ERROR_BACKEND`.
    ///
    /// Only [`Pod`] elements can be copied:
    /// ```compile_fail,E0277
    /// # fn main() -> Result<(), xfer::Error> {
    /// # let ctx = xfer::Context::open(Some("host"), 0)?;
    /// # let stream = ctx.stream()?;
    /// # let mut buf = ctx.alloc(4096, 0)?;
    /// let flags = [true; 16];
    /// stream.scope(|s| s.copy_to_device(&flags, &mut buf, 0))?; // error: bool is not Pod
    /// # Ok(()) }
    /// ```
    pub fn copy_to_device<T: Pod>(&self, src: &'scope [T], dst: &mut Buffer<'_>, dst_offset: usize) -> Result<()> {
        let (ptr, bytes) = as_bytes(src);
        check_range(dst_offset, bytes, dst.bytes, "xfer::Scope::copy_to_device")?;
        if bytes == 0 {
            return Ok(());
        }
        let (ctx, stream) = (dst.ctx, self.stream.raw);
        let device = dst.device.cast::<u8>().wrapping_add(dst_offset).cast::<c_void>();
        dst.enqueue(self.stream, "xfer_memcpy_async", || unsafe {
            sys::xfer_memcpy_async(ctx, device, ptr, bytes, sys::XFER_COPY_HOST_TO_DEVICE, stream)
        })
    }

    /// Queues a copy of `dst.len()` elements from `src`'s device view at byte `src_offset` into
    /// `dst` (the program's memory) (`xfer_memcpy_async`, device to host) and returns at once;
    /// `dst` stays borrowed until the scope ends. An empty `dst` queues nothing.
    ///
    /// `src` is borrowed only for the call; the copy is tracked by the buffer (a later
    /// [`Buffer::host_mut`] waits for it, since on `managed` and `zerocopy` it reads the host
    /// view's memory).
    ///
    /// Errors (nothing queued): `XFER_ERROR_OUT_OF_BOUNDS` (the range runs past the end of
    /// `src`), `XFER_ERROR_INVALID_SIZE`, `XFER_ERROR_INVALID_HANDLE`, `XFER_ERROR_BACKEND`.
    pub fn copy_from_device<T: Pod>(&self, src: &Buffer<'_>, src_offset: usize, dst: &'scope mut [T]) -> Result<()> {
        let bytes = std::mem::size_of_val(dst);
        check_range(src_offset, bytes, src.bytes, "xfer::Scope::copy_from_device")?;
        if bytes == 0 {
            return Ok(());
        }
        let (ctx, stream, ptr) = (src.ctx, self.stream.raw, dst.as_mut_ptr().cast::<c_void>());
        let device = src.device.cast::<u8>().wrapping_add(src_offset).cast::<c_void>();
        src.enqueue(self.stream, "xfer_memcpy_async", || unsafe {
            sys::xfer_memcpy_async(ctx, ptr, device, bytes, sys::XFER_COPY_DEVICE_TO_HOST, stream)
        })
    }
}

/// A marker in a stream: completion and time (`xfer_event_create`; `xfer_event_destroy` on
/// drop, which does not wait). `Send + Sync`.
#[derive(Debug)]
pub struct Event<'c> {
    raw: sys::xfer_event,
    _ctx: PhantomData<&'c Context>,
}

unsafe impl Send for Event<'_> {}
unsafe impl Sync for Event<'_> {}

impl Event<'_> {
    /// The C handle, for calls through [`sys`]. It stays owned by this `Event`.
    pub fn as_raw(&self) -> sys::xfer_event {
        self.raw
    }
    /// Records the event at the current end of `stream` (`xfer_event_record`); re-recording
    /// moves it. Errors: `XFER_ERROR_INVALID_HANDLE` (another context), `XFER_ERROR_BACKEND`.
    pub fn record(&self, stream: &Stream<'_>) -> Result<()> {
        check(unsafe { sys::xfer_event_record(self.raw, stream.raw) }, "xfer_event_record")
    }
    /// Blocks until the work before the last record is done (`xfer_event_synchronize`); an
    /// event never recorded completes at once. Errors: `XFER_ERROR_BACKEND`.
    pub fn synchronize(&self) -> Result<()> {
        check(unsafe { sys::xfer_event_synchronize(self.raw) }, "xfer_event_synchronize")
    }
    /// true when the event has completed (or was never recorded); never blocks.
    pub fn query(&self) -> Result<bool> {
        ready(unsafe { sys::xfer_event_query(self.raw) }, "xfer_event_query")
    }
    /// Milliseconds from `self` to `end`, both completed (`xfer_event_elapsed_ms`; about 0.5 us
    /// resolution). Errors: `XFER_ERROR_INVALID_STATE` (never recorded, or created with
    /// `XFER_EVENT_DISABLE_TIMING`), `XFER_ERROR_NOT_READY`.
    pub fn elapsed_ms(&self, end: &Event<'_>) -> Result<f32> {
        let mut ms = 0.0f32;
        check(unsafe { sys::xfer_event_elapsed_ms(self.raw, end.raw, &mut ms) }, "xfer_event_elapsed_ms")?;
        Ok(ms)
    }
    /// The backend's event (`xfer_event_native`): a `cudaEvent_t` on CUDA backends, e.g. for
    /// `cudaStreamWaitEvent(app_stream, native, 0)` to order the application's work after
    /// xfer's; on `host` an opaque pointer that only identifies the event. Valid while this
    /// `Event` lives; using it is the caller's `unsafe` business.
    pub fn native(&self) -> *mut c_void {
        unsafe { sys::xfer_event_native(self.raw) }
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        unsafe { sys::xfer_event_destroy(self.raw) };
    }
}
