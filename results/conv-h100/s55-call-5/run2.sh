#!/usr/bin/env bash
# Session 55, call 4: the implicit GEMM's cp.async copies one element a thread, consecutive threads along each
# multiplicand's contiguous side (coal: K in the op's order; coalc: K's longest loop innermost) against the
# grouped copies of f18929d (cur), on fixed schedules timed by kforge-run; then ncu on ResNet's coal kernel.
set -u
T=gpu-artifacts/tuner; E=gpu-artifacts/exp55
bash scripts/gpu/unpack_tuner.sh $T > /dev/null 2>&1
mkdir -p /tmp/runs2
while read name payload; do
  for round in 1 2; do
    for v in cur coal coalc; do
      timeout 120 $T/bin/kforge-run --candidate $E/a2/$name.$v --reference $E/a/$payload.naive --seeds 2 --reps 30 \
        --runtime $T/lib/libkforge_mgpu.so --output /tmp/runs2/$name.$v.$round.json > /dev/null 2> /tmp/runs2/$name.$v.$round.err
      python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r.get('status'), r.get('timing',{}).get('median_ms'))" \
        /tmp/runs2/$name.$v.$round.json "$name $v $round" >> $OUT/summary2.txt 2>&1
    done
  done
done < $E/list2.txt
tar czf $OUT/runs2.tgz -C /tmp runs2
export TMPDIR=/dev/shm/ncu; mkdir -p $TMPDIR/nvidia/nsight_compute; chmod -R 777 $TMPDIR
timeout 150 ncu --clock-control none --target-processes all --set full -k regex:conv_resnet_3x3_kernel --launch-skip 2 --launch-count 1 \
  -o $OUT/resnet_coal $T/bin/kforge-run --candidate $E/a2/resnet_a.coal --reference $E/a2/resnet_a.coal --seeds 1 --reps 10 \
  --runtime $T/lib/libkforge_mgpu.so --output /tmp/ncu-coal.json > $OUT/ncu2.log 2>&1
ncu --import $OUT/resnet_coal.ncu-rep --page details > $OUT/resnet_coal.txt 2>&1
cat $OUT/summary2.txt
