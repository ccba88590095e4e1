"""--config: the library reads the same file (its backend key picks the backend)."""
import json
import os

from tool_checks import expect, parse_args, run

args = parse_args()
cfg = os.path.join(args.workdir, "xfer.ini")
with open(cfg, "w") as f:
    f.write("# chosen by the file, not the command line\nbackend = host\ndevice = 0\n")
out = os.path.join(args.workdir, "config.json")
run(args.tool, ["run", "roundtrip", "--config", cfg, "--size", "64KiB", "-n", "2", "--format", "json", "-o", out])
with open(out) as f:
    data = json.load(f)
expect(data["results"][0]["backend"] == "host", "backend: %r" % data["results"][0]["backend"])
expect(data["results"][0]["verification"]["status"] == "passed", "not verified")

with open(cfg, "w") as f:
    f.write("backend = host\nbogus_key = 1\n")
proc = run(args.tool, ["run", "roundtrip", "--config", cfg, "--size", "64KiB", "-n", "2"], expect_rc=3)
expect("bogus_key" in proc.stderr, "the library's config error is not shown:\n" + proc.stderr)

proc = run(args.tool, ["run", "roundtrip", "--config", os.path.join(args.workdir, "missing.ini")], expect_rc=2)
expect("cannot read the configuration file" in proc.stderr, proc.stderr)
print("ok")
