#!/usr/bin/env bash
# Session 59, device call 2 (it got an H100): bench/run on the three bf16 NCHW convolution tasks (the heuristic proposing
# channels_last first), 45 s of tuning each, beside cuDNN (eager) and torch.compile in one process; then the
# prime bf16 Linear (256x128 wgmma blocks first where they fill the waves better). Tuner at tuner-commit.txt.
set -u
R=/tmp/r2; mkdir -p $R/conv
BENCH_TIMEOUT=540 scripts/gpu/bench.sh $R/conv --tasks conv_resnet_3x3_bf16,conv_unet_3x3_bf16,conv_resnet_3x3_s2_bf16,linear_prime_bf16 --time-budget 45 > $R/bench.out 2>&1
cp $R/conv/h200.md $OUT/ 2>/dev/null
rm -f $R/conv/h200.svg
tar czf $OUT/all.tgz -C $R .
echo "elapsed $SECONDS s"
cat $OUT/h200.md; tail -5 $R/conv/bench.log
