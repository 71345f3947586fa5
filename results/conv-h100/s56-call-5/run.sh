#!/usr/bin/env bash
# Device call 5 of session 56 (2026-12-06), repository root on the GPU machine, $OUT its output. Tuner packed by
# scripts/gpu/pack_tuner.sh at the commit in tuner-commit.txt, carried with gpu-artifacts/exp56: the
# conv2d_nhwc_bf16 task (bench/tasks) compiled here with call 3's best schedule
#   tile(block, 1x2x0x0); tile(thread, 0x1x62x32); mma(1); stage(64)
# (`kforge-tune P --render`, `kforge-compile P --recipe R -o gpu-artifacts/exp56/best`) and its naive reference
# (`kforge-compile P --naive -o gpu-artifacts/exp56/ref`, not used: call 4's ncu caught the reference's kernel, so
# the candidate is its own reference here: ncu profiles it alone). 1) Nsight Compute's full set on that kernel,
# inside kforge-run; 2) the three bf16 convolution tasks tuned 45 s each with this tuner (NCHW's element copies 8
# consecutive elements a thread), measured beside PyTorch.
set -u; nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
bash scripts/gpu/unpack_tuner.sh gpu-artifacts/tuner > /dev/null
T=gpu-artifacts/tuner
export TMPDIR=/dev/shm/ncu; mkdir -p $TMPDIR/nvidia/nsight_compute; chmod -R 777 $TMPDIR
timeout 200 ncu --clock-control none --target-processes all --set full -k regex:conv2d --launch-skip 2 --launch-count 1 \
  -o $OUT/nhwc $T/bin/kforge-run --candidate gpu-artifacts/exp56/best --reference gpu-artifacts/exp56/best --seeds 1 \
  --reps 10 --runtime $T/lib/libkforge_mgpu.so --output $OUT/run.json > $OUT/ncu.log 2>&1
ncu --import $OUT/nhwc.ncu-rep --page details > $OUT/nhwc-details.txt 2>&1
rm -f $OUT/nhwc.ncu-rep
unset TMPDIR
R=$OUT/conv; mkdir -p $R
BENCH_TIMEOUT=330 scripts/gpu/bench.sh $R --tasks conv2d_nhwc_bf16,conv_resnet_3x3_bf16,conv_unet_3x3_bf16 --time-budget 45
tail -30 $R/bench.log
