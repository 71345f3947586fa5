#!/usr/bin/env bash
# Device call 2 of session 52 (2026-12-05, an H100 80GB HBM3), after the layout check of
# results/layout-shape-h100/call-2 in the same call; tuner packed at e301133. The report keeps bench/run's h200.* names.
BENCH_TIMEOUT=270 scripts/gpu/bench.sh /tmp/c2/b --tasks matmul_prime,linear_prime_bf16,matmul_irregular_bf16 --time-budget 60
