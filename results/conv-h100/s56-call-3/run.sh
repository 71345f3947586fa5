#!/usr/bin/env bash
# Device call 3 of session 56 (2026-12-06), repository root on the GPU machine, $OUT its output. Tuner packed by
# scripts/gpu/pack_tuner.sh at the commit in tuner-commit.txt (call 2's, plus the tensor-core implicit GEMM's
# 3- and 4-stage cp.async pipelines, proposed first where both multiplicands copy 16 bytes at a time: NHWC),
# carried. The three bf16 convolution tasks tuned 45 s each, then measured beside PyTorch eager (cuDNN on bf16
# tensors) and torch.compile in one process.
set -u; R=$OUT/conv; mkdir -p $R; nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
BENCH_TIMEOUT=540 scripts/gpu/bench.sh $R --tasks conv2d_nhwc_bf16,conv_resnet_3x3_bf16,conv_unet_3x3_bf16 --time-budget 45
tail -30 $R/bench.log
