#!/usr/bin/env bash
# Device call 10 of session 55 (2026-12-06), repository root on the GPU machine (an H100 was lent), $OUT its output.
# Tuner packed by scripts/gpu/pack_tuner.sh at cb331d0 (a convolution feeding a pooling is several kernels
# on the GPU), carried with gpu-artifacts/kernelbench (imported at 134ddd2, its partition plans beside the
# payloads). l2_conv2d_max_pool_relu again (call 9 tuned it whole: 17.2 ms): now kforge-tune stops at once with the
# reason and bench/kernelbench tunes its partition's kernels, 20 s each (the device time left).
set -u; nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
K=/tmp/kb; mkdir -p $K; M=bench/kernelbench/modules
KERNELBENCH_TIMEOUT=230 bash scripts/gpu/kernelbench.sh $K --time-budget 20 $M/l2_conv2d_max_pool_relu.py
cp $K/kernelbench-h200.md $OUT/kb.md; tar czf $OUT/kb.tgz -C $K .
