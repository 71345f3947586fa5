# Session 49 (2026-12-05), device call 2 (the second part of its command); an H100 (device.json). The report keeps
# bench/run's file names (h200.md/.json/.svg) although the card was an H100. Tuner packed at 8bef705.
# carried: gpu-artifacts/tuner
BENCH_TIMEOUT=300 scripts/gpu/bench.sh $OUT/b --tasks matmul_prime,linear_prime_bf16,matmul_irregular_bf16 --time-budget 45
