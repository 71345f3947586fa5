#!/usr/bin/env bash
# GPU side of the search study (docs/perf/search-h200.md): unpacks the tuner (scripts/gpu/pack_tuner.sh, carried
# as gpu-artifacts/tuner), then for each line "NAME PAYLOAD POLICY TRIALS SEED [extra kforge-tune flags]" of
# the plan file $1 tunes PAYLOAD on the GPU into runs/NAME (resuming when a run directory for NAME was carried
# in $3). After each run, every run's database, report, plot, best schedule and log are packed into
# $2/runs.tgz, so a call cut short still returns what finished.
#   scripts/gpu/tune_study.sh PLAN OUT [PREVIOUS_RUNS_DIR]
# GPUS=N (default 1) runs the plan's lines on N GPUs at once: line i on GPU i % N (CUDA_VISIBLE_DEVICES), each
# GPU's lines in plan order, the compiles of each sharing the machine's cores (--jobs in the plan applies to
# each). On a machine with N GPUs the study takes about 1/N of the device time.
set -uo pipefail
if [ $# -lt 2 ] || [ ! -f "$1" ]; then
  echo "usage: [GPUS=N] scripts/gpu/tune_study.sh PLAN OUT [PREVIOUS_RUNS_DIR]" >&2
  exit 2
fi
plan=$1 out=$2 previous=${3:-}
gpus=${GPUS:-1}
if ! [[ "$gpus" =~ ^[1-9][0-9]*$ ]]; then
  echo "tune_study.sh: GPUS must be a positive number, not '$gpus'" >&2
  exit 2
fi
# TUNER=DIR: a tuner packed earlier (default gpu-artifacts/tuner), so that a study spread over several calls keeps
# one search space while the tools change.
tuner=${TUNER:-gpu-artifacts/tuner}
scripts/gpu/unpack_tuner.sh "$tuner" > "$out/device.json" || exit 1
tune=$tuner/bin/kforge-tune
mkdir -p runs
lock="$out/.lock"

# One plan line: tune, replay the best over 5 seeds, summarise, pack every run so far.
run_line() {
  local name=$1 payload=$2 policy=$3 trials=$4 seed=$5 extra=$6 gpu=$7
  local resume=
  if [ -n "$previous" ] && [ -f "$previous/$name/db.jsonl" ]; then
    mkdir -p "runs/$name" && cp "$previous/$name/"{db.jsonl,run.json,payload.mlir} "runs/$name/" && resume=--resume
  fi
  local start status
  start=$(date +%s)
  # shellcheck disable=SC2086
  CUDA_VISIBLE_DEVICES=$gpu "$tune" "$payload" --target gpu --policy "$policy" --trials "$trials" --seed "$seed" \
    -o "runs/$name" $resume $extra > "runs/$name.log" 2>&1
  status=$?
  # The search verified each trial over --seeds inputs; the best kernel is rebuilt and verified over 5.
  CUDA_VISIBLE_DEVICES=$gpu "$tune" --replay "runs/$name" > "runs/$name.replay.json" 2>> "runs/$name.log"
  {
    flock 9
    {
      echo "$name (GPU $gpu): exit $status after $(( $(date +%s) - start )) s"
      grep -E "stopped|best" "runs/$name.log" | tail -2
      python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print("  replay of the best (5 seeds):", r.get("verified"), r.get("time_ms"), "ms")' \
        "runs/$name.replay.json" 2>&1
      python3 - "runs/$name/db.jsonl" <<'PY'
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
    } | tee -a "$out/summary.txt"
    # Only the records, reports and best schedules travel back: the seed cache (inputs and reference outputs,
    # hundreds of MB of random floats), compiled candidates and caches stay.
    tar czf "$out/runs.tgz" --exclude='candidates' --exclude='cache' --exclude='seed-cache' --exclude='baseline' \
      --exclude='best' runs
  } 9> "$lock"
}

# Worker w takes the plan's lines w, w + GPUS, ... in order, on GPU w.
worker() {
  local w=$1 i=0
  while read -r name payload policy trials seed extra; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    if (( i++ % gpus == w )); then
      run_line "$name" "$payload" "$policy" "$trials" "$seed" "$extra" "$w"
    fi
  done < "$plan"
}

for (( w = 0; w < gpus; ++w )); do
  worker "$w" &
done
wait
rm -f "$lock"
