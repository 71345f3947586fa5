#!/usr/bin/env bash
# Device call 4 of session 52 (2026-12-05, an H100 80GB HBM3); tuner packed at e301133. The 8k prime SGEMM and
# the fp32 Linear (issue 27's call 3). The report keeps bench/run's h200.* names.
BENCH_TIMEOUT=540 scripts/gpu/bench.sh $OUT --tasks matmul_prime_8k,linear_prime,matmul_irregular --time-budget 60
