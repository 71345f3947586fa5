#!/usr/bin/env bash
# Device call 6 of session 56 (2026-12-06), repository root on the GPU machine, $OUT its output. Tuner packed by
# scripts/gpu/pack_tuner.sh at the commit in tuner-commit.txt (the tensor-core implicit GEMM with element copies
# one a thread along M or N, 8 a thread along K), carried. The three bf16 convolution tasks tuned 45 s each, and
# two fp32 ones 30 s each (the SIMT implicit GEMM, moved onto ImplicitGemmAccess this session: a regression
# check), measured beside PyTorch eager (cuDNN; TF32 off for fp32) and torch.compile in one process.
set -u; R=$OUT/conv; mkdir -p $R; nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
BENCH_TIMEOUT=300 scripts/gpu/bench.sh $R --tasks conv2d_nhwc_bf16,conv_resnet_3x3_bf16,conv_unet_3x3_bf16 --time-budget 45
mv $R/h200.md $R/bf16.md; mv $R/h200.json $R/bf16.json; mv $R/bench-runs.tgz $R/bf16-runs.tgz; rm -f $R/h200.svg
rm -rf bench-out
BENCH_TIMEOUT=170 scripts/gpu/bench.sh $R --tasks conv_resnet_3x3,conv2d_nhwc --time-budget 30
rm -f $R/h200.svg
