#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what building and testing xfer needs on Debian 12 / Ubuntu 22.04+ (apt), skipping
# packages already present so a re-run needs no network and no root.
# The CUDA toolkit is not installed here: when nvcc is found (PATH or /usr/local/cuda) the CUDA
# backends are built, otherwise CMake says they are skipped.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libboost-dev libboost-program-options-dev   # Boost.DLL (header-only), Boost.Program_options (xfer-tool)
  libgtest-dev                                # GoogleTest
  nlohmann-json3-dev                          # JSON reports
  gnuplot-nox                                 # xfer-tool plot
  python3 python3-jsonschema                  # schema check of xfer-tool's JSON in the tests
  python3-numpy python3-pytest                # the Python binding and its tests
  python3-venv python3-pip                    # its offline `pip install` test
  gfortran                                    # the Fortran module and its test
  clang libclang-rt-14-dev                    # libFuzzer targets (fuzz preset, scripts/fuzz-ci.sh)
  clang-format-14                             # the format check (scripts/check-format.sh)
  libopenmpi-dev openmpi-bin                  # bindings/c/example_mpi.c and its 2-rank test
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all packages present"
  exit 0
fi

echo "bootstrap: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "bootstrap: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
