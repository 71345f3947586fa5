#!/usr/bin/env bash
# Session 59, device call 5: bench/run on the NCHW depthwise 3x3 (its loops now in the output's order: the
# columns on the threads' x), the 7x7 stem (3 channels) and the bf16 1x1, 45 s of tuning each, beside cuDNN
# (eager) and torch.compile in one process. Tuner packed at tuner-commit.txt.
set -u
R=/tmp/r5; mkdir -p $R/conv
BENCH_TIMEOUT=500 scripts/gpu/bench.sh $R/conv --tasks conv_depthwise_3x3,conv_stem_7x7_s2,conv_pointwise_bf16 --time-budget 45 > $R/bench.out 2>&1
cp $R/conv/h200.md $OUT/ 2>/dev/null
rm -f $R/conv/h200.svg
tar czf $OUT/all.tgz -C $R .
echo "elapsed $SECONDS s"
cat $OUT/h200.md; tail -5 $R/conv/bench.log
