#!/usr/bin/env bash
# Call 34 (nvidia-h200, the tools of call 31): bench/run's clock with the lead lengthened for an implementation
# whose launch outlasts it. Issue 8's gemms and chains (call 19's records) in two processes (g1, g2), then the six
# reductions (call 31's records) in one (r1); no tuning.
G=matmul_square,matmul_2048,matmul_8192,matmul_irregular,batch_matmul,gemm_bias_relu,gemm_scale_gelu,gemm_bias_residual
R=softmax,softmax_wide,layernorm,layernorm_plain,rms_norm,row_sum
L=$(mktemp -d)
for p in g1:G:call-19:110 g2:G:call-19:220 r1:R:call-31:300; do
  IFS=: read -r name set call limit <<< "$p"
  tasks=$G; [ "$set" = R ] && tasks=$R
  prev=results/benchmarks-h200/2026-11-30/call-19/bench-runs.tgz
  [ "$call" = call-31 ] && prev=results/benchmarks-h200/2026-12-01/call-31/bench-runs.tgz
  mkdir -p "$L/$name"
  BENCH_PREVIOUS=$prev BENCH_TIMEOUT=$(( limit - SECONDS )) scripts/gpu/bench.sh "$L/$name" --no-tune --tasks $tasks
  cp "$L/$name/h200.md" "$OUT/$name.md"; cp "$L/$name/h200.json" "$OUT/$name.json"
done
cat "$OUT/g1.md" "$OUT/g2.md" "$OUT/r1.md"
tar czf "$OUT/logs.tgz" -C "$L" .
