# SPDX-License-Identifier: Apache-2.0
"""`xfer-tool list`: backends with availability, devices, effective configuration."""
from tool_checks import expect, parse_args, run

args = parse_args()
out = run(args.tool, ["list"]).stdout
expect("Backends (plugin search order" in out, "no backend section:\n" + out)
# Rows of the backend table; '*' (the backend opened when none is named) dropped.
lines = [l.split()[1:] if l.split()[:1] == ["*"] else l.split() for l in out.splitlines()]
host = [l for l in lines if l[:2] == ["host", "yes"]]
expect(host, "the host backend is not listed as available:\n" + out)
for needle in ("Devices:", "host (emulated", "PCIe link", "concurrentManagedAccess", "canMapHostMemory",
               "copy engines", "memory", "Configuration (effective values", "XFER_BACKEND", "XFER_PLUGIN_PATH"):
    expect(needle in out, "'%s' missing from list output:\n%s" % (needle, out))
# Every backend this build produced is listed, available or not (CUDA ones say why not).
import glob, os
plugins = glob.glob(os.path.join(os.path.dirname(args.tool), "..", "lib", "xfer", "libxfer-backend-*.so"))
for p in plugins:
    name = os.path.basename(p)[len("libxfer-backend-"):-len(".so")]
    rows = [l for l in lines if l and l[0] == name and len(l) > 1 and l[1] in ("yes", "no")]
    expect(rows, "backend %s (%s) is not listed:\n%s" % (name, p, out))
    if rows[0][1] == "no":
        expect(any(name in l and "unavailable:" in l for l in out.splitlines()),
               "unavailable backend %s has no reason" % name)

# One backend is marked, and a line says which and why (test_backend_choice.py checks the reasons).
marked = [l for l in out.splitlines() if l.split()[:1] == ["*"]]
expect(len(marked) == 1, "one backend should be marked '*':\n" + out)
expect(any(l.strip().startswith("selected: " + marked[0].split()[1] + ": ") for l in out.splitlines()),
       "no 'selected:' line for the marked backend:\n" + out)

# A configuration file named with --config is the one the library reads.
cfg = os.path.join(args.workdir, "xfer.ini")
with open(cfg, "w") as f:
    f.write("backend = host\n")
out = run(args.tool, ["list", "--config", cfg]).stdout
row = [l for l in out.splitlines() if l.strip().startswith("backend ") and "XFER_BACKEND" in l]
expect(row and " host " in row[0] and " file " in row[0], "backend from --config not shown as file:\n" + out)
expect("selected: host: named by the backend key of the configuration file " + cfg in out, out)
print("ok")
