#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The mixed workload: every workflow of `xfer-tool run all --backend pageable` with the default
copy choice (path = auto) against each fixed choice (staged, driver, registered), from the runs'
JSON reports (mix-<path>.json). Per workflow a speed score: the geometric mean of its figures'
medians in GB/s, and of 1/median for its figures in ms (the ratios, counts and sizes are left
out). A workflow is won or lost by auto when its score differs from the fixed choice's by more
than 2% (the spread of such runs); the largest loss is reported. Several runs of one path
(mix-<path>-<k>.json, alternating with the other paths' runs) give each workflow the median of its
runs' scores.
Usage: mix_compare.py FOLDER"""
import glob
import statistics
import json
import math
import os
import sys


def scores(path):
    out = {}
    for r in json.load(open(path))["results"]:
        logs = []
        for f in r["figures"]:
            m = f.get("median")
            if not m or m <= 0:
                continue
            if f["unit"] == "GB/s":
                logs.append(math.log(m))
            elif f["unit"] == "ms":
                logs.append(-math.log(m))
        if logs and not r.get("error"):
            out[r["workflow"]] = math.exp(sum(logs) / len(logs))
    return out


def path_scores(folder, path):
    runs = [scores(f) for f in sorted(glob.glob(os.path.join(folder, "mix-%s.json" % path)) +
                                      glob.glob(os.path.join(folder, "mix-%s-*.json" % path)))]
    workflows = {w for run in runs for w in run}
    return {w: statistics.median([run[w] for run in runs if w in run]) for w in workflows}


def main(folder):
    auto = path_scores(folder, "auto")
    print("workflow      " + "  ".join("%-22s" % ("auto / " + p) for p in ("staged", "driver", "registered")))
    verdicts = {}
    for fixed in ("staged", "driver", "registered"):
        other = path_scores(folder, fixed)
        for w in auto:
            if w in other:
                verdicts.setdefault(w, {})[fixed] = auto[w] / other[w]
    for w, row in verdicts.items():
        print("%-13s " % w + "  ".join("%-22s" % ("%.3fx" % row[p] if p in row else "-")
                                        for p in ("staged", "driver", "registered")))
    for fixed in ("staged", "driver", "registered"):
        ratios = [row[fixed] for row in verdicts.values() if fixed in row]
        won = sum(x > 1.02 for x in ratios)
        lost = sum(x < 0.98 for x in ratios)
        worst = min(ratios) if ratios else float("nan")
        print("auto vs %-10s: won %d, lost %d, tied %d of %d workflows; largest loss %.1f%%"
              % (fixed, won, lost, len(ratios) - won - lost, len(ratios), max(0.0, (1 - worst) * 100)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
