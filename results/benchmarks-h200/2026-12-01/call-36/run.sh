#!/usr/bin/env bash
# Call 36 (nvidia-h200, tools packed by scripts/gpu/pack_tuner.sh at the commit it runs at): does the heuristic
# alone now reach call 35's best softmax 1024x32000 (it proposes call 35's best form: pipeline_rows(132) with
# loads_evict_last, and read_only_inputs)? That task tuned afresh with call 31's budget (30 s), the other five
# kept from call 35; the six measured in three separate processes; then ncu on softmax_wide's best kernel.
R=softmax,softmax_wide,layernorm,layernorm_plain,rms_norm,row_sum
T=$(mktemp -d); L=$(mktemp -d); P=$(mktemp -d)
tar xzf results/benchmarks-h200/2026-12-01/call-35/bench-runs.tgz && rm -rf bench-out/tune/softmax_wide
BENCH_TIMEOUT=100 scripts/gpu/bench.sh "$T" --tune-only --tasks softmax_wide --time-budget 30
cp "$T/bench.log" "$L/tune.log"
cp "$T/bench-runs.tgz" "$OUT/bench-runs.tgz"
python3 - bench-out/tune/softmax_wide/db.jsonl <<'PY' | tee "$OUT/trials.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = sorted((r for r in rows if r.get("status") == "correct" and r.get("time_ms")), key=lambda r: r["time_ms"])
print(len(rows), "trials,", len(best), "correct; the best ten, then the first twelve (the heuristic's)")
for r in best[:10] + [None] + rows[:12]:
    if r is None: print("--"); continue
    res = (r.get("resources") or [{}])[0]
    print(r["id"], r.get("status"), r.get("time_ms"), res.get("registers"), res.get("active_blocks_per_sm"), r.get("description", "")[60:])
PY
for p in p1:330 p2:400 p3:470; do
  limit=${p#*:}; p=${p%:*}
  mkdir -p "$L/$p"
  BENCH_TIMEOUT=$(( limit - SECONDS )) scripts/gpu/bench.sh "$L/$p" --no-tune --tasks $R
  cp "$L/$p/h200.json" "$OUT/$p.json"
done
cat "$L/p1/h200.md"
tar czf "$OUT/logs.tgz" -C "$L" .
timeout $(( 580 - SECONDS )) scripts/gpu/profile.sh bench-out/tune/softmax_wide $P/softmax_wide > /dev/null 2>&1
find $P -name '*.ncu-rep' -delete; tar czf "$OUT/profile.tgz" -C $P .
