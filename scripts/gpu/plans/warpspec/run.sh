#!/usr/bin/env bash
# Prepared in session 61 (CPU only): warp_specialize (a producer warp issuing the TMA copies, full and empty
# mbarriers per stage, no block barrier in the K loop) beside the forms it grows from, on fixed kernels.
# For each task, schedules/TASK-{A..E}.json: A the heuristic's first proposal (cp.async, overlap), B A with
# tma, C B with warp_specialize, D C with stage_epilogue, E C with persistent(132). Each is compiled here by the packed tuner (re-pack it
# first: scripts/gpu/pack_tuner.sh), verified against the naive kernel on 3 seeds and timed (30 repetitions),
# in two rounds (A..E, then E..A). Then bench/run on matmul_square_bf16 (the heuristic proposes C fourth, E fifth)
# with what time is left. Writes $OUT/summary.txt, $OUT/runs.tgz, $OUT/h200.md.
set -u
T=gpu-artifacts/tuner; here=scripts/gpu/plans/warpspec; W=/tmp/ws; rm -rf $W; mkdir -p $W/payloads
bash scripts/gpu/unpack_tuner.sh $T > $OUT/device.json
python3 bench/tasks/tasks.py --write $W/payloads > /dev/null
: > $OUT/summary.txt
# TASKS, FORMS, ROUNDS (1 or 2) and BENCH_TASKS narrow a call: e.g. FORMS="C D E" ROUNDS=1; LIMIT (seconds,
# default 560) is when the bench must have finished.
tasks=${TASKS:-$(ls $here/schedules | sed 's/-[A-E].json$//' | sort -u)}
forms=${FORMS:-A B C D E}
for t in $tasks; do
  P=$W/payloads/$t.mlir
  $T/bin/kforge-compile $P --target gpu --chip sm_90a --naive -o $W/$t-ref > /dev/null 2> $W/$t-ref.err || { echo "$t: reference failed to compile" >> $OUT/summary.txt; continue; }
  for f in $forms; do
    $T/bin/kforge-tune $P --target gpu --render $here/schedules/$t-$f.json > $W/$t-$f.mlir 2> $W/$t-$f.err &&
      $T/bin/kforge-compile $P --target gpu --chip sm_90a --recipe $W/$t-$f.mlir -o $W/$t-$f > /dev/null 2>> $W/$t-$f.err ||
      echo "$t $f: compile failed: $(tail -1 $W/$t-$f.err)" >> $OUT/summary.txt
  done
  for round in $(seq 1 ${ROUNDS:-2}); do
    order="$forms"; [ $round = 2 ] && order=$(echo $forms | tr ' ' '\n' | tac | tr '\n' ' ')
    for f in $order; do
      [ -d $W/$t-$f ] || continue
      timeout 120 $T/bin/kforge-run --candidate $W/$t-$f --reference $W/$t-ref --seeds 3 --reps 30 --runtime $T/lib/libkforge_mgpu.so --output $W/$t-$f-r$round.json > /dev/null 2> $W/$t-$f-r$round.err
      python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r.get('status'), r.get('timing',{}).get('median_ms'), r.get('why','')[:300])" $W/$t-$f-r$round.json "$t $f round $round" >> $OUT/summary.txt 2>/dev/null ||
        echo "$t $f round $round: no report ($(tail -1 $W/$t-$f-r$round.err))" >> $OUT/summary.txt
    done
  done
  rm -rf $W/$t-ref $W/$t-[A-E]
done
echo "elapsed $SECONDS s (before the bench)" >> $OUT/summary.txt
(cd $W && tar czf $OUT/runs.tgz *.json *.err *.mlir 2>/dev/null)
left=$((${LIMIT:-560} - SECONDS))
if [ $left -gt 150 ]; then
  mkdir -p $W/b; BENCH_TIMEOUT=$left scripts/gpu/bench.sh $W/b --tasks ${BENCH_TASKS:-matmul_square_bf16} --time-budget ${BENCH_BUDGET:-45} > $W/bench.out 2>&1
  cp $W/b/h200.md $W/b/h200.json $W/b/bench-runs.tgz $OUT/ 2>/dev/null; tail -5 $W/bench.out >> $OUT/summary.txt
fi
echo "elapsed $SECONDS s" >> $OUT/summary.txt
cat $OUT/summary.txt $OUT/h200.md 2>/dev/null
