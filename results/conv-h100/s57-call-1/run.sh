#!/usr/bin/env bash
# Session 57, device call: 1) run2.sh (the wgmma implicit GEMM's fixed kernels verified and timed, step A);
# 2) bench/run's five bf16 convolution tasks tuned 45 s each by the tuner packed at the commit in
# tuner-commit.txt (the heuristic proposes wgmma first on sm_90), measured beside PyTorch eager (cuDNN) and
# torch.compile in one process.
set -u
bash gpu-artifacts/exp57/run2.sh > /dev/null 2>&1
R=$OUT/conv; mkdir -p $R
BENCH_TIMEOUT=420 scripts/gpu/bench.sh $R --tasks conv2d_nhwc_bf16,conv_resnet_3x3_bf16,conv_unet_3x3_bf16,conv_resnet_3x3_s2_bf16,conv_pointwise_bf16 --time-budget 45 > $OUT/bench.out 2>&1
rm -f $R/h200.svg
cat $OUT/summary.txt; tail -25 $R/bench.log 2>/dev/null || tail -25 $OUT/bench.out
