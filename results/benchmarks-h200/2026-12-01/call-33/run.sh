#!/usr/bin/env bash
# Call 33 (nvidia-h200, the tools of call 31): issue 8's table (the fp32 gemms and chains) measured again with
# bench/run's fixed clock, in two separate processes (p1, p2), from call 19's records (no tuning: the best
# kernels rebuilt by today's compiler): do the chains' ~2-6% margins over eager and torch.compile of calls 19
# and 21 hold when no implementation's launch can be timed?
G=matmul_square,matmul_2048,matmul_8192,matmul_irregular,batch_matmul,gemm_bias_relu,gemm_scale_gelu,gemm_bias_residual
L=$(mktemp -d)
for p in p1:210 p2:410; do
  limit=${p#*:}; p=${p%:*}
  mkdir -p "$L/$p"
  BENCH_PREVIOUS=results/benchmarks-h200/2026-11-30/call-19/bench-runs.tgz BENCH_TIMEOUT=$(( limit - SECONDS )) \
    scripts/gpu/bench.sh "$L/$p" --no-tune --tasks $G
  cp "$L/$p/h200.md" "$OUT/$p.md"; cp "$L/$p/h200.json" "$OUT/$p.json"
done
cat "$OUT/p1.md" "$OUT/p2.md"
tar czf "$OUT/logs.tgz" -C "$L" .
