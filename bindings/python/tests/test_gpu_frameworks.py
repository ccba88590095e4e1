# SPDX-License-Identifier: Apache-2.0
"""xfer.copy with CuPy and PyTorch on a GPU, on every available CUDA backend: their arrays as
destinations and sources, their current streams, a wrapped PyTorch stream interleaving xfer's
copies with PyTorch kernels in stream order, objects kept alive until a copy is done, and
torch / CuPy / Numba / JAX importing xfer device views (managed memory included) through DLPack
and __cuda_array_interface__. Every value is checked. Each test skips without a GPU, without a
CUDA backend or without the framework it needs.

Runs under pytest, or as a script where pytest is missing (`python test_gpu_frameworks.py`:
one PASS / SKIP / FAIL line per test and backend); tests/run_gpu.sh runs it against a build."""
import gc
import os
import sys
import weakref

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import xfer  # noqa: E402
from xfer import _dlpack  # noqa: E402

try:
    import pytest
except ImportError:  # pragma: no cover - the GPU machine's environment may lack it
    pytest = None


class Skip(Exception):
    pass


_script_mode = False  # main(): report skips itself


def skip(reason):
    if pytest is not None and not _script_mode:
        pytest.skip(reason)
    raise Skip(reason)


def _import(name):
    try:
        return __import__(name)
    except Exception:  # not installed, or installed without a usable GPU runtime
        return None


cp = _import("cupy")
torch = _import("torch")
# JAX, where present, must not take most of the GPU's memory for itself at its first use.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
CUDA_BACKENDS = ["pinned", "pageable", "managed", "zerocopy"]


def gpu_count():
    if torch is not None and torch.cuda.is_available():
        return torch.cuda.device_count()
    if cp is not None:
        try:
            return cp.cuda.runtime.getDeviceCount()
        except Exception:
            return 0
    return 0


def available_backends():
    try:
        found = xfer.backends()
    except Exception:
        return []
    return [b["name"] for b in found if b["name"] in CUDA_BACKENDS and b["available"] and b["device_count"] > 0]


def numba_cuda():
    try:
        from numba import cuda
        return cuda if cuda.is_available() else None
    except Exception:
        return None


def jax_gpu():
    jax = _import("jax")
    try:
        if jax is not None and any(d.platform == "gpu" for d in jax.devices()):
            import jax.dlpack  # noqa: F401
            return jax
    except Exception:  # no GPU platform in this JAX build
        pass
    return None


def need(backend, *frameworks, registration_cache=False):
    """A context of `backend` on device 0, or a skip. The pinned backend's registration cache
    page-locks whole pages of the arrays xfer copies, and a CuPy / PyTorch / Numba copy of a
    later allocation that shares such a page fails (see
    check_pinned_registration_cache_leaves_neighbours_usable): it is off here unless asked for, so
    that the other checks test the binding, whatever the allocator places next to what."""
    if gpu_count() == 0:
        skip("no GPU (or no CuPy / PyTorch to reach it)")
    for name in frameworks:
        if {"cupy": cp, "torch": torch}[name] is None:
            skip(f"{name} is not installed")
    if backend not in available_backends():
        skip(f"backend {backend} unavailable here")
    key = "XFER_PINNED_PIN_LIMIT"
    saved = os.environ.get(key)
    if not registration_cache and saved is None:
        os.environ[key] = "0"  # read by xfer_open only
    try:
        return xfer.Context(backend, 0)
    finally:
        if saved is None:
            os.environ.pop(key, None)


N = 1 << 22  # 16 MiB of float32: above the pageable backend's staged_min_bytes


def data(n=N, seed=3):
    return (np.random.default_rng(seed).random(n, dtype=np.float32) * 1000).astype(np.float32)


def to_numpy(x):
    return cp.asnumpy(x) if cp is not None and isinstance(x, cp.ndarray) else x.cpu().numpy()


def device_array(framework, n=N):
    if framework == "cupy":
        return cp.zeros(n, dtype=cp.float32)
    return torch.zeros(n, dtype=torch.float32, device="cuda:0")


# ------------------------------------------------------------------------------ tests
def check_framework_arrays_as_destination_and_source(backend, framework):
    with need(backend, framework) as ctx:
        a = data()
        d = device_array(framework)
        xfer.copy(d, a, ctx=ctx)                        # NumPy -> framework, its current stream
        assert np.array_equal(to_numpy(d), a)
        d *= 2                                          # a kernel on the current stream...
        out = np.zeros_like(a)
        xfer.copy(out, d, ctx=ctx)                      # ...which this copy follows
        assert np.array_equal(out, a * 2)
        view = xfer.to_device(a, ctx=ctx)              # DeviceView -> framework and back, device to device
        e = device_array(framework)
        t = xfer.copy_async(e, view, ctx=ctx)
        assert t.kind == xfer.CopyKind.DEVICE_TO_DEVICE
        t.wait()
        assert np.array_equal(to_numpy(e), a)
        xfer.copy(view, d)
        assert np.array_equal(xfer.to_host(view), a * 2)
        assert np.array_equal(xfer.to_host(d, ctx=ctx), a * 2)
        return f"{framework} arrays as destination and source on {backend}"


def check_cupy_and_torch_between_each_other(backend):
    with need(backend, "cupy", "torch") as ctx:
        a = data()
        c = cp.asarray(a)
        t = torch.zeros(N, dtype=torch.float32, device="cuda:0")
        cp.cuda.get_current_stream().synchronize()
        xfer.copy(t, c, ctx=ctx)                        # torch's current stream; CuPy's CAI stream waited for
        assert np.array_equal(t.cpu().numpy(), a)
        c2 = cp.zeros(N, dtype=cp.float32)
        xfer.copy(c2, t * 3, ctx=ctx)                   # a temporary tensor as the source
        assert np.array_equal(cp.asnumpy(c2), a * 3)
        return f"CuPy <-> PyTorch device to device on {backend}"


def check_current_stream_is_used(backend, framework):
    with need(backend, framework) as ctx:
        a = data()
        if framework == "cupy":
            stream = cp.cuda.Stream(non_blocking=True)
            native = stream.ptr
            scope = stream
        else:
            stream = torch.cuda.Stream()
            native = stream.cuda_stream
            scope = torch.cuda.stream(stream)
        with scope:
            d = device_array(framework)
            t1 = xfer.copy_async(d, a, ctx=ctx)
            t2 = xfer.copy_async(a.copy(), d, ctx=ctx)
        assert t1.stream.native == native and t1.stream.wrapped and t1.stream is t2.stream  # wrapped once
        assert t1.stream is ctx.wrap_stream(stream)
        stream.synchronize()
        assert t2.done() and t1.done()
        t3 = xfer.copy_async(d, a, ctx=ctx)             # outside: the framework's default stream
        assert t3.stream.native in (0, 1) and t3.stream.wrapped
        t3.wait()
        explicit = xfer.copy_async(d, a, stream=stream, ctx=ctx)  # the stream object itself
        assert explicit.stream.native == native
        explicit.wait()
        n = xfer.copy_async(d, a, stream=native, ctx=ctx)         # an int cudaStream_t
        assert n.stream is explicit.stream
        n.wait()
        return f"{framework}'s current stream on {backend}"


def check_wrapped_torch_stream_interleaves_with_kernels(backend):
    """PyTorch kernels and xfer copies alternate on one PyTorch stream with no host wait until the
    end; a copy that did not keep stream order would read a value before or after its kernel."""
    with need(backend, "torch") as ctx:
        K = 6
        s = torch.cuda.Stream()
        outs = np.full((K, N), -1, np.float32)          # pageable rows, one per step
        src = data()
        z_out = np.zeros(N, np.float32)
        transfers = []
        with torch.cuda.stream(s):
            x = torch.empty(N, dtype=torch.float32, device="cuda:0")
            y = torch.empty(N, dtype=torch.float32, device="cuda:0")
            for k in range(K):
                torch.cuda._sleep(20_000_000)           # keeps the GPU busy: early copies would see old values
                x.fill_(float(k))                       # kernel writes x
                transfers.append(xfer.copy_async(outs[k], x, ctx=ctx))   # xfer reads x after it
            transfers.append(xfer.copy_async(y, src, ctx=ctx))           # xfer writes y...
            z = y * 3 + 1                                                # ...a kernel reads it
            transfers.append(xfer.copy_async(z_out, z, ctx=ctx))         # and xfer copies the result
        assert all(t.stream.native == s.cuda_stream for t in transfers)
        s.synchronize()                                 # the only host wait
        for k in range(K):
            assert (outs[k] == k).all(), f"step {k}: {np.unique(outs[k])[:5]}"
        np.testing.assert_array_equal(z_out, src * 3 + 1)
        assert all(t.done() for t in transfers)
        return f"xfer copies in stream order with PyTorch kernels on a wrapped torch stream on {backend}"


def check_temporaries_live_until_done(backend):
    """A device-to-device copy is queued behind a long kernel on every backend (a copy into
    pageable memory may wait in the call on some): its dead temporary source must stay alive."""
    with need(backend, "torch") as ctx:
        s = torch.cuda.Stream()
        dst = torch.zeros(N, dtype=torch.float32, device="cuda:0")
        with torch.cuda.stream(s):
            xfer.copy(dst, torch.zeros_like(dst), ctx=ctx)  # the context's first copy on s sets things up
        torch.cuda.synchronize()
        with torch.cuda.stream(s):
            temp = torch.full((N,), 5.0, device="cuda:0")
            torch.cuda._sleep(200_000_000)              # the copy stays queued a while
            ref = weakref.ref(temp)
            t = xfer.copy_async(dst, temp, ctx=ctx)
            del temp                                    # a tensor goes at once when nothing holds it
            assert not t.done(), "the copy did not wait for the kernel before it"
            assert ref() is not None, "a queued copy's source was released"
            refill = torch.full((N,), 9.0, device="cuda:0")  # could reuse the memory if it were free
        t.wait()
        gc.collect()
        assert ref() is None
        s.synchronize()
        assert bool((dst == 5).all()) and bool((refill == 9).all())
        return f"a dead temporary tensor kept until its copy was done on {backend}"


def check_from_dlpack_of_device_views(backend):
    if gpu_count() == 0:
        skip("no GPU")
    if torch is None and cp is None:
        skip("neither PyTorch nor CuPy is installed")
    with need(backend) as ctx, ctx.alloc(N * 4) as buf, ctx.stream() as s:
        a = data()
        buf.host_array(np.float32)[:] = a
        buf.to_device(s)                                # queued, not waited for: __dlpack__ orders it
        view = buf.device_view(np.float32, (N,), stream=s)
        assert view.__dlpack_device__() == (_dlpack.kDLCUDA, 0)   # managed too
        done = []
        if torch is not None:
            t = torch.from_dlpack(view)
            assert t.device.type == "cuda" and t.data_ptr() == buf.device_ptr  # no copy
            assert torch.equal(t, torch.from_numpy(a).cuda())
            t.mul_(2)
            torch.cuda.current_stream().synchronize()
            done.append("torch")
        if cp is not None:
            c = cp.from_dlpack(view)
            assert c.data.ptr == buf.device_ptr
            c += 1
            cp.cuda.get_current_stream().synchronize()
            done.append("cupy")
        nbcuda = numba_cuda()
        if nbcuda is not None:
            nb = nbcuda.as_cuda_array(view)             # __cuda_array_interface__ v3 with the stream
            got = nb.copy_to_host()
            done.append("numba")
        buf.to_host(s)
        s.synchronize()
        expect = a * (2 if "torch" in done else 1) + (1 if "cupy" in done else 0)
        np.testing.assert_array_equal(buf.host_array(np.float32), expect)
        if nbcuda is not None:
            np.testing.assert_array_equal(got, expect)
        jax = jax_gpu()
        if jax is not None:
            j = jax.dlpack.from_dlpack(view)
            np.testing.assert_array_equal(np.asarray(j), expect)
            done.append("jax")
        return f"{', '.join(done)} imported the device view of {backend}"


def check_managed_view_honours_dl_device():
    with need("managed") as ctx, ctx.alloc(4096) as buf:
        view = buf.device_view(np.float32, (1024,))
        for want in [(_dlpack.kDLCUDA, 0), (_dlpack.kDLCUDAManaged, 0), (_dlpack.kDLCPU, 0)]:
            imp = _dlpack.import_capsule(view.__dlpack__(dl_device=want))
            assert (imp.device_type, imp.device_id) == want and imp.ptr == buf.device_ptr
            imp.close()
        return "managed view exported as kDLCUDA, kDLCUDAManaged and kDLCPU on request"


def check_pinned_registration_cache_leaves_neighbours_usable(framework):
    """xfer's pinned backend copies a NumPy array through its registration cache, which
    page-locks the whole pages the array touches; the framework then copies another array that
    starts in the last of those pages (the next allocation often does). Both copies must be right."""
    with need("pinned", framework, registration_cache=True) as ctx:
        if ctx.registration_stats()["cache_limit_bytes"] == 0:
            skip("the pinned backend's registration cache is off here")
        n = N + 3                                       # ends 12 bytes into a page
        block = np.zeros(2 * n + 1024, np.float32)
        x, y = block[:n], block[n:2 * n]                # y starts in x's last page
        src = device_array(framework, n)
        src += 7
        xfer.copy(x, src, ctx=ctx)                      # registers x's pages
        assert (x == 7).all() and ctx.registration_stats()["cache_ranges"] >= 1
        other = device_array(framework, n)
        other += 3
        try:
            if framework == "cupy":
                other.get(out=y)                        # cudaMemcpy into y, from inside x's registration
            else:
                torch.from_numpy(y).copy_(other)
            (cp.cuda.get_current_stream() if framework == "cupy" else torch.cuda.current_stream()).synchronize()
        except Exception as e:
            raise AssertionError(f"{framework}'s own copy next to a range xfer registered failed: {e}") from e
        assert (y == 3).all(), f"{framework}'s copy next to a range xfer registered left {np.unique(y)[:4]}"
        return f"{framework}'s copies next to a pinned-cache registration are intact"


def check_jax_source(backend):
    jax = jax_gpu()
    if jax is None:
        skip("no JAX with a GPU")
    with need(backend) as ctx:
        a = data()
        j = jax.device_put(a) * 2
        out = np.zeros_like(a)
        xfer.copy(out, j, ctx=ctx)                      # DLPack with the copy's stream
        np.testing.assert_array_equal(out, a * 2)
        try:
            xfer.copy(j, a, ctx=ctx)
        except ValueError as e:
            assert "immutable" in str(e)
        else:
            raise AssertionError("a JAX array was accepted as a destination")
        return f"a JAX array as source on {backend}"


CASES = [
    (check_framework_arrays_as_destination_and_source, [(b, f) for b in CUDA_BACKENDS for f in ("cupy", "torch")]),
    (check_cupy_and_torch_between_each_other, [(b,) for b in CUDA_BACKENDS]),
    (check_current_stream_is_used, [(b, f) for b in CUDA_BACKENDS for f in ("cupy", "torch")]),
    (check_wrapped_torch_stream_interleaves_with_kernels, [(b,) for b in CUDA_BACKENDS]),
    (check_temporaries_live_until_done, [(b,) for b in CUDA_BACKENDS]),
    (check_from_dlpack_of_device_views, [(b,) for b in CUDA_BACKENDS]),
    (check_managed_view_honours_dl_device, [()]),
    (check_jax_source, [(b,) for b in CUDA_BACKENDS]),
    (check_pinned_registration_cache_leaves_neighbours_usable, [("cupy",), ("torch",)]),
]

if pytest is not None:
    BACKEND = pytest.mark.parametrize("backend", CUDA_BACKENDS)
    FRAMEWORK = pytest.mark.parametrize("framework", ["cupy", "torch"])

    @FRAMEWORK
    @BACKEND
    def test_framework_arrays_as_destination_and_source(backend, framework):
        print(check_framework_arrays_as_destination_and_source(backend, framework))

    @BACKEND
    def test_cupy_and_torch_between_each_other(backend):
        print(check_cupy_and_torch_between_each_other(backend))

    @FRAMEWORK
    @BACKEND
    def test_current_stream_is_used(backend, framework):
        print(check_current_stream_is_used(backend, framework))

    @BACKEND
    def test_wrapped_torch_stream_interleaves_with_kernels(backend):
        print(check_wrapped_torch_stream_interleaves_with_kernels(backend))

    @BACKEND
    def test_temporaries_live_until_done(backend):
        print(check_temporaries_live_until_done(backend))

    @BACKEND
    def test_from_dlpack_of_device_views(backend):
        print(check_from_dlpack_of_device_views(backend))

    def test_managed_view_honours_dl_device():
        print(check_managed_view_honours_dl_device())

    @BACKEND
    def test_jax_source(backend):
        print(check_jax_source(backend))

    @FRAMEWORK
    def test_pinned_registration_cache_leaves_neighbours_usable(framework):
        print(check_pinned_registration_cache_leaves_neighbours_usable(framework))


def main():
    global _script_mode
    _script_mode = True
    failed = passed = skipped = 0
    for fn, params in CASES:
        for p in params:
            label = f"{fn.__name__[len('check_'):]}{list(p) if p else ''}"
            try:
                print(f"PASS {label}: {fn(*p)}", flush=True)
                passed += 1
            except Skip as e:
                print(f"SKIP {label}: {e}", flush=True)
                skipped += 1
            except Exception as e:  # report every case, fail at the end
                failed += 1
                print(f"FAIL {label}: {type(e).__name__}: {e}", flush=True)
    print(f"{'FAILED' if failed else 'PASSED'}: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    if pytest is not None and "--script" not in sys.argv:
        sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider", "-s"] + sys.argv[1:]))
    sys.exit(main())
