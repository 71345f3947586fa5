#!/usr/bin/env bash
# Session 55, call 1: old (tuner packed at session 54's end) vs new (cvta-free cp.async sources, unsigned index
# math) compiles of fixed schedules, timed by kforge-run; then SASS and one ncu profile of the new ResNet kernel.
set -u
T=gpu-artifacts/tuner; E=gpu-artifacts/exp55
bash scripts/gpu/unpack_tuner.sh $T > $OUT/device-info.txt 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $OUT/gpu.txt
mkdir -p $OUT/runs
while read name payload; do
  for round in 1 2; do
    for v in old new; do
      timeout 120 $T/bin/kforge-run --candidate $E/a/$name.$v --reference $E/a/$payload.naive --seeds 2 --reps 30 \
        --runtime $T/lib/libkforge_mgpu.so --output $OUT/runs/$name.$v.$round.json > /dev/null 2> $OUT/runs/$name.$v.$round.err
      python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r.get('status'), r.get('timing',{}).get('median_ms'))" \
        $OUT/runs/$name.$v.$round.json "$name $v $round" >> $OUT/summary.txt 2>&1
    done
  done
done < $E/list.txt
for c in $E/cubin/*.cubin; do cuobjdump --dump-sass $c > $OUT/$(basename $c .cubin).sass 2>&1; done
tar czf $OUT/sass.tgz -C $OUT $(cd $OUT && ls *.sass) && rm -f $OUT/*.sass
export TMPDIR=/tmp/ncu-tmp; mkdir -p $TMPDIR
timeout 200 ncu --clock-control none --target-processes all --set full -k regex:conv_resnet_3x3_kernel --launch-skip 2 --launch-count 1 \
  -o $OUT/resnet_new $T/bin/kforge-run --candidate $E/a/resnet_a.new --reference $E/a/resnet_a.new --seeds 1 --reps 5 \
  --runtime $T/lib/libkforge_mgpu.so --output /tmp/ncu-run.json > $OUT/ncu.log 2>&1
ncu --import $OUT/resnet_new.ncu-rep --page details > $OUT/resnet_new.txt 2>&1
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
cat $OUT/summary.txt
