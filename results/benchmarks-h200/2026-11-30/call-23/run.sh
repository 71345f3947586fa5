#!/usr/bin/env bash
# Call 23 (nvidia-h200, tools packed at dd950ae): the first GPU run of `pipeline_rows` (blocks loop over rows,
# the next row copied into shared memory by TMA while the current one is computed). The heuristic proposes it on
# each reduction's first lane_vector form; softmax 1024 x 32000 also tries it over 320 lanes (168 registers, no
# spill: lanes320-pipeline.json). Then the six reduction tasks measured with PyTorch in one process; ncu on the
# best softmax_wide kernel last.
R=softmax,softmax_wide,layernorm,layernorm_plain,rms_norm,row_sum
D=results/benchmarks-h200/2026-11-30/call-23
T=$(mktemp -d)
BENCH_TIMEOUT=70 scripts/gpu/bench.sh "$T" --tune-only --tasks softmax_wide --time-budget 30
cp "$T/bench.log" "$OUT/tune.log"
timeout 60 gpu-artifacts/tuner/bin/kforge-tune bench-out/tune/softmax_wide/payload.mlir --target gpu \
  --try $D/lanes320-pipeline.json -o bench-out/tune/softmax_wide --seeds 3 --quiet >> "$OUT/tune.log" 2>&1
BENCH_TIMEOUT=140 scripts/gpu/bench.sh "$T" --tune-only --tasks softmax,layernorm,layernorm_plain,rms_norm,row_sum --time-budget 15
cat "$T/bench.log" >> "$OUT/tune.log"
for t in softmax_wide softmax layernorm layernorm_plain rms_norm row_sum; do
  python3 - bench-out/tune/$t/db.jsonl $t <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = sorted((r for r in rows if r.get("status") == "correct" and r.get("time_ms")), key=lambda r: r["time_ms"])
shown = best[:3] + [r for r in rows if "pipeline_rows" in r.get("description", "") and r not in best[:3]]
for r in shown:
    res = (r.get("resources") or [{}])[0]
    print(sys.argv[2], r["id"], r["status"], r.get("time_ms"), res.get("registers"), res.get("local_bytes_per_thread"),
          res.get("active_blocks_per_sm"), r.get("description", "")[60:], r.get("reason", "")[:160])
PY
done
BENCH_TIMEOUT=$(( 510 - SECONDS )) scripts/gpu/bench.sh "$OUT" --no-tune --tasks $R
P=$(mktemp -d)
timeout $(( 580 - SECONDS )) scripts/gpu/profile.sh bench-out/tune/softmax_wide $P/softmax_wide > /dev/null 2>&1
find $P -name '*.ncu-rep' -delete; tar czf "$OUT/profile.tgz" -C $P .
grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Dynamic Shared" $P/*/details.txt
cat "$OUT/h200.md"
tar czf "$OUT/extras.tgz" -C "$OUT" tune.log bench.log device.json h200.svg && rm -f "$OUT"/{tune.log,bench.log,device.json,h200.svg}
