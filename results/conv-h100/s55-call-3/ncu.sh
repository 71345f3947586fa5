#!/usr/bin/env bash
# Session 55, call 2: Nsight Compute on the implicit-GEMM ResNet 3x3 kernel and the staged SGEMM (compare).
set -u
T=gpu-artifacts/tuner; E=gpu-artifacts/exp55
bash scripts/gpu/unpack_tuner.sh $T > /dev/null 2>&1
# kforge-run's executor may write under /dev only (Landlock; no new directories): the lock directory made first
export TMPDIR=/dev/shm/ncu; mkdir -p $TMPDIR/nvidia/nsight_compute; chmod -R 777 $TMPDIR
for k in resnet_a:conv_resnet_3x3_kernel stem_a:conv_stem_7x7_s2_kernel gemm_a:gemm_kernel; do
  n=${k%%:*}; kern=${k##*:}
  timeout 150 ncu --clock-control none --target-processes all --set full -k regex:$kern --launch-skip 2 --launch-count 1 \
    -o $OUT/$n $T/bin/kforge-run --candidate $E/a/$n.new --reference $E/a/$n.new --seeds 1 --reps 10 \
    --runtime $T/lib/libkforge_mgpu.so --output /tmp/ncu-$n.json >> $OUT/ncu.log 2>&1
  ncu --import $OUT/$n.ncu-rep --page details > $OUT/$n.txt 2>&1
done
ls -la $OUT
