#!/usr/bin/env bash
# Session 68 (2026-12-07), CPU only (no device was lent): the GPU compile sweep over the KernelBench-format suite at
# full size, each payload's and each partitioned kernel's first three heuristic GPU proposals compiled to PTX
# (scripts/gpu_compile_sweep.py; nothing runs). before-*.txt at bd556fd..e000def (the payloads imported and
# partitioned at e000def), after-*.txt at the commit that added this folder (imported and partitioned again).
set -u
build/venv/bin/python bench/kernelbench/run --import-only --out gpu-artifacts/kernelbench
python3 scripts/gpu_compile_sweep.py --proposals 3 --work /tmp/sweep/w gpu-artifacts/kernelbench/payloads/*.mlir > payloads.txt
python3 scripts/gpu_compile_sweep.py --proposals 3 --work /tmp/sweep/w2 gpu-artifacts/kernelbench/payloads/*.plan/k_*.mlir > plans.txt
