#!/usr/bin/env bash
# Session 66's device call (prepared on the CPU; starts failed for an hour, so one call does two things).
#   1. issue 34's TF32 A @ B rows in two processes (scripts/gpu/plans/issue34-two-processes.sh, 40 s a task):
#      swap_ab's forms (C^T = B^T A^T, B's fragments through registers, producer_warpgroup) against
#      transpose_b's, never run on a GPU before. -> $OUT/tf32/
#   2. with what is left (at least 100 s): issue 28's first-kernel study on the 4096 x 393216 softmax (huge pages
#      on, the default since session 65). -> $OUT/fk/
# CALL_LIMIT (seconds, default 560) bounds the call; TF32_LIMIT (default 420) the first part.
set -u
limit=${CALL_LIMIT:-560}
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/card.txt
mkdir -p $OUT/tf32
OUT=$OUT/tf32 TASKS=${TASKS:-matmul_square_tf32,matmul_8192_tf32} BUDGET=${BUDGET:-40} LIMIT=${TF32_LIMIT:-420} \
  bash scripts/gpu/plans/issue34-two-processes.sh > $OUT/tf32.log 2>&1
cat $OUT/tf32/first-process.md $OUT/tf32/second-process.md 2>/dev/null | head -40
left=$((limit - SECONDS))
if [ $left -ge 100 ]; then
  mkdir -p $OUT/fk
  OUT=$OUT/fk PAYLOADS=softmax_4096x393216 CALL=1 MC_TASKS="" CALL_LIMIT=$left timeout $left \
    bash scripts/gpu/plans/s63/call.sh > $OUT/fk.log 2>&1
  head -8 $OUT/fk/first-kernel.md
else
  echo "softmax study skipped: $left s left" | tee $OUT/fk-skipped.txt
fi
