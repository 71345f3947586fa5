mkdir -p /tmp/rows; BENCH_TIMEOUT=430 bash scripts/gpu/bench.sh /tmp/rows --tasks row_sum,softmax_vocab,softmax_wide,layernorm,rms_norm,matmul_irregular,matmul_small_k --time-budget 30 > $OUT/bench.log 2>&1
cp /tmp/rows/h200.md /tmp/rows/h200.json /tmp/rows/bench-runs.tgz $OUT/
