#!/usr/bin/env bash
# Issue 34's TF32 rows (0.80-0.88x of cuBLAS TF32 on an H100 in session 62; the linear_8k_tf32 search timed its
# forms 3.47-4.56 ms): every TF32 wgmma form the heuristic proposes (kforge-tune --allow-tf32 --dry-run),
# compiled by the packed tuner, verified against the naive kernel on 3 seeds at TF32's tolerance and timed
# (30 repetitions), in two rounds (the proposals' order, then reversed). Then Nsight Compute on the fastest
# form of PROFILE_TASK and on what PyTorch launches for it (cuBLAS TF32), the same sections for both.
# Re-pack the tuner first (scripts/gpu/pack_tuner.sh). Writes $OUT/summary.txt, $OUT/runs.tgz,
# $OUT/ncu-kforge.txt, $OUT/ncu-torch.txt.
#   TASKS="linear_square_tf32 linear_8k_tf32" PROFILE_TASK=linear_square_tf32 LIMIT=560 bash scripts/gpu/plans/tf32/run.sh
set -u
T=gpu-artifacts/tuner; W=/tmp/tf32; rm -rf $W; mkdir -p $W/payloads
bash scripts/gpu/unpack_tuner.sh $T > $OUT/device.json
python3 bench/tasks/tasks.py --write $W/payloads > /dev/null
: > $OUT/summary.txt
tasks=${TASKS:-linear_square_tf32 linear_8k_tf32}
for t in $tasks; do
  P=$W/payloads/$t.mlir
  [ -f $P ] || { echo "$t: no such task" >> $OUT/summary.txt; continue; }
  $T/bin/kforge-tune $P --target gpu --allow-tf32 --policy heuristic --dry-run 24 > $W/$t-dry.jsonl 2> $W/$t-dry.err
  # The TF32 wgmma proposals, in the heuristic's order: $W/$t-N.json (actions) and $W/$t-N.txt (description).
  python3 - $W/$t-dry.jsonl $W/$t <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    kinds = {a["kind"] for a in d["actions"]}
    if {"wgmma", "tf32"} <= kinds:
        json.dump(d["actions"], open(f"{sys.argv[2]}-{n}.json", "w"))
        open(f"{sys.argv[2]}-{n}.txt", "w").write(d["description"])
        n += 1
PY
  forms=$(ls $W/$t-[0-9]*.json 2>/dev/null | sed "s|$W/$t-||; s|.json||" | sort -n)
  [ -n "$forms" ] || { echo "$t: no TF32 wgmma proposal ($(tail -1 $W/$t-dry.err))" >> $OUT/summary.txt; continue; }
  $T/bin/kforge-compile $P --target gpu --chip sm_90a --naive -o $W/$t-ref > /dev/null 2> $W/$t-ref.err ||
    { echo "$t: reference failed to compile" >> $OUT/summary.txt; continue; }
  for f in $forms; do
    $T/bin/kforge-tune $P --target gpu --allow-tf32 --render $W/$t-$f.json > $W/$t-$f.mlir 2> $W/$t-$f.err &&
      $T/bin/kforge-compile $P --target gpu --chip sm_90a --recipe $W/$t-$f.mlir -o $W/$t-$f > /dev/null 2>> $W/$t-$f.err ||
      echo "$t $f: compile failed: $(tail -1 $W/$t-$f.err) | $(cat $W/$t-$f.txt)" >> $OUT/summary.txt
  done
  for round in 1 2; do
    order="$forms"; [ $round = 2 ] && order=$(echo $forms | tr ' ' '\n' | tac | tr '\n' ' ')
    for f in $order; do
      [ -d $W/$t-$f ] || continue
      [ $SECONDS -lt $((${LIMIT:-560} - 120)) ] || { echo "$t $f round $round: skipped (time)" >> $OUT/summary.txt; continue; }
      timeout 120 $T/bin/kforge-run --candidate $W/$t-$f --reference $W/$t-ref --seeds 3 --reps 30 --precision tf32 \
        --runtime $T/lib/libkforge_mgpu.so --output $W/$t-$f-r$round.json > /dev/null 2> $W/$t-$f-r$round.err
      python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r.get('status'), r.get('timing',{}).get('median_ms'), r.get('why','')[:200], '|', open(sys.argv[3]).read())" \
        $W/$t-$f-r$round.json "$t $f round $round" $W/$t-$f.txt >> $OUT/summary.txt 2>/dev/null ||
        echo "$t $f round $round: no report ($(tail -1 $W/$t-$f-r$round.err))" >> $OUT/summary.txt
    done
  done
done
echo "elapsed $SECONDS s (before the profiles)" >> $OUT/summary.txt
# The fastest correct form of PROFILE_TASK (round 1 and 2's median of medians) under ncu, and PyTorch's kernels.
pt=${PROFILE_TASK:-linear_square_tf32}
best=$(python3 - $W $pt <<'PY'
import glob, json, os, sys
w, t = sys.argv[1:]
times = {}
for path in glob.glob(f"{w}/{t}-*-r*.json"):
    r = json.load(open(path))
    f = os.path.basename(path)[len(t) + 1:].split("-r")[0]
    if r.get("status") == "correct":
        times.setdefault(f, []).append(r["timing"]["median_ms"])
print(min(times, key=lambda f: sorted(times[f])[len(times[f]) // 2]) if times else "")
PY
)
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
sections="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
if [ -n "$best" ] && [ -n "$ncu" ] && [ $SECONDS -lt $((${LIMIT:-560} - 90)) ]; then
  echo "profiled: $pt form $best | $(cat $W/$pt-$best.txt)" >> $OUT/summary.txt
  timeout 60 $ncu --clock-control none --target-processes all --kernel-name regex:_kernel --launch-skip 1 --launch-count 1 $sections \
    $T/bin/kforge-run --candidate $W/$pt-$best --reference $W/$pt-$best --runtime $T/lib/libkforge_mgpu.so \
    --seeds 1 --reps 10 --warmup 1 --precision tf32 > $OUT/ncu-kforge.txt 2>&1
  timeout 90 python3 scripts/gpu/profile_torch.py $pt eager --ncu $W/torch > $W/torch.log 2>&1
  cp $W/torch/details.txt $OUT/ncu-torch.txt 2>/dev/null || tail -20 $W/torch.log > $OUT/ncu-torch.txt
fi
for t in $tasks; do rm -rf $W/$t-ref $W/$t-[0-9] $W/$t-[0-9][0-9]; done
(cd $W && tar czf $OUT/runs.tgz *.json *.jsonl *.err *.mlir *.txt 2>/dev/null)
echo "elapsed $SECONDS s" >> $OUT/summary.txt
cat $OUT/summary.txt
