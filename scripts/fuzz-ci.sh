#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bounded fuzz run: builds the fuzz preset (clang, libFuzzer, ASan + UBSan) and runs
# each target for SECONDS on a copy of its committed corpus (tests/fuzz/corpus/<target>).
# Any crash fails the run; the reproducer is left in build-fuzz/crashes/ (turn it into a
# regression test and add it to the corpus).
#   scripts/fuzz-ci.sh [SECONDS_PER_TARGET]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
cmake --preset fuzz >/dev/null && cmake --build --preset fuzz
mkdir -p build-fuzz/crashes
for target in fuzz_config fuzz_size fuzz_api; do
  work="build-fuzz/corpus/$target"
  mkdir -p "$work"
  cp -n tests/fuzz/corpus/"${target#fuzz_}"/* "$work"/ 2>/dev/null || true
  echo "fuzz-ci: $target for ${seconds}s on $(ls "$work" | wc -l) inputs"
  log="build-fuzz/$target.log"
  if ! ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      "build-fuzz/bin/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 \
      -artifact_prefix="build-fuzz/crashes/$target-" -print_final_stats=1 "$work" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz-ci: $target FAILED (reproducer in build-fuzz/crashes/)" >&2
    exit 1
  fi
  grep -E "^stat::(number_of_executed_units|new_units_added)" "$log" | sed "s/^/fuzz-ci: $target /"
  echo "fuzz-ci: $target corpus now $(ls "$work" | wc -l) inputs"
done
echo "fuzz-ci: all fuzz targets ran clean"
