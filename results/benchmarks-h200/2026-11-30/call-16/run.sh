#!/usr/bin/env bash
# Call 16: the first GPU run of `moments` (layernorm's mean and variance merged in one round) and of 16x8 per
# thread on the staged SGEMM. The layernorms tuned 12 s each, the fp32 gemms 28 s, then all measured with
# PyTorch in one process.
R=layernorm,layernorm_plain
G=matmul_square,gemm_bias_relu,gemm_scale_gelu,gemm_bias_residual
T=$(mktemp -d)
BENCH_TIMEOUT=45 scripts/gpu/bench.sh $T --tune-only --tasks $R --time-budget 12; cp $T/bench.log $OUT/tune-layernorms.log
BENCH_TIMEOUT=135 scripts/gpu/bench.sh $T --tune-only --tasks $G --time-budget 28; cp $T/bench.log $OUT/tune-gemms.log
BENCH_TIMEOUT=85 scripts/gpu/bench.sh $OUT --no-tune --tasks $R,$G
cat $OUT/h200.md
