#!/usr/bin/env bash
# Session 57, device call 2: fixed kernels timed by kforge-run (3 seeds verified against the naive reference,
# 30 repetitions), all in one process per kernel, on one machine:
#   wg/TASK/N   call 1's wgmma kernels (K walked longest loop innermost, each tile's wgmma waited for);
#   wg3/TASK/N  the same heuristic at the commit in tuner-commit.txt: NCHW's filter copied 8 K indices at a time
#               (K walked in the filter's memory order) and, on odd N, one tile's wgmma in flight (overlap).
set -u; E=gpu-artifacts/exp57; T=gpu-artifacts/tuner; R=$T/lib/libkforge_mgpu.so
tar xJf $E/kernels.tar.xz -C $E
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt
mkdir -p $OUT/runs
run() { # name candidate reference seeds
  timeout 120 $T/bin/kforge-run --candidate $2 --reference $3 --seeds $4 --reps 30 --runtime $R \
    --output $OUT/runs/$1.json > /dev/null 2> $OUT/runs/$1.err
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r.get('status'), r.get('timing',{}).get('median_ms'), r.get('why',''))" \
    $OUT/runs/$1.json "$1" >> $OUT/summary.txt 2>&1 || echo "$1 no-report rc=$?" >> $OUT/summary.txt
}
for round in 1 2; do
for t in conv2d_nhwc_bf16 conv_resnet_3x3_bf16 conv_unet_3x3_bf16 conv_resnet_3x3_s2_bf16; do
  for set in wg wg3; do
    for d in $E/$set/$t/*/; do i=$(basename $d); run $t.$set.$i.r$round $d $E/ref/$t 3; [ $round = 1 ] && echo "  $(cat $d/desc.txt)" >> $OUT/summary.txt; done
  done
done
done
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
cat $OUT/summary.txt
