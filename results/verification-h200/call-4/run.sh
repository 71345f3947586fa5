#!/usr/bin/env bash
# Device call 4 of 2026-12-04 (repository root on the GPU machine), with call 3's gpu-artifacts (forged kernels,
# packed tuner): planted caches on the H200. Printed: 4 OK, exit 0.
mkdir -p "$OUT/cp"
bash scripts/gpu/cache_planting.sh gpu-artifacts/forged gpu-artifacts/tuner "$OUT/cp"
