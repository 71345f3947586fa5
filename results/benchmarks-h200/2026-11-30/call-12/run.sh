#!/usr/bin/env bash
# Diagnostic: which part of the irregular mma.sync path is wrong (K tail, 16x40 warp tiles, async copies).
scripts/gpu/unpack_tuner.sh gpu-artifacts/tuner > /dev/null || exit 1
for p in "mm_2048_3072_1024 reg" "mm_2000_3000_1000 irr" "mm_2000_3000_1024 irr" "mm_2000_3000_1024 irr-nopipe" "mm_2048_3072_1000 reg" "mm_2048_3072_1000 reg-noldm"; do
  set -- $p
  timeout 60 gpu-artifacts/tuner/bin/kforge-tune results/benchmarks-h200/2026-11-30/call-12/$1.mlir --target gpu --try results/benchmarks-h200/2026-11-30/call-12/$2.json -o /tmp/d-$1-$2 --seeds 2 --quiet
  echo "$1 $2: $(python3 -c "import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; c=[x for x in r if x['kind']=='candidate']; print([(x['status'], x.get('reason'), x.get('time_ms')) for x in c])" /tmp/d-$1-$2/db.jsonl)"
done
