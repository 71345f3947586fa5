#!/usr/bin/env bash
# Device call 6 of session 52 (2026-12-05, an H100 80GB HBM3), repository root on the GPU machine, $OUT its output.
# One 3-seed verification of the naive reference against itself (kforge-run in a process of its own, no timing)
# on the matvec and the softmax of issue 28, tuner packed at the commit "Runner: a seed's input and output vectors
# are not zero-filled" (Floats): what one seed's inputs, copies and comparison cost now (phases_ms).
set -u; T=gpu-artifacts/tuner; W=/tmp/fl; rm -rf $W; mkdir -p $W
bash scripts/gpu/unpack_tuner.sh $T > /dev/null
python3 scripts/gpu/first_kernel_payloads.py $W/p > /dev/null
for p in matvec_2048x1048576 softmax_4096x393216; do
  $T/bin/kforge-compile $W/p/$p.mlir --naive -o $W/$p > /dev/null 2>&1 || echo "compile failed: $p"
  /usr/bin/time -f "$p wall %e s" $T/bin/kforge-run --candidate $W/$p --reference $W/$p --seeds 3 --reps 0 \
    --runtime $T/lib/libkforge_mgpu.so --output $OUT/$p.json > /dev/null 2>> $OUT/walls.txt
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r['status'], {k: round(v/1000, 2) for k, v in r['phases_ms'].items()})" $OUT/$p.json $p >> $OUT/phases.txt
done
cat $OUT/walls.txt $OUT/phases.txt
