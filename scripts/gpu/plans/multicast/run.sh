#!/usr/bin/env bash
# Issue 34's clusters with TMA multicast (the multicast action, built in session 63, never run on a GPU before
# this), as fixed kernels beside the forms they grow from. For each task, schedules/TASK-{P,M,Q,N}.json: P the
# heuristic's first proposal (warp-specialized, stage_epilogue; 256 x 128 blocks for the 16-bit tasks, 128 x 256
# for TF32), M P with multicast (pairs of blocks sharing the larger operand tile: A's on 256 x 128, B's on
# 128 x 256), Q P on 128 x 256 blocks and N Q with multicast (16-bit tasks only). Each is compiled by the packed
# tuner (re-pack it first: scripts/gpu/pack_tuner.sh), verified against the naive kernel on 3 seeds and timed
# (30 repetitions) by kforge-run, in two rounds (the forms' order, then reversed); a hang is cut at 120 s.
# Writes $OUT/multicast-summary.txt and $OUT/multicast-runs.tgz.
#   TASKS="matmul_square_bf16 linear_square_tf32" FORMS="P M" LIMIT=300 bash scripts/gpu/plans/multicast/run.sh
set -u
T=gpu-artifacts/tuner; here=scripts/gpu/plans/multicast; W=/tmp/mc; rm -rf $W; mkdir -p $W/payloads
[ -x $T/bin/kforge-compile ] || bash scripts/gpu/unpack_tuner.sh $T > $OUT/device.json
python3 bench/tasks/tasks.py --write $W/payloads > /dev/null
S=$OUT/multicast-summary.txt; : > $S
tasks=${TASKS:-$(ls $here/schedules | sed 's/-[A-Z].json$//' | sort -u)}
for t in $tasks; do
  P=$W/payloads/$t.mlir
  flags=(); run_flags=()
  [[ $t == *tf32* ]] && flags=(--allow-tf32) && run_flags=(--precision tf32)
  forms=""
  for f in ${FORMS:-P M Q N}; do [ -f $here/schedules/$t-$f.json ] && forms="$forms $f"; done
  [ $SECONDS -lt $((${LIMIT:-560} - 60)) ] || { echo "$t: skipped (time)" >> $S; continue; }
  $T/bin/kforge-compile $P --target gpu --chip sm_90a --naive -o $W/$t-ref > /dev/null 2> $W/$t-ref.err ||
    { echo "$t: reference failed to compile" >> $S; continue; }
  for f in $forms; do
    $T/bin/kforge-tune $P --target gpu "${flags[@]}" --render $here/schedules/$t-$f.json > $W/$t-$f.mlir 2> $W/$t-$f.err &&
      $T/bin/kforge-compile $P --target gpu --chip sm_90a --recipe $W/$t-$f.mlir -o $W/$t-$f > /dev/null 2>> $W/$t-$f.err ||
      echo "$t $f: compile failed: $(tail -1 $W/$t-$f.err)" >> $S
  done
  for round in 1 2; do
    order="$forms"; [ $round = 2 ] && order=$(echo $forms | tr ' ' '\n' | tac | tr '\n' ' ')
    for f in $order; do
      [ -d $W/$t-$f ] || continue
      [ $SECONDS -lt $((${LIMIT:-560} - 30)) ] || { echo "$t $f round $round: skipped (time)" >> $S; continue; }
      timeout 120 $T/bin/kforge-run --candidate $W/$t-$f --reference $W/$t-ref --seeds 3 --reps 30 "${run_flags[@]}" \
        --runtime $T/lib/libkforge_mgpu.so --output $W/$t-$f-r$round.json > /dev/null 2> $W/$t-$f-r$round.err
      echo "exit $?" >> $W/$t-$f-r$round.err
      python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r.get('status'), r.get('timing',{}).get('median_ms'), r.get('reason', r.get('why',''))[:300])" \
        $W/$t-$f-r$round.json "$t $f round $round" >> $S 2>/dev/null ||
        echo "$t $f round $round: no report ($(tail -2 $W/$t-$f-r$round.err | tr '\n' ' '))" >> $S
    done
  done
  rm -rf $W/$t-ref $W/$t-[A-Z]
done
echo "multicast elapsed $SECONDS s" >> $S
(cd $W && tar czf $OUT/multicast-runs.tgz *.json *.err *.mlir 2>/dev/null)
cat $S
