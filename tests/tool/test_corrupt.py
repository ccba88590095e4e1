# SPDX-License-Identifier: Apache-2.0
"""A corrupted result (test hook XFER_TOOL_CORRUPT flips one byte) is a failed verification:
exit status 1, the first mismatching index and values on stderr and in the report."""
import json
import os

from tool_checks import SMALL, WORKFLOWS, expect, parse_args, run, validate_results

args = parse_args()
proc = run(args.tool, ["run", "roundtrip", "--backend", "host", "--size", "64KiB", "-r", "2"],
           env_extra={"XFER_TOOL_CORRUPT": "1"}, expect_rc=1)
# 64 KiB = 16384 floats: the hook flips the low byte of element 8192.
expect("roundtrip on host: verification FAILED: sqrt result: first mismatch at index 8192: expected " in proc.stderr,
       "stderr:\n" + proc.stderr)
expect("(1 of 16384 elements differ)" in proc.stderr, "stderr:\n" + proc.stderr)
expect("verification: FAILED" in proc.stdout, "table does not show the failure:\n" + proc.stdout)

# Every workflow catches it, and the JSON report records it.
path = os.path.join(args.workdir, "corrupt.json")
proc = run(args.tool, ["run", "all", "--backend", "host", "--format", "json", "-o", path] + SMALL,
           env_extra={"XFER_TOOL_CORRUPT": "1"}, expect_rc=1)
data = validate_results(path, args.schema)
for r in data["results"]:
    expect(r["verification"]["status"] == "failed", "%s passed a corrupted result" % r["workflow"])
    expect("first mismatch at" in r["verification"]["detail"], r["verification"]["detail"])
failed_lines = [l for l in proc.stderr.splitlines() if "verification FAILED" in l]
expect(len(failed_lines) == len(WORKFLOWS), "stderr:\n" + proc.stderr)

# Without the hook the same run passes (the hook, not the workflow, made it fail).
run(args.tool, ["run", "roundtrip", "--backend", "host", "--size", "64KiB", "-r", "2"], expect_rc=0)
print("ok")
