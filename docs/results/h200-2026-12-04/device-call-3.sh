#!/usr/bin/env bash
# Device call 3 (2026-12-04): what the copy-call scope costs on the H200 machine's own CPU,
# without CUDA in the way. core-cost-probe.c (built here against libxfer, carried in .measure/)
# times 50,000 4-byte xfer_memcpy_async calls on the path-reporting mock backend (take_path,
# then a memcpy), 21 times, and the clock reads the statistics use. A: libxfer as built; B: the
# same library with CopyCall::done() returning at once when XB is set (a measurement-only patch,
# not in the tree): A - B is what counting a call costs after the copy was queued.
cd .measure && for i in 1 2 3; do
  echo "A counting on"; LD_LIBRARY_PATH=stub:../build-gpu/lib XFER_PLUGIN_PATH=$PWD/plugins ./mb mockpaths
  echo "B done() skipped"; XB=1 LD_LIBRARY_PATH=stub:../build-gpu/lib XFER_PLUGIN_PATH=$PWD/plugins ./mb mockpaths
done
lscpu | grep -E "Model name|MHz"
