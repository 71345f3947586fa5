#!/usr/bin/env bash
# Prepared in session 60 (never run yet: no device machine came). Tuner: re-pack it (scripts/gpu/pack_tuner.sh) (kforge-run makes a GPU executor's f32 inputs
# on the device, tested once per executor and checked on every run; a candidate's outputs compared where its
# executor left them, in interleaved lanes with AVX2).
# 1. Fixed kernel A of the depthwise 3x3 against the naive one, device inputs and --host-inputs 1 (the report's
#    "inputs" says which were used), then step D of scripts/gpu/plans/next-device-session.txt: the fixed
#    depthwise kernels A-H beside the naive one (gpu-artifacts/dw, scripts/gpu/plans/depthwise/build.sh).
# 2. Issue 28's first-kernel study (as results/verification-h100/call-4/run.sh, part A; compare with it).
# 3. bench/run on softmax_vocab (1024 x 50257: a ragged row in registers, prefetch_rows), 40 s of tuning.
set -u; T=gpu-artifacts/tuner; W=/tmp/fk; R=/tmp/r1; rm -rf $W $R; mkdir -p $W $R/dw $R/b
bash scripts/gpu/unpack_tuner.sh $T > $OUT/device.json
summ() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r.get('status'), r.get('reason',''), '|', r.get('inputs',''), '|', r.get('timing',{}).get('median_ms'), json.dumps(r.get('phases_ms')))" "$@"; }
for h in 0 1; do
  timeout 120 $T/bin/kforge-run --candidate gpu-artifacts/dw/A --reference gpu-artifacts/dw/ref --seeds 3 --reps 30 --runtime $T/lib/libkforge_mgpu.so --host-inputs $h --output $R/A-host$h.json > /dev/null 2>&1
  summ $R/A-host$h.json "dw A host-inputs=$h"
done > $OUT/summary.txt 2>&1
OUT=$R/dw bash gpu-artifacts/dw/run.sh > $R/dw.out 2>&1; cat $R/dw/summary.txt >> $OUT/summary.txt
echo "elapsed $SECONDS s (before the study)" >> $OUT/summary.txt
timeout 400 bash scripts/gpu/first_kernel_study.sh $T $W/first-kernel 30 > $OUT/first-kernel.md 2> $OUT/first-kernel.log
(cd $W && tar czf $OUT/first-kernel.tgz first-kernel/runs/*/run.json first-kernel/runs/*/db.jsonl first-kernel/runs/*.log first-kernel/runs/*/reference-check/samples.json first-kernel/runs/*/baseline/first-run.json first-kernel/runs/*/baseline/run.json first-kernel/exits.txt first-kernel/device-info.json 2>/dev/null)
echo "elapsed $SECONDS s (before the bench)" >> $OUT/summary.txt
BENCH_TIMEOUT=$((560 - SECONDS)) scripts/gpu/bench.sh $R/b --tasks softmax_vocab --time-budget 40 > $R/bench.out 2>&1
cp $R/b/h200.md $OUT/ 2>/dev/null; rm -f $R/b/h200.svg; tar czf $OUT/all.tgz -C $R .
echo "elapsed $SECONDS s" >> $OUT/summary.txt
cat $OUT/summary.txt $OUT/first-kernel.md $OUT/h200.md
