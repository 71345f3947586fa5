#!/usr/bin/env bash
# Session 63's device calls (prepared on the CPU). Every issue's bar is the H200's; the card is recorded.
#   CALL=1: issue 28's first-kernel study (all four payloads: scripts/gpu/first_kernel_study.sh; HUGE_AB=1 adds
#           the softmax with KFORGE_HUGE_PAGES=0, 4 KB pages) with the
#           baseline measured in one runner request (bb31e7f), then issue 34's clusters with TMA multicast as
#           fixed kernels beside the forms they grow from (scripts/gpu/plans/multicast/run.sh, never run on a
#           GPU before) with the time left.
#   CALL=2: issue 34's 16-bit table in two processes (scripts/gpu/plans/issue34-two-processes.sh).
#   CALL=3: the TF32 forms as fixed kernels with Nsight Compute beside cuBLAS TF32 (scripts/gpu/plans/tf32/run.sh).
# CALL_LIMIT (seconds, default 560) bounds the call.
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card" > $OUT/card.txt
limit=${CALL_LIMIT:-560}
case "${CALL:-1}" in
  1)
    PAYLOADS=${PAYLOADS:-"batch_matmul_128x512x1024x2048 matvec_2048x1048576 softmax_4096x393216 gemm_4096"} \
      bash scripts/gpu/first_kernel_study.sh gpu-artifacts/tuner /tmp/fk 30 > $OUT/first-kernel.md 2>&1
    # HUGE_AB=1: the softmax again with the judge's large buffers on 4 KB pages (KFORGE_HUGE_PAGES=0; huge
    # pages are the default since session 65: runtime/runner/Floats.h), its table appended.
    if [ "${HUGE_AB:-0}" = 1 ]; then
      echo "## KFORGE_HUGE_PAGES=0" >> $OUT/first-kernel.md
      cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag >> $OUT/first-kernel.md 2>&1
      KFORGE_HUGE_PAGES=0 PAYLOADS=softmax_4096x393216 bash scripts/gpu/first_kernel_study.sh gpu-artifacts/tuner \
        /tmp/fkh 30 >> $OUT/first-kernel.md 2>&1
    fi
    # Each run's records only (the whole run folders are over what a call brings back).
    for r in /tmp/fk/runs/*/ /tmp/fkh/runs/*/; do
      [ -d "$r" ] || continue
      n=$(basename $(dirname $(dirname $r)))-$(basename $r); mkdir -p /tmp/fk-records/$n
      cp $r/run.json $r/db.jsonl /tmp/fk-records/$n/ 2>/dev/null
      cp $r/baseline/run.json /tmp/fk-records/$n/baseline-run.json 2>/dev/null
      cp $r/baseline/reference-check.json /tmp/fk-records/$n/ 2>/dev/null
      cp $(dirname $r)/$(basename $r).log /tmp/fk-records/$n/tune.log 2>/dev/null
    done
    tar czf $OUT/fk-records.tgz -C /tmp fk-records 2>/dev/null
    cat $OUT/first-kernel.md
    # MC_TASKS set and empty skips the multicast kernels.
    mc=${MC_TASKS-matmul_square_bf16 linear_square_tf32 matmul_8192_bf16}
    [ -z "$mc" ] || LIMIT=$((limit - SECONDS)) TASKS="$mc" bash scripts/gpu/plans/multicast/run.sh ;;
  2)
    TASKS=${TASKS:-matmul_square_bf16,matmul_square_f16,matmul_8192_bf16,matmul_8192_f16,gemm_bias_relu_bf16} \
      BUDGET=${BUDGET:-30} LIMIT=$limit bash scripts/gpu/plans/issue34-two-processes.sh ;;
  3)
    LIMIT=$limit TASKS="${TF32_TASKS:-linear_square_tf32 linear_8k_tf32}" PROFILE_TASK=linear_square_tf32 \
      bash scripts/gpu/plans/tf32/run.sh ;;
esac
