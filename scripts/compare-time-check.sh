#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A check on a GPU machine: `xfer-tool compare` with its defaults finishes within
# LIMIT seconds (default 90) and passes; `run all` and `compare --quick` timed beside it. Writes the tables,
# a JSON report and the times to OUT (default ./compare-check), prints a summary and exits 0
# only when all three runs passed and the default compare kept to the limit.
#   usage: scripts/compare-time-check.sh [BUILD_DIR] [OUT] [LIMIT]
set -uo pipefail
build=${1:-build}
out=${2:-compare-check}
limit=${3:-90}
tool="$build/bin/xfer-tool"
mkdir -p "$out"
[ -x "$tool" ] || { echo "no $tool: build first"; exit 2; }

timed() { # NAME ARGS...: runs xfer-tool, table to OUT/NAME.txt, stderr to OUT/NAME.err
    local name=$1; shift
    local t0 t1 rc
    t0=$(date +%s.%N)
    "$tool" "$@" >"$out/$name.txt" 2>"$out/$name.err"
    rc=$?
    t1=$(date +%s.%N)
    echo "$rc $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
}

read -r rc_default secs_default < <(timed compare compare)
read -r rc_quick secs_quick < <(timed compare-quick compare --quick)
read -r rc_all secs_all < <(timed run-all run all)
"$tool" run bandwidth --backend pinned --quick --format json --samples -o "$out/bandwidth-quick.json" >/dev/null 2>&1

{
    echo "xfer-tool compare (defaults): exit $rc_default, ${secs_default} s (limit ${limit} s), last line: $(tail -n1 "$out/compare.txt")"
    echo "xfer-tool compare --quick:    exit $rc_quick, ${secs_quick} s, last line: $(tail -n1 "$out/compare-quick.txt")"
    echo "xfer-tool run all:            exit $rc_all, ${secs_all} s, last line: $(tail -n1 "$out/run-all.txt")"
} | tee "$out/summary.txt"
ok=1
[ "$rc_default" = 0 ] && [ "$rc_quick" = 0 ] && [ "$rc_all" = 0 ] || ok=0
awk -v s="$secs_default" -v l="$limit" 'BEGIN { exit !(s <= l) }' || ok=0
if [ $ok = 1 ]; then echo "RESULT: PASS" | tee -a "$out/summary.txt"; exit 0; fi
echo "RESULT: FAIL" | tee -a "$out/summary.txt"
exit 1
