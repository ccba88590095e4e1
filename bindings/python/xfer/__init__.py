# SPDX-License-Identifier: Apache-2.0
"""xfer for Python: move data between host and GPU memory through xfer's run-time backends.

A ctypes binding of libxfer (no compiled extension). The raw C API, every function with its
argtypes/restype, is ``xfer._capi``; this module is the safe layer.

Arrays of any library, one call each (``xfer.copy`` waits, ``xfer.copy_async`` returns a
``Transfer`` at once and keeps both objects alive until the copy is done)::

    import numpy as np, torch, xfer
    a = np.random.rand(1 << 20).astype(np.float32)
    t = torch.empty(a.shape, dtype=torch.float32, device="cuda")
    xfer.copy(t, a)                        # NumPy -> PyTorch, on torch's current stream
    xfer.copy_async(a, t).wait()           # and back; copy_async returns at once
    d = xfer.to_device(a)                  # or into xfer's own memory: a DeviceView
    assert (xfer.to_host(d) == a).all()

Endpoints: NumPy arrays, any buffer-protocol object (bytes only as a source), objects with
``__cuda_array_interface__`` (v2/v3) or DLPack (CuPy, PyTorch, Numba, JAX), xfer ``Buffer``
(its device view) and ``DeviceView``. Both must be C-contiguous and of the same byte size; CUDA
memory must be of the context's device; read-only destinations are refused (TypeError /
ValueError before anything is queued). The context is ``ctx=``, the stream's, an xfer object's,
or ``xfer.default_context()``. The stream: ``stream=`` (xfer Stream, CuPy or PyTorch stream, an
int cudaStream_t), else the current stream of CuPy / PyTorch when an array is theirs, else the
context's ``default_stream``.

Buffers and streams: ``ctx.alloc(n)`` is a Buffer with a host view (``buffer.host_array(dtype,
shape)``, NumPy, no copy) and a device view (``buffer.device_view(dtype, shape, stream)``:
``__cuda_array_interface__`` v3 on CUDA backends and DLPack everywhere, so CuPy, PyTorch, Numba
and JAX use xfer's device memory without a copy)::

    with xfer.Context("host") as ctx, ctx.alloc(1 << 20) as buf, ctx.stream() as s:
        a = buf.host_array(np.float32)
        a[:] = np.random.rand(a.size)
        buf.to_device(s)
        buf.to_host(s)
        s.synchronize()

Failures of the library raise ``xfer.Error`` with ``.status`` (a ``Status``) and the library's
message. ``ctx.register(array)`` page-locks memory the program owns (a NumPy array, any buffer)
for fast copies and returns a ``Registration`` that unregisters at the end of a with-block;
``ctx.registration_stats()`` reports the counters. Which path each copy took: ``ctx.stats()``
(per path: copies, bytes, host time), ``ctx.set_copy_observer(fn)`` (one ``CopyRecord`` per path
of each copy call), ``ctx.slow_path = "refuse"`` (strict mode: a slow copy raises
``xfer.SlowPathError``, nothing queued). This machine's calibration, from which the CUDA
backends choose each copy's path: ``ctx.calibrate(force=False)`` (a ``Calibration``; the
``host`` backend has nothing to calibrate: ``xfer.Error`` with ``NOT_SUPPORTED``) and
``ctx.settings()`` (the values the context uses, each a ``Setting``: the backend's parameters,
then the values it derives, with their ``ParamSource``). Sharing a buffer with another process:
``ctx.alloc(n, xfer.AllocFlags.SHAREABLE).export()`` is an ``Export`` (the description and the
file descriptors of its memory, closed by ``close()`` or a with-block), ``export.send(sock)`` /
``xfer.Export.receive(sock)`` carry it over a Unix-domain socket, and ``ctx.import_buffer(export)``
is a Buffer over the same memory; ``ctx.set_memory_observer(fn)`` tells ``fn`` a ``MemoryEvent``
for every buffer and range the context makes and releases. Raw integer addresses go through
``ctx.memcpy_async`` (the expert path: nothing is checked or kept alive). The library is found
through XFER_LIBRARY (a path to libxfer.so) or the dynamic loader (libxfer.so.1); when it is not
found, the first call raises ``xfer.LibraryNotFoundError`` (an OSError) saying how to set them.
"""
import atexit
import collections
import ctypes
import enum
import sys
import threading
import traceback
import weakref
from ctypes import byref, c_float, c_int, c_size_t, c_void_p

import numpy as np

from . import _capi, _cuda, _dlpack
from ._capi import LibraryNotFoundError, lib

__all__ = ["Error", "SlowPathError", "LibraryNotFoundError", "Status", "Direction", "CopyKind", "DeviceKind",
           "ParamSource", "AllocFlags", "EventFlags", "Caps", "RegisterFlags", "CopyPath", "PathReason", "SlowPath",
           "CopyRecord", "MemoryEventKind", "MemoryEvent", "Calibration", "Setting", "Context", "Buffer", "Export", "Stream", "Event",
           "DeviceView", "Registration", "Transfer", "copy",
           "copy_async", "to_device", "to_host", "default_context", "version", "backends", "params", "status_string",
           "last_error", "path_name", "reason_name", "path_is_slow"]


def _members(select, strip=None, extra=(), skip=()):
    strip = strip or select
    out = {n[len(strip):]: v for n, v in vars(_capi).items() if n.startswith(select) and n not in skip}
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
# The *_COUNT members say how many values this xfer.h knows; they name no path or reason.
CopyPath = enum.IntEnum("CopyPath", _members("XFER_PATH_", skip=["XFER_PATH_COUNT"]))
CopyPath.__doc__ = "xfer_copy_path: HOST_MEMCPY, PINNED_DMA, STAGED, ... (path_name() gives the lower-case names)."
PathReason = enum.IntEnum("PathReason", _members("XFER_REASON_", skip=["XFER_REASON_COUNT"]))
SlowPath = enum.IntEnum("SlowPath", _members("XFER_SLOW_PATH_", skip=["XFER_SLOW_PATH_MIN_BYTES"]))
SlowPath.__doc__ = "xfer_slow_path: ALLOW, WARN, REFUSE (Context.slow_path takes and gives their lower-case names)."
MemoryEventKind = enum.IntEnum("MemoryEventKind", _members("XFER_MEMORY_"))
MemoryEventKind.__doc__ = "xfer_memory_event_kind: ALLOCATED, RELEASING, REGISTERED, UNREGISTERING."


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


class SlowPathError(Error):
    """XFER_ERROR_SLOW_PATH: the context's slow_path is "refuse" and the copy would have taken a
    slow path; the message names the path and why. Nothing was queued: the destination is as it
    was. An xfer.Error, so code that catches Error keeps working."""


# Statuses that raise a subclass of Error; every other failure raises Error itself.
_ERROR_CLASSES = {_capi.XFER_ERROR_SLOW_PATH: SlowPathError}


def _check(status, call):
    if status != _capi.XFER_SUCCESS:
        detail = last_error()
        if detail.startswith(call + ": "):
            detail = detail[len(call) + 2:]
        raise _ERROR_CLASSES.get(status, Error)(status, call, detail)


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


def path_name(path):
    """"host_memcpy", "pinned_dma", "staged", ... for a CopyPath (xfer_copy_path_name): the names
    the copy log and xfer-tool print, and the keys of Context.stats()["paths"]; "unknown" for a
    value that is no path."""
    return _text(lib().xfer_copy_path_name(int(path)))


def reason_name(reason):
    """"memory", "below_crossover", "cache_full", ... for a PathReason (xfer_path_reason_name);
    "unknown" for a value that is no reason."""
    return _text(lib().xfer_path_reason_name(int(reason)))


def path_is_slow(path, reason, nbytes):
    """True when nbytes (one piece) taking path for reason counts as slow (xfer_path_is_slow):
    the driver's pageable copy and a new registration, from XFER_SLOW_PATH_MIN_BYTES (1 MiB) on,
    unless the reason says the path is the fastest one measured for the copy (BELOW_CROSSOVER,
    ONE_OFF, REUSE, MEASURED_FASTEST)."""
    nbytes = int(nbytes)
    if not 0 <= nbytes < 1 << 64:
        raise Error(_capi.XFER_ERROR_INVALID_SIZE, "xfer_path_is_slow", f"{nbytes} does not fit in uint64_t")
    return bool(lib().xfer_path_is_slow(int(path), int(reason), nbytes))


def _enum_or_int(kind, value):
    try:
        return kind(value)
    except ValueError:  # a library newer than this binding: its value as it is
        return value


CopyRecord = collections.namedtuple("CopyRecord", [
    "function", "path", "path_name", "reason", "reason_name", "kind", "slow", "copies", "bytes", "host_ns",
    "call_bytes", "stream"])
CopyRecord.__doc__ = """What a copy observer receives, once per path a copy call used (xfer_copy_record):
function (the C entry point, e.g. "xfer_copy_async"), path (CopyPath) and path_name ("host_memcpy"),
reason (PathReason) and reason_name ("memory"), kind (CopyKind: the direction), slow (bool), copies
and bytes (of the call on this path), host_ns (this path's share of the call's host time),
call_bytes (the whole call's bytes), stream (the C handle of the stream, as Stream.handle; None
for a copy on the context's internal stream, Buffer.copy). A plain tuple: it stays valid after
the observer returns."""

MemoryEvent = collections.namedtuple("MemoryEvent", [
    "event", "buffer", "host_ptr", "device_ptr", "bytes", "imported"])
MemoryEvent.__doc__ = """What a memory observer receives (xfer_memory_event): event (MemoryEventKind: ALLOCATED after a
buffer was allocated or imported, RELEASING before one is freed, its memory still there,
REGISTERED after a range was registered, UNREGISTERING before it is unregistered), buffer (the C
handle, as Buffer.handle; None for a range), host_ptr (the host view or the range, an int),
device_ptr (the device view; None for a range), bytes, imported (True for a buffer made by
Context.import_buffer). A plain tuple: it stays valid after the observer returns."""

Calibration = collections.namedtuple("Calibration", ["measured", "seconds", "file", "json"])
Calibration.__doc__ = """What Context.calibrate did (xfer_calibration_info): measured (True: measured by this process:
this call, or the first open of a context of the GPU; False: one kept by an earlier process held), seconds (how long the measuring took, of the
kept one when read), file (where it is kept; "" with calibration = off), json (the calibration as
JSON: its key, the curves per way and direction, the registration costs, the fill rate). A plain
tuple of Python values, copied out of the library at once."""

Setting = collections.namedtuple("Setting", [
    "section", "name", "env", "type", "value", "default", "help", "source", "derived"])
Setting.__doc__ = """One value a context uses (xfer_context_get_setting): section (the backend's name), name (the
configuration key), env (the environment variable that sets it), type ("int", "size", "bool",
"string"), value (the value in use, as text; sizes in bytes), default (the declared default),
help, source (ParamSource: DEFAULT, FILE, ENV, or CALIBRATION for a value derived from this
machine's calibration), derived (False: a parameter of the backend; True: a value the backend
derives, from the calibration or its declared default, unless the user set it). A plain tuple:
its strings are copied out of the library at once."""

_UnraisableArgs = collections.namedtuple("UnraisableHookArgs",
                                         ["exc_type", "exc_value", "exc_traceback", "err_msg", "object"])


def _report_unraisable(exc, err_msg, obj):
    """Hands exc to sys.unraisablehook, as Python does with exceptions that no caller can catch
    (finalisers, ctypes callbacks). The default hook accepts only the interpreter's own argument
    type, so for it the same report is printed here."""
    hook = sys.unraisablehook
    args = _UnraisableArgs(type(exc), exc, exc.__traceback__, err_msg, obj)
    if hook is not sys.__unraisablehook__:
        try:
            hook(args)
            return
        except Exception:  # a broken hook: fall back to what the default one prints
            pass
    try:
        print(f"{err_msg}: {obj!r}", file=sys.stderr)
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    except Exception:  # no stderr (a closed stream at exit): nothing left to report to
        pass


class _Handle:
    """Owns one C handle; close() (or the with-block, or garbage collection) releases it once."""

    _release = None
    _call = ""
    _h = None

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


# Foreign streams wrapped per context, least recently used evicted beyond this many (the wrapper
# keeps the framework's stream object, and so the native stream, alive while it is cached).
_WRAPPED_STREAMS_MAX = 64
_EVENT_POOL_MAX = 64
# The wrapper caches live here, not in their Context: a context that holds wrappers stays
# reachable until closed (at the latest at exit), so the garbage collector never finalises it
# together with a framework stream object whose finaliser could destroy the native stream
# before xfer_close has synchronised it.
_wrapped_streams = {}  # id(Context) -> OrderedDict(normalised cudaStream_t -> Stream)
_open_contexts = weakref.WeakSet()


def _close_open_contexts():
    # At exit every context still open is closed while the frameworks are alive: xfer_close
    # waits for the copies queued on their streams.
    for ctx in list(_open_contexts):
        try:
            ctx.close()
        except Exception:  # at exit nothing can be reported to the program any more
            pass


atexit.register(_close_open_contexts)


def _native_stream(stream):
    """(cudaStream_t as an int, owner object or None) of a stream of any library: an int
    (0: the legacy default stream), an object with __cuda_stream__() (CUDA Python, cuda.core),
    a PyTorch stream (.cuda_stream), a CuPy stream (.ptr), a Numba stream (int(stream)).
    The owner is the object itself, which keeps a framework's stream alive while xfer holds it.
    Raises TypeError for anything else."""
    if isinstance(stream, int) and not isinstance(stream, bool):
        return int(stream), None
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        value = proto() if callable(proto) else proto
        return int(value[1]), stream
    for attr in ("cuda_stream", "ptr"):
        value = getattr(stream, attr, None)
        if isinstance(value, int):
            return value, stream
    try:
        return int(stream), stream
    except (TypeError, ValueError):
        raise TypeError(f"stream: {type(stream).__name__} is not a stream: pass an xfer.Stream, a CuPy or "
                        "PyTorch stream, an object with __cuda_stream__, or an int cudaStream_t") from None


class _MemoryObserver:
    """What the C memory observer reaches: the program's callable and its latest exception. It
    holds no reference to its Context, so that the callback keeps no context alive."""

    __slots__ = ("fn", "error")

    def __init__(self):
        self.fn = None
        self.error = None

    def trampoline(self):
        def trampoline(event, _user_data):
            fn = self.fn
            if fn is None:  # removed while this call was on its way
                return
            try:
                e = event.contents
                fn(MemoryEvent(event=_enum_or_int(MemoryEventKind, e.event), buffer=e.buffer or None,
                               host_ptr=e.host_ptr, device_ptr=e.device_ptr, bytes=e.bytes,
                               imported=bool(e.imported)))
            except BaseException as exc:  # nothing may unwind into the C library
                self.error = exc
                _report_unraisable(exc, "Exception ignored in xfer memory observer", fn)

        return trampoline


class Context(_Handle):
    """One backend bound to one device (xfer_open). backend None / device -1: from XFER_BACKEND,
    XFER_DEVICE or the XFER_CONFIG file (best available backend, device 0, when neither says).
    Attributes: backend (name), device (index), device_kind (DeviceKind), caps (Caps).
    Thread-safe: its methods may be called from several threads; close() must not race them."""

    _release = "xfer_close"
    _call = "xfer_open"

    def __init__(self, backend=None, device=-1):
        self._children = weakref.WeakSet()
        self._lock = threading.RLock()
        self._default_stream = None
        self._events = []  # free events for copies (XFER_EVENT_DISABLE_TIMING)
        self._observer = None  # the program's callable
        self._observer_cb = None  # the C function pointer over it: lives as long as this object
        self._observer_error = None
        # The memory observer lives in a slot of its own, which the C callback holds: xfer_close
        # tells it the releases of the buffers it frees, also when close() runs from this
        # object's finaliser, after weak references to it are gone.
        self._memory = _MemoryObserver()
        self._memory_cb = None  # the C function pointer over the slot: lives as long as this object
        h = _capi.xfer_context()
        _check(lib().xfer_open(backend.encode() if backend else None, int(device), byref(h)), "xfer_open")
        super().__init__(h.value, None)
        info = _capi.xfer_context_info()
        _check(lib().xfer_context_get_info(self.handle, byref(info)), "xfer_context_get_info")
        self.backend = _text(info.backend)
        self.device = info.device
        self.device_kind = DeviceKind(info.device_kind)
        self.caps = Caps(info.caps)
        _open_contexts.add(self)

    @property
    def _wrapped(self):
        w = _wrapped_streams.get(id(self))
        if w is None:
            w = _wrapped_streams.setdefault(id(self), collections.OrderedDict())
        return w

    def __repr__(self):
        state = "" if self._h else ", closed"
        return f"<xfer.Context backend={self.backend!r} device={self.device}{state}>"

    def close(self):
        """Synchronises and frees everything the context owns, then closes it (xfer_close):
        streams (wrapped ones too: waits for them, never destroys the native stream), buffers,
        events. What pending copies kept alive is released after that. Once; later calls do nothing."""
        if not self._h:
            return
        with self._lock:
            children = list(self._children)
            for child in children:
                child._forget()
            self._default_stream = None
            wrapped = list(_wrapped_streams.pop(id(self), {}).values())
            self._events = []
            if self._observer_cb is not None:  # nothing the closing does reaches the copy observer
                lib().xfer_set_copy_observer(self._h, None, None)
                self._observer = None
        # The memory observer stays: xfer_close tells it the release of every buffer it frees.
        try:
            super().close()
        finally:
            self._memory.fn = None  # the C library calls it no more
            # Only now is the queued work done: what it reads and writes may go.
            for child in children:
                if isinstance(child, Stream):
                    child._release_all()
            del wrapped

    def device_info(self):
        """xfer_device_info as a dict."""
        info = _capi.xfer_device_info()
        _check(lib().xfer_device_get_info(self.handle, byref(info)), "xfer_device_get_info")
        return {name: (_text(getattr(info, name)) if isinstance(getattr(info, name), bytes) else getattr(info, name))
                for name, _ in info._fields_}

    def calibrate(self, force=False):
        """Calibrates the context's device (xfer_calibrate) and returns a Calibration: reads the
        calibration kept for this GPU if it still holds, else (or with force=True,
        XFER_CALIBRATE_FORCE) measures now (about a second; the device should be otherwise idle)
        and keeps it for every later context of this GPU. This context keeps the derived values
        it opened with (settings()); contexts opened afterwards derive theirs from the new
        calibration. Raises xfer.Error: NOT_SUPPORTED where the backend has nothing to calibrate
        (host), OUT_OF_MEMORY (no room for the measuring buffers), BACKEND (a CUDA call failed or
        the file could not be written; the message names which). Thread-safe."""
        info = _capi.xfer_calibration_info()
        info.struct_size = ctypes.sizeof(info)
        flags = _capi.XFER_CALIBRATE_FORCE if force else 0
        _check(lib().xfer_calibrate(self.handle, flags, byref(info)), "xfer_calibrate")
        return Calibration(measured=bool(info.measured), seconds=info.seconds, file=_text(info.file),
                           json=_text(info.json))

    def settings(self):
        """The values this context uses (xfer_context_setting_count / xfer_context_get_setting), as
        a list of Setting: its backend's parameters (derived False, as xfer.params() lists them for
        the backend's section), then the values the backend derives (derived True: crossovers,
        chunk and slot sizes, ... from this machine's calibration, source CALIBRATION, or their
        declared defaults), each with where its value came from. Thread-safe."""
        count = c_int()
        _check(lib().xfer_context_setting_count(self.handle, byref(count)), "xfer_context_setting_count")
        out = []
        for i in range(count.value):
            p = _capi.xfer_param_info()
            derived = c_int()
            _check(lib().xfer_context_get_setting(self.handle, i, byref(p), byref(derived)),
                   "xfer_context_get_setting")
            out.append(Setting(section=_text(p.section), name=_text(p.name), env=_text(p.env), type=_text(p.type),
                               value=_text(p.value), default=_text(p.default_value), help=_text(p.help),
                               source=_enum_or_int(ParamSource, p.source), derived=bool(derived.value)))
        return out

    def alloc(self, nbytes, flags=0):
        """A new Buffer of nbytes bytes (xfer_alloc); flags: AllocFlags."""
        return Buffer(self, nbytes, flags)

    def stream(self):
        """A new Stream (xfer_stream_create)."""
        return Stream(self)

    def import_buffer(self, export):
        """A Buffer of this context over the memory an Export describes (xfer_buffer_import): an
        export of another process (Export.receive) or of this one (Buffer.export), made by a
        context of the same backend. Both buffers see each other's bytes; the import keeps the
        memory after the exporter freed its buffer, and is freed like any Buffer. The export
        keeps its descriptors (close it when done: the buffer holds its own). Raises xfer.Error
        (INVALID_ARGUMENT for an export that is closed, not an xfer export, of another backend or
        corrupted: the message says which; NOT_SUPPORTED where the backend cannot import),
        TypeError for what is not an Export. Thread-safe."""
        if not isinstance(export, Export):
            raise TypeError(f"import_buffer: {type(export).__name__} is not an xfer.Export (Buffer.export() or "
                            "Export.receive() make one)")
        return export._import(self)

    def event(self, flags=0):
        """A new Event (xfer_event_create); flags: EventFlags."""
        return Event(self, flags)

    @property
    def default_stream(self):
        """The context's own Stream for copies that name no stream and touch no CuPy / PyTorch
        array (created on first use, closed with the context). Thread-safe."""
        s = self._default_stream
        if s is None or not s._h:
            with self._lock:
                s = self._default_stream
                if s is None or not s._h:
                    s = self._default_stream = Stream(self)
        return s

    def wrap_stream(self, stream):
        """The xfer Stream of this context over a stream the application owns (xfer_stream_wrap),
        so that xfer's copies queue on it in order with the application's kernels.

        stream: a CuPy or PyTorch stream, an object with __cuda_stream__, or an int cudaStream_t
        (0 or 1: the legacy default stream, 2: the per-thread default stream). One wrapper per
        native stream and context, cached: the same Stream object comes back each time. The cache
        keeps a framework stream object alive while it holds it (at most 64 per context, least
        recently used dropped first: dropping waits for the stream's queued work). An int stream
        has no owner to keep: keep it alive until the context closes, or call forget_stream before
        destroying it. Closing the wrapper never destroys the native stream.
        Passing the native stream of one of this context's own streams returns that Stream.
        Raises xfer.Error (XFER_ERROR_NOT_SUPPORTED on the host backend, whose streams are worker
        threads; XFER_ERROR_BACKEND when the stream is not usable on the context's device),
        TypeError for what is not a stream. Thread-safe."""
        native, owner = _native_stream(stream)
        return self._wrap(native, owner)

    def forget_stream(self, stream):
        """Drops the cached wrapper of a native stream (see wrap_stream): waits for the work queued
        on it, then destroys the wrapper (never the native stream). Call it before destroying an
        int stream that xfer wrapped. Nothing happens for a stream that is not wrapped. Thread-safe."""
        native, _ = _native_stream(stream)
        with self._lock:
            s = self._wrapped.pop(1 if native == 0 else native, None)
        if s is not None:
            s.close()

    def _wrap(self, native, owner):
        key = 1 if native == 0 else native  # NULL and cudaStreamLegacy are the same stream
        evicted = []
        with self._lock:
            s = self._wrapped.get(key)
            if s is not None and s._h:
                self._wrapped.move_to_end(key)
                return s
            for child in list(self._children):
                if isinstance(child, Stream) and child._h and not child.wrapped and child._native == key:
                    return child
            s = Stream._wrap(self, native, owner)
            self._wrapped[key] = s
            while len(self._wrapped) > _WRAPPED_STREAMS_MAX:
                evicted.append(self._wrapped.popitem(last=False)[1])
        for old in evicted:
            try:
                old.close()
            except Error:  # the native stream failed; its wrapper is gone all the same
                pass
        return s

    def _take_event(self):
        with self._lock:
            if self._events:
                return self._events.pop()
        return Event(self, _capi.XFER_EVENT_DISABLE_TIMING)

    def _give_event(self, event):
        if event._h and self._h:
            with self._lock:
                if len(self._events) < _EVENT_POOL_MAX and self._h:
                    self._events.append(event)
                    return
        event.close()

    def copy(self, dst, src, stream=None):
        """xfer.copy(dst, src, stream, ctx=self)."""
        return _copy.copy(dst, src, stream=stream, ctx=self)

    def copy_async(self, dst, src, stream=None):
        """xfer.copy_async(dst, src, stream, ctx=self)."""
        return _copy.copy_async(dst, src, stream=stream, ctx=self)

    def memcpy_async(self, dst, src, nbytes, kind, stream):
        """Queues a raw copy of nbytes from address src to address dst (ints) on stream
        (xfer_memcpy_async); kind: CopyKind.

        The expert path: nothing is checked but what the library checks (overlap, pointer kinds
        on CUDA backends), nothing is kept alive, and a wrong size reads or writes past an
        array's end. Prefer xfer.copy / xfer.copy_async for arrays."""
        _check(lib().xfer_memcpy_async(self.handle, int(dst), int(src), _size(nbytes, "xfer_memcpy_async"),
                                       int(kind), stream.handle), "xfer_memcpy_async")

    def memcpy_batch_async(self, dsts, srcs, sizes, kind, stream):
        """Queues len(dsts) raw copies as one batch (xfer_memcpy_batch_async); the expert path,
        as memcpy_async."""
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

    # ---- which path each copy took

    def stats(self):
        """What the context's copies did since it was opened or reset_stats() (xfer_context_get_stats),
        as a dict: version, path_count, calls, slow_copies, refused_calls, registrations,
        registered_bytes, registration_ns, unregistrations, unregistered_bytes, unregistration_ns,
        and "paths": {path_name: {"copies", "bytes", "host_ns"}} for the paths that were taken
        (copies or bytes not 0) only, so an absent path took nothing: use
        stats()["paths"].get("staged") or look the name up with "in". Times in nanoseconds."""
        stats = _capi.xfer_context_stats()
        stats.struct_size = ctypes.sizeof(stats)
        _check(lib().xfer_context_get_stats(self.handle, byref(stats)), "xfer_context_get_stats")
        out = {name: getattr(stats, name) for name, _ in stats._fields_ if name not in ("struct_size", "paths")}
        paths = {}
        for i in range(min(stats.path_count, _capi.XFER_PATH_COUNT)):
            p = stats.paths[i]
            if p.copies or p.bytes:
                paths[path_name(i)] = {"copies": p.copies, "bytes": p.bytes, "host_ns": p.host_ns}
        out["paths"] = paths
        return out

    def reset_stats(self):
        """Sets every counter of stats() to 0 (xfer_context_reset_stats)."""
        _check(lib().xfer_context_reset_stats(self.handle), "xfer_context_reset_stats")

    def set_copy_observer(self, fn):
        """Calls fn(record) with a CopyRecord for each path of each copy call of this context, on
        the thread that made the call, inside it (xfer_set_copy_observer); replaces the previous
        observer (and the XFER_LOG=copies log). None removes it. fn may copy and read stats(); it
        must not close the copy's context, buffer or stream.

        An exception fn raises does not reach the library nor the copy call (the copy went ahead):
        it goes to sys.unraisablehook ("Exception ignored in xfer copy observer", as Python reports
        exceptions of finalisers), and take_observer_error() returns the latest one. The context
        keeps fn and the C callback over it until it is closed."""
        if fn is not None and not callable(fn):
            raise TypeError(f"set_copy_observer: {type(fn).__name__} is not callable (pass a function or None)")
        with self._lock:
            h = self.handle
            if fn is None:
                _check(lib().xfer_set_copy_observer(h, None, None), "xfer_set_copy_observer")
                self._observer = None
                return
            if self._observer_cb is None:
                self._observer_cb = _capi.xfer_copy_observer_fn(self._make_trampoline())
            self._observer = fn
            _check(lib().xfer_set_copy_observer(h, self._observer_cb, None), "xfer_set_copy_observer")

    def take_observer_error(self):
        """The latest exception the copy observer raised since the last call, or None; clears it."""
        with self._lock:
            e, self._observer_error = self._observer_error, None
        return e

    def _make_trampoline(self):
        # A weak reference: the callback must not keep its context alive (the context keeps it).
        ref = weakref.ref(self)

        def trampoline(record, _user_data):
            ctx = ref()
            fn = ctx._observer if ctx is not None else None
            if fn is None:  # removed while this call was on its way
                return
            try:
                r = record.contents
                fn(CopyRecord(function=_text(r.function), path=_enum_or_int(CopyPath, r.path),
                              path_name=path_name(r.path), reason=_enum_or_int(PathReason, r.reason),
                              reason_name=reason_name(r.reason), kind=_enum_or_int(CopyKind, r.kind),
                              slow=bool(r.slow), copies=r.copies, bytes=r.bytes, host_ns=r.host_ns,
                              call_bytes=r.call_bytes, stream=r.stream or None))
            except BaseException as e:  # nothing may unwind into the C library
                ctx._observer_error = e
                _report_unraisable(e, "Exception ignored in xfer copy observer", fn)

        return trampoline

    def set_memory_observer(self, fn):
        """Calls fn(event) with a MemoryEvent for every buffer this context allocates, imports or
        frees and every range it registers or unregisters, on the thread that does it, inside the
        call (xfer_set_memory_observer): so that a library with a registration cache of its own
        (an MPI, UCX, NCCL) registers xfer's memory once and drops it before xfer releases it.
        Replaces the previous observer; None removes it. A release is told while the memory is
        still there, close() included (it frees the context's buffers). fn may copy and query; it
        must not free, close or unregister anything of this context.

        An exception fn raises does not reach the library nor the call (the allocation or
        release went ahead): it goes to sys.unraisablehook ("Exception ignored in xfer memory
        observer"), and take_memory_observer_error() returns the latest one. The context keeps fn
        and the C callback over it until it is closed."""
        if fn is not None and not callable(fn):
            raise TypeError(f"set_memory_observer: {type(fn).__name__} is not callable (pass a function or None)")
        with self._lock:
            h = self.handle
            if fn is None:
                _check(lib().xfer_set_memory_observer(h, None, None), "xfer_set_memory_observer")
                self._memory.fn = None
                return
            if self._memory_cb is None:
                self._memory_cb = _capi.xfer_memory_observer_fn(self._memory.trampoline())
            previous, self._memory.fn = self._memory.fn, fn
            try:
                _check(lib().xfer_set_memory_observer(h, self._memory_cb, None), "xfer_set_memory_observer")
            except Error:
                self._memory.fn = previous
                raise

    def take_memory_observer_error(self):
        """The latest exception the memory observer raised since the last call, or None; clears it."""
        with self._lock:
            e, self._memory.error = self._memory.error, None
        return e

    _SLOW_PATH_NAMES = {SlowPath.ALLOW: "allow", SlowPath.WARN: "warn", SlowPath.REFUSE: "refuse"}

    @property
    def slow_path(self):
        """The slow-path policy, "allow", "warn" or "refuse" (xfer_context_get_slow_path; at open:
        the config key slow_path / XFER_SLOW_PATH, default "allow"). Set it to one of those names
        or a SlowPath (xfer_context_set_slow_path): "warn" reports slow copies (to the observer
        with record.slow, else the copy log on stderr / XFER_LOG_FILE), "refuse" makes a copy that
        would take a slow path raise SlowPathError with nothing queued. Another value raises
        xfer.Error (INVALID_ARGUMENT) and changes nothing."""
        policy = _capi.xfer_slow_path()
        _check(lib().xfer_context_get_slow_path(self.handle, byref(policy)), "xfer_context_get_slow_path")
        return self._SLOW_PATH_NAMES.get(policy.value, str(policy.value))

    @slow_path.setter
    def slow_path(self, policy):
        if isinstance(policy, str):
            by_name = {v: k for k, v in self._SLOW_PATH_NAMES.items()}
            if policy.lower() not in by_name:
                raise Error(_capi.XFER_ERROR_INVALID_ARGUMENT, "xfer_context_set_slow_path",
                            f"{policy!r} is not a slow-path policy (allow, warn or refuse)")
            policy = by_name[policy.lower()]
        elif isinstance(policy, bool) or not isinstance(policy, int):
            raise TypeError(f"slow_path: {type(policy).__name__} is not a policy (\"allow\", \"warn\", \"refuse\" "
                            "or an xfer.SlowPath)")
        elif not -(1 << 31) <= policy < 1 << 31:  # ctypes would wrap it into a valid value
            raise Error(_capi.XFER_ERROR_INVALID_ARGUMENT, "xfer_context_set_slow_path",
                        f"{policy} is not an xfer_slow_path")
        _check(lib().xfer_context_set_slow_path(self.handle, int(policy)), "xfer_context_set_slow_path")


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
    """One logical array with a host view and a device view (xfer_alloc / xfer_free), or the
    import of another buffer's memory (Context.import_buffer). Attributes: context, nbytes,
    imported (True for an import)."""

    _release = "xfer_free"
    _call = "xfer_alloc"

    def __init__(self, ctx, nbytes, flags=0):
        h = _capi.xfer_buffer()
        _check(lib().xfer_alloc(ctx.handle, _size(nbytes, "xfer_alloc"), int(flags), byref(h)), "xfer_alloc")
        self._own(ctx, h.value, imported=False)

    def _own(self, ctx, h, imported):
        super().__init__(h, ctx)
        self.context = ctx
        self.nbytes = lib().xfer_buffer_size(self._h)
        self.imported = imported  # made by Context.import_buffer

    @classmethod
    def _imported(cls, ctx, h):
        self = cls.__new__(cls)
        self._own(ctx, h, imported=True)
        return self

    def export(self):
        """Describes this buffer for another process, or another context of this one
        (xfer_buffer_export): an Export that owns new descriptors of its memory (close it, or use
        a with-block). The buffer stays as it is. Raises xfer.Error: INVALID_STATE (allocated
        without AllocFlags.SHAREABLE), INVALID_HANDLE (closed), NOT_SUPPORTED (the backend cannot
        export)."""
        e = Export()
        _check(lib().xfer_buffer_export(self.handle, byref(e._e)), "xfer_buffer_export")
        return e

    def share_info(self):
        """What this buffer's memory is, for the libraries it is handed to
        (xfer_buffer_get_share_info): a dict with handle_types (XFER_SHARE_HANDLE_* bits; 0 for a
        buffer that cannot be shared), rdma_capable, granularity and device_view_bytes (a CUDA
        virtual-memory device view; 0 otherwise), and per view ("host", "device") the MPI memory
        kind ("system", "cuda:host", "cuda:device", "cuda:managed") and the DLPack device
        (device_type, device_id). Raises xfer.Error: INVALID_HANDLE (closed)."""
        i = _capi.xfer_share_info()
        i.struct_size = ctypes.sizeof(i)
        _check(lib().xfer_buffer_get_share_info(self.handle, byref(i)), "xfer_buffer_get_share_info")
        return {
            "handle_types": i.handle_types,
            "rdma_capable": bool(i.rdma_capable),
            "granularity": i.granularity,
            "device_view_bytes": i.device_view_bytes,
            "host_memory_kind": i.host_memory_kind.decode(),
            "device_memory_kind": i.device_memory_kind.decode(),
            "host_dlpack_device": (i.host_dlpack_device_type, i.host_dlpack_device_id),
            "device_dlpack_device": (i.device_dlpack_device_type, i.device_dlpack_device_id),
        }

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


def _socket_fd(sock, call):
    """The descriptor of a socket object (its fileno()) or of an int."""
    if isinstance(sock, int) and not isinstance(sock, bool):
        fd = int(sock)
    elif callable(getattr(sock, "fileno", None)):
        fd = sock.fileno()
    else:
        raise TypeError(f"{call}: {type(sock).__name__} is not a socket (pass a socket.socket or an int descriptor)")
    if not -(1 << 31) <= fd < 1 << 31:  # ctypes would wrap it into another descriptor
        raise Error(_capi.XFER_ERROR_INVALID_ARGUMENT, call, f"socket {fd} is not a descriptor")
    return fd


class Export:
    """A buffer's export (xfer_export): the description of its memory and the file descriptors
    it lives in, which this object owns. Made by Buffer.export() or Export.receive(); read by
    Context.import_buffer() and send(), which leave the descriptors here. close(), the end of a
    with-block or garbage collection closes them (xfer_export_close), once. It cannot be copied
    or pickled (two owners would close the descriptors twice): send it to another process with
    send(). Whoever holds the descriptors can map the memory: send them only to processes that
    may. Attributes: fd_count, fds (owned here: do not close them), blob (bytes), closed.
    Thread-safe: close() waits for a send or import in progress on another thread."""

    def __init__(self):
        self._lock = threading.Lock()
        self._e = _capi.xfer_export()
        self._e.struct_size = ctypes.sizeof(self._e)
        for i in range(_capi.XFER_EXPORT_MAX_FDS):
            self._e.fds[i] = -1

    @classmethod
    def receive(cls, sock):
        """Receives an export sent by Export.send (xfer_export_receive) from a connected Unix-domain
        socket, a socket object or an int descriptor, blocking until one arrives (a socket with a
        timeout is non-blocking underneath: the call then fails with BACKEND when nothing is there
        yet). The returned Export owns the new descriptors. Raises xfer.Error: INVALID_ARGUMENT (a
        message that is not an export), BACKEND (recvmsg failed, or the peer closed the socket
        first); no descriptor is left open then. TypeError for what is not a socket."""
        fd = _socket_fd(sock, "xfer_export_receive")
        e = cls()
        _check(lib().xfer_export_receive(fd, byref(e._e)), "xfer_export_receive")
        return e

    def send(self, sock):
        """Sends the export over a connected Unix-domain socket (a socket object or an int
        descriptor) as one message, the descriptors as SCM_RIGHTS (xfer_export_send); this object
        keeps its own. Raises xfer.Error: INVALID_ARGUMENT (closed), BACKEND (sendmsg failed, the
        peer went away). TypeError for what is not a socket."""
        fd = _socket_fd(sock, "xfer_export_send")
        with self._lock:
            self._open("xfer_export_send")
            _check(lib().xfer_export_send(fd, byref(self._e)), "xfer_export_send")

    def _import(self, ctx):
        with self._lock:
            self._open("xfer_buffer_import")
            h = _capi.xfer_buffer()
            _check(lib().xfer_buffer_import(ctx.handle, byref(self._e), byref(h)), "xfer_buffer_import")
            return Buffer._imported(ctx, h.value)

    def _open(self, call):
        if self._e.blob_bytes == 0:
            raise Error(_capi.XFER_ERROR_INVALID_ARGUMENT, call, "this Export is closed")

    def close(self):
        """Closes the descriptors (xfer_export_close); once, later calls do nothing."""
        with self._lock:
            lib().xfer_export_close(byref(self._e))
            self._e.blob_bytes = 0

    @property
    def closed(self):
        """True once closed (or never filled: an export that failed)."""
        return self._e.blob_bytes == 0

    @property
    def fd_count(self):
        return self._e.fd_count

    @property
    def fds(self):
        """The descriptors, a tuple of ints; they stay owned by this Export."""
        return tuple(self._e.fds[i] for i in range(min(self._e.fd_count, _capi.XFER_EXPORT_MAX_FDS)))

    @property
    def blob(self):
        """The description (opaque bytes, checked at import)."""
        return bytes(self._e.blob[:min(self._e.blob_bytes, _capi.XFER_EXPORT_BLOB_BYTES)])

    def __repr__(self):
        state = "closed" if self.closed else f"fds={list(self.fds)}"
        return f"<xfer.Export {state}>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # nothing can report from a finalizer
            pass

    def _not_copied(self, *args):
        raise TypeError("an xfer.Export owns its descriptors and cannot be copied or pickled: pass it to another "
                        "process with Export.send over a Unix-domain socket")

    __copy__ = __deepcopy__ = __reduce__ = __reduce_ex__ = _not_copied


class DeviceView:
    """A typed view of a buffer's device memory for other array libraries, no copy.
    Attributes: buffer, dtype, shape, ptr (int), nbytes, stream (an xfer Stream or None).

    - ``__cuda_array_interface__`` (version 3; CUDA backends only), with ``stream`` set to the
      native stream given here, so a consumer orders its work after the queued copies.
    - ``__dlpack__`` / ``__dlpack_device__``: kDLCUDA with the context's device on every CUDA
      backend, managed memory included (it is valid device memory, and PyTorch, JAX and others
      take no kDLCUDAManaged), kDLCPU on the host backend (whose device view is host memory).
      ``__dlpack__(dl_device=...)`` also exports managed memory as kDLCUDAManaged or kDLCPU, and
      zero-copy memory as kDLCPU / kDLCUDAHost (its host view), where asked; a DLPack 1.0 capsule
      ("dltensor_versioned") for max_version >= (1, 0), else "dltensor". With a stream, the
      consumer's stream waits for this view's stream (an event, no host wait); CPU consumers
      (no stream) get the data after the view's stream is synchronised.
    - As an xfer.copy endpoint it stands for the device memory, ordered after its stream.
    Thread-safe as far as its buffer and stream are.
    """

    def __init__(self, buffer, dtype=np.uint8, shape=None, stream=None):
        self.buffer = buffer
        self.stream = stream
        self.dtype, self.shape = _shape(shape, dtype, buffer.nbytes, "Buffer.device_view")
        self.ptr = buffer.device_ptr
        self.nbytes = self.dtype.itemsize * int(np.prod(self.shape, dtype=np.int64))
        ctx = buffer.context
        self._kind = ctx.device_kind
        self._managed = bool(ctx.caps & Caps.MIGRATES)
        self._mapped = bool(ctx.caps & Caps.NO_COPY) and bool(ctx.caps & Caps.SHARED_VIEW)

    def __repr__(self):
        return (f"<xfer.DeviceView {self.dtype} {self.shape} of backend {self.buffer.context.backend!r} "
                f"device {self.buffer.context.device}>")

    @property
    def __cuda_array_interface__(self):
        if self._kind != DeviceKind.CUDA:
            raise AttributeError("__cuda_array_interface__: the device view is not CUDA memory on backend "
                                 f"'{self.buffer.context.backend}'")
        stream = None
        if self.stream is not None:
            stream = self.stream.native or 1  # the protocol reserves 0; 1 is the legacy default stream
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                "strides": None, "stream": stream}

    def __dlpack_device__(self):
        if self._kind != DeviceKind.CUDA:
            return (_dlpack.kDLCPU, 0)
        return (_dlpack.kDLCUDA, self.buffer.context.device)

    def _export_as(self, dl_device):
        """(device_type, device_id, address) for a requested DLPack device; BufferError if none."""
        default = self.__dlpack_device__()
        if dl_device is None:
            return default + (self.ptr,)
        want = (int(dl_device[0]), int(dl_device[1]))
        ctx = self.buffer.context
        allowed = {default: self.ptr}
        if self._kind == DeviceKind.CUDA:
            if self._managed:  # one pointer, valid on the device and on the host
                allowed[(_dlpack.kDLCUDAManaged, ctx.device)] = self.ptr
                allowed[(_dlpack.kDLCPU, 0)] = self.ptr
            elif self._mapped:  # page-locked host memory mapped for the device
                allowed[(_dlpack.kDLCPU, 0)] = self.buffer.host_ptr
                allowed[(_dlpack.kDLCUDAHost, 0)] = self.buffer.host_ptr
        if want in allowed:
            return want + (allowed[want],)
        names = ", ".join(f"({_dlpack.device_name(t)}, {i})" for t, i in allowed)
        raise BufferError(f"xfer DeviceView of backend '{ctx.backend}' cannot be exported as "
                          f"({_dlpack.device_name(want[0])}, {want[1]}); it can as {names}")

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError("xfer DeviceView exports without a copy only (copy=True asked)")
        device_type, device_id, ptr = self._export_as(dl_device)
        if self.stream is not None:
            if device_type in (_dlpack.kDLCUDA, _dlpack.kDLCUDAManaged):
                if stream != -1:  # -1: the consumer asked for no synchronisation
                    self._order_consumer(1 if stream is None else int(stream))
            else:
                self.stream.synchronize()  # a CPU consumer has no stream to order
        versioned = max_version is not None and int(tuple(max_version)[0]) >= 1
        return _dlpack.make_capsule(ptr, device_type, device_id, self.dtype, self.shape, self, versioned=versioned)

    def _order_consumer(self, consumer):
        # The consumer's stream waits for an event on this view's stream (no host wait); where
        # the driver cannot be reached, the view's stream is synchronised instead.
        own = self.stream.native
        if consumer == own or (consumer in (0, 1) and own in (0, 1)):
            return
        ctx = self.buffer.context
        ev = ctx._take_event()
        try:
            ev.record(self.stream)
            _cuda.stream_wait_event(consumer, ev.native, ctx.device)
        except (RuntimeError, Error):
            self.stream.synchronize()
        finally:
            ctx._give_event(ev)  # the wait holds the record it was given; the event may be reused


class Stream(_Handle):
    """An in-order queue of work (xfer_stream_create / xfer_stream_destroy), or a wrapper over a
    stream the application owns (Context.wrap_stream; ``wrapped`` is True, ``owner`` the
    framework's stream object). Attributes: context, native (the cudaStream_t as an int).

    Copies queued by xfer.copy_async keep their objects alive through the stream: synchronize(),
    a query() that finds the stream idle, close(), a Transfer found done, and every later copy on
    the stream (which finds the finished ones first) release them.
    Thread-safe: copies from several threads queue in one order, and releases follow it."""

    _release = "xfer_stream_destroy"
    _call = "xfer_stream_create"

    def __init__(self, ctx, _native=None, _owner=None):
        h = _capi.xfer_stream()
        if _native is None:
            _check(lib().xfer_stream_create(ctx.handle, byref(h)), "xfer_stream_create")
        else:
            _check(lib().xfer_stream_wrap(ctx.handle, _native or None, byref(h)), "xfer_stream_wrap")
        super().__init__(h.value, ctx)
        self.context = ctx
        self.wrapped = _native is not None
        self.owner = _owner  # a framework's stream object: alive while this wrapper is
        self._native = lib().xfer_stream_native(self._h) or 0
        self._pending = collections.deque()  # Transfers, in stream order
        self._plock = threading.Lock()

    @classmethod
    def _wrap(cls, ctx, native, owner):
        return cls(ctx, _native=native, _owner=owner)

    def __repr__(self):
        kind = "wrapped " if self.wrapped else ""
        return f"<xfer.Stream {kind}native=0x{self._native:x} of {self.context!r}>"

    def close(self):
        """Waits for the queued work and destroys the stream (xfer_stream_destroy); a wrapper's
        native stream stays. Releases what pending copies kept alive. Once."""
        try:
            super().close()
        finally:
            self._release_all()

    def synchronize(self):
        """Blocks until the work queued so far is done (xfer_stream_synchronize); releases what
        the copies queued before it kept alive."""
        n = len(self._pending)
        _check(lib().xfer_stream_synchronize(self.handle), "xfer_stream_synchronize")
        self._release_first(n)

    def query(self):
        """True when all queued work is done; never blocks."""
        n = len(self._pending)
        done = _ready(lib().xfer_stream_query(self.handle), "xfer_stream_query")
        if done:
            self._release_first(n)
        return done

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

    @property
    def pending(self):
        """How many queued copies still hold their objects (not yet known to be done)."""
        return len(self._pending)

    # ---- what queued copies keep alive (see xfer.Transfer)
    def _release_first(self, n):
        released = []
        with self._plock:
            for _ in range(min(n, len(self._pending))):
                released.append(self._pending.popleft()._finish())
        del released  # the objects go here, outside the lock: their finalisers may call xfer

    def _release_all(self):
        self._release_first(len(self._pending))

    def _release_through(self, transfer):
        released = []
        with self._plock:
            if transfer in self._pending:
                while self._pending:
                    t = self._pending.popleft()
                    released.append(t._finish())
                    if t is transfer:
                        break
        del released

    def _prune_locked(self, released):
        # Copies queued earlier that have finished (in stream order: stop at the first that has not).
        while self._pending and self._pending[0]._event_done():
            released.append(self._pending.popleft()._finish())


class Event(_Handle):
    """A marker in a stream (xfer_event_create / xfer_event_destroy)."""

    _release = "xfer_event_destroy"
    _call = "xfer_event_create"

    def __init__(self, ctx, flags=0):
        h = _capi.xfer_event()
        _check(lib().xfer_event_create(ctx.handle, int(flags), byref(h)), "xfer_event_create")
        super().__init__(h.value, ctx)
        self.context = ctx

    def record(self, stream):
        _check(lib().xfer_event_record(self.handle, stream.handle), "xfer_event_record")

    def synchronize(self):
        _check(lib().xfer_event_synchronize(self.handle), "xfer_event_synchronize")

    def query(self):
        """True when the event has completed (or was never recorded); never blocks."""
        return _ready(lib().xfer_event_query(self.handle), "xfer_event_query")

    @property
    def native(self):
        """The backend's event as an int (a cudaEvent_t on CUDA backends, e.g. for
        cudaStreamWaitEvent on an application stream)."""
        n = lib().xfer_event_native(self.handle)
        if not n:
            _check(_capi.XFER_ERROR_INVALID_HANDLE, "xfer_event_native")
        return n

    @staticmethod
    def elapsed_ms(start, end):
        """Milliseconds between two completed events (xfer_event_elapsed_ms)."""
        ms = c_float()
        _check(lib().xfer_event_elapsed_ms(start.handle, end.handle, byref(ms)), "xfer_event_elapsed_ms")
        return ms.value


from . import _copy  # noqa: E402  (it uses the classes above)
from ._copy import Transfer, copy, copy_async, default_context, to_device, to_host  # noqa: E402
