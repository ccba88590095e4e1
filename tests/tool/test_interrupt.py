# SPDX-License-Identifier: Apache-2.0
"""Report and trace files are written whole or not at all, and SIGINT / SIGTERM stop a run
cleanly: a long `run` on the host backend sent SIGTERM (or SIGINT) exits 143 (130), says on
one line of stderr that it was interrupted and kept the earlier report, and leaves the earlier
-o and --trace files byte for byte as they were, with no temporary file beside them; `bench -o`
the same; two runs writing one -o at once leave a report that parses and matches the schema;
a finished run replaces the earlier file with the mode it had. The runs are stopped soon after
they start (each check takes a second or two); nothing here depends on how fast the machine is."""
import json
import os
import signal
import stat
import subprocess
import time

from tool_checks import expect, fail, parse_args, run, tool_env, validate_results

args = parse_args()
HOST = {"XFER_BACKEND": "host"}
QUICK = ["--size", "64KiB", "--sizes", "1KiB:16KiB", "--repeats", "2", "--warmup", "0", "--seed", "3"]
# Ten thousand sizes of bandwidth on host: far longer than any check waits, so the signal
# always arrives while it measures.
LONG = ["run", "bandwidth", "--sizes", "1KiB:10000KiB:+1KiB", "--repeats", "20", "--seed", "5"]


def folder(name):
    path = os.path.join(args.workdir, name)
    os.makedirs(path, exist_ok=True)
    for entry in os.listdir(path):
        os.remove(os.path.join(path, entry))
    return path


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def start(argv, where, expected):
    """Starts the tool and returns once it is measuring: a file other than `expected` has
    appeared in `where` (its temporary output file), or one of `expected` changed."""
    before = {name: read_bytes(os.path.join(where, name)) for name in expected}
    proc = subprocess.Popen([args.tool] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=tool_env(HOST))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            fail("%s ended before it was interrupted: exit %d\n%s" % (" ".join(argv), proc.returncode,
                                                                     proc.stderr.read()[-2000:]))
        if set(os.listdir(where)) - set(expected):
            break
        if any(read_bytes(os.path.join(where, name)) != data for name, data in before.items()):
            break
        time.sleep(0.02)
    else:
        proc.kill()
        fail("%s wrote no file in %s within 30 s" % (" ".join(argv), where))
    time.sleep(0.3)  # into the measurements
    return proc


def stop(proc, sig):
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("still running 60 s after signal %d" % sig)
    return proc.returncode, out, err


def check_interrupted(rc, err, sig, status, kept):
    name = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}[sig]
    expect(rc == status, "%s: exit status %d, expected %d\nstderr:\n%s" % (name, rc, status, err[-2000:]))
    lines = err.splitlines()
    # run without --backend first says which backend it opens (test_backend_choice.py checks that).
    if lines and lines[0].startswith("xfer-tool: running on backend host: "):
        lines = lines[1:]
    expect(len(lines) == 1 and lines[0].startswith("xfer-tool: interrupted by %s" % name),
           "%s: stderr is not one line saying so:\n%s" % (name, err[-2000:]))
    for what, path in kept:
        expect("the earlier %s '%s' was kept" % (what, path) in err, "%s: stderr lacks %s %s:\n%s" % (name, what, path, err))


# 1. run -o FILE --trace FILE, SIGTERM: exit 143; both earlier files as they were, nothing beside them.
d = folder("sigterm")
report, trace = os.path.join(d, "report.json"), os.path.join(d, "trace.json")
run(args.tool, ["run", "roundtrip", "--format", "json", "-o", report, "--trace", trace] + QUICK, env_extra=HOST)
validate_results(report, args.schema)
json.loads(read_bytes(trace))
earlier_report, earlier_trace = read_bytes(report), read_bytes(trace)
proc = start(LONG + ["--format", "json", "-o", report, "--trace", trace], d, ["report.json", "trace.json"])
rc, out, err = stop(proc, signal.SIGTERM)
check_interrupted(rc, err, signal.SIGTERM, 143, [("report", report), ("trace file", trace)])
expect(read_bytes(report) == earlier_report, "SIGTERM: the earlier report changed")
expect(read_bytes(trace) == earlier_trace, "SIGTERM: the earlier trace changed")
expect(sorted(os.listdir(d)) == ["report.json", "trace.json"], "SIGTERM: files left: %r" % sorted(os.listdir(d)))
expect(out == "", "SIGTERM: stdout: %r" % out[:2000])

# 2. The same with SIGINT (Ctrl-C) and a CSV report, which streams into its temporary file.
d = folder("sigint")
report = os.path.join(d, "report.csv")
run(args.tool, ["run", "roundtrip", "--format", "csv", "-o", report] + QUICK, env_extra=HOST)
earlier_report = read_bytes(report)
expect(b"roundtrip" in earlier_report, "no earlier CSV report")
proc = start(["run", "roundtrip,bandwidth"] + LONG[2:] + ["--format", "csv", "-o", report], d, ["report.csv"])
rc, out, err = stop(proc, signal.SIGINT)
check_interrupted(rc, err, signal.SIGINT, 130, [("report", report)])
expect(read_bytes(report) == earlier_report, "SIGINT: the earlier report changed")
expect(os.listdir(d) == ["report.csv"], "SIGINT: files left: %r" % os.listdir(d))

# 3. No earlier file: none afterwards either, and stderr says no report was written.
d = folder("fresh")
report = os.path.join(d, "report.json")
proc = start(LONG + ["--format", "json", "-o", report], d, [])
rc, out, err = stop(proc, signal.SIGTERM)
expect(rc == 143 and "no report was written to '%s'" % report in err, "exit %d:\n%s" % (rc, err))
expect(os.listdir(d) == [], "files left: %r" % os.listdir(d))

# 4. bench -o, SIGTERM.
d = folder("bench")
report = os.path.join(d, "bench.json")
run(args.tool, ["bench", "--repeats", "1", "--warmup", "0", "--seed", "1", "--format", "json", "-o", report],
    env_extra=HOST)
validate_results(report, args.schema)
earlier_report = read_bytes(report)
proc = start(["bench", "--repeats", "1000000", "--seed", "1", "--format", "json", "-o", report], d, ["bench.json"])
rc, out, err = stop(proc, signal.SIGTERM)
check_interrupted(rc, err, signal.SIGTERM, 143, [("report", report)])
expect(read_bytes(report) == earlier_report, "bench: the earlier report changed")
expect(os.listdir(d) == ["bench.json"], "bench: files left: %r" % os.listdir(d))
expect(out == "", "bench: stdout: %r" % out[:2000])

# 5. Two runs writing one -o at once: a long report finished first, a short one after it. Each
# writes a temporary file of its own and renames it: one whole report is left, never one
# report's bytes over the other's.
d = folder("concurrent")
report = os.path.join(d, "report.json")
argv_long = ["run", "bandwidth", "--sizes", "1KiB:64KiB:+1KiB", "--repeats", "2", "--warmup", "0"]
argv_short = ["run", "roundtrip", "--size", "64MiB", "--repeats", "20"]
procs = [subprocess.Popen([args.tool] + argv + ["--format", "json", "-o", report], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=tool_env(HOST)) for argv in (argv_short, argv_long)]
for p in procs:
    out, err = p.communicate(timeout=300)
    expect(p.returncode == 0, "concurrent run: exit %d\n%s" % (p.returncode, err[-2000:]))
data = validate_results(report, args.schema)
expect([r["workflow"] for r in data["results"]] in (["roundtrip"], ["bandwidth"]),
       "concurrent runs: %r" % [r["workflow"] for r in data["results"]])
expect(os.listdir(d) == ["report.json"], "concurrent runs: files left: %r" % os.listdir(d))

# 6. A finished run replaces the earlier file, keeping its mode; a new file gets the umask's.
d = folder("mode")
report, trace = os.path.join(d, "report.json"), os.path.join(d, "trace.json")
with open(report, "w") as f:
    f.write("not a report\n")
os.chmod(report, 0o640)
old_umask = os.umask(0o022)
try:
    run(args.tool, ["run", "roundtrip", "--format", "json", "-o", report, "--trace", trace] + QUICK, env_extra=HOST)
finally:
    os.umask(old_umask)
validate_results(report, args.schema)
expect(stat.S_IMODE(os.stat(report).st_mode) == 0o640, "report mode %o" % stat.S_IMODE(os.stat(report).st_mode))
expect(stat.S_IMODE(os.stat(trace).st_mode) == 0o644, "trace mode %o" % stat.S_IMODE(os.stat(trace).st_mode))
expect(sorted(os.listdir(d)) == ["report.json", "trace.json"], "files left: %r" % sorted(os.listdir(d)))
print("ok")
