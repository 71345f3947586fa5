#!/usr/bin/env bash
# Device call of session 53 (2026-12-06), right after call-5 on the same warm H100 (the session's last device
# seconds); tuner packed at 5334780, payloads imported at 134ddd2 (carried). 30 s of tuning each.
M=bench/kernelbench/modules
KERNELBENCH_TIMEOUT=140 bash scripts/gpu/kernelbench.sh $OUT --time-budget 30 $M/l1_sigmoid.py $M/l1_softmax_4095.py
