#!/usr/bin/env bash
# Session 57, device call: the tensor-core implicit GEMM on Hopper's wgmma (never run on a GPU before): the
# heuristic's first wgmma schedules of four bf16 convolution tasks (exp57/wg/TASK/N, desc.txt in each), each
# verified against the naive reference (exp57/ref/TASK) on 3 seeds and timed by kforge-run; beside them session
# 56 call 5's best mma.sync kernels of two of them (exp57/TASK), and step A: the [k][m]-staged mma.sync path
# (exp57/mixed vs mixed-ref, 5 seeds). All compiled here at the commit in tuner-commit.txt.
set -u; E=gpu-artifacts/exp57; T=gpu-artifacts/tuner; R=$T/lib/libkforge_mgpu.so
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
mkdir -p $OUT/runs
run() { # name candidate reference seeds
  timeout 120 $T/bin/kforge-run --candidate $2 --reference $3 --seeds $4 --reps 30 --runtime $R \
    --output $OUT/runs/$1.json > /dev/null 2> $OUT/runs/$1.err
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r.get('status'), r.get('timing',{}).get('median_ms'), r.get('why',''))" \
    $OUT/runs/$1.json "$1" >> $OUT/summary.txt 2>&1 || echo "$1 no-report rc=$?" >> $OUT/summary.txt
}
run mixed $E/mixed $E/mixed-ref 5
for t in conv2d_nhwc_bf16 conv_resnet_3x3_bf16 conv_unet_3x3_bf16 conv_resnet_3x3_s2_bf16; do
  [ -d $E/$t ] && run $t.mmasync-best $E/$t $E/ref/$t 3
  for d in $E/wg/$t/*/; do i=$(basename $d); run $t.wg$i $d $E/ref/$t 3; echo "  $(cat $d/desc.txt)" >> $OUT/summary.txt; done
done
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
cat $OUT/summary.txt
