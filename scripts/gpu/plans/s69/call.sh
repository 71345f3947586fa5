#!/usr/bin/env bash
# Session 69's device calls (prepared on the CPU; the tuner re-packed at the commit in
# gpu-artifacts/tuner/tuner-commit.txt). Every bar is the H200's; the card is recorded in $OUT/card.txt.
#   CALL=1: issue 28's first-kernel study on its four payloads (with run.json's first_trials timeline), then
#           issue 27's prime-shaped gemms at 35 s a task with the time left.
#   CALL=2: issue 27's row kernels (odd widths) at 25 s a task, then issue 34's group_blocks as fixed kernels
#           (scripts/gpu/plans/grouped/run.sh) with the time left.
#   CALL=3: issue 34's 16-bit and TF32 rows in two processes (scripts/gpu/plans/issue34-two-processes.sh).
# CALL_LIMIT (seconds, default 560) bounds the call; each part gets what is left.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/card.txt
limit=${CALL_LIMIT:-560}
left() { echo $((limit - SECONDS)); }
case "${CALL:-1}" in
  1)
    mkdir -p $OUT/fk
    OUT=$OUT/fk CALL=1 MC_TASKS="" CALL_LIMIT=300 timeout 300 bash scripts/gpu/plans/s63/call.sh > $OUT/fk.log 2>&1
    head -12 $OUT/fk/first-kernel.md
    mkdir -p /tmp/irr
    BENCH_TIMEOUT=$(($(left) - 15)) bash scripts/gpu/bench.sh /tmp/irr \
      --tasks linear_prime,matmul_prime,matmul_prime_8k,linear_prime_bf16,linear_prime_tf32 --time-budget 35 \
      > $OUT/irr-bench.log 2>&1
    mkdir -p $OUT/irr; cp /tmp/irr/h200.md /tmp/irr/h200.json /tmp/irr/bench-runs.tgz /tmp/irr/bench.log $OUT/irr/ 2>/dev/null
    cat $OUT/irr/h200.md 2>/dev/null | head -30 ;;
  2)
    mkdir -p /tmp/rows
    BENCH_TIMEOUT=280 bash scripts/gpu/bench.sh /tmp/rows \
      --tasks softmax_vocab,softmax_wide,softmax,layernorm,rms_norm,row_sum --time-budget 25 > $OUT/rows-bench.log 2>&1
    mkdir -p $OUT/rows; cp /tmp/rows/h200.md /tmp/rows/h200.json /tmp/rows/bench-runs.tgz /tmp/rows/bench.log $OUT/rows/ 2>/dev/null
    cat $OUT/rows/h200.md 2>/dev/null | head -30
    mkdir -p $OUT/grouped
    OUT=$OUT/grouped TASKS="matmul_8192_tf32 matmul_8192_bf16" FORMS="A B C D E" LIMIT=$(($(left) - 10)) \
      bash scripts/gpu/plans/grouped/run.sh > $OUT/grouped.log 2>&1
    cat $OUT/grouped/grouped-summary.txt ;;
  3)
    mkdir -p $OUT/two
    OUT=$OUT/two TASKS=${TASKS:-matmul_square_bf16,matmul_8192_bf16,matmul_square_tf32,matmul_8192_tf32} \
      BUDGET=${BUDGET:-30} LIMIT=$(($(left) - 10)) bash scripts/gpu/plans/issue34-two-processes.sh > $OUT/two.log 2>&1
    cat $OUT/two/first-process.md $OUT/two/second-process.md 2>/dev/null | head -40 ;;
esac
