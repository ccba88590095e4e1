#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when an example shown in README.md differs from the file the tests build and run.
Each file's text (its SPDX line aside) must appear verbatim inside one fenced block."""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EXAMPLES = [
    "bindings/cpp/example_roundtrip.cpp",
    "bindings/fortran/example_roundtrip.f90",
    "bindings/rust/xfer/examples/roundtrip.rs",
    "bindings/python/examples/roundtrip.py",
]


def main():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        blocks = re.findall(r"^```\w*\n(.*?)^```", f.read(), flags=re.M | re.S)
    failed = 0
    for rel in EXAMPLES:
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            lines = f.read().splitlines()
        if lines and "SPDX-License-Identifier" in lines[0]:
            lines = lines[1:]
        text = "\n".join(lines).strip("\n")
        if any(b.strip("\n") == text for b in blocks):
            print(f"ok: README.md shows {rel} verbatim")
        else:
            failed += 1
            print(f"FAIL: README.md has no code block equal to {rel}: copy the file into its README section")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
