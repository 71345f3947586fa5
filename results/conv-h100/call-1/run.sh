#!/usr/bin/env bash
# Device call 1 of session 54 (2026-12-06), repository root on the GPU machine (an H100 was lent), $OUT its output.
# Tuner packed by scripts/gpu/pack_tuner.sh at 0acb893 (the first implicit GEMM), carried (commit.txt shows the
# device copy's stale git HEAD, not the packed commit).
# Four of the NCHW convolution tasks of bench/tasks/tasks.py, tuned 20 s each, then measured beside PyTorch eager
# (cuDNN, TF32 off) and torch.compile in one process.
set -u; R=$OUT/conv1; mkdir -p $R; git rev-parse HEAD > $OUT/commit.txt
nvidia-smi --query-gpu=name --format=csv,noheader >> $OUT/commit.txt
BENCH_TIMEOUT=540 scripts/gpu/bench.sh $R --tasks conv_resnet_3x3,conv_unet_3x3,conv_resnet_3x3_s2,conv_5x5 --time-budget 20
