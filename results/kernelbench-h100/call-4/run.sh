#!/usr/bin/env bash
# Device call of session 53 (2026-12-06), repository root on the GPU machine, $OUT its output. Tuner packed by
# scripts/gpu/pack_tuner.sh at 5334780; payloads imported here at 134ddd2 by bench/kernelbench/run --import-only
# --out gpu-artifacts/kernelbench; both carried. Two modules never measured on a GPU (the last minutes of the
# session's device time), tuned 30 s each, then measured beside eager and torch.compile in one process.
M=bench/kernelbench/modules
KERNELBENCH_TIMEOUT=320 bash scripts/gpu/kernelbench.sh $OUT --time-budget 30 $M/l2_linear_mul_leaky_relu.py \
  $M/l1_matmul_batched.py
