#!/usr/bin/env bash
# Device call 9 of session 55 (2026-12-06), repository root on the GPU machine (an H100 was lent), $OUT its output.
# Tuner packed by scripts/gpu/pack_tuner.sh at 9bfe380, carried with gpu-artifacts/kernelbench (imported at
# 134ddd2). Three KernelBench convolution modules never run as implicit GEMMs, through the PyTorch route
# (torch-mlir import, partition, tune 30 s, verify against the module in float64, time beside eager and
# torch.compile).
set -u; nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
K=/tmp/kb; mkdir -p $K; M=bench/kernelbench/modules
KERNELBENCH_TIMEOUT=420 bash scripts/gpu/kernelbench.sh $K --time-budget 30 $M/l1_conv2d_5x5_stride2.py $M/l2_conv2d_batch_norm_relu.py $M/l2_conv2d_max_pool_relu.py
cp $K/kernelbench-h200.md $OUT/kb.md; tar czf $OUT/kb.tgz -C $K .
