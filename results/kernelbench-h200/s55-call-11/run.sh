#!/usr/bin/env bash
# Device call 11 of session 55 (2026-12-06), repository root on the GPU machine (an H200 came: the call named no card), $OUT its output.
# Tuner packed by scripts/gpu/pack_tuner.sh at a7d86dc (kforge-partition keeps the bias broadcast with the convolution
# it initializes), carried with gpu-artifacts/kernelbench (imported at 134ddd2; l2_conv2d_max_pool_relu's plan
# re-made here at a7d86dc: kforge.partition(payload, plan dir, tools_dir=build/bin): 2 dispatches, the convolution with
# its bias, then the pooling and ReLU). The module's kernels tuned 20 s each (the device time left).
set -u; nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
K=/tmp/kb; mkdir -p $K; M=bench/kernelbench/modules
KERNELBENCH_TIMEOUT=150 bash scripts/gpu/kernelbench.sh $K --time-budget 20 $M/l2_conv2d_max_pool_relu.py
cp $K/kernelbench-h200.md $OUT/kb.md; tar czf $OUT/kb.tgz -C $K .
