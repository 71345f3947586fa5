#!/usr/bin/env bash
# Device call 2 of session 54 (2026-12-06), repository root on the GPU machine (an H100 was lent), $OUT its output.
# Tuner packed at 0acb893 (as call 1), carried with call 1's bench-runs.tgz as gpu-artifacts/conv/call1-runs.tgz.
# Nsight Compute on call 1's best conv_resnet_3x3 kernel failed (ncu: InterprocessLockFailed; profile.tgz was not
# kept), then the other five convolution tasks, tuned 20 s each and measured beside eager and torch.compile.
set -u; mkdir -p /tmp/c1 && tar xzf gpu-artifacts/conv/call1-runs.tgz -C /tmp/c1
bash scripts/gpu/profile.sh /tmp/c1/bench-out/tune/conv_resnet_3x3 /tmp/prof > /dev/null 2>&1
R=$OUT/conv2; mkdir -p $R
BENCH_TIMEOUT=480 scripts/gpu/bench.sh $R --tasks conv_stem_7x7_s2,conv_dilated_3x3,conv2d_nhwc,conv_pointwise,conv_depthwise_3x3 --time-budget 20
