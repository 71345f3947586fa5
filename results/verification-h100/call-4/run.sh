#!/usr/bin/env bash
# Device call 1 of session 53 (2026-12-06), repository root on the GPU machine, $OUT its output. Tuner packed by
# scripts/gpu/pack_tuner.sh at 134ddd2 (a seed's vectors no longer zero-filled: Floats; reference summaries kept
# in the serve cache). Part 0: a 3-seed kforge-run of the naive reference against itself on the matvec and the
# softmax (what a seed costs now; compare results/verification-h100/call-3's phases). Part A: issue 28's
# first-kernel study again, as call-3.
set -u; T=gpu-artifacts/tuner; W=/tmp/fk; rm -rf $W; mkdir -p $W
bash scripts/gpu/unpack_tuner.sh $T > $OUT/device.json
python3 scripts/gpu/first_kernel_payloads.py $W/p > /dev/null
for p in matvec_2048x1048576 softmax_4096x393216; do
  $T/bin/kforge-compile $W/p/$p.mlir --naive -o $W/$p
  s=$(date +%s.%N); $T/bin/kforge-run --candidate $W/$p --reference $W/$p --seeds 3 --reps 0 \
    --runtime $T/lib/libkforge_mgpu.so --output $W/$p-seeds.json 2>> $OUT/seeds.log
  echo "$p: kforge-run exit $? after $(python3 -c "print(round($(date +%s.%N) - $s, 1))") s" >> $OUT/seeds.log
  python3 -c "import json,sys; r=json.load(open('$W/$p-seeds.json')); print('$p', r.get('status'), json.dumps(r.get('phases_ms')))" >> $OUT/seeds.log
done
bash scripts/gpu/first_kernel_study.sh $T $W/first-kernel 30 > $OUT/first-kernel.md 2> $OUT/first-kernel.log
(cd $W && tar czf $OUT/first-kernel.tgz first-kernel/runs/*/run.json first-kernel/runs/*/db.jsonl first-kernel/runs/*.log first-kernel/runs/*/reference-check/samples.json first-kernel/runs/*/baseline/first-run.json first-kernel/runs/*/baseline/run.json first-kernel/exits.txt first-kernel/device-info.json 2>/dev/null)
