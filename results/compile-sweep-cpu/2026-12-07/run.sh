#!/usr/bin/env bash
# Session 68 (2026-12-07), CPU only (no device was lent): the GPU compile sweep over the KernelBench-format suite at
# full size, each payload's and each partitioned kernel's first three heuristic GPU proposals compiled to PTX
# (scripts/gpu_compile_sweep.py; nothing runs). before-*.txt at bd556fd..e000def (the payloads imported and
# partitioned at e000def), after-*.txt at the commit that added this folder (imported and partitioned again).
set -u
build/venv/bin/python bench/kernelbench/run --import-only --out gpu-artifacts/kernelbench
python3 scripts/gpu_compile_sweep.py --proposals 3 --work /tmp/sweep/w gpu-artifacts/kernelbench/payloads/*.mlir > payloads.txt
python3 scripts/gpu_compile_sweep.py --proposals 3 --work /tmp/sweep/w2 gpu-artifacts/kernelbench/payloads/*.plan/k_*.mlir > plans.txt
# Session 69: s69-*.txt at 99dab2c (the payloads imported at bf59c8d; kforge-tune normalizes each payload again
# with the code under test), after the fixes of session 69 (docs/perf/kernelbench-h200.md "Session 69").
#   build/venv/bin/python bench/kernelbench/run --import-only --out gpu-artifacts/kernelbench
#   python3 scripts/gpu_compile_sweep.py --proposals 3 --work /tmp/s69sweep/w gpu-artifacts/kernelbench/payloads/*.mlir > s69-payloads.txt
#   python3 scripts/gpu_compile_sweep.py --proposals 3 --work /tmp/s69sweep/w2 gpu-artifacts/kernelbench/payloads/*.plan/k_*.mlir > s69-plans.txt
