#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Long stress run: repeats xfer_stress with fresh random seeds until DURATION
# seconds have passed, on each backend named. Stops at the first failure; the failing run
# prints its seed and the command that reproduces it.
#   scripts/stress-long.sh [BUILD_DIR] [DURATION_S] [BACKENDS] [THREADS] [OPS]
#   scripts/stress-long.sh build 3600 host
#   scripts/stress-long.sh build 600 pageable,pinned,managed,zerocopy 8 5000   # on a GPU machine
set -euo pipefail
build=${1:-build}
duration=${2:-3600}
backends=${3:-host}
threads=${4:-8}
ops=${5:-20000}
stress="$build/bin/xfer_stress"
[ -x "$stress" ] || { echo "stress-long: $stress not found (build the xfer_stress target)" >&2; exit 64; }
end=$(( $(date +%s) + duration ))
runs=0
while [ "$(date +%s)" -lt "$end" ]; do
  for backend in ${backends//,/ }; do
    seed=$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')
    "$stress" --backend "$backend" --threads "$threads" --ops "$ops" --seed "$seed" --watchdog 120
    runs=$((runs + 1))
  done
done
echo "stress-long: $runs runs passed on $backends"
