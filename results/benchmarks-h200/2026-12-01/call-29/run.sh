#!/usr/bin/env bash
# Call 29 (nvidia-h200, tools packed by scripts/gpu/pack_tuner.sh at the commit it runs at): the six reduction tasks
# tuned afresh with the L2 load policies (the heuristic proposes loads_evict_last with streaming_stores on each
# normalising row kernel's first lane_vector form, loads_evict_first on the row sum), then measured with PyTorch in
# three separate processes (p1, p2, p3), with bench/run's clock of call 27.
R=softmax,softmax_wide,layernorm,layernorm_plain,rms_norm,row_sum
T=$(mktemp -d); L=$(mktemp -d)
BENCH_TIMEOUT=100 scripts/gpu/bench.sh "$T" --tune-only --tasks softmax_wide --time-budget 30
cp "$T/bench.log" "$L/tune.log"
BENCH_TIMEOUT=200 scripts/gpu/bench.sh "$T" --tune-only --tasks softmax,layernorm,layernorm_plain,rms_norm,row_sum --time-budget 20
cat "$T/bench.log" >> "$L/tune.log"
cp "$T/bench-runs.tgz" "$OUT/bench-runs.tgz"
for t in softmax_wide softmax layernorm layernorm_plain rms_norm row_sum; do
  python3 - bench-out/tune/$t/db.jsonl $t <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = sorted((r for r in rows if r.get("status") == "correct" and r.get("time_ms")), key=lambda r: r["time_ms"])
shown = best[:3] + [r for r in rows if "loads_evict" in r.get("description", "") and r not in best[:3]][:6]
shown += [r for r in rows[:12] if r not in shown]
for r in shown:
    res = (r.get("resources") or [{}])[0]
    print(sys.argv[2], r["id"], r["status"], r.get("time_ms"), res.get("registers"), res.get("active_blocks_per_sm"),
          r.get("description", "")[60:], r.get("reason", "")[:200])
PY
done | tee "$OUT/trials.txt"
for p in p1:420 p2:500 p3:580; do
  limit=${p#*:}; p=${p%:*}
  mkdir -p "$L/$p"
  BENCH_TIMEOUT=$(( limit - SECONDS )) scripts/gpu/bench.sh "$L/$p" --no-tune --tasks $R
  cp "$L/$p/h200.md" "$OUT/$p.md"; cp "$L/$p/h200.json" "$OUT/$p.json"
done
cat "$OUT/p1.md"
tar czf "$OUT/logs.tgz" -C "$L" .
