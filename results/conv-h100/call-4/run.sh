#!/usr/bin/env bash
# Device call 4 of session 54 (2026-12-06), repository root on the GPU machine (an H100 was lent), $OUT its output.
# Tuner packed by scripts/gpu/pack_tuner.sh at 68abac4 (the implicit GEMM's longest K loop innermost), carried with
# gpu-artifacts/kernelbench (imported at 134ddd2). Four NCHW convolution tasks tuned 20 s each and measured; then
# two KernelBench convolution modules (results/kernelbench-h100/call-7), tuned 30 s each and measured. Both runs'
# outputs were packed into $OUT and unpacked here.
set -u; nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
R=/tmp/conv4; mkdir -p $R
BENCH_TIMEOUT=240 scripts/gpu/bench.sh $R --tasks conv_resnet_3x3,conv_resnet_3x3_s2,conv_unet_3x3,conv_stem_7x7_s2 --time-budget 20
cp $R/h200.md $OUT/conv4.md; tar czf $OUT/conv4.tgz -C $R .
K=/tmp/kb; mkdir -p $K; M=bench/kernelbench/modules
KERNELBENCH_TIMEOUT=300 bash scripts/gpu/kernelbench.sh $K --time-budget 30 $M/l1_conv2d_3x3.py $M/l2_conv2d_relu_bias.py
cp $K/kernelbench-h200.md $OUT/kb.md; tar czf $OUT/kb.tgz -C $K .
