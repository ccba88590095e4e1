# SPDX-License-Identifier: Apache-2.0
"""--config: the library reads the same file (its backend key picks the backend)."""
import json
import os

from tool_checks import expect, parse_args, run

args = parse_args()
cfg = os.path.join(args.workdir, "xfer.ini")
with open(cfg, "w") as f:
    f.write("# chosen by the file, not the command line\nbackend = host\ndevice = 0\n")
out = os.path.join(args.workdir, "config.json")
proc = run(args.tool, ["run", "roundtrip", "--config", cfg, "--size", "64KiB", "-r", "2", "--format", "json", "-o", out])
# No --backend: run says which backend it opens and that the file named it.
expect(proc.stderr.splitlines()[0] == "xfer-tool: running on backend host: named by the backend key of the "
       "configuration file " + cfg, "stderr:\n" + proc.stderr)
with open(out) as f:
    data = json.load(f)
expect(data["results"][0]["backend"] == "host", "backend: %r" % data["results"][0]["backend"])
expect(data["results"][0]["verification"]["status"] == "passed", "not verified")

with open(cfg, "w") as f:
    f.write("backend = host\nbogus_key = 1\n")
proc = run(args.tool, ["run", "roundtrip", "--config", cfg, "--size", "64KiB", "-r", "2"], expect_rc=3)
expect("bogus_key" in proc.stderr, "the library's config error is not shown:\n" + proc.stderr)

proc = run(args.tool, ["run", "roundtrip", "--config", os.path.join(args.workdir, "missing.ini")], expect_rc=2)
expect("cannot read the configuration file" in proc.stderr, proc.stderr)
# The [xfer-tool] section follows the library's grammar, and errors name FILE:LINE as the library's do.
with open(cfg, "w") as f:
    f.write("backend = host\n[xfer-tool]\nsize = 1.5GiB\n")
proc = run(args.tool, ["run", "roundtrip", "--config", cfg], expect_rc=2)
expect(cfg + ":3: [xfer-tool] size: '1.5GiB': fractional sizes are not supported" in proc.stderr, proc.stderr)
with open(cfg, "w") as f:
    f.write("backend = host\n[xfer-tool]\nrepeats = 2\nsize = 64KiB\n")
out = os.path.join(args.workdir, "section.json")
run(args.tool, ["run", "roundtrip", "--config", cfg, "--format", "json", "-o", out])
with open(out) as f:
    data = json.load(f)
expect(data["results"][0]["parameters"]["size"] == 65536, "size from [xfer-tool]: %r" % data["results"][0]["parameters"])
expect(all(f["samples"] in (0, 1, 2) for f in data["results"][0]["figures"]), "repeats from [xfer-tool] not exact")
expect(any(c["section"] == "xfer-tool" and c["name"] == "repeats" and c["value"] == "2" for c in data["run"]["config"]),
       "effective run options not recorded: %r" % data["run"]["config"])
print("ok")
