# SPDX-License-Identifier: Apache-2.0
"""xfer.copy / copy_async / to_device / to_host on the `host` backend: every byte compared after
round trips, every misuse refused before anything is queued, and the objects of a queued copy
kept alive exactly until it is known to be done. Also the DLPack exports a CUDA backend makes
(on stand-in contexts: no memory is touched), the default context, and the missing-library
error."""
import array
import ctypes
import gc
import os
import subprocess
import sys
import threading
import weakref

import numpy as np
import pytest

import xfer
from xfer import _dlpack

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)


@pytest.fixture
def ctx():
    with xfer.Context("host", 0) as c:
        yield c


def rand(n, dtype, seed=5):
    rng = np.random.default_rng(seed)
    return (rng.random(n) * 200 - 100).astype(dtype)


# ------------------------------------------------------------------------------ round trips
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.complex64, np.bool_])
@pytest.mark.parametrize("shape", [(1,), (1000,), (37, 129), (2, 3, 5, 7)])
def test_numpy_device_view_numpy_round_trip(ctx, dtype, shape):
    a = rand(int(np.prod(shape)), dtype).reshape(shape)
    with ctx.alloc(a.nbytes) as buf:
        view = buf.device_view(dtype, shape)
        xfer.copy(view, a, ctx=ctx)
        raw = np.frombuffer((ctypes.c_char * a.nbytes).from_address(buf.device_ptr), np.uint8)
        assert raw.tobytes() == a.tobytes()       # the device view holds src's bytes
        back = np.zeros_like(a)
        xfer.copy(back, view)                     # the view's context is the copy's
        assert back.tobytes() == a.tobytes()


def test_buffer_endpoint_is_its_device_view(ctx):
    a = rand(4096, np.float32)
    with ctx.alloc(a.nbytes) as buf, ctx.stream() as s:
        buf.host_array(np.float32)[:] = 0
        xfer.copy(buf, a)
        buf.to_host(s)                            # the bytes went to the device view
        s.synchronize()
        assert buf.host_array(np.float32).tobytes() == a.tobytes()
        out = np.empty_like(a)
        xfer.copy(out, buf)
        assert out.tobytes() == a.tobytes()


def test_buffer_protocol_endpoints(ctx):
    a = rand(1000, np.float32)
    with ctx.alloc(a.nbytes) as buf:
        v = buf.device_view(np.float32, (1000,))
        xfer.copy(v, a.tobytes())                 # bytes: a read-only source is fine
        ba = bytearray(a.nbytes)
        xfer.copy(ba, v)
        assert bytes(ba) == a.tobytes()
        arr = array.array("f", bytes(a.nbytes))
        xfer.copy(arr, v)
        assert arr.tobytes() == a.tobytes()
        mv = memoryview(bytearray(a.nbytes)).cast("f", (10, 100))
        xfer.copy(mv, v)
        assert mv.tobytes() == a.tobytes()
        xfer.copy(v, memoryview(arr))
        back = np.empty_like(a)
        xfer.copy(back, v)
        assert back.tobytes() == a.tobytes()


def test_host_to_host_and_byte_reinterpretation(ctx):
    a = rand(256, np.float64)
    dst = np.zeros(a.nbytes, np.uint8)            # same bytes, another dtype and shape
    t = xfer.copy_async(dst, a, ctx=ctx)
    assert t.kind == xfer.CopyKind.HOST_TO_HOST and t.nbytes == a.nbytes
    t.wait()
    assert dst.tobytes() == a.tobytes()


def test_dlpack_only_objects_as_source_and_destination(ctx):
    class OnlyDLPack:  # a producer with nothing but DLPack (NumPy's, which takes no max_version)
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, stream=None):
            return self._a.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    a = rand(5000, np.int32)
    out = np.zeros_like(a)
    with ctx.alloc(a.nbytes) as buf:
        v = buf.device_view(np.int32, a.shape)
        xfer.copy(v, OnlyDLPack(a))
        xfer.copy(OnlyDLPack(out), v)
    assert out.tobytes() == a.tobytes()


def test_dlpack_capsule_released_when_copy_is_done(ctx):
    """A host-backend DeviceView seen through DLPack only: its capsule lives until the copy ends."""
    class Wrapped:
        def __init__(self, view):
            self._v = view

        def __dlpack__(self, **kw):
            return self._v.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self._v.__dlpack_device__()

    a = rand(1 << 16, np.float32)
    gate = threading.Event()
    before = _dlpack.live_count()
    with ctx.alloc(a.nbytes) as buf, ctx.stream() as s:
        v = buf.device_view(np.float32, a.shape)
        xfer.copy(v, a, stream=s)
        out = np.zeros_like(a)
        s.launch_host_func(gate.wait)             # holds the stream: the copy stays queued
        t = xfer.copy_async(out, Wrapped(v), stream=s)
        assert _dlpack.live_count() == before + 1 and not t.done()
        gate.set()
        t.wait()
        gc.collect()
        assert _dlpack.live_count() == before
        assert out.tobytes() == a.tobytes()


def test_versioned_capsule_read_only_flag_is_honoured(ctx):
    a = rand(64, np.float32)

    class ReadOnlyProducer:  # DLPack 1.0 with DLPACK_FLAG_BITMASK_READ_ONLY
        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            assert max_version == (1, 0)
            return _dlpack.make_capsule(a.ctypes.data, _dlpack.kDLCPU, 0, a.dtype, a.shape, a, versioned=True,
                                        read_only=True)

        def __dlpack_device__(self):
            return (_dlpack.kDLCPU, 0)

    out = np.zeros_like(a)
    xfer.copy(out, ReadOnlyProducer(), ctx=ctx)   # a source may be read-only
    assert out.tobytes() == a.tobytes()
    with pytest.raises(ValueError, match="dst .* is read-only"):
        xfer.copy(ReadOnlyProducer(), out, ctx=ctx)
    gc.collect()
    assert not any(v[3] is a for v in _dlpack._live.values())  # every capsule's deleter ran


def test_to_device_and_to_host(ctx):
    a = rand(3 * 4 * 5, np.float64).reshape(3, 4, 5)
    v = xfer.to_device(a, ctx=ctx)
    assert isinstance(v, xfer.DeviceView) and v.shape == a.shape and v.dtype == a.dtype
    assert v.stream is ctx.default_stream
    b = xfer.to_host(v)
    assert b.shape == a.shape and b.dtype == a.dtype and b.tobytes() == a.tobytes()
    w = xfer.to_device(a, ctx=ctx, blocking=False)  # queued; a stays alive through the copy
    w.stream.synchronize()
    assert xfer.to_host(w).tobytes() == a.tobytes()
    raw = xfer.to_host(w.buffer)                    # a Buffer comes back as its bytes
    assert raw.dtype == np.uint8 and raw.tobytes() == a.tobytes()
    e = xfer.to_device(np.zeros((0, 3), np.float32), ctx=ctx)
    assert xfer.to_host(e).shape == (0, 3)


def test_zero_byte_copy_is_done_at_once(ctx):
    t = xfer.copy_async(np.zeros(0, np.float32), np.zeros((0, 4), np.int8), ctx=ctx)
    assert t.done() and t.nbytes == 0


def test_copy_methods_of_context(ctx):
    a = rand(100, np.int64)
    with ctx.alloc(a.nbytes) as buf:
        ctx.copy(buf, a)
        out = np.zeros_like(a)
        with ctx.copy_async(out, buf) as t:       # the with-block waits
            assert isinstance(t, xfer.Transfer)
        assert t.done() and out.tobytes() == a.tobytes()


def test_many_threads_on_one_stream(ctx):
    """Copies from 8 threads queue in one order; every byte arrives; nothing stays held."""
    n, per = 8, 40
    with ctx.alloc(n * per * 1024) as buf, ctx.stream() as s:
        srcs = [rand(1024, np.uint8, seed=i) for i in range(n * per)]
        dev = buf.device_view(np.uint8, (n * per, 1024))
        rows = np.frombuffer((ctypes.c_char * buf.nbytes).from_address(buf.device_ptr), np.uint8).reshape(n * per, 1024)

        def work(k):
            for j in range(per):
                i = k * per + j
                xfer.copy_async(rows[i], srcs[i], stream=s)  # row i of the (emulated) device memory

        threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        s.synchronize()
        assert s.pending == 0
        out = xfer.to_host(dev)
        for i in range(n * per):
            assert out[i].tobytes() == srcs[i].tobytes(), i


# ------------------------------------------------------------------------------ misuse
def test_size_one_array_against_larger_buffer_is_refused(ctx):
    with ctx.alloc(1 << 20) as buf:
        with pytest.raises(ValueError) as err:
            xfer.copy(buf, np.zeros(1, np.float32))
        msg = str(err.value)
        assert "1048576 bytes" in msg and " 4" in msg and "same byte size" in msg
        with pytest.raises(ValueError, match="holds 4 bytes"):
            xfer.copy(np.zeros(1, np.float32), buf)   # the other way round: no read past the end
        assert buf.handle                              # the buffer is intact and usable
        xfer.copy(buf, np.ones(1 << 20, np.uint8))


@pytest.mark.parametrize("dst,src", [
    (np.zeros(10, np.float32), np.zeros(11, np.float32)),
    (np.zeros(10, np.float32), np.zeros(10, np.float64)),   # same count, other itemsize
    (np.zeros((3, 4), np.int16), np.zeros((4, 4), np.int16)),
    (bytearray(7), np.zeros(8, np.uint8)),
])
def test_mismatched_sizes_are_refused(ctx, dst, src):
    with pytest.raises(ValueError, match=f"holds {memoryview(dst).nbytes} bytes.*{np.asarray(src).nbytes}"):
        xfer.copy(dst, src, ctx=ctx)


def test_strided_slices_are_refused_naming_strides(ctx):
    a = np.zeros((64, 32), np.float64)
    with ctx.alloc(a.nbytes) as buf:
        v = buf.device_view(np.float64, (64, 16))
        with pytest.raises(ValueError) as err:
            xfer.copy(v, a[:, ::2])
        msg = str(err.value)
        assert "not C-contiguous" in msg and "(256, 16)" in msg and "(128, 8)" in msg
        with pytest.raises(ValueError, match=r"strides \(8, 256\) bytes, where C order has \(512, 8\)"):
            xfer.copy(buf.device_view(np.float64, (32, 64)), a.T)  # transposed (F order)
        with pytest.raises(ValueError, match="not C-contiguous"):
            xfer.copy(a[::2], v)                  # as destination too
        mv = memoryview(bytearray(1024))[::2]
        with pytest.raises(ValueError, match=r"strides \(2,\)"):
            xfer.copy(mv, np.zeros(512, np.uint8), ctx=ctx)
    # an extent of 1 may have any stride: still one block
    b = np.zeros((4, 8), np.float32)[1:2, :]
    xfer.copy(b, np.ones((1, 8), np.float32), ctx=ctx)
    assert (b == 1).all()


def test_read_only_destinations_are_refused(ctx):
    src = np.ones(16, np.uint8)
    ro = np.zeros(16, np.uint8)
    ro.flags.writeable = False
    for dst in (ro, bytes(16), memoryview(bytes(16)), np.frombuffer(bytes(16), np.uint8)):
        with pytest.raises(ValueError, match="dst .* is read-only"):
            xfer.copy(dst, src, ctx=ctx)
    assert not ro.any()


class FakeCudaArray:
    """__cuda_array_interface__ of memory that does not exist: refused before it is touched."""

    def __init__(self, nbytes, device=0, version=3):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (0xdead0000, False),
                                         "version": version, "strides": None, "stream": None}
        self._device = device

    def __dlpack_device__(self):
        return (_dlpack.kDLCUDA, self._device)


def test_cuda_memory_with_host_context_is_refused(ctx):
    with pytest.raises(ValueError, match="CUDA device memory.*backend 'host'"):
        xfer.copy(FakeCudaArray(16), np.zeros(16, np.uint8), ctx=ctx)
    with pytest.raises(ValueError, match="CUDA device memory"):
        xfer.copy(np.zeros(16, np.uint8), FakeCudaArray(16), ctx=ctx)

    class FakeDLPackCuda:
        def __dlpack__(self, **kw):
            raise AssertionError("must not be exported")

        def __dlpack_device__(self):
            return (_dlpack.kDLCUDAManaged, 0)

    with pytest.raises(ValueError, match="CUDA device memory"):
        xfer.copy(np.zeros(16, np.uint8), FakeDLPackCuda(), ctx=ctx)

    class OpenCL(FakeDLPackCuda):
        def __dlpack_device__(self):
            return (4, 0)

    with pytest.raises(TypeError, match="kDLOpenCL"):
        xfer.copy(np.zeros(16, np.uint8), OpenCL(), ctx=ctx)


def test_objects_of_another_context_or_device_are_refused(ctx, monkeypatch):
    monkeypatch.setenv("XFER_HOST_DEVICES", "2")
    with xfer.Context("host", 0) as c0, xfer.Context("host", 1) as c1:
        with c0.alloc(64) as b0, c1.alloc(64) as b1:
            with pytest.raises(ValueError, match="is memory of <xfer.Context backend='host' device=1>"):
                xfer.copy(b0, b1)
            with pytest.raises(ValueError, match="not of this copy's"):
                xfer.copy(b0, np.zeros(64, np.uint8), ctx=c1)
            with c1.stream() as s1:
                with pytest.raises(ValueError, match="the stream is of"):
                    xfer.copy(np.zeros(64, np.uint8), np.ones(64, np.uint8), stream=s1, ctx=c0)


def test_what_is_not_an_array_or_stream_is_refused(ctx):
    with pytest.raises(TypeError, match="src of type int is not an array"):
        xfer.copy(np.zeros(4), 5, ctx=ctx)
    with pytest.raises(TypeError, match="dst of type str is not an array"):
        xfer.copy("abcd", np.zeros(4, np.uint8), ctx=ctx)
    with pytest.raises(TypeError, match="is not a stream"):
        xfer.copy(np.zeros(4), np.zeros(4), stream="default", ctx=ctx)
    with pytest.raises(TypeError, match="expected an xfer.Context"):
        xfer.copy(np.zeros(4), np.zeros(4), ctx="host")


def test_foreign_streams_are_not_supported_on_host(ctx):
    class TorchLikeStream:
        cuda_stream = 0x1234

    for stream in (0, 0x1234, TorchLikeStream()):
        with pytest.raises(xfer.Error) as err:
            xfer.copy(np.zeros(4), np.ones(4), stream=stream, ctx=ctx)
        assert err.value.status == xfer.Status.NOT_SUPPORTED and err.value.call == "xfer_stream_wrap"


def test_overlapping_ranges_are_refused_by_the_library(ctx):
    a = np.arange(200, dtype=np.int32)
    with pytest.raises(xfer.Error) as err:
        xfer.copy(a[:100], a[50:150], ctx=ctx)
    assert err.value.status == xfer.Status.INVALID_ARGUMENT
    assert (a == np.arange(200)).all()


def test_closed_objects_are_refused(ctx):
    buf = ctx.alloc(64)
    view = buf.device_view()
    buf.close()
    for endpoint in (buf, view):
        with pytest.raises(xfer.Error) as err:
            xfer.copy(endpoint, np.zeros(64, np.uint8))
        assert err.value.status == xfer.Status.INVALID_HANDLE
    s = ctx.stream()
    s.close()
    with pytest.raises(xfer.Error) as err:
        xfer.copy(np.zeros(4), np.ones(4), stream=s)
    assert err.value.status == xfer.Status.INVALID_HANDLE


# ------------------------------------------------------------------------------ lifetimes
class Tracked(np.ndarray):
    """A NumPy array type whose instances can be watched with weakref and count as distinct."""


def tracked(n, fill):
    return np.full(n, fill, np.uint8).view(Tracked)


def test_dead_temporary_source_lives_until_synchronize(ctx):
    n = 1 << 20
    gate = threading.Event()
    with ctx.alloc(n) as buf, ctx.stream() as s:
        s.launch_host_func(gate.wait)             # the stream cannot reach the copy yet
        temp = tracked(n, 7)
        ref = weakref.ref(temp)
        t = xfer.copy_async(buf, temp, stream=s)
        del temp, t                               # no reference of the program's is left
        gc.collect()
        assert ref() is not None, "a queued copy's source was freed"
        assert s.pending == 1
        gate.set()
        s.synchronize()
        gc.collect()
        assert ref() is None, "the source outlived the synchronisation"
        assert s.pending == 0
        out = xfer.to_host(buf.device_view())
        assert (out == 7).all()


def test_dead_temporary_destination_lives_until_wait(ctx):
    n = 1 << 16
    gate = threading.Event()
    with ctx.alloc(n) as buf, ctx.stream() as s:
        xfer.copy(buf, np.full(n, 3, np.uint8), stream=s)
        s.launch_host_func(gate.wait)
        dst = tracked(n, 0)
        ref = weakref.ref(dst)
        t = xfer.copy_async(dst, buf, stream=s)
        assert t.dst is dst and t.src is buf
        del dst
        gc.collect()
        assert ref() is not None and not t.done()
        gate.set()
        t.event.synchronize()                     # done, but xfer was not asked: still held
        assert ref() is not None and (ref() == 3).all()
        t.wait()
        gc.collect()
        assert t.done() and t.dst is None and ref() is None


def test_finished_copies_are_released_by_the_next_copy(ctx):
    """A copy known done only to the device (the program never asked xfer) is released by the
    next copy on its stream, so a stream used without synchronising does not hoard memory."""
    n = 4096
    with ctx.alloc(n) as buf, ctx.stream() as s:
        temp = tracked(n, 1)
        ref = weakref.ref(temp)
        t = xfer.copy_async(buf, temp, stream=s)
        ev = t.event
        del temp, t
        ev.synchronize()                          # xfer is not told: the copy stays held
        gc.collect()
        assert ref() is not None
        xfer.copy_async(buf, np.zeros(n, np.uint8), stream=s)  # finds it done
        gc.collect()
        assert ref() is None
        s.synchronize()


def test_earlier_copies_are_released_in_stream_order(ctx):
    n = 4096
    gate = threading.Event()
    with ctx.alloc(n) as buf, ctx.stream() as s:
        s.launch_host_func(gate.wait)
        temps = [tracked(n, i) for i in range(5)]
        refs = [weakref.ref(x) for x in temps]
        ts = [xfer.copy_async(buf, x, stream=s) for x in temps]
        del temps
        gc.collect()
        assert all(r() is not None for r in refs) and s.pending == 5
        gate.set()
        ts[2].wait()                              # done: so are the two queued before it
        gc.collect()
        assert [r() is None for r in refs[:3]] == [True] * 3
        assert all(t.done() for t in ts[:3])
        s.synchronize()
        gc.collect()
        assert all(r() is None for r in refs)


def test_closing_the_context_waits_then_releases():
    ctx = xfer.Context("host", 0)
    gate = threading.Event()
    buf = ctx.alloc(1 << 16)
    s = ctx.stream()
    s.launch_host_func(gate.wait)
    temp = tracked(1 << 16, 9)
    ref = weakref.ref(temp)
    t = xfer.copy_async(buf, temp, stream=s)
    del temp
    threading.Timer(0.2, gate.set).start()        # xfer_close waits for the stream meanwhile
    ctx.close()
    gc.collect()
    assert ref() is None and t.done()


def test_dropped_stream_waits_then_releases(ctx):
    gate = threading.Event()
    buf = ctx.alloc(1 << 16)
    s = ctx.stream()
    s.launch_host_func(gate.wait)
    temp = tracked(1 << 16, 4)
    ref = weakref.ref(temp)
    t = xfer.copy_async(buf, temp, stream=s)
    assert t.stream is s
    del temp
    threading.Timer(0.2, gate.set).start()
    del s                                         # Stream.__del__: xfer_stream_destroy waits first
    gc.collect()
    assert ref() is None and t.done() and t.stream is None
    assert (xfer.to_host(buf.device_view()) == 4).all()


# ------------------------------------------------------------------------------ exports of CUDA backends
class StandInContext:
    """What DeviceView reads of a context, for a CUDA backend this machine may not have."""

    def __init__(self, backend, caps, device=0):
        self.backend, self.device, self.device_kind, self.caps = backend, device, xfer.DeviceKind.CUDA, caps


class StandInBuffer:
    def __init__(self, ctx):
        self.context, self.nbytes = ctx, 4096
        self.device_ptr, self.host_ptr = 0x7f0000000000, 0x7e0000000000


def exported(capsule):
    imp = _dlpack.import_capsule(capsule)
    out = (imp.device_type, imp.device_id, imp.ptr, imp.shape)
    imp.close()
    return out


MANAGED = xfer.Caps.SHARED_VIEW | xfer.Caps.MIGRATES
ZEROCOPY = xfer.Caps.SHARED_VIEW | xfer.Caps.NO_COPY
PINNED = xfer.Caps.ASYNC_COPY


def test_managed_view_exports_as_cuda_unless_asked_for_managed():
    view = xfer.DeviceView(StandInBuffer(StandInContext("managed", MANAGED, device=1)), np.float32, (1024,))
    assert view.__dlpack_device__() == (_dlpack.kDLCUDA, 1)   # what torch, JAX, CuPy all take
    before = _dlpack.live_count()
    assert exported(view.__dlpack__()) == (_dlpack.kDLCUDA, 1, 0x7f0000000000, (1024,))
    assert exported(view.__dlpack__(dl_device=(_dlpack.kDLCUDAManaged, 1)))[:2] == (_dlpack.kDLCUDAManaged, 1)
    assert exported(view.__dlpack__(dl_device=(_dlpack.kDLCPU, 0)))[:3] == (_dlpack.kDLCPU, 0, 0x7f0000000000)
    with pytest.raises(BufferError, match=r"cannot be exported as \(kDLCUDA, 0\)"):
        view.__dlpack__(dl_device=(_dlpack.kDLCUDA, 0))       # another device
    with pytest.raises(BufferError, match="copy=True"):
        view.__dlpack__(copy=True)
    cap = view.__dlpack__(max_version=(1, 0))                 # DLPack 1.0 asked: versioned
    imp = _dlpack.import_capsule(cap)
    assert imp._used == b"used_dltensor_versioned" and not imp.read_only
    imp.close()
    gc.collect()
    assert _dlpack.live_count() == before
    cai = view.__cuda_array_interface__
    assert cai == {"shape": (1024,), "typestr": "<f4", "data": (0x7f0000000000, False), "version": 3,
                   "strides": None, "stream": None}


def test_zerocopy_and_pinned_view_exports():
    zc = xfer.DeviceView(StandInBuffer(StandInContext("zerocopy", ZEROCOPY)), np.uint8)
    assert zc.__dlpack_device__() == (_dlpack.kDLCUDA, 0)
    assert exported(zc.__dlpack__(dl_device=(_dlpack.kDLCPU, 0)))[:3] == (_dlpack.kDLCPU, 0, 0x7e0000000000)
    assert exported(zc.__dlpack__(dl_device=(_dlpack.kDLCUDAHost, 0)))[0] == _dlpack.kDLCUDAHost
    pinned = xfer.DeviceView(StandInBuffer(StandInContext("pinned", PINNED)), np.uint8)
    with pytest.raises(BufferError, match=r"\(kDLCUDA, 0\)$"):
        pinned.__dlpack__(dl_device=(_dlpack.kDLCPU, 0))      # cudaMalloc memory: device only
    with pytest.raises(BufferError):
        pinned.__dlpack__(dl_device=(_dlpack.kDLCUDAManaged, 0))


def test_cuda_array_interface_stream_is_never_zero():
    class LegacyStream:
        native = 0

    view = xfer.DeviceView(StandInBuffer(StandInContext("pinned", PINNED)), np.int16, (2, 8), stream=LegacyStream())
    cai = view.__cuda_array_interface__
    assert cai["stream"] == 1 and cai["shape"] == (2, 8) and cai["typestr"] == "<i2"


# ------------------------------------------------------------------------------ processes
def run_python(code, **env):
    full = dict(os.environ, PYTHONPATH=PACKAGE_ROOT, **env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=120)


def test_default_context_is_opened_lazily_and_closed_at_exit():
    # The program's own exit handler, registered before xfer's, runs after it: the queued copy is
    # done and its objects released by then.
    code = """
import atexit, numpy as np, xfer
out = np.zeros(1 << 20, np.uint8)
atexit.register(lambda: print("after xfer's exit handler:", int(out.sum()), xfer._copy._defaults == {}))
ctx = xfer.default_context()
assert ctx is xfer.default_context() and ctx.backend == "host", ctx
t = xfer.copy_async(out, np.ones(1 << 20, np.uint8))   # no ctx: the default context
assert t.stream is ctx.default_stream
print("queued")
"""
    r = run_python(code, XFER_BACKEND="host")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["queued", f"after xfer's exit handler: {1 << 20} True"], r.stdout


@pytest.mark.parametrize("setting", ["missing file", "unset"])
def test_missing_library_error_names_xfer_library(setting):
    env = {"XFER_LIBRARY": "/nonexistent/libxfer.so"} if setting == "missing file" else {"LD_LIBRARY_PATH": ""}
    code = """
import os, xfer
if os.environ.get("XFER_LIBRARY") == "": del os.environ["XFER_LIBRARY"]
try:
    xfer.Context()
except OSError as e:
    assert isinstance(e, xfer.LibraryNotFoundError), type(e)
    print(e)
else:
    print("LOADED")
"""
    if setting == "unset":
        env["XFER_LIBRARY"] = ""
    r = run_python(code, **env)
    assert r.returncode == 0, r.stderr
    msg = r.stdout
    if msg.strip() == "LOADED":
        pytest.skip("libxfer.so.1 is installed where the loader finds it")
    assert "XFER_LIBRARY" in msg and "LD_LIBRARY_PATH" in msg and "export XFER_LIBRARY=" in msg, msg
    if setting == "missing file":
        assert "/nonexistent/libxfer.so" in msg
    else:
        assert "libxfer.so.1" in msg and "XFER_LIBRARY is not set" in msg


def tree_snapshot(root):
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            out[os.path.relpath(path, root)] = os.stat(path).st_mtime_ns if os.path.isfile(path) else None
    return out


def test_pip_install_offline_leaves_the_tree_clean(tmp_path):
    """`pip install bindings/python` into a fresh virtual environment, offline (--no-index): the
    build backend needs nothing from an index, NumPy comes from the system, and nothing is
    written into the source tree (no build/, no *.egg-info, no byte code)."""
    venv = tmp_path / "venv"
    made = subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                          capture_output=True, text=True, timeout=120)
    if made.returncode != 0:
        pytest.skip(f"no venv with pip here (python3-venv): {made.stderr.strip()[-200:]}")
    before = tree_snapshot(PACKAGE_ROOT)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    r = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", "--no-cache-dir", PACKAGE_ROOT],
                       capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert tree_snapshot(PACKAGE_ROOT) == before
    check = ("import numpy as np, xfer; a = np.arange(10.0); "
             "assert (xfer.to_host(xfer.to_device(a)) == a).all(); print(xfer.__file__)")
    r = subprocess.run([str(venv / "bin" / "python"), "-c", check], capture_output=True, text=True, timeout=120,
                       env=dict(env, XFER_BACKEND="host"), cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(str(venv)), r.stdout   # the installed copy, not the tree


def test_build_backend_reads_pyproject_without_tomllib():
    """Pythons before 3.11 have no tomllib: the backend's own reader must agree with it."""
    sys.path.insert(0, os.path.join(PACKAGE_ROOT, "build_backend"))
    try:
        import xfer_build
    finally:
        sys.path.pop(0)
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(PACKAGE_ROOT, "pyproject.toml"), "rb") as f:
        raw = f.read()
    assert xfer_build._parse_toml_subset(raw.decode()) == tomllib.loads(raw.decode())
    meta = xfer_build._metadata(xfer_build._project())
    assert "Name: xfer\n" in meta and "Requires-Dist: numpy>=1.22\n" in meta
