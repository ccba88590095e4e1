# SPDX-License-Identifier: Apache-2.0
"""Time to first answer: `compare --quick` on a machine without a GPU finishes within 30 s
of CPU time (the issue's bound, as CPU time so a loaded CI machine does not flake) and its
peak memory stays proportional to what it measures (--quick: 16 MiB transfers)."""
import resource
import subprocess
import os

from tool_checks import expect, parse_args, run

args = parse_args()
before = resource.getrusage(resource.RUSAGE_CHILDREN)
p = run(args.tool, ["compare", "--quick"])
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
peak_mib = after.ru_maxrss / 1024.0  # ru_maxrss is in KiB on Linux
print("compare --quick: %.1f s CPU, peak RSS %.0f MiB" % (cpu, peak_mib))
expect(cpu < 30.0, "compare --quick used %.1f s of CPU (limit 30 s)" % cpu)
# Largest transfer 16 MiB: two buffers of it with both views is 64 MiB; the rest is the tool.
expect(peak_mib < 400, "compare --quick peaked at %.0f MiB" % peak_mib)
expect("== recommendations" in p.stdout and p.stdout.rstrip().splitlines()[-1] == "PASS", p.stdout[-2000:])
expect("repeats=5" in p.stdout and "size=16 MiB" in p.stdout, "quick defaults not applied:\n" + p.stdout[:3000])
print("ok")
