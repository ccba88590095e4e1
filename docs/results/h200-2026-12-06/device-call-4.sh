#!/usr/bin/env bash
# Device call 4 (2026-12-06), second command on the machine of device-call-3.sh's rerun (c4a):
# where the time of the user-memory rows goes. The copy log (XFER_LOG=copies: path, reason and
# host time of every copy) of the reuse rows and of the small first copies; the reuse rows with
# each path forced (XFER_PAGEABLE_PATH); the user rows once more; then the host pool against the
# build before it (carry-a: dedicated staging threads and a batch pool of its own), alternating
# A, B, A, B. Packed into c4b.tgz (or the name given second).
set -u
OUT=${1:?out}; N=${2:-c4b}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu A=$PWD/carry-a
T=$B/bin/xfer-tool
run() { LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer timeout "$@"; }
run 60 env XFER_LOG=copies XFER_LOG_FILE="$O/log-reuse.txt" "$T" bench \
    -t 'pageable-user-reuse20-h2d-64MiB,pageable-user-reuse20-h2d-1GiB,pageable-user-reuse20-d2h-64MiB' -r 2 \
    > "$O/bench-log-reuse.txt" 2>&1
echo "log reuse exit=$?"
run 60 env XFER_LOG=copies XFER_LOG_FILE="$O/log-once.txt" "$T" bench \
    -t 'pageable-user-once-h2d-4KiB,pageable-user-once-h2d-1MiB,pageable-user-once-d2h-64KiB' -r 5 \
    > "$O/bench-log-once.txt" 2>&1
echo "log once exit=$?"
for p in staged registered driver; do
    run 90 env XFER_PAGEABLE_PATH=$p "$T" bench -t 'pageable-user-reuse20-*' -r 3 > "$O/reuse-$p.txt" 2>&1
    echo "reuse $p exit=$?"; grep -E "^pageable-user" "$O/reuse-$p.txt"
done
run 120 "$T" bench -t 'pageable-user-*' -r 5 > "$O/bench-user-again.txt" 2>&1
echo "user again exit=$?"; grep -E "^pageable-user|targets" "$O/bench-user-again.txt"
rows='pageable-pinned-*-1GiB,pageable-overlap,pageable-batch-loop-*,pinned-batch-loop-*'
for round in 1 2; do
    for side in A B; do
        dir=$B; [ $side = A ] && dir=$A
        LD_LIBRARY_PATH=$dir/lib XFER_PLUGIN_PATH=$dir/lib/xfer timeout 50 "$dir/bin/xfer-tool" bench -t "$rows" -r 5 \
            > "$O/ab-$side$round.txt" 2>&1
        echo "ab $side$round exit=$?"; grep -E "^(pageable|pinned)-" "$O/ab-$side$round.txt"
    done
done
head -c 3000 "$O/log-reuse.txt"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"
