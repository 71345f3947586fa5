#!/usr/bin/env bash
# Issue 34's table in two processes (its bar: >= 95% of cuBLAS "in two processes"), one device call: bench/run
# tunes TASKS and measures them (process 1), then measures the same kernels again in a fresh process with
# --no-tune (process 2). Writes $OUT/first-process.{md,json}, $OUT/second-process.{md,json}, $OUT/bench-runs.tgz.
#   TASKS=matmul_square_bf16,matmul_square_f16,matmul_8192_bf16,matmul_8192_f16,gemm_bias_relu_bf16 \
#     BUDGET=30 bash scripts/gpu/plans/issue34-two-processes.sh
#   TASKS=linear_square_tf32,linear_8k_tf32,matmul_square_tf32,matmul_8192_tf32 BUDGET=30 bash ...
# LIMIT (seconds, default 560) bounds the whole call; the second process gets what the first leaves, at most 150.
set -u
first=/tmp/i34-first; second=/tmp/i34-second; rm -rf $first $second bench-out; mkdir -p $first $second
BENCH_TIMEOUT=$((${LIMIT:-560} - 150)) scripts/gpu/bench.sh $first --tasks "$TASKS" --time-budget "${BUDGET:-30}"
echo "first process: exit $?" >> $OUT/summary.txt
cp $first/h200.md $OUT/first-process.md; cp $first/h200.json $OUT/first-process.json; cp $first/bench-runs.tgz $OUT/
left=$((${LIMIT:-560} - SECONDS)); [ $left -gt 150 ] && left=150
# (bench-out/ still holds the first process's tuning runs and best kernels.)
BENCH_TIMEOUT=$left scripts/gpu/bench.sh $second --no-tune --tasks "$TASKS"
echo "second process: exit $?" >> $OUT/summary.txt
cp $second/h200.md $OUT/second-process.md; cp $second/h200.json $OUT/second-process.json
nvidia-smi --query-gpu=name --format=csv >> $OUT/summary.txt
cat $OUT/first-process.md $OUT/second-process.md $OUT/summary.txt
