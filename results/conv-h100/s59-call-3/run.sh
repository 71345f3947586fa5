#!/usr/bin/env bash
# Session 59, device call 3 (it got an H100): bench/run on the fp32 NCHW convolution tasks ResNet 3x3, its stride-2 layer and the UNet 3x3 (the heuristic proposing
# channels_last after the layout's first four) and their TF32 twins (TF32 allowed to kforge and cuDNN alike), 45 s of tuning each, beside cuDNN (eager) and torch.compile in one process.
set -u
R=/tmp/r3; mkdir -p $R/conv
BENCH_TIMEOUT=540 scripts/gpu/bench.sh $R/conv --tasks conv_resnet_3x3,conv_resnet_3x3_s2,conv_unet_3x3,conv_resnet_3x3_tf32,conv_unet_3x3_tf32 --time-budget 45 > $R/bench.out 2>&1
cp $R/conv/h200.md $OUT/ 2>/dev/null
rm -f $R/conv/h200.svg
tar czf $OUT/all.tgz -C $R .
echo "elapsed $SECONDS s"
cat $OUT/h200.md; tail -5 $R/conv/bench.log
