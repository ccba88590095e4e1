# SPDX-License-Identifier: Apache-2.0
"""`xfer-tool plot`: PNG and SVG from a JSON report (gnuplot), and clear errors."""
import os

from tool_checks import expect, parse_args, run

args = parse_args()
results = os.path.join(args.workdir, "bandwidth.json")
run(args.tool, ["run", "bandwidth", "--backend", "host", "--sizes", "1KiB:1MiB", "--repeats", "3", "--warmup", "1",
                "--format", "json", "--output", results])

png = os.path.join(args.workdir, "bandwidth.png")
svg = os.path.join(args.workdir, "bandwidth.svg")
for path in (png, svg):
    if os.path.exists(path):
        os.remove(path)
run(args.tool, ["plot", results, "-o", png])
with open(png, "rb") as f:
    data = f.read()
expect(data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file")
expect(len(data) > 10000, "PNG is suspiciously small: %d bytes" % len(data))

run(args.tool, ["plot", results, "-o", svg])
with open(svg) as f:
    text = f.read()
expect("<svg" in text, "no <svg> element")
expect(len(text) > 5000, "SVG is suspiciously small: %d bytes" % len(text))
for label in ("host h2d", "host d2h", "host bidirectional", "host raw h2d", "host raw d2h", "GB/s", "1 KiB", "1 MiB",
              "xfer-tool 1.", "host (emulated device), 20"):
    expect(label in text, "SVG lacks %r" % label)

# Errors say what is wrong and exit non-zero.
proc = run(args.tool, ["plot", results, "-o", os.path.join(args.workdir, "x.jpg")], expect_rc=3)
expect("must end in .png or .svg" in proc.stderr, proc.stderr)
proc = run(args.tool, ["plot", results, "-o", png], env_extra={"XFER_TOOL_GNUPLOT": "/nonexistent/gnuplot"},
           expect_rc=3)
expect("gnuplot" in proc.stderr and ("not found" in proc.stderr or "not installed" in proc.stderr), proc.stderr)
proc = run(args.tool, ["plot", os.path.join(args.workdir, "missing.json"), "-o", png], expect_rc=3)
expect("cannot read" in proc.stderr, proc.stderr)
roundtrip = os.path.join(args.workdir, "roundtrip.json")
run(args.tool, ["run", "roundtrip", "--backend", "host", "--size", "64KiB", "-r", "2", "--format", "json", "-o", roundtrip])
proc = run(args.tool, ["plot", roundtrip, "-o", png], expect_rc=3)
expect("no bandwidth figures" in proc.stderr, proc.stderr)
# --kind overlap: the timeline of a trace, one row per stream.
trace = os.path.join(args.workdir, "overlap.trace.json")
run(args.tool, ["run", "overlap", "--backend", "host", "--size", "1MiB", "--batches", "4", "-r", "2", "--trace", trace])
timeline = os.path.join(args.workdir, "overlap.svg")
run(args.tool, ["plot", "--kind", "overlap", trace, "-o", timeline])
with open(timeline) as f:
    text = f.read()
expect("<svg" in text and "time (ms)" in text, "overlap SVG lacks its axis")
for label in ("host: stream 1", "host: stream 2", "copy", "kernel"):
    expect(label in text, "overlap SVG lacks %r" % label)
run(args.tool, ["plot", "--kind", "overlap", trace, "-o", png])
with open(png, "rb") as f:
    expect(f.read(8) == b"\x89PNG\r\n\x1a\n", "overlap PNG is not a PNG")
proc = run(args.tool, ["plot", "--kind", "overlap", results, "-o", png], expect_rc=3)
expect("not a Chrome trace" in proc.stderr, proc.stderr)
print("ok")
