#!/usr/bin/env bash
# Device call 6 of session 54 (2026-12-06), repository root on the GPU machine (an H100 was lent), $OUT its output.
# Tuner packed by scripts/gpu/pack_tuner.sh at f5db7e0 (the implicit GEMM as the session left it: K's longest
# loop innermost, cp.async copies along K), carried. The nine convolution tasks of bench/tasks/tasks.py, tuned
# 20 s each, then measured beside PyTorch eager (cuDNN, TF32 off) and torch.compile in one process.
set -u; R=$OUT/conv6; mkdir -p $R; nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
BENCH_TIMEOUT=400 scripts/gpu/bench.sh $R --tasks conv_resnet_3x3,conv_unet_3x3,conv_resnet_3x3_s2,conv_5x5,conv_stem_7x7_s2,conv_dilated_3x3,conv2d_nhwc,conv_pointwise,conv_depthwise_3x3 --time-budget 20
