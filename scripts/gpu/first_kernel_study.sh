#!/usr/bin/env bash
# GPU side of issue 28's time-to-first-kernel study: a default kforge-tune run (policy and budgets as a new user
# gets them, plus --time-budget) on each payload of scripts/gpu/first_kernel_payloads.py, then a table of what
# run.json's search_speed says: time to the first correct trial, trials per minute, the reference check.
#   bash scripts/gpu/first_kernel_study.sh TUNER_DIR OUT [TIME_BUDGET_S]
# TUNER_DIR: scripts/gpu/pack_tuner.sh's output (unpacked here by unpack_tuner.sh). PAYLOADS="a b" narrows the
# study to those payloads (names as first_kernel_payloads.py writes them, e.g. softmax_4096x393216).
set -uo pipefail
tuner="$(cd "${1:?usage: first_kernel_study.sh TUNER_DIR OUT [TIME_BUDGET_S]}" && pwd)"
out="${2:?}"
budget="${3:-60}"
mkdir -p "$out/payloads" "$out/runs"
bash "$(dirname "$0")/unpack_tuner.sh" "$tuner" > "$out/device-info.json"
python3 "$(dirname "$0")/first_kernel_payloads.py" "$out/payloads"
for payload in "$out"/payloads/*.mlir; do
  name="$(basename "$payload" .mlir)"
  if [ -n "${PAYLOADS:-}" ] && [[ " $PAYLOADS " != *" $name "* ]]; then continue; fi
  start=$(date +%s.%N)
  "$tuner/bin/kforge-tune" "$payload" --target gpu -o "$out/runs/$name" --time-budget "$budget" \
    > "$out/runs/$name.log" 2>&1
  echo "$name: exit $? after $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" >> "$out/exits.txt"
done
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
print("| payload | exit / wall | setup s | first correct trial (s from start) | trials | trials/min | best ms | baseline ms | reference check |")
print("|---|---|---|---|---|---|---|---|---|")
exits = dict(line.split(": ", 1) for line in open(os.path.join(out, "exits.txt")).read().splitlines())
for name in sorted(os.listdir(os.path.join(out, "runs"))):
    run = os.path.join(out, "runs", name)
    if not os.path.isdir(run):
        continue
    try:
        r = json.load(open(os.path.join(run, "run.json")))
    except Exception as e:
        print(f"| {name} | {exits.get(name, '?')} | no run.json: {e} |||||||")
        continue
    s = r.get("search_speed", {})
    records = [json.loads(l) for l in open(os.path.join(run, "db.jsonl")) if l.strip()]
    base = next((x for x in records if x.get("kind") == "baseline"), {})
    correct = [x["time_ms"] for x in records if x.get("kind") == "candidate" and x.get("status") == "correct"]
    ref = r.get("reference_check", {})
    print(f"| {name} | {exits.get(name, '?')} | {s.get('setup_s', 0):.1f} | {s.get('time_to_first_correct_trial_s', 'none')} | "
          f"{s.get('trials')} | {s.get('trials_per_minute', 0):.1f} | {min(correct) if correct else 'none'} | "
          f"{base.get('time_ms')} | {ref.get('status')}: {ref.get('reason', '')[:60]} |")
# Where the runner's time went (phases_ms of each report, in s): the baseline's first run (seed 0: inputs
# drawn, the reference run) and its timed run, then the sum over every measured trial.
phases = ("load", "inputs", "copies", "candidate_runs", "reference_runs", "compare", "timing")
print()
print("| payload | what | " + " | ".join(phases) + " |")
print("|---|---|" + "---|" * len(phases))
for name in sorted(os.listdir(os.path.join(out, "runs"))):
    db = os.path.join(out, "runs", name, "db.jsonl")
    if not os.path.isfile(db):
        continue
    records = [json.loads(l) for l in open(db) if l.strip()]
    base = next((x.get("run", {}) for x in records if x.get("kind") == "baseline"), {})
    trials = [x["phases_ms"] for x in records if x.get("kind") == "candidate" and "phases_ms" in x]
    rows = [("baseline, seed-0 run", base.get("first_run_phases_ms")), ("baseline, timed run", base.get("phases_ms")),
            (f"{len(trials)} trials, summed", {p: sum(t.get(p, 0) for t in trials) for p in phases} if trials else None)]
    for what, ms in rows:
        if ms:
            print(f"| {name} | {what} | " + " | ".join(f"{ms.get(p, 0) / 1000:.2f}" for p in phases) + " |")
PY
