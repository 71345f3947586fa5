#!/usr/bin/env bash
# Device call 2 of session 50 (2026-12-05, H100), tuner packed at ecadc4c, payloads imported here at ecadc4c
# (bench/kernelbench/run --import-only --out gpu-artifacts/kernelbench; l2_linear_group_norm_hardtanh left out).
# Ran out of its 540 s in the first two modules: no report (the report is written when the tuning of every module
# is done). The log and runs say why (kforge-opt not found on the GPU machine; the MSE loss's naive reference
# one thread over 2^29 elements).
KERNELBENCH_TIMEOUT=540 bash scripts/gpu/kernelbench.sh $OUT --time-budget 10 bench/kernelbench/modules/l1_{mse,huber,hinge,kl_div,cosine_similarity}_loss.py bench/kernelbench/modules/l1_{frobenius_norm,group_norm}.py
