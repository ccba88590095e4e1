# SPDX-License-Identifier: Apache-2.0
"""Which backend a program opens when it names none (xfer_open(NULL, ...)): `list` shows every
backend whatever XFER_BACKEND says and marks that one with '*' and why; `run` without --backend
says on stderr, once, before its workflows, which backend it opens and why. On the mock backends
of tests/core/mock_plugins (--plugins): good/ holds backends named mock and mockfull; fallback/
holds pinned, pageable, managed and zerocopy whose probe fails (and a file named host that the
built-in host backend shadows)."""
import json
import os

from tool_checks import expect, parse_args, run

args = parse_args("--plugins")
good = os.path.join(args.plugins, "good")
fallback = os.path.join(args.plugins, "fallback")
for folder in (good, fallback):
    expect(os.path.isdir(folder), "mock plugins not built: %s" % folder)
QUICK = ["--size", "64KiB", "--repeats", "2", "--warmup", "0", "--seed", "9"]
NO_GPU_MOCKS = "; ".join("%s: unavailable: mock '%s': no device (simulated probe failure)" % (n, n)
                         for n in ("pinned", "pageable", "managed", "zerocopy"))


def backend_rows(out):
    """The rows of the backend table: (marked, name, available)."""
    section = out.split("Backends (plugin search order")[1].split("\n\n")[0]
    rows = []
    for line in section.splitlines()[2:]:
        cells = line.split()
        marked = bool(cells) and cells[0] == "*"
        cells = cells[1:] if marked else cells
        if len(cells) >= 2 and cells[1] in ("yes", "no"):
            rows.append((marked, cells[0], cells[1] == "yes"))
    return rows


def selected_line(out):
    lines = [l.strip() for l in out.splitlines() if l.strip().startswith("selected: ")]
    expect(len(lines) == 1, "one 'selected:' line expected:\n" + out)
    return lines[0]


# 1. XFER_BACKEND=host: every backend is still listed, host marked, named by XFER_BACKEND.
out = run(args.tool, ["list"], {"XFER_PLUGIN_PATH": good, "XFER_BACKEND": "host"}).stdout
rows = backend_rows(out)
names = [name for _, name, _ in rows]
for name in ("mock", "mockfull", "host"):
    expect(name in names, "backend %s not listed with XFER_BACKEND=host:\n%s" % (name, out))
expect([name for marked, name, _ in rows if marked] == ["host"], "marked rows: %r\n%s" % (rows, out))
expect(selected_line(out) == "selected: host: named by XFER_BACKEND", out)
expect("* = the one opened when none is named" in out, "the table does not say what '*' means:\n" + out)

# 2. Nothing named, no GPU backend in the search path: host, and why.
out = run(args.tool, ["list"], {"XFER_PLUGIN_PATH": good}).stdout
expect([name for marked, name, _ in backend_rows(out) if marked] == ["host"], out)
# The GPU backends are not found where the build has none, unavailable (no GPU, no driver) where
# the build's plugin folder holds them: either way host is chosen and the line says why.
line = selected_line(out)
expect(line.startswith("selected: host: no GPU backend is available (pinned, pageable, managed, zerocopy: ") and
       ("not found" in line or "unavailable" in line), out)

# 3. The GPU backends present but unavailable: each listed with its reason, the built-in host
# marked (not the file of that name fallback/ holds), and the reasons in the selected line.
# XFER_PLUGIN_OVERRIDE=1: the mocks win over a build's own CUDA backends of those names.
out = run(args.tool, ["list"], {"XFER_PLUGIN_OVERRIDE": "1", "XFER_PLUGIN_PATH": fallback}).stdout
rows = backend_rows(out)
for name in ("pinned", "pageable", "managed", "zerocopy"):
    expect((False, name, False) in rows, "%s not listed unavailable: %r\n%s" % (name, rows, out))
expect([(name, available) for marked, name, available in rows if marked] == [("host", True)],
       "marked rows: %r\n%s" % (rows, out))
expect(selected_line(out) == "selected: host: no GPU backend is available (%s)" % NO_GPU_MOCKS, out)

# 4. A named backend that cannot open is marked, and the line says opening the default fails.
out = run(args.tool, ["list"], {"XFER_PLUGIN_OVERRIDE": "1", "XFER_PLUGIN_PATH": fallback, "XFER_BACKEND": "pinned"}).stdout
expect([(name, available) for marked, name, available in backend_rows(out) if marked] == [("pinned", False)], out)
expect(selected_line(out).startswith("selected: pinned: named by XFER_BACKEND, but it is unavailable: mock 'pinned'")
       and selected_line(out).endswith("; xfer_open(NULL, ...) fails"), out)

# 5. run without --backend on a machine without a usable GPU: says host and why, once, first.
report = os.path.join(args.workdir, "fallback.json")
proc = run(args.tool, ["run", "roundtrip", "--format", "json", "-o", report] + QUICK, {"XFER_PLUGIN_PATH": fallback})
lines = proc.stderr.splitlines()
# (The mocks of fallback/ stand in for the GPU backends where the build has none; where it has,
# its own stand unavailable: either way host, and why.)
expect(lines and lines[0].startswith("xfer-tool: running on backend host: no GPU backend is available ("),
       "stderr:\n" + proc.stderr)
expect(sum("running on backend" in l for l in lines) == 1, "said more than once:\n" + proc.stderr)
with open(report) as f:
    expect(json.load(f)["results"][0]["backend"] == "host", "the run did not open host")
# The same in this build's plugin folder alone, and with the table on stdout: once, before the workflows.
proc = run(args.tool, ["run", "roundtrip", "sync-async"] + QUICK)
expect(proc.stderr.startswith("xfer-tool: running on backend "), "stderr:\n" + proc.stderr)
expect(proc.stderr.count("running on backend") == 1, "said more than once:\n" + proc.stderr)

# 6. XFER_BACKEND: named by it, and nothing else on stderr.
proc = run(args.tool, ["run", "roundtrip"] + QUICK, {"XFER_BACKEND": "host"})
expect(proc.stderr == "xfer-tool: running on backend host: named by XFER_BACKEND\n", "stderr:\n" + proc.stderr)

# 7. --backend given: nothing to say.
proc = run(args.tool, ["run", "roundtrip", "--backend", "host"] + QUICK, {"XFER_PLUGIN_PATH": fallback})
expect(proc.stderr == "", "--backend host: stderr:\n" + proc.stderr)

# 8. A named backend that cannot open: no announcement, the run's error says why (exit 3).
proc = run(args.tool, ["run", "roundtrip"] + QUICK, {"XFER_PLUGIN_PATH": fallback, "XFER_BACKEND": "pinned"},
           expect_rc=3)
expect("running on backend" not in proc.stderr and "pinned" in proc.stderr and "cannot be opened" in proc.stderr,
       proc.stderr)
print("ok")
