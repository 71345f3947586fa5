#!/usr/bin/env bash
# Session 62's first device call (prepared on the CPU): the softmax's first kernel with page-locked output copies
# (issue 28), then the persistent fix and the warp-specialized forms (issue 34, step P of
# scripts/gpu/plans/next-device-session.txt), then bench/run on the bf16 gemm, the TF32 Linear and A @ B (the
# warp-specialized TF32 forms, transpose_b) and the depthwise 3x3 (issue 35's new first form).
set -u
PAYLOADS=softmax_4096x393216 bash scripts/gpu/first_kernel_study.sh gpu-artifacts/tuner /tmp/fk 30 > $OUT/first-kernel.md 2>&1
tar czf $OUT/fk.tgz -C /tmp fk --exclude='candidates' --exclude='cache' --exclude='seed-cache' --exclude='best' --exclude='baseline/artifact' 2>/dev/null
# CALL_LIMIT (seconds, default 560): when the bench must have finished; BENCH_TASKS as run.sh takes it.
LIMIT=$((${CALL_LIMIT:-560} - SECONDS)) TASKS="matmul_square_bf16 linear_prime_bf16" FORMS="D E" ROUNDS=1 \
  BENCH_TASKS=${BENCH_TASKS:-matmul_square_bf16,linear_square_tf32,matmul_square_tf32,conv_depthwise_3x3} \
  bash scripts/gpu/plans/warpspec/run.sh
nvidia-smi --query-gpu=name --format=csv >> $OUT/summary.txt
