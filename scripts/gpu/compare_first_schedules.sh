#!/usr/bin/env bash
# On the GPU machine: for each bench task, the heuristic's first schedule containing WORD and its first schedule
# without it, compiled for sm_90a and run by kforge-run beside each other (verified against the naive kernel on
# 3 seeds, then 30 timed repetitions): e.g. WORD=channels_last measures the channels-last copies against the
# layout as it is with everything else the heuristic's. Writes OUT/summary.txt (task, form, verdict, median ms,
# schedule) and OUT/runs.tgz (kforge-run's reports).
#
#   scripts/gpu/compare_first_schedules.sh WORD OUT TASK... [-- TOOLS_DIR]
# TOOLS_DIR: the unpacked tuner (default gpu-artifacts/tuner: bin/kforge-tune, bin/kforge-compile, bin/kforge-run,
# lib/libkforge_mgpu.so). DRY=1 compiles without running (on a machine with no GPU). ALLOW_TF32=1 lets the
# heuristic use TF32 (kforge-tune --allow-tf32) and verifies at TF32's tolerance (kforge-run --precision tf32):
# e.g. WORD=tf32 on an fp32 convolution compares its TF32 wgmma kernel with its SIMT one.
set -u
word=$1 out=$2
shift 2
tasks=()
tools=gpu-artifacts/tuner
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then tools=$2; break; fi
  tasks+=("$1"); shift
done
T=$tools/bin
tune_flags=() run_flags=()
if [ "${ALLOW_TF32:-0}" = 1 ]; then tune_flags=(--allow-tf32); run_flags=(--precision tf32); fi
mkdir -p "$out/runs" "$out/payloads"
: > "$out/summary.txt"
python3 bench/tasks/tasks.py --write "$out/payloads" > /dev/null || { echo "cannot write the bench payloads" >&2; exit 2; }
pick() { # jsonl, with|without -> the schedule's actions (JSON) and description, or nothing
  python3 - "$1" "$2" "$word" <<'EOF'
import json, sys
path, mode, word = sys.argv[1:]
for line in open(path):
    d = json.loads(line)
    if (word in d["description"]) == (mode == "with"):
        print(json.dumps(d["actions"]))
        print(d["description"])
        break
EOF
}
for t in "${tasks[@]}"; do
  P=$out/payloads/$t.mlir
  [ -f "$P" ] || { echo "$t: no such task" >> "$out/summary.txt"; continue; }
  W=$out/runs/$t; mkdir -p "$W"
  $T/kforge-tune "$P" --target gpu "${tune_flags[@]}" --policy heuristic --dry-run 24 > "$W/dry.jsonl" 2> "$W/dry.err"
  $T/kforge-compile "$P" --target gpu --chip sm_90a --naive -o "$W/ref" > /dev/null 2> "$W/ref.err" ||
    { echo "$t: the naive reference failed to compile" >> "$out/summary.txt"; continue; }
  for form in with without; do
    pick "$W/dry.jsonl" $form > "$W/$form.txt"
    if [ ! -s "$W/$form.txt" ]; then echo "$t $form-$word: no such proposal" >> "$out/summary.txt"; continue; fi
    head -1 "$W/$form.txt" > "$W/$form.json"
    desc=$(sed -n 2p "$W/$form.txt")
    if ! $T/kforge-tune "$P" --target gpu "${tune_flags[@]}" --render "$W/$form.json" > "$W/$form.mlir" 2> "$W/$form.err" ||
       ! $T/kforge-compile "$P" --target gpu --chip sm_90a --recipe "$W/$form.mlir" -o "$W/$form" > /dev/null 2>> "$W/$form.err"; then
      echo "$t $form-$word: compile failed: $(tail -1 "$W/$form.err") | $desc" >> "$out/summary.txt"; continue
    fi
    if [ "${DRY:-0}" = 1 ]; then echo "$t $form-$word: compiled | $desc" >> "$out/summary.txt"; continue; fi
    timeout 300 $T/kforge-run --candidate "$W/$form" --reference "$W/ref" --seeds 3 --reps 30 "${run_flags[@]}" \
      --runtime "$tools/lib/libkforge_mgpu.so" --output "$W/$form.report.json" > /dev/null 2> "$W/$form.run.err"
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r.get('status'), r.get('timing',{}).get('median_ms'), r.get('why',''), '|', sys.argv[3])" \
      "$W/$form.report.json" "$t $form-$word" "$desc" >> "$out/summary.txt" 2>/dev/null ||
      echo "$t $form-$word: no report (kforge-run: $(tail -1 "$W/$form.run.err")) | $desc" >> "$out/summary.txt"
  done
  rm -rf "$W/ref" "$W/with" "$W/without" # the compiled kernels: large, and reproducible from the schedules
done
tar czf "$out/runs.tgz" -C "$out" runs && rm -rf "$out/runs" "$out/payloads"
cat "$out/summary.txt"
