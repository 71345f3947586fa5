#!/usr/bin/env bash
# A compiler change measured on fixed kernels: the same schedules compiled by the build before the change and by
# the build after it, run beside each other on the GPU machine (the tuner would also pick other schedules).
#
#   scripts/gpu/ab_kernels.sh build DIR TASK:INDEX...    (CPU, this checkout's build/bin; a numpy python3 on PATH)
#     compiles, for each TASK (a bench task) the heuristic's INDEX-th proposal (kforge-tune --dry-run, counted from 0)
#     into DIR/TASK-INDEX, and each task's naive reference into DIR/TASK-ref; DIR/schedules.txt names them.
#     Run it once at the commit before the change (DIR = .../before) and once after (DIR = .../after).
#   scripts/gpu/ab_kernels.sh run BEFORE AFTER OUT [ROUNDS] [RUNTIME]    (GPU machine)
#     runs every kernel of BEFORE and its namesake in AFTER with kforge-run against BEFORE's reference (3 seeds
#     verified, 30 timed repetitions), alternating before/after for ROUNDS rounds (default 2); writes
#     OUT/summary.txt (kernel, side, round, status, median ms) and OUT/reports.tgz. RUNTIME: the mgpu runtime
#     (default gpu-artifacts/tuner/lib/libkforge_mgpu.so); KFORGE_RUN: kforge-run (default the unpacked tuner's).
set -u
mode=${1:-}
case "$mode" in
build)
  dir=$2; shift 2
  [ $# -gt 0 ] || { echo "usage: ab_kernels.sh build DIR TASK:INDEX..." >&2; exit 2; }
  B=build/bin
  mkdir -p "$dir/payloads"
  python3 bench/tasks/tasks.py --write "$dir/payloads" > /dev/null || { echo "cannot write the bench payloads" >&2; exit 2; }
  : > "$dir/schedules.txt"
  for spec in "$@"; do
    task=${spec%%:*} index=${spec##*:}
    P=$dir/payloads/$task.mlir
    [ -f "$P" ] || { echo "$task: no such task" >&2; exit 2; }
    if [ ! -d "$dir/$task-ref" ]; then
      $B/kforge-compile "$P" --target gpu --chip sm_90a --naive -o "$dir/$task-ref" > /dev/null || exit 1
    fi
    line=$($B/kforge-tune "$P" --target gpu --policy heuristic --dry-run $((index + 1)) 2> /dev/null | sed -n "$((index + 1))p")
    [ -n "$line" ] || { echo "$task: the heuristic has no proposal $index" >&2; exit 1; }
    echo "$line" | python3 -c "import json,sys; print(json.dumps(json.loads(sys.stdin.read())['actions']))" > "$dir/$task-$index.json"
    $B/kforge-tune "$P" --target gpu --render "$dir/$task-$index.json" > "$dir/$task-$index.mlir" &&
      $B/kforge-compile "$P" --target gpu --chip sm_90a --recipe "$dir/$task-$index.mlir" -o "$dir/$task-$index" > /dev/null ||
      { echo "$task-$index: compile failed" >&2; exit 1; }
    echo "$task-$index | $(echo "$line" | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['description'])")" >> "$dir/schedules.txt"
  done
  rm -rf "$dir/payloads"
  cat "$dir/schedules.txt"
  ;;
run)
  before=$2 after=$3 out=$4 rounds=${5:-2} runtime=${6:-gpu-artifacts/tuner/lib/libkforge_mgpu.so}
  mkdir -p "$out/reports"
  : > "$out/summary.txt"
  for line in $(cut -d' ' -f1 "$before/schedules.txt"); do
    task=${line%-*}
    for round in $(seq 1 "$rounds"); do
      for side in before after; do
        dir=$before; [ $side = after ] && dir=$after
        report=$out/reports/$line.$side.$round.json
        timeout 300 "${KFORGE_RUN:-gpu-artifacts/tuner/bin/kforge-run}" --candidate "$dir/$line" --reference "$before/$task-ref" --seeds 3 \
          --reps 30 --runtime "$runtime" --output "$report" > /dev/null 2> "$report.err"
        python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r.get('status'), r.get('timing',{}).get('median_ms'), r.get('why',''))" \
          "$report" "$line $side $round" >> "$out/summary.txt" 2> /dev/null ||
          echo "$line $side $round: no report ($(tail -1 "$report.err"))" >> "$out/summary.txt"
      done
    done
  done
  tar czf "$out/reports.tgz" -C "$out" reports && rm -rf "$out/reports"
  cat "$before/schedules.txt" "$out/summary.txt"
  ;;
*)
  echo "usage: ab_kernels.sh build DIR TASK:INDEX... | run BEFORE AFTER OUT [ROUNDS] [RUNTIME]" >&2
  exit 2
  ;;
esac
