# Session 67, device call 8 (an H100 80GB HBM3): the two fp32 convolutions under 0.9x cuDNN in call 4 again, at 60 s
# a task (conv_resnet_3x3_s2 0.90x, conv_stem_7x7_s2 0.84x).
mkdir -p /tmp/c2; BENCH_TIMEOUT=200 bash scripts/gpu/bench.sh /tmp/c2 --tasks conv_resnet_3x3_s2,conv_stem_7x7_s2 --time-budget 60 > $OUT/bench.log 2>&1
cp /tmp/c2/h200.md /tmp/c2/h200.json /tmp/c2/bench-runs.tgz /tmp/c2/bench.log $OUT/
