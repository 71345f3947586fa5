#!/usr/bin/env bash
# Fixed kernels on the GPU machine: for each task, the schedules PLAN_DIR/schedules/TASK-F.json (one per form F,
# FORMS picking them, default "P M Q N"), each compiled by the packed tuner (re-pack it first:
# scripts/gpu/pack_tuner.sh), verified against the naive kernel on 3 seeds and timed (30 repetitions) by
# kforge-run, in two rounds (the forms' order, then reversed); a hang is cut at 120 s. Writes
# $OUT/NAME-summary.txt and $OUT/NAME-runs.tgz. The plans' run.sh scripts (multicast, swapab) call it:
#   PLAN_DIR=scripts/gpu/plans/multicast NAME=multicast TASKS="..." FORMS="P M" LIMIT=300 \
#     bash scripts/gpu/plans/fixed_kernels.sh
set -u
T=gpu-artifacts/tuner; here=$PLAN_DIR; W=/tmp/fixed-$NAME; rm -rf $W; mkdir -p $W/payloads
[ -x $T/bin/kforge-compile ] || bash scripts/gpu/unpack_tuner.sh $T > $OUT/device.json
python3 bench/tasks/tasks.py --write $W/payloads > /dev/null
S=$OUT/$NAME-summary.txt; : > $S
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
echo "$NAME elapsed $SECONDS s" >> $S
(cd $W && tar czf $OUT/$NAME-runs.tgz *.json *.err *.mlir 2>/dev/null)
cat $S
