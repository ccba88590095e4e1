# Both directions at once: 256 MiB to the device on one stream and 256 MiB to the host on
# another, against each alone, on pinned and pageable (the overlap workflow's ceiling).
# Run from the repository root: python3 exp/bidir.py (XFER_LIBRARY, XFER_PLUGIN_PATH set).
import os, sys, time, statistics
sys.path.insert(0, os.path.join(os.getcwd(), "bindings", "python"))
import numpy as np
import xfer
MiB = 1 << 20
N = 256 * MiB
for backend in ("pinned", "pageable"):
    ctx = xfer.Context(backend)
    s1, s2 = ctx.stream(), ctx.stream()
    a, b = ctx.alloc(N), ctx.alloc(N)
    a.host_array()[:] = 5
    b.host_array()[:] = 6
    def h2d():
        a.copy_async(xfer.Direction.TO_DEVICE, s1); s1.synchronize()
    def d2h():
        b.copy_async(xfer.Direction.TO_HOST, s2); s2.synchronize()
    def both():
        a.copy_async(xfer.Direction.TO_DEVICE, s1); b.copy_async(xfer.Direction.TO_HOST, s2)
        s1.synchronize(); s2.synchronize()
    res = {"h2d": [], "d2h": [], "both": []}
    cases = [("h2d", h2d, N), ("d2h", d2h, N), ("both", both, 2 * N)]
    for r in range(13):
        for k in range(3):
            name, f, nbytes = cases[(k + r) % 3]
            t0 = time.perf_counter(); f(); t = time.perf_counter() - t0
            if r >= 2:
                res[name].append(nbytes / t / 1e9)
    print(f"{backend:9s} " + "  ".join(f"{k} {statistics.median(v):6.1f} GB/s (min {min(v):5.1f} max {max(v):5.1f})" for k, v in res.items()), flush=True)
    ctx.close()
