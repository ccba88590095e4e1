# SPDX-License-Identifier: Apache-2.0
"""Sharing buffers through the Python layer on the `host` backend: an Export imported by another
context, and by another process it was sent to over a socketpair, is one memory, compared byte
for byte both ways; an Export closes its descriptors once (close, with-block, garbage
collection) and cannot be copied; what cannot be exported or imported raises xfer.Error with
the C status; the memory observer hears of every buffer and range, close() included, is kept
alive by its context, and its exceptions stay out of the library."""
import copy
import gc
import os
import pickle
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xfer

NBYTES = (1 << 20) + 123  # not a multiple of the page


def pattern(seed, n=NBYTES):
    return ((np.arange(n, dtype=np.uint64) * 31 + seed) & 0xFF).astype(np.uint8)


def device_array(buf):
    return np.ctypeslib.as_array((np.ctypeslib.ctypes.c_uint8 * buf.nbytes).from_address(buf.device_ptr))


def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


@pytest.fixture
def ctx():
    with xfer.Context("host", 0) as c:
        yield c


@pytest.fixture
def other():
    with xfer.Context("host", 0) as c:
        yield c


def test_an_import_in_another_context_is_the_same_memory_both_ways(ctx, other):
    mine = ctx.alloc(NBYTES, xfer.AllocFlags.SHAREABLE)
    mine.host_array()[:] = pattern(22)
    mine.to_device()
    with mine.export() as e:
        assert not e.closed and e.fd_count == 1 and len(e.fds) == 1 and len(e.blob) > 0
        theirs = other.import_buffer(e)
    assert e.closed and e.fds == ()
    assert isinstance(theirs, xfer.Buffer) and theirs.imported and not mine.imported
    assert theirs.context is other and theirs.nbytes == NBYTES
    assert theirs.host_ptr != mine.host_ptr  # another mapping of the same pages
    np.testing.assert_array_equal(theirs.host_array(), pattern(22))
    np.testing.assert_array_equal(device_array(theirs), pattern(22))
    # The importer writes, the exporter reads; then the other way round.
    theirs.host_array()[:] = pattern(33)
    theirs.to_device()
    np.testing.assert_array_equal(mine.host_array(), pattern(33))
    np.testing.assert_array_equal(device_array(mine), pattern(33))
    device_array(mine)[:] = pattern(44)
    mine.to_host()
    np.testing.assert_array_equal(theirs.host_array(), pattern(44))
    # The exporter's buffer may go first: the import keeps the memory, and exports again.
    mine.close()
    np.testing.assert_array_equal(theirs.host_array(), pattern(44))
    with theirs.export() as again:
        third = ctx.import_buffer(again)
    np.testing.assert_array_equal(third.host_array(), pattern(44))
    theirs.close()
    third.close()


def test_an_export_travels_over_a_socketpair_as_a_socket_or_an_int(ctx, other):
    mine = ctx.alloc(NBYTES, xfer.AllocFlags.SHAREABLE)
    mine.host_array()[:] = pattern(55)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with a, b, mine.export() as e:
        for sender, receiver in [(a, b), (a.fileno(), b.fileno())]:
            e.send(sender)
            assert not e.closed and is_open(e.fds[0])  # the sender keeps its descriptors
            with xfer.Export.receive(receiver) as got:
                assert got.fd_count == 1 and got.fds[0] != e.fds[0]  # a new descriptor of the same memory
                assert got.blob == e.blob
                theirs = other.import_buffer(got)
                fd = got.fds[0]
            assert not is_open(fd)
            np.testing.assert_array_equal(theirs.host_array(), pattern(55))
            theirs.close()
        # Bytes that are not an export, then a peer that went away.
        a.sendall(b"j" * 512)
        with pytest.raises(xfer.Error) as err:
            xfer.Export.receive(b)
        assert err.value.status == xfer.Status.INVALID_ARGUMENT and err.value.call == "xfer_export_receive"
        a.close()
        b.setblocking(False)
        try:
            while b.recv(4096):
                pass
        except BlockingIOError:
            pass
        b.setblocking(True)
        with pytest.raises(xfer.Error) as err:
            xfer.Export.receive(b)
        assert err.value.status == xfer.Status.BACKEND and "closed" in err.value.message
        with pytest.raises(xfer.Error) as err:
            e.send(-1)
        assert err.value.status == xfer.Status.INVALID_ARGUMENT
        for bad in [1 << 40, -(1 << 40)]:  # ctypes would wrap these into a valid descriptor
            with pytest.raises(xfer.Error) as err:
                e.send(bad)
            assert err.value.status == xfer.Status.INVALID_ARGUMENT and err.value.call == "xfer_export_send"
        for bad in ["3", 2.0, None, True]:
            with pytest.raises(TypeError):
                e.send(bad)
            with pytest.raises(TypeError):
                xfer.Export.receive(bad)
    mine.close()


# The other process: receives the export on the descriptor it inherited, checks the bytes,
# writes its own pattern into the host view and copies it to the device view, says 'w'.
PEER = textwrap.dedent("""
    import os, sys
    import numpy as np
    import xfer
    sock, nbytes = int(sys.argv[1]), int(sys.argv[2])
    expect = ((np.arange(nbytes, dtype=np.uint64) * 31 + 66) & 0xFF).astype(np.uint8)
    mine = ((np.arange(nbytes, dtype=np.uint64) * 31 + 77) & 0xFF).astype(np.uint8)
    with xfer.Context("host", 0) as ctx:
        with xfer.Export.receive(sock) as e:
            buf = ctx.import_buffer(e)
        if not (buf.host_array() == expect).all():
            sys.exit("the peer's host view differs")
        buf.host_array()[:] = mine
        buf.to_device()
        buf.close()
    os.write(sock, b"w")
""")


def test_an_export_sent_to_another_process_is_the_same_memory_both_ways(ctx):
    mine = ctx.alloc(NBYTES, xfer.AllocFlags.SHAREABLE)
    mine.host_array()[:] = pattern(66)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with a, b:
        with mine.export() as e:
            e.send(a)  # queued in the socket, descriptors included, before the peer runs
        # The exporter's descriptors are closed: the message in flight holds the memory.
        env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        peer = subprocess.run([sys.executable, "-c", PEER, str(b.fileno()), str(NBYTES)], pass_fds=[b.fileno()],
                              env=env, capture_output=True, text=True, timeout=120)
        assert peer.returncode == 0, peer.stderr
        assert a.recv(1) == b"w"
    np.testing.assert_array_equal(mine.host_array(), pattern(77))
    np.testing.assert_array_equal(device_array(mine), pattern(77))
    mine.close()


def test_an_export_closes_its_descriptors_once(ctx):
    buf = ctx.alloc(4096, xfer.AllocFlags.SHAREABLE)
    e = buf.export()
    fd = e.fds[0]
    assert is_open(fd) and repr(e) == f"<xfer.Export fds=[{fd}]>"
    e.close()
    assert not is_open(fd) and e.closed and e.fd_count == 0 and repr(e) == "<xfer.Export closed>"
    keep = os.open(os.devnull, os.O_RDONLY)
    try:
        e.close()  # does nothing: closes no descriptor that has the old number now
        assert is_open(keep)
    finally:
        os.close(keep)
    # The finaliser closes them.
    e = buf.export()
    fd = e.fds[0]
    del e
    gc.collect()
    assert not is_open(fd)
    buf.close()


def test_a_closed_export_is_refused_and_none_is_copied(ctx, other):
    buf = ctx.alloc(4096, xfer.AllocFlags.SHAREABLE)
    with buf.export() as e:
        for dup in [lambda: copy.copy(e), lambda: copy.deepcopy(e), lambda: pickle.dumps(e)]:
            with pytest.raises(TypeError, match="cannot be copied or pickled"):
                dup()
    for call, name in [(lambda: other.import_buffer(e), "xfer_buffer_import"), (lambda: e.send(0), "xfer_export_send")]:
        with pytest.raises(xfer.Error) as err:
            call()
        assert err.value.status == xfer.Status.INVALID_ARGUMENT and err.value.call == name
        assert "closed" in err.value.message
    with pytest.raises(TypeError, match="not an xfer.Export"):
        other.import_buffer(buf)
    buf.close()


def test_a_buffer_without_the_flag_is_not_exported(ctx):
    with ctx.alloc(4096) as plain:
        with pytest.raises(xfer.Error) as err:
            plain.export()
        assert err.value.status == xfer.Status.INVALID_STATE and err.value.call == "xfer_buffer_export"
        assert "XFER_ALLOC_SHAREABLE" in err.value.message
    with pytest.raises(xfer.Error) as err:
        plain.export()  # closed
    assert err.value.status == xfer.Status.INVALID_HANDLE
    closed = xfer.Context("host", 0)
    with ctx.alloc(4096, xfer.AllocFlags.SHAREABLE) as buf, buf.export() as e:
        closed.close()
        with pytest.raises(xfer.Error) as err:
            closed.import_buffer(e)
        assert err.value.status == xfer.Status.INVALID_HANDLE
        assert not e.closed  # a failed import leaves the export as it was


def test_the_memory_observer_hears_of_every_buffer_and_range(ctx):
    seen = []
    first_byte_at_release = []  # read inside the observer

    def observer(ev):
        seen.append(ev)
        if ev.event == xfer.MemoryEventKind.RELEASING:
            first_byte_at_release.append(np.ctypeslib.ctypes.c_uint8.from_address(ev.host_ptr).value)

    ctx.set_memory_observer(observer)
    a = ctx.alloc(4096)
    a_handle, a_host = a.handle, a.host_ptr
    shared = ctx.alloc(NBYTES, xfer.AllocFlags.SHAREABLE)
    with shared.export() as e:
        imported = ctx.import_buffer(e)
    rng = np.zeros(3 * 4096, np.uint8)
    reg = ctx.register(rng)
    a.host_array()[:] = 0x7E
    a.close()
    reg.close()
    assert [ev.event for ev in seen] == [xfer.MemoryEventKind.ALLOCATED] * 3 + [
        xfer.MemoryEventKind.REGISTERED, xfer.MemoryEventKind.RELEASING, xfer.MemoryEventKind.UNREGISTERING]
    assert all(isinstance(ev, xfer.MemoryEvent) for ev in seen)
    assert seen[0] == xfer.MemoryEvent(xfer.MemoryEventKind.ALLOCATED, a_handle, a_host, seen[0].device_ptr, 4096,
                                       False)
    assert seen[1] == (xfer.MemoryEventKind.ALLOCATED, shared.handle, shared.host_ptr, shared.device_ptr, NBYTES,
                       False)
    assert seen[2] == (xfer.MemoryEventKind.ALLOCATED, imported.handle, imported.host_ptr, imported.device_ptr,
                       NBYTES, True)
    assert seen[3] == (xfer.MemoryEventKind.REGISTERED, None, rng.ctypes.data, None, rng.nbytes, False)
    assert seen[4] == (xfer.MemoryEventKind.RELEASING, a_handle, a_host, seen[0].device_ptr, 4096, False)
    assert seen[5] == (xfer.MemoryEventKind.UNREGISTERING, None, rng.ctypes.data, None, rng.nbytes, False)
    assert first_byte_at_release == [0x7E]  # told before the memory went

    # close() frees the buffers still open, and tells the release of each.
    still_open = {(xfer.MemoryEventKind.RELEASING, shared.handle, False),
                  (xfer.MemoryEventKind.RELEASING, imported.handle, True)}
    ctx.close()
    assert len(seen) == 8 and {(ev.event, ev.buffer, ev.imported) for ev in seen[6:]} == still_open
    assert ctx.take_memory_observer_error() is None


def test_the_memory_observer_is_kept_by_its_context_and_can_be_removed(ctx):
    seen = []
    ctx.set_memory_observer(lambda ev: seen.append(ev.event))  # the only reference: the context keeps it
    gc.collect()
    with ctx.alloc(64):
        pass
    assert seen == [xfer.MemoryEventKind.ALLOCATED, xfer.MemoryEventKind.RELEASING]
    ctx.set_memory_observer(None)
    with ctx.alloc(64):
        pass
    assert len(seen) == 2
    with pytest.raises(TypeError):
        ctx.set_memory_observer(42)
    # A context collected with its buffers still tells their release from its finaliser.
    told = []
    c = xfer.Context("host", 0)
    c.set_memory_observer(lambda ev: told.append(ev.event))
    b = c.alloc(64)
    del c, b
    gc.collect()
    assert told == [xfer.MemoryEventKind.ALLOCATED, xfer.MemoryEventKind.RELEASING]


def test_an_exception_of_the_memory_observer_stays_out_of_the_call(ctx, monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)

    def observer(ev):
        raise ValueError(f"observer saw {ev.bytes} bytes")

    ctx.set_memory_observer(observer)
    buf = ctx.alloc(1000)  # does not raise: the allocation went ahead
    buf.host_array()[:] = 9
    buf.to_device()
    assert device_array(buf)[999] == 9
    ctx.alloc(2000).close()
    buf.close()
    assert [str(r.exc_value) for r in reported] == [f"observer saw {n} bytes" for n in (1000, 2000, 2000, 1000)]
    assert reported[0].err_msg == "Exception ignored in xfer memory observer" and reported[0].object is observer
    err = ctx.take_memory_observer_error()
    assert isinstance(err, ValueError) and str(err) == "observer saw 1000 bytes"  # the latest
    assert ctx.take_memory_observer_error() is None
    assert ctx.take_observer_error() is None  # the copy observer's are apart


def test_a_closed_context_refuses_the_memory_observer():
    ctx = xfer.Context("host", 0)
    ctx.close()
    for call in [lambda: ctx.set_memory_observer(print), lambda: ctx.set_memory_observer(None)]:
        with pytest.raises(xfer.Error) as err:
            call()
        assert err.value.status == xfer.Status.INVALID_HANDLE


def test_share_info_names_the_memory_and_how_it_is_shared(ctx):
    with ctx.alloc(4096, xfer.AllocFlags.SHAREABLE) as buf:
        info = buf.share_info()
        assert info["handle_types"] == xfer._capi.XFER_SHARE_HANDLE_MEMFD
        assert info["host_memory_kind"] == "system" and info["device_memory_kind"] == "system"
        assert info["host_dlpack_device"] == (1, 0) and info["device_dlpack_device"] == (1, 0)  # kDLCPU
        assert info["granularity"] == 0 and not info["rdma_capable"]
    with ctx.alloc(4096) as plain:
        assert plain.share_info()["handle_types"] == 0
    with pytest.raises(xfer.Error) as err:
        plain.share_info()  # closed
    assert err.value.status == xfer.Status.INVALID_HANDLE
