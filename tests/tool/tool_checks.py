# SPDX-License-Identifier: Apache-2.0
"""Shared helpers of the xfer-tool end-to-end tests: run the binary, validate its outputs.

Every test script takes --tool (the xfer-tool binary), --schema (results.schema.json) and
--workdir (a scratch folder of its own), and exits non-zero with a message on the first
failed check.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

# Small enough for CI on 2 cores; every workflow still runs and verifies.
SMALL = ["--size", "1MiB", "--sizes", "1KiB:256KiB", "--repeats", "3", "--warmup", "1",
         "--copies", "64", "--copy-size", "4KiB", "--batches", "4", "--seed", "12345"]

WORKFLOWS = ["roundtrip", "sync-async", "bandwidth", "vector-add", "overlap", "batching", "access"]


def parse_args(*extra):
    """extra: further options a test needs (e.g. "--mpiexec"), each required."""
    p = argparse.ArgumentParser()
    p.add_argument("--tool", required=True)
    p.add_argument("--schema", required=True)
    p.add_argument("--workdir", required=True)
    for name in extra:
        p.add_argument(name, required=True)
    args = p.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    return args


def fail(message):
    print("FAILED: " + message, file=sys.stderr)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def tool_env(env_extra=None):
    """The environment the tool runs in: none of the variables that change what it does, then env_extra."""
    env = dict(os.environ)
    env.pop("XFER_TOOL_CORRUPT", None)
    env.pop("XFER_CONFIG", None)
    env.pop("XFER_BACKEND", None)
    if env_extra:
        env.update(env_extra)
    return env


def run(tool, args, env_extra=None, expect_rc=0, timeout=600, memory_limit=None):
    """Runs the tool to its end; memory_limit (bytes of address space) makes a runaway
    allocation fail at once instead of taking the machine's memory."""
    env = tool_env(env_extra)
    limit = None
    if memory_limit is not None:
        import resource

        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    try:
        proc = subprocess.run([tool] + args, capture_output=True, text=True, env=env, timeout=timeout,
                              preexec_fn=limit)
    except subprocess.TimeoutExpired:
        fail("xfer-tool %s: still running after %d s" % (" ".join(args), timeout))
    if expect_rc is not None and proc.returncode != expect_rc:
        fail("xfer-tool %s: exit status %d, expected %d\nstdout:\n%s\nstderr:\n%s"
             % (" ".join(args), proc.returncode, expect_rc, proc.stdout[-4000:], proc.stderr[-4000:]))
    return proc


def validate_results(path, schema_path):
    """Validates a JSON report against the schema, plus what a schema cannot say."""
    try:
        import jsonschema
    except ImportError:
        fail("python3-jsonschema is not installed (Debian: apt-get install python3-jsonschema)")
    with open(path) as f:
        data = json.load(f)
    with open(schema_path) as f:
        schema = json.load(f)
    validator_cls = jsonschema.validators.validator_for(schema)
    validator_cls.check_schema(schema)
    errors = sorted(validator_cls(schema).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        fail("%s does not match the schema:\n%s" % (path, "\n".join(
            "  at /%s: %s" % ("/".join(str(p) for p in e.path), e.message) for e in errors[:10])))
    for r in data["results"]:
        for fig in r["figures"]:
            if fig["samples"] > 0 and None not in (fig["min"], fig["median"], fig["max"]):
                expect(fig["min"] <= fig["median"] <= fig["max"],
                       "%s/%s/%s: min <= median <= max does not hold: %r" % (r["workflow"], r["backend"], fig["name"], fig))
                if fig["unit"] in ("ms", "GB/s"):
                    expect(fig["min"] >= 0, "%s/%s: negative %s" % (r["workflow"], fig["name"], fig["unit"]))
    return data


def check_csv(path):
    """Reads a CSV report as any CSV reader would, without options: the header row is the first
    line (the run's metadata is in the JSON report; '#' lines only with --csv-metadata)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    expect(len(rows) > 1, "%s has no data rows" % path)
    header = rows[0]
    expect(not any(row and row[0].startswith("#") for row in rows), "%s has '#' lines:\n%r" % (path, rows[:3]))
    for column in ("backend", "device", "pcie_link", "workflow", "figure", "unit", "bytes", "min", "median", "max",
                   "verification"):
        expect(column in header, "CSV header lacks %s: %r" % (column, header))
    for i, row in enumerate(rows[1:], start=2):
        expect(len(row) == len(header), "CSV line %d has %d fields, header %d" % (i, len(row), len(header)))
    return [dict(zip(header, row)) for row in rows[1:]]
