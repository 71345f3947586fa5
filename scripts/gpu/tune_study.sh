#!/usr/bin/env bash
# GPU side of the search study (docs/perf/search-h200.md): unpacks the tuner (scripts/gpu/pack_tuner.sh, carried
# as gpu-artifacts/tuner), then for each line "NAME PAYLOAD POLICY TRIALS SEED [extra kforge-tune flags]" of
# the plan file $1 tunes PAYLOAD on the GPU into runs/NAME (resuming when a run directory for NAME was carried
# in $3). After each run, every run's database, report, plot, best schedule and log are packed into
# $2/runs.tgz, so a call cut short still returns what finished.
set -uo pipefail
plan=$1 out=$2 previous=${3:-}
scripts/gpu/unpack_tuner.sh gpu-artifacts/tuner > "$out/device.json" || exit 1
tune=gpu-artifacts/tuner/bin/kforge-tune
mkdir -p runs
while read -r name payload policy trials seed extra; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  resume=
  if [ -n "$previous" ] && [ -f "$previous/$name/db.jsonl" ]; then
    mkdir -p "runs/$name" && cp "$previous/$name/"{db.jsonl,run.json,payload.mlir} "runs/$name/" && resume=--resume
  fi
  start=$(date +%s)
  # shellcheck disable=SC2086
  "$tune" "$payload" --target gpu --policy "$policy" --trials "$trials" --seed "$seed" -o "runs/$name" \
    $resume $extra > "runs/$name.log" 2>&1
  echo "$name: exit $? after $(( $(date +%s) - start )) s" | tee -a "$out/summary.txt"
  grep -E "stopped|best" "runs/$name.log" | tail -2 >> "$out/summary.txt"
  # The search verified each trial over --seeds inputs; the best kernel is rebuilt and verified over 5.
  "$tune" --replay "runs/$name" > "runs/$name.replay.json" 2>> "runs/$name.log"
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print("  replay of the best (5 seeds):", r.get("verified"), r.get("time_ms"), "ms")' \
    "runs/$name.replay.json" >> "$out/summary.txt" 2>&1
  python3 - "runs/$name/db.jsonl" >> "$out/summary.txt" <<'PY'
import collections, json, statistics, sys
trials = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
trials = [t for t in trials if t.get("kind") == "candidate"]
runs = [t["run_s"] for t in trials if "run_s" in t]
pids = {t["runner"]["pid"] for t in trials if "runner" in t}
print(f"  {len(trials)} trials {dict(collections.Counter(t['status'] for t in trials))}; "
      f"median run {statistics.median(runs) if runs else 0:.2f} s, compile "
      f"{statistics.median([t.get('compile_s', 0) for t in trials]) if trials else 0:.2f} s; "
      f"{len(pids)} runner process(es)")
PY
  # Only the records, reports and best schedules travel back: the seed cache (inputs and reference outputs,
  # hundreds of MB of random floats), compiled candidates and caches stay.
  tar czf "$out/runs.tgz" --exclude='candidates' --exclude='cache' --exclude='seed-cache' --exclude='baseline' \
    --exclude='best' runs
done < "$plan"
