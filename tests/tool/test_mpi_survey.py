# SPDX-License-Identifier: Apache-2.0
"""`mpiexec -n 2 xfer-tool run bandwidth` on the host backend: the two ranks measure at once and
rank 0 writes one report (JSON, table, CSV) with a result per rank, tagged with rank and host, the
table of ranks and the summary naming the slowest rank against the median; the other rank prints
nothing. A verification failure on rank 1 alone makes both ranks exit non-zero. --trace writes a
file per rank. XFER_TOOL_MPI=0 and a plain run (no launcher) report alone, without rank columns."""
import csv
import json
import os
import socket
import subprocess

from tool_checks import expect, fail, parse_args, run, tool_env, validate_results

args = parse_args("--mpiexec", "--np-flag")
host = socket.gethostname()
base = ["run", "bandwidth", "--sizes", "64KiB:1MiB", "--repeats", "3", "--warmup", "1"]
SIZES = [64 << 10, 256 << 10, 1 << 20]
RATES = ("h2d", "d2h", "bidirectional")


def mpiexec(programs, env_extra=None, expect_rc=0):
    """programs: one list of arguments per MPMD program, each run on one rank (":" between them)."""
    cmd = [args.mpiexec, "--oversubscribe"]
    for i, program in enumerate(programs):
        cmd += ([":"] if i else []) + [args.np_flag, "1"] + program
    env = tool_env({"XFER_BACKEND": "host", **(env_extra or {})})
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    except subprocess.TimeoutExpired:
        fail("%s: still running after 300 s" % " ".join(cmd))
    if expect_rc is not None and proc.returncode != expect_rc:
        fail("%s: exit status %d, expected %d\nstdout:\n%s\nstderr:\n%s"
             % (" ".join(cmd), proc.returncode, expect_rc, proc.stdout[-4000:], proc.stderr[-4000:]))
    return proc


def both(tool_args):
    return [[args.tool] + tool_args, [args.tool] + tool_args]


# Without --backend, rank 0 alone says once which backend the ranks open and why.
CHOICE = "xfer-tool[rank 0]: running on backend host: named by XFER_BACKEND\n"

# JSON into a file: one report, PASS on stdout (rank 0's alone), nothing else on stderr.
merged = os.path.join(args.workdir, "merged.json")
proc = mpiexec(both(base + ["--format", "json", "-o", merged]))
expect(proc.stdout == "PASS\n", "stdout should be rank 0's verdict alone: %r" % proc.stdout)
expect(proc.stderr == CHOICE, "stderr is not rank 0's backend line alone:\n" + proc.stderr)
data = validate_results(merged, args.schema)
results = data["results"]
expect([(r["workflow"], r["rank"], r["hostname"]) for r in results] == [("bandwidth", 0, host), ("bandwidth", 1, host)],
       "one bandwidth result per rank expected: %r"
       % [(r["workflow"], r.get("rank"), r.get("hostname")) for r in results])
largest = {}
for r in results:
    expect(r["backend"] == "host" and r["device"]["ordinal"] == 0, "rank %d ran on %s device %d"
           % (r["rank"], r["backend"], r["device"]["ordinal"]))
    expect(r["verification"]["status"] == "passed" and r["error"] is None, "rank %d: %r %r"
           % (r["rank"], r["verification"], r["error"]))
    for name in RATES:
        rates = [f for f in r["figures"] if f["name"] == name and f["unit"] == "GB/s"]
        expect([f["bytes"] for f in rates] == SIZES,
               "rank %d %s sizes: %r" % (r["rank"], name, [f["bytes"] for f in rates]))
        expect(all(f["samples"] == 3 and f["median"] > 0 for f in rates),
               "rank %d %s rates: %r" % (r["rank"], name, rates))
        largest[(name, r["rank"])] = rates[-1]["median"]
survey = data["survey"]
expect(survey["size"] == 2 and survey["hosts"] == 1, "survey: %r" % {k: survey[k] for k in ("size", "hosts")})
expect([(x["rank"], x["hostname"], x["local_rank"], x["failed"], x["error"]) for x in survey["ranks"]]
       == [(0, host, 0, 0, None), (1, host, 1, 0, None)], "survey ranks: %r" % survey["ranks"])
# The summary: per rate at 1 MiB, the median of the two ranks and the slower one, from the figures above.
expect([(s["workflow"], s["backend"], s["figure"], s["unit"], s["bytes"], s["results"]) for s in survey["summary"]]
       == [("bandwidth", "host", name, "GB/s", 1 << 20, 2) for name in ("h2d", "d2h", "bidirectional")],
       "summary lines: %r" % survey["summary"])
for s in survey["summary"]:
    values = [largest[(s["figure"], rank)] for rank in (0, 1)]
    slow_rank = 0 if values[0] <= values[1] else 1
    median = (values[0] + values[1]) / 2
    expect(abs(s["median"] - median) <= 1e-9 * median, "%s median %r, ranks %r" % (s["figure"], s["median"], values))
    expect(s["slowest"] == {"rank": slow_rank, "hostname": host, "device": 0, "median": values[slow_rank]},
           "%s slowest %r, ranks %r" % (s["figure"], s["slowest"], values))
    expect(abs(s["vs_median"] - values[slow_rank] / median) <= 1e-9 and 0 < s["vs_median"] <= 1,
           "%s vs_median %r" % (s["figure"], s["vs_median"]))

# The table on stdout: one header, a block per rank, the ranks and the summary, PASS at the end.
proc = mpiexec(both(base))
table = proc.stdout
expect(table.startswith("xfer-tool ") and table.count("\nrun ") == 1, "one report header expected:\n" + table)
expect("survey: 2 ranks on 1 host" in table, "table lacks the survey line:\n" + table)
for rank in (0, 1):
    expect(("== bandwidth on host, rank %d on %s:" % (rank, host)) in table, "table lacks rank %d's block:\n%s"
           % (rank, table))
expect("== survey: each figure's slowest rank against the median" in table, "table lacks the summary:\n" + table)
summary = table.split("== survey: ")[1].splitlines()
expect(sum(1 for line in summary if line.split()[:3] == ["bandwidth", "host", "h2d"]) == 1,
       "summary lacks its h2d line:\n" + table)
expect(table.rstrip().splitlines()[-1] == "PASS", "the table does not end with PASS")
expect(proc.stderr == CHOICE, "stderr is not rank 0's backend line alone:\n" + proc.stderr)

# CSV: every row with its rank and host.
merged_csv = os.path.join(args.workdir, "merged.csv")
mpiexec(both(base + ["--format", "csv", "-o", merged_csv]))
with open(merged_csv, newline="") as f:
    lines = f.read().splitlines()
# The header row first (the survey's ranks and summary are in the JSON report; in the CSV with
# --csv-metadata, survey_test.cpp), read as it is.
expect(lines[0].startswith("rank,hostname,") and not any(line.startswith("#") for line in lines),
       "CSV does not start with its header row:\n" + "\n".join(lines[:5]))
rows = list(csv.DictReader(lines))
expect(rows and {(r["rank"], r["hostname"]) for r in rows} == {("0", host), ("1", host)},
       "CSV ranks: %r" % {(r.get("rank"), r.get("hostname")) for r in rows})
for rank in ("0", "1"):
    h2d = [float(r["median"]) for r in rows if r["rank"] == rank and r["figure"] == "h2d" and r["unit"] == "GB/s"]
    expect(len(h2d) == 3 and all(v > 0 for v in h2d), "CSV rank %s h2d rates: %r" % (rank, h2d))

# A wrong result on rank 1 only (its environment alone has the corruption hook): the report shows
# it, and both ranks exit with 1. Each rank's own status is printed by a shell around it, which
# then waits a second before a failing exit: mpirun kills the other ranks once one exits
# non-zero, and the other rank's shell must have printed its status by then.
status = ('rc=0; "$0" "$@" || rc=$?; echo "rank $OMPI_COMM_WORLD_RANK exit $rc" >&2; '
          '[ "$rc" -eq 0 ] || sleep 1; exit $rc')
failed = os.path.join(args.workdir, "failed.json")
tool_args = base + ["--format", "json", "-o", failed]
proc = mpiexec([["sh", "-c", status, args.tool] + tool_args,
                ["env", "XFER_TOOL_CORRUPT=1", "sh", "-c", status, args.tool] + tool_args], expect_rc=None)
expect(proc.returncode == 1, "exit status %d, expected 1:\n%s" % (proc.returncode, proc.stderr))
for rank in (0, 1):
    expect("rank %d exit 1\n" % rank in proc.stderr, "rank %d did not exit 1:\n%s" % (rank, proc.stderr))
expect("xfer-tool[rank 1]: bandwidth on host: verification FAILED" in proc.stderr,
       "rank 1's failure is not on stderr with its rank:\n" + proc.stderr)
expect("xfer-tool[rank 0]: bandwidth" not in proc.stderr, "rank 0 reported a failure:\n" + proc.stderr)
expect(proc.stdout == "FAIL (1 check failed)\n", "verdict: %r" % proc.stdout)
with open(failed) as f:
    data = json.load(f)
expect([r["verification"]["status"] for r in data["results"]] == ["passed", "failed"],
       "verification per rank: %r" % [r["verification"]["status"] for r in data["results"]])
expect([x["failed"] for x in data["survey"]["ranks"]] == [0, 1], "failed per rank: %r" % data["survey"]["ranks"])
expect([s["results"] for s in data["survey"]["summary"]] == [1, 1, 1], "a failed result counted in the summary")

# --trace: a file per rank, none at the path itself.
trace = os.path.join(args.workdir, "trace.json")
mpiexec(both(base + ["--format", "json", "-o", os.path.join(args.workdir, "traced.json"), "--trace", trace]))
expect(not os.path.exists(trace), "a trace at the path itself: only the ranks' files expected")
for rank in (0, 1):
    with open(os.path.join(args.workdir, "trace.rank%d.json" % rank)) as f:
        events = json.load(f)["traceEvents"]
    expect(any(e.get("ph") == "X" for e in events), "rank %d's trace has no spans" % rank)

# XFER_TOOL_MPI=0: the ranks do not join; each writes its own plain report.
proc = mpiexec(both(base), {"XFER_TOOL_MPI": "0"})
expect(proc.stdout.count("\nrun ") == 2 and "survey" not in proc.stdout and ", rank " not in proc.stdout,
       "two plain reports expected:\n" + proc.stdout)

# Without a launcher: a plain report, no rank or survey anywhere.
plain = os.path.join(args.workdir, "plain.json")
run(args.tool, base + ["--format", "json", "-o", plain], {"XFER_BACKEND": "host"})
data = validate_results(plain, args.schema)
expect("survey" not in data and all("rank" not in r and "hostname" not in r for r in data["results"]),
       "a plain run carries survey fields")
