#!/usr/bin/env bash
# Call 44 (nvidia-h200, tools packed by scripts/gpu/pack_tuner.sh at the commit it runs at: the heuristic now
# also proposes loads_evict_last without a prefetch): the three norms tuned afresh with the default (dirty)
# flush, 25 s each, then measured in two processes, one with each flush. Which heuristic proposal each run's
# best came from is in trials.txt.
N=layernorm,layernorm_plain,rms_norm
T=$(mktemp -d); L=$(mktemp -d)
BENCH_TIMEOUT=200 scripts/gpu/bench.sh "$T" --tune-only --tasks $N --time-budget 25
cp "$T/bench.log" "$L/tune.log"
tar czf "$OUT/bench-runs.tgz" --exclude='candidates' --exclude='cache' --exclude='seed-cache' --exclude='baseline' \
  --exclude='best' bench-out
python3 - <<'PY' | tee "$OUT/trials.txt"
import json
for t in ("layernorm", "layernorm_plain", "rms_norm"):
    rows = [json.loads(l) for l in open(f"bench-out/tune/{t}/db.jsonl")]
    ok = sorted((r for r in rows if r.get("status") == "correct" and r.get("time_ms")), key=lambda r: r["time_ms"])
    print(t, len(rows), "trials,", len(ok), "correct")
    for r in ok[:6] + [r for r in ok if "without a prefetch" in (r.get("step") or "")]:
        print(" ", r["id"], round(r["time_ms"], 5), r.get("policy"), r.get("description", "").split("fuse(thread); ")[-1])
PY
for p in d1:dirty c1:clean; do
  l2=${p#*:}; p=${p%:*}
  mkdir -p "$L/$p"
  BENCH_TIMEOUT=$(( 560 - SECONDS )) scripts/gpu/bench.sh "$L/$p" --no-tune --tasks $N --l2 $l2
  cp "$L/$p/h200.json" "$OUT/$p.json"
done
cat "$L/d1/h200.md"
tar czf "$OUT/logs.tgz" -C "$L" .
