# SPDX-License-Identifier: Apache-2.0
"""CuPy computes on xfer device views, through __cuda_array_interface__ and DLPack, on every
available CUDA backend; the result is checked through xfer's host view. Skipped without CuPy
or a GPU. Runs under pytest, or as a script (`python test_cupy.py`) where pytest is missing."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import xfer  # noqa: E402

try:
    import cupy as cp
except ImportError:  # pragma: no cover - depends on the machine
    cp = None

CUDA_BACKENDS = ["pinned", "pageable", "managed", "zerocopy"]


def available_cuda_backends():
    if cp is None:
        return []
    return [b["name"] for b in xfer.backends()
            if b["name"] in CUDA_BACKENDS and b["available"] and b["device_count"] > 0]


def check(backend, interface):
    n = 1 << 22
    rng = np.random.default_rng(11)
    with xfer.Context(backend, 0) as ctx, ctx.alloc(n * 4) as buf, ctx.stream() as s:
        host = buf.host_array(np.float32)
        data = rng.random(n, dtype=np.float32) * 100
        host[:] = data
        buf.to_device(s)                                    # queued; CuPy orders after it
        view = buf.device_view(np.float32, (n,), stream=s)
        if interface == "cai":
            cai = view.__cuda_array_interface__
            assert cai["version"] == 3 and cai["stream"] == s.native and cai["data"][0] == buf.device_ptr
            x = cp.asarray(view)
        else:
            x = cp.from_dlpack(view)
        assert x.data.ptr == buf.device_ptr                 # no copy: CuPy works on xfer's memory
        x *= 2
        x += cp.arange(n, dtype=cp.float32)
        cp.cuda.get_current_stream().synchronize()
        buf.to_host(s)
        s.synchronize()
        expect = data * 2 + np.arange(n, dtype=np.float32)
        np.testing.assert_allclose(host, expect, rtol=1e-6)
        return f"PASS cupy {interface} on {backend}: {n} float32 computed by CuPy on the device view, checked on the host"


if cp is not None:
    import pytest

    @pytest.mark.parametrize("interface", ["cai", "dlpack"])
    @pytest.mark.parametrize("backend", CUDA_BACKENDS)
    def test_cupy_computes_on_device_view(backend, interface):
        if backend not in available_cuda_backends():
            pytest.skip(f"backend {backend} unavailable here")
        print(check(backend, interface))
else:
    def test_cupy_computes_on_device_view():
        import pytest
        pytest.skip("CuPy is not installed (runs on the GPU machine)")


if __name__ == "__main__":
    backends = available_cuda_backends()
    if not backends:
        print("SKIP: no CuPy or no available CUDA backend")
        sys.exit(0)
    failed = 0
    for b in backends:
        for i in ("cai", "dlpack"):
            try:
                print(check(b, i), flush=True)
            except Exception as e:  # report all, fail at the end
                failed += 1
                print(f"FAIL cupy {i} on {b}: {type(e).__name__}: {e}", flush=True)
    print(f"{'FAILED' if failed else 'PASSED'}: {2 * len(backends) - failed}/{2 * len(backends)} on {backends}")
    sys.exit(1 if failed else 0)
