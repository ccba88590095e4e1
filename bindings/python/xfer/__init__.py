# SPDX-License-Identifier: Apache-2.0
"""xfer for Python: move data between host and GPU memory through xfer's run-time backends.

A ctypes binding of libxfer (no compiled extension). The raw C API, every function with its
argtypes/restype, is ``xfer._capi``; this module is the safe layer:

    import numpy as np, xfer
    with xfer.Context("host") as ctx, ctx.alloc(1 << 20) as buf, ctx.stream() as s:
        a = buf.host_array(np.float32)          # NumPy view of the host memory, no copy
        a[:] = np.random.rand(a.size)
        buf.to_device(s)
        buf.to_host(s)
        s.synchronize()

Failures raise ``xfer.Error`` with ``.status`` (a ``Status``) and the library's message. On
CUDA backends ``buffer.device_view(dtype, shape, stream)`` exposes the device memory through
``__cuda_array_interface__`` (v3) and DLPack (``__dlpack__``/``__dlpack_device__``), so CuPy,
PyTorch and Numba use it without a copy. ``ctx.register(array)`` page-locks memory the program
owns (a NumPy array, any buffer) for fast copies and returns a ``Registration`` that unregisters
at the end of a with-block; ``ctx.registration_stats()`` reports the counters. The library is found through XFER_LIBRARY (a path to
libxfer.so) or the dynamic loader (libxfer.so.1).
"""
import ctypes
import enum
import weakref
from ctypes import byref, c_float, c_int, c_size_t, c_void_p

import numpy as np

from . import _capi, _dlpack
from ._capi import lib

__all__ = ["Error", "Status", "Direction", "CopyKind", "DeviceKind", "ParamSource", "AllocFlags",
           "EventFlags", "Caps", "RegisterFlags", "Context", "Buffer", "Stream", "Event", "DeviceView",
           "Registration", "version",
           "backends", "params", "status_string", "last_error"]


def _members(select, strip=None, extra=()):
    strip = strip or select
    out = {n[len(strip):]: v for n, v in vars(_capi).items() if n.startswith(select)}
    out.update({n[len("XFER_"):]: getattr(_capi, n) for n in extra})
    return out


# Enums and flags come from _capi by prefix, so a constant added there appears here too.
Status = enum.IntEnum("Status", _members("XFER_ERROR_", extra=["XFER_SUCCESS"]))
Status.__doc__ = "xfer_status: SUCCESS, INVALID_ARGUMENT, ... (names without XFER_ERROR_)."
Direction = enum.IntEnum("Direction", _members("XFER_TO_", strip="XFER_"))
CopyKind = enum.IntEnum("CopyKind", _members("XFER_COPY_"))
DeviceKind = enum.IntEnum("DeviceKind", _members("XFER_DEVICE_KIND_"))
ParamSource = enum.IntEnum("ParamSource", _members("XFER_PARAM_"))
AllocFlags = enum.IntFlag("AllocFlags", _members("XFER_ALLOC_"))
EventFlags = enum.IntFlag("EventFlags", _members("XFER_EVENT_"))
Caps = enum.IntFlag("Caps", _members("XFER_CAP_"))
RegisterFlags = enum.IntFlag("RegisterFlags", _members("XFER_REGISTER_"))


def _text(b):
    return b.decode("utf-8", "replace") if b is not None else ""


def status_string(status):
    """"XFER_ERROR_OUT_OF_BOUNDS" for a status value (xfer_status_string)."""
    return _text(lib().xfer_status_string(int(status)))


def last_error():
    """The calling thread's last failure message (xfer_last_error)."""
    return _text(lib().xfer_last_error())


class Error(Exception):
    """A failed xfer call: .status (Status), .call (the C function), .message (its detail)."""

    def __init__(self, status, call, message):
        try:
            self.status = Status(status)
        except ValueError:
            self.status = status
        self.call = call
        self.message = message
        super().__init__(f"{call}: {status_string(status)}" + (f": {message}" if message else ""))


def _check(status, call):
    if status != _capi.XFER_SUCCESS:
        detail = last_error()
        if detail.startswith(call + ": "):
            detail = detail[len(call) + 2:]
        raise Error(status, call, detail)


def _ready(status, call):
    """The *_query calls: SUCCESS -> True, NOT_READY -> False, anything else raises."""
    if status == _capi.XFER_ERROR_NOT_READY:
        return False
    _check(status, call)
    return True


def _size(value, what):
    """A non-negative int for a size_t argument; refuses what ctypes would wrap or truncate."""
    value = int(value)
    if value < 0 or value >= 1 << (8 * ctypes.sizeof(c_size_t)):
        raise Error(_capi.XFER_ERROR_INVALID_SIZE, what, f"{value} does not fit in size_t")
    return value


def version():
    """(major, minor, patch) of the loaded libxfer."""
    v = [c_int(), c_int(), c_int()]
    _check(lib().xfer_get_version(*map(byref, v)), "xfer_get_version")
    return tuple(x.value for x in v)


def backends():
    """Every backend on the plugin search path, as dicts (name, available, reason, ...)."""
    count = c_int()
    _check(lib().xfer_backend_count(byref(count)), "xfer_backend_count")
    out = []
    for i in range(count.value):
        info = _capi.xfer_backend_info()
        _check(lib().xfer_backend_get_info(i, byref(info)), "xfer_backend_get_info")
        out.append({"name": _text(info.name), "description": _text(info.description), "path": _text(info.path),
                    "available": bool(info.available), "reason": _text(info.reason),
                    "device_count": info.device_count, "device_kind": DeviceKind(info.device_kind),
                    "abi": (info.abi_major, info.abi_minor)})
    return out


def params():
    """The effective configuration: dicts with section, name, env, type, value, default, help, source."""
    count = c_int()
    _check(lib().xfer_param_count(byref(count)), "xfer_param_count")
    out = []
    for i in range(count.value):
        p = _capi.xfer_param_info()
        _check(lib().xfer_param_get_info(i, byref(p)), "xfer_param_get_info")
        out.append({"section": _text(p.section), "name": _text(p.name), "env": _text(p.env), "type": _text(p.type),
                    "value": _text(p.value), "default": _text(p.default_value), "help": _text(p.help),
                    "source": ParamSource(p.source)})
    return out


class _Handle:
    """Owns one C handle; close() (or the with-block, or garbage collection) releases it once."""

    _release = None
    _call = ""

    def __init__(self, handle, parent):
        self._h = handle
        self._parent = parent  # keeps the context alive while its objects are
        if parent is not None:
            parent._children.add(self)

    @property
    def handle(self):
        """The C handle (an int), for calls through xfer._capi."""
        if not self._h:
            raise Error(_capi.XFER_ERROR_INVALID_HANDLE, self._call, f"this {type(self).__name__} is closed")
        return self._h

    def close(self):
        h, self._h = self._h, None
        if h:
            _check(getattr(lib(), self._release)(h), self._release)

    def _forget(self):  # the context released it (xfer_close frees what it owns)
        self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # nothing can report from a finalizer
            pass


class Context(_Handle):
    """One backend bound to one device (xfer_open). backend None / device -1: from XFER_BACKEND,
    XFER_DEVICE or the XFER_CONFIG file."""

    _release = "xfer_close"
    _call = "xfer_open"

    def __init__(self, backend=None, device=-1):
        self._children = weakref.WeakSet()
        h = _capi.xfer_context()
        _check(lib().xfer_open(backend.encode() if backend else None, int(device), byref(h)), "xfer_open")
        super().__init__(h.value, None)
        info = _capi.xfer_context_info()
        _check(lib().xfer_context_get_info(self.handle, byref(info)), "xfer_context_get_info")
        self.backend = _text(info.backend)
        self.device = info.device
        self.device_kind = DeviceKind(info.device_kind)
        self.caps = Caps(info.caps)

    def close(self):
        """Synchronises and frees everything the context owns, then closes it (xfer_close)."""
        for child in list(self._children):
            child._forget()
        super().close()

    def device_info(self):
        """xfer_device_info as a dict."""
        info = _capi.xfer_device_info()
        _check(lib().xfer_device_get_info(self.handle, byref(info)), "xfer_device_get_info")
        return {name: (_text(getattr(info, name)) if isinstance(getattr(info, name), bytes) else getattr(info, name))
                for name, _ in info._fields_}

    def alloc(self, nbytes, flags=0):
        """A new Buffer of nbytes bytes (xfer_alloc); flags: AllocFlags."""
        return Buffer(self, nbytes, flags)

    def stream(self):
        """A new Stream (xfer_stream_create)."""
        return Stream(self)

    def event(self, flags=0):
        """A new Event (xfer_event_create); flags: EventFlags."""
        return Event(self, flags)

    def memcpy_async(self, dst, src, nbytes, kind, stream):
        """Queues a raw copy of nbytes from address src to address dst (ints) on stream."""
        _check(lib().xfer_memcpy_async(self.handle, int(dst), int(src), _size(nbytes, "xfer_memcpy_async"),
                                       int(kind), stream.handle), "xfer_memcpy_async")

    def memcpy_batch_async(self, dsts, srcs, sizes, kind, stream):
        """Queues len(dsts) raw copies as one batch (xfer_memcpy_batch_async)."""
        n = len(dsts)
        if len(srcs) != n or len(sizes) != n:
            raise Error(_capi.XFER_ERROR_INVALID_ARGUMENT, "xfer_memcpy_batch_async",
                        "dsts, srcs and sizes differ in length")
        d = (c_void_p * n)(*map(int, dsts))
        s = (c_void_p * n)(*map(int, srcs))
        z = (c_size_t * n)(*(_size(x, "xfer_memcpy_batch_async") for x in sizes))
        _check(lib().xfer_memcpy_batch_async(self.handle, d, s, z, n, int(kind), stream.handle),
               "xfer_memcpy_batch_async")

    def register(self, memory, nbytes=None, read_only=False):
        """Page-locks host memory the caller owns for this context (xfer_register) and returns a
        Registration, which unregisters on close(), at the end of a with-block, or when collected.

        memory: a NumPy array or any object with the buffer protocol (bytearray, memoryview,
        array.array), registered from its first byte; its bytes must be contiguous. The
        Registration keeps it alive. Or an address (int) with nbytes, which the caller keeps alive.
        nbytes: None for the whole object, else at most its size. read_only: XFER_REGISTER_READ_ONLY
        (the device only reads the range). Register long-lived memory once: registering is slow.
        """
        return Registration(self, memory, nbytes, read_only)

    def registration_stats(self):
        """xfer_registration_stats as a dict: registered_ranges, registered_bytes, cache_hits, ..."""
        stats = _capi.xfer_registration_stats()
        _check(lib().xfer_registration_get_stats(self.handle, byref(stats)), "xfer_registration_get_stats")
        return {name: getattr(stats, name) for name, _ in stats._fields_}


class Registration(_Handle):
    """A host range registered with a Context (xfer_register / xfer_unregister). Attributes:
    ptr (int), nbytes, read_only, context, memory (the registered object, kept alive)."""

    _call = "xfer_register"
    _h = None

    def __init__(self, ctx, memory, nbytes=None, read_only=False):
        what = "xfer_register"
        if isinstance(memory, int):
            if nbytes is None:
                raise Error(_capi.XFER_ERROR_INVALID_SIZE, what, "an address needs nbytes")
            ptr, size = memory, _size(nbytes, what)
        else:
            arr = memory if isinstance(memory, np.ndarray) else np.frombuffer(memory, dtype=np.uint8)
            if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
                raise Error(_capi.XFER_ERROR_INVALID_ARGUMENT, what,
                            "the array is not contiguous: register its base array, or a contiguous copy")
            ptr, size = arr.ctypes.data, arr.nbytes
            if nbytes is not None:
                if _size(nbytes, what) > size:
                    raise Error(_capi.XFER_ERROR_OUT_OF_BOUNDS, what,
                                f"nbytes {nbytes} is more than the object's {size} bytes")
                size = int(nbytes)
        flags = _capi.XFER_REGISTER_READ_ONLY if read_only else _capi.XFER_REGISTER_DEFAULT
        # A NULL ptr or 0 bytes reaches the library, which says what is wrong.
        _check(lib().xfer_register(ctx.handle, ptr or None, size, flags), "xfer_register")
        super().__init__(ptr, ctx)
        self.context = ctx
        self.memory = memory
        self.ptr = ptr
        self.nbytes = size
        self.read_only = bool(read_only)

    def close(self):
        """Unregisters (xfer_unregister: waits for the context's queued work first); once."""
        h, self._h = self._h, None
        if h:
            _check(lib().xfer_unregister(self.context.handle, h), "xfer_unregister")

    unregister = close

    @property
    def registered(self):
        """True until unregistered (or the context is closed, which unregisters what is left)."""
        return bool(self._h)


def _shape(shape, dtype, nbytes, what):
    dtype = np.dtype(dtype)
    if shape is None:
        shape = (nbytes // dtype.itemsize,)
    elif isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(x) for x in shape)
    need = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
    if any(x < 0 for x in shape) or need > nbytes:
        raise Error(_capi.XFER_ERROR_OUT_OF_BOUNDS, what,
                    f"shape {shape} of {dtype} needs {need} bytes, the buffer has {nbytes}")
    return dtype, shape


class Buffer(_Handle):
    """One logical array with a host view and a device view (xfer_alloc / xfer_free)."""

    _release = "xfer_free"
    _call = "xfer_alloc"

    def __init__(self, ctx, nbytes, flags=0):
        h = _capi.xfer_buffer()
        _check(lib().xfer_alloc(ctx.handle, _size(nbytes, "xfer_alloc"), int(flags), byref(h)), "xfer_alloc")
        super().__init__(h.value, ctx)
        self.context = ctx
        self.nbytes = lib().xfer_buffer_size(self._h)

    @property
    def host_ptr(self):
        """Address of the host view (int)."""
        return lib().xfer_host_ptr(self.handle)

    @property
    def device_ptr(self):
        """Address of the device view (int): a CUDA device pointer on CUDA backends."""
        return lib().xfer_device_ptr(self.handle)

    def host_array(self, dtype=np.uint8, shape=None):
        """A NumPy array over the host view, no copy (C order; shape None: as many elements as fit).
        It keeps this Buffer object alive, but must not be used after close()."""
        dtype, shape = _shape(shape, dtype, self.nbytes, "Buffer.host_array")
        raw = (ctypes.c_char * self.nbytes).from_address(self.host_ptr)
        raw._xfer_owner = self
        count = int(np.prod(shape, dtype=np.int64))
        return np.frombuffer(raw, dtype=dtype, count=count).reshape(shape)

    def device_view(self, dtype=np.uint8, shape=None, stream=None):
        """The device view as a DeviceView (__cuda_array_interface__ on CUDA, DLPack everywhere)."""
        return DeviceView(self, dtype, shape, stream)

    def copy_async(self, direction, stream, offset=0, nbytes=None):
        """Queues a copy of [offset, offset+nbytes) between the views (xfer_copy_async)."""
        nbytes = self.nbytes - offset if nbytes is None else nbytes
        _check(lib().xfer_copy_async(self.handle, int(direction), _size(offset, "xfer_copy_async"),
                                     _size(nbytes, "xfer_copy_async"), stream.handle), "xfer_copy_async")

    def copy(self, direction, offset=0, nbytes=None):
        """Copies and waits, on the context's internal stream (xfer_copy)."""
        nbytes = self.nbytes - offset if nbytes is None else nbytes
        _check(lib().xfer_copy(self.handle, int(direction), _size(offset, "xfer_copy"), _size(nbytes, "xfer_copy")),
               "xfer_copy")

    def to_device(self, stream=None):
        """The whole buffer host -> device: queued on stream, or xfer_copy when stream is None."""
        if stream is None:
            self.copy(_capi.XFER_TO_DEVICE)
        else:
            self.copy_async(_capi.XFER_TO_DEVICE, stream)

    def to_host(self, stream=None):
        """The whole buffer device -> host: queued on stream, or xfer_copy when stream is None."""
        if stream is None:
            self.copy(_capi.XFER_TO_HOST)
        else:
            self.copy_async(_capi.XFER_TO_HOST, stream)


class DeviceView:
    """A typed view of a buffer's device memory for other array libraries, no copy.

    - ``__cuda_array_interface__`` (version 3; CUDA backends only), with ``stream`` set to the
      native stream given here, so a consumer orders its work after the queued copies.
    - ``__dlpack__`` / ``__dlpack_device__``: kDLCUDA (kDLCUDAManaged on managed) on CUDA
      backends, kDLCPU on the host backend (whose device view is host memory). ``__dlpack__``
      synchronises the view's stream first, so the data is ready on any consumer stream.
    """

    def __init__(self, buffer, dtype=np.uint8, shape=None, stream=None):
        self.buffer = buffer
        self.stream = stream
        self.dtype, self.shape = _shape(shape, dtype, buffer.nbytes, "Buffer.device_view")
        self.ptr = buffer.device_ptr
        self._kind = buffer.context.device_kind
        self._managed = bool(buffer.context.caps & Caps.MIGRATES)

    @property
    def __cuda_array_interface__(self):
        if self._kind != DeviceKind.CUDA:
            raise AttributeError("__cuda_array_interface__: the device view is not CUDA memory on backend "
                                 f"'{self.buffer.context.backend}'")
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": None, "stream": self.stream.native if self.stream is not None else None}

    def __dlpack_device__(self):
        if self._kind != DeviceKind.CUDA:
            return (_dlpack.kDLCPU, 0)
        return (_dlpack.kDLCUDAManaged if self._managed else _dlpack.kDLCUDA, self.buffer.context.device)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError("xfer DeviceView exports without a copy only (copy=True asked)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"xfer DeviceView lives on {self.__dlpack_device__()}, not {tuple(dl_device)}")
        if self.stream is not None and stream != -1:
            self.stream.synchronize()
        device_type, device_id = self.__dlpack_device__()
        return _dlpack.make_capsule(self.ptr, device_type, device_id, self.dtype, self.shape, self)


class Stream(_Handle):
    """An in-order queue of work (xfer_stream_create / xfer_stream_destroy)."""

    _release = "xfer_stream_destroy"
    _call = "xfer_stream_create"

    def __init__(self, ctx):
        h = _capi.xfer_stream()
        _check(lib().xfer_stream_create(ctx.handle, byref(h)), "xfer_stream_create")
        super().__init__(h.value, ctx)

    def synchronize(self):
        _check(lib().xfer_stream_synchronize(self.handle), "xfer_stream_synchronize")

    def query(self):
        """True when all queued work is done; never blocks."""
        return _ready(lib().xfer_stream_query(self.handle), "xfer_stream_query")

    def wait(self, event):
        """Later work on this stream waits for event (xfer_stream_wait_event)."""
        _check(lib().xfer_stream_wait_event(self.handle, event.handle), "xfer_stream_wait_event")

    def launch_host_func(self, fn):
        """Queues fn() after earlier work (xfer_stream_launch_host_func); fn must not call xfer.
        The callback is kept alive until the stream is closed."""
        cb = _capi.xfer_host_fn(lambda _: fn())
        self.__dict__.setdefault("_callbacks", []).append(cb)
        _check(lib().xfer_stream_launch_host_func(self.handle, cb, None), "xfer_stream_launch_host_func")

    @property
    def native(self):
        """The backend's stream as an int (a cudaStream_t on CUDA backends)."""
        n = lib().xfer_stream_native(self.handle)
        if not n:
            _check(_capi.XFER_ERROR_INVALID_HANDLE, "xfer_stream_native")
        return n


class Event(_Handle):
    """A marker in a stream (xfer_event_create / xfer_event_destroy)."""

    _release = "xfer_event_destroy"
    _call = "xfer_event_create"

    def __init__(self, ctx, flags=0):
        h = _capi.xfer_event()
        _check(lib().xfer_event_create(ctx.handle, int(flags), byref(h)), "xfer_event_create")
        super().__init__(h.value, ctx)

    def record(self, stream):
        _check(lib().xfer_event_record(self.handle, stream.handle), "xfer_event_record")

    def synchronize(self):
        _check(lib().xfer_event_synchronize(self.handle), "xfer_event_synchronize")

    def query(self):
        """True when the event has completed (or was never recorded); never blocks."""
        return _ready(lib().xfer_event_query(self.handle), "xfer_event_query")

    @staticmethod
    def elapsed_ms(start, end):
        """Milliseconds between two completed events (xfer_event_elapsed_ms)."""
        ms = c_float()
        _check(lib().xfer_event_elapsed_ms(start.handle, end.handle, byref(ms)), "xfer_event_elapsed_ms")
        return ms.value
