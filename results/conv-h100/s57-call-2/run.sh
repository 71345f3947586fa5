#!/usr/bin/env bash
# Session 57, device call 2: 1) run4.sh (fixed wgmma kernels: call 1's against this commit's, two rounds);
# 2) bench/run's five bf16 convolution tasks tuned 45 s each with the tuner packed at tuner-commit.txt (overlap
# proposed, NCHW filters copied 8 K indices at a time), beside PyTorch eager (cuDNN) and torch.compile.
set -u
bash gpu-artifacts/exp57/run4.sh > /dev/null 2>&1
R=$OUT/conv; mkdir -p $R
BENCH_TIMEOUT=400 scripts/gpu/bench.sh $R --tasks conv2d_nhwc_bf16,conv_resnet_3x3_bf16,conv_unet_3x3_bf16,conv_resnet_3x3_s2_bf16,conv_pointwise_bf16 --time-budget 45 > $OUT/bench.out 2>&1
rm -f $R/h200.svg $R/h200.md
cat $OUT/summary.txt
