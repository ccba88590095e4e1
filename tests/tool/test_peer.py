# SPDX-License-Identifier: Apache-2.0
"""peer and --device all on the host backend with emulated devices (XFER_HOST_DEVICES), with the
paths of the copies into every device, and the table's source x destination matrix of GB/s."""
import json
import os

from tool_checks import expect, parse_args, run, validate_results

args = parse_args()
small = ["--size", "256KiB", "--repeats", "2", "--warmup", "1", "--seed", "7", "--format", "json"]

# Three devices: six ordered pairs, each xfer, raw (memcpy) and the ratio, all verified.
out = os.path.join(args.workdir, "peer.json")
run(args.tool, ["run", "peer", "--backend", "host", "-o", out] + small, {"XFER_HOST_DEVICES": "3"})
data = validate_results(out, args.schema)
expect(len(data["results"]) == 1, "one result expected: %r" % [r["workflow"] for r in data["results"]])
r = data["results"][0]
expect(r["workflow"] == "peer" and r["verification"]["status"] == "passed", "peer: %r" % r["verification"])
names = {f["name"] for f in r["figures"]}
for src in range(3):
    for dst in range(3):
        if src == dst:
            continue
        pair = "peer %d->%d" % (src, dst)
        for name in (pair, "raw " + pair, pair + " xfer / raw"):
            expect(name in names, "missing figure %r in %r" % (name, sorted(names)))
rates = [f for f in r["figures"] if f["name"] == "peer 0->1" and f["unit"] == "GB/s"]
expect(rates and rates[0]["samples"] == 2 and rates[0]["median"] > 0, "peer 0->1 GB/s: %r" % rates)
# Every device's copies count, not only those of the device peer runs on: per pair the source's
# host view pushed, 1 + 2 timed peer copies, then the xfer check (clear, copy, fetch) and the raw
# one (clear, fetch; the raw copy is not xfer's), each of 256 KiB.
per_pair = 1 + (1 + 2) + 3 + 2
expect(r["paths"] == {"host_memcpy": {"copies": 6 * per_pair, "bytes": 6 * per_pair * 256 * 1024,
                                      "host_ns": r["paths"]["host_memcpy"]["host_ns"]}},
       "peer paths (6 pairs of %d copies): %r" % (per_pair, r["paths"]))
expect(r["slow_copies"] == 0 and r["registrations"] == 0, "peer: %r %r" % (r["slow_copies"], r["registrations"]))

# The table shows the GB/s as nvbandwidth does: a matrix per call, one row per source device, one
# column per destination, '-' on the diagonal; every figure is still listed below it.
def matrices(table):
    """The matrices of the peer block: {title: {source: [cells by destination]}}."""
    block = table.split("== peer on host")[1].split("\n== ")[0].splitlines()
    found = {}
    for i, line in enumerate(block):
        if line.strip().startswith("GB/s, ") and line.rstrip().endswith("column = destination device):"):
            header = block[i + 1].split()
            expect(header[0] == "src\\dst", "matrix header: %r" % block[i + 1])
            rows = {}
            for row in block[i + 2:]:
                cells = row.split()
                if not cells or not cells[0].isdigit() or len(cells) != len(header):
                    break
                rows[int(cells[0])] = cells[1:]
            found[line.strip()] = (header[1:], rows)
    return found


for devices in (3, 2):
    table = run(args.tool, ["run", "peer", "--backend", "host", "--size", "256KiB", "--repeats", "2", "--warmup", "1",
                            "--seed", "7"], {"XFER_HOST_DEVICES": str(devices)}).stdout
    found = matrices(table)
    titles = sorted(found)
    expect(len(titles) == 2 and any("xfer_memcpy_peer_async" in t for t in titles)
           and any("std::memcpy" in t for t in titles), "%d devices: matrices %r\n%s" % (devices, titles, table))
    for title, (columns, rows) in found.items():
        expect(columns == [str(d) for d in range(devices)] and sorted(rows) == list(range(devices)),
               "%d devices, %s: columns %r, rows %r\n%s" % (devices, title, columns, sorted(rows), table))
        for src in range(devices):
            for dst in range(devices):
                cell = rows[src][dst]
                if src == dst:
                    expect(cell == "-", "%s: diagonal %d is %r" % (title, src, cell))
                else:
                    expect(float(cell) > 0, "%s: %d->%d is %r" % (title, src, dst, cell))
    expect("peer 1->0 xfer / raw" in table and "matrix=" not in table, "the figures below the matrix:\n" + table)

# One device (the default): nothing to pair, reported, not an error.
out1 = os.path.join(args.workdir, "peer1.json")
run(args.tool, ["run", "peer", "--backend", "host", "-o", out1] + small, {"XFER_HOST_DEVICES": "1"})
with open(out1) as f:
    one = json.load(f)["results"][0]
expect(one["verification"]["status"] == "not run", "one device: %r" % one["verification"])
expect(any("no pair" in f["note"] for f in one["figures"]), "one device: %r" % one["figures"])

# 'all' leaves peer out.
outa = os.path.join(args.workdir, "all.json")
run(args.tool, ["run", "all", "--backend", "host", "--sizes", "4KiB", "--copies", "8", "--batches", "2",
                "-o", outa] + small, {"XFER_HOST_DEVICES": "2"})
with open(outa) as f:
    workflows = [x["workflow"] for x in json.load(f)["results"]]
expect("peer" not in workflows and "roundtrip" in workflows, "all ran: %r" % workflows)

# --device all: every workflow once per device, reported per device; peer once per backend.
outd = os.path.join(args.workdir, "devices.json")
run(args.tool, ["run", "roundtrip", "peer", "--backend", "host", "--device", "all", "-o", outd] + small,
    {"XFER_HOST_DEVICES": "2"})
data = validate_results(outd, args.schema)
seen = [(x["workflow"], x["device"]["ordinal"]) for x in data["results"]]
expect(seen == [("roundtrip", 0), ("peer", 0), ("roundtrip", 1)], "--device all ran: %r" % seen)
expect(all(x["verification"]["status"] == "passed" for x in data["results"]), "not all verified")
print("ok")
