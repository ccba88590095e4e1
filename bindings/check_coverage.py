#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when a function or constant declared in xfer.h is missing from a binding, or a
binding gives a constant another value.

Reads the header and each binding's declaration file as text (nothing is built or loaded):
  functions: every `XFER_API ... xfer_name(` in xfer.h
  constants: every `#define XFER_NAME <integer>` and every enum member `XFER_NAME = <integer>`
             (the *_FORCE_INT32 sizing members aside)
and looks for each in
  Fortran  bindings/fortran/xfer.f90        bind(c, name="xfer_name") / XFER_NAME = <value>
  Rust     bindings/rust/xfer-sys/src/lib.rs  pub fn xfer_name( / pub const XFER_NAME: T = <value>;
  Python   bindings/python/xfer/_capi.py     "xfer_name": / XFER_NAME = <value>
Usage: check_coverage.py [--header xfer.h] [--root repo] [--self-test]
"""
import argparse
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

BINDINGS = {
    # name: (file, function regex, constant regex (name, value), case-insensitive)
    "Fortran": ("bindings/fortran/xfer.f90",
                r'bind\s*\(\s*c\s*,\s*name\s*=\s*["\'](xfer_\w+)["\']\s*\)',
                r'::\s*(XFER_\w+)\s*=\s*(-?\w+)', True),
    "Rust": ("bindings/rust/xfer-sys/src/lib.rs",
             r'\bpub\s+fn\s+(xfer_\w+)\s*\(',
             r'\bpub\s+const\s+(XFER_\w+)\s*:\s*[\w:]+\s*=\s*(-?\w+)\s*;', False),
    "Python": ("bindings/python/xfer/_capi.py",
               r'^\s*"(xfer_\w+)"\s*:',
               r'^(XFER_\w+)\s*=\s*(-?\w+)\s*$', False),
}


def to_int(text):
    text = re.sub(r"(?i)(?<=[0-9a-f])[ul]+$", "", text.strip().replace("_", ""))
    return int(text, 0)


def strip_c_comments(text):
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", " ", text, flags=re.S))


def parse_header(text):
    text = strip_c_comments(text)
    functions = set(re.findall(r"\bXFER_API\b[^;{}()]*?\b(xfer_\w+)\s*\(", text))
    constants = {}
    for name, value in re.findall(r"^\s*#\s*define\s+(XFER_\w+)\s+\(?\s*(-?(?:0x[0-9a-fA-F]+|\d+)[uUlL]*)\s*\)?\s*$",
                                  text, flags=re.M):
        constants[name] = to_int(value)
    for body in re.findall(r"\benum\b\s*\w*\s*\{(.*?)\}", text, flags=re.S):
        for name, value in re.findall(r"\b(XFER_\w+)\s*=\s*(-?(?:0x[0-9a-fA-F]+|\d+)[uUlL]*)", body):
            if not name.endswith("_FORCE_INT32"):
                constants[name] = to_int(value)
    return functions, constants


def check(header_text, root):
    functions, constants = parse_header(header_text)
    problems = []
    for lang, (rel, fn_re, const_re, nocase) in BINDINGS.items():
        path = os.path.join(root, rel)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            problems.append(f"{lang}: cannot read {rel}: {e}")
            continue
        flags = re.M | (re.I if nocase else 0)
        if lang == "Fortran":  # comments start with '!'
            text = re.sub(r"!.*", "", text)
        have_fn = {m.lower() if nocase else m for m in re.findall(fn_re, text, flags)}
        have_const = {}
        for name, value in re.findall(const_re, text, flags):
            try:
                have_const[name.upper() if nocase else name] = to_int(value)
            except ValueError:
                have_const[name.upper() if nocase else name] = value
        for fn in sorted(functions):
            if (fn.lower() if nocase else fn) not in have_fn:
                problems.append(f"{lang}: function {fn} (xfer.h) is missing from {rel}")
        for name, value in sorted(constants.items()):
            if name not in have_const:
                problems.append(f"{lang}: constant {name} = {value} (xfer.h) is missing from {rel}")
            elif have_const[name] != value:
                problems.append(f"{lang}: constant {name} is {have_const[name]} in {rel}, {value} in xfer.h")
    return functions, constants, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--header", default=os.path.join(ROOT, "api/include/xfer/xfer.h"))
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--self-test", action="store_true",
                    help="check that a function and a constant added to the header are reported in every binding")
    args = ap.parse_args()
    with open(args.header, encoding="utf-8") as f:
        header = f.read()
    if args.self_test:
        extra = header.replace("#ifdef __cplusplus\n} /* extern \"C\" */",
                               "#define XFER_SELFTEST_FLAG 0x40u\n"
                               "XFER_API xfer_status xfer_selftest_function(xfer_context ctx, size_t bytes);\n"
                               "#ifdef __cplusplus\n} /* extern \"C\" */")
        assert extra != header, "self-test: could not find the end of the header"
        _, _, problems = check(extra, args.root)
        expected = [f"{lang}: {kind}" for lang in BINDINGS
                    for kind in ("function xfer_selftest_function", "constant XFER_SELFTEST_FLAG")]
        missing = [e for e in expected if not any(p.startswith(e) for p in problems)]
        if missing:
            print("self-test FAILED: not reported:\n  " + "\n  ".join(missing))
            return 1
        print(f"self-test passed: an added function and constant are reported in all {len(BINDINGS)} bindings")
        return 0
    functions, constants, problems = check(header, args.root)
    if problems:
        print("binding coverage check FAILED:\n  " + "\n  ".join(problems))
        print("Add each missing declaration to its binding (bindings/README.md says where).")
        return 1
    print(f"binding coverage: {len(functions)} functions and {len(constants)} constants of xfer.h "
          f"are in {', '.join(BINDINGS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
