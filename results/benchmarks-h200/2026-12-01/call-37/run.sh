#!/usr/bin/env bash
# Call 37 (nvidia-h200, call 36's tools: scripts/gpu/pack_tuner.sh at the commit it runs at): the three norms beat
# torch.compile by 0.1-1.5% (calls 35-36); their tuning runs (call 31's, 25-26 trials each, kept in call 36's
# bench-runs.tgz) resumed for 80 s more each, then the six reductions measured in three separate processes.
R=softmax,softmax_wide,layernorm,layernorm_plain,rms_norm,row_sum
T=$(mktemp -d); L=$(mktemp -d)
BENCH_PREVIOUS=results/benchmarks-h200/2026-12-01/call-36/bench-runs.tgz BENCH_TIMEOUT=300 \
  scripts/gpu/bench.sh "$T" --tune-only --tasks layernorm,layernorm_plain,rms_norm --time-budget 80
cp "$T/bench.log" "$L/tune.log"
cp "$T/bench-runs.tgz" "$OUT/bench-runs.tgz"
for t in layernorm layernorm_plain rms_norm; do
  python3 - bench-out/tune/$t/db.jsonl $t <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = sorted((r for r in rows if r.get("status") == "correct" and r.get("time_ms")), key=lambda r: r["time_ms"])
print(sys.argv[2], len(rows), "trials,", len(best), "correct")
for r in best[:8]:
    res = (r.get("resources") or [{}])[0]
    print(sys.argv[2], r["id"], r["status"], r.get("time_ms"), res.get("registers"), res.get("active_blocks_per_sm"),
          r.get("description", "")[60:])
PY
done | tee "$OUT/trials.txt"
for p in p1:420 p2:500 p3:575; do
  limit=${p#*:}; p=${p%:*}
  mkdir -p "$L/$p"
  BENCH_TIMEOUT=$(( limit - SECONDS )) scripts/gpu/bench.sh "$L/$p" --no-tune --tasks $R
  cp "$L/$p/h200.json" "$OUT/$p.json"
done
cat "$L/p1/h200.md"
tar czf "$OUT/logs.tgz" -C "$L" .
