# The overlap workflow's copies (8 batches of 32 MiB of a 256 MiB buffer, to the device then back,
# serially on one stream and pipelined over three) under torch.profiler: each pass's time and its
# DMAs per copy engine direction, with gaps. Also single 64 MiB and 256 MiB copies both ways.
# Run: python trace_overlap.py OUT (XFER_LIBRARY, XFER_PLUGIN_PATH set).
import json, os, sys, time, gzip, statistics
out = sys.argv[1]
sys.path.insert(0, os.path.join(os.getcwd(), "bindings", "python"))
import numpy as np
import torch
from torch.profiler import profile, ProfilerActivity, record_function
import xfer
torch.zeros(1, device="cuda")
MiB = 1 << 20
B = 32 * MiB
res = {}
lines = []
for backend in ("pageable", "pinned"):
    ctx = xfer.Context(backend)
    streams = [ctx.stream() for _ in range(3)]
    buf = ctx.alloc(8 * B)
    buf.host_array()[:] = 9
    b64 = ctx.alloc(64 * MiB)
    def run_pass(ss):
        for i in range(8):
            st = ss[i % len(ss)]
            buf.copy_async(xfer.Direction.TO_DEVICE, st, i * B, B)
            buf.copy_async(xfer.Direction.TO_HOST, st, i * B, B)
        for st in ss:
            st.synchronize()
    cases = [("serial", lambda: run_pass(streams[:1])), ("pipelined", lambda: run_pass(streams)),
             ("h2d64", lambda: (b64.copy_async(xfer.Direction.TO_DEVICE, streams[0]), streams[0].synchronize())),
             ("d2h64", lambda: (b64.copy_async(xfer.Direction.TO_HOST, streams[0]), streams[0].synchronize()))]
    for name, f in cases:
        for _ in range(2):
            f()
    for name, f in cases:
        v = []
        for _ in range(9):
            t0 = time.perf_counter(); f(); v.append((time.perf_counter() - t0) * 1e3)
        res[(backend, name)] = v
        lines.append(f"{backend:9s} {name:10s} median {statistics.median(v):7.3f} ms (min {min(v):.3f} max {max(v):.3f})")
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for name, f in cases:
            with record_function(f"{backend}-{name}"):
                f()
    path = os.path.join(out, f"trace-{backend}.json")
    prof.export_chrome_trace(path)
    tr = json.load(open(path))
    evs = tr["traceEvents"] if isinstance(tr, dict) else tr
    ranges = sorted([e for e in evs if e.get("ph") == "X" and e.get("cat") == "user_annotation"], key=lambda e: e["ts"])
    gpu = sorted([e for e in evs if e.get("ph") == "X" and e.get("cat") == "gpu_memcpy"], key=lambda e: e["ts"])
    for r in ranges:
        t0, t1 = r["ts"], r["ts"] + r["dur"]
        inside = [g for g in gpu if t0 - 5 <= g["ts"] <= t1 + 5]
        lines.append(f"== {r['name']}: range {r['dur']:.1f} us, {len(inside)} DMAs")
        for way in ("HtoD", "DtoH"):
            w = [g for g in inside if way in g["name"]]
            if not w:
                continue
            busy = sum(g["dur"] for g in w)
            nbytes = sum(g.get("args", {}).get("bytes", 0) for g in w)
            span = w[-1]["ts"] + w[-1]["dur"] - w[0]["ts"]
            lines.append(f"   {way}: {len(w)} DMAs, first at +{w[0]['ts'] - t0:.1f}, last end +{w[-1]['ts'] + w[-1]['dur'] - t0:.1f} us, busy {busy:.1f} us of {span:.1f}, {nbytes / busy / 1e3 if busy else 0:.1f} GB/s while busy")
        prev = {}
        for g in inside[:400]:
            way = "HtoD" if "HtoD" in g["name"] else "DtoH"
            nb = g.get("args", {}).get("bytes", 0)
            gap = g["ts"] - prev.get(way, t0)
            lines.append(f"   {way} +{g['ts'] - t0:9.1f} dur {g['dur']:7.1f} gap {gap:7.1f} {nb:>10} {nb / (g['dur'] * 1e3) if g['dur'] else 0:6.1f} GB/s s{g.get('args', {}).get('stream', '?')}")
            prev[way] = g["ts"] + g["dur"]
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
        g.write(f.read())
    os.remove(path)
    ctx.close()
txt = "\n".join(lines)
open(os.path.join(out, "trace-overlap.txt"), "w").write(txt + "\n")
print("\n".join(l for l in lines if not l.startswith("   HtoD +") and not l.startswith("   DtoH +")))
