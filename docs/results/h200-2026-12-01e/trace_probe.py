# The timeline behind trace-*.txt: each copy (pageable 64 MiB and 256 MiB both ways, a 4096 x 4 KiB
# pageable batch both ways, pinned 64 MiB) under torch.profiler (CUPTI): every DMA and kernel with its start
# and length relative to the xfer call. Run on the GPU machine from the repository root:
# /opt/torch/.venv/bin/python trace_probe.py BUILD_DIR OUT_DIR (XFER_PLUGIN_PATH, LD_LIBRARY_PATH set to BUILD_DIR).
import json, os, sys, time, gzip
build, out = sys.argv[1], sys.argv[2]
os.environ.setdefault("XFER_LIBRARY", os.path.join(build, "lib", "libxfer.so"))
sys.path.insert(0, os.path.join(os.getcwd(), "bindings", "python"))
import numpy as np
import torch
from torch.profiler import profile, ProfilerActivity, record_function
import xfer

torch.zeros(1, device="cuda")
MiB = 1 << 20


def scenarios():
    ctx = xfer.Context("pageable")
    s = ctx.stream()
    b64 = ctx.alloc(64 * MiB)
    b64.host_array()[:] = np.random.default_rng(1).integers(0, 255, 64 * MiB, dtype=np.uint8)
    b256 = ctx.alloc(256 * MiB)
    b256.host_array()[:] = 7
    region = ctx.alloc(32 * MiB)
    region.host_array()[:] = 3
    rng = np.random.default_rng(2)
    hs = rng.permutation(8192)[:4096]
    ds = rng.permutation(8192)[:4096]
    h2d_d = [region.device_ptr + int(x) * 4096 for x in ds]
    h2d_s = [region.host_ptr + int(x) * 4096 for x in hs]
    sizes = [4096] * 4096
    pctx = xfer.Context("pinned")
    ps = pctx.stream()
    p64 = pctx.alloc(64 * MiB)
    cases = [
        ("pageable-h2d-64MiB", lambda: b64.copy_async(xfer.Direction.TO_DEVICE, s), s),
        ("pageable-d2h-64MiB", lambda: b64.copy_async(xfer.Direction.TO_HOST, s), s),
        ("pageable-h2d-256MiB", lambda: b256.copy_async(xfer.Direction.TO_DEVICE, s), s),
        ("pageable-batch-h2d", lambda: ctx.memcpy_batch_async(h2d_d, h2d_s, sizes, xfer.CopyKind.HOST_TO_DEVICE, s), s),
        ("pageable-batch-d2h", lambda: ctx.memcpy_batch_async(h2d_s, h2d_d, sizes, xfer.CopyKind.DEVICE_TO_HOST, s), s),
        ("pinned-h2d-64MiB", lambda: p64.copy_async(xfer.Direction.TO_DEVICE, ps), ps),
    ]
    return cases, (ctx, s, b64, b256, region, pctx, ps, p64)


cases, keep = scenarios()
for name, run, st in cases:  # warm-up
    for _ in range(3):
        run(); st.synchronize()
host_times = {}
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for name, run, st in cases:
        for i in range(4):
            with record_function(f"{name}#{i}"):
                t0 = time.perf_counter()
                run()
                t1 = time.perf_counter()
                st.synchronize()
                t2 = time.perf_counter()
            host_times.setdefault(name, []).append(((t1 - t0) * 1e6, (t2 - t0) * 1e6))
path = os.path.join(out, "trace.json")
prof.export_chrome_trace(path)
with open(path) as f:
    tr = json.load(f)
evs = tr["traceEvents"] if isinstance(tr, dict) else tr
ranges = [e for e in evs if e.get("ph") == "X" and "#" in str(e.get("name", "")) and e.get("cat") in ("user_annotation", "cpu_op")]
gpu = [e for e in evs if e.get("ph") == "X" and e.get("cat") in ("gpu_memcpy", "kernel", "gpu_memset", "gpu_user_annotation")]
ranges.sort(key=lambda e: e["ts"])
gpu.sort(key=lambda e: e["ts"])
lines = []
seen = set()
for r in ranges:
    if r["name"] in seen:
        continue
    seen.add(r["name"])
    t0, t1 = r["ts"], r["ts"] + r["dur"]
    inside = [g for g in gpu if t0 - 5 <= g["ts"] <= t1 + 5]
    nm = r["name"]
    base = nm.split("#")[0]
    idx = int(nm.split("#")[1])
    ht = host_times.get(base, [(0, 0)] * 4)[idx]
    lines.append(f"== {nm}: range {r['dur']:.1f} us, call {ht[0]:.1f} us, call+sync {ht[1]:.1f} us, {len(inside)} gpu ops")
    prev_end = t0
    busy = 0.0
    for g in inside[:80]:
        args = g.get("args", {})
        nbytes = args.get("bytes", 0)
        gap = g["ts"] - prev_end
        bw = (nbytes / (g["dur"] * 1e3)) if nbytes and g["dur"] else 0
        lines.append(f"   +{g['ts'] - t0:9.1f} dur {g['dur']:8.1f} gap {gap:7.1f}  {g['cat']:10s} {str(g['name'])[:40]:40s} {nbytes:>10} {bw:6.1f} GB/s")
        prev_end = g["ts"] + g["dur"]
        busy += g["dur"]
    if inside:
        lines.append(f"   first op at +{inside[0]['ts'] - t0:.1f} us, last end at +{prev_end - t0:.1f} us, gpu busy {busy:.1f} us, range end +{t1 - t0:.1f}")
txt = "\n".join(lines)
print(txt)
with open(os.path.join(out, "trace-summary.txt"), "w") as f:
    f.write(txt + "\n")
with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
    g.write(f.read())
os.remove(path)
