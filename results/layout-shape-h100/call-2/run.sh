#!/usr/bin/env bash
# Device call 2 of session 52 (2026-12-05, an H100 80GB HBM3); tuner packed at e301133 (gpu-artifacts/tuner).
# The partial tiles and ragged rows (issue 27), 25 s of search and 20 trials per payload. Only summary.md and
# exits.txt came back: the call's tar of the run folders (11 GB of seed caches among them) outran the call's
# 600 s, and a second call copied these two files from the still-warm machine.
set -u; W=/tmp/c2; mkdir -p $W/ls
ONLY='@(bias_relu_*|tc_*|softmax_*|layernorm_8192x4095|row_sum_*)' bash scripts/gpu/layout_shape_check.sh gpu-artifacts/tuner $W/ls 25 20
