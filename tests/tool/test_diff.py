# SPDX-License-Identifier: Apache-2.0
"""`xfer-tool diff A.json B.json`: the figures that changed beyond their spread; exit status 0
when none got worse, 1 when one did (a regression), 2 a bad command line, 3 a file it cannot read."""
import json
import os

from tool_checks import SMALL, expect, parse_args, run

args = parse_args()


def table_rows(text):
    """The figure rows of a diff: the lines between the header row and the count."""
    return [l for l in text.splitlines() if l.split() and "figures changed beyond their spread" not in l]


a = os.path.join(args.workdir, "a.json")
run(args.tool, ["run", "roundtrip,bandwidth", "--backend", "host", "--format", "json", "-o", a] + SMALL)

# The same report against itself: nothing changed, exit 0.
p = run(args.tool, ["diff", a, a], expect_rc=0)
expect("A " + a in p.stdout and "B " + a in p.stdout, "no metadata lines:\n" + p.stdout)
expect("\n0 of " in p.stdout and "figures changed beyond their spread" in p.stdout, p.stdout)

# A2 / B: the largest h2d rate halved and one time doubled, each with a tight spread (measured
# spreads on a loaded machine could hide even a halving): both reported, as WORSE.
with open(a) as f:
    data = json.load(f)


def set_stats(fig, median):
    fig.update(min=median * 0.99, median=median, max=median * 1.01, mean=median, stddev=median * 0.005)


bw = next(r for r in data["results"] if r["workflow"] == "bandwidth")
largest = max(f["bytes"] for f in bw["figures"])
h2d = next(f for f in bw["figures"] if f["name"] == "h2d" and f["unit"] == "GB/s" and f["bytes"] == largest)
rt = next(r for r in data["results"] if r["workflow"] == "roundtrip")
dev = next(f for f in rt["figures"] if f["name"] == "device total")
rate, ms = h2d["median"], dev["median"]
set_stats(h2d, rate)
set_stats(dev, ms)
a2 = os.path.join(args.workdir, "a2.json")
with open(a2, "w") as f:
    json.dump(data, f)
set_stats(h2d, rate / 2)
set_stats(dev, ms * 2)
b = os.path.join(args.workdir, "b.json")
with open(b, "w") as f:
    json.dump(data, f)
a = a2
# Two regressions: exit 1, and the count says so.
p = run(args.tool, ["diff", a, b], expect_rc=1)
expect("figures changed beyond their spread (|B - A| > 2 x combined stddev and > 2%): 2 worse, 0 better" in p.stdout,
       p.stdout)
rows = [l for l in p.stdout.splitlines() if "WORSE" in l]
expect(any(l.split()[:3] == ["bandwidth", "host", "h2d"] and "GB/s" in l and "-50.0%" in l for l in rows),
       "halved h2d rate not reported:\n" + p.stdout)
expect(any(l.split()[:4] == ["roundtrip", "host", "device", "total"] for l in rows), "doubled time not reported:\n" + p.stdout)
expect(not any(l.split()[-1:] == ["better"] for l in table_rows(p.stdout)), "something got better?\n" + p.stdout)
p = run(args.tool, ["diff", a, b, "--all"], expect_rc=1)
expect("within spread" in p.stdout, "--all does not list unchanged figures:\n" + p.stdout)
# The other way round both figures got better: reported, and no regression, so exit 0.
p = run(args.tool, ["diff", b, a], expect_rc=0)
expect(sum(l.split()[-1:] == ["better"] for l in table_rows(p.stdout)) == 2 and "WORSE" not in p.stdout, p.stdout)
expect(": 0 worse, 2 better" in p.stdout, p.stdout)
# --help documents the exit statuses.
p = run(args.tool, ["diff", "--help"])
expect("Exit status: 0 no figure got worse" in p.stdout and "1 regressions" in p.stdout, p.stdout)

# Reports written before the run metadata and stddev existed still compare (half the min-max
# range stands in for the spread), e.g. the H200 results kept in docs/.
import glob
root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(args.schema)), "..", "..", ".."))
for old in glob.glob(os.path.join(root, "docs", "results", "*", "compare.json"))[:1]:
    p = run(args.tool, ["diff", old, old])
    expect("\n0 of " in p.stdout and "NVIDIA" in p.stdout.splitlines()[0], "old report:\n" + p.stdout[:2000])

p = run(args.tool, ["diff", a, os.path.join(args.workdir, "missing.json")], expect_rc=3)
expect("cannot read" in p.stderr, p.stderr)
p = run(args.tool, ["diff", a], expect_rc=2)
expect("diff needs two reports" in p.stderr, p.stderr)
print("ok")
