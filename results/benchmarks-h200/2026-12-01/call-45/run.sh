#!/usr/bin/env bash
# Call 45 (nvidia-h200, call 44's tools): is 100-101% of copy bandwidth the floor of a kernel that reads each
# byte once and writes each byte once? relu 8192x8192 (the same traffic as a norm, twice as much of it, no
# reduction) tuned with the clean flush (30 s), then kforge's and torch.compile's relu measured with each flush.
T=$(mktemp -d); L=$(mktemp -d)
BENCH_TIMEOUT=120 scripts/gpu/bench.sh "$T" --tune-only --tasks relu --time-budget 30 --l2 clean
cp "$T/bench.log" "$L/tune.log"
tar czf "$OUT/bench-runs.tgz" --exclude='candidates' --exclude='cache' --exclude='seed-cache' --exclude='baseline' \
  --exclude='best' bench-out
python3 - <<'PY' | tee "$OUT/trials.txt"
import json
rows = [json.loads(l) for l in open("bench-out/tune/relu/db.jsonl")]
ok = sorted((r for r in rows if r.get("status") == "correct" and r.get("time_ms")), key=lambda r: r["time_ms"])
print("relu", len(rows), "trials,", len(ok), "correct")
for r in ok[:8]:
    print(" ", r["id"], round(r["time_ms"], 5), r.get("policy"), r.get("description", ""))
PY
for p in c1:clean d1:dirty c2:clean; do
  l2=${p#*:}; p=${p%:*}
  mkdir -p "$L/$p"
  BENCH_TIMEOUT=$(( 500 - SECONDS )) scripts/gpu/bench.sh "$L/$p" --no-tune --tasks relu --l2 $l2
  cp "$L/$p/h200.json" "$OUT/$p.json"
done
cat "$L/c1/h200.md"
tar czf "$OUT/logs.tgz" -C "$L" .
