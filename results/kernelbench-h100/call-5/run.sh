#!/usr/bin/env bash
# Device call of session 53 (2026-12-06), right after call-4 on the same warm H100; tuner packed at 5334780, payloads
# imported at 134ddd2 (carried). Two element-wise / row modules never measured on a GPU, 30 s of tuning each.
M=bench/kernelbench/modules
KERNELBENCH_TIMEOUT=230 bash scripts/gpu/kernelbench.sh $OUT --time-budget 30 $M/l1_relu.py $M/l1_rms_norm_4d.py
