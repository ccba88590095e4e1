# SPDX-License-Identifier: Apache-2.0
"""Pageable NumPy arrays to and from CuPy arrays and PyTorch tensors: xfer.copy against the
frameworks' own copies, in one process, on one GPU.

Per size (default 64 MiB, 256 MiB, 1 GiB) and direction (H2D: NumPy -> device, D2H: device ->
NumPy), each of these is timed on the host (time.perf_counter around the call and the wait for
the framework's current stream, i.e. until the bytes are there):

  xfer.copy NumPy <-> CuPy   pageable backend, pageable NumPy array, CuPy's current stream
  CuPy               ndarray.set(a) / ndarray.get(out=b), the same pageable array
  xfer.copy NumPy <-> torch  pageable backend, pageable NumPy array, torch's current stream
  PyTorch            Tensor.copy_(torch.from_numpy(a)) / torch.from_numpy(b).copy_(t)
  xfer pinned + reg  pinned backend, a NumPy array registered with ctx.register (page-locked)

and the host time of the xfer.copy_async call itself (queued on the framework's current stream,
pageable backend) as a share of the whole copy (goal: at most 5 %). The methods alternate within
each repeat (one of each, in turn), after warm-up rounds; figures are medians of the repeats.
GB/s are 10^9 bytes per second; MiB and GiB are powers of 1024. Each method's result is checked
byte for byte once per size and direction. A markdown table goes to stdout, every sample and
the machine's facts to the JSON file named on the command line.

    XFER_LIBRARY=/path/to/build/lib/libxfer.so /opt/torch/.venv/bin/python \\
        bindings/python/examples/bench_frameworks.py results.json [--sizes 64MiB,256MiB,1GiB] [--repeats 7]

Needs the pageable and pinned backends and CuPy or PyTorch (what is missing is left out, saying
so). Imports xfer from this source tree when it is not installed.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import xfer  # noqa: E402

MiB = 1 << 20


def parse_size(text):
    text = text.strip()
    for suffix, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("GB", 10**9), ("MB", 10**6)):
        if text.endswith(suffix):
            return int(float(text[:-len(suffix)]) * mult)
    return int(text)


def size_name(n):
    return f"{n >> 30} GiB" if n % (1 << 30) == 0 else f"{n >> 20} MiB"


def load(name):
    try:
        return __import__(name)
    except Exception as e:  # not installed, or no usable CUDA runtime
        print(f"note: {name} unavailable ({type(e).__name__}: {e}); its rows are left out", file=sys.stderr)
        return None


class Bench:
    def __init__(self, args):
        self.args = args
        self.cp = load("cupy")
        self.torch = load("torch")
        if self.torch is not None and not self.torch.cuda.is_available():
            self.torch = None
        if self.cp is None and self.torch is None:
            sys.exit("neither CuPy nor PyTorch with CUDA is available: nothing to compare")
        self.pageable = xfer.Context("pageable", args.device)
        self.pinned = xfer.Context("pinned", args.device)

    # ---- one sample each: seconds from the call until the data is there
    def sync(self):
        if self.cp is not None:
            self.cp.cuda.get_current_stream().synchronize()
        if self.torch is not None:
            self.torch.cuda.current_stream().synchronize()

    def timed(self, fn):
        self.sync()
        t0 = time.perf_counter()
        fn()
        self.sync()
        return time.perf_counter() - t0

    def call_share(self, dst, src):
        """(seconds the copy_async call took, seconds until done)."""
        self.sync()
        t0 = time.perf_counter()
        t = xfer.copy_async(dst, src, ctx=self.pageable)
        t1 = time.perf_counter()
        t.wait()
        self.sync()
        return t1 - t0, time.perf_counter() - t0

    def methods(self, n, direction, arrays):
        a, a_reg, b, b_reg, c, t = arrays
        out = []
        if direction == "h2d":
            if c is not None:
                out.append(("xfer.copy NumPy -> CuPy (pageable backend)", lambda: xfer.copy(c, a, ctx=self.pageable), c))
                out.append(("CuPy ndarray.set", lambda: c.set(a), c))
            if t is not None:
                src = self.torch.from_numpy(a)
                out.append(("xfer.copy NumPy -> torch (pageable backend)", lambda: xfer.copy(t, a, ctx=self.pageable), t))
                out.append(("PyTorch Tensor.copy_", lambda: t.copy_(src), t))
            dev = c if c is not None else t
            out.append(("xfer.copy, pinned backend, registered array",
                        lambda: xfer.copy(dev, a_reg, ctx=self.pinned), dev))
        else:
            if c is not None:
                out.append(("xfer.copy CuPy -> NumPy (pageable backend)", lambda: xfer.copy(b, c, ctx=self.pageable), b))
                out.append(("CuPy ndarray.get(out=)", lambda: c.get(out=b), b))
            if t is not None:
                dst = self.torch.from_numpy(b)
                out.append(("xfer.copy torch -> NumPy (pageable backend)", lambda: xfer.copy(b, t, ctx=self.pageable), b))
                out.append(("PyTorch Tensor.copy_", lambda: dst.copy_(t), b))
            dev = c if c is not None else t
            out.append(("xfer.copy, pinned backend, registered array",
                        lambda: xfer.copy(b_reg, dev, ctx=self.pinned), b_reg))
        return out

    def verify(self, direction, target, expect):
        if direction == "h2d":
            got = self.cp.asnumpy(target) if self.cp is not None and isinstance(target, self.cp.ndarray) \
                else target.cpu().numpy()
        else:
            got = target
        if not np.array_equal(got.view(np.uint8), expect):
            raise SystemExit(f"FAIL: {direction} result differs from its source")

    def clear(self, target):
        if isinstance(target, np.ndarray):
            target[:] = 0
        elif self.torch is not None and isinstance(target, self.torch.Tensor):
            target.fill_(0)
        else:
            target.fill(0)
        self.sync()

    def run_size(self, n):
        rng = np.random.default_rng(n)
        a = rng.integers(0, 255, n, dtype=np.uint8)
        a_reg = a.copy()
        b = np.zeros(n, np.uint8)
        b_reg = np.zeros(n, np.uint8)
        # Warm the pages: a first touch would be timed in the first copy otherwise.
        b[:] = 1
        b_reg[:] = 1
        c = self.cp.asarray(a) if self.cp is not None else None
        t = self.torch.from_numpy(a).cuda() if self.torch is not None else None
        rows, shares = [], []
        with self.pinned.register(a_reg), self.pinned.register(b_reg):
            arrays = (a, a_reg, b, b_reg, c, t)
            for direction in ("h2d", "d2h"):
                methods = self.methods(n, direction, arrays)
                share_cases = []
                if c is not None:
                    share_cases.append(("CuPy", (c, a) if direction == "h2d" else (b, c)))
                if t is not None:
                    share_cases.append(("torch", (t, a) if direction == "h2d" else (b, t)))
                for name, fn, target in methods:  # checked once, from a cleared destination
                    self.clear(target)
                    fn()
                    self.sync()
                    self.verify(direction, target, a)
                samples = {name: [] for name, _, _ in methods}
                share = {name: ([], []) for name, _ in share_cases}
                for r in range(self.args.warmup + self.args.repeats):
                    for name, fn, _ in methods:
                        dt = self.timed(fn)
                        if r >= self.args.warmup:
                            samples[name].append(dt)
                    for name, (dst, src) in share_cases:
                        call, total = self.call_share(dst, src)
                        if r >= self.args.warmup:
                            share[name][0].append(call)
                            share[name][1].append(total)
                for name, _, _ in methods:
                    med = statistics.median(samples[name])
                    rows.append({"size": n, "direction": direction, "method": name, "median_s": med,
                                 "gbps": n / med / 1e9, "samples_s": samples[name]})
                for name, (calls, totals) in share.items():
                    ratios = [x / y for x, y in zip(calls, totals)]
                    shares.append({"size": n, "direction": direction, "framework": name,
                                   "call_median_s": statistics.median(calls), "copy_median_s": statistics.median(totals),
                                   "share_median": statistics.median(ratios), "call_samples_s": calls,
                                   "copy_samples_s": totals})
                print(f"  {size_name(n)} {direction} done", file=sys.stderr, flush=True)
        return rows, shares


def ratios(rows):
    """Per size and direction: xfer against the framework's own copy, pageable against pinned."""
    out = []
    for key in sorted({(r["size"], r["direction"]) for r in rows}):
        by = {r["method"]: r["gbps"] for r in rows if (r["size"], r["direction"]) == key}
        pinned = by.get("xfer.copy, pinned backend, registered array")
        for name, gbps in by.items():
            if not name.startswith("xfer.copy") or "pinned" in name:
                continue
            base = ("CuPy ndarray.set" if key[1] == "h2d" else "CuPy ndarray.get(out=)") if "CuPy" in name \
                else "PyTorch Tensor.copy_"
            out.append({"size": key[0], "direction": key[1], "method": name, "vs": base,
                        "ratio_vs_framework": gbps / by[base] if base in by else None,
                        "ratio_vs_pinned_registered": gbps / pinned if pinned else None})
    return out


def markdown(rows, shares, rats):
    lines = ["| size | direction | method | GB/s | median ms | xfer / framework's copy | / pinned registered |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    rat = {(x["size"], x["direction"], x["method"]): x for x in rats}
    for r in rows:
        x = rat.get((r["size"], r["direction"], r["method"]))
        fw = f"{x['ratio_vs_framework']:.2f}x" if x and x["ratio_vs_framework"] else ""
        pn = f"{x['ratio_vs_pinned_registered']:.2f}x" if x and x["ratio_vs_pinned_registered"] else ""
        lines.append(f"| {size_name(r['size'])} | {r['direction'].upper()} | {r['method']} | {r['gbps']:.1f} | "
                     f"{r['median_s'] * 1e3:.2f} | {fw} | {pn} |")
    lines += ["", "| size | direction | xfer.copy_async on the current stream of | call host time (us) | "
              "copy (ms) | call / copy | goal <= 5 % |", "| --- | --- | --- | ---: | ---: | ---: | --- |"]
    for s in shares:
        ok = "PASS" if s["share_median"] <= 0.05 else "FAIL"
        lines.append(f"| {size_name(s['size'])} | {s['direction'].upper()} | {s['framework']} | "
                     f"{s['call_median_s'] * 1e6:.1f} | {s['copy_median_s'] * 1e3:.2f} | "
                     f"{s['share_median'] * 100:.2f} % | {ok} |")
    return "\n".join(lines)


def facts(bench):
    out = {"python": sys.version.split()[0], "numpy": np.__version__, "host": platform.node(),
           "xfer_version": ".".join(map(str, xfer.version())), "xfer_library": os.environ.get("XFER_LIBRARY", ""),
           "device": bench.pageable.device_info()["name"], "pcie": [bench.pageable.device_info()["pcie_generation"],
                                                                    bench.pageable.device_info()["pcie_width"]]}
    if bench.cp is not None:
        out["cupy"] = bench.cp.__version__
    if bench.torch is not None:
        out["torch"] = bench.torch.__version__
    out["pageable_params"] = {p["name"]: p["value"] for p in xfer.params() if p["section"] == "pageable"}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="where to write every sample and the machine's facts (JSON)")
    ap.add_argument("--sizes", default="64MiB,256MiB,1GiB")
    ap.add_argument("--repeats", type=int, default=7, help="timed rounds (at least 5)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args()
    if args.repeats < 5:
        ap.error("--repeats must be at least 5")
    bench = Bench(args)
    rows, shares = [], []
    for n in (parse_size(x) for x in args.sizes.split(",")):
        r, s = bench.run_size(n)
        rows += r
        shares += s
    rats = ratios(rows)
    print(markdown(rows, shares, rats))
    with open(args.json, "w") as f:
        json.dump({"facts": facts(bench), "repeats": args.repeats, "warmup": args.warmup, "results": rows,
                   "ratios": rats, "call_share": shares}, f, indent=1)
    print(f"\nwritten: {args.json}")


if __name__ == "__main__":
    main()
