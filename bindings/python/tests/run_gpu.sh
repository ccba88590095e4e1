#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the GPU tests of the Python binding (test_cupy.py, test_gpu_frameworks.py) with a Python
# that has CuPy / PyTorch (XFER_GPU_PYTHON, default /opt/torch/.venv/bin/python) against a build
# tree: run_gpu.sh <build dir>. Prints one PASS / SKIP / FAIL line per test, backend and framework;
# exits non-zero when one failed.
set -euo pipefail
build=${1:?usage: run_gpu.sh <build dir>}
py=${XFER_GPU_PYTHON:-/opt/torch/.venv/bin/python}
here=$(cd "$(dirname "$0")" && pwd)
export XFER_LIBRARY="$(cd "$build" && pwd)/lib/libxfer.so"
export PYTHONDONTWRITEBYTECODE=1
status=0
"$py" "$here/test_cupy.py" || status=1
"$py" "$here/test_gpu_frameworks.py" --script || status=1
exit $status
