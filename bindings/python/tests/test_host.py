# SPDX-License-Identifier: Apache-2.0
"""The Python binding on the `host` backend: bytes round-tripped and compared, errors with
status and message, 64-bit sizes and pointers intact, NumPy and DLPack views without copies."""
import ctypes
import gc

import numpy as np
import pytest

import xfer
from xfer import _capi, _dlpack

GiB = 1 << 30


@pytest.fixture
def ctx():
    with xfer.Context("host", 0) as c:
        yield c


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint8])
def test_round_trip_every_element(ctx, dtype):
    rng = np.random.default_rng(7)
    n = 100_003
    with ctx.alloc(n * np.dtype(dtype).itemsize) as buf, ctx.stream() as s:
        a = buf.host_array(dtype)
        assert a.shape == (n,) and a.dtype == dtype
        expect = (rng.random(n) * 1000 - 500).astype(dtype)
        a[:] = expect
        buf.to_device(s)
        s.synchronize()
        a[:] = 0
        buf.to_host(s)
        s.synchronize()
        np.testing.assert_array_equal(a, expect)


def test_host_array_shapes_and_partial_copies(ctx):
    with ctx.alloc(6 * 8 * 4) as buf, ctx.stream() as s:
        a = buf.host_array(np.float32, (6, 8))
        a[:] = np.arange(48, dtype=np.float32).reshape(6, 8)
        dev = np.frombuffer((ctypes.c_char * buf.nbytes).from_address(buf.device_ptr), np.float32).reshape(6, 8)
        buf.copy_async(xfer.Direction.TO_DEVICE, s, offset=2 * 8 * 4, nbytes=8 * 4)  # row 2 only
        e = ctx.event()
        e.record(s)
        e.synchronize()
        np.testing.assert_array_equal(dev[2], np.arange(16, 24, dtype=np.float32))
        with pytest.raises(xfer.Error) as err:
            buf.host_array(np.float64, (7, 8))
        assert err.value.status == xfer.Status.OUT_OF_BOUNDS


def test_errors_carry_status_and_message(ctx):
    with ctx.alloc(64) as buf, ctx.stream() as s:
        with pytest.raises(xfer.Error) as err:
            buf.copy_async(xfer.Direction.TO_DEVICE, s, offset=60, nbytes=8)
        assert err.value.status == xfer.Status.OUT_OF_BOUNDS
        assert err.value.call == "xfer_copy_async"
        assert str(err.value).startswith("xfer_copy_async: XFER_ERROR_OUT_OF_BOUNDS: ")
        assert "60" in err.value.message and "64" in err.value.message
        with pytest.raises(xfer.Error) as err:
            buf.copy_async(7, s)
        assert err.value.status == xfer.Status.INVALID_ARGUMENT
        # the buffer still works
        buf.host_array()[:] = 9
        buf.to_device(s)
        s.synchronize()
    with pytest.raises(xfer.Error) as err:
        xfer.Context("no-such-backend", 0)
    assert err.value.status == xfer.Status.BACKEND_NOT_FOUND
    assert "no-such-backend" in str(err.value)
    with pytest.raises(xfer.Error) as err:
        ctx.alloc(0)
    assert err.value.status == xfer.Status.INVALID_SIZE


def test_every_function_is_declared():
    lib = _capi.lib()
    for name, (restype, argtypes) in _capi.FUNCTIONS.items():
        fn = getattr(lib, name)
        assert fn.restype is restype, name
        assert fn.argtypes == argtypes, name
    # size_t and pointers are 64-bit here: nothing may be declared narrower.
    assert ctypes.sizeof(ctypes.c_size_t) == 8 and ctypes.sizeof(ctypes.c_void_p) == 8


def test_sizes_above_4_gib_pass_intact(ctx):
    """5 GiB offsets and sizes reach the library unchanged (truncation would leave 1 GiB)."""
    with ctx.alloc(4096) as buf, ctx.stream() as s:
        for offset, nbytes in [(5 * GiB, 1), (0, 5 * GiB + 3), (4 * GiB, 4096)]:
            with pytest.raises(xfer.Error) as err:
                buf.copy_async(xfer.Direction.TO_DEVICE, s, offset=offset, nbytes=nbytes)
            assert err.value.status == xfer.Status.OUT_OF_BOUNDS, err.value
            assert f"offset {offset} + bytes {nbytes}" in err.value.message, err.value.message
        # a size that size_t cannot hold is refused before ctypes could wrap it
        with pytest.raises(xfer.Error) as err:
            buf.copy_async(xfer.Direction.TO_DEVICE, s, offset=0, nbytes=1 << 64)
        assert err.value.status == xfer.Status.INVALID_SIZE
    # The raw C function gets the full 64-bit value too.
    st = _capi.lib().xfer_alloc(ctx.handle, 1 << 62, 0, ctypes.byref(_capi.xfer_buffer()))
    assert st == xfer.Status.OUT_OF_MEMORY
    assert str(1 << 62) in xfer.last_error()


def test_64_bit_pointers_pass_intact(ctx):
    n = 8 << 20
    src = np.random.default_rng(3).integers(0, 255, n, dtype=np.uint8)
    dst = np.zeros(n, np.uint8)
    assert src.ctypes.data > 1 << 32 and dst.ctypes.data > 1 << 32  # mmap'd: above 4 GiB
    with ctx.alloc(n) as buf, ctx.stream() as s:
        assert buf.host_ptr > 1 << 32 and buf.device_ptr > 1 << 32
        assert buf.host_array().ctypes.data == buf.host_ptr
        ctx.memcpy_async(buf.host_ptr, src.ctypes.data, n, xfer.CopyKind.HOST_TO_HOST, s)
        ctx.memcpy_async(dst.ctypes.data, buf.host_ptr, n, xfer.CopyKind.HOST_TO_HOST, s)
        s.synchronize()
        np.testing.assert_array_equal(dst, src)
        half = n // 2
        dst[:] = 0
        ctx.memcpy_batch_async([dst.ctypes.data, dst.ctypes.data + half], [src.ctypes.data, src.ctypes.data + half],
                               [half, n - half], xfer.CopyKind.HOST_TO_HOST, s)
        s.synchronize()
        np.testing.assert_array_equal(dst, src)


def test_handles_close_once_and_context_close_invalidates_children():
    ctx = xfer.Context("host", 0)
    buf = ctx.alloc(1024)
    s = ctx.stream()
    ctx.close()
    with pytest.raises(xfer.Error) as err:
        buf.copy_async(xfer.Direction.TO_DEVICE, s)
    assert err.value.status == xfer.Status.INVALID_HANDLE
    buf.close()  # already released by xfer_close: nothing to do, no error
    s.close()
    ctx.close()


def test_streams_events_and_host_functions(ctx):
    order = []
    with ctx.stream() as a, ctx.stream() as b, ctx.event() as start, ctx.event() as end:
        start.record(a)
        a.launch_host_func(lambda: order.append("a"))
        end.record(a)
        b.wait(end)
        b.launch_host_func(lambda: order.append("b"))
        b.synchronize()
        assert order == ["a", "b"]
        assert end.query() and a.query()
        assert xfer.Event.elapsed_ms(start, end) >= 0
        assert a.native != 0
    with ctx.event(xfer.EventFlags.DISABLE_TIMING) as untimed, ctx.stream() as s:
        untimed.record(s)
        untimed.synchronize()
        with pytest.raises(xfer.Error) as err:
            xfer.Event.elapsed_ms(untimed, untimed)
        assert err.value.status == xfer.Status.INVALID_STATE


def test_library_queries(ctx):
    assert xfer.version()[0] == _capi.XFER_VERSION_MAJOR
    names = [b["name"] for b in xfer.backends()]
    assert "host" in names
    assert any(p["name"] == "backend" and p["section"] == "" for p in xfer.params())
    assert ctx.device_kind == xfer.DeviceKind.HOST
    assert ctx.device_info()["total_memory"] > 0
    assert xfer.status_string(xfer.Status.OUT_OF_BOUNDS) == "XFER_ERROR_OUT_OF_BOUNDS"


def test_calibrate_on_host_is_not_supported(ctx):
    """host measures no copy path to choose between: xfer_calibrate refuses, forced or not."""
    assert xfer.Calibration._fields == ("measured", "seconds", "file", "json")
    for force in (False, True):
        with pytest.raises(xfer.Error) as err:
            ctx.calibrate(force=force)
        assert err.value.status == xfer.Status.NOT_SUPPORTED and err.value.call == "xfer_calibrate"
        assert "nothing to calibrate" in err.value.message, err.value.message
        assert "nothing to calibrate" in xfer.last_error()
    # The raw call: the struct as xfer.h lays it out on LP64, struct_size and the flags checked.
    lib = _capi.lib()
    info = _capi.xfer_calibration_info()
    assert ctypes.sizeof(info) == 8 + 8 + 8 + 2 * 8  # int `measured` padded to 8
    assert lib.xfer_calibrate(ctx.handle, 0, ctypes.byref(info)) == xfer.Status.INVALID_ARGUMENT  # struct_size 0
    assert f"{ctypes.sizeof(info)} in this xfer.h" in xfer.last_error(), xfer.last_error()
    info.struct_size = ctypes.sizeof(info)
    assert lib.xfer_calibrate(ctx.handle, 0x2, ctypes.byref(info)) == xfer.Status.INVALID_ARGUMENT
    assert "unknown flag bits" in xfer.last_error()
    assert lib.xfer_calibrate(ctx.handle, _capi.XFER_CALIBRATE_FORCE, ctypes.byref(info)) == xfer.Status.NOT_SUPPORTED
    closed = xfer.Context("host", 0)
    closed.close()
    with pytest.raises(xfer.Error) as err:
        closed.calibrate()
    assert err.value.status == xfer.Status.INVALID_HANDLE


def test_settings_of_a_host_context_are_its_backends_parameters(ctx, monkeypatch):
    """host derives nothing: the values a context uses are the host section of xfer.params(),
    value for value, none of them derived."""
    settings = ctx.settings()
    params = [p for p in xfer.params() if p["section"] == "host"]
    assert {"device_memory", "devices"} <= {p["name"] for p in params}
    assert [s.name for s in settings] == [p["name"] for p in params]
    for s, p in zip(settings, params):
        assert isinstance(s, xfer.Setting) and s.derived is False and s.section == "host"
        assert (s.env, s.type, s.value, s.default, s.help, s.source) == \
            (p["env"], p["type"], p["value"], p["default"], p["help"], p["source"]), s.name
        assert isinstance(s.source, xfer.ParamSource) and s.source != xfer.ParamSource.CALIBRATION
    # The raw calls: the count, an index out of range either way, *derived may be NULL.
    lib = _capi.lib()
    count = ctypes.c_int(-1)
    assert lib.xfer_context_setting_count(ctx.handle, ctypes.byref(count)) == xfer.Status.SUCCESS
    assert count.value == len(settings)
    info = _capi.xfer_param_info()
    derived = ctypes.c_int(-1)
    for index in (count.value, -1):
        st = lib.xfer_context_get_setting(ctx.handle, index, ctypes.byref(info), ctypes.byref(derived))
        assert st == xfer.Status.INVALID_ARGUMENT
        assert f"index {index} is out of range" in xfer.last_error(), xfer.last_error()
    assert lib.xfer_context_get_setting(ctx.handle, 0, None, ctypes.byref(derived)) == xfer.Status.INVALID_ARGUMENT
    assert lib.xfer_context_get_setting(ctx.handle, 0, ctypes.byref(info), None) == xfer.Status.SUCCESS
    assert info.name.decode() == settings[0].name
    assert lib.xfer_context_setting_count(ctx.handle, None) == xfer.Status.INVALID_ARGUMENT
    # A value from the environment: a context opened after it was set uses it and says so; an
    # open context keeps what it opened with.
    monkeypatch.setenv("XFER_HOST_DEVICES", "3")
    with xfer.Context("host", 2) as other:
        devices = {s.name: s for s in other.settings()}["devices"]
        assert (devices.value, devices.default, devices.source, devices.derived) == \
            ("3", "1", xfer.ParamSource.ENV, False)
    assert ctx.settings() == settings
    closed = xfer.Context("host", 0)
    closed.close()
    with pytest.raises(xfer.Error) as err:
        closed.settings()
    assert err.value.status == xfer.Status.INVALID_HANDLE


def test_device_view_on_host_is_dlpack_cpu_without_copy(ctx):
    n = 4097
    with ctx.alloc(n * 8) as buf, ctx.stream() as s:
        buf.host_array(np.float64)[:] = np.linspace(-1, 1, n)
        buf.to_device(s)
        view = buf.device_view(np.float64, (n,), stream=s)
        assert not hasattr(view, "__cuda_array_interface__")  # CUDA backends only
        assert view.__dlpack_device__() == (_dlpack.kDLCPU, 0)
        before = _dlpack.live_count()
        x = np.from_dlpack(view)
        assert x.ctypes.data == buf.device_ptr  # the device memory itself, no copy
        np.testing.assert_array_equal(x, np.linspace(-1, 1, n))
        buf.host_array(np.float64)[:] *= 2      # a later copy to the device view...
        buf.to_device(s)
        s.synchronize()
        np.testing.assert_array_equal(x, 2 * np.linspace(-1, 1, n))  # ...shows in the imported array
        del x
        gc.collect()
        assert _dlpack.live_count() == before
        capsule = view.__dlpack__()             # never consumed: released by its destructor
        assert _dlpack.live_count() == before + 1
        del capsule
        gc.collect()
        assert _dlpack.live_count() == before
        m = np.from_dlpack(buf.device_view(np.int32, (2, 3)))
        assert m.shape == (2, 3) and m.strides == (12, 4)


def test_register_host_memory_counts_and_unregisters(ctx):
    """xfer_register on host keeps bookkeeping only: the counters follow, statuses as on CUDA."""
    assert set(ctx.registration_stats()) == {name for name, _ in _capi.xfer_registration_stats._fields_}
    assert ctx.registration_stats()["registered_ranges"] == 0
    a = np.arange(100_000, dtype=np.float64)
    with ctx.register(a) as reg:
        assert reg.registered and reg.ptr == a.ctypes.data and reg.nbytes == a.nbytes
        stats = ctx.registration_stats()
        assert stats["registered_ranges"] == 1 and stats["registered_bytes"] == a.nbytes
        # a registered array still copies (and stays the caller's)
        dst = np.zeros_like(a)
        with ctx.stream() as s:
            ctx.memcpy_async(dst.ctypes.data, a.ctypes.data, a.nbytes, xfer.CopyKind.HOST_TO_HOST, s)
            s.synchronize()
        np.testing.assert_array_equal(dst, a)
        # the same range (or part of it) again: XFER_ERROR_INVALID_STATE, nothing changes
        with pytest.raises(xfer.Error) as err:
            ctx.register(a)
        assert err.value.status == xfer.Status.INVALID_STATE and err.value.call == "xfer_register"
        with pytest.raises(xfer.Error) as err:
            ctx.register(a.ctypes.data + 4096, 4096)
        assert err.value.status == xfer.Status.INVALID_STATE
        assert ctx.registration_stats()["registered_ranges"] == 1
        # read-only, from the buffer protocol, part of an object, next to the first
        b = bytearray(8192)
        with ctx.register(b, nbytes=4096, read_only=True) as ro:
            assert ro.read_only and ro.nbytes == 4096
            stats = ctx.registration_stats()
            assert stats["registered_ranges"] == 2 and stats["registered_bytes"] == a.nbytes + 4096
    assert not reg.registered
    stats = ctx.registration_stats()
    assert stats["registered_ranges"] == 0 and stats["registered_bytes"] == 0
    assert stats["cache_limit_bytes"] == 0  # host has no registration cache
    reg.close()  # once only: nothing to do now
    # unregistering what is not registered: XFER_ERROR_INVALID_ARGUMENT
    st = _capi.lib().xfer_unregister(ctx.handle, a.ctypes.data)
    assert st == xfer.Status.INVALID_ARGUMENT


def test_register_bad_arguments(ctx):
    with pytest.raises(xfer.Error) as err:
        ctx.register(np.zeros(0, np.float32))      # 0 bytes
    assert err.value.status == xfer.Status.INVALID_SIZE
    with pytest.raises(xfer.Error) as err:
        ctx.register(0, 4096)                      # NULL
    assert err.value.status == xfer.Status.INVALID_ARGUMENT
    a = np.zeros((64, 64), np.float32)
    with pytest.raises(xfer.Error) as err:
        ctx.register(a[:, ::2])                    # strided: not one range
    assert err.value.status == xfer.Status.INVALID_ARGUMENT
    with pytest.raises(xfer.Error) as err:
        ctx.register(a, nbytes=a.nbytes + 1)
    assert err.value.status == xfer.Status.OUT_OF_BOUNDS
    st = _capi.lib().xfer_register(ctx.handle, a.ctypes.data, a.nbytes, 0x80)  # unknown flag bit
    assert st == xfer.Status.INVALID_ARGUMENT
    assert ctx.registration_stats()["registered_ranges"] == 0


def test_context_close_unregisters_what_is_left():
    ctx = xfer.Context("host", 0)
    a = np.ones(4096, np.uint8)
    reg = ctx.register(a)
    ctx.close()
    assert not reg.registered
    reg.close()  # released by xfer_close: no error
    with xfer.Context("host", 0) as again:   # a new context may register the same memory
        with again.register(a):
            assert again.registration_stats()["registered_ranges"] == 1
