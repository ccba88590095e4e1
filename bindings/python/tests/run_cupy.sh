#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs test_cupy.py with a Python that has CuPy (XFER_CUPY_PYTHON, default /opt/torch/.venv/bin/python)
# against a build tree: run_cupy.sh <build dir>. Prints one PASS line per backend and interface.
set -euo pipefail
build=${1:?usage: run_cupy.sh <build dir>}
py=${XFER_CUPY_PYTHON:-/opt/torch/.venv/bin/python}
export XFER_LIBRARY="$(cd "$build" && pwd)/lib/libxfer.so"
export PYTHONDONTWRITEBYTECODE=1
exec "$py" "$(dirname "$0")/test_cupy.py"
