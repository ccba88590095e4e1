#!/usr/bin/env bash
# Device call 3 (2026-12-06), second command on the same machine: `mpirun -np 2 xfer-tool run
# bandwidth` (the survey of both ranks in one report); the mixed workload (every workflow on the
# pageable backend's buffers, user memory, with the default choice and each fixed one); the host
# pool against the build before it (carry-a: dedicated staging threads and a batch pool of its
# own), the rows the pool serves, alternating A, B, A, B. Packed into c3b.tgz (or the name given second).
set -u
OUT=${1:?out}; N=${2:-c3b}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu A=$PWD/carry-a
export XFER_PLUGIN_PATH=$B/lib/xfer
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
LD_LIBRARY_PATH=$B/lib timeout 90 mpirun -np 2 --oversubscribe -x LD_LIBRARY_PATH=$B/lib -x XFER_PLUGIN_PATH \
    "$B/bin/xfer-tool" run bandwidth --backend pinned --quick -f json -o "$O/mpi-survey.json" > "$O/mpi-survey.txt" 2>&1
echo "mpirun exit=$?"; tail -n 8 "$O/mpi-survey.txt"
for p in auto staged driver registered; do
    XFER_PAGEABLE_PATH=$p LD_LIBRARY_PATH=$B/lib timeout 45 "$B/bin/xfer-tool" run all --backend pageable --quick \
        -f json -o "$O/mix-$p.json" > /dev/null 2>&1
    echo "mix $p exit=$?"
done
rows='pageable-pinned-*-1GiB,pageable-overlap,pageable-batch-loop-*,pinned-batch-loop-*'
for round in 1 2; do
    for side in A B; do
        dir=$B; [ $side = A ] && dir=$A
        LD_LIBRARY_PATH=$dir/lib XFER_PLUGIN_PATH=$dir/lib/xfer timeout 60 "$dir/bin/xfer-tool" bench -t "$rows" -r 5 \
            > "$O/ab-$side$round.txt" 2>&1
        echo "ab $side$round exit=$?"
    done
done
tail -n 14 "$O/ab-A1.txt" "$O/ab-B1.txt"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"
