# SPDX-License-Identifier: Apache-2.0
"""Stream ordering between streams xfer does not own, through the CUDA driver (libcuda.so.1).

Two protocols ask a party to order its work after another party's stream without blocking the
host: a DLPack producer makes the consumer's stream wait for the data (DeviceView.__dlpack__),
and a __cuda_array_interface__ v3 consumer makes its stream wait for the producer's stream
(xfer.copy). xfer's C API orders its own streams (xfer_stream_wait_event) and hands out native
events (xfer_event_native); the last step, "this foreign stream waits for that event", is one
driver call, cuStreamWaitEvent. libcuda.so.1 is part of the NVIDIA driver, so it is present
wherever CUDA memory exists; it is loaded on first use only, never on the host backend.

A cudaStream_t is a CUstream and a cudaEvent_t a CUevent (the runtime's handles are the
driver's); cudaStreamLegacy (1) and cudaStreamPerThread (2) are CU_STREAM_LEGACY and
CU_STREAM_PER_THREAD. Thread-safe.
"""
import ctypes
import threading
from ctypes import byref, c_int, c_uint, c_void_p

_lock = threading.Lock()
_driver = None       # the CDLL, False once loading failed
_events = {}         # CUcontext -> [CUevent]: free events to record on foreign streams
CU_EVENT_DISABLE_TIMING = 0x2


class DriverError(RuntimeError):
    """A driver call failed: .call, .code (the CUresult)."""

    def __init__(self, call, code):
        self.call, self.code = call, code
        super().__init__(f"{call}: CUresult {code}")


def _load():
    global _driver
    if _driver is None:
        with _lock:
            if _driver is None:
                try:
                    d = ctypes.CDLL("libcuda.so.1")
                    for name, args in [("cuInit", [c_uint]), ("cuStreamWaitEvent", [c_void_p, c_void_p, c_uint]),
                                       ("cuEventCreate", [ctypes.POINTER(c_void_p), c_uint]),
                                       ("cuEventRecord", [c_void_p, c_void_p]),
                                       ("cuStreamSynchronize", [c_void_p]),
                                       ("cuCtxGetCurrent", [ctypes.POINTER(c_void_p)]),
                                       ("cuDeviceGet", [ctypes.POINTER(c_int), c_int]),
                                       ("cuDevicePrimaryCtxRetain", [ctypes.POINTER(c_void_p), c_int]),
                                       ("cuCtxPushCurrent_v2", [c_void_p]),
                                       ("cuCtxPopCurrent_v2", [ctypes.POINTER(c_void_p)])]:
                        fn = getattr(d, name)
                        fn.argtypes, fn.restype = args, c_int
                    _driver = d if d.cuInit(0) == 0 else False
                except (OSError, AttributeError):
                    _driver = False
    return _driver or None


def _check(code, call):
    if code != 0:
        raise DriverError(call, code)


def available():
    """True when the CUDA driver could be loaded and initialised."""
    return _load() is not None


def _driver_or_raise():
    d = _load()
    if d is None:
        raise RuntimeError("libcuda.so.1 (the CUDA driver) could not be loaded")
    return d


_primary = {}  # device ordinal -> its primary CUcontext (retained once, kept: the runtime holds it too)


class _Current:
    """Makes `device`'s primary context (the one the CUDA runtime, xfer and the frameworks use)
    current on this thread for a with-block when another one or none is, and leaves the thread's
    context as it found it afterwards. .ctx is the context the block runs in."""

    def __init__(self, d, device):
        self._d, self._device, self._pushed = d, int(device), False
        self.ctx = None

    def __enter__(self):
        d = self._d
        primary = _primary.get(self._device)
        if primary is None:
            dev, ctx = c_int(), c_void_p()
            _check(d.cuDeviceGet(byref(dev), self._device), "cuDeviceGet")
            _check(d.cuDevicePrimaryCtxRetain(byref(ctx), dev.value), "cuDevicePrimaryCtxRetain")
            primary = _primary.setdefault(self._device, ctx.value)
        current = c_void_p()
        _check(d.cuCtxGetCurrent(byref(current)), "cuCtxGetCurrent")
        if current.value != primary:
            _check(d.cuCtxPushCurrent_v2(c_void_p(primary)), "cuCtxPushCurrent")
            self._pushed = True
        self.ctx = primary
        return self

    def __exit__(self, *exc):
        if self._pushed:
            self._d.cuCtxPopCurrent_v2(byref(c_void_p()))


def stream_wait_event(stream, event, device=0):
    """Future work on native `stream` (int) waits for native `event` (int), both of CUDA device
    `device` (its primary context): cuStreamWaitEvent.
    Raises DriverError (or RuntimeError without a driver)."""
    d = _driver_or_raise()
    with _Current(d, device):
        _check(d.cuStreamWaitEvent(c_void_p(stream or None), c_void_p(event or None), 0), "cuStreamWaitEvent")


def order_after(consumer, producer, device=0):
    """Future work on native stream `consumer` waits for what native stream `producer` has queued
    so far (an event recorded on producer, waited for by consumer), without blocking the host.
    Both streams must be of CUDA device `device` (its primary context, which the CUDA runtime and
    the frameworks use).
    Raises DriverError / RuntimeError."""
    d = _driver_or_raise()
    with _Current(d, device) as cur:
        _order_after(d, cur.ctx, consumer, producer)


def _order_after(d, ctx_value, consumer, producer):
    ctx = c_void_p(ctx_value)
    with _lock:
        pool = _events.setdefault(ctx.value, [])
        ev = pool.pop() if pool else None
    if ev is None:
        h = c_void_p()
        _check(d.cuEventCreate(byref(h), CU_EVENT_DISABLE_TIMING), "cuEventCreate")
        ev = h.value
    try:
        _check(d.cuEventRecord(c_void_p(ev), c_void_p(producer or None)), "cuEventRecord")
        _check(d.cuStreamWaitEvent(c_void_p(consumer or None), c_void_p(ev), 0), "cuStreamWaitEvent")
    finally:
        # The wait captured the record: the event may be recorded again at once.
        with _lock:
            _events[ctx.value].append(ev)


def synchronize(stream, device=0):
    """Blocks until native `stream` of CUDA device `device` has done its work (cuStreamSynchronize)."""
    d = _driver_or_raise()
    with _Current(d, device):
        _check(d.cuStreamSynchronize(c_void_p(stream or None)), "cuStreamSynchronize")
