# Session 67, device call 7 (an H100 80GB HBM3): the row kernels (issue 27's odd widths: softmax over 50257 and
# 32000 columns; softmax, layernorm, rms_norm, row_sum at 4096 / 8192 wide) at 30 s a task.
mkdir -p /tmp/rows; BENCH_TIMEOUT=400 bash scripts/gpu/bench.sh /tmp/rows --tasks softmax_vocab,softmax_wide,softmax,layernorm,rms_norm,row_sum --time-budget 30 > $OUT/bench.log 2>&1
cp /tmp/rows/h200.md /tmp/rows/h200.json /tmp/rows/bench-runs.tgz /tmp/rows/bench.log $OUT/
