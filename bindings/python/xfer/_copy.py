# SPDX-License-Identifier: Apache-2.0
"""xfer.copy and xfer.copy_async: copies between arrays of any library, checked and kept alive.

An endpoint (dst or src) is one of:
  - an xfer Buffer (its device view, all of it) or DeviceView (device memory of its context);
  - a NumPy array, or any object with the buffer protocol or __array_interface__ (host memory);
  - a PyTorch tensor (CPU or CUDA) or a CuPy array (read directly, and their framework's current
    stream is the copy's stream when none is given);
  - any object with __cuda_array_interface__ (v2, or v3 with its stream: the copy waits for that
    stream on the device first, as the protocol asks of consumers), e.g. Numba device arrays;
  - any object with __dlpack__ / __dlpack_device__ on kDLCPU, kDLCUDAHost, kDLCUDA or
    kDLCUDAManaged (e.g. JAX): its __dlpack__ gets the copy's stream, so the producer orders
    the data on it, and its capsule is released when the copy is done.
Checks, each before anything is queued: both endpoints C-contiguous (the error names shape and
strides), the same number of bytes (a byte copy; dtypes and shapes may differ), the destination
writable, CUDA memory only with a CUDA backend's context of the same device, xfer objects only
of the copy's context. TypeError for what is no array, ValueError for the rest; the library's
own refusals (e.g. overlapping ranges) are xfer.Error.
"""
import atexit
import sys
import threading
import weakref

import numpy as np

from . import _capi, _cuda, _dlpack
from . import Buffer, Context, CopyKind, DeviceKind, DeviceView, Error, Stream, _check
from ._capi import lib

_KIND = {(False, False): _capi.XFER_COPY_HOST_TO_HOST, (True, False): _capi.XFER_COPY_HOST_TO_DEVICE,
         (False, True): _capi.XFER_COPY_DEVICE_TO_HOST, (True, True): _capi.XFER_COPY_DEVICE_TO_DEVICE}
_HOST_DLPACK = (_dlpack.kDLCPU, _dlpack.kDLCUDAHost, 11)  # 11: kDLROCMHost, host memory too
_CUDA_DLPACK = (_dlpack.kDLCUDA, _dlpack.kDLCUDAManaged)


# ------------------------------------------------------------------------------ Transfer
class Transfer:
    """A copy queued by copy_async (or to_device(..., blocking=False)). It holds the copy's
    destination and source (and whatever they need, e.g. a DLPack capsule) until the copy is known
    to be done, and so does its stream, so dropping the Transfer or every other reference to a
    temporary array never frees memory under a queued copy.

    Attributes: stream (the xfer Stream it was queued on; None once that stream is gone), nbytes,
    kind (CopyKind), event (an xfer Event recorded after the copy; its .native is the cudaEvent_t
    on CUDA backends, for an application stream to wait on), dst, src (None once done).
    Released when: wait() or done() finds it done, its stream is synchronised (or found idle by
    Stream.query), or a later copy on the stream finds it done; its context closing. Thread-safe.
    """

    def __init__(self, stream, event, keep, nbytes, kind):
        self._stream = weakref.ref(stream) if stream is not None else None
        self.event = event
        self._keep = keep  # [dst, src, ...extra]
        self._done = event is None
        self.nbytes = nbytes
        self.kind = CopyKind(kind)

    def __repr__(self):
        state = "done" if self._done else "pending"
        return f"<xfer.Transfer {self.kind.name} {self.nbytes} bytes, {state}>"

    @property
    def stream(self):
        return self._stream() if self._stream is not None else None

    @property
    def dst(self):
        keep = self._keep
        return keep[0] if keep else None

    @property
    def src(self):
        keep = self._keep
        return keep[1] if keep else None

    def _event_done(self):
        try:
            return self.event.query()
        except Error:
            return False  # a failing event: the stream's synchronisation reports it

    def _finish(self):
        # Called by the stream, under its lock: returns the kept objects for the caller to drop.
        keep, self._keep = self._keep, None
        self._done = True
        return keep

    def _release(self):
        s = self.stream
        if s is not None:
            s._release_through(self)
        if not self._done:  # the stream is gone: its close released everything before
            self._finish()

    def done(self):
        """True when the copy has completed (never blocks); releases its objects then."""
        if self._done:
            return True
        if self._event_done():
            self._release()
            return True
        return False

    def wait(self):
        """Blocks until the copy has completed (xfer_event_synchronize), then releases its
        objects. Raises xfer.Error when the copy failed on the device (e.g. a device fault)."""
        if not self._done:
            self.event.synchronize()
            self._release()

    synchronize = wait

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.wait()

    def __del__(self):
        # Only a finished Transfer is collected (its stream holds it until then): the event goes
        # back to the context's pool for the next copy.
        try:
            ev = self.event
            if ev is not None and self._done:
                ev.context._give_event(ev)
        except Exception:  # nothing can report from a finalizer
            pass


# ------------------------------------------------------------------------------ endpoints
def _type_name(obj):
    t = type(obj)
    mod = t.__module__
    if mod == "builtins":
        return t.__qualname__
    if mod.startswith("xfer"):
        mod = "xfer"
    return f"{mod.split('.')[0]}.{t.__qualname__}"


def _c_strides(shape, itemsize):
    out, step = [], itemsize
    for extent in reversed(shape):
        out.insert(0, step)
        step *= max(extent, 1)
    return tuple(out)


def _is_c_contiguous(shape, strides, itemsize):
    """strides in bytes; extents of 1 may have any stride, an empty array is contiguous."""
    if strides is None or any(x == 0 for x in shape):
        return True
    step = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != step:
            return False
        step *= extent
    return True


class _End:
    """One side of a copy: where its bytes are, what they are, and what must stay alive."""

    __slots__ = ("obj", "role", "_what", "ptr", "nbytes", "device_side", "cuda_device", "ctx", "readonly",
                 "shape", "dtype", "framework", "cai_stream", "view_stream", "dlpack_device", "imported")

    def __init__(self, obj, role):
        self.obj = obj
        self.role = role
        self._what = None  # the type's name, made only for messages
        self.ptr = 0
        self.nbytes = 0
        self.device_side = False  # device memory (CUDA memory, or an xfer device view)
        self.cuda_device = None  # the CUDA device index of foreign CUDA memory, where known
        self.ctx = None  # xfer objects: their context
        self.readonly = False
        self.shape = None
        self.dtype = None  # a NumPy dtype where there is one
        self.framework = None  # ("torch" | "cupy", device): whose current stream stream=None means
        self.cai_stream = None  # __cuda_array_interface__ v3: the producer's stream
        self.view_stream = None  # DeviceView: its xfer Stream
        self.dlpack_device = None  # (type, id): the pointer comes from __dlpack__(stream=...) later
        self.imported = None

    @property
    def what(self):
        return self._what or _type_name(self.obj)

    @what.setter
    def what(self, value):
        self._what = value

    def describe(self):
        parts = [self.what]
        if self.dtype is not None:
            parts.append(str(self.dtype))
        if self.shape is not None:
            parts.append(f"shape {self.shape}")
        if self.cuda_device is not None:
            parts.append(f"on cuda:{self.cuda_device}")
        return " ".join(parts)

    def set_layout(self, shape, itemsize, strides_bytes, dtype=None):
        self.shape = tuple(int(x) for x in shape)
        self.dtype = dtype
        if not _is_c_contiguous(self.shape, strides_bytes, itemsize):
            raise ValueError(
                f"xfer.copy: {self.role} ({self.describe()}) is not C-contiguous: strides "
                f"{tuple(int(x) for x in strides_bytes)} bytes, where C order has "
                f"{_c_strides(self.shape, itemsize)}. A strided slice or transposed view is not one block "
                "of bytes: copy it into a contiguous array first (np.ascontiguousarray, .copy(), .contiguous())")
        n = itemsize
        for extent in self.shape:
            n *= extent
        self.nbytes = n


def _host_numpy(e, a):
    flags = a.flags
    if flags.c_contiguous:  # NumPy's own test, which also ignores the strides of extents of 1
        e.shape, e.dtype, e.nbytes = a.shape, a.dtype, a.nbytes
    else:
        e.set_layout(a.shape, a.itemsize, a.strides, a.dtype)
    e.readonly = not flags.writeable
    e.ptr = a.ctypes.data if e.nbytes else 0


def _from_torch(e, t, torch):
    if t.layout != torch.strided:
        raise TypeError(f"xfer.copy: {e.role} is a {t.layout} torch tensor: xfer copies strided (dense) tensors")
    dev = t.device
    if dev.type == "cuda":
        e.device_side, e.cuda_device = True, dev.index
        e.framework = ("torch", dev.index)
    elif dev.type != "cpu":
        raise TypeError(f"xfer.copy: {e.role} is a torch tensor on {dev}: xfer copies CPU and CUDA memory")
    item = t.element_size()
    try:
        dtype = np.dtype(str(t.dtype).replace("torch.", ""))
    except TypeError:
        dtype = None  # bfloat16 and others NumPy lacks
    e.set_layout(t.shape, item, [x * item for x in t.stride()], dtype)
    if e.dtype is None:
        e.what = f"torch.Tensor {t.dtype}"
    if t.is_conj() or t.is_neg():
        raise ValueError(f"xfer.copy: {e.role} is a lazily conjugated or negated torch view: its bytes are not its "
                         "values; call .resolve_conj() / .resolve_neg() first")
    if e.role == "dst" and t.requires_grad and torch.is_grad_enabled():
        raise ValueError("xfer.copy: dst requires grad: writing it behind autograd's back is refused; copy into "
                         "t.detach(), or under torch.no_grad()")
    e.ptr = t.data_ptr()


def _from_cupy(e, a):
    e.device_side, e.cuda_device = True, a.device.id
    e.framework = ("cupy", a.device.id)
    e.set_layout(a.shape, a.itemsize, a.strides, a.dtype)
    e.ptr = a.data.ptr


def _dlpack_device(obj):
    fn = getattr(obj, "__dlpack_device__", None)
    if fn is None:
        return None
    dev = fn()
    return int(dev[0]), int(dev[1])


def _from_cai(e, obj, cai):
    if cai.get("mask") is not None:
        raise TypeError(f"xfer.copy: {e.role} ({e.what}) is a masked array (__cuda_array_interface__ mask)")
    dtype = np.dtype(cai["typestr"])
    ptr, ro = cai["data"]
    strides = cai.get("strides")
    e.device_side = True
    try:
        dev = _dlpack_device(obj)
    except Exception:  # only a hint: the library checks the pointer on the device anyway
        dev = None
    if dev is not None and dev[0] in _CUDA_DLPACK:
        e.cuda_device = dev[1]
    e.set_layout(cai["shape"], dtype.itemsize, strides, dtype)
    e.readonly = bool(ro)
    e.ptr = int(ptr or 0)
    if int(cai.get("version", 0)) >= 3 and cai.get("stream") is not None:
        e.cai_stream = int(cai["stream"])


def _from_dlpack_device(e, obj):
    dev = _dlpack_device(obj)
    if dev[0] in _HOST_DLPACK:
        e.dlpack_device = dev
    elif dev[0] in _CUDA_DLPACK:
        e.dlpack_device = dev
        e.device_side, e.cuda_device = True, dev[1]
    else:
        raise TypeError(f"xfer.copy: {e.role} ({e.what}) lives on {_dlpack.device_name(dev[0])} device {dev[1]}: "
                        "xfer copies host memory and CUDA memory")


def _materialise_dlpack(e, stream_native):
    """Takes the pointer with __dlpack__, passing the copy's stream for CUDA memory (the producer
    then orders its pending work before it)."""
    kw = {}
    if e.dlpack_device[0] in _CUDA_DLPACK:
        kw["stream"] = stream_native or 1  # 0 is reserved; 1 is the legacy default stream
    try:
        cap = e.obj.__dlpack__(max_version=(1, 0), copy=False if e.role == "dst" else None, **kw)
    except TypeError:  # a producer from before max_version / copy
        cap = e.obj.__dlpack__(**kw)
    imp = e.imported = _dlpack.import_capsule(cap)
    strides = None if imp.strides is None else [x * imp.itemsize for x in imp.strides]
    e.set_layout(imp.shape, imp.itemsize, strides, np.dtype(imp.typestr) if imp.typestr else None)
    if (imp.device_type, imp.device_id) != e.dlpack_device and not (
            imp.device_type in _HOST_DLPACK and e.dlpack_device[0] in _HOST_DLPACK):
        raise ValueError(f"xfer.copy: {e.role} ({e.what}) exported {_dlpack.device_name(imp.device_type)} "
                         f"{imp.device_id} memory, not the {e.dlpack_device} its __dlpack_device__ named")
    e.readonly = imp.read_only
    if e.role == "dst" and imp.copied:
        raise ValueError(f"xfer.copy: dst ({e.describe()}) exported a copy of itself (DLPack IS_COPIED): "
                         "writing it would not change dst")
    e.ptr = imp.ptr


def _endpoint(obj, role):
    e = _End(obj, role)
    if isinstance(obj, DeviceView):
        buf = obj.buffer
        buf.handle  # raises xfer.Error for a freed buffer
        e.ctx, e.device_side = buf.context, True
        e.set_layout(obj.shape, obj.dtype.itemsize, None, obj.dtype)
        e.ptr, e.view_stream = obj.ptr, obj.stream
        return e
    if isinstance(obj, Buffer):
        e.ctx, e.device_side = obj.context, True
        e.ptr = obj.device_ptr  # raises xfer.Error for a freed buffer
        e.nbytes = obj.nbytes
        e.what = f"xfer.Buffer of {obj.nbytes} bytes"
        return e
    if isinstance(obj, np.ndarray):
        _host_numpy(e, obj)
        return e
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        _from_torch(e, obj, torch)
        return e
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(obj, cupy.ndarray):
        _from_cupy(e, obj)
        return e
    module = type(obj).__module__
    if module.startswith(("jax", "jaxlib")):
        if role == "dst":
            raise ValueError(f"xfer.copy: dst ({e.what}) is a JAX array, and JAX arrays are immutable: copy into "
                             "an xfer DeviceView (or a CuPy / PyTorch array) and import it with jax.dlpack.from_dlpack")
        # JAX's __dlpack__ takes the consumer's stream and orders its pending computation there.
        if hasattr(obj, "__dlpack__"):
            _from_dlpack_device(e, obj)
            return e
    errors = []
    try:
        cai = obj.__cuda_array_interface__
    except AttributeError:
        cai = None
    except Exception as exc:  # e.g. a tensor that refuses it; DLPack may still work
        cai = None
        errors.append(f"__cuda_array_interface__: {exc}")
    if cai is not None:
        _from_cai(e, obj, cai)
        return e
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        _from_dlpack_device(e, obj)
        return e
    try:
        mv = memoryview(obj)
    except TypeError:
        mv = None
    if mv is not None:
        if not mv.c_contiguous:
            raise ValueError(f"xfer.copy: {role} ({e.what}) is not C-contiguous: shape {mv.shape}, strides "
                             f"{mv.strides} bytes. Copy it into a contiguous buffer first")
        arr = np.frombuffer(mv, np.uint8) if mv.nbytes else np.zeros(0, np.uint8)
        e.shape, e.nbytes, e.readonly = tuple(mv.shape), mv.nbytes, mv.readonly
        e.ptr = arr.__array_interface__["data"][0] if mv.nbytes else 0
        return e
    if hasattr(obj, "__array_interface__"):
        _host_numpy(e, np.asarray(obj))
        return e
    detail = f" ({'; '.join(errors)})" if errors else ""
    raise TypeError(f"xfer.copy: {role} of type {e.what} is not an array{detail}: pass a NumPy array, a buffer-protocol "
                    "object, an object with __cuda_array_interface__ or __dlpack__ (CuPy, PyTorch, Numba, JAX), or an "
                    "xfer Buffer / DeviceView")


# ------------------------------------------------------------------------------ contexts
_defaults = {}
_defaults_lock = threading.Lock()
_atexit_registered = False


def default_context(device=None):
    """The Context that xfer.copy, copy_async, to_device and to_host use when none is given and
    none follows from the arguments: xfer_open(NULL, device), so the backend comes from
    XFER_BACKEND / the XFER_CONFIG file, else the best available one (pinned, pageable,
    managed, zerocopy, host). device: a device index, or None for XFER_DEVICE (0 when unset);
    xfer.copy asks for the device of the CUDA arrays it copies. Opened on first use, one per
    device, and closed when the interpreter exits (which waits for the copies still queued).
    Raises xfer.Error when no backend can be opened. Thread-safe."""
    global _atexit_registered
    key = -1 if device is None else int(device)
    ctx = _defaults.get(key)
    if ctx is not None and ctx._h:
        return ctx
    with _defaults_lock:
        ctx = _defaults.get(key)
        if ctx is None or not ctx._h:
            ctx = Context(None, key)
            known = _defaults.get(ctx.device)
            if key == -1 and known is not None and known._h and known.backend == ctx.backend:
                ctx.close()  # the device's default context exists already: one per device
                ctx = known
            _defaults[key] = ctx
            _defaults.setdefault(ctx.device, ctx)
            if not _atexit_registered:
                atexit.register(_close_defaults)
                _atexit_registered = True
    return ctx


def _close_defaults():
    with _defaults_lock:
        contexts = {id(c): c for c in _defaults.values()}.values()
        _defaults.clear()
    for ctx in contexts:
        try:
            ctx.close()
        except Exception:  # at exit nothing can be reported to the program any more
            pass


def _context_for(ctx, stream, d, s):
    if ctx is None and isinstance(stream, Stream):
        ctx = stream.context
    if ctx is None:
        ctx = d.ctx or s.ctx
    if ctx is None:
        dev = d.cuda_device if d.cuda_device is not None else s.cuda_device
        ctx = default_context(dev)
    if not isinstance(ctx, Context):
        raise TypeError(f"ctx: expected an xfer.Context, not {type(ctx).__name__}")
    ctx.handle  # raises xfer.Error for a closed context
    return ctx


def _check_places(ctx, d, s):
    """The context reaches both memories; returns the copy kind."""
    for e in (d, s):
        if e.ctx is not None and e.ctx is not ctx:
            raise ValueError(f"xfer.copy: {e.role} ({e.describe()}) is memory of {e.ctx!r}, not of this copy's "
                             f"{ctx!r}: copy within one context (device-to-device copies between contexts are "
                             "peer copies, xfer_copy_peer_async)")
        if e.device_side and e.ctx is None:
            if ctx.device_kind != DeviceKind.CUDA:
                raise ValueError(f"xfer.copy: {e.role} ({e.describe()}) is CUDA device memory, but the context has "
                                 f"backend '{ctx.backend}', whose device is emulated in host memory: use a CUDA backend "
                                 "(ctx=xfer.Context('pinned'), or XFER_BACKEND for the default context)")
            if e.cuda_device is not None and e.cuda_device != ctx.device:
                raise ValueError(f"xfer.copy: {e.role} ({e.describe()}) is memory of CUDA device {e.cuda_device}, but "
                                 f"the context is on device {ctx.device}: pass ctx=xfer.Context('{ctx.backend}', "
                                 f"{e.cuda_device}), or leave ctx out (the default context follows the arrays' device)")
    return _KIND[(d.device_side, s.device_side)]


def _check_sizes(d, s):
    if d.readonly:
        raise ValueError(f"xfer.copy: dst ({d.describe()}) is read-only")
    if d.nbytes != s.nbytes:
        raise ValueError(f"xfer.copy: dst ({d.describe()}) holds {d.nbytes} bytes, src ({s.describe()}) {s.nbytes}: "
                         "a copy moves all of src into all of dst, so both must have the same byte size (for part "
                         "of an xfer Buffer, copy into buffer.device_view(dtype, shape))")


# ------------------------------------------------------------------------------ streams
def _framework_stream(framework):
    name, device = framework
    if name == "torch":
        torch = sys.modules["torch"]
        s = torch.cuda.current_stream(device)
        return s.cuda_stream, s
    cupy = sys.modules["cupy"]
    try:
        s = cupy.cuda.get_current_stream(device)
    except TypeError:  # CuPy before per-device current streams
        s = cupy.cuda.get_current_stream()
    return s.ptr, s


def _stream_for(stream, ctx, d, s):
    """(the copy's xfer Stream, the framework whose current stream it is, or None)."""
    if isinstance(stream, Stream):
        if stream.context is not ctx:
            raise ValueError(f"xfer.copy: the stream is of {stream.context!r}, the copy of {ctx!r}")
        stream.handle  # raises xfer.Error for a closed stream
        return stream, None
    if stream is not None:
        return ctx.wrap_stream(stream), None
    for e in (d, s):
        if e.framework is not None:
            return ctx._wrap(*_framework_stream(e.framework)), e.framework
    for e in (d, s):
        v = e.view_stream
        if v is not None and v._h and v.context is ctx:
            return v, None
    return ctx.default_stream, None


def _same_native(a, b):
    return a == b or (a in (0, 1) and b in (0, 1))


def _wait_for_native(xs, producer):
    if not _same_native(producer, xs._native):
        device = xs.context.device
        try:
            _cuda.order_after(xs._native, producer, device)
        except (RuntimeError, OSError):  # the driver refused the event: wait on the host instead
            _cuda.synchronize(producer, device)


def _order_inputs(xs, picked, d, s, keep):
    """The copy's stream waits (on the device) for the streams the endpoints' producers work on:
    a __cuda_array_interface__ v3 stream, the current stream of a CuPy / PyTorch array whose
    framework did not pick the copy's stream, a DeviceView's stream."""
    for e in (d, s):
        if e.cai_stream is not None:
            _wait_for_native(xs, e.cai_stream)
        if e.framework is not None and e.framework != picked:
            _wait_for_native(xs, _framework_stream(e.framework)[0])
        v = e.view_stream
        if v is not None and v is not xs and v._h and v.context is xs.context:
            ev = xs.context.event(_capi.XFER_EVENT_DISABLE_TIMING)
            ev.record(v)
            xs.wait(ev)
            keep.append(ev)  # destroyed once the copy is done (waits on it are unaffected)


# ------------------------------------------------------------------------------ the copies
def copy_async(dst, src, stream=None, ctx=None):
    """Queues a copy of all of src's bytes into dst and returns a Transfer at once.

    dst, src: see the module help (NumPy / buffer-protocol host memory, PyTorch, CuPy,
      __cuda_array_interface__, DLPack, xfer Buffer / DeviceView), C-contiguous, equal byte sizes.
    stream: an xfer Stream of the context; a CuPy or PyTorch stream, an object with
      __cuda_stream__, or an int cudaStream_t (wrapped once per context, Context.wrap_stream);
      None: the current stream of CuPy / PyTorch when dst (else src) is their CUDA array, else a
      DeviceView's stream, else ctx.default_stream. The copy is ordered after the work queued on
      it before, as a framework's own copy would be.
    ctx: the Context; None: the stream's, else an xfer endpoint's, else default_context() for the
      CUDA device of the arrays.
    Until the Transfer is done, src must not be modified nor dst read or written by the host or
    other streams; both objects stay alive through the Transfer and its stream. Host memory of a
    pageable NumPy array is read or written asynchronously on the pageable backend (staging), as
    any page-locked memory would be.
    Raises TypeError (not an array, not a stream), ValueError (layout, size, read-only destination,
    memory the context cannot reach), xfer.Error (the library refused the copy: nothing queued).
    Thread-safe: copies on one stream from several threads queue in the order of their calls."""
    d, s = _endpoint(dst, "dst"), _endpoint(src, "src")
    ctx = _context_for(ctx, stream, d, s)
    kind = _check_places(ctx, d, s)
    if d.dlpack_device is None and s.dlpack_device is None:
        _check_sizes(d, s)  # before anything has side effects
    xs, picked = _stream_for(stream, ctx, d, s)
    keep = [dst, src]
    for e in (d, s):
        if e.dlpack_device is not None:
            _materialise_dlpack(e, xs._native)
            keep.append(e.imported)
    _check_sizes(d, s)
    if d.nbytes == 0:
        return Transfer(xs, None, None, 0, kind)
    _order_inputs(xs, picked, d, s, keep)
    ev = ctx._take_event()
    released = []
    with xs._plock:
        # Queue, record and remember under the stream's lock: the pending list is in stream order.
        xs._prune_locked(released)
        status = lib().xfer_memcpy_async(ctx._h, d.ptr, s.ptr, d.nbytes, kind, xs._h)
        if status != _capi.XFER_SUCCESS:
            ctx._give_event(ev)
            _check(status, "xfer_memcpy_async")
        status = lib().xfer_event_record(ev._h, xs._h)
        if status != _capi.XFER_SUCCESS:
            # The copy is queued but cannot be tracked: wait for it here rather than lose its objects.
            lib().xfer_stream_synchronize(xs._h)
            _check(status, "xfer_event_record")
        t = Transfer(xs, ev, keep, d.nbytes, kind)
        xs._pending.append(t)
    del released  # finished copies' objects go outside the lock
    return t


def copy(dst, src, stream=None, ctx=None):
    """Copies all of src's bytes into dst and returns once they are there: copy_async(dst, src,
    stream, ctx).wait(). The copy is ordered on the stream as copy_async says (after the work
    queued there before) and the call waits for that work too. Same arguments and errors as
    copy_async. Thread-safe."""
    copy_async(dst, src, stream=stream, ctx=ctx).wait()


def to_device(src, stream=None, ctx=None, blocking=True):
    """A new DeviceView holding a copy of host array src (NumPy, buffer protocol, CPU tensor).

    The view owns a new Buffer of src's size in ctx (None: the stream's, else default_context())
    and has src's dtype and shape; its stream is the copy's (stream as for copy_async, else the
    context's default_stream), so CuPy / PyTorch / Numba / JAX consumers order after the copy.
    blocking=False returns at once (the copy is queued; src is kept alive until it is done, and
    must not be modified meanwhile). Raises as copy_async; ValueError for a non-contiguous src."""
    arr = src if isinstance(src, np.ndarray) else np.asarray(src)
    if not arr.flags.c_contiguous:
        raise ValueError(f"xfer.to_device: src is not C-contiguous (shape {arr.shape}, strides {arr.strides} bytes): "
                         "pass np.ascontiguousarray(src)")
    if ctx is None:
        ctx = stream.context if isinstance(stream, Stream) else default_context()
    buf = ctx.alloc(max(arr.nbytes, 1))
    xs = _stream_for(stream, ctx, _End(None, "dst"), _End(None, "src"))[0]
    view = DeviceView(buf, arr.dtype, arr.shape, stream=xs)
    t = copy_async(view, src if arr is src else arr, stream=xs, ctx=ctx)
    if blocking:
        t.wait()
    return view


def to_host(src, stream=None, ctx=None):
    """A new NumPy array holding a copy of src (a DeviceView, CuPy array, PyTorch tensor, any
    endpoint copy takes), of src's dtype and shape; waits for the copy. Raises as copy; TypeError
    when src's element type has no NumPy dtype (e.g. bfloat16: copy into an array you allocate)."""
    e = _endpoint(src, "src")
    if e.dlpack_device is not None:
        probe = ctx or default_context(e.cuda_device)
        if e.device_side and probe.device_kind == DeviceKind.CUDA:
            _materialise_dlpack(e, _stream_for(stream, probe, _End(None, "dst"), e)[0]._native)
        else:
            _materialise_dlpack(e, None)
        e.imported.close()  # only the layout was wanted; copy takes the capsule again
    if isinstance(src, Buffer):
        dtype, shape = np.dtype(np.uint8), (src.nbytes,)
    elif e.dtype is None:
        raise TypeError(f"xfer.to_host: src ({e.describe()}) has no NumPy dtype: copy into an array you allocate, "
                        "e.g. np.empty(shape, np.uint16) for bfloat16")
    else:
        dtype, shape = e.dtype, e.shape
    out = np.empty(shape, dtype)
    copy(out, src, stream=stream, ctx=ctx)
    return out
