#!/usr/bin/env bash
# Call 35 (not run yet; for the next session: nvidia-h200, tools packed by scripts/gpu/pack_tuner.sh at the
# commit it runs at): softmax 1024x32000 sits on issue 9's 80% line (80.3-80.6% of copy bandwidth in calls 31-32,
# 79.9% in call 34) after only 32 trials in 30 s; resume call 31's tuning of it for 150 s more (the heuristic
# now also proposes pipeline_rows with loads_evict_first: the rows' bulk copies evict-first in L2, not yet run on
# a GPU), then measure the six reductions (call 31's records for the other five) in three separate processes.
R=softmax,softmax_wide,layernorm,layernorm_plain,rms_norm,row_sum
T=$(mktemp -d); L=$(mktemp -d)
BENCH_PREVIOUS=results/benchmarks-h200/2026-12-01/call-31/bench-runs.tgz BENCH_TIMEOUT=220 \
  scripts/gpu/bench.sh "$T" --tune-only --tasks softmax_wide --time-budget 150
cp "$T/bench-runs.tgz" "$OUT/bench-runs.tgz"
python3 - bench-out/tune/softmax_wide/db.jsonl <<'PY' | tee "$OUT/trials.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = sorted((r for r in rows if r.get("status") == "correct" and r.get("time_ms")), key=lambda r: r["time_ms"])
print(len(rows), "trials,", len(best), "correct")
for r in best[:10]:
    res = (r.get("resources") or [{}])[0]
    print(r["id"], r.get("time_ms"), res.get("registers"), res.get("active_blocks_per_sm"), r.get("description", "")[60:])
PY
for p in p1:340 p2:460 p3:575; do
  limit=${p#*:}; p=${p%:*}
  mkdir -p "$L/$p"
  BENCH_TIMEOUT=$(( limit - SECONDS )) scripts/gpu/bench.sh "$L/$p" --no-tune --tasks $R
  cp "$L/$p/h200.json" "$OUT/$p.json"
done
cat "$L/p1/h200.md"
tar czf "$OUT/logs.tgz" -C "$L" .
