// SPDX-License-Identifier: Apache-2.0
//! Raw declarations of xfer's C API, exactly as in `xfer.h` (names, types, values).
//!
//! `size_t` is `usize`, `unsigned` is `c_uint`, enums are `c_int` (pinned to 32 bits in C),
//! handles are pointers to opaque structs. Semantics, units, statuses and thread-safety of
//! each function are those written in `xfer.h`. The safe layer is the `xfer` crate.
//! To bind a new `xfer.h` function, add one line to the `extern "C"` block (the coverage
//! check in CI fails until you do).
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_double, c_float, c_int, c_uint, c_void};

// ---------------------------------------------------------------- constants
pub const XFER_VERSION_MAJOR: c_int = 1;
pub const XFER_VERSION_MINOR: c_int = 0;
pub const XFER_VERSION_PATCH: c_int = 0;

pub type xfer_status = c_int;
pub const XFER_SUCCESS: xfer_status = 0;
pub const XFER_ERROR_INVALID_ARGUMENT: xfer_status = 1;
pub const XFER_ERROR_INVALID_HANDLE: xfer_status = 2;
pub const XFER_ERROR_INVALID_SIZE: xfer_status = 3;
pub const XFER_ERROR_OUT_OF_BOUNDS: xfer_status = 4;
pub const XFER_ERROR_OUT_OF_MEMORY: xfer_status = 5;
pub const XFER_ERROR_NOT_READY: xfer_status = 6;
pub const XFER_ERROR_NOT_SUPPORTED: xfer_status = 7;
pub const XFER_ERROR_NO_DEVICE: xfer_status = 8;
pub const XFER_ERROR_BACKEND_NOT_FOUND: xfer_status = 9;
pub const XFER_ERROR_BACKEND_UNAVAILABLE: xfer_status = 10;
pub const XFER_ERROR_BACKEND_ABI: xfer_status = 11;
pub const XFER_ERROR_CONFIG: xfer_status = 12;
pub const XFER_ERROR_BACKEND: xfer_status = 13;
pub const XFER_ERROR_INVALID_STATE: xfer_status = 14;
pub const XFER_ERROR_INTERNAL: xfer_status = 15;
pub const XFER_ERROR_SLOW_PATH: xfer_status = 16;

pub type xfer_direction = c_int;
pub const XFER_TO_DEVICE: xfer_direction = 1;
pub const XFER_TO_HOST: xfer_direction = 2;

pub type xfer_copy_kind = c_int;
pub const XFER_COPY_HOST_TO_HOST: xfer_copy_kind = 0;
pub const XFER_COPY_HOST_TO_DEVICE: xfer_copy_kind = 1;
pub const XFER_COPY_DEVICE_TO_HOST: xfer_copy_kind = 2;
pub const XFER_COPY_DEVICE_TO_DEVICE: xfer_copy_kind = 3;
pub const XFER_COPY_DEFAULT: xfer_copy_kind = 4;

pub type xfer_device_kind = c_int;
pub const XFER_DEVICE_KIND_HOST: xfer_device_kind = 0;
pub const XFER_DEVICE_KIND_CUDA: xfer_device_kind = 1;

pub type xfer_param_source = c_int;
pub const XFER_PARAM_DEFAULT: xfer_param_source = 0;
pub const XFER_PARAM_FILE: xfer_param_source = 1;
pub const XFER_PARAM_ENV: xfer_param_source = 2;
pub const XFER_PARAM_CALIBRATION: xfer_param_source = 3;

pub type xfer_copy_path = c_int;
pub const XFER_PATH_UNREPORTED: xfer_copy_path = 0;
pub const XFER_PATH_HOST_MEMCPY: xfer_copy_path = 1;
pub const XFER_PATH_PINNED_DMA: xfer_copy_path = 2;
pub const XFER_PATH_CACHED_REGISTRATION: xfer_copy_path = 3;
pub const XFER_PATH_NEW_REGISTRATION: xfer_copy_path = 4;
pub const XFER_PATH_DRIVER_PAGEABLE: xfer_copy_path = 5;
pub const XFER_PATH_STAGED: xfer_copy_path = 6;
pub const XFER_PATH_STAGED_SYNC: xfer_copy_path = 7;
pub const XFER_PATH_PACKED: xfer_copy_path = 8;
pub const XFER_PATH_DEVICE_COPY: xfer_copy_path = 9;
pub const XFER_PATH_PEER: xfer_copy_path = 10;
pub const XFER_PATH_MANAGED_MIGRATE: xfer_copy_path = 11;
pub const XFER_PATH_MANAGED_STAGED: xfer_copy_path = 12;
pub const XFER_PATH_MANAGED_COPY: xfer_copy_path = 13;
pub const XFER_PATH_MAPPED: xfer_copy_path = 14;
pub const XFER_PATH_COUNT: xfer_copy_path = 15;

pub type xfer_path_reason = c_int;
pub const XFER_REASON_MEMORY: xfer_path_reason = 0;
pub const XFER_REASON_BELOW_CROSSOVER: xfer_path_reason = 1;
pub const XFER_REASON_NO_FASTER_PATH: xfer_path_reason = 2;
pub const XFER_REASON_FIRST_USE: xfer_path_reason = 3;
pub const XFER_REASON_CACHE_HIT: xfer_path_reason = 4;
pub const XFER_REASON_CACHE_FULL: xfer_path_reason = 5;
pub const XFER_REASON_REGISTRATION_FAILED: xfer_path_reason = 6;
pub const XFER_REASON_CONFIGURED: xfer_path_reason = 7;
pub const XFER_REASON_SPLIT: xfer_path_reason = 8;
pub const XFER_REASON_ONE_OFF: xfer_path_reason = 9;
pub const XFER_REASON_REUSE: xfer_path_reason = 10;
pub const XFER_REASON_MEASURED_FASTEST: xfer_path_reason = 11;
pub const XFER_REASON_COUNT: xfer_path_reason = 12;

pub type xfer_slow_path = c_int;
pub const XFER_SLOW_PATH_ALLOW: xfer_slow_path = 0;
pub const XFER_SLOW_PATH_WARN: xfer_slow_path = 1;
pub const XFER_SLOW_PATH_REFUSE: xfer_slow_path = 2;
pub const XFER_SLOW_PATH_MIN_BYTES: u64 = 1 << 20;
pub const XFER_CONTEXT_STATS_VERSION: u32 = 1;

pub const XFER_ALLOC_DEFAULT: c_uint = 0x0;
pub const XFER_ALLOC_READ_MOSTLY: c_uint = 0x1;
pub const XFER_ALLOC_PREFER_DEVICE: c_uint = 0x2;
pub const XFER_ALLOC_PREFER_HOST: c_uint = 0x4;
pub const XFER_ALLOC_SHAREABLE: c_uint = 0x8;
pub const XFER_SHARE_HANDLE_MEMFD: c_uint = 0x1;
pub const XFER_SHARE_HANDLE_POSIX_FD: c_uint = 0x2;
pub const XFER_SHARE_HANDLE_FABRIC: c_uint = 0x4;
pub const XFER_EVENT_DEFAULT: c_uint = 0x0;
pub const XFER_EVENT_DISABLE_TIMING: c_uint = 0x1;
pub const XFER_CAP_SHARED_VIEW: c_uint = 0x1;
pub const XFER_CAP_ASYNC_COPY: c_uint = 0x2;
pub const XFER_CAP_NO_COPY: c_uint = 0x4;
pub const XFER_CAP_MIGRATES: c_uint = 0x8;
pub const XFER_REGISTER_DEFAULT: c_uint = 0x0;
pub const XFER_REGISTER_READ_ONLY: c_uint = 0x1;
pub const XFER_CALIBRATE_FORCE: c_uint = 0x1;

// ---------------------------------------------------------------- types
#[repr(C)]
pub struct xfer_context_s {
    _private: [u8; 0],
}
#[repr(C)]
pub struct xfer_buffer_s {
    _private: [u8; 0],
}
#[repr(C)]
pub struct xfer_stream_s {
    _private: [u8; 0],
}
#[repr(C)]
pub struct xfer_event_s {
    _private: [u8; 0],
}
pub type xfer_context = *mut xfer_context_s;
pub type xfer_buffer = *mut xfer_buffer_s;
pub type xfer_stream = *mut xfer_stream_s;
pub type xfer_event = *mut xfer_event_s;
pub type xfer_host_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct xfer_backend_info {
    pub name: *const c_char,
    pub description: *const c_char,
    pub path: *const c_char,
    pub available: c_int,
    pub reason: *const c_char,
    pub device_count: c_int,
    pub device_kind: xfer_device_kind,
    pub abi_major: c_uint,
    pub abi_minor: c_uint,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct xfer_device_info {
    pub name: [c_char; 256],
    pub ordinal: c_int,
    pub kind: xfer_device_kind,
    pub total_memory: u64,
    pub free_memory: u64,
    pub compute_major: c_int,
    pub compute_minor: c_int,
    pub multiprocessors: c_int,
    pub pcie_generation: c_int,
    pub pcie_width: c_int,
    pub pci_bus_id: [c_char; 32],
    pub async_engine_count: c_int,
    pub concurrent_managed_access: c_int,
    pub can_map_host_memory: c_int,
    pub unified_addressing: c_int,
    pub driver_version: c_int,
    pub runtime_version: c_int,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct xfer_context_info {
    pub backend: *const c_char,
    pub device: c_int,
    pub device_kind: xfer_device_kind,
    pub caps: c_uint,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct xfer_param_info {
    pub section: *const c_char,
    pub name: *const c_char,
    pub env: *const c_char,
    pub type_: *const c_char,
    pub value: *const c_char,
    pub default_value: *const c_char,
    pub help: *const c_char,
    pub source: xfer_param_source,
}

/// What `xfer_calibrate` did: set `struct_size` (`Default` does); the strings stay valid until
/// the calling thread's next `xfer_calibrate`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct xfer_calibration_info {
    pub struct_size: usize,
    pub measured: c_int,
    pub seconds: c_double,
    pub file: *const c_char,
    pub json: *const c_char,
}

impl Default for xfer_calibration_info {
    /// Nothing measured, null strings, with `struct_size` set as `xfer_calibrate` wants it.
    fn default() -> Self {
        xfer_calibration_info {
            struct_size: std::mem::size_of::<xfer_calibration_info>(),
            measured: 0,
            seconds: 0.0,
            file: std::ptr::null(),
            json: std::ptr::null(),
        }
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct xfer_registration_stats {
    pub registered_ranges: u64,
    pub registered_bytes: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub cache_evictions: u64,
    pub cache_ranges: u64,
    pub cache_bytes: u64,
    pub cache_limit_bytes: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct xfer_path_stats {
    pub copies: u64,
    pub bytes: u64,
    pub host_ns: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct xfer_context_stats {
    pub struct_size: usize,
    pub version: u32,
    pub path_count: u32,
    pub calls: u64,
    pub slow_copies: u64,
    pub refused_calls: u64,
    pub registrations: u64,
    pub registered_bytes: u64,
    pub registration_ns: u64,
    pub unregistrations: u64,
    pub unregistered_bytes: u64,
    pub unregistration_ns: u64,
    pub paths: [xfer_path_stats; XFER_PATH_COUNT as usize],
}

impl Default for xfer_context_stats {
    /// All zeros, with `struct_size` set as `xfer_context_get_stats` wants it.
    fn default() -> Self {
        xfer_context_stats {
            struct_size: std::mem::size_of::<xfer_context_stats>(),
            version: 0,
            path_count: 0,
            calls: 0,
            slow_copies: 0,
            refused_calls: 0,
            registrations: 0,
            registered_bytes: 0,
            registration_ns: 0,
            unregistrations: 0,
            unregistered_bytes: 0,
            unregistration_ns: 0,
            paths: [xfer_path_stats::default(); XFER_PATH_COUNT as usize],
        }
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct xfer_copy_record {
    pub struct_size: usize,
    pub ctx: xfer_context,
    pub stream: xfer_stream,
    pub function: *const c_char,
    pub path: xfer_copy_path,
    pub reason: xfer_path_reason,
    pub kind: xfer_copy_kind,
    pub slow: c_int,
    pub copies: u64,
    pub bytes: u64,
    pub host_ns: u64,
    pub call_bytes: u64,
}

pub type xfer_copy_observer_fn = Option<unsafe extern "C" fn(record: *const xfer_copy_record, user_data: *mut c_void)>;

// ------------------------------------- sharing buffers with other processes and libraries
pub const XFER_EXPORT_VERSION: u32 = 1;
pub const XFER_EXPORT_MAX_FDS: usize = 4;
pub const XFER_EXPORT_BLOB_BYTES: usize = 256;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct xfer_export {
    pub struct_size: usize,
    pub version: u32,
    pub fd_count: u32,
    pub fds: [c_int; XFER_EXPORT_MAX_FDS],
    pub blob_bytes: u32,
    pub blob: [u8; XFER_EXPORT_BLOB_BYTES],
}

/// What a buffer's memory is (`xfer_buffer_get_share_info`); the strings are static.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct xfer_share_info {
    pub struct_size: usize,
    pub handle_types: c_uint,
    pub rdma_capable: c_int,
    pub granularity: usize,
    pub device_view_bytes: usize,
    pub host_memory_kind: *const c_char,
    pub device_memory_kind: *const c_char,
    pub host_dlpack_device_type: c_int,
    pub host_dlpack_device_id: c_int,
    pub device_dlpack_device_type: c_int,
    pub device_dlpack_device_id: c_int,
}

impl Default for xfer_export {
    /// No descriptors, an empty blob, with `struct_size` set as the functions want it.
    fn default() -> Self {
        xfer_export {
            struct_size: std::mem::size_of::<xfer_export>(),
            version: 0,
            fd_count: 0,
            fds: [-1; XFER_EXPORT_MAX_FDS],
            blob_bytes: 0,
            blob: [0; XFER_EXPORT_BLOB_BYTES],
        }
    }
}

pub type xfer_memory_event_kind = c_int;
pub const XFER_MEMORY_ALLOCATED: xfer_memory_event_kind = 1;
pub const XFER_MEMORY_RELEASING: xfer_memory_event_kind = 2;
pub const XFER_MEMORY_REGISTERED: xfer_memory_event_kind = 3;
pub const XFER_MEMORY_UNREGISTERING: xfer_memory_event_kind = 4;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct xfer_memory_event {
    pub struct_size: usize,
    pub ctx: xfer_context,
    pub event: xfer_memory_event_kind,
    pub buffer: xfer_buffer,
    pub host_ptr: *mut c_void,
    pub device_ptr: *mut c_void,
    pub bytes: usize,
    pub imported: c_int,
}

pub type xfer_memory_observer_fn = Option<unsafe extern "C" fn(event: *const xfer_memory_event, user_data: *mut c_void)>;

// ---------------------------------------------------------------- functions
extern "C" {
    pub fn xfer_get_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int) -> xfer_status;
    pub fn xfer_status_string(st: xfer_status) -> *const c_char;
    pub fn xfer_last_error() -> *const c_char;
    pub fn xfer_backend_count(count: *mut c_int) -> xfer_status;
    pub fn xfer_backend_get_info(index: c_int, info: *mut xfer_backend_info) -> xfer_status;
    pub fn xfer_param_count(count: *mut c_int) -> xfer_status;
    pub fn xfer_param_get_info(index: c_int, info: *mut xfer_param_info) -> xfer_status;
    pub fn xfer_open(backend: *const c_char, device: c_int, ctx: *mut xfer_context) -> xfer_status;
    pub fn xfer_close(ctx: xfer_context) -> xfer_status;
    pub fn xfer_context_get_info(ctx: xfer_context, info: *mut xfer_context_info) -> xfer_status;
    pub fn xfer_device_get_info(ctx: xfer_context, info: *mut xfer_device_info) -> xfer_status;
    pub fn xfer_calibrate(ctx: xfer_context, flags: c_uint, info: *mut xfer_calibration_info) -> xfer_status;
    pub fn xfer_context_setting_count(ctx: xfer_context, count: *mut c_int) -> xfer_status;
    pub fn xfer_context_get_setting(ctx: xfer_context, index: c_int, info: *mut xfer_param_info, derived: *mut c_int) -> xfer_status;
    pub fn xfer_alloc(ctx: xfer_context, bytes: usize, flags: c_uint, buf: *mut xfer_buffer) -> xfer_status;
    pub fn xfer_free(buf: xfer_buffer) -> xfer_status;
    pub fn xfer_host_ptr(buf: xfer_buffer) -> *mut c_void;
    pub fn xfer_device_ptr(buf: xfer_buffer) -> *mut c_void;
    pub fn xfer_buffer_size(buf: xfer_buffer) -> usize;
    pub fn xfer_copy_async(buf: xfer_buffer, dir: xfer_direction, offset: usize, bytes: usize, s: xfer_stream) -> xfer_status;
    pub fn xfer_copy(buf: xfer_buffer, dir: xfer_direction, offset: usize, bytes: usize) -> xfer_status;
    pub fn xfer_memcpy_async(ctx: xfer_context, dst: *mut c_void, src: *const c_void, bytes: usize, kind: xfer_copy_kind, s: xfer_stream) -> xfer_status;
    pub fn xfer_memcpy_batch_async(ctx: xfer_context, dsts: *const *mut c_void, srcs: *const *const c_void, sizes: *const usize, count: usize, kind: xfer_copy_kind, s: xfer_stream) -> xfer_status;
    pub fn xfer_register(ctx: xfer_context, ptr: *mut c_void, bytes: usize, flags: c_uint) -> xfer_status;
    pub fn xfer_unregister(ctx: xfer_context, ptr: *mut c_void) -> xfer_status;
    pub fn xfer_registration_get_stats(ctx: xfer_context, stats: *mut xfer_registration_stats) -> xfer_status;
    pub fn xfer_stream_create(ctx: xfer_context, s: *mut xfer_stream) -> xfer_status;
    pub fn xfer_stream_destroy(s: xfer_stream) -> xfer_status;
    pub fn xfer_stream_synchronize(s: xfer_stream) -> xfer_status;
    pub fn xfer_stream_query(s: xfer_stream) -> xfer_status;
    pub fn xfer_stream_wait_event(s: xfer_stream, e: xfer_event) -> xfer_status;
    pub fn xfer_stream_launch_host_func(s: xfer_stream, f: xfer_host_fn, user_data: *mut c_void) -> xfer_status;
    pub fn xfer_stream_native(s: xfer_stream) -> *mut c_void;
    pub fn xfer_stream_wrap(ctx: xfer_context, native: *mut c_void, s: *mut xfer_stream) -> xfer_status;
    pub fn xfer_event_create(ctx: xfer_context, flags: c_uint, e: *mut xfer_event) -> xfer_status;
    pub fn xfer_event_destroy(e: xfer_event) -> xfer_status;
    pub fn xfer_event_record(e: xfer_event, s: xfer_stream) -> xfer_status;
    pub fn xfer_event_synchronize(e: xfer_event) -> xfer_status;
    pub fn xfer_event_query(e: xfer_event) -> xfer_status;
    pub fn xfer_event_elapsed_ms(start: xfer_event, end: xfer_event, ms: *mut c_float) -> xfer_status;
    pub fn xfer_event_native(e: xfer_event) -> *mut c_void;
    pub fn xfer_copy_path_name(path: xfer_copy_path) -> *const c_char;
    pub fn xfer_path_reason_name(reason: xfer_path_reason) -> *const c_char;
    pub fn xfer_path_is_slow(path: xfer_copy_path, reason: xfer_path_reason, bytes: u64) -> c_int;
    pub fn xfer_context_get_stats(ctx: xfer_context, stats: *mut xfer_context_stats) -> xfer_status;
    pub fn xfer_context_reset_stats(ctx: xfer_context) -> xfer_status;
    pub fn xfer_set_copy_observer(ctx: xfer_context, f: xfer_copy_observer_fn, user_data: *mut c_void) -> xfer_status;
    pub fn xfer_context_set_slow_path(ctx: xfer_context, policy: xfer_slow_path) -> xfer_status;
    pub fn xfer_context_get_slow_path(ctx: xfer_context, policy: *mut xfer_slow_path) -> xfer_status;
    pub fn xfer_memcpy_peer_async(dst_ctx: xfer_context, dst: *mut c_void, src_ctx: xfer_context, src: *const c_void, bytes: usize, s: xfer_stream) -> xfer_status;
    pub fn xfer_copy_peer_async(dst: xfer_buffer, dst_offset: usize, src: xfer_buffer, src_offset: usize, bytes: usize, s: xfer_stream) -> xfer_status;
    pub fn xfer_device_can_access_peer(ctx: xfer_context, peer: xfer_context, can_access: *mut c_int) -> xfer_status;
    pub fn xfer_buffer_export(buf: xfer_buffer, out: *mut xfer_export) -> xfer_status;
    pub fn xfer_buffer_get_share_info(buf: xfer_buffer, info: *mut xfer_share_info) -> xfer_status;
    pub fn xfer_buffer_import(ctx: xfer_context, input: *const xfer_export, out: *mut xfer_buffer) -> xfer_status;
    pub fn xfer_export_send(socket: c_int, input: *const xfer_export) -> xfer_status;
    pub fn xfer_export_receive(socket: c_int, out: *mut xfer_export) -> xfer_status;
    pub fn xfer_export_close(exp: *mut xfer_export);
    pub fn xfer_set_memory_observer(ctx: xfer_context, f: xfer_memory_observer_fn, user_data: *mut c_void) -> xfer_status;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of};

    // The layouts of xfer.h on LP64 (x86-64, aarch64 Linux).
    #[test]
    fn struct_layouts_match_the_header() {
        assert_eq!(size_of::<usize>(), 8);
        assert_eq!(size_of::<xfer_backend_info>(), 3 * 8 + 2 * 4 + 8 + 4 * 4); // int `available` is padded to 8
        assert_eq!(size_of::<xfer_context_info>(), 8 + 3 * 4 + 4);
        assert_eq!(size_of::<xfer_param_info>(), 7 * 8 + 8);
        assert_eq!(size_of::<xfer_device_info>(), 256 + 2 * 4 + 2 * 8 + 5 * 4 + 32 + 6 * 4 + 4);
        assert_eq!(align_of::<xfer_device_info>(), 8);
        assert_eq!(size_of::<xfer_registration_stats>(), 8 * 8);
        assert_eq!(size_of::<xfer_path_stats>(), 3 * 8);
        assert_eq!(size_of::<xfer_context_stats>(), 8 + 2 * 4 + 9 * 8 + XFER_PATH_COUNT as usize * 3 * 8);
        assert_eq!(size_of::<xfer_copy_record>(), 4 * 8 + 4 * 4 + 4 * 8);
        assert_eq!(size_of::<xfer_calibration_info>(), 8 + 8 + 8 + 2 * 8); // int `measured` is padded to 8
        assert_eq!(xfer_calibration_info::default().struct_size, 40);
    }
}
