#!/usr/bin/env bash
# Call 41 (nvidia-h200, tools packed by scripts/gpu/pack_tuner.sh at the commit it runs at; the session's last
# ~3 minutes of device time): the clean flush in kforge-run for real (its PTX read kernel), and a first look at
# tuning under it: layernorm_plain tuned afresh with --l2 clean (40 s; kforge-tune --l2-flush clean), then
# measured with --l2 clean in one process.
T=$(mktemp -d); L=$(mktemp -d)
BENCH_TIMEOUT=90 scripts/gpu/bench.sh "$T" --tune-only --tasks layernorm_plain --time-budget 40 --l2 clean
cp "$T/bench.log" "$L/tune.log"
cp "$T/bench-runs.tgz" "$OUT/bench-runs.tgz"
python3 - bench-out/tune/layernorm_plain/db.jsonl <<'PY' | tee "$OUT/trials.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = sorted((r for r in rows if r.get("status") == "correct" and r.get("time_ms")), key=lambda r: r["time_ms"])
print(len(rows), "trials,", len(best), "correct; clock:", (rows[0].get("run") or {}).get("timing", {}).get("clock"))
for r in best[:8]:
    print(r["id"], r.get("time_ms"), r.get("l2_flush"), r.get("description", "")[60:])
PY
mkdir -p "$L/c1"
BENCH_TIMEOUT=$(( 170 - SECONDS )) scripts/gpu/bench.sh "$L/c1" --no-tune --tasks layernorm_plain --l2 clean
cp "$L/c1/h200.json" "$OUT/c1.json"; cat "$L/c1/h200.md"
tar czf "$OUT/logs.tgz" -C "$L" .
