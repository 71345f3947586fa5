mkdir -p /tmp/conv; BENCH_TIMEOUT=400 bash scripts/gpu/bench.sh /tmp/conv --tasks conv_resnet_3x3,conv_resnet_3x3_s2,conv_stem_7x7_s2,conv_5x5,conv_dilated_3x3,conv_unet_3x3,conv_pointwise,conv_depthwise_3x3 --time-budget 28 > $OUT/bench.log 2>&1
cp /tmp/conv/h200.md /tmp/conv/h200.json /tmp/conv/bench-runs.tgz $OUT/
