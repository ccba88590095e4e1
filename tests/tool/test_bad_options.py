# SPDX-License-Identifier: Apache-2.0
"""Bad command lines exit 2 with a message that says what is wrong; a backend that does not
exist exits 3 naming it."""
from tool_checks import expect, parse_args, run

args = parse_args()
cases = [
    (["run", "all", "--frobnicate"], "unrecognised option '--frobnicate'"),
    (["run"], "run needs a workflow"),
    (["run", "bogus"], "unknown workflow 'bogus'"),
    (["run", "all", "--size", "12XB"], "--size: '12XB': unknown size unit 'XB'"),
    (["run", "all", "--repeats", "0"], "--repeats: 0 is below the minimum 1"),
    (["run", "all", "--format", "yaml"], "unknown format 'yaml'"),
    (["run", "all", "--sizes", "4KiB:1KiB"], "runs backwards"),
    (["frob"], "unknown command 'frob'"),
    (["plot", "x.json"], "plot needs -o"),
]
for argv, message in cases:
    proc = run(args.tool, argv, expect_rc=2)
    expect(message in proc.stderr, "%r: stderr lacks %r:\n%s" % (argv, message, proc.stderr))
    expect("Try 'xfer-tool" in proc.stderr, "%r: no hint:\n%s" % (argv, proc.stderr))
    expect(proc.stdout == "", "%r wrote a report anyway" % argv)

proc = run(args.tool, ["run", "roundtrip", "--backend", "no-such-backend", "--size", "64KiB"], expect_rc=3)
expect("XFER_ERROR_BACKEND_NOT_FOUND" in proc.stderr and "no-such-backend" in proc.stderr, proc.stderr)

proc = run(args.tool, ["--help"])
expect("sync-async" in proc.stdout and "--repeats" in proc.stdout, "help lacks workflows/options")
proc = run(args.tool, ["run", "--help"])
expect("(=20)" in proc.stdout and "(=1KiB:1GiB:4)" in proc.stdout, "run --help lacks defaults")
proc = run(args.tool, ["--version"])
expect(proc.stdout.startswith("xfer-tool "), proc.stdout)
print("ok")
