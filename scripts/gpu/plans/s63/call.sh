#!/usr/bin/env bash
# Session 63's device call (prepared on the CPU), by the card that came (every issue's bar is the H200's):
#   H200: issue 34's 16-bit table in two processes (scripts/gpu/plans/issue34-two-processes.sh).
#   otherwise (an H100): issue 28's softmax first kernel with the baseline measured in one runner request
#     (bb31e7f), then the TF32 forms as fixed kernels with Nsight Compute beside cuBLAS TF32 (issue 34's
#     TF32 rows: scripts/gpu/plans/tf32/run.sh).
# CALL_LIMIT (seconds, default 560) bounds the call.
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card" > $OUT/card.txt
if [[ "$card" == *H200* ]]; then
  TASKS=${TASKS:-matmul_square_bf16,matmul_square_f16,matmul_8192_bf16,matmul_8192_f16,gemm_bias_relu_bf16} \
    BUDGET=${BUDGET:-30} LIMIT=${CALL_LIMIT:-560} bash scripts/gpu/plans/issue34-two-processes.sh
else
  PAYLOADS=softmax_4096x393216 bash scripts/gpu/first_kernel_study.sh gpu-artifacts/tuner /tmp/fk 30 > $OUT/first-kernel.md 2>&1
  tar czf $OUT/fk.tgz -C /tmp fk --exclude='candidates' --exclude='cache' --exclude='seed-cache' --exclude='best' --exclude='baseline/artifact' 2>/dev/null
  LIMIT=$((${CALL_LIMIT:-560} - SECONDS)) TASKS="${TF32_TASKS:-linear_square_tf32 linear_8k_tf32}" \
    PROFILE_TASK=linear_square_tf32 bash scripts/gpu/plans/tf32/run.sh
  cat $OUT/first-kernel.md
fi
