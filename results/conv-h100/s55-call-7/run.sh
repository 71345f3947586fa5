#!/usr/bin/env bash
# Device call 7 of session 55 (2026-12-06), repository root on the GPU machine (an H100 was lent), $OUT its output.
# Tuner packed by scripts/gpu/pack_tuner.sh at 9bfe380 (call 6's, plus contiguous_copies with partial tiles: call 6's
# stride-2 3x3 never got it), carried. The stride-2 3x3 again and the four convolution tasks call 6 left out,
# tuned 30 s each, then measured beside PyTorch eager (cuDNN, TF32 off) and torch.compile in one process.
set -u; R=$OUT/conv; mkdir -p $R; nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
BENCH_TIMEOUT=500 scripts/gpu/bench.sh $R --tasks conv_resnet_3x3_s2,conv2d_nhwc,conv_5x5,conv_dilated_3x3,conv_depthwise_3x3 --time-budget 30
