#!/usr/bin/env bash
# Call 17: call 16's tuned kernels measured again in a second process (no tuning: call 16's records, the best
# kernels rebuilt from them), with PyTorch eager and torch.compile alongside, to see how much the comparison
# moves between processes.
BENCH_PREVIOUS=results/benchmarks-h200/2026-11-30/call-16/bench-runs.tgz BENCH_TIMEOUT=140 scripts/gpu/bench.sh $OUT \
  --no-tune --tasks matmul_square,gemm_bias_relu,gemm_scale_gelu,gemm_bias_residual,layernorm,layernorm_plain
cat $OUT/h200.md
