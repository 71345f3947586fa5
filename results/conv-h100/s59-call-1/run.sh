#!/usr/bin/env bash
# Session 59, device call 1 (it got an H100): 1) the TMA K loop's stages released by mbarriers instead of a block barrier per
# tile (ab_kernels.sh: seven fixed bf16 wgmma kernels compiled at tuner-commit.txt, "before", and with the
# change (mbarrier-release.patch in this folder applied to that commit), "after"; 3 seeds verified, 30 repetitions, two rounds); 2) channels_last's first run on a GPU: each NCHW
# convolution task's first heuristic schedule with channels_last beside its first without
# (compare_first_schedules.sh: verified on 3 seeds against the naive kernel, 30 timed repetitions); 3) the same
# for TF32 (the tf32 wgmma kernel beside the SIMT one, TF32 allowed). Tuner packed at tuner-commit.txt.
# gpu-artifacts/ab59.tar.xz (not committed) held ab59/before and ab59/after, each made on the CPU by
#   scripts/gpu/ab_kernels.sh build gpu-artifacts/ab59/{before,after} matmul_square_bf16:0 matmul_square_bf16:3 \
#     matmul_square_bf16:5 matmul_square_bf16:9 matmul_rect_bf16:5 matmul_large_k_bf16:2 matmul_large_k_bf16:5
set -u
R=/tmp/r; mkdir -p $R
bash scripts/gpu/unpack_tuner.sh gpu-artifacts/tuner > $R/device.json 2>&1
tar xJf gpu-artifacts/ab59.tar.xz -C gpu-artifacts
timeout 150 bash scripts/gpu/ab_kernels.sh run gpu-artifacts/ab59/before gpu-artifacts/ab59/after $R/ab > /dev/null 2>&1
cp $R/ab/summary.txt $OUT/ab-summary.txt
timeout 200 bash scripts/gpu/compare_first_schedules.sh channels_last $R/cl conv_resnet_3x3_bf16 conv_unet_3x3_bf16 \
  conv_resnet_3x3_s2_bf16 conv_resnet_3x3 conv_resnet_3x3_s2 conv_unet_3x3 > /dev/null 2>&1
cp $R/cl/summary.txt $OUT/cl-summary.txt
ALLOW_TF32=1 timeout 100 bash scripts/gpu/compare_first_schedules.sh tf32 $R/tf32 conv_resnet_3x3_tf32 conv_unet_3x3_tf32 > /dev/null 2>&1
cp $R/tf32/summary.txt $OUT/tf32-summary.txt
tar czf $OUT/all.tgz -C $R .
echo "elapsed $SECONDS s"
cat $R/device.json | head -5; cat gpu-artifacts/ab59/before/schedules.txt $OUT/ab-summary.txt $OUT/cl-summary.txt $OUT/tf32-summary.txt
