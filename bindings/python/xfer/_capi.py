# SPDX-License-Identifier: Apache-2.0
"""Raw ctypes declarations of <xfer/xfer.h>: every constant, struct and function, one line each.

Every function has its argtypes and restype, so ctypes converts sizes as 64-bit size_t and
pointers as full-width void*: nothing is truncated to int. To bind a new xfer.h function, add
one line to FUNCTIONS (bindings/check_coverage.py fails CI until you do).
"""
import ctypes
import os
import threading
from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_size_t, c_uint, c_uint32,
                    c_uint64, c_void_p)

# --------------------------------------------------------------------------- constants
# Names and values exactly as in xfer.h (the coverage check compares both).
XFER_VERSION_MAJOR = 1
XFER_VERSION_MINOR = 0
XFER_VERSION_PATCH = 0

# enum xfer_status
XFER_SUCCESS = 0
XFER_ERROR_INVALID_ARGUMENT = 1
XFER_ERROR_INVALID_HANDLE = 2
XFER_ERROR_INVALID_SIZE = 3
XFER_ERROR_OUT_OF_BOUNDS = 4
XFER_ERROR_OUT_OF_MEMORY = 5
XFER_ERROR_NOT_READY = 6
XFER_ERROR_NOT_SUPPORTED = 7
XFER_ERROR_NO_DEVICE = 8
XFER_ERROR_BACKEND_NOT_FOUND = 9
XFER_ERROR_BACKEND_UNAVAILABLE = 10
XFER_ERROR_BACKEND_ABI = 11
XFER_ERROR_CONFIG = 12
XFER_ERROR_BACKEND = 13
XFER_ERROR_INVALID_STATE = 14
XFER_ERROR_INTERNAL = 15
XFER_ERROR_SLOW_PATH = 16

# enum xfer_direction
XFER_TO_DEVICE = 1
XFER_TO_HOST = 2

# enum xfer_copy_kind
XFER_COPY_HOST_TO_HOST = 0
XFER_COPY_HOST_TO_DEVICE = 1
XFER_COPY_DEVICE_TO_HOST = 2
XFER_COPY_DEVICE_TO_DEVICE = 3
XFER_COPY_DEFAULT = 4

# enum xfer_device_kind
XFER_DEVICE_KIND_HOST = 0
XFER_DEVICE_KIND_CUDA = 1

# enum xfer_param_source
XFER_PARAM_DEFAULT = 0
XFER_PARAM_FILE = 1
XFER_PARAM_ENV = 2
XFER_PARAM_CALIBRATION = 3

# enum xfer_copy_path
XFER_PATH_UNREPORTED = 0
XFER_PATH_HOST_MEMCPY = 1
XFER_PATH_PINNED_DMA = 2
XFER_PATH_CACHED_REGISTRATION = 3
XFER_PATH_NEW_REGISTRATION = 4
XFER_PATH_DRIVER_PAGEABLE = 5
XFER_PATH_STAGED = 6
XFER_PATH_STAGED_SYNC = 7
XFER_PATH_PACKED = 8
XFER_PATH_DEVICE_COPY = 9
XFER_PATH_PEER = 10
XFER_PATH_MANAGED_MIGRATE = 11
XFER_PATH_MANAGED_STAGED = 12
XFER_PATH_MANAGED_COPY = 13
XFER_PATH_MAPPED = 14
XFER_PATH_COUNT = 15

# enum xfer_path_reason
XFER_REASON_MEMORY = 0
XFER_REASON_BELOW_CROSSOVER = 1
XFER_REASON_NO_FASTER_PATH = 2
XFER_REASON_FIRST_USE = 3
XFER_REASON_CACHE_HIT = 4
XFER_REASON_CACHE_FULL = 5
XFER_REASON_REGISTRATION_FAILED = 6
XFER_REASON_CONFIGURED = 7
XFER_REASON_SPLIT = 8
XFER_REASON_ONE_OFF = 9
XFER_REASON_REUSE = 10
XFER_REASON_MEASURED_FASTEST = 11
XFER_REASON_COUNT = 12

# enum xfer_slow_path
XFER_SLOW_PATH_ALLOW = 0
XFER_SLOW_PATH_WARN = 1
XFER_SLOW_PATH_REFUSE = 2
XFER_SLOW_PATH_MIN_BYTES = 1048576
XFER_CONTEXT_STATS_VERSION = 1

# flags
XFER_ALLOC_DEFAULT = 0x0
XFER_ALLOC_READ_MOSTLY = 0x1
XFER_ALLOC_PREFER_DEVICE = 0x2
XFER_ALLOC_PREFER_HOST = 0x4
XFER_ALLOC_SHAREABLE = 0x8
XFER_SHARE_HANDLE_MEMFD = 0x1
XFER_SHARE_HANDLE_POSIX_FD = 0x2
XFER_SHARE_HANDLE_FABRIC = 0x4
XFER_EVENT_DEFAULT = 0x0
XFER_EVENT_DISABLE_TIMING = 0x1
XFER_CAP_SHARED_VIEW = 0x1
XFER_CAP_ASYNC_COPY = 0x2
XFER_CAP_NO_COPY = 0x4
XFER_CAP_MIGRATES = 0x8
XFER_REGISTER_DEFAULT = 0x0
XFER_REGISTER_READ_ONLY = 0x1
XFER_CALIBRATE_FORCE = 0x1

# sharing buffers with other processes and libraries
XFER_EXPORT_VERSION = 1
XFER_EXPORT_MAX_FDS = 4
XFER_EXPORT_BLOB_BYTES = 256
# enum xfer_memory_event_kind
XFER_MEMORY_ALLOCATED = 1
XFER_MEMORY_RELEASING = 2
XFER_MEMORY_REGISTERED = 3
XFER_MEMORY_UNREGISTERING = 4

# --------------------------------------------------------------------------- types
# C enums are pinned to 32 bits (the *_FORCE_INT32 members): c_int on every platform xfer runs on.
xfer_status = c_int
xfer_direction = c_int
xfer_copy_kind = c_int
xfer_device_kind = c_int
xfer_param_source = c_int
xfer_copy_path = c_int
xfer_path_reason = c_int
xfer_slow_path = c_int
xfer_memory_event_kind = c_int
xfer_context = c_void_p
xfer_buffer = c_void_p
xfer_stream = c_void_p
xfer_event = c_void_p
xfer_host_fn = ctypes.CFUNCTYPE(None, c_void_p)


class xfer_backend_info(Structure):
    _fields_ = [("name", c_char_p), ("description", c_char_p), ("path", c_char_p), ("available", c_int),
                ("reason", c_char_p), ("device_count", c_int), ("device_kind", xfer_device_kind),
                ("abi_major", c_uint), ("abi_minor", c_uint)]


class xfer_device_info(Structure):
    _fields_ = [("name", c_char * 256), ("ordinal", c_int), ("kind", xfer_device_kind),
                ("total_memory", c_uint64), ("free_memory", c_uint64), ("compute_major", c_int),
                ("compute_minor", c_int), ("multiprocessors", c_int), ("pcie_generation", c_int),
                ("pcie_width", c_int), ("pci_bus_id", c_char * 32), ("async_engine_count", c_int),
                ("concurrent_managed_access", c_int), ("can_map_host_memory", c_int),
                ("unified_addressing", c_int), ("driver_version", c_int), ("runtime_version", c_int)]


class xfer_context_info(Structure):
    _fields_ = [("backend", c_char_p), ("device", c_int), ("device_kind", xfer_device_kind), ("caps", c_uint)]


class xfer_param_info(Structure):
    _fields_ = [("section", c_char_p), ("name", c_char_p), ("env", c_char_p), ("type", c_char_p),
                ("value", c_char_p), ("default_value", c_char_p), ("help", c_char_p),
                ("source", xfer_param_source)]


class xfer_calibration_info(Structure):
    _fields_ = [("struct_size", c_size_t), ("measured", c_int), ("seconds", c_double), ("file", c_char_p),
                ("json", c_char_p)]


class xfer_registration_stats(Structure):
    _fields_ = [("registered_ranges", c_uint64), ("registered_bytes", c_uint64), ("cache_hits", c_uint64),
                ("cache_misses", c_uint64), ("cache_evictions", c_uint64), ("cache_ranges", c_uint64),
                ("cache_bytes", c_uint64), ("cache_limit_bytes", c_uint64)]


class xfer_path_stats(Structure):
    _fields_ = [("copies", c_uint64), ("bytes", c_uint64), ("host_ns", c_uint64)]


class xfer_context_stats(Structure):
    _fields_ = [("struct_size", c_size_t), ("version", c_uint32), ("path_count", c_uint32), ("calls", c_uint64),
                ("slow_copies", c_uint64), ("refused_calls", c_uint64), ("registrations", c_uint64),
                ("registered_bytes", c_uint64), ("registration_ns", c_uint64), ("unregistrations", c_uint64),
                ("unregistered_bytes", c_uint64), ("unregistration_ns", c_uint64),
                ("paths", xfer_path_stats * XFER_PATH_COUNT)]


class xfer_copy_record(Structure):
    _fields_ = [("struct_size", c_size_t), ("ctx", xfer_context), ("stream", xfer_stream), ("function", c_char_p),
                ("path", xfer_copy_path), ("reason", xfer_path_reason), ("kind", xfer_copy_kind), ("slow", c_int),
                ("copies", c_uint64), ("bytes", c_uint64), ("host_ns", c_uint64), ("call_bytes", c_uint64)]


class xfer_export(Structure):
    _fields_ = [("struct_size", c_size_t), ("version", c_uint32), ("fd_count", c_uint32),
                ("fds", c_int * XFER_EXPORT_MAX_FDS), ("blob_bytes", c_uint32),
                ("blob", ctypes.c_ubyte * XFER_EXPORT_BLOB_BYTES)]


class xfer_share_info(Structure):
    _fields_ = [("struct_size", c_size_t), ("handle_types", c_uint), ("rdma_capable", c_int),
                ("granularity", c_size_t), ("device_view_bytes", c_size_t), ("host_memory_kind", c_char_p),
                ("device_memory_kind", c_char_p), ("host_dlpack_device_type", c_int),
                ("host_dlpack_device_id", c_int), ("device_dlpack_device_type", c_int),
                ("device_dlpack_device_id", c_int)]


class xfer_memory_event(Structure):
    _fields_ = [("struct_size", c_size_t), ("ctx", xfer_context), ("event", xfer_memory_event_kind),
                ("buffer", xfer_buffer), ("host_ptr", c_void_p), ("device_ptr", c_void_p), ("bytes", c_size_t),
                ("imported", c_int)]


P = POINTER
xfer_copy_observer_fn = ctypes.CFUNCTYPE(None, P(xfer_copy_record), c_void_p)
xfer_memory_observer_fn = ctypes.CFUNCTYPE(None, P(xfer_memory_event), c_void_p)
# --------------------------------------------------------------------------- functions
# name: (restype, argtypes) -- one line per xfer.h function, in the header's order.
FUNCTIONS = {
    "xfer_get_version": (xfer_status, [P(c_int), P(c_int), P(c_int)]),
    "xfer_status_string": (c_char_p, [xfer_status]),
    "xfer_last_error": (c_char_p, []),
    "xfer_backend_count": (xfer_status, [P(c_int)]),
    "xfer_backend_get_info": (xfer_status, [c_int, P(xfer_backend_info)]),
    "xfer_param_count": (xfer_status, [P(c_int)]),
    "xfer_param_get_info": (xfer_status, [c_int, P(xfer_param_info)]),
    "xfer_open": (xfer_status, [c_char_p, c_int, P(xfer_context)]),
    "xfer_close": (xfer_status, [xfer_context]),
    "xfer_context_get_info": (xfer_status, [xfer_context, P(xfer_context_info)]),
    "xfer_device_get_info": (xfer_status, [xfer_context, P(xfer_device_info)]),
    "xfer_calibrate": (xfer_status, [xfer_context, c_uint, P(xfer_calibration_info)]),
    "xfer_context_setting_count": (xfer_status, [xfer_context, P(c_int)]),
    "xfer_context_get_setting": (xfer_status, [xfer_context, c_int, P(xfer_param_info), P(c_int)]),
    "xfer_alloc": (xfer_status, [xfer_context, c_size_t, c_uint, P(xfer_buffer)]),
    "xfer_free": (xfer_status, [xfer_buffer]),
    "xfer_host_ptr": (c_void_p, [xfer_buffer]),
    "xfer_device_ptr": (c_void_p, [xfer_buffer]),
    "xfer_buffer_size": (c_size_t, [xfer_buffer]),
    "xfer_copy_async": (xfer_status, [xfer_buffer, xfer_direction, c_size_t, c_size_t, xfer_stream]),
    "xfer_copy": (xfer_status, [xfer_buffer, xfer_direction, c_size_t, c_size_t]),
    "xfer_memcpy_async": (xfer_status, [xfer_context, c_void_p, c_void_p, c_size_t, xfer_copy_kind, xfer_stream]),
    "xfer_memcpy_batch_async": (xfer_status, [xfer_context, P(c_void_p), P(c_void_p), P(c_size_t), c_size_t, xfer_copy_kind, xfer_stream]),
    "xfer_register": (xfer_status, [xfer_context, c_void_p, c_size_t, c_uint]),
    "xfer_unregister": (xfer_status, [xfer_context, c_void_p]),
    "xfer_registration_get_stats": (xfer_status, [xfer_context, P(xfer_registration_stats)]),
    "xfer_stream_create": (xfer_status, [xfer_context, P(xfer_stream)]),
    "xfer_stream_destroy": (xfer_status, [xfer_stream]),
    "xfer_stream_synchronize": (xfer_status, [xfer_stream]),
    "xfer_stream_query": (xfer_status, [xfer_stream]),
    "xfer_stream_wait_event": (xfer_status, [xfer_stream, xfer_event]),
    "xfer_stream_launch_host_func": (xfer_status, [xfer_stream, xfer_host_fn, c_void_p]),
    "xfer_stream_native": (c_void_p, [xfer_stream]),
    "xfer_stream_wrap": (xfer_status, [xfer_context, c_void_p, P(xfer_stream)]),
    "xfer_event_create": (xfer_status, [xfer_context, c_uint, P(xfer_event)]),
    "xfer_event_destroy": (xfer_status, [xfer_event]),
    "xfer_event_record": (xfer_status, [xfer_event, xfer_stream]),
    "xfer_event_synchronize": (xfer_status, [xfer_event]),
    "xfer_event_query": (xfer_status, [xfer_event]),
    "xfer_event_elapsed_ms": (xfer_status, [xfer_event, xfer_event, P(c_float)]),
    "xfer_event_native": (c_void_p, [xfer_event]),
    "xfer_copy_path_name": (c_char_p, [xfer_copy_path]),
    "xfer_path_reason_name": (c_char_p, [xfer_path_reason]),
    "xfer_path_is_slow": (c_int, [xfer_copy_path, xfer_path_reason, c_uint64]),
    "xfer_context_get_stats": (xfer_status, [xfer_context, P(xfer_context_stats)]),
    "xfer_context_reset_stats": (xfer_status, [xfer_context]),
    # fn as c_void_p: it takes an xfer_copy_observer_fn object and None (NULL: removes the
    # observer), which an argtype of the CFUNCTYPE itself would refuse.
    "xfer_set_copy_observer": (xfer_status, [xfer_context, c_void_p, c_void_p]),
    "xfer_context_set_slow_path": (xfer_status, [xfer_context, xfer_slow_path]),
    "xfer_context_get_slow_path": (xfer_status, [xfer_context, P(xfer_slow_path)]),
    "xfer_memcpy_peer_async": (xfer_status, [xfer_context, c_void_p, xfer_context, c_void_p, c_size_t, xfer_stream]),
    "xfer_copy_peer_async": (xfer_status, [xfer_buffer, c_size_t, xfer_buffer, c_size_t, c_size_t, xfer_stream]),
    "xfer_device_can_access_peer": (xfer_status, [xfer_context, xfer_context, P(c_int)]),
    "xfer_buffer_export": (xfer_status, [xfer_buffer, P(xfer_export)]),
    "xfer_buffer_import": (xfer_status, [xfer_context, P(xfer_export), P(xfer_buffer)]),
    "xfer_export_send": (xfer_status, [c_int, P(xfer_export)]),
    "xfer_export_receive": (xfer_status, [c_int, P(xfer_export)]),
    "xfer_export_close": (None, [P(xfer_export)]),
    "xfer_buffer_get_share_info": (xfer_status, [xfer_buffer, P(xfer_share_info)]),
    # fn as c_void_p, as for xfer_set_copy_observer (None removes the observer).
    "xfer_set_memory_observer": (xfer_status, [xfer_context, c_void_p, c_void_p]),
}

# --------------------------------------------------------------------------- loading
_lib = None
_lib_lock = threading.Lock()

_HOW_TO_FIND = (
    "Set XFER_LIBRARY to the path of libxfer.so, e.g. `export XFER_LIBRARY=/opt/xfer/lib/libxfer.so` "
    "(an installed prefix) or `export XFER_LIBRARY=$PWD/build/lib/libxfer.so` (a build tree), or put "
    "its folder on the loader's path: `export LD_LIBRARY_PATH=/opt/xfer/lib:$LD_LIBRARY_PATH`.")


class LibraryNotFoundError(OSError):
    """libxfer could not be loaded, or the library found lacks functions this binding declares
    (it is older than the binding). The message says which file was tried, why it failed and how
    to point the binding at the right one (XFER_LIBRARY, LD_LIBRARY_PATH). An OSError, as
    ctypes raises for a missing library: code that catches OSError keeps working."""


def library_path():
    """XFER_LIBRARY (a path to libxfer.so) if set, else the loader's search for libxfer.so.1
    (LD_LIBRARY_PATH, RUNPATH, ldconfig)."""
    return os.environ.get("XFER_LIBRARY") or "libxfer.so.1"


def lib():
    """The loaded libxfer with every FUNCTIONS entry declared; loaded on first use (thread-safe).
    Raises LibraryNotFoundError when it cannot be loaded or lacks one of FUNCTIONS."""
    global _lib
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is None:
            path = library_path()
            where = (f"XFER_LIBRARY={path}" if os.environ.get("XFER_LIBRARY")
                     else f"{path} through the dynamic loader (XFER_LIBRARY is not set)")
            try:
                handle = ctypes.CDLL(path)
            except OSError as e:
                raise LibraryNotFoundError(f"libxfer could not be loaded from {where}: {e}. {_HOW_TO_FIND}") from e
            missing = [name for name in FUNCTIONS if not hasattr(handle, name)]
            if missing:
                raise LibraryNotFoundError(
                    f"the libxfer loaded from {where} lacks {', '.join(missing)}: it is older than this "
                    f"Python binding. {_HOW_TO_FIND}")
            for name, (restype, argtypes) in FUNCTIONS.items():
                fn = getattr(handle, name)
                fn.restype = restype
                fn.argtypes = argtypes
            _lib = handle
    return _lib
