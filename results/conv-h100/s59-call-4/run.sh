#!/usr/bin/env bash
# Session 59, device call 4 (it got an H100): bench/run on the other convolution tasks (NHWC fp32 and bf16, 1x1 fp32 and bf16, 5x5, dilated, depthwise; the heuristic proposing
# channels_last after the layout's first four) where it applies), 35 s of tuning each, beside cuDNN (eager) and torch.compile in one process.
set -u
R=/tmp/r4; mkdir -p $R/conv
BENCH_TIMEOUT=540 scripts/gpu/bench.sh $R/conv --tasks conv2d_nhwc,conv2d_nhwc_bf16,conv_pointwise,conv_pointwise_bf16,conv_5x5,conv_dilated_3x3,conv_depthwise_3x3 --time-budget 35 > $R/bench.out 2>&1
cp $R/conv/h200.md $OUT/ 2>/dev/null
rm -f $R/conv/h200.svg
tar czf $OUT/all.tgz -C $R .
echo "elapsed $SECONDS s"
cat $OUT/h200.md; tail -5 $R/conv/bench.log
