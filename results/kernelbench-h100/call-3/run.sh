#!/usr/bin/env bash
# Device call 4 of session 50 (2026-12-05, H100): the measuring step for call-2's runs (carried as
# gpu-artifacts/kb-prev-3.tgz = call-2/kernelbench-runs.tgz). Ran out of its 230 s: compile_payload found the
# carried run without its best/ kernel and tuned it again (fixed after, ec5755b). No report.
KERNELBENCH_PREVIOUS=gpu-artifacts/kb-prev-3.tgz KERNELBENCH_TIMEOUT=230 bash scripts/gpu/kernelbench.sh $OUT --no-tune bench/kernelbench/modules/l1_{mse,huber}_loss.py
