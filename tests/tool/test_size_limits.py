# SPDX-License-Identifier: Apache-2.0
"""--sizes is refused, before anything is allocated, when it names more than 10000 sizes: a
linear range with a tiny step (which grew without bound), a long range, a long comma list and
the same in the config file's [xfer-tool] section exit 2 naming the range, its count and the
limit; exactly 10000 sizes are accepted. Every refusal runs under a 2 GiB address-space limit
and a 60 s timeout, so a refusal that does not happen fails at once instead of eating the
machine's memory."""
import os

from tool_checks import expect, parse_args, run

LIMIT = 10000
GUARD = dict(timeout=60, memory_limit=2 << 30)

args = parse_args()

# 99999 TiB in 1-byte steps: 99999 * 2^40 sizes.
huge = 99999 * (1 << 40)
ten_thousand_and_one = ",".join(["1KiB"] * (LIMIT + 1))
cases = [
    ("1:99999TiB:+1", "range '1:99999TiB:+1' has %d sizes" % huge),
    ("1KiB:20000KiB:+1KiB", "range '1KiB:20000KiB:+1KiB' has 20000 sizes"),
    ("1:10001:+1", "range '1:10001:+1' has 10001 sizes"),
    (ten_thousand_and_one, "list '%s...' has 10001 sizes" % ten_thousand_and_one[:40]),
]
for sizes, message in cases:
    shown = sizes if len(sizes) < 60 else sizes[:40] + "..."
    proc = run(args.tool, ["run", "bandwidth", "--backend", "host", "--sizes", sizes], expect_rc=2, **GUARD)
    expect("--sizes: " + message + ", more than the limit of %d" % LIMIT in proc.stderr,
           "%s: stderr lacks the count and the limit:\n%s" % (shown, proc.stderr[-2000:]))
    expect("Try 'xfer-tool run --help'." in proc.stderr, "%s: no hint:\n%s" % (shown, proc.stderr[-2000:]))
    expect("internal error" not in proc.stderr, "%s: %s" % (shown, proc.stderr[-2000:]))
    expect(proc.stdout == "", "%s: measured anyway:\n%s" % (shown, proc.stdout[:2000]))
    expect(len(proc.stderr) < 1000, "%s: the message repeats the whole list (%d characters)" % (shown, len(proc.stderr)))

# compare parses the same option.
proc = run(args.tool, ["compare", "bandwidth", "--backend", "host", "--sizes", "1:99999TiB:+1"], expect_rc=2, **GUARD)
expect("range '1:99999TiB:+1' has %d sizes, more than the limit of %d" % (huge, LIMIT) in proc.stderr, proc.stderr)

# The config file's [xfer-tool] section: the same refusal, at its line.
config = os.path.join(args.workdir, "sizes.ini")
with open(config, "w") as f:
    f.write("[xfer-tool]\nrepeats = 2\nsizes = 1:99999TiB:+1\n")
proc = run(args.tool, ["run", "bandwidth", "--backend", "host", "--config", config], expect_rc=2, **GUARD)
expect("%s:3: [xfer-tool] sizes: range '1:99999TiB:+1' has %d sizes, more than the limit of %d" % (config, huge, LIMIT)
       in proc.stderr, proc.stderr)

# Exactly the limit is accepted: the run goes past option parsing and fails on the backend
# that does not exist (exit 3, not 2), so nothing is measured.
for sizes in ("1:10000:+1", ",".join(["4KiB"] * LIMIT)):
    proc = run(args.tool, ["run", "bandwidth", "--backend", "no-such-backend", "--sizes", sizes], expect_rc=3, **GUARD)
    expect("limit" not in proc.stderr and "no-such-backend" in proc.stderr, proc.stderr[-2000:])

# The help names the limit.
expect("at most %d sizes" % LIMIT in run(args.tool, ["run", "--help"]).stdout, "run --help does not name the limit")
print("ok")
