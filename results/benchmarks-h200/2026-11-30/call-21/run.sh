#!/usr/bin/env bash
# Call 21 (nvidia-h200, tools packed at 0982e8e): issue 8's table measured again in a third process (no tuning:
# call 19's records, the best kernels rebuilt), with cuBLAS and PyTorch alongside: how much the chains' margins
# over eager and torch.compile move between processes.
G=matmul_square,matmul_2048,matmul_8192,matmul_irregular,batch_matmul,gemm_bias_relu,gemm_scale_gelu,gemm_bias_residual
BENCH_PREVIOUS=results/benchmarks-h200/2026-11-30/call-19/bench-runs.tgz BENCH_TIMEOUT=400 scripts/gpu/bench.sh "$OUT" \
  --no-tune --tasks $G
cat "$OUT/h200.md"
