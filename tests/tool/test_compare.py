# SPDX-License-Identifier: Apache-2.0
"""`xfer-tool compare`: every available backend, side-by-side table, a recommendation per pattern."""
import os
import re

from tool_checks import SMALL, expect, parse_args, run, validate_results

args = parse_args()
proc = run(args.tool, ["compare"] + SMALL)
out = proc.stdout
expect("== comparison (medians" in out, "no side-by-side table:\n" + out)
expect("== recommendations" in out, "no recommendations:\n" + out)
for pattern in ("large one-off transfers: ", "streaming: ", "many small copies: ", "data read once by a kernel: "):
    lines = [l for l in out.splitlines() if l.strip().startswith(pattern)]
    expect(len(lines) == 1, "pattern %r: %r" % (pattern, lines))
    expect("no recommendation" not in lines[0], "no recommendation for %r: %s" % (pattern, lines[0]))
header = [l for l in out.splitlines() if l.strip().startswith("workflow ") and "figure" in l]
expect(header and "host" in header[0].split(), "host column missing: %r" % header)
# xfer against the raw call: per direction one ratio row and one raw GB/s row, the largest
# size's (cells are separated by two or more spaces), each with a number for host.
backends = header[0].split()[4:]  # after workflow, figure, size, unit
table_rows = [re.split(r"\s{2,}", l.strip()) for l in out.splitlines()]
for direction in ("h2d", "d2h"):
    for figure, unit in ((direction + " xfer / raw", "x"), ("raw " + direction, "GB/s")):
        rows = [c for c in table_rows if c[:2] == ["bandwidth", figure]]
        expect(len(rows) == 1, "%s rows in the comparison: %r" % (figure, rows))
        cells = rows[0]
        expect(cells[2:4] == ["256 KiB", unit], "%s row is not the largest size's %s: %r" % (figure, unit, cells))
        expect(len(cells) == 4 + len(backends), "%s row lacks cells: %r" % (figure, cells))
        expect(float(cells[4 + backends.index("host")]) > 0, "%s row has no host number: %r" % (figure, cells))

path = os.path.join(args.workdir, "compare.json")
proc = run(args.tool, ["compare", "--format", "json", "--output", path] + SMALL)
expect("== recommendations" in proc.stdout, "report in a file: stdout lacks the comparison:\n" + proc.stdout)
data = validate_results(path, args.schema)
expect(len(data["recommendations"]) == 4, "recommendations: %r" % data.get("recommendations"))
backends = {r["backend"] for r in data["results"]}
expect("host" in backends, "host not compared: %r" % backends)
for r in data["results"]:
    expect(r["verification"]["status"] == "passed", "%s on %s: %r" % (r["workflow"], r["backend"], r["verification"]))
for rec in data["recommendations"]:
    expect(rec["backend"] in backends, "recommended backend not compared: %r" % rec)
print("ok")
