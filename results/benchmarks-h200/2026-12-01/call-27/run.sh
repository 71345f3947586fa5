#!/usr/bin/env bash
# Call 27 (nvidia-h200, tools packed by scripts/gpu/pack_tuner.sh at the commit it runs at): the six reduction tasks tuned afresh (the
# heuristic now proposes streaming_stores, then read_only_inputs, on each normalising row kernel's first lane_vector form), then measured
# with PyTorch in two separate processes (p1, p2), with bench/run's new clock (the GPU's lead past the flush).
# Then call 28 (its own run.sh): the cache-qualifier experiment.
R=softmax,softmax_wide,layernorm,layernorm_plain,rms_norm,row_sum
T=$(mktemp -d); L=$(mktemp -d)
BENCH_TIMEOUT=100 scripts/gpu/bench.sh "$T" --tune-only --tasks softmax_wide --time-budget 30
cp "$T/bench.log" "$L/tune.log"
BENCH_TIMEOUT=150 scripts/gpu/bench.sh "$T" --tune-only --tasks softmax,layernorm,layernorm_plain,rms_norm,row_sum --time-budget 15
cat "$T/bench.log" >> "$L/tune.log"
cp "$T/bench-runs.tgz" "$OUT/bench-runs.tgz"
for t in softmax_wide softmax layernorm layernorm_plain rms_norm row_sum; do
  python3 - bench-out/tune/$t/db.jsonl $t <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = sorted((r for r in rows if r.get("status") == "correct" and r.get("time_ms")), key=lambda r: r["time_ms"])
shown = best[:3] + [r for r in rows if "streaming_stores" in r.get("description", "") and r not in best[:3]][:4]
for r in shown:
    res = (r.get("resources") or [{}])[0]
    print(sys.argv[2], r["id"], r["status"], r.get("time_ms"), res.get("registers"), res.get("active_blocks_per_sm"),
          r.get("description", "")[60:], r.get("reason", "")[:160])
PY
done | tee "$OUT/trials.txt"
for p in p1:400 p2:540; do
  limit=${p#*:}; p=${p%:*}
  mkdir -p "$L/$p"
  BENCH_TIMEOUT=$(( limit - SECONDS )) scripts/gpu/bench.sh "$L/$p" --no-tune --tasks $R
  cp "$L/$p/h200.md" "$OUT/$p.md"; cp "$L/$p/h200.json" "$OUT/$p.json"
done
cat "$OUT/p1.md" "$OUT/p2.md"
tar czf "$OUT/logs.tgz" -C "$L" .
