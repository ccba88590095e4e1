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
for label in ("host h2d", "host d2h", "host bidirectional", "GB/s", "1 KiB", "1 MiB"):
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
run(args.tool, ["run", "roundtrip", "--backend", "host", "--size", "64KiB", "-r", "2", "-f", "json", "-o", roundtrip])
proc = run(args.tool, ["plot", roundtrip, "-o", png], expect_rc=3)
expect("no bandwidth figures" in proc.stderr, proc.stderr)
print("ok")
