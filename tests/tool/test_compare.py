# SPDX-License-Identifier: Apache-2.0
"""`xfer-tool compare`: every available backend, side-by-side table with the paths each backend's
copies took, a recommendation per pattern."""
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

# Which path did the work: a paths row per workflow and a line per backend over all of them.
workflows_compared = []
for cells in table_rows:
    if len(cells) > 1 and cells[1] == "verification":
        workflows_compared.append(cells[0])
expect(len(workflows_compared) == 7, "workflows in the comparison: %r" % workflows_compared)
for wf in workflows_compared:
    rows = [c for c in table_rows if c[:2] == [wf, "paths"]]
    expect(len(rows) == 1 and rows[0][-1] == "host_memcpy 100%", "%s paths row: %r" % (wf, rows))
section = out.split("== paths (every workflow's copies, by bytes)\n")
expect(len(section) == 2, "no paths section:\n" + out)
path_lines = section[1].split("\n\n")[0].splitlines()
expect(len(path_lines) == len(backends), "paths section lines %r, backends %r" % (path_lines, backends))
host_line = next((l for l in path_lines if l.strip().startswith("host: ")), "")
m = re.match(r"^\s+host: host_memcpy 100% \(([0-9.]+ [KMG]i?B|[0-9]+ B) in ([0-9]+) copies\)$", host_line)
expect(m, "host paths line: %r" % host_line)

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
# The JSON run made the same copies (--repeats fixes every loop): the table's total is their sum.
host_results = [r for r in data["results"] if r["backend"] == "host"]
expect(all(set(r["paths"]) == {"host_memcpy"} for r in host_results),
       "host paths: %r" % [r["paths"] for r in host_results])
total_copies = sum(r["paths"]["host_memcpy"]["copies"] for r in host_results)
expect(total_copies > 0 and int(m.group(2)) == total_copies,
       "paths line counts %s copies, the JSON results %d" % (m.group(2), total_copies))
print("ok")
