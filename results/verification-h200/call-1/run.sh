#!/usr/bin/env bash
# Device call 1 of 2026-12-04 (run from the repository root on the GPU machine, $OUT its output):
# the runner's adversarial suite on the H200 (scripts/gpu/run_adversarial.sh: planted faults incl. f16
# accumulation and a dropped bf16 K tile, honest tiny/huge outputs) and the f16/bf16 rule against PyTorch's own
# kernels (scripts/gpu/check_tolerances.py). Artifacts: KFORGE_ADVERSARIAL_ONLY=1 scripts/gpu/build_runner_artifacts.sh.
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
status=0
bash scripts/gpu/run_adversarial.sh gpu-artifacts/runner "$OUT" > "$OUT/adversarial.log" 2>&1 || status=1
python3 scripts/gpu/check_tolerances.py --out "$OUT" > "$OUT/tolerances.md" 2> "$OUT/tolerances.log" || status=$((status | 2))
cat "$OUT/adversarial.md" "$OUT/tolerances.md"
tail -5 "$OUT/tolerances.log"
echo "status $status"
