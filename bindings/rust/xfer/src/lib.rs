// SPDX-License-Identifier: Apache-2.0
//! Safe Rust layer over xfer's C API (the raw declarations are [`sys`], the `xfer-sys` crate).
//!
//! - [`Context`], [`Buffer`], [`Stream`], [`Event`] own their C handles and release them on
//!   `Drop`; buffers, streams and events borrow their context, so they cannot outlive it.
//! - Every failure is an [`Error`] with the C status and the library's message.
//! - Host views are slices tied to the buffer's lifetime: [`Buffer::host`] / [`Buffer::host_mut`]
//!   as bytes, [`Buffer::host_as`] / [`Buffer::host_as_mut`] typed.
//! - An asynchronous copy mutably borrows its buffer until it is known complete
//!   ([`Pending::wait`], or `Drop` of the [`Pending`]), so safe code cannot touch a host view
//!   while a copy into or out of it is in flight.
//! - [`Context::register`] page-locks memory the program owns (a `&mut [T]`) for fast copies;
//!   the [`Registration`] borrows it (and gives it back through `Deref`/`DerefMut`) and
//!   unregisters on `Drop`; [`Context::registration_stats`] reports the counters.
//! - `Send`/`Sync`: the C API lets every function be called from any thread with shared handles,
//!   so all four types are `Send` and `Sync`; host views follow Rust's borrow rules.
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
//!     let err = buf.copy_range_async(Direction::ToDevice, 1 << 20, 1, &stream).unwrap_err();
//!     assert_eq!(err.status(), xfer::sys::XFER_ERROR_OUT_OF_BOUNDS);
//!     println!("{err}"); // xfer_copy_async: XFER_ERROR_OUT_OF_BOUNDS: offset 1048576 + bytes 1 ...
//!     Ok(())
//! }
//! ```
pub use xfer_sys as sys;

use std::ffi::{CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::ptr;

/// A failed xfer call: the C status, the C function, and `xfer_last_error()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    status: sys::xfer_status,
    call: &'static str,
    message: String,
}

impl Error {
    /// The `xfer_status` (compare with `xfer::sys::XFER_ERROR_*`).
    pub fn status(&self) -> sys::xfer_status {
        self.status
    }
    /// Its name, e.g. "XFER_ERROR_OUT_OF_BOUNDS".
    pub fn status_name(&self) -> String {
        status_string(self.status)
    }
    /// The C function that failed.
    pub fn call(&self) -> &'static str {
        self.call
    }
    /// What was wrong, as the library said it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.call, self.status_name())?;
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: the library returns NUL-terminated strings that live at least until the next call.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// "XFER_ERROR_OUT_OF_BOUNDS" for a status (`xfer_status_string`).
pub fn status_string(st: sys::xfer_status) -> String {
    text(unsafe { sys::xfer_status_string(st) })
}

/// The calling thread's last failure message (`xfer_last_error`).
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
    Err(Error { status: st, call, message })
}

// The *_query calls: XFER_SUCCESS -> true, XFER_ERROR_NOT_READY -> false, anything else an error.
fn ready(st: sys::xfer_status, call: &'static str) -> Result<bool> {
    match st {
        sys::XFER_ERROR_NOT_READY => Ok(false),
        st => check(st, call).map(|_| true),
    }
}

/// (major, minor, patch) of the loaded libxfer.
pub fn version() -> Result<(i32, i32, i32)> {
    let (mut a, mut b, mut c) = (0, 0, 0);
    check(unsafe { sys::xfer_get_version(&mut a, &mut b, &mut c) }, "xfer_get_version")?;
    Ok((a, b, c))
}

/// One backend on the plugin search path.
#[derive(Debug, Clone)]
pub struct BackendInfo {
    pub name: String,
    pub description: String,
    pub path: String,
    pub available: bool,
    pub reason: String,
    pub device_count: i32,
    pub device_kind: sys::xfer_device_kind,
}

/// Every backend on the plugin search path, available or not.
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

/// One configuration parameter with its effective value.
#[derive(Debug, Clone)]
pub struct Param {
    pub section: String,
    pub name: String,
    pub env: String,
    pub type_: String,
    pub value: String,
    pub default_value: String,
    pub help: String,
    pub source: sys::xfer_param_source,
}

/// The effective configuration (`xfer_param_count` / `xfer_param_get_info`).
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

/// Direction of a buffer copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// host view -> device view
    ToDevice,
    /// device view -> host view
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

/// One backend bound to one device (`xfer_open` / `xfer_close` on drop).
#[derive(Debug)]
pub struct Context {
    raw: sys::xfer_context,
    backend: String,
    device: i32,
    device_kind: sys::xfer_device_kind,
    caps: c_uint,
}

// SAFETY: xfer.h: every function may be called from any thread at the same time, and handles
// may be shared between threads.
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Context {
    /// Opens `backend` (None: from XFER_BACKEND / XFER_CONFIG) on `device` (-1: from the environment).
    pub fn open(backend: Option<&str>, device: i32) -> Result<Context> {
        let name = match backend {
            Some(b) => Some(CString::new(b).map_err(|_| Error {
                status: sys::XFER_ERROR_INVALID_ARGUMENT,
                call: "xfer_open",
                message: "backend name contains a NUL byte".into(),
            })?),
            None => None,
        };
        let mut raw = ptr::null_mut();
        check(
            unsafe { sys::xfer_open(name.as_ref().map_or(ptr::null(), |n| n.as_ptr()), device, &mut raw) },
            "xfer_open",
        )?;
        let mut ctx = Context { raw, backend: String::new(), device, device_kind: 0, caps: 0 };
        let mut info = std::mem::MaybeUninit::<sys::xfer_context_info>::zeroed();
        check(unsafe { sys::xfer_context_get_info(raw, info.as_mut_ptr()) }, "xfer_context_get_info")?;
        let info = unsafe { info.assume_init() };
        ctx.backend = text(info.backend);
        ctx.device = info.device;
        ctx.device_kind = info.device_kind;
        ctx.caps = info.caps;
        Ok(ctx)
    }

    pub fn as_raw(&self) -> sys::xfer_context {
        self.raw
    }
    pub fn backend(&self) -> &str {
        &self.backend
    }
    pub fn device(&self) -> i32 {
        self.device
    }
    /// `XFER_DEVICE_KIND_HOST` or `XFER_DEVICE_KIND_CUDA`.
    pub fn device_kind(&self) -> sys::xfer_device_kind {
        self.device_kind
    }
    /// `XFER_CAP_*` bits.
    pub fn caps(&self) -> c_uint {
        self.caps
    }

    /// `xfer_device_get_info`.
    pub fn device_info(&self) -> Result<sys::xfer_device_info> {
        let mut info = std::mem::MaybeUninit::<sys::xfer_device_info>::zeroed();
        check(unsafe { sys::xfer_device_get_info(self.raw, info.as_mut_ptr()) }, "xfer_device_get_info")?;
        Ok(unsafe { info.assume_init() })
    }

    /// A buffer of `bytes` bytes (`xfer_alloc`; flags: `XFER_ALLOC_*`).
    pub fn alloc(&self, bytes: usize, flags: c_uint) -> Result<Buffer<'_>> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::xfer_alloc(self.raw, bytes, flags, &mut raw) }, "xfer_alloc")?;
        Ok(Buffer { raw, bytes, _ctx: PhantomData })
    }

    /// A stream (`xfer_stream_create`).
    pub fn stream(&self) -> Result<Stream<'_>> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::xfer_stream_create(self.raw, &mut raw) }, "xfer_stream_create")?;
        Ok(Stream { raw, _ctx: PhantomData })
    }

    /// An event (`xfer_event_create`; flags: `XFER_EVENT_*`).
    pub fn event(&self, flags: c_uint) -> Result<Event<'_>> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::xfer_event_create(self.raw, flags, &mut raw) }, "xfer_event_create")?;
        Ok(Event { raw, _ctx: PhantomData })
    }

    /// Queues a raw copy of `bytes` from `src` to `dst` on `stream` (`xfer_memcpy_async`).
    ///
    /// # Safety
    /// Both ranges must be valid for the backend and stay alive and untouched until the stream
    /// or an event recorded after it says the copy is done.
    pub unsafe fn memcpy_async(&self, dst: *mut c_void, src: *const c_void, bytes: usize, kind: sys::xfer_copy_kind,
                               stream: &Stream<'_>) -> Result<()> {
        check(sys::xfer_memcpy_async(self.raw, dst, src, bytes, kind, stream.raw), "xfer_memcpy_async")
    }

    /// Copies `src` into `dst` through the backend (host memory on both sides) and waits.
    pub fn memcpy_host(&self, dst: &mut [u8], src: &[u8], stream: &Stream<'_>) -> Result<()> {
        if dst.len() != src.len() {
            return Err(Error { status: sys::XFER_ERROR_INVALID_SIZE, call: "xfer_memcpy_async",
                               message: format!("dst has {} bytes, src {}", dst.len(), src.len()) });
        }
        // SAFETY: both slices are borrowed until the stream is synchronised below.
        unsafe {
            self.memcpy_async(dst.as_mut_ptr().cast(), src.as_ptr().cast(), src.len(), sys::XFER_COPY_HOST_TO_HOST,
                              stream)?;
        }
        stream.synchronize()
    }

    /// Page-locks (registers) the memory of `data` for this context (`xfer_register`; flags:
    /// `XFER_REGISTER_*`), so copies from and to it run as DMA. The returned [`Registration`]
    /// borrows `data` until it is dropped or [`Registration::unregister`]ed, and gives access to
    /// it meanwhile. Registering is slow: register long-lived memory once. An empty slice is
    /// `XFER_ERROR_INVALID_SIZE`; memory registered already, `XFER_ERROR_INVALID_STATE`.
    pub fn register<'a, T>(&'a self, data: &'a mut [T], flags: c_uint) -> Result<Registration<'a, T>> {
        let bytes = std::mem::size_of_val(data);
        let ptr = data.as_mut_ptr();
        // SAFETY: `data` stays borrowed by the Registration, which unregisters before the borrow ends.
        unsafe { self.register_raw(ptr.cast(), bytes, flags)? };
        Ok(Registration { ctx: self, ptr, len: data.len(), _data: PhantomData })
    }

    /// Unregisters `reg` now, reporting a failure that its `Drop` would ignore (`xfer_unregister`).
    pub fn unregister<T>(&self, reg: Registration<'_, T>) -> Result<()> {
        if !ptr::eq(reg.ctx, self) {
            return Err(Error { status: sys::XFER_ERROR_INVALID_ARGUMENT, call: "xfer_unregister",
                               message: "the registration belongs to another context".into() });
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
    /// (`xfer_registration_get_stats`).
    pub fn registration_stats(&self) -> Result<sys::xfer_registration_stats> {
        let mut stats = sys::xfer_registration_stats::default();
        check(unsafe { sys::xfer_registration_get_stats(self.raw, &mut stats) }, "xfer_registration_get_stats")?;
        Ok(stats)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        unsafe { sys::xfer_close(self.raw) }; // releases even when it reports a failure
    }
}

/// Element types a host view may be read as: plain numbers, valid for every bit pattern.
///
/// # Safety
/// Implement only for types without padding or invalid bit patterns.
pub unsafe trait Element: Copy + 'static {}
macro_rules! elements { ($($t:ty),*) => { $(unsafe impl Element for $t {})* }; }
elements!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, usize, isize);

/// One logical array with a host view and a device view (`xfer_alloc` / `xfer_free` on drop).
#[derive(Debug)]
pub struct Buffer<'c> {
    raw: sys::xfer_buffer,
    bytes: usize,
    _ctx: PhantomData<&'c Context>,
}

// SAFETY: see Context; the host view is only reached through &self / &mut self borrows.
unsafe impl Send for Buffer<'_> {}
unsafe impl Sync for Buffer<'_> {}

impl<'c> Buffer<'c> {
    pub fn as_raw(&self) -> sys::xfer_buffer {
        self.raw
    }
    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
    /// Address of the device view (a CUDA device pointer on CUDA backends).
    pub fn device_ptr(&self) -> *mut c_void {
        unsafe { sys::xfer_device_ptr(self.raw) }
    }
    fn host_ptr(&self) -> *mut u8 {
        unsafe { sys::xfer_host_ptr(self.raw) }.cast()
    }
    /// The host view as bytes.
    pub fn host(&self) -> &[u8] {
        unsafe { std::slice::from_raw_parts(self.host_ptr(), self.bytes) }
    }
    /// The host view as bytes, writable.
    pub fn host_mut(&mut self) -> &mut [u8] {
        unsafe { std::slice::from_raw_parts_mut(self.host_ptr(), self.bytes) }
    }
    fn typed_len<T: Element>(&self) -> Result<usize> {
        let size = std::mem::size_of::<T>();
        if (self.host_ptr() as usize) % std::mem::align_of::<T>() != 0 || self.bytes % size != 0 {
            return Err(Error { status: sys::XFER_ERROR_INVALID_ARGUMENT, call: "xfer::Buffer::host_as",
                               message: format!("{} bytes are not a whole, aligned number of {}", self.bytes,
                                                std::any::type_name::<T>()) });
        }
        Ok(self.bytes / size)
    }
    /// The host view as `len() / size_of::<T>()` elements.
    pub fn host_as<T: Element>(&self) -> Result<&[T]> {
        let n = self.typed_len::<T>()?;
        Ok(unsafe { std::slice::from_raw_parts(self.host_ptr().cast(), n) })
    }
    /// The host view as `len() / size_of::<T>()` elements, writable.
    pub fn host_as_mut<T: Element>(&mut self) -> Result<&mut [T]> {
        let n = self.typed_len::<T>()?;
        Ok(unsafe { std::slice::from_raw_parts_mut(self.host_ptr().cast(), n) })
    }

    /// Queues a copy of the whole buffer on `stream` (`xfer_copy_async`).
    pub fn copy_async<'b>(&'b mut self, dir: Direction, stream: &'b Stream<'c>) -> Result<Pending<'b>> {
        let n = self.bytes;
        self.copy_range_async(dir, 0, n, stream)
    }
    /// Queues a copy of bytes [offset, offset + bytes) on `stream` (`xfer_copy_async`). The
    /// buffer stays borrowed until the returned [`Pending`] is waited for or dropped.
    pub fn copy_range_async<'b>(&'b mut self, dir: Direction, offset: usize, bytes: usize, stream: &'b Stream<'c>)
                                -> Result<Pending<'b>> {
        check(unsafe { sys::xfer_copy_async(self.raw, dir.raw(), offset, bytes, stream.raw) }, "xfer_copy_async")?;
        Ok(Pending { stream: stream.raw, _borrow: PhantomData })
    }
    /// Copies bytes [offset, offset + bytes) and waits (`xfer_copy`).
    pub fn copy(&mut self, dir: Direction, offset: usize, bytes: usize) -> Result<()> {
        check(unsafe { sys::xfer_copy(self.raw, dir.raw(), offset, bytes) }, "xfer_copy")
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        unsafe { sys::xfer_free(self.raw) };
    }
}

/// Memory the program owns, registered with a context ([`Context::register`]); unregistered
/// on `Drop` (`xfer_unregister`, which waits for the context's queued work first). It borrows the
/// memory mutably and derefs to it, so the memory can be used, not freed, while registered.
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
    /// Unregisters now, reporting a failure that `Drop` would ignore.
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

/// A queued buffer copy; keeps the buffer borrowed until the copy is known complete.
#[must_use = "a copy in flight is waited for when the Pending is dropped"]
#[derive(Debug)]
pub struct Pending<'b> {
    stream: sys::xfer_stream,
    _borrow: PhantomData<&'b mut ()>,
}

impl Pending<'_> {
    /// Waits for the stream (`xfer_stream_synchronize`), reporting an asynchronous failure.
    pub fn wait(self) -> Result<()> {
        let st = unsafe { sys::xfer_stream_synchronize(self.stream) };
        std::mem::forget(self);
        check(st, "xfer_stream_synchronize")
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        unsafe { sys::xfer_stream_synchronize(self.stream) };
    }
}

/// An in-order queue of work (`xfer_stream_create` / `xfer_stream_destroy` on drop).
#[derive(Debug)]
pub struct Stream<'c> {
    raw: sys::xfer_stream,
    _ctx: PhantomData<&'c Context>,
}

unsafe impl Send for Stream<'_> {}
unsafe impl Sync for Stream<'_> {}

impl Stream<'_> {
    pub fn as_raw(&self) -> sys::xfer_stream {
        self.raw
    }
    /// Blocks until all queued work is done.
    pub fn synchronize(&self) -> Result<()> {
        check(unsafe { sys::xfer_stream_synchronize(self.raw) }, "xfer_stream_synchronize")
    }
    /// true when all queued work is done; never blocks.
    pub fn query(&self) -> Result<bool> {
        ready(unsafe { sys::xfer_stream_query(self.raw) }, "xfer_stream_query")
    }
    /// Later work on this stream waits for `event`.
    pub fn wait_event(&self, event: &Event<'_>) -> Result<()> {
        check(unsafe { sys::xfer_stream_wait_event(self.raw, event.raw) }, "xfer_stream_wait_event")
    }
    /// The backend's stream (a `cudaStream_t` on CUDA backends).
    pub fn native(&self) -> *mut c_void {
        unsafe { sys::xfer_stream_native(self.raw) }
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        unsafe { sys::xfer_stream_destroy(self.raw) };
    }
}

/// A marker in a stream (`xfer_event_create` / `xfer_event_destroy` on drop).
#[derive(Debug)]
pub struct Event<'c> {
    raw: sys::xfer_event,
    _ctx: PhantomData<&'c Context>,
}

unsafe impl Send for Event<'_> {}
unsafe impl Sync for Event<'_> {}

impl Event<'_> {
    pub fn as_raw(&self) -> sys::xfer_event {
        self.raw
    }
    pub fn record(&self, stream: &Stream<'_>) -> Result<()> {
        check(unsafe { sys::xfer_event_record(self.raw, stream.raw) }, "xfer_event_record")
    }
    pub fn synchronize(&self) -> Result<()> {
        check(unsafe { sys::xfer_event_synchronize(self.raw) }, "xfer_event_synchronize")
    }
    /// true when the event has completed (or was never recorded); never blocks.
    pub fn query(&self) -> Result<bool> {
        ready(unsafe { sys::xfer_event_query(self.raw) }, "xfer_event_query")
    }
    /// Milliseconds from `self` to `end`.
    pub fn elapsed_ms(&self, end: &Event<'_>) -> Result<f32> {
        let mut ms = 0.0f32;
        check(unsafe { sys::xfer_event_elapsed_ms(self.raw, end.raw, &mut ms) }, "xfer_event_elapsed_ms")?;
        Ok(ms)
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        unsafe { sys::xfer_event_destroy(self.raw) };
    }
}
