# Session 67, device call 4 (an H100 80GB HBM3): issue 35's fourteen convolution tasks at 25 s a task (the eight
# fp32 ones, four bf16, two TF32) in one bench/run process.
mkdir -p /tmp/conv; BENCH_TIMEOUT=555 bash scripts/gpu/bench.sh /tmp/conv --tasks conv_resnet_3x3_bf16,conv_resnet_3x3_s2_bf16,conv_unet_3x3_bf16,conv_pointwise_bf16,conv_resnet_3x3_tf32,conv_unet_3x3_tf32,conv_resnet_3x3,conv_resnet_3x3_s2,conv_stem_7x7_s2,conv_5x5,conv_dilated_3x3,conv_unet_3x3,conv_pointwise,conv_depthwise_3x3 --time-budget 25 > $OUT/bench.log 2>&1
cp /tmp/conv/h200.md /tmp/conv/h200.json /tmp/conv/bench-runs.tgz $OUT/
