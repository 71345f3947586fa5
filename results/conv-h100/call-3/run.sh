#!/usr/bin/env bash
# Device call 3 of session 54 (2026-12-06), repository root on the GPU machine (an H100 was lent), $OUT its output.
# Tuner packed by scripts/gpu/pack_tuner.sh at c16d779 (the implicit GEMM with its cp.async tiles, pipeline(2),
# and an elementwise init taken into its accumulators), carried. The nine convolution tasks of bench/tasks/tasks.py
# (eight NCHW as PyTorch writes them, one NHWC), tuned 20 s each, then measured beside PyTorch eager (cuDNN, TF32
# off) and torch.compile in one process.
set -u; R=$OUT/conv3; mkdir -p $R; nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
BENCH_TIMEOUT=550 scripts/gpu/bench.sh $R --tasks conv_resnet_3x3,conv_unet_3x3,conv_resnet_3x3_s2,conv_5x5,conv_stem_7x7_s2,conv_dilated_3x3,conv2d_nhwc,conv_pointwise,conv_depthwise_3x3 --time-budget 20
