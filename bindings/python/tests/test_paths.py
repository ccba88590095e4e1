# SPDX-License-Identifier: Apache-2.0
"""Which path each copy took, through the Python layer on the `host` backend: statistics
counted exactly and reset, the copy observer (its records, its lifetime, its exceptions kept out
of the library), the slow-path policy; and strict mode refusing for real, with SlowPathError and
nothing copied, on the core tests' mock plugin that reports slow paths (where CTest names its
folder in XFER_TEST_MOCK_PATHS_DIR)."""
import gc
import os
import sys
import threading

import numpy as np
import pytest

import xfer
from xfer import _capi

MiB = 1 << 20


@pytest.fixture
def ctx():
    with xfer.Context("host", 0) as c:
        yield c


def test_names_of_paths_and_reasons():
    assert xfer.path_name(xfer.CopyPath.HOST_MEMCPY) == "host_memcpy"
    assert xfer.path_name(xfer.CopyPath.DRIVER_PAGEABLE) == "driver_pageable"
    assert xfer.path_name(_capi.XFER_PATH_COUNT) == "unknown"
    assert xfer.reason_name(xfer.PathReason.CACHE_FULL) == "cache_full"
    assert xfer.reason_name(99) == "unknown"
    # Every path has its own name; the *_COUNT sizes are no members.
    names = {xfer.path_name(p) for p in xfer.CopyPath}
    assert len(names) == len(xfer.CopyPath) == _capi.XFER_PATH_COUNT and "unknown" not in names
    assert len(xfer.PathReason) == _capi.XFER_REASON_COUNT
    reasons = [xfer.reason_name(r) for r in xfer.PathReason]
    assert len(set(reasons)) == _capi.XFER_REASON_COUNT and "unknown" not in reasons
    assert reasons[-3:] == ["one_off", "reuse", "measured_fastest"]  # the calibration's reasons
    assert [xfer.PathReason.ONE_OFF, xfer.PathReason.REUSE, xfer.PathReason.MEASURED_FASTEST] == [9, 10, 11]
    assert xfer.reason_name(_capi.XFER_REASON_COUNT) == "unknown"
    assert [p.name for p in xfer.SlowPath] == ["ALLOW", "WARN", "REFUSE"]
    big = _capi.XFER_SLOW_PATH_MIN_BYTES
    assert xfer.path_is_slow(xfer.CopyPath.DRIVER_PAGEABLE, xfer.PathReason.NO_FASTER_PATH, big)
    assert not xfer.path_is_slow(xfer.CopyPath.DRIVER_PAGEABLE, xfer.PathReason.NO_FASTER_PATH, big - 1)
    assert not xfer.path_is_slow(xfer.CopyPath.DRIVER_PAGEABLE, xfer.PathReason.BELOW_CROSSOVER, 64 * big)
    assert not xfer.path_is_slow(xfer.CopyPath.HOST_MEMCPY, xfer.PathReason.MEMORY, 64 * big)
    # A reason that says the path is the fastest one measured for the copy makes nothing slow.
    for reason in (xfer.PathReason.ONE_OFF, xfer.PathReason.REUSE, xfer.PathReason.MEASURED_FASTEST):
        for path in (xfer.CopyPath.DRIVER_PAGEABLE, xfer.CopyPath.NEW_REGISTRATION):
            assert not xfer.path_is_slow(path, reason, 64 * big), (path, reason)
    assert xfer.path_is_slow(xfer.CopyPath.NEW_REGISTRATION, xfer.PathReason.FIRST_USE, big)
    with pytest.raises(xfer.Error) as err:
        xfer.path_is_slow(xfer.CopyPath.HOST_MEMCPY, xfer.PathReason.MEMORY, 1 << 64)
    assert err.value.status == xfer.Status.INVALID_SIZE


def test_stats_count_every_host_copy_exactly_and_reset(ctx):
    st = ctx.stats()
    assert set(st) == {name for name, _ in _capi.xfer_context_stats._fields_} - {"struct_size"}
    assert st["version"] == _capi.XFER_CONTEXT_STATS_VERSION and st["path_count"] == _capi.XFER_PATH_COUNT
    assert st["calls"] == 0 and st["paths"] == {}
    n, nbytes = 5, 3000
    src = np.arange(70_000, dtype=np.uint8)
    dst = np.zeros_like(src)
    with ctx.alloc(nbytes) as buf, ctx.stream() as s:
        buf.host_array()[:] = 0x3c
        for _ in range(n):
            buf.to_device(s)                                   # xfer_copy_async, nbytes each
        buf.copy(xfer.Direction.TO_HOST, offset=96, nbytes=1000)
        ctx.memcpy_async(dst.ctypes.data, src.ctypes.data, src.nbytes, xfer.CopyKind.HOST_TO_HOST, s)
        ctx.memcpy_batch_async([dst.ctypes.data, dst.ctypes.data + 100], [src.ctypes.data, src.ctypes.data + 100],
                               [10, 20], xfer.CopyKind.HOST_TO_HOST, s)
        s.synchronize()
        np.testing.assert_array_equal(dst, src)
        st = ctx.stats()
        assert st["calls"] == n + 3
        assert list(st["paths"]) == ["host_memcpy"]  # only the paths taken
        memcpy = st["paths"]["host_memcpy"]
        assert memcpy["copies"] == n + 1 + 1 + 2     # a batch counts its entries
        assert memcpy["bytes"] == n * nbytes + 1000 + src.nbytes + 30
        assert memcpy["host_ns"] > 0
        assert st["slow_copies"] == 0 and st["refused_calls"] == 0

        ctx.reset_stats()
        st = ctx.stats()
        assert st["calls"] == 0 and st["paths"] == {}
        assert all(v == 0 for k, v in st.items() if k not in ("version", "path_count", "paths"))
        buf.copy(xfer.Direction.TO_DEVICE, nbytes=17)
        paths = ctx.stats()["paths"]
        assert list(paths) == ["host_memcpy"]
        assert (paths["host_memcpy"]["copies"], paths["host_memcpy"]["bytes"]) == (1, 17)


def test_registrations_are_counted(ctx):
    a = np.zeros(3 * 4096, np.uint8)
    with ctx.register(a):
        st = ctx.stats()
        assert (st["registrations"], st["registered_bytes"]) == (1, a.nbytes)
        assert st["unregistrations"] == 0
    st = ctx.stats()
    assert (st["unregistrations"], st["unregistered_bytes"]) == (1, a.nbytes)


def test_observer_gets_one_record_per_call_and_can_be_removed(ctx):
    seen = []
    ctx.set_copy_observer(lambda r: seen.append(r))  # the only reference: the context keeps it
    gc.collect()
    src = np.full(300, 7, np.uint8)
    dst = np.zeros(300, np.uint8)
    with ctx.alloc(8192) as buf, ctx.stream() as s:
        buf.copy_async(xfer.Direction.TO_DEVICE, s, offset=0, nbytes=5000)
        buf.copy(xfer.Direction.TO_HOST, offset=8, nbytes=100)
        ctx.memcpy_batch_async([dst.ctypes.data, dst.ctypes.data + 200], [src.ctypes.data, src.ctypes.data + 200],
                               [150, 100], xfer.CopyKind.HOST_TO_HOST, s)
        s.synchronize()
        assert dst[299] == 7 and dst[150] == 0
        assert len(seen) == 3
        r = seen[0]
        assert isinstance(r, xfer.CopyRecord)
        assert r.function == "xfer_copy_async"
        assert r.path == xfer.CopyPath.HOST_MEMCPY and r.path_name == "host_memcpy"
        assert r.reason == xfer.PathReason.MEMORY and r.reason_name == "memory"
        assert r.kind == xfer.CopyKind.HOST_TO_DEVICE
        assert (r.slow, r.copies, r.bytes, r.call_bytes) == (False, 1, 5000, 5000)
        assert r.stream == s.handle
        assert r.host_ns >= 0
        assert seen[1].function == "xfer_copy" and seen[1].stream is None  # the context's own stream
        assert seen[1].kind == xfer.CopyKind.DEVICE_TO_HOST and seen[1].bytes == 100
        assert seen[2].function == "xfer_memcpy_batch_async"
        assert (seen[2].copies, seen[2].bytes, seen[2].kind) == (2, 250, xfer.CopyKind.HOST_TO_HOST)
        assert seen[2]._asdict()["path_name"] == "host_memcpy"

        ctx.set_copy_observer(None)
        buf.copy(xfer.Direction.TO_DEVICE)
        assert len(seen) == 3
        assert ctx.stats()["calls"] == 4  # statistics go on without an observer
    assert ctx.take_observer_error() is None
    with pytest.raises(TypeError):
        ctx.set_copy_observer(42)


def test_an_exception_of_the_observer_stays_out_of_the_copy(ctx, monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    calls = []

    def observer(record):
        calls.append(record.bytes)
        raise ValueError(f"observer saw {record.bytes} bytes")

    ctx.set_copy_observer(observer)
    with ctx.alloc(256) as buf:
        buf.host_array()[:] = np.arange(256, dtype=np.uint8)
        buf.copy(xfer.Direction.TO_DEVICE, nbytes=200)  # does not raise: the copy went ahead
        buf.copy(xfer.Direction.TO_DEVICE, offset=200, nbytes=56)
        dev = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_uint8 * 256).from_address(buf.device_ptr))
        np.testing.assert_array_equal(dev, np.arange(256, dtype=np.uint8))
        assert calls == [200, 56]
        assert ctx.stats()["paths"]["host_memcpy"]["bytes"] == 256
        assert len(reported) == 2
        assert reported[1].exc_type is ValueError and str(reported[1].exc_value) == "observer saw 56 bytes"
        assert reported[1].err_msg == "Exception ignored in xfer copy observer"
        assert reported[1].object is observer
        assert reported[1].exc_traceback is not None
        err = ctx.take_observer_error()
        assert isinstance(err, ValueError) and str(err) == "observer saw 56 bytes"  # the latest
        assert ctx.take_observer_error() is None


def test_default_unraisable_hook_prints_the_observers_exception(ctx, monkeypatch, capfd):
    monkeypatch.setattr(sys, "unraisablehook", sys.__unraisablehook__)

    def observer(record):
        raise RuntimeError("seen in stderr")

    ctx.set_copy_observer(observer)
    with ctx.alloc(64) as buf:
        buf.copy(xfer.Direction.TO_DEVICE)
    err = capfd.readouterr().err
    assert "Exception ignored in xfer copy observer" in err and "RuntimeError: seen in stderr" in err, err
    assert isinstance(ctx.take_observer_error(), RuntimeError)


def test_observer_may_copy_replace_itself_and_run_on_every_thread(ctx):
    with ctx.alloc(64) as buf:
        outer, inner = [], []

        def first(record):
            outer.append(record.bytes)
            ctx.set_copy_observer(lambda r: inner.append(r.bytes))
            buf.copy(xfer.Direction.TO_HOST, nbytes=8)  # a call of its own, to the new observer

        ctx.set_copy_observer(first)
        buf.copy(xfer.Direction.TO_DEVICE)
        assert outer == [64] and inner == [8]
        buf.copy(xfer.Direction.TO_HOST, offset=8, nbytes=8)
        assert outer == [64] and inner == [8, 8]
    assert ctx.take_observer_error() is None

    lock = threading.Lock()
    totals = {"copies": 0, "bytes": 0}

    def count(record):
        with lock:
            totals["copies"] += record.copies
            totals["bytes"] += record.bytes

    ctx.set_copy_observer(count)
    ctx.reset_stats()
    threads_n, copies_n = 4, 200

    def work():
        with ctx.alloc(512) as mine:
            for i in range(copies_n):
                mine.copy(xfer.Direction.TO_DEVICE, nbytes=1 + i % 512)

    threads = [threading.Thread(target=work) for _ in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expect = threads_n * sum(1 + i % 512 for i in range(copies_n))
    assert totals == {"copies": threads_n * copies_n, "bytes": expect}
    assert ctx.stats()["paths"]["host_memcpy"]["bytes"] == expect


def test_slow_path_policy_is_set_and_read(ctx):
    assert ctx.slow_path == "allow"
    ctx.slow_path = "refuse"
    assert ctx.slow_path == "refuse"
    # The host backend's memcpy is never slow: strict mode refuses none of its copies.
    with ctx.alloc(4 * MiB) as buf:
        buf.host_array()[:] = 0x11
        buf.copy(xfer.Direction.TO_DEVICE)
        dev = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_uint8 * (4 * MiB)).from_address(buf.device_ptr))
        assert (dev == 0x11).all()
    assert ctx.stats()["refused_calls"] == 0
    ctx.slow_path = xfer.SlowPath.WARN
    assert ctx.slow_path == "warn"
    ctx.slow_path = "REFUSE"
    assert ctx.slow_path == "refuse"
    for bad in ["never", 3, -1, 1 << 40]:
        with pytest.raises(xfer.Error) as err:
            ctx.slow_path = bad
        assert err.value.status == xfer.Status.INVALID_ARGUMENT, bad
        assert err.value.call == "xfer_context_set_slow_path"
        assert not isinstance(err.value, xfer.SlowPathError)
    for bad in [True, 1.0, None]:
        with pytest.raises(TypeError):
            ctx.slow_path = bad
    assert ctx.slow_path == "refuse"  # unchanged by the refusals
    ctx.slow_path = 0
    assert ctx.slow_path == "allow"


def test_slow_path_status_raises_slow_path_error():
    assert xfer.Status.SLOW_PATH == _capi.XFER_ERROR_SLOW_PATH == 16
    assert issubclass(xfer.SlowPathError, xfer.Error)
    assert xfer.status_string(xfer.Status.SLOW_PATH) == "XFER_ERROR_SLOW_PATH"


def test_a_closed_context_refuses_every_call():
    ctx = xfer.Context("host", 0)
    seen = []
    ctx.set_copy_observer(seen.append)
    ctx.close()  # takes the observer off first
    for call in [ctx.stats, ctx.reset_stats, lambda: ctx.set_copy_observer(print),
                 lambda: ctx.set_copy_observer(None), lambda: ctx.slow_path,
                 lambda: setattr(ctx, "slow_path", "warn")]:
        with pytest.raises(xfer.Error) as err:
            call()
        assert err.value.status == xfer.Status.INVALID_HANDLE
    assert seen == []


@pytest.fixture
def mockpaths(monkeypatch):
    folder = os.environ.get("XFER_TEST_MOCK_PATHS_DIR")
    if not folder:
        pytest.skip("XFER_TEST_MOCK_PATHS_DIR is not set: this build has no mock plugin with slow paths")
    monkeypatch.setenv("XFER_PLUGIN_PATH", folder)
    monkeypatch.delenv("XFER_SLOW_PATH", raising=False)
    with xfer.Context("mockpaths", 0) as c:
        yield c


def test_refuse_raises_slow_path_error_and_copies_nothing(mockpaths):
    ctx = mockpaths
    big = 8 * MiB  # the mock: from 4 MiB half staged, half through the driver (slow)
    src = np.full(big, 0x5A, np.uint8)
    dst = np.zeros(big, np.uint8)
    seen = []
    ctx.set_copy_observer(seen.append)
    ctx.slow_path = "refuse"
    with ctx.stream() as s:
        with pytest.raises(xfer.SlowPathError) as err:
            ctx.memcpy_async(dst.ctypes.data, src.ctypes.data, big, xfer.CopyKind.HOST_TO_DEVICE, s)
        assert err.value.status == xfer.Status.SLOW_PATH and err.value.call == "xfer_memcpy_async"
        assert "driver_pageable" in err.value.message, err.value.message
        assert str(err.value).startswith("xfer_memcpy_async: XFER_ERROR_SLOW_PATH: ")
        assert dst[0] == 0 and dst[-1] == 0 and seen == []
        st = ctx.stats()
        assert (st["refused_calls"], st["calls"], st["paths"]) == (1, 0, {})

        ctx.slow_path = "allow"
        ctx.memcpy_async(dst.ctypes.data, src.ctypes.data, big, xfer.CopyKind.HOST_TO_DEVICE, s)
        s.synchronize()
        np.testing.assert_array_equal(dst, src)
    assert [(r.path_name, r.reason_name, r.slow, r.bytes) for r in seen] == [
        ("staged", "memory", False, big // 2), ("driver_pageable", "no_faster_path", True, big // 2)]
    st = ctx.stats()
    assert st["slow_copies"] == 1
    assert {k: v["bytes"] for k, v in st["paths"].items()} == {"staged": big // 2, "driver_pageable": big // 2}
