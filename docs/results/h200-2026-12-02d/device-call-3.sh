#!/usr/bin/env bash
# Call 3: the fill-under-DMA probe again, fixed to read its own huge-page count
# (call 1's read a child shell's) and with a fifth variant (a 4 KiB-page destination registered
# with cudaHostRegister), twice; the machine's CPU and THP setting.
set -u
OUT=${1:?out}
B=$PWD/build-gpu
{ lscpu | grep -E "Model name|^CPU\(s\)|L3|NUMA node\(s\)"; echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
for n in 1 2; do
  echo "== run $n" >> "$OUT/fill-under-dma-c3.txt"
  timeout 60 "$B/bin/fill_under_dma" >> "$OUT/fill-under-dma-c3.txt" 2>&1; echo "probe exit=$?"
done
cat "$OUT/fill-under-dma-c3.txt"
