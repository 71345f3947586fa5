#!/usr/bin/env bash
# Device call 8 of session 55 (2026-12-06), repository root on the GPU machine (an H100 was lent), $OUT its output.
# Tuner packed by scripts/gpu/pack_tuner.sh at 9bfe380 (as call 7), carried. The four convolution tasks still below
# 0.9x eager after calls 6 and 7, tuned 60 s each (kforge-tune's default budget), then measured beside PyTorch
# eager (cuDNN, TF32 off) and torch.compile in one process.
set -u; R=$OUT/conv; mkdir -p $R; nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
BENCH_TIMEOUT=540 scripts/gpu/bench.sh $R --tasks conv_resnet_3x3,conv_resnet_3x3_s2,conv_stem_7x7_s2,conv_unet_3x3 --time-budget 60
